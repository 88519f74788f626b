package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/reqkey"
	"github.com/finrepro/finrepro/results"
)

// A job is one distinct request of a batch.
type job struct {
	req   Request
	raw   []byte // the encoded request; nil until built
	key   cache.Key
	pc    ProviderConfig
	model string // the requested model; see requested
	// prompt, when the job was made from a call, is its prompt: the
	// request is built from it when needed (see materialize).
	prompt *results.Prompt
	idxs   []int
	reply  results.Reply
	// keepBody asks lookup to keep the stored response in body.
	keepBody bool
	body     []byte
	// stream, for a simulated job being recorded, stores its exchange;
	// simAt is its place there.
	stream *simStream
	simAt  int
}

// answerChunk is how many requests answer builds, keys and looks up at a
// time: the request bodies of a chunk (prompts can be long) are dropped
// once its replies are read, so memory holds replies, not requests.
const answerChunk = 512

// answer answers n requests, the i-th keyed by request(i), which returns
// its job; a request that cannot be keyed is a bad request, named by the
// request returned beside the error. With bodies set it also returns the
// stored response of each reply answered from the cache (nil for the
// others).
func (c *Client) answer(ctx context.Context, n int, bodies bool, request func(i int) (*job, Request, error)) ([]results.Reply, [][]byte) {
	replies := make([]results.Reply, n)
	var stored [][]byte
	if bodies {
		stored = make([][]byte, n)
	}
	var jobs, pending []*job
	byKey := map[cache.Key]*job{}
	for lo := 0; lo < n; lo += answerChunk {
		hi := min(n, lo+answerChunk)
		// Building and keying encode and hash every request: the costly
		// part of a replay after the reads, done in parallel.
		keyed := make([]*job, hi-lo)
		reqs := make([]Request, hi-lo)
		errs := make([]error, hi-lo)
		parallel(hi-lo, func(k int) { keyed[k], reqs[k], errs[k] = request(lo + k) })
		var fresh []*job
		for k, j := range keyed {
			i := lo + k
			if errs[k] != nil {
				replies[i].Err = c.badRequest(reqs[k], errs[k])
				continue
			}
			if prev := byKey[j.key]; prev != nil {
				prev.idxs = append(prev.idxs, i)
				continue
			}
			j.idxs = []int{i}
			j.keepBody = bodies
			byKey[j.key] = j
			jobs = append(jobs, j)
			fresh = append(fresh, j)
		}
		hit := c.lookupAll(fresh)
		for k, j := range fresh {
			if hit[k] {
				c.mu.Lock()
				c.counts.Hits++
				c.mu.Unlock()
			} else if c.cfg.Mode != Offline {
				pending = append(pending, j) // its request is built when sent
				continue
			} else if err := j.materialize(); err != nil {
				j.reply.Err = c.badRequest(j.req, err)
			} else {
				c.addMiss(j)
			}
			j.req.Body, j.raw, j.prompt = nil, nil, nil // answered: the request is no longer needed
		}
	}
	c.record(ctx, pending)
	for _, j := range jobs {
		for _, i := range j.idxs {
			replies[i] = j.reply
			if bodies {
				stored[i] = j.body
			}
		}
	}
	return replies, stored
}

// badRequest records a request that could not be built or keyed as a
// failure with cause bad_request, so that reports list it.
func (c *Client) badRequest(r Request, err error) error {
	ce := &CallError{Cause: CauseRequest, Msg: c.redact(err.Error())}
	c.mu.Lock()
	c.failures = append(c.failures, Failure{Label: r.Label, Provider: r.Provider, Cause: CauseRequest, Msg: ce.Msg})
	c.counts.Failed++
	c.mu.Unlock()
	return ce
}

