package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/replay/proxy"
)

const proxyDoc = `
Serve the OpenAI, Anthropic and Gemini APIs on one listener and answer
every request from the exchange cache in --dir, so that an unmodified
harness or agent is recorded and replayed byte for byte, streams included.
Point each SDK at it by base URL (docs/proxy.md):

  OPENAI_BASE_URL=http://127.0.0.1:8787/v1
  ANTHROPIC_BASE_URL=http://127.0.0.1:8787/anthropic
  GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:8787/gemini (or the Gen AI SDKs'
          httpOptions.baseUrl / http_options.base_url)

Paths: /v1/chat/completions, /v1/responses, /v1/embeddings, GET /v1/models,
/v1/messages (Anthropic), /v1beta/models/MODEL:generateContent and
:streamGenerateContent?alt=sse (Gemini), each optionally under a provider
prefix (/anthropic, /gemini, /openai, /vllm, or any --upstream NAME).

offline (the default) never dials out; a miss is HTTP 404 with error type
finrepro_cache_miss in the provider's shape, naming the key and the
"finrepro cache explain" command for it. record forwards misses to the
upstream with the client's credentials (never stored) and stores the
successful answers; refresh records every request again under the next
free sample. The n-th identical request of a run is sample n-1; a run is
the proxy process (--run) or the X-Finrepro-Run header of a request.`

func runProxy(ctx context.Context, env *Env, args []string) error {
	fs := env.newFlags("proxy", "proxy --dir D [--listen ADDR] [--mode offline|record|refresh] [--upstream NAME=URL ...] [flags]", proxyDoc)
	dir := fs.String("dir", "", "cache folder")
	listen := fs.String("listen", "127.0.0.1:8787", "address to listen on")
	mode := fs.String("mode", "offline", "offline, record or refresh")
	ups := fs.StringArray("upstream", nil, "upstream `NAME=URL` of provider NAME (repeatable), e.g. openai=https://api.openai.com/v1 or vllm=http://localhost:8000/v1; built-in providers default to their public base URL")
	run := fs.String("run", "default", "run `ID` of requests without an X-Finrepro-Run header")
	pace := fs.String("pace", "collapsed", "stream replay timing: collapsed or recorded")
	logFile := fs.String("log", "", "append one JSON line per request to `FILE`")
	misses := fs.String("misses", filepath.Join(os.TempDir(), "finrepro-proxy-misses"), "folder receiving each missing request object as KEY.json, for cache explain")
	conc := fs.Int("concurrency", 16, "forwarded requests in flight per provider")
	pricesFile := fs.String("prices", "", "price table JSON for the live cost, as the built-in prices.json")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected arguments %q", fs.Args())
	}
	if *dir == "" {
		return usageErr("--dir is required")
	}
	m, err := replay.ParseMode(*mode)
	if err != nil {
		return usageErr("%v", err)
	}
	pcs, err := parseUpstreams(*ups)
	if err != nil {
		return err
	}
	prices, err := loadPrices(*pricesFile)
	if err != nil {
		return fmt.Errorf("prices: %w", err)
	}
	store, err := cache.Open(*dir, cache.Options{})
	if err != nil {
		return err
	}
	defer store.Close()
	cfg := proxy.Config{
		Mode: m, Run: *run, Pace: proxy.Pace(*pace), MissDir: *misses, Progress: env.Stderr, Clock: env.clock(),
		Client: replay.New(store, replay.Config{Mode: m, Providers: pcs, Prices: prices, Concurrency: *conc, Getenv: env.Getenv}),
	}
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		cfg.Log = f
	}
	srv, err := proxy.New(cfg)
	if err != nil {
		return usageErr("%v", err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: time.Minute}
	fmt.Fprintf(env.Stderr, "finrepro proxy: %s mode, cache %s, run %q, listening on http://%s\n", m, *dir, *run, ln.Addr())
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	fmt.Fprintf(env.Stderr, "\nfinrepro proxy: %s\n", srv.Counts())
	return nil
}

// parseUpstreams reads --upstream NAME=URL values into provider
// overrides: a built-in provider keeps its kind, another name is an
// OpenAI-compatible server.
func parseUpstreams(vs []string) (map[string]replay.ProviderConfig, error) {
	out := map[string]replay.ProviderConfig{}
	for _, v := range vs {
		name, u, ok := strings.Cut(v, "=")
		if !ok || name == "" || strings.ContainsAny(name, "/ ") || !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return nil, usageErr("--upstream %q: want NAME=URL with an http or https URL", v)
		}
		pc, known := replay.DefaultProviders()[name]
		if !known {
			pc = replay.ProviderConfig{Kind: replay.KindChat}
		}
		pc.BaseURL = u
		out[name] = pc
	}
	return out, nil
}
