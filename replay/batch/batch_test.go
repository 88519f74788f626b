package batch

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/reqkey"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/replay/batch/batchtest"
	"github.com/finrepro/finrepro/results"
)

// testKey is a synthetic API key shaped like a real one, so that the
// secret scans would also find it by shape.
const testKey = "sk-test-batch-0123456789abcdefghijklmnop"

type env struct {
	runner *Runner
	sleeps int // retry waits asked for
	srv    *batchtest.Server
	dir    string
	store  *cache.Store
	client *replay.Client
}

func newEnv(t *testing.T, opt batchtest.Options) *env {
	t.Helper()
	opt.Key = testKey
	srv := batchtest.New(opt)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	return &env{srv: srv, dir: dir}
}

// open opens the store and a runner, as each command does.
func (e *env) open(t *testing.T) *Runner {
	t.Helper()
	if e.runner != nil {
		e.runner.Close()
	}
	if e.store != nil {
		e.store.Close()
	}
	st, err := cache.Open(e.dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.store = st
	t.Cleanup(func() { st.Close() })
	getenv := func(k string) string {
		if k == "OPENAI_API_KEY" || k == "ANTHROPIC_API_KEY" {
			return testKey
		}
		return ""
	}
	e.client = replay.New(st, replay.Config{Getenv: getenv})
	sleep := func(context.Context, time.Duration) error { e.sleeps++; return nil }
	r, err := Open(Config{Dir: e.dir, Store: st, Client: e.client, Getenv: getenv, BaseURL: e.srv.BaseURL(), Sleep: sleep})
	if err != nil {
		t.Fatal(err)
	}
	e.runner = r
	t.Cleanup(r.Close)
	return r
}

// requests returns n synthetic requests to provider: "question i",
// over two models.
func requests(provider string, n int) []replay.Request {
	var out []replay.Request
	for i := range n {
		model := []string{"gpt-4o-mini", "gpt-4o"}[i%2]
		body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"question %d"}]}`, model, i)
		if provider == "anthropic" {
			model = []string{"claude-haiku-4-5", "claude-sonnet-4-5"}[i%2]
			body = fmt.Sprintf(`{"max_tokens":64,"messages":[{"content":"question %d","role":"user"}],"model":%q}`, i, model)
		}
		out = append(out, replay.Request{Provider: provider, Body: []byte(body),
			Label: results.Label{Benchmark: "synthetic", Task: fmt.Sprint(i), Role: replay.RoleRequest, Name: provider}})
	}
	return out
}

// TestRoundTrip submits 300 requests per provider in batches of 100 to
// the stand-in, where one request in ten errors and one in ten answers
// an empty completion, batch 2 expires half done, batch 3's first
// download is cut in the middle, one GET or upload in seven answers 429
// or 503, and later batches end first; it polls
// and collects until nothing is pending and checks the store against
// what the server answered.
func TestRoundTrip(t *testing.T) {
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			e := newEnv(t, batchtest.Options{ErrorEvery: 10, Expire: 2, Cut: 3, Flaky: 7})
			reqs := requests(provider, 300)
			ctx := context.Background()
			rep, err := e.open(t).Submit(ctx, reqs, SubmitOptions{Provider: provider, MaxRequests: 100})
			if err != nil {
				t.Fatal(err)
			}
			// OpenAI needs one model per file: 150 + 150 requests make
			// 2 + 2 batches; a Message Batch mixes them: 3 batches.
			wantBatches := map[string]int{"openai": 4, "anthropic": 3}[provider]
			if len(rep.Batches) != wantBatches || rep.Submitted() != 300 || e.srv.Requests != 300 {
				t.Fatalf("submit: %d batches, %d requests (server %d), want %d, 300", len(rep.Batches), rep.Submitted(), e.srv.Requests, wantBatches)
			}
			// A rerun before collecting submits nothing: every request is
			// covered by an open batch.
			rep, err = e.open(t).Submit(ctx, reqs, SubmitOptions{Provider: provider, MaxRequests: 100})
			if err != nil || rep.Submitted() != 0 || rep.Covered != 300 {
				t.Fatalf("rerun: %v, submitted %d covered %d", err, rep.Submitted(), rep.Covered)
			}
			var cr *CollectReport
			for round := 0; ; round++ {
				if round > 10 {
					t.Fatal("batches never ended")
				}
				cr, err = e.open(t).Collect(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(cr.Pending) == 0 && len(cr.Errors) == 0 {
					break
				}
			}
			answered := e.srv.Answered()
			if len(answered) < 150 || len(answered) > 270 {
				t.Fatalf("the server answered %d of 300: the scenario is off", len(answered))
			}
			if cr.Submitted != 300 || cr.Stored != len(answered) || len(cr.Failed) != 300-len(answered) || cr.Complete() {
				t.Errorf("collect: submitted %d stored %d failed %d complete %v; server answered %d",
					cr.Submitted, cr.Stored, len(cr.Failed), cr.Complete(), len(answered))
			}
			t.Logf("stored %d, failed %d", cr.Stored, len(cr.Failed))
			causes := map[string]int{}
			for _, f := range cr.Failed {
				causes[f.Cause]++
			}
			for _, c := range []replay.Cause{replay.CauseHTTP, replay.CauseEmpty, CauseExpired} {
				if provider == "anthropic" && c == replay.CauseHTTP {
					c = replay.CauseAPIError
				}
				if causes[string(c)] == 0 {
					t.Errorf("no failure with cause %s: %v", c, causes)
				}
			}
			t.Logf("causes %v", causes)
			if e.sleeps == 0 {
				t.Error("no retry after the 429s and 503s")
			}
			if d := e.srv.Downloads(3); d != 2 {
				t.Errorf("batch 3 was downloaded %d times, want 2 (one cut, one whole)", d)
			}
			checkStore(t, e, reqs, answered)

			// The failures are submitted again, and nothing else.
			rep, err = e.open(t).Submit(ctx, reqs, SubmitOptions{Provider: provider})
			if err != nil || rep.Submitted() != len(cr.Failed) || rep.Stored != len(answered) {
				t.Fatalf("resubmit: %v, submitted %d stored %d, want %d, %d", err, rep.Submitted(), rep.Stored, len(cr.Failed), len(answered))
			}
			// Collecting the second round stores the requests that
			// expired; the ones the server always fails are listed once.
			for round := 0; ; round++ {
				if round > 10 {
					t.Fatal("second round never ended")
				}
				if cr, err = e.open(t).Collect(ctx); err != nil {
					t.Fatal(err)
				}
				if len(cr.Pending) == 0 && len(cr.Errors) == 0 {
					break
				}
			}
			answered = e.srv.Answered()
			keys := map[string]bool{}
			for _, f := range cr.Failed {
				if keys[f.Key] || f.Cause == string(CauseExpired) {
					t.Errorf("second round: failure %+v listed twice or expired", f)
				}
				keys[f.Key] = true
			}
			if cr.Submitted != 300 || cr.Stored != len(answered) || cr.Stored+len(cr.Failed) != 300 {
				t.Errorf("second round: submitted %d stored %d failed %d; the server answered %d", cr.Submitted, cr.Stored, len(cr.Failed), len(answered))
			}
			noSecret(t, e.dir)
			// The error lines echo the key: the state keeps them redacted.
			if b, err := os.ReadFile(statePath(e.dir)); err != nil || !bytes.Contains(b, []byte(replay.Redacted)) {
				t.Errorf("state: no redacted error message (%v)", err)
			}
		})
	}
}

// checkStore replays every request offline and checks that exactly the
// answered ones are stored, once, with the server's text, source batch,
// a batch id and the reported model.
func checkStore(t *testing.T, e *env, reqs []replay.Request, answered []string) {
	t.Helper()
	e.open(t)
	replies := e.client.AnswerRequests(context.Background(), reqs)
	got := 0
	for i, r := range replies {
		q := fmt.Sprintf("question %d", i)
		_, want := slices.BinarySearch(answered, q)
		if (r.Err == nil) != want {
			t.Fatalf("request %d: replay error %v, answered by the server %v", i, r.Err, want)
		}
		if r.Err != nil {
			continue
		}
		got++
		if r.Text != "reply to: "+q || r.Source != results.SourceBatch || !strings.HasSuffix(r.Model, "-2025-01-01") {
			t.Fatalf("request %d: reply %+v", i, r)
		}
		k, _ := reqkey.Parse(r.Key)
		x, err := e.store.Get(k)
		if err != nil || x.Meta.BatchID == "" || x.Meta.Source != cache.SourceBatch {
			t.Fatalf("request %d: meta %+v, %v", i, x.Meta, err)
		}
	}
	st, err := e.store.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if got != len(answered) || st.Exchanges != len(answered) || st.Conflicts != 0 {
		t.Errorf("%d replayed, %d stored exchanges (%d conflicts), want %d", got, st.Exchanges, st.Conflicts, len(answered))
	}
}

// noSecret fails when the API key appears in any byte under dir or in
// any stored exchange, decompressed.
func noSecret(t *testing.T, dir string) {
	t.Helper()
	st, err := cache.Open(dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n := 0
	err = st.Each(func(k cache.Key, x *cache.Exchange) error {
		n++
		if bytes.Contains(x.Request, []byte(testKey)) || bytes.Contains(x.Response, []byte(testKey)) {
			t.Errorf("exchange %s holds the API key", k.Str())
		}
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("store: %d exchanges, %v", n, err)
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(testKey)) || bytes.Contains(b, []byte("sk-test")) {
			t.Errorf("%s holds the API key", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
