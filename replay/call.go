package replay

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/results"
)

// record sends the pending jobs, bounded per provider, and waits for all.
// Before paid calls (simulated ones cost nothing and are not held back)
// it checks that the store takes writes (Recordable), and it sends
// nothing more once a write has failed: a call whose answer cannot be
// stored is paid for nothing. Simulated jobs are recorded in key order
// and stored together (recordSims).
func (c *Client) record(ctx context.Context, jobs []*job) {
	if len(jobs) == 0 {
		return
	}
	var err error
	if slices.ContainsFunc(jobs, func(j *job) bool { return j.pc.Kind != KindSim }) {
		err = c.Recordable()
	}
	if err != nil {
		for _, j := range jobs {
			c.fail(j, &CallError{Cause: CauseStore, Msg: "not sent: " + err.Error()}, 0)
		}
		return
	}
	c.prog.start(len(jobs))
	var sims []*job
	var wg sync.WaitGroup
	for _, j := range jobs {
		if j.pc.Kind == KindSim {
			sims = append(sims, j)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.send(ctx, j)
		}()
	}
	c.recordSims(ctx, sims)
	wg.Wait()
	c.prog.finish()
}

// send records one job when its provider has a free slot: its request is
// built then, and dropped once sent, so that a recording holds the
// requests in flight, not those of the whole batch.
func (c *Client) send(ctx context.Context, j *job) {
	sem := c.semaphore(j.req.Provider, j.pc)
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		c.fail(j, &CallError{Cause: CauseCanceled, Msg: ctx.Err().Error()}, 0)
		c.prog.canceled()
		return
	}
	defer func() { <-sem }()
	if err := c.StoreErr(); err != nil {
		c.fail(j, &CallError{Cause: CauseStore, Msg: "not sent: an earlier write failed: " + err.Error()}, 0)
		c.prog.done(false, 0)
		return
	}
	if err := j.materialize(); err != nil {
		j.reply.Err = c.badRequest(j.req, err)
		c.prog.done(false, 0)
		return
	}
	c.recordOne(ctx, j)
	j.req.Body, j.raw, j.prompt = nil, nil, nil // a simulated exchange keeps its own reference until stored
}

func (c *Client) semaphore(name string, pc ProviderConfig) chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.sems[name]
	if !ok {
		n := cmp.Or(pc.Concurrency, c.cfg.Concurrency, DefaultConcurrency)
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
		l = &limiter{rpm: pc.RPM, tpm: pc.TPM, now: time.Now, sleep: Sleep}
		c.limiters[name] = l
	}
	return l
}

// backoff returns the retry delays of provider name, from its
// configured first delay.
func (c *Client) backoff(name string, pc ProviderConfig) *Backoff {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.backoffs[name]
	if !ok {
		b = NewBackoff(pc.Backoff, c.cfg.Seed)
		c.backoffs[name] = b
	}
	return b
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
	maxAttempts := cmp.Or(j.pc.MaxAttempts, DefaultAttempts)
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
		d := c.backoff(j.req.Provider, j.pc).Delay(attempt, res.retryAfter)
		c.prog.logf("retry %s (%s %s, key %s) in %v after %s (attempt %d of %d)", LabelText(j.req.Label), j.req.Provider, j.requested(), j.key.Str(),
			d.Round(time.Millisecond), lastErr.Cause, attempt, maxAttempts)
		if err := c.sleep(ctx, d); err != nil {
			lastErr = &CallError{Cause: CauseCanceled, Msg: err.Error()}
			break
		}
	}
	if lastErr != nil {
		c.fail(j, lastErr, attempt)
		if lastErr.Cause == CauseCanceled {
			c.prog.canceled() // not done: the bar stays where it was
		} else {
			c.prog.done(false, 0)
		}
		return
	}
	cost := c.cost(j.requested(), res.out)
	if j.pc.Kind == KindSim {
		cost = 0
	}
	source := results.SourceAPI
	if j.pc.Kind == KindSim {
		source = results.SourceSim
	}
	meta := cache.Meta{
		Provider: j.req.Provider, Model: j.requested(), ReportedModel: res.out.Model,
		InputTokens: res.out.InputTokens, OutputTokens: res.out.OutputTokens, CostUSD: cost,
		LatencyMS: res.latencyMS, Attempts: attempt, Source: source,
	}
	if c.cfg.Clock != nil {
		meta.RecordedAt = c.cfg.Clock().UTC().Format(time.RFC3339)
	}
	if err := c.put(j, res.body, meta); err != nil {
		var ce *CallError
		if errors.As(err, &ce) && ce.Cause == CauseStore {
			c.mu.Lock()
			c.counts.Lost++
			c.lostUSD += cost
			c.mu.Unlock()
		}
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
	if !Drifted(j.requested(), reported) {
		return
	}
	k := [3]string{j.req.Provider, j.requested(), reported}
	c.mu.Lock()
	seen := c.drift[k]
	c.drift[k] = true
	if !seen {
		c.drifts = append(c.drifts, Drift{Provider: k[0], Requested: k[1], Reported: k[2]})
	}
	c.mu.Unlock()
	if !seen {
		c.prog.warnf("model drift: %s answered %q for requested model %q", j.req.Provider, reported, j.requested())
	}
}