// newJob checks a request and computes its key.
func (c *Client) newJob(r Request) (*job, error) {
	pc, ok := c.provider(r.Provider)
	if !ok {
		return nil, fmt.Errorf("replay: unknown provider %q", r.Provider)
	}
	if r.Endpoint == "" {
		e, err := defaultEndpoint(pc.Kind)
		if err != nil {
			return nil, fmt.Errorf("replay: %s: %w", r.Provider, err)
		}
		r.Endpoint = e
	}
	if err := checkEndpoint(r.Endpoint); err != nil {
		return nil, fmt.Errorf("replay: %s: %w", r.Provider, err)
	}
	if r.Sample < 0 {
		return nil, fmt.Errorf("replay: %s: negative sample %d", r.Provider, r.Sample)
	}
	// A body that is not one valid JSON object fails in rekey: the
	// canonical encoding of the key parses and checks it.
	if b := bytes.TrimSpace(r.Body); len(b) == 0 || b[0] != '{' {
		return nil, fmt.Errorf("replay: %s: body is not a JSON object", r.Provider)
	}
	j := &job{req: r, pc: pc}
	if err := j.rekey(); err != nil {
		return nil, err
	}
	return j, nil
}

// requested returns the model the request asks for. A job made from a
// request reads it from the body the first time it is needed (a miss, a
// recording, a failure): a request answered from the cache never is.
func (j *job) requested() string {
	if j.model == "" && j.prompt == nil {
		j.model = modelOf(j.pc.Kind, &j.req)
	}
	return j.model
}

// rekey encodes the request and computes its key.
func (j *job) rekey() error {
	raw, key, err := encodeKey(&j.req)
	if err != nil {
		return err
	}
	j.raw, j.key, j.req.keyedBody = raw, key, nil
	j.reply = results.Reply{Key: key.String()}
	return nil
}

// encodeKey encodes request r and computes its key.
func encodeKey(r *Request) ([]byte, cache.Key, error) {
	raw, err := r.Encode()
	if err != nil {
		return nil, cache.Key{}, fmt.Errorf("replay: encode request: %w", err)
	}
	var key cache.Key
	if r.keyedBody != nil && len(raw) <= reqkey.MaxRequestBytes {
		// Canonical would take the same fields and body: the key Of
		// gives the request (TestPlainRequestLine).
		key, err = reqkey.Build(r.Provider, r.Endpoint, r.Sample, func(dst []byte) []byte { return append(dst, r.keyedBody...) })
	} else {
		key, err = keyOf(raw)
	}
	if err != nil {
		return nil, cache.Key{}, fmt.Errorf("replay: key: %w", err)
	}
	return raw, key, nil
}

// keyOf keys an encoded request object: reqkey.Of, which tests count.
var keyOf = reqkey.Of

// lookupAll looks every job up in the cache, GOMAXPROCS at a time (reads
// are independent; long-lived workers keep the stacks zstd decoding grows),
// and reports which were answered. Refresh mode looks nothing up.
func (c *Client) lookupAll(jobs []*job) []bool {
	hit := make([]bool, len(jobs))
	if c.cfg.Mode == Refresh {
		return hit
	}
	parallel(len(jobs), func(i int) { hit[i] = c.lookup(jobs[i]) })
	return hit
}

