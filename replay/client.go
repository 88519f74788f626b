package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/results"
)

// A Mode says what the client does on a cache miss.
type Mode string

// Modes.
const (
	Offline Mode = "offline" // answer from the cache only; a miss is reported
	Record  Mode = "record"  // call the provider on a miss and store the exchange
	Refresh Mode = "refresh" // call again and store under the next free sample index
)

// ParseMode parses a mode name; "" is Offline.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", Offline:
		return Offline, nil
	case Record, Refresh:
		return Mode(s), nil
	}
	return "", fmt.Errorf("replay: unknown mode %q (want offline, record or refresh)", s)
}

// Config configures a Client.
type Config struct {
	// Mode is Offline when empty.
	Mode Mode
	// Providers override and extend DefaultProviders by name.
	Providers map[string]ProviderConfig
	// Sim answers provider kind "sim"; without it sim misses fail.
	Sim *Sim
	// Concurrency bounds requests in flight per provider when the
	// provider sets no bound; 0 means DefaultConcurrency.
	Concurrency int
	// Clock gives the recorded_at time of new exchanges; nil leaves
	// recorded_at empty.
	Clock func() time.Time
	// Prices prices misses and recorded exchanges; nil means
	// DefaultPrices.
	Prices *Prices
	// Progress receives progress and warning lines; nil is quiet.
	Progress io.Writer
	// Getenv reads API keys; nil means os.Getenv.
	Getenv func(string) string
	// HTTP sends provider requests; nil means a client with default
	// transport settings (per-attempt timeouts come from the provider).
	HTTP *http.Client
	// Seed seeds the retry jitter.
	Seed uint64
	// Sleep waits between attempts; nil waits for real. Tests inject it.
	Sleep func(context.Context, time.Duration) error
}

// A Client answers calls from the cache and, when recording, from the
// providers. It is safe for concurrent use.
type Client struct {
	store     *cache.Store
	cfg       Config
	providers map[string]ProviderConfig
	prices    *Prices
	getenv    func(string) string
	http      *http.Client
	sleep     func(context.Context, time.Duration) error
	backoff   *backoff
	prog      *progress

	mu       sync.Mutex
	sems     map[string]chan struct{}
	limiters map[string]*limiter
	secrets  []string
	misses   map[cache.Key]Miss
	failures []Failure
	drift    map[[3]string]bool
	drifts   []Drift
	spent    float64
	avoided  float64
	counts   Counts
	// simPending are simulated exchanges recorded but not yet stored.
	simPending []simPut
}

// Counts count the distinct requests a client has seen, by outcome.
type Counts struct {
	Hits     int // answered from the cache
	Recorded int // sent and stored
	Missed   int // not stored, offline
	Failed   int // could not be recorded
}

// New returns a client over store.
func New(store *cache.Store, cfg Config) *Client {
	c := &Client{
		store:     store,
		cfg:       cfg,
		providers: mergeProviders(cfg.Providers),
		prices:    cfg.Prices,
		getenv:    cfg.Getenv,
		http:      cfg.HTTP,
		sleep:     cfg.Sleep,
		backoff:   newBackoff(0, cfg.Seed),
		sems:      map[string]chan struct{}{},
		limiters:  map[string]*limiter{},
		misses:    map[cache.Key]Miss{},
		drift:     map[[3]string]bool{},
	}
	if c.cfg.Mode == "" {
		c.cfg.Mode = Offline
	}
	if c.prices == nil {
		c.prices = DefaultPrices()
	}
	if c.getenv == nil {
		c.getenv = os.Getenv
	}
	if c.http == nil {
		c.http = &http.Client{CheckRedirect: noRedirect}
	}
	if c.sleep == nil {
		c.sleep = sleepCtx
	}
	c.prog = newProgress(cfg.Progress, c.redact)
	// Every configured key value is a secret from the start, so that
	// imports and error messages are checked too.
	c.secrets = KeyValues(c.getenv, cfg.Providers)
	return c
}

// noRedirect refuses to follow redirects: a provider API does not
// redirect a POST, and a client following one would send the key headers
// (x-api-key, x-goog-api-key) to another host. A 3xx is an http_error.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// A Miss is a request that is not stored, in offline mode.
type Miss struct {
	// Label is the first call that asked for it.
	Label    results.Label
	Key      string
	Provider string
	Model    string
	// InputTokens and OutputTokens estimate the request's size.
	InputTokens, OutputTokens int
	// CostUSD estimates recording it; Priced is false when the model has
	// no price.
	CostUSD float64
	Priced  bool
	// Request is the request object.
	Request json.RawMessage
}

