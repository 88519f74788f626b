package batch

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/reqkey"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/results"
)

// A Missing is a submitted request that is not stored.
type Missing struct {
	Batch, BatchID string
	Key            string
	Cause          string
	Msg            string
}

// A CollectReport says what Collect did and what is left.
type CollectReport struct {
	// Submitted is the number of distinct requests of every batch.
	Submitted int
	// Stored of them are in the cache; Recorded were stored by this run.
	Stored, Recorded int
	// Pending are open batches that have not ended.
	Pending []*Batch
	// Failed are requests of collected batches that are not stored and
	// no open batch holds, sorted by cause and key.
	Failed []Missing
	// Errors are batches whose results could not be read this time.
	Errors []error
	// Unknown counts result lines whose custom_id no request has.
	Unknown int
}

// Complete reports whether every submitted request is stored.
func (c *CollectReport) Complete() bool { return c.Stored == c.Submitted && len(c.Errors) == 0 }

// storeChunk is how many results Collect stores per pack: a crash loses
// at most this many downloaded results, which the next run downloads
// again.
const storeChunk = 500

// downloadAttempts bounds the downloads of one batch's results per run.
const downloadAttempts = 3

// Collect downloads the results of every ended open batch, stores each
// success once, records the failures and marks the batch collected.
func (r *Runner) Collect(ctx context.Context) (*CollectReport, error) {
	rep := &CollectReport{}
	r.stored = map[cache.Key]bool{}
	for _, b := range r.open("") {
		reason, err := r.retrieve(ctx, b)
		if err != nil {
			rep.Errors = append(rep.Errors, err)
			continue
		}
		if !b.API.ended(b.Status) {
			rep.Pending = append(rep.Pending, b)
			continue
		}
		if err := r.collect(ctx, b, reason, rep); err != nil {
			rep.Errors = append(rep.Errors, err)
		}
		if err := r.state.save(r.cfg.Dir); err != nil {
			return rep, err
		}
	}
	if err := r.state.save(r.cfg.Dir); err != nil {
		return rep, err
	}
	return rep, r.tally(rep)
}

// collect downloads and stores one ended batch's results.
func (r *Runner) collect(ctx context.Context, b *Batch, reason string, rep *CollectReport) error {
	reqs, err := r.readRequests(b)
	if err != nil {
		return err
	}
	e, err := r.endpoint(b)
	if err != nil {
		return err
	}
	failed := map[string]Failure{}
	answered := map[string]bool{}
	var lastErr error
	for attempt := 1; attempt <= downloadAttempts; attempt++ {
		lastErr = r.download(ctx, e, b, reqs, failed, answered, rep)
		if lastErr == nil || !errors.Is(lastErr, errCut) {
			break
		}
		r.logf("batch %s (%s): %v; downloading again (attempt %d of %d)", b.Local, b.ID, lastErr, attempt, downloadAttempts)
	}
	if lastErr != nil {
		return fmt.Errorf("batch %s (%s): %w", b.Local, b.ID, lastErr)
	}
	b.Failures = nil
	for _, key := range b.Keys {
		if has, err := r.has(key); err != nil {
			return err
		} else if has {
			continue
		}
		f, ok := failed[key]
		if !ok {
			f = Failure{Key: key, Cause: string(CauseNoResult), Msg: "the batch ended with status " + b.Status + " and returned no result for it"}
			switch b.Status {
			case "expired":
				f.Cause = string(CauseExpired)
			case "cancelled", "canceled":
				f.Cause = string(CauseCanceled)
			case "failed":
				f.Cause, f.Msg = string(CauseFailed), "the provider rejected the batch: "+reason
			}
		}
		b.Failures = append(b.Failures, f)
	}
	b.Collected = true
	return nil
}

// A pendingRequest is a request of a batch, by custom_id.
type pendingRequest struct {
	key string
	req replay.Request
}

// readRequests reads a batch's requests file and checks it against the
// state's keys.
func (r *Runner) readRequests(b *Batch) (map[string]pendingRequest, error) {
	p := requestsPath(r.cfg.Dir, b.Local)
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("batch %s: %w", b.Local, err)
	}
	defer f.Close()
	qs, err := replay.ParseRequests(f, p, "")
	if err != nil {
		return nil, fmt.Errorf("batch %s: %w", b.Local, err)
	}
	if len(qs) != len(b.Keys) {
		return nil, fmt.Errorf("batch %s: %s has %d requests, the state %d keys", b.Local, p, len(qs), len(b.Keys))
	}
	out := make(map[string]pendingRequest, len(qs))
	for i, q := range qs {
		kr, err := r.cfg.Client.Keyed(q)
		if err != nil {
			return nil, fmt.Errorf("batch %s: %w", b.Local, err)
		}
		if kr.Key.String() != b.Keys[i] {
			return nil, fmt.Errorf("%s:%d: the request's key %s is not the state's %.8s", p, i+1, kr.Key.Str(), b.Keys[i])
		}
		out[customID(b.API, q.Sample, kr.Key)] = pendingRequest{key: b.Keys[i], req: q}
	}
	return out, nil
}