func (c *Client) fail(j *job, e *CallError, attempts int) {
	e.Msg = c.redact(e.Msg)
	f := Failure{
		Label: j.req.Label, Key: j.key.String(), Provider: j.req.Provider, Model: j.requested(),
		Cause: e.Cause, Status: e.Status, Attempts: attempts, Msg: e.Msg,
	}
	c.mu.Lock()
	c.failures = append(c.failures, f)
	c.counts.Failed++
	c.mu.Unlock()
	if e.Cause != CauseCanceled { // an interrupted run's calls stop quietly
		c.prog.logf("failed %s %s (%s): %s", j.req.Provider, j.key.Str(), LabelText(j.req.Label), e.Error())
	}
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
	timeout := cmp.Or(j.pc.Timeout, DefaultTimeout)
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if j.pc.BaseURL == "" {
		return nil, &CallError{Cause: CauseRequest, Msg: "provider " + j.req.Provider + " has no base URL"}
	}
	target, err := endpointURL(j.pc.BaseURL, j.req.Endpoint)
	if err != nil {
		return nil, &CallError{Cause: CauseRequest, Msg: err.Error()}
	}
	hr, err := http.NewRequestWithContext(actx, http.MethodPost, target, bytes.NewReader(j.req.Body))
	if err != nil {
		return nil, &CallError{Cause: CauseRequest, Msg: err.Error()}
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	setAuth(hr.Header, j.pc.Kind, apiKey)
	// Latency is a measurement of the real call: it goes into the stored
	// meta, never into an analysis output.
	start := c.now()
	resp, err := c.http.Do(hr)
	if err != nil {
		return nil, c.netError(ctx, actx, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponse+1))
	now := c.now()
	res.latencyMS = now.Sub(start).Milliseconds()
	// An HTTP-date Retry-After is relative to the wall clock.
	res.retryAfter = parseRetryAfter(resp.Header, now)
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
		return nil, &CallError{Cause: CauseRateLimited, Status: st, Msg: Snippet(body)}
	case st == http.StatusRequestTimeout:
		return nil, &CallError{Cause: CauseTimeout, Status: st, Msg: Snippet(body)}
	case st >= 500:
		return nil, &CallError{Cause: CauseServer, Status: st, Msg: Snippet(body)}
	default:
		return nil, &CallError{Cause: CauseHTTP, Status: st, Msg: Snippet(body)}
	}
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

// Snippet is the start of a response body for an error message: trimmed,
// at most 300 bytes.
func Snippet(b []byte) string {
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
func checkBody(kind Kind, body []byte) (*output, *CallError) { return checkOutput(kind, body, false) }

// checkOutput is checkBody; with calls set, an answer that asks for tool
// calls or is a background response still under way is not empty without
// text (the proxy's clients ask for those, the client's benchmarks never).
func checkOutput(kind Kind, body []byte, calls bool) (*output, *CallError) {
	if !utf8.Valid(body) {
		// The store keeps UTF-8 JSON only (docs/cache.md), so that a dump
		// loads back to the same exchanges.
		return nil, &CallError{Cause: CauseMalformed, Status: http.StatusOK, Msg: "response is not valid UTF-8: " + Snippet(body)}
	}
	o, err := parseOutput(kind, bytes.TrimSpace(body))
	if err != nil {
		return nil, &CallError{Cause: CauseMalformed, Status: http.StatusOK, Msg: err.Error() + ": " + Snippet(body)}
	}
	if o.APIError != "" {
		return nil, &CallError{Cause: CauseAPIError, Status: http.StatusOK, Msg: o.APIError}
	}
	if o.Refusal {
		return nil, &CallError{Cause: CauseRefusal, Msg: o.RefusalReason}
	}
	if strings.TrimSpace(o.Text) == "" && !(calls && (o.Calls || o.Unfinished)) {
		return nil, &CallError{Cause: CauseEmpty, Msg: "the response has no output text"}
	}
	return o, nil
}

// Acquire waits for a free request slot of provider and for its request
// and token rate limits, as recording does, before a request with the
// given body is sent; release frees the slot. Code that sends requests
// itself (the proxy) shares the client's bounds through it.
func (c *Client) Acquire(ctx context.Context, provider string, body []byte) (release func(), err error) {
	pc := c.providers[provider]
	sem := c.semaphore(provider, pc)
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	in, out := estimateRequest(body)
	if err := c.limiter(provider, pc).wait(ctx, in+out); err != nil {
		<-sem
		return nil, err
	}
	return func() { <-sem }, nil
}

// endpointURL appends endpoint (a plain relative path, see checkEndpoint)
// to the path of base, keeping base's query: "http://h/v1?key=K" and
// "chat/completions" give "http://h/v1/chat/completions?key=K".
func endpointURL(base, endpoint string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("base URL: %w", err)
	}
	if u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("base URL %q: want scheme://host[/path]", base)
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/" + endpoint
	u.RawPath = ""
	u.Fragment, u.RawFragment = "", ""
	return u.String(), nil
}