// String formats m as "label: provider model key KEY8, ~IN in + ~OUT out
// tokens, $COST".
func (m Miss) String() string {
	price := "no price"
	if m.Priced {
		price = fmt.Sprintf("$%.4f", m.CostUSD)
	}
	return fmt.Sprintf("%s: %s %s key %.8s, ~%d in + ~%d out tokens, %s",
		LabelText(m.Label), m.Provider, m.Model, m.Key, m.InputTokens, m.OutputTokens, price)
}

// A MissError is the error of a reply whose request is not stored, in
// offline mode.
type MissError struct {
	Key   string
	Label results.Label
}

// Error names the key and the label of the missing request.
func (e *MissError) Error() string {
	return fmt.Sprintf("replay: not in the cache: %.8s (%s)", e.Key, LabelText(e.Label))
}

// A Cause classifies why a request could not be answered.
type Cause string

// Causes of failures. Those marked transient are retried.
const (
	CauseRateLimited Cause = "rate_limited"       // HTTP 429; transient
	CauseServer      Cause = "server_error"       // HTTP 5xx; transient
	CauseTimeout     Cause = "timeout"            // attempt timed out or HTTP 408; transient
	CauseConnection  Cause = "connection"         // refused, reset or closed; transient
	CauseTruncated   Cause = "truncated_body"     // body ended early; transient
	CauseMalformed   Cause = "malformed_json"     // not the provider's JSON shape; transient
	CauseHTTP        Cause = "http_error"         // other HTTP status: permanent
	CauseAPIError    Cause = "api_error"          // an error object in a 200 body: permanent
	CauseEmpty       Cause = "empty_completion"   // no output text: permanent
	CauseRefusal     Cause = "refusal"            // the model refused: permanent
	CauseNoKey       Cause = "missing_api_key"    // the key variable is unset
	CauseSecret      Cause = "secret_in_exchange" // the exchange contains an API key
	CauseRequest     Cause = "bad_request"        // the request object is invalid
	CauseStore       Cause = "store_error"        // the cache refused the exchange
	CauseCanceled    Cause = "canceled"           // the run was interrupted
	CauseSim         Cause = "sim_error"          // the simulator could not answer
)

// transient reports whether a cause is worth another attempt.
func (c Cause) transient() bool {
	switch c {
	case CauseRateLimited, CauseServer, CauseTimeout, CauseConnection, CauseTruncated, CauseMalformed:
		return true
	}
	return false
}

// A Failure is a request that could not be recorded.
type Failure struct {
	Label    results.Label
	Key      string
	Provider string
	Model    string
	Cause    Cause
	// Status is the last HTTP status, 0 when none.
	Status   int
	Attempts int
	// Msg describes the last error, with secrets removed.
	Msg string
}

// String formats f as "label: provider model key KEY8: cause (HTTP n),
// attempts n: message".
func (f Failure) String() string {
	st := ""
	if f.Status != 0 {
		st = fmt.Sprintf(" (HTTP %d)", f.Status)
	}
	return fmt.Sprintf("%s: %s %s key %.8s: %s%s, attempts %d: %s",
		LabelText(f.Label), f.Provider, f.Model, f.Key, f.Cause, st, f.Attempts, f.Msg)
}

// A CallError is the error of a reply whose recording failed.
type CallError struct {
	Cause  Cause
	Status int
	Msg    string
}

// Error gives the cause, the HTTP status when there is one and the
// message.
func (e *CallError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("replay: %s (HTTP %d): %s", e.Cause, e.Status, e.Msg)
	}
	return fmt.Sprintf("replay: %s: %s", e.Cause, e.Msg)
}

// A CauseCount is the number of failures with one cause.
type CauseCount struct {
	Cause Cause
	Count int
}

// A Drift is a provider reporting another model than the requested one.
type Drift struct {
	Provider, Requested, Reported string
}

// Misses returns the requests that were not stored, one per key, sorted
// by label and key.
func (c *Client) Misses() []Miss {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Miss, 0, len(c.misses))
	for _, m := range c.misses {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b Miss) int {
		return cmpOr(strings.Compare(a.Label.String(), b.Label.String()), strings.Compare(a.Key, b.Key))
	})
	return out
}

