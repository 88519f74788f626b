package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/results"
)

// Config configures a Runner.
type Config struct {
	// Dir holds the state (Dir/batch).
	Dir string
	// Store is the cache results are stored in; Client must be over it.
	Store *cache.Store
	// Client keys requests and stores results with its checks.
	Client *replay.Client
	// Getenv reads API keys; nil means os.Getenv.
	Getenv func(string) string
	// HTTP sends the requests; nil means a client that follows no
	// redirect (the key headers must not go to another host).
	HTTP *http.Client
	// BaseURL, when set, overrides the base URL of the batches of
	// Provider, or of every batch when Provider is empty.
	BaseURL  string
	Provider string
	// Progress receives a line per stored chunk of results; nil is quiet.
	Progress io.Writer
	// Clock gives the recorded_at of stored exchanges; nil leaves it empty.
	Clock func() time.Time
	// Sleep waits between retries; nil waits for real. Tests inject it.
	Sleep func(context.Context, time.Duration) error
}

// A Runner submits, polls, collects and cancels the batches of a folder.
// It is not safe for concurrent use, nor are two runners on one folder.
type Runner struct {
	cfg   Config
	state *State
}

// Open loads the state of cfg.Dir.
func Open(cfg Config) (*Runner, error) {
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.Sleep == nil {
		cfg.Sleep = func(ctx context.Context, d time.Duration) error {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	s, err := LoadState(cfg.Dir)
	if err != nil {
		return nil, err
	}
	return &Runner{cfg: cfg, state: s}, nil
}

// State returns the runner's state.
func (r *Runner) State() *State { return r.state }

// endpoint returns the endpoint of a batch's provider, with its key.
func (r *Runner) endpoint(b *Batch) (*endpoint, error) {
	pc, ok := r.cfg.Client.Provider(b.Provider)
	if !ok {
		return nil, fmt.Errorf("batch %s: unknown provider %q", b.Local, b.Provider)
	}
	if r.cfg.BaseURL != "" && (r.cfg.Provider == "" || r.cfg.Provider == b.Provider) {
		b.BaseURL = r.cfg.BaseURL
	}
	if b.BaseURL == "" {
		b.BaseURL = pc.BaseURL
	}
	key := ""
	if pc.KeyEnv != "" {
		key = r.cfg.Getenv(pc.KeyEnv)
		if key == "" {
			return nil, fmt.Errorf("batch %s: environment variable %s is not set", b.Local, pc.KeyEnv)
		}
		r.cfg.Client.AddSecret(key)
	}
	return &endpoint{api: b.API, kind: pc.Kind, baseURL: b.BaseURL, key: key, http: r.cfg.HTTP, redact: r.cfg.Client.Redact, sleep: r.cfg.Sleep}, nil
}

// SubmitOptions say what Submit sends.
type SubmitOptions struct {
	// Provider is the provider whose requests are submitted.
	Provider string
	// MaxRequests and MaxBytes lower the provider's limits per batch.
	MaxRequests int
	MaxBytes    int64
	// Resubmit forgets batches whose creation was never confirmed and
	// submits their requests again.
	Resubmit bool
	// Bundle, when set, is the bundle folder the requests come from; it
	// is recorded in the state (one bundle per state folder).
	Bundle string
}

// A SubmitReport says what Submit did.
type SubmitReport struct {
	// Requests is the number of distinct requests of the provider.
	Requests int
	// Stored were already in the cache; Covered are in open batches.
	Stored, Covered int
	// LeftOut are requests of other providers.
	LeftOut int
	// TooLarge are requests larger than a batch may be.
	TooLarge []string
	// Batches are the batches created.
	Batches []*Batch
}

// Submitted returns the number of requests submitted.
func (s *SubmitReport) Submitted() int {
	n := 0
	for _, b := range s.Batches {
		n += len(b.Keys)
	}
	return n
}

// Submit submits the requests of opt.Provider that no stored exchange and
// no open batch covers, in batches within the provider's limits, and
// records every batch in the state before and after its creation.
func (r *Runner) Submit(ctx context.Context, reqs []replay.Request, opt SubmitOptions) (*SubmitReport, error) {
	var unconfirmed []string
	kept := r.state.Batches[:0:0]
	for _, b := range r.state.Batches {
		if b.Status == StatusSubmitting {
			unconfirmed = append(unconfirmed, b.Local)
			if opt.Resubmit {
				continue
			}
		}
		kept = append(kept, b)
	}
	if len(unconfirmed) > 0 && !opt.Resubmit {
		return nil, fmt.Errorf("batch: batches %s were being created when a run stopped and may exist at the provider: check its console (or cancel them there), then rerun with --resubmit", strings.Join(unconfirmed, ", "))
	}
	if opt.Bundle != "" && r.state.Bundle != "" && r.state.Bundle != opt.Bundle {
		return nil, fmt.Errorf("batch: %s holds the batches of bundle %s; use another --dir for %s", r.cfg.Dir, r.state.Bundle, opt.Bundle)
	}
	r.state.Batches = kept
	if opt.Bundle != "" {
		r.state.Bundle = opt.Bundle
	}
	if len(unconfirmed) > 0 {
		// Forgotten now, even when nothing is left to submit.
		if err := r.state.save(r.cfg.Dir); err != nil {
			return nil, err
		}
	}
	pc, ok := r.cfg.Client.Provider(opt.Provider)
	if !ok {
		return nil, fmt.Errorf("batch: unknown provider %q", opt.Provider)
	}
	api, ok := APIOf(pc.Kind)
	if !ok {
		return nil, fmt.Errorf("batch: provider %q speaks %s, which has no batch API here (openai and anthropic shapes do)", opt.Provider, pc.Kind)
	}
	lim := api.Limits()
	if opt.MaxRequests > 0 {
		lim.Requests = min(lim.Requests, opt.MaxRequests)
	}
	if opt.MaxBytes > 0 {
		lim.Bytes = min(lim.Bytes, opt.MaxBytes)
	}
	rep := &SubmitReport{}
	covered := r.state.covered()
	seen := map[cache.Key]bool{}
	type group struct {
		endpoint, model string
		lines           []line
	}
	groups := map[[2]string]*group{}
	for _, q := range reqs {
		if q.Provider != opt.Provider {
			rep.LeftOut++
			continue
		}
		key, raw, model, err := r.cfg.Client.Keyed(q)
		if err != nil {
			return nil, fmt.Errorf("batch: %s: %w", replay.LabelText(q.Label), err)
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		rep.Requests++
		if has, err := r.cfg.Store.Has(key); err != nil {
			return nil, err
		} else if has {
			rep.Stored++
			continue
		}
		if covered[key] {
			rep.Covered++
			continue
		}
		var full replay.Request
		if err := json.Unmarshal(raw, &full); err != nil { // raw is the request object Keyed encoded
			return nil, fmt.Errorf("batch: %s: %w", replay.LabelText(q.Label), err)
		}
		if api == Anthropic && full.Endpoint != "messages" {
			return nil, fmt.Errorf("batch: %s: endpoint %q: Message Batches take messages requests only", replay.LabelText(q.Label), full.Endpoint)
		}
		l := line{id: customID(api, full.Sample, key), req: full, body: full.Body}
		g := [2]string{full.Endpoint, model}
		if api == Anthropic {
			g = [2]string{} // a Message Batch may mix models
		}
		if groups[g] == nil {
			groups[g] = &group{endpoint: g[0], model: g[1]}
		}
		groups[g].lines = append(groups[g].lines, l)
	}
	names := make([][2]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	slices.SortFunc(names, func(a, b [2]string) int { return strings.Compare(a[0]+"\x00"+a[1], b[0]+"\x00"+b[1]) })
	for _, g := range names {
		var chunk []line
		var size int64
		flush := func() error {
			if len(chunk) == 0 {
				return nil
			}
			b, err := r.create(ctx, opt.Provider, api, chunk)
			if b != nil {
				rep.Batches = append(rep.Batches, b)
			}
			chunk, size = nil, 0
			return err
		}
		for _, l := range groups[g].lines {
			n, err := lineSize(api, l)
			if err != nil {
				return rep, err
			}
			if n > lim.Bytes {
				rep.TooLarge = append(rep.TooLarge, fmt.Sprintf("%.8s (%d bytes)", keyOfID(l.id), n))
				continue
			}
			if len(chunk) == lim.Requests || size+n > lim.Bytes {
				if err := flush(); err != nil {
					return rep, err
				}
			}
			chunk = append(chunk, l)
			size += n
		}
		if err := flush(); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func customID(api API, sample int, key cache.Key) string {
	if api == Anthropic {
		return anthropicID(sample, key)
	}
	return replay.BatchCustomID(sample, key)
}

// keyOfID returns the key digits of a custom_id, for messages.
func keyOfID(id string) string {
	_, k, _ := strings.Cut(strings.TrimPrefix(id, "finrepro-"), "-")
	return k
}

func lineSize(api API, l line) (int64, error) {
	if api == Anthropic {
		return anthropicLineSize(l)
	}
	return openaiLineSize(l)
}

// An httpStatusError is a provider answer with a status other than 200:
// the call was refused, so nothing was created.
type httpStatusError struct {
	status int
	msg    string
}

func (e *httpStatusError) Error() string { return e.msg }

// create writes the requests file of one batch, records the batch as
// submitting, creates it at the provider and records its id. A batch the
// provider refused is forgotten again; one whose creation is unknown (the
// connection failed) stays submitting.
func (r *Runner) create(ctx context.Context, provider string, api API, lines []line) (*Batch, error) {
	b := &Batch{Local: r.state.nextLocal(), Provider: provider, API: api, Status: StatusSubmitting}
	ids := map[string]bool{}
	var file bytes.Buffer
	for _, l := range lines {
		if ids[l.id] {
			return nil, fmt.Errorf("batch: two requests share custom_id %s", l.id)
		}
		ids[l.id] = true
		raw, err := l.req.Encode()
		if err != nil {
			return nil, fmt.Errorf("batch: %w", err)
		}
		file.Write(raw)
		file.WriteByte('\n')
		key, err := cache.KeyOf(raw)
		if err != nil {
			return nil, fmt.Errorf("batch: %w", err)
		}
		b.Keys = append(b.Keys, key.String())
	}
	e, err := r.endpoint(b)
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(requestsPath(r.cfg.Dir, b.Local), file.Bytes()); err != nil {
		return nil, err
	}
	r.state.Batches = append(r.state.Batches, b)
	if err := r.state.save(r.cfg.Dir); err != nil {
		return nil, err
	}
	if api == Anthropic {
		err = e.anthropicCreate(ctx, b, lines)
	} else {
		err = e.openaiCreate(ctx, b, lines)
	}
	if err != nil {
		var he *httpStatusError
		if errors.As(err, &he) {
			r.state.Batches = slices.DeleteFunc(r.state.Batches, func(x *Batch) bool { return x == b })
			os.Remove(requestsPath(r.cfg.Dir, b.Local)) // unreferenced now; a leftover is harmless
			if serr := r.state.save(r.cfg.Dir); serr != nil {
				return nil, serr
			}
			return nil, fmt.Errorf("batch %s: %w", b.Local, err)
		}
		return b, fmt.Errorf("batch %s: %w (its creation is unconfirmed)", b.Local, err)
	}
	return b, r.state.save(r.cfg.Dir)
}

// open returns the batches that are created and not collected, filtered
// by id when it is set.
func (r *Runner) open(id string) []*Batch {
	var out []*Batch
	for _, b := range r.state.Batches {
		if b.ID != "" && !b.Collected && (id == "" || b.ID == id) {
			out = append(out, b)
		}
	}
	return out
}

// Status polls every open batch and records what it says. It returns the
// state's batches, and the first error after polling all.
func (r *Runner) Status(ctx context.Context) ([]*Batch, error) {
	var first error
	for _, b := range r.open("") {
		if _, err := r.retrieve(ctx, b); err != nil && first == nil {
			first = err
		}
	}
	if err := r.state.save(r.cfg.Dir); err != nil {
		return nil, err
	}
	return r.state.Batches, first
}

// retrieve polls one batch and returns the provider's reason when the
// whole batch failed.
func (r *Runner) retrieve(ctx context.Context, b *Batch) (string, error) {
	e, err := r.endpoint(b)
	if err != nil {
		return "", err
	}
	if b.API == Anthropic {
		return "", e.anthropicRetrieve(ctx, b)
	}
	return e.openaiRetrieve(ctx, b)
}

// Cancel asks the provider to cancel the open batches (the one with id
// when it is set); their finished requests are still collected.
func (r *Runner) Cancel(ctx context.Context, id string) ([]*Batch, error) {
	bs := r.open(id)
	if id != "" && len(bs) == 0 {
		return nil, fmt.Errorf("batch: no open batch has id %q", id)
	}
	var first error
	for _, b := range bs {
		e, err := r.endpoint(b)
		if err == nil {
			if b.API == Anthropic {
				err = e.anthropicCancel(ctx, b)
			} else {
				err = e.openaiCancel(ctx, b)
			}
		}
		if err != nil && first == nil {
			first = err
		}
	}
	if err := r.state.save(r.cfg.Dir); err != nil {
		return bs, err
	}
	return bs, first
}

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
		k, _ := cache.ParseKey(key) // ParseState checked every key
		if has, err := r.cfg.Store.Has(k); err != nil {
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
		key, _, _, err := r.cfg.Client.Keyed(q)
		if err != nil {
			return nil, fmt.Errorf("batch %s: %w", b.Local, err)
		}
		if key.String() != b.Keys[i] {
			return nil, fmt.Errorf("%s:%d: the request's key %s is not the state's %.8s", p, i+1, key.Str(), b.Keys[i])
		}
		out[customID(b.API, q.Sample, key)] = pendingRequest{key: b.Keys[i], req: q}
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
		k, _ := cache.ParseKey(p.key) // ParseState checked every key
		if has, err := r.cfg.Store.Has(k); err != nil {
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
				k, _ := cache.ParseKey(key) // ParseState checked every key
				has, err := r.cfg.Store.Has(k)
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

func (r *Runner) logf(format string, args ...any) {
	if r.cfg.Progress != nil {
		fmt.Fprintf(r.cfg.Progress, format+"\n", args...)
	}
}