// lookup answers j from the cache and reports whether it could. A corrupt
// entry counts as missing when recording (it is recorded again); offline
// it is an error wrapping cache.ErrCorrupt, never a miss, so that nobody
// is invited to pay for recording a damaged store again.
func (c *Client) lookup(j *job) bool {
	// The reply copies what it keeps of the response, so the response's
	// buffer serves the next lookup.
	bp := responseBuffers.Get().(*[]byte)
	defer responseBuffers.Put(bp)
	resp, meta, trusted, err := c.store.AppendTrustedResponse((*bp)[:0], j.key)
	if resp != nil {
		*bp = resp
	}
	if err != nil {
		if errors.Is(err, cache.ErrCorrupt) && c.cfg.Mode == Offline {
			j.reply.Err = fmt.Errorf("replay: cache entry %s: %w", j.key.Str(), err)
			c.mu.Lock()
			if c.corrupt == nil {
				c.corrupt = j.reply.Err
			}
			c.mu.Unlock()
			return true
		}
		if !errors.Is(err, cache.ErrNotFound) {
			c.prog.warnf("cache entry %s unreadable, treated as missing: %v", j.key.Str(), err)
		}
		return false
	}
	// A body passed on from a trusted pack (bytes this finrepro wrote:
	// checked when recorded, or valid JSON that `cache load` took from a
	// file) is passed on as stored, not parsed again (its text is not
	// wanted): parsing was 13 % of the CPU of "finrepro replay" of 1,000
	// random requests (bench/compare.sh). docs/providers.md says so.
	o := &output{}
	if !j.keepBody || !trusted {
		var ce *CallError
		if o, ce = checkBody(j.pc.Kind, resp); ce != nil {
			// Only checked responses are recorded, but a store can be
			// loaded from elsewhere: an unusable one is an error, not a
			// miss.
			ce.Msg = "stored response " + j.key.Str() + ": " + ce.Msg
			j.reply.Err = ce
			return true
		}
	}
	switch {
	case j.keepBody && trusted:
		j.body = compactValid(make([]byte, 0, len(resp)), resp)
	case j.keepBody:
		// The checked response is valid JSON: compacting it only drops
		// whitespace between tokens (the bytes json.Compact gives, 4x as
		// fast), and cannot fail.
		b := jsontext.Value(bytes.Clone(resp))
		if err := b.Compact(); err != nil {
			j.reply.Err = fmt.Errorf("replay: response %s: %v: %w", j.key.Str(), err, cache.ErrCorrupt)
			return true
		}
		j.body = b
	}
	j.reply.Text = o.Text
	j.reply.Model = o.Model
	if meta.ReportedModel != "" {
		j.reply.Model = meta.ReportedModel
	}
	j.reply.Source = meta.Source
	j.reply.RecordedAt = meta.RecordedAt
	c.mu.Lock()
	c.avoided += meta.CostUSD
	c.mu.Unlock()
	return true
}

// compactValid appends valid JSON v to dst without the whitespace between
// its tokens: the bytes jsontext.Value.Compact gives v, which keeps strings
// as they are, without checking v again. It was 9 % of the CPU of
// "finrepro replay" of 1,000 random requests (bench/compare.sh) passing
// on bodies from a trusted pack.
func compactValid(dst, v []byte) []byte {
	for len(v) > 0 {
		switch c := v[0]; c {
		case ' ', '\t', '\n', '\r':
			v = v[1:]
		case '"':
			// The string up to its closing quote: the first quote after
			// an even number of backslashes.
			end := 1
			for {
				q := bytes.IndexByte(v[end:], '"')
				if q < 0 {
					end = len(v) // not JSON: kept as it is
					break
				}
				end += q + 1
				n := 0
				for k := end - 2; v[k] == '\\'; k-- {
					n++
				}
				if n%2 == 0 {
					break
				}
			}
			dst, v = append(dst, v[:end]...), v[end:]
		default:
			dst, v = append(dst, c), v[1:]
		}
	}
	return dst
}

// responseBuffers keeps lookup's response buffers between lookups: they
// save 40 % of the bytes a replay allocates (BenchmarkReplay/answer: 4.1
// MB against 6.7 MB per 500 calls).
var responseBuffers = sync.Pool{New: func() any { return new([]byte) }}

func (c *Client) addMiss(j *job) {
	in, out := estimateRequest(j.req.Body)
	cost, priced := c.prices.Cost(j.requested(), in, out)
	if j.pc.Kind == KindSim {
		cost, priced = 0, true
	}
	m := Miss{
		Label: j.req.Label, Key: j.key.String(), Provider: j.req.Provider, Model: j.requested(),
		InputTokens: in, OutputTokens: out, CostUSD: cost, Priced: priced, Request: j.raw,
	}
	c.mu.Lock()
	if old, ok := c.misses[j.key]; !ok || m.Label.String() < old.Label.String() {
		c.misses[j.key] = m
	}
	c.counts.Missed++
	c.mu.Unlock()
	j.reply.Err = &MissError{Key: j.key.String(), Label: j.req.Label}
}