// Failures returns the requests that could not be recorded, sorted by
// cause, label and key.
func (c *Client) Failures() []Failure {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.failures)
	slices.SortFunc(out, func(a, b Failure) int {
		return cmpOr(strings.Compare(string(a.Cause), string(b.Cause)),
			strings.Compare(a.Label.String(), b.Label.String()), strings.Compare(a.Key, b.Key))
	})
	return out
}

// FailureCounts returns the number of failures per cause, most frequent
// first.
func (c *Client) FailureCounts() []CauseCount {
	return CountCauses(c.Failures())
}

// CountCauses counts failures per cause, most frequent first, ties by
// cause name.
func CountCauses(fs []Failure) []CauseCount {
	n := map[Cause]int{}
	for _, f := range fs {
		n[f.Cause]++
	}
	var out []CauseCount
	for c, k := range n {
		out = append(out, CauseCount{c, k})
	}
	slices.SortFunc(out, func(a, b CauseCount) int {
		return cmpOr(b.Count-a.Count, strings.Compare(string(a.Cause), string(b.Cause)))
	})
	return out
}

// Drifts returns every (provider, requested, reported) model mismatch seen
// while recording, sorted.
func (c *Client) Drifts() []Drift {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.drifts)
	slices.SortFunc(out, func(a, b Drift) int {
		return cmpOr(strings.Compare(a.Provider, b.Provider), strings.Compare(a.Requested, b.Requested),
			strings.Compare(a.Reported, b.Reported))
	})
	return out
}

// Counts returns the outcome counts so far.
func (c *Client) Counts() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts
}

// AvoidedUSD returns the recorded cost of the exchanges answered from the
// cache: the API spend a replay avoided.
func (c *Client) AvoidedUSD() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.avoided
}

// SpentUSD returns the cost of the exchanges recorded by this client.
func (c *Client) SpentUSD() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.spent
}

func cmpOr(cs ...int) int {
	for _, c := range cs {
		if c != 0 {
			return c
		}
	}
	return 0
}

// Answer answers calls in order (results.Answerer). Identical requests in
// one batch are answered once.
func (c *Client) Answer(ctx context.Context, calls []results.Call) []results.Reply {
	return c.answer(ctx, len(calls), func(i int) (*job, Request, error) { return c.promptJob(&calls[i]) })
}

// promptJob makes the job of a call. Its key is computed from the
// prompt's values; the request itself is built only when it is needed (a
// miss or a recording), which a replay from the cache never does. The
// request returned beside an error names the call's provider and label.
func (c *Client) promptJob(call *results.Call) (*job, Request, error) {
	p := &call.Prompt
	stub := Request{Provider: p.Provider, Label: call.Label}
	pc, ok := c.providers[p.Provider]
	if !ok {
		return nil, stub, fmt.Errorf("replay: %s: unknown provider %q", LabelText(call.Label), p.Provider)
	}
	key, endpoint, err := promptKey(p, pc.Kind)
	if err != nil {
		return nil, stub, fmt.Errorf("%w (%s)", err, LabelText(call.Label))
	}
	if err := checkEndpoint(endpoint); err != nil {
		return nil, stub, fmt.Errorf("replay: %s: %w", p.Provider, err)
	}
	j := &job{
		req:    Request{Provider: p.Provider, Endpoint: endpoint, Sample: p.Sample, Label: call.Label, model: p.Model},
		key:    key,
		pc:     pc,
		model:  p.Model,
		prompt: p,
		reply:  results.Reply{Key: key.String()},
	}
	return j, stub, nil
}

// materialize builds the request of a job made from a prompt, once, and
// checks that its key is the one computed from the prompt's values.
func (j *job) materialize() error {
	if j.prompt == nil || j.raw != nil {
		return nil
	}
	r, err := requestOf(*j.prompt, j.pc.Kind)
	if err != nil {
		return err
	}
	r.Label, r.model = j.req.Label, j.req.model
	raw, key, err := encodeKey(r)
	if err != nil {
		return err
	}
	if key != j.key {
		return fmt.Errorf("replay: %s: the request's key %s is not the key %s computed from its prompt", r.Provider, key.Str(), j.key.Str())
	}
	j.req, j.raw = *r, raw
	return nil
}