// download streams every result source of b once and stores what it
// reads, chunk by chunk.
func (r *Runner) download(ctx context.Context, e *endpoint, b *Batch, reqs map[string]pendingRequest, failed map[string]Failure, answered map[string]bool, rep *CollectReport) error {
	var chunk []replay.Result
	var keys []string
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		errs, err := r.cfg.Client.StoreResults(chunk)
		if err != nil {
			return err
		}
		n := 0
		for i, ce := range errs {
			if ce != nil {
				failed[keys[i]] = Failure{Key: keys[i], Cause: string(ce.Cause), Msg: r.cfg.Client.Redact(ce.Msg)}
				continue
			}
			k, _ := reqkey.Parse(keys[i]) // ParseState checked every key
			r.stored[k] = true
			delete(failed, keys[i])
			n++
		}
		rep.Recorded += n
		r.logf("batch %s (%s): stored %d results", b.Local, b.ID, n)
		chunk, keys = chunk[:0], keys[:0]
		return nil
	}
	recordedAt := ""
	if r.cfg.Clock != nil {
		recordedAt = r.cfg.Clock().UTC().Format(time.RFC3339)
	}
	handle := func(res result) error {
		p, ok := reqs[res.id]
		if !ok {
			rep.Unknown++
			r.logf("batch %s (%s): result for unknown custom_id %q ignored", b.Local, b.ID, r.cfg.Client.Redact(res.id))
			return nil
		}
		if answered[p.key] {
			return nil // a repeated line, or one stored by an earlier attempt
		}
		if has, err := r.has(p.key); err != nil {
			return err
		} else if has {
			answered[p.key] = true
			delete(failed, p.key)
			return nil
		}
		answered[p.key] = true
		chunk = append(chunk, replay.Result{
			Request: p.req, Body: res.body, Err: res.err, Source: results.SourceBatch,
			BatchID: b.ID, CostFactor: replay.BatchDiscount, RecordedAt: recordedAt,
		})
		keys = append(keys, p.key)
		if len(chunk) >= storeChunk {
			return flush()
		}
		return nil
	}
	var sources []string
	parse := parseOpenAILine
	if b.API == Anthropic {
		sources = []string{"/messages/batches/" + url.PathEscape(b.ID) + "/results"}
		parse = parseAnthropicLine
	} else {
		sources = openaiFiles(b)
	}
	for _, src := range sources {
		resp, err := e.send(ctx, "GET", src, "", nil)
		if err != nil {
			return err
		}
		err = stream(resp.Body, parse, handle)
		resp.Body.Close()
		if ferr := flush(); err == nil {
			err = ferr
		}
		if err != nil {
			if errors.Is(err, errCut) {
				// Lines after the cut are read again next attempt; the
				// ones stored stay stored and are skipped.
				clear(answered)
			}
			return err
		}
	}
	return nil
}

// has reports whether the request of key is stored, asking the store
// once per key in a Collect run (what the run stores it notes itself).
func (r *Runner) has(key string) (bool, error) {
	k, _ := reqkey.Parse(key) // ParseState checked every key
	if v, ok := r.stored[k]; ok {
		return v, nil
	}
	v, err := storeHas(r.cfg.Store, k)
	if err != nil {
		return false, err
	}
	r.stored[k] = v
	return v, nil
}

// storeHas is (*cache.Store).Has, which tests count.
var storeHas = (*cache.Store).Has

// tally counts the submitted requests, the stored ones and the
// failures: of a request that failed in several collected batches, the
// latest failure.
func (r *Runner) tally(rep *CollectReport) error {
	open := map[string]bool{}
	for _, b := range r.state.Batches {
		if !b.Collected {
			for _, k := range b.Keys {
				open[k] = true
			}
		}
	}
	stored := map[string]bool{}
	failed := map[string]Missing{}
	for _, b := range r.state.Batches { // in local order: later batches last
		fails := map[string]Failure{}
		for _, f := range b.Failures {
			fails[f.Key] = f
		}
		for _, key := range b.Keys {
			if _, ok := stored[key]; !ok {
				has, err := r.has(key)
				if err != nil {
					return err
				}
				stored[key] = has
			}
			if f, ok := fails[key]; ok && b.Collected && !open[key] && !stored[key] {
				failed[key] = Missing{Batch: b.Local, BatchID: b.ID, Key: key, Cause: f.Cause, Msg: f.Msg}
			}
		}
	}
	rep.Submitted = len(stored)
	for _, has := range stored {
		if has {
			rep.Stored++
		}
	}
	for _, m := range failed {
		rep.Failed = append(rep.Failed, m)
	}
	slices.SortFunc(rep.Failed, func(a, b Missing) int {
		if c := strings.Compare(a.Cause, b.Cause); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	return nil
}
