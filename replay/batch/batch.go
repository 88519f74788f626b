package batch

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/replay"
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
	// Clock gives the recorded_at of stored exchanges (nil leaves it
	// empty) and the date a Retry-After counts from (the wall clock when
	// nil).
	Clock func() time.Time
	// Sleep waits between retries; nil waits for real. Tests inject it.
	Sleep func(context.Context, time.Duration) error
}

// A Runner submits, polls, collects and cancels the batches of a folder.
// It is not safe for concurrent use; a second runner on the same folder
// cannot open until the first is closed (or its process has ended).
type Runner struct {
	cfg     Config
	state   *State
	unlock  func()
	backoff *replay.Backoff
	now     func() time.Time   // cfg.Clock, or the wall clock: measurements only
	stored  map[cache.Key]bool // what Collect has learnt is stored, or not
}

// Open loads the state of cfg.Dir.
func Open(cfg Config) (*Runner, error) {
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.Sleep == nil {
		cfg.Sleep = replay.Sleep
	}
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	unlock, err := lockState(cfg.Dir)
	if err != nil {
		return nil, err
	}
	s, err := LoadState(cfg.Dir)
	if err != nil {
		unlock()
		return nil, err
	}
	now := cfg.Clock
	if now == nil {
		now = time.Now
	}
	return &Runner{cfg: cfg, state: s, unlock: unlock, backoff: replay.NewBackoff(0, 0), now: now}, nil
}

// Close releases the folder for other runners.
func (r *Runner) Close() {
	if r.unlock != nil {
		r.unlock()
		r.unlock = nil
	}
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
	return &endpoint{api: b.API, kind: pc.Kind, baseURL: b.BaseURL, key: key, http: r.cfg.HTTP, redact: r.cfg.Client.Redact, sleep: r.cfg.Sleep, backoff: r.backoff, now: r.now}, nil
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

func (r *Runner) logf(format string, args ...any) {
	if r.cfg.Progress != nil {
		fmt.Fprintf(r.cfg.Progress, format+"\n", args...)
	}
}