// parallel calls f(0), ..., f(n-1) on GOMAXPROCS goroutines and waits
// for all; f must be safe for concurrent use on distinct indexes.
func parallel(n int, f func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// AnswerRequests answers request objects in order; a request with an empty
// endpoint gets its provider's default.
func (c *Client) AnswerRequests(ctx context.Context, reqs []Request) []results.Reply {
	return c.answer(ctx, len(reqs), func(i int) (*job, Request, error) {
		j, err := c.newJob(reqs[i])
		return j, reqs[i], err
	})
}

// A job is one distinct request of a batch.
type job struct {
	req   Request
	raw   []byte // the encoded request; nil until built
	key   cache.Key
	pc    ProviderConfig
	model string
	// prompt, when the job was made from a call, is its prompt: the
	// request is built from it when needed (see materialize).
	prompt *results.Prompt
	idxs   []int
	reply  results.Reply
}

// answerChunk is how many requests answer builds, keys and looks up at a
// time: the request bodies of a chunk (prompts can be long) are dropped
// once its replies are read, so memory holds replies, not requests.
const answerChunk = 512

// answer answers n requests, the i-th keyed by request(i), which returns
// its job; a request that cannot be keyed is a bad request, named by the
// request returned beside the error.
func (c *Client) answer(ctx context.Context, n int, request func(i int) (*job, Request, error)) []results.Reply {
	replies := make([]results.Reply, n)
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
			} else if err := j.materialize(); err != nil {
				j.reply.Err = c.badRequest(j.req, err)
			} else if c.cfg.Mode == Offline {
				c.addMiss(j)
			} else {
				pending = append(pending, j)
				continue
			}
			j.req.Body, j.raw, j.prompt = nil, nil, nil // answered: the request is no longer needed
		}
	}
	c.record(ctx, pending)
	c.flushSim()
	for _, j := range jobs {
		for _, i := range j.idxs {
			replies[i] = j.reply
		}
	}
	return replies
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
	pc, ok := c.providers[r.Provider]
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
	j.model = modelOf(pc.Kind, &r)
	if err := j.rekey(); err != nil {
		return nil, err
	}
	return j, nil
}

// rekey encodes the request and computes its key.
func (j *job) rekey() error {
	raw, key, err := encodeKey(&j.req)
	if err != nil {
		return err
	}
	j.raw, j.key = raw, key
	j.reply = results.Reply{Key: key.String()}
	return nil
}

