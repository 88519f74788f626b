package replay

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
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
	// Unknown, when not nil, configures every provider name that is
	// neither built in nor in Providers, so that a call naming such a
	// provider is keyed (as recording it under that kind would key it),
	// replayed when stored and listed as a miss when not. Without it such
	// a call is a bad request. Recording through it needs a BaseURL.
	Unknown *ProviderConfig
	// Sim answers provider kind "sim"; without it sim misses fail.
	Sim *Sim
	// Concurrency bounds requests in flight per provider when the
	// provider sets no bound; 0 means DefaultConcurrency.
	Concurrency int
	// Clock gives the recorded_at time of new exchanges (nil leaves
	// recorded_at empty) and measures calls: latency and the date a
	// Retry-After counts from (the wall clock when nil).
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
	backoffs  map[string]*Backoff // per provider, from ProviderConfig.Backoff
	now       func() time.Time    // Config.Clock, or the wall clock
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
	corrupt  error // the first corrupt entry met offline
	storeErr error // the first failed write; nothing more is sent after it
	lostUSD  float64
	probed   bool // the store's writability was checked
}

// Counts count the distinct requests a client has seen, by outcome.
type Counts struct {
	Hits     int // answered from the cache
	Recorded int // sent and stored
	Missed   int // not stored, offline
	Failed   int // could not be recorded
	// Lost counts calls answered (and paid for) whose answer the store
	// could not take; they are among Failed.
	Lost int
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
		backoffs:  map[string]*Backoff{},
		now:       cfg.Clock,
		sems:      map[string]chan struct{}{},
		limiters:  map[string]*limiter{},
		misses:    map[cache.Key]Miss{},
		drift:     map[[3]string]bool{},
	}
	if c.cfg.Mode == "" {
		c.cfg.Mode = Offline
	}
	if c.now == nil {
		c.now = time.Now
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
		c.sleep = Sleep
	}
	c.prog = newProgress(cfg.Progress, c.redact)
	// Every configured key value is a secret from the start, so that
	// imports and error messages are checked too.
	c.secrets = KeyValues(c.getenv, cfg.Providers)
	return c
}

// Provider returns the configuration of the named provider: the defaults
// overridden by Config.Providers.
func (c *Client) Provider(name string) (ProviderConfig, bool) {
	pc, ok := c.providers[name]
	return pc, ok
}

// Store returns the cache the client answers from.
func (c *Client) Store() *cache.Store { return c.store }

// noRedirect refuses to follow redirects: a provider API does not
// redirect a POST, and a client following one would send the key headers
// (x-api-key, x-goog-api-key) to another host. A 3xx is an http_error.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

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
		return cmp.Or(strings.Compare(a.Label.String(), b.Label.String()), strings.Compare(a.Key, b.Key))
	})
	return out
}

// StoreErr returns the first write the store refused (or its failed
// writability check) while recording, nil when there was none. After it
// the client sends no more requests.
func (c *Client) StoreErr() error { return locked(c, &c.storeErr) }

func (c *Client) setStoreErr(err error) {
	c.mu.Lock()
	if c.storeErr == nil {
		c.storeErr = err
	}
	c.mu.Unlock()
}

// LostUSD is the estimated cost of the calls counted by Counts().Lost.
func (c *Client) LostUSD() float64 { return locked(c, &c.lostUSD) }

// Corrupt returns the first cache entry found corrupt offline (an error
// wrapping cache.ErrCorrupt), nil when there was none.
func (c *Client) Corrupt() error { return locked(c, &c.corrupt) }

// Failures returns the requests that could not be recorded, sorted by
// cause, label and key.
func (c *Client) Failures() []Failure {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.failures)
	slices.SortFunc(out, func(a, b Failure) int {
		return cmp.Or(strings.Compare(string(a.Cause), string(b.Cause)),
			strings.Compare(a.Label.String(), b.Label.String()), strings.Compare(a.Key, b.Key))
	})
	return out
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
		return cmp.Or(b.Count-a.Count, strings.Compare(string(a.Cause), string(b.Cause)))
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
		return cmp.Or(strings.Compare(a.Provider, b.Provider), strings.Compare(a.Requested, b.Requested),
			strings.Compare(a.Reported, b.Reported))
	})
	return out
}

// Counts returns the outcome counts so far.
func (c *Client) Counts() Counts { return locked(c, &c.counts) }

// AvoidedUSD returns the recorded cost of the exchanges answered from the
// cache: the API spend a replay avoided.
func (c *Client) AvoidedUSD() float64 { return locked(c, &c.avoided) }

// SpentUSD returns the cost of the exchanges recorded by this client.
func (c *Client) SpentUSD() float64 { return locked(c, &c.spent) }

// locked returns *v, a field of c, read under c's lock.
func locked[T any](c *Client, v *T) T {
	c.mu.Lock()
	defer c.mu.Unlock()
	return *v
}

// Answer answers calls in order (results.Answerer). Identical requests in
// one batch are answered once.
func (c *Client) Answer(ctx context.Context, calls []results.Call) []results.Reply {
	replies, _ := c.answer(ctx, len(calls), false, func(i int) (*job, Request, error) { return c.promptJob(&calls[i]) })
	return replies
}

// promptJob makes the job of a call. Its key is computed from the
// prompt's values; the request itself is built only when it is needed (a
// miss or a recording), which a replay from the cache never does. The
// request returned beside an error names the call's provider and label.
func (c *Client) promptJob(call *results.Call) (*job, Request, error) {
	p := &call.Prompt
	stub := Request{Provider: p.Provider, Label: call.Label}
	pc, ok := c.provider(p.Provider)
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

// provider returns the configuration of the provider called name: its
// own, or Config.Unknown for a name that has none.
func (c *Client) provider(name string) (ProviderConfig, bool) {
	if pc, ok := c.providers[name]; ok {
		return pc, true
	}
	if c.cfg.Unknown != nil && name != "" {
		return *c.cfg.Unknown, true
	}
	return ProviderConfig{}, false
}

// materialize builds the request of a job made from a prompt, once. Its
// key is not computed again: the key computed from the prompt's values is
// the key of this request (TestPromptKey and FuzzPromptKey hold the two
// together), and the store, which keys what it stores, checks it (put).
func (j *job) materialize() error {
	if j.prompt == nil || j.raw != nil {
		return nil
	}
	r, err := requestOf(*j.prompt, j.pc.Kind)
	if err != nil {
		return err
	}
	r.Label, r.model = j.req.Label, j.req.model
	raw, err := r.Encode()
	if err != nil {
		return fmt.Errorf("replay: encode request: %w", err)
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
	replies, _ := c.answerRequests(ctx, reqs, false)
	return replies
}

// AnswerRequestBodies is AnswerRequests that also returns, for each reply
// answered from the cache, the stored response as one line of compact
// JSON (nil for the other replies): what "finrepro replay" writes, read
// from the store once. A response read from a pack the store trusts
// (cache.Store.AppendTrustedResponse) is what this finrepro stored (a
// recording checks a response first, a load that it is JSON) and is
// passed on without being parsed again: its reply has no Text.
func (c *Client) AnswerRequestBodies(ctx context.Context, reqs []Request) ([]results.Reply, [][]byte) {
	return c.answerRequests(ctx, reqs, true)
}

func (c *Client) answerRequests(ctx context.Context, reqs []Request, bodies bool) ([]results.Reply, [][]byte) {
	return c.answer(ctx, len(reqs), bodies, func(i int) (*job, Request, error) {
		j, err := c.newJob(reqs[i])
		return j, reqs[i], err
	})
}