// encodeKey encodes request r and computes its key.
func encodeKey(r *Request) ([]byte, cache.Key, error) {
	raw, err := r.Encode()
	if err != nil {
		return nil, cache.Key{}, fmt.Errorf("replay: encode request: %w", err)
	}
	key, err := cache.KeyOf(raw)
	if err != nil {
		return nil, cache.Key{}, fmt.Errorf("replay: key: %w", err)
	}
	return raw, key, nil
}

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
// entry counts as missing.
func (c *Client) lookup(j *job) bool {
	// The reply copies what it keeps of the response, so the response's
	// buffer serves the next lookup.
	bp := responseBuffers.Get().(*[]byte)
	defer responseBuffers.Put(bp)
	resp, meta, err := c.store.AppendResponse((*bp)[:0], j.key)
	if resp != nil {
		*bp = resp
	}
	if err != nil {
		if !errors.Is(err, cache.ErrNotFound) {
			c.prog.warnf("cache entry %s unreadable, treated as missing: %v", j.key.Str(), err)
		}
		return false
	}
	o, ce := checkBody(j.pc.Kind, resp)
	if ce != nil {
		// Only checked responses are recorded, but a store can be loaded
		// from elsewhere: an unusable one is an error, not a miss.
		ce.Msg = "stored response " + j.key.Str() + ": " + ce.Msg
		j.reply.Err = ce
		return true
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

// responseBuffers keeps lookup's response buffers between lookups.
var responseBuffers = sync.Pool{New: func() any { return new([]byte) }}

func (c *Client) addMiss(j *job) {
	in, out := estimateRequest(j.req.Body)
	cost, priced := c.prices.Cost(j.model, in, out)
	if j.pc.Kind == KindSim {
		cost, priced = 0, true
	}
	m := Miss{
		Label: j.req.Label, Key: j.key.String(), Provider: j.req.Provider, Model: j.model,
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

// record sends the pending jobs, bounded per provider, and waits for all.
func (c *Client) record(ctx context.Context, jobs []*job) {
	if len(jobs) == 0 {
		return
	}
	c.prog.start(len(jobs))
	var wg sync.WaitGroup
	for _, j := range jobs {
		sem := c.semaphore(j.req.Provider, j.pc)
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				c.fail(j, &CallError{Cause: CauseCanceled, Msg: ctx.Err().Error()}, 0)
				c.prog.done(false, 0)
				return
			}
			defer func() { <-sem }()
			c.recordOne(ctx, j)
		}()
	}
	wg.Wait()
	c.prog.finish()
}

func (c *Client) semaphore(name string, pc ProviderConfig) chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.sems[name]
	if !ok {
		n := cmpOr(pc.Concurrency, c.cfg.Concurrency, DefaultConcurrency)
		s = make(chan struct{}, max(n, 1))
		c.sems[name] = s
	}
	return s
}

func (c *Client) limiter(name string, pc ProviderConfig) *limiter {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.limiters[name]
	if !ok {
		// The limiter keeps real time even when tests inject Sleep: its
		// window must advance.
		l = &limiter{rpm: pc.RPM, tpm: pc.TPM, now: time.Now, sleep: sleepCtx}
		c.limiters[name] = l
	}
	return l
}

// recordOne records one job: a free sample index in refresh mode, then
// attempts with backoff, then the checks and the store.
func (c *Client) recordOne(ctx context.Context, j *job) {
	if c.cfg.Mode == Refresh {
		if err := c.nextSample(j); err != nil {
			c.fail(j, &CallError{Cause: CauseStore, Msg: err.Error()}, 0)
			c.prog.done(false, 0)
			return
		}
	}
	apiKey := ""
	if j.pc.Kind != KindSim && j.pc.KeyEnv != "" {
		apiKey = c.getenv(j.pc.KeyEnv)
		if apiKey == "" {
			c.fail(j, &CallError{Cause: CauseNoKey, Msg: "environment variable " + j.pc.KeyEnv + " is not set"}, 0)
			c.prog.done(false, 0)
			return
		}
		c.addSecret(apiKey)
	}
	maxAttempts := cmpOr(j.pc.MaxAttempts, DefaultAttempts)
	inTok, outTok := estimateRequest(j.req.Body)
	var (
		res     *attemptResult
		lastErr *CallError
	)
	attempt := 0
	for attempt < maxAttempts {
		attempt++
		if j.pc.Kind != KindSim {
			if err := c.limiter(j.req.Provider, j.pc).wait(ctx, inTok+outTok); err != nil {
				lastErr = &CallError{Cause: CauseCanceled, Msg: err.Error()}
				break
			}
		}
		res, lastErr = c.attempt(ctx, j, apiKey, attempt)
		if lastErr == nil || !lastErr.Cause.transient() || attempt == maxAttempts {
			break
		}
		if j.pc.Kind == KindSim {
			// The simulator has no server to spare: retry at once.
			continue
		}
		d := c.backoff.delay(attempt, res.retryAfter)
		c.prog.logf("retry %s %s in %v after %s (attempt %d of %d)", j.req.Provider, j.key.Str(),
			d.Round(time.Millisecond), lastErr.Cause, attempt, maxAttempts)
		if err := c.sleep(ctx, d); err != nil {
			lastErr = &CallError{Cause: CauseCanceled, Msg: err.Error()}
			break
		}
	}
	if lastErr != nil {
		c.fail(j, lastErr, attempt)
		c.prog.done(false, 0)
		return
	}
	cost := c.cost(j.model, res.out)
	if j.pc.Kind == KindSim {
		cost = 0
	}
	source := results.SourceAPI
	if j.pc.Kind == KindSim {
		source = results.SourceSim
	}
	meta := cache.Meta{
		Provider: j.req.Provider, Model: j.model, ReportedModel: res.out.Model,
		InputTokens: res.out.InputTokens, OutputTokens: res.out.OutputTokens, CostUSD: cost,
		LatencyMS: res.latencyMS, Attempts: attempt, Source: source,
	}
	if c.cfg.Clock != nil {
		meta.RecordedAt = c.cfg.Clock().UTC().Format(time.RFC3339)
	}
	if err := c.put(j, res.body, meta); err != nil {
		c.prog.done(false, 0)
		return
	}
	c.checkDrift(j, res.out.Model)
	c.mu.Lock()
	c.spent += cost
	c.counts.Recorded++
	c.mu.Unlock()
	j.reply = results.Reply{
		Text: res.out.Text, Model: res.out.Model, Source: source, Key: j.key.String(), RecordedAt: meta.RecordedAt,
	}
	c.prog.done(true, cost)
}

// cost prices an answer by the model the provider reported, which is the
// one it bills, else by the requested one.
func (c *Client) cost(requested string, o *output) float64 {
	if v, ok := c.prices.Cost(o.Model, o.InputTokens, o.OutputTokens); ok {
		return v
	}
	v, _ := c.prices.Cost(requested, o.InputTokens, o.OutputTokens)
	return v
}

// nextSample moves j to the first sample index at or after its own that
// is not stored.
func (c *Client) nextSample(j *job) error {
	for {
		_, err := c.store.Get(j.key)
		if errors.Is(err, cache.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		j.req.Sample++
		if err := j.rekey(); err != nil {
			return err
		}
	}
}

// snapshotSuffix matches the dated snapshot suffixes providers add to an
// alias ("gpt-4o" answered as "gpt-4o-2024-08-06").
var snapshotSuffix = regexp.MustCompile(`^-(\d{4}-\d{2}-\d{2}|\d{8}|\d{3,4})$`)

// Drifted reports whether a provider reporting model reported for a
// request of model requested ran another model than asked: any other name
// than the requested one or a dated snapshot of it. A moving alias
// ("-latest", Anthropic's "-0") may resolve to any snapshot of its base
// name. Unknown names (either empty) are not drift.
func Drifted(requested, reported string) bool {
	if requested == "" || reported == "" || reported == requested {
		return false
	}
	for _, base := range []string{requested, strings.TrimSuffix(requested, "-latest"), strings.TrimSuffix(requested, "-0")} {
		if rest, ok := strings.CutPrefix(reported, base); ok && snapshotSuffix.MatchString(rest) {
			return false
		}
	}
	return true
}

func (c *Client) checkDrift(j *job, reported string) {
	reported = strings.TrimPrefix(reported, "models/")
	if !Drifted(j.model, reported) {
		return
	}
	k := [3]string{j.req.Provider, j.model, reported}
	c.mu.Lock()
	seen := c.drift[k]
	c.drift[k] = true
	if !seen {
		c.drifts = append(c.drifts, Drift{Provider: k[0], Requested: k[1], Reported: k[2]})
	}
	c.mu.Unlock()
	if !seen {
		c.prog.warnf("model drift: %s answered %q for requested model %q", j.req.Provider, reported, j.model)
	}
}

func (c *Client) fail(j *job, e *CallError, attempts int) {
	e.Msg = c.redact(e.Msg)
	f := Failure{
		Label: j.req.Label, Key: j.key.String(), Provider: j.req.Provider, Model: j.model,
		Cause: e.Cause, Status: e.Status, Attempts: attempts, Msg: e.Msg,
	}
	c.mu.Lock()
	c.failures = append(c.failures, f)
	c.counts.Failed++
	c.mu.Unlock()
	c.prog.logf("failed %s %s (%s): %s", j.req.Provider, j.key.Str(), LabelText(j.req.Label), e.Error())
	j.reply = results.Reply{Key: j.key.String(), Err: e}
}

// An attemptResult is a successful attempt, or the Retry-After of a
// failed one.
type attemptResult struct {
	body       []byte
	out        *output
	latencyMS  int64
	retryAfter time.Duration
}

// MaxResponse caps a response body; a longer one is a failure.
const MaxResponse = 64 << 20

// attempt makes one call and checks its response.
func (c *Client) attempt(ctx context.Context, j *job, apiKey string, n int) (*attemptResult, *CallError) {
	res := &attemptResult{}
	var body []byte
	if j.pc.Kind == KindSim {
		if c.cfg.Sim == nil {
			return res, &CallError{Cause: CauseSim, Msg: "no simulator configured"}
		}
		s, err := c.cfg.Sim.respond(&j.req, j.key, n)
		if err != nil {
			return res, &CallError{Cause: CauseSim, Msg: err.Error()}
		}
		body, res.latencyMS = s.body, s.latencyMS
	} else {
		var ce *CallError
		body, ce = c.post(ctx, j, apiKey, res)
		if ce != nil {
			return res, ce
		}
	}
	return res, c.check(j, body, res)
}

// post sends j over HTTP and returns a 200 body.
func (c *Client) post(ctx context.Context, j *job, apiKey string, res *attemptResult) ([]byte, *CallError) {
	timeout := cmpOr64(j.pc.Timeout, DefaultTimeout)
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	url := strings.TrimRight(j.pc.BaseURL, "/") + "/" + j.req.Endpoint
	hr, err := http.NewRequestWithContext(actx, http.MethodPost, url, bytes.NewReader(j.req.Body))
	if err != nil {
		return nil, &CallError{Cause: CauseRequest, Msg: err.Error()}
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	setAuth(hr.Header, j.pc.Kind, apiKey)
	// Latency is a measurement of the real call: it goes into the stored
	// meta, never into an analysis output.
	start := time.Now()
	resp, err := c.http.Do(hr)
	if err != nil {
		return nil, c.netError(ctx, actx, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponse+1))
	res.latencyMS = time.Since(start).Milliseconds()
	// An HTTP-date Retry-After is relative to the wall clock.
	res.retryAfter = parseRetryAfter(resp.Header, time.Now())
	if err != nil {
		if ctx.Err() == nil && actx.Err() != nil {
			return nil, &CallError{Cause: CauseTimeout, Status: resp.StatusCode, Msg: "reading body: " + err.Error()}
		}
		if ctx.Err() != nil {
			return nil, &CallError{Cause: CauseCanceled, Msg: ctx.Err().Error()}
		}
		return nil, &CallError{Cause: CauseTruncated, Status: resp.StatusCode, Msg: err.Error()}
	}
	if len(body) > MaxResponse {
		return nil, &CallError{Cause: CauseHTTP, Status: resp.StatusCode, Msg: fmt.Sprintf("response larger than %d bytes", MaxResponse)}
	}
	switch st := resp.StatusCode; {
	case st == http.StatusOK:
		return body, nil
	case st == http.StatusTooManyRequests:
		return nil, &CallError{Cause: CauseRateLimited, Status: st, Msg: snippet(body)}
	case st == http.StatusRequestTimeout:
		return nil, &CallError{Cause: CauseTimeout, Status: st, Msg: snippet(body)}
	case st >= 500:
		return nil, &CallError{Cause: CauseServer, Status: st, Msg: snippet(body)}
	default:
		return nil, &CallError{Cause: CauseHTTP, Status: st, Msg: snippet(body)}
	}
}

func cmpOr64(a, b time.Duration) time.Duration {
	if a != 0 {
		return a
	}
	return b
}

// netError classifies a transport error.
func (c *Client) netError(ctx, actx context.Context, err error) *CallError {
	var ne net.Error
	switch {
	case ctx.Err() != nil:
		return &CallError{Cause: CauseCanceled, Msg: ctx.Err().Error()}
	case actx.Err() != nil, errors.As(err, &ne) && ne.Timeout():
		return &CallError{Cause: CauseTimeout, Msg: err.Error()}
	}
	return &CallError{Cause: CauseConnection, Msg: err.Error()}
}

// snippet returns the start of an error body for messages.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// check parses a 200 body and rejects what must not be stored.
func (c *Client) check(j *job, body []byte, res *attemptResult) *CallError {
	o, ce := checkBody(j.pc.Kind, body)
	if ce != nil {
		return ce
	}
	res.body, res.out = bytes.TrimSpace(body), o
	return nil
}

// checkBody parses a 200 body of the given kind and rejects what must not
// be stored: an error object, invalid JSON, another shape, a refusal or
// an empty completion.
func checkBody(kind Kind, body []byte) (*output, *CallError) {
	o, err := parseOutput(kind, bytes.TrimSpace(body))
	if err != nil {
		return nil, &CallError{Cause: CauseMalformed, Status: http.StatusOK, Msg: err.Error() + ": " + snippet(body)}
	}
	if o.APIError != "" {
		return nil, &CallError{Cause: CauseAPIError, Status: http.StatusOK, Msg: o.APIError}
	}
	if o.Refusal {
		return nil, &CallError{Cause: CauseRefusal, Msg: o.RefusalReason}
	}
	if strings.TrimSpace(o.Text) == "" {
		return nil, &CallError{Cause: CauseEmpty, Msg: "the response has no output text"}
	}
	return o, nil
}
