package replay

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/reqkey"
	"github.com/finrepro/finrepro/results"
)

const fakeKey = "sk-test-FAKEKEY-0123456789abcdefXYZ"

func openStore(t *testing.T) (*cache.Store, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := cache.Open(dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

// sleeps records the waits a client asked for, without waiting.
type sleeps struct {
	mu sync.Mutex
	ds []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.ds = append(s.ds, d)
	s.mu.Unlock()
	return ctx.Err()
}

func getenv(name string) string {
	if name == "FAKE_KEY" {
		return fakeKey
	}
	return ""
}

func clientFor(t *testing.T, store *cache.Store, mode Mode, pcs map[string]ProviderConfig, log *bytes.Buffer) (*Client, *sleeps) {
	t.Helper()
	sl := &sleeps{}
	cfg := Config{
		Mode: mode, Providers: pcs, Getenv: getenv, Sleep: sl.sleep, Seed: 1,
		Clock: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
	}
	if log != nil {
		cfg.Progress = log
	}
	return New(store, cfg), sl
}

func call(provider, model, user string) results.Call {
	return results.Call{
		Prompt: results.Prompt{Provider: provider, Model: model, System: "You are a careful analyst.", User: user,
			Params: map[string]any{"temperature": 0, "max_tokens": 256}},
		Label: results.Label{Benchmark: "icbcbench", Task: user, Role: results.RoleJudge, Name: model},
	}
}

var kinds = []Kind{KindChat, KindResponses, KindAnthropic, KindGemini}

func TestRequestOf(t *testing.T) {
	p := results.Prompt{Provider: "x", Model: "m1", System: "sys", User: "hi <b>", Params: map[string]any{"temperature": 0.2, "max_tokens": 10}, Sample: 2}
	tests := []struct {
		kind Kind
		want string
	}{
		{KindChat, `{"provider":"x","endpoint":"chat/completions","body":{"max_tokens":10,"messages":[{"content":"sys","role":"system"},{"content":"hi <b>","role":"user"}],"model":"m1","temperature":0.2},"sample":2}`},
		{KindSim, `{"provider":"x","endpoint":"chat/completions","body":{"max_tokens":10,"messages":[{"content":"sys","role":"system"},{"content":"hi <b>","role":"user"}],"model":"m1","temperature":0.2},"sample":2}`},
		{KindResponses, `{"provider":"x","endpoint":"responses","body":{"input":"hi <b>","instructions":"sys","max_output_tokens":10,"model":"m1","temperature":0.2},"sample":2}`},
		{KindAnthropic, `{"provider":"x","endpoint":"messages","body":{"max_tokens":10,"messages":[{"content":"hi <b>","role":"user"}],"model":"m1","system":"sys","temperature":0.2},"sample":2}`},
		{KindGemini, `{"provider":"x","endpoint":"models/m1:generateContent","body":{"contents":[{"parts":[{"text":"hi <b>"}],"role":"user"}],"generationConfig":{"maxOutputTokens":10,"temperature":0.2},"systemInstruction":{"parts":[{"text":"sys"}]}},"sample":2}`},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			got, err := RequestOf(p, map[string]ProviderConfig{"x": {Kind: tt.kind}})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	t.Run("anthropic default max_tokens", func(t *testing.T) {
		got, err := RequestOf(results.Prompt{Provider: "anthropic", Model: "c", User: "u"})
		if err != nil || !strings.Contains(string(got), `"max_tokens":4096`) {
			t.Errorf("got %s, %v", got, err)
		}
	})
	bad := []results.Prompt{
		{Provider: "nope", Model: "m", User: "u"},
		{Provider: "openai", User: "u"},
		{Provider: "openai", Model: "m", User: "u", Sample: -1},
		{Provider: "openai", Model: "m", User: "u", Params: map[string]any{"messages": 1}},
		{Provider: "gemini", Model: "../m", User: "u"},
	}
	for _, p := range bad {
		if _, err := RequestOf(p); err == nil {
			t.Errorf("RequestOf(%+v): no error", p)
		}
	}
}

// TestOfflineNeverDials checks that offline mode reports misses with a
// cost estimate and opens no connection, even with providers configured.
func TestOfflineNeverDials(t *testing.T) {
	store, _ := openStore(t)
	f := newFake(t, KindChat, fakeKey)
	var conns int
	var mu sync.Mutex
	f.srv.Config.ConnState = func(net.Conn, http.ConnState) { mu.Lock(); conns++; mu.Unlock() }
	dialed := false
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, n, a string) (net.Conn, error) {
		dialed = true
		return nil, errors.New("dial in offline mode")
	}}}
	c := New(store, Config{Providers: map[string]ProviderConfig{"openai": f.config()}, HTTP: hc, Getenv: getenv})
	calls := []results.Call{call("openai", "gpt-4o", "q1"), call("openai", "gpt-4o", "q2"), call("openai", "gpt-4o", "q1"), call("sim", "s", "q")}
	replies := c.Answer(context.Background(), calls)
	for i, r := range replies {
		var me *MissError
		if !errors.As(r.Err, &me) {
			t.Errorf("reply %d: err %v, want a MissError", i, r.Err)
		}
	}
	if replies[0].Key != replies[2].Key {
		t.Errorf("identical calls got keys %s and %s", replies[0].Key, replies[2].Key)
	}
	ms := c.Misses()
	if len(ms) != 3 {
		t.Fatalf("misses = %d, want 3 (deduplicated)", len(ms))
	}
	for _, m := range ms {
		if m.Model == "gpt-4o" && (!m.Priced || m.CostUSD <= 0 || m.OutputTokens != 256 || m.InputTokens <= 0) {
			t.Errorf("miss %+v: want a priced estimate with 256 output tokens", m)
		}
		if m.Label.Benchmark != "icbcbench" {
			t.Errorf("miss label %+v", m.Label)
		}
	}
	if dialed || conns != 0 || f.count() != 0 {
		t.Errorf("offline mode connected: dialed=%v conns=%d calls=%d", dialed, conns, f.count())
	}
	if got := c.Counts(); got.Missed != 3 || got.Hits != 0 {
		t.Errorf("counts %+v", got)
	}
}

// TestRecordReplay records through each provider shape, then replays
// offline without any call.
func TestRecordReplay(t *testing.T) {
	for _, k := range kinds {
		t.Run(string(k), func(t *testing.T) {
			store, _ := openStore(t)
			f := newFake(t, k, fakeKey)
			pcs := map[string]ProviderConfig{"p": f.config()}
			rec, _ := clientFor(t, store, Record, pcs, nil)
			calls := []results.Call{call("p", "model-a", "first question"), call("p", "model-a", "second 问题")}
			got := rec.Answer(context.Background(), calls)
			for i, r := range got {
				if r.Err != nil {
					t.Fatalf("reply %d: %v", i, r.Err)
				}
				if want := "answer to: " + calls[i].Prompt.User; r.Text != want {
					t.Errorf("reply %d text %q, want %q", i, r.Text, want)
				}
				if r.Source != results.SourceAPI || r.Synthetic() || r.Model != "model-a" || r.RecordedAt != "2026-01-02T03:04:05Z" {
					t.Errorf("reply %d: %+v", i, r)
				}
			}
			// The body the provider received is the body in the request object.
			req, _ := RequestOf(calls[0].Prompt, pcs)
			var ro Request
			json.Unmarshal(req, &ro)
			if !bytes.Equal(f.bodies[0], ro.Body) && !bytes.Equal(f.bodies[1], ro.Body) {
				t.Errorf("sent bodies %s, want one to be %s", f.bodies, ro.Body)
			}
			key, _ := reqkey.Of(req)
			x, err := store.Get(key)
			if err != nil {
				t.Fatal(err)
			}
			if x.Meta.Source != "api" || x.Meta.InputTokens != 12 || x.Meta.OutputTokens != 7 || x.Meta.Attempts != 1 || x.Meta.Model != "model-a" {
				t.Errorf("meta %+v", x.Meta)
			}
			n := f.count()
			off, _ := clientFor(t, store, Offline, pcs, nil)
			again := off.Answer(context.Background(), calls)
			for i := range again {
				if again[i] != got[i] {
					t.Errorf("replay %d = %+v, want %+v", i, again[i], got[i])
				}
			}
			if off.AvoidedUSD() != 0 { // model-a has no price
				t.Errorf("avoided $%v", off.AvoidedUSD())
			}
			if f.count() != n || off.Counts().Hits != 2 {
				t.Errorf("replay called the provider or missed: calls %d -> %d, %+v", n, f.count(), off.Counts())
			}
		})
	}
}

func text(s string) *string { return &s }

// TestFaults drives every fault a provider throws through the recorder.
func TestFaults(t *testing.T) {
	ok := step{text: text("fine")}
	tests := []struct {
		name     string
		kind     Kind
		script   []step
		cause    Cause // "" for success
		attempts int
		minSleep time.Duration // the longest wait must be at least this
		timeout  time.Duration
	}{
		{"429 then ok honours Retry-After", KindChat, []step{{status: 429, header: map[string]string{"Retry-After": "7"}}, ok}, "", 2, 7 * time.Second, 0},
		{"500 then ok", KindChat, []step{{status: 500}, ok}, "", 2, 0, 0},
		{"anthropic 529 overloaded then ok", KindAnthropic, []step{{status: 529}, {status: 529}, ok}, "", 3, 0, 0},
		{"gemini 503 always", KindGemini, []step{{status: 503}, {status: 503}, {status: 503}}, CauseServer, 3, 0, 0},
		{"400 is permanent", KindChat, []step{{status: 400}, ok}, CauseHTTP, 1, 0, 0},
		{"404 is permanent", KindResponses, []step{{status: 404}, ok}, CauseHTTP, 1, 0, 0},
		{"malformed json then ok", KindChat, []step{{status: 200, body: `{"choices": [`}, ok}, "", 2, 0, 0},
		{"malformed always", KindAnthropic, []step{{status: 200, body: `<html>bad gateway</html>`}, {status: 200, body: `{"type":"message"`}, {status: 200, body: `[]`}}, CauseMalformed, 3, 0, 0},
		{"truncated body", KindChat, []step{{truncate: true, body: `{"id":"x","choices":[{"message":{"content":"hel`}, {truncate: true, body: `{`}, {truncate: true, body: `{`}}, CauseTruncated, 3, 0, 0},
		{"connection reset then ok", KindGemini, []step{{reset: true}, ok}, "", 2, 0, 0},
		{"timeout always", KindChat, []step{{sleep: 5 * time.Second}, {sleep: 5 * time.Second}, {sleep: 5 * time.Second}}, CauseTimeout, 3, 0, 200 * time.Millisecond},
		{"timeout then ok", KindResponses, []step{{sleep: 5 * time.Second}, ok}, "", 2, 0, 200 * time.Millisecond},
		{"empty completion", KindChat, []step{{text: text("  ")}, ok}, CauseEmpty, 1, 0, 0},
		{"refusal chat", KindChat, []step{{refusal: true}, ok}, CauseRefusal, 1, 0, 0},
		{"refusal responses", KindResponses, []step{{refusal: true}}, CauseRefusal, 1, 0, 0},
		{"refusal anthropic", KindAnthropic, []step{{refusal: true}}, CauseRefusal, 1, 0, 0},
		{"safety gemini", KindGemini, []step{{refusal: true}}, CauseRefusal, 1, 0, 0},
		{"gemini prompt blocked", KindGemini, []step{{status: 200, body: `{"promptFeedback":{"blockReason":"SAFETY"}}`}}, CauseRefusal, 1, 0, 0},
		{"error object in 200", KindChat, []step{{status: 200, body: `{"error":{"message":"upstream failed"}}`}}, CauseAPIError, 1, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, _ := openStore(t)
			f := newFake(t, tt.kind, fakeKey)
			f.script = tt.script
			pc := f.config()
			pc.MaxAttempts = 3
			if tt.timeout > 0 {
				pc.Timeout = tt.timeout
			}
			c, sl := clientFor(t, store, Record, map[string]ProviderConfig{"p": pc}, nil)
			r := c.Answer(context.Background(), []results.Call{call("p", "m", "q")})[0]
			key, _ := reqkey.Parse(r.Key)
			has, err := store.Has(key)
			if err != nil {
				t.Fatal(err)
			}
			if f.count() != tt.attempts {
				t.Errorf("provider saw %d attempts, want %d", f.count(), tt.attempts)
			}
			var longest time.Duration
			for _, d := range sl.ds {
				longest = max(longest, d)
			}
			if longest < tt.minSleep {
				t.Errorf("longest wait %v, want at least %v", longest, tt.minSleep)
			}
			if len(sl.ds) != tt.attempts-1 {
				t.Errorf("%d waits for %d attempts", len(sl.ds), tt.attempts)
			}
			if tt.cause == "" {
				if r.Err != nil || r.Text != "fine" || !has {
					t.Fatalf("reply %+v, stored %v", r, has)
				}
				x, _ := store.Get(key)
				if x.Meta.Attempts != tt.attempts {
					t.Errorf("meta attempts %d, want %d", x.Meta.Attempts, tt.attempts)
				}
				return
			}
			var ce *CallError
			if !errors.As(r.Err, &ce) || ce.Cause != tt.cause {
				t.Fatalf("err %v, want cause %s", r.Err, tt.cause)
			}
			if has {
				t.Errorf("a failure was stored")
			}
			fs := c.Failures()
			if len(fs) != 1 || fs[0].Cause != tt.cause || fs[0].Attempts != tt.attempts {
				t.Errorf("failures %+v", fs)
			}
			if cc := CountCauses(c.Failures()); len(cc) != 1 || cc[0] != (CauseCount{tt.cause, 1}) {
				t.Errorf("counts %+v", cc)
			}
		})
	}
}

// TestResume checks that a second recording calls only what the first
// could not store.
func TestResume(t *testing.T) {
	store, _ := openStore(t)
	f := newFake(t, KindChat, fakeKey)
	pcs := map[string]ProviderConfig{"p": f.config()}
	var calls []results.Call
	for i := range 10 {
		calls = append(calls, call("p", "m", fmt.Sprintf("q%d", i)))
	}
	pcs["p"] = withConcurrency(f.config(), 1) // the script then hits calls in order
	c1, _ := clientFor(t, store, Record, pcs, nil)
	f.script = []step{{status: 400}, {status: 400}, {status: 403}}
	r1 := c1.Answer(context.Background(), calls)
	failed := 0
	for _, r := range r1 {
		if r.Err != nil {
			failed++
		}
	}
	if failed != 3 || c1.Counts().Recorded != 7 {
		t.Fatalf("first run: %d failed, counts %+v", failed, c1.Counts())
	}
	n := f.count()
	c2, _ := clientFor(t, store, Record, pcs, nil)
	r2 := c2.Answer(context.Background(), calls)
	for i, r := range r2 {
		if r.Err != nil {
			t.Errorf("second run reply %d: %v", i, r.Err)
		}
	}
	if f.count()-n != 3 || c2.Counts().Hits != 7 || c2.Counts().Recorded != 3 {
		t.Errorf("second run made %d calls (want 3), counts %+v", f.count()-n, c2.Counts())
	}
}

func withConcurrency(pc ProviderConfig, n int) ProviderConfig {
	pc.Concurrency = n
	return pc
}

// TestRefresh checks that refresh stores the next sample and keeps the
// first.
func TestRefresh(t *testing.T) {
	store, _ := openStore(t)
	f := newFake(t, KindChat, fakeKey)
	pcs := map[string]ProviderConfig{"p": f.config()}
	cl := []results.Call{call("p", "m", "q")}
	rec, _ := clientFor(t, store, Record, pcs, nil)
	first := rec.Answer(context.Background(), cl)[0]
	f.script = []step{{text: text("second draw")}, {text: text("third draw")}}
	for i, want := range []string{"second draw", "third draw"} {
		ref, _ := clientFor(t, store, Refresh, pcs, nil)
		r := ref.Answer(context.Background(), cl)[0]
		if r.Err != nil || r.Text != want || r.Key == first.Key {
			t.Fatalf("refresh %d: %+v", i, r)
		}
		p := cl[0].Prompt
		p.Sample = i + 1
		req, _ := RequestOf(p, pcs)
		if k, _ := reqkey.Of(req); k.String() != r.Key {
			t.Errorf("refresh %d stored under %s, want sample %d key %s", i, r.Key, i+1, k)
		}
	}
	off, _ := clientFor(t, store, Offline, pcs, nil)
	if r := off.Answer(context.Background(), cl)[0]; r != first {
		t.Errorf("sample 0 changed: %+v, want %+v", r, first)
	}
}

// TestConcurrencyBound checks the per-provider bound on requests in flight.
func TestConcurrencyBound(t *testing.T) {
	store, _ := openStore(t)
	f := newFake(t, KindChat, fakeKey)
	f.delay = 5 * time.Millisecond
	pcs := map[string]ProviderConfig{"p": withConcurrency(f.config(), 3)}
	c, _ := clientFor(t, store, Record, pcs, nil)
	var calls []results.Call
	for i := range 24 {
		calls = append(calls, call("p", "m", fmt.Sprint(i)))
	}
	for _, r := range c.Answer(context.Background(), calls) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	if f.maxInflight > 3 || f.maxInflight < 2 {
		t.Errorf("max in flight %d, want 2..3", f.maxInflight)
	}
}

// TestSecrets records with a known key, provokes a 401 that echoes it, and
// searches the whole store (decompressed), the log, replies and failure
// reports for it.
func TestSecrets(t *testing.T) {
	store, dir := openStore(t)
	f := newFake(t, KindChat, fakeKey)
	var log bytes.Buffer
	pcs := map[string]ProviderConfig{"p": withConcurrency(f.config(), 1)}
	c, _ := clientFor(t, store, Record, pcs, &log)
	f.script = []step{{status: 401, body: `{"error":{"message":"Incorrect API key provided: ` + fakeKey + `"}}`}, {text: text("contains " + fakeKey)}}
	calls := []results.Call{call("p", "m", "q1"), call("p", "m", "q2"), call("p", "m", "q3")}
	replies := c.Answer(context.Background(), calls)
	if cc := CountCauses(c.Failures()); len(cc) != 2 || cc[0] != (CauseCount{CauseHTTP, 1}) || cc[1] != (CauseCount{CauseSecret, 1}) {
		t.Errorf("failure counts %+v, want one http_error and one secret_in_exchange", cc)
	}
	if c.Counts().Recorded != 1 {
		t.Errorf("counts %+v", c.Counts())
	}
	var out bytes.Buffer
	out.Write(log.Bytes())
	for _, r := range replies {
		fmt.Fprintf(&out, "%+v %v\n", r, r.Err)
	}
	for _, fl := range c.Failures() {
		fmt.Fprintf(&out, "%+v\n", fl)
	}
	if !strings.Contains(out.String(), Redacted) {
		t.Errorf("no redaction in the log:\n%s", out.String())
	}
	if bytes.Contains(out.Bytes(), []byte(fakeKey)) {
		t.Errorf("the key reached an output:\n%s", out.String())
	}
	scanStore(t, store, dir, fakeKey)
}

// scanStore searches every file of the store, decompressing zstd frames,
// and every stored exchange for secret.
func scanStore(t *testing.T, store *cache.Store, dir string, secret string) {
	t.Helper()
	loadDicts(dir)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, part := range decompressAll(b) {
			if bytes.Contains(part, []byte(secret)) {
				t.Errorf("%s holds the secret", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = store.Each(func(k cache.Key, x *cache.Exchange) error {
		n++
		b, _ := json.Marshal(x)
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("exchange %s holds the secret", k)
		}
		return nil
	})
	if err != nil || n == 0 {
		t.Errorf("walked %d exchanges: %v", n, err)
	}
}

func TestDrift(t *testing.T) {
	tests := []struct {
		req, rep string
		want     bool
	}{
		{"gpt-4o", "gpt-4o", false},
		{"gpt-4o", "gpt-4o-2024-08-06", false},
		{"claude-sonnet-4", "claude-sonnet-4-20250514", false},
		{"gemini-1.5-pro", "gemini-1.5-pro-002", false},
		{"claude-sonnet-4-0", "claude-sonnet-4-20250514", false},
		{"claude-3-5-haiku-latest", "claude-3-5-haiku-20241022", false},
		{"claude-sonnet-4-0", "claude-opus-4-20250514", true},
		{"gpt-4o-latest", "gpt-4o-mini", true},
		{"gpt-4o", "gpt-4o-mini", true},
		{"gpt-4o", "gpt-4o-mini-2024-07-18", true},
		{"deepseek-chat", "deepseek-v3", true},
		{"m", "", false},
	}
	for _, tt := range tests {
		if got := Drifted(tt.req, tt.rep); got != tt.want {
			t.Errorf("Drifted(%q, %q) = %v, want %v", tt.req, tt.rep, got, tt.want)
		}
	}
	store, _ := openStore(t)
	f := newFake(t, KindChat, fakeKey)
	f.reported = "gpt-4o-mini-2024-07-18"
	var log bytes.Buffer
	c, _ := clientFor(t, store, Record, map[string]ProviderConfig{"p": f.config()}, &log)
	rs := c.Answer(context.Background(), []results.Call{call("p", "gpt-4o", "a"), call("p", "gpt-4o", "b")})
	if rs[0].Err != nil || rs[0].Model != "gpt-4o-mini-2024-07-18" {
		t.Fatalf("%+v", rs[0])
	}
	if d := c.Drifts(); len(d) != 1 || d[0].Reported != "gpt-4o-mini-2024-07-18" {
		t.Errorf("drifts %+v", d)
	}
	if n := strings.Count(log.String(), "model drift"); n != 1 {
		t.Errorf("%d drift warnings, want 1:\n%s", n, log.String())
	}
	k, _ := reqkey.Parse(rs[0].Key)
	x, _ := store.Get(k)
	if x == nil || x.Meta.ReportedModel != "gpt-4o-mini-2024-07-18" || x.Meta.CostUSD <= 0 {
		t.Fatalf("stored meta %+v", x)
	}
	if spent := c.SpentUSD(); spent != 2*x.Meta.CostUSD {
		t.Errorf("spent $%v, want twice $%v", spent, x.Meta.CostUSD)
	}
	off, _ := clientFor(t, store, Offline, map[string]ProviderConfig{"p": f.config()}, nil)
	off.Answer(context.Background(), []results.Call{call("p", "gpt-4o", "a"), call("p", "gpt-4o", "b")})
	if off.AvoidedUSD() != c.SpentUSD() {
		t.Errorf("replay avoided $%v, recording spent $%v", off.AvoidedUSD(), c.SpentUSD())
	}
}

func TestMissingKey(t *testing.T) {
	store, _ := openStore(t)
	f := newFake(t, KindChat, fakeKey)
	pc := f.config()
	pc.KeyEnv = "UNSET_VARIABLE"
	c, _ := clientFor(t, store, Record, map[string]ProviderConfig{"p": pc}, nil)
	r := c.Answer(context.Background(), []results.Call{call("p", "m", "q")})[0]
	var ce *CallError
	if !errors.As(r.Err, &ce) || ce.Cause != CauseNoKey || f.count() != 0 {
		t.Errorf("err %v, calls %d", r.Err, f.count())
	}
}

// TestLimiter drives the RPM and TPM windows with a fake clock.
func TestLimiter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var waited []time.Duration
	l := &limiter{rpm: 2, tpm: 100, now: func() time.Time { return now }, sleep: func(_ context.Context, d time.Duration) error {
		waited = append(waited, d)
		now = now.Add(d)
		return nil
	}}
	ctx := context.Background()
	for _, tokens := range []int{10, 10, 10} {
		if err := l.wait(ctx, tokens); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
	}
	if len(waited) != 1 || waited[0] != 58*time.Second {
		t.Errorf("rpm waits %v, want [58s]", waited)
	}
	waited = nil
	l.rpm = 0
	if err := l.wait(ctx, 95); err != nil {
		t.Fatal(err)
	}
	if len(waited) != 1 {
		t.Errorf("tpm waits %v, want one", waited)
	}
	waited = nil
	if err := l.wait(ctx, 1000); err != nil { // larger than the budget: waits for an empty window
		t.Fatal(err)
	}
	if len(waited) != 1 {
		t.Errorf("oversized waits %v, want one", waited)
	}
}

func TestBackoff(t *testing.T) {
	a, b := NewBackoff(time.Second, 7), NewBackoff(time.Second, 7)
	for retry := 1; retry <= 10; retry++ {
		da, db := a.Delay(retry, 0), b.Delay(retry, 0)
		if da != db {
			t.Errorf("retry %d: %v and %v from the same seed", retry, da, db)
		}
		ceil := min(time.Second<<(retry-1), MaxBackoff)
		if da < ceil/2 || da > ceil {
			t.Errorf("retry %d: delay %v outside [%v, %v]", retry, da, ceil/2, ceil)
		}
	}
	if d := a.Delay(1, 30*time.Second); d != 30*time.Second {
		t.Errorf("Retry-After 30s gave %v", d)
	}
	if d := a.Delay(1, time.Hour); d != MaxBackoff {
		t.Errorf("Retry-After 1h gave %v, want the cap", d)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := http.Header{}
	h.Set("Retry-After", now.Add(90*time.Second).Format(http.TimeFormat))
	if d := parseRetryAfter(h, now); d != 90*time.Second {
		t.Errorf("HTTP-date Retry-After gave %v", d)
	}
	h = http.Header{"Retry-After-Ms": {"1500"}}
	if d := parseRetryAfter(h, now); d != 1500*time.Millisecond {
		t.Errorf("retry-after-ms gave %v", d)
	}
}

func TestPrices(t *testing.T) {
	p := DefaultPrices()
	if p.Date == "" || len(p.Models) == 0 {
		t.Fatal("empty default price table")
	}
	tests := []struct {
		model string
		want  string
	}{
		{"gpt-4o", "gpt-4o"}, {"gpt-4o-2024-08-06", "gpt-4o"}, {"gpt-4o-mini-2024-07-18", "gpt-4o-mini"}, {"unknown-model", ""},
	}
	for _, tt := range tests {
		got, ok := p.Lookup(tt.model)
		if want, wok := p.Models[tt.want]; ok != wok || got != want {
			t.Errorf("Lookup(%q) = %v %v, want %v", tt.model, got, ok, want)
		}
	}
	if c, _ := p.Cost("gpt-4o", 1e6, 1e6); c != 12.5 {
		t.Errorf("cost %v, want 12.5", c)
	}
	if _, err := ParsePrices(strings.NewReader(`{"date":"2025-01-01","models":{"m":{"input":-1,"output":1}}}`), "p.json"); err == nil || !strings.Contains(err.Error(), "p.json") {
		t.Errorf("negative price: %v", err)
	}
	if in, out := estimateRequest([]byte(`{"max_tokens": 300,"x":"abcdefgh"}`)); out != 300 || in <= 0 {
		t.Errorf("estimate %d %d", in, out)
	}
}

// dumpHash hashes every exchange of replies, in order.
func dumpHash(t *testing.T, store *cache.Store, replies []results.Reply) [32]byte {
	h := sha256.New()
	for _, r := range replies {
		fmt.Fprintf(h, "%s %q %v\n", r.Key, r.Text, r.Err)
		if k, err := reqkey.Parse(r.Key); err == nil {
			if x, err := store.Get(k); err == nil {
				b, _ := json.Marshal(x)
				h.Write(b)
			}
		}
	}
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return s
}

// TestScanStoreSees checks that the store scan of TestSecrets can fail: a
// marker in a stored response is found in the decompressed files.
func TestScanStoreSees(t *testing.T) {
	store, dir := openStore(t)
	const marker = "marker-4f1d2a9c-text-that-must-be-found"
	x := &cache.Exchange{
		Request:  json.RawMessage(`{"provider":"openai","endpoint":"chat/completions","body":{"model":"m"}}`),
		Response: json.RawMessage(`{"choices":[{"message":{"content":"` + strings.Repeat("pad ", 50) + marker + `"}}]}`),
		Meta:     cache.Meta{Provider: "openai", Model: "m", Source: "api"},
	}
	if _, err := store.Put(x); err != nil {
		t.Fatal(err)
	}
	loadDicts(dir)
	found := false
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			for _, part := range decompressAll(b) {
				found = found || bytes.Contains(part, []byte(marker))
			}
		}
		return nil
	})
	if !found {
		t.Fatal("the store scan does not see stored text")
	}
}

// TestStoredUnusable checks that a stored refusal, loaded from elsewhere,
// replays as an error and not as an empty answer or a miss.
func TestStoredUnusable(t *testing.T) {
	store, _ := openStore(t)
	cl := call("openai", "m", "q")
	req, _ := RequestOf(cl.Prompt)
	x := &cache.Exchange{Request: req, Response: json.RawMessage(`{"model":"m","choices":[{"message":{"content":null,"refusal":"no"}}]}`),
		Meta: cache.Meta{Provider: "openai", Model: "m", Source: "import"}}
	if _, err := store.Put(x); err != nil {
		t.Fatal(err)
	}
	c := New(store, Config{})
	r := c.Answer(context.Background(), []results.Call{cl})[0]
	var ce *CallError
	if !errors.As(r.Err, &ce) || ce.Cause != CauseRefusal || len(c.Misses()) != 0 {
		t.Errorf("reply %+v, misses %d", r, len(c.Misses()))
	}
}

// TestKeyIgnoresTransport checks that base URL, key variable, timeouts and
// retry settings never change a request object.
func TestKeyIgnoresTransport(t *testing.T) {
	p := call("p", "m", "q").Prompt
	a, _ := RequestOf(p, map[string]ProviderConfig{"p": {Kind: KindChat, BaseURL: "https://a/v1", KeyEnv: "A"}})
	b, _ := RequestOf(p, map[string]ProviderConfig{"p": {Kind: KindChat, BaseURL: "http://b", KeyEnv: "B", Timeout: time.Second, MaxAttempts: 2, RPM: 5}})
	if !bytes.Equal(a, b) {
		t.Errorf("%s != %s", a, b)
	}
	p.Sample = 1
	c, _ := RequestOf(p, map[string]ProviderConfig{"p": {Kind: KindChat}})
	if bytes.Equal(a, c) {
		t.Error("sample does not change the request")
	}
}

func TestProgressTerminal(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, func(s string) string { return strings.ReplaceAll(s, "secret-value", Redacted) })
	p.tty = true
	p.start(4)
	p.done(true, 0.5)
	p.logf("a line with secret-value")
	p.logf("a provider's error \x1b]0;title\x07")
	p.done(false, 0)
	p.finish()
	out := b.String()
	for _, want := range []string{"\r[=======", "2/4", "failed 1", "$0.5000", "a line with " + Redacted + "\n", `a provider's error \x1b]0;title\x07` + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal output %q lacks %q", out, want)
		}
	}
	if strings.Contains(out, "secret-value") || strings.Contains(out, "\x1b]0") || !strings.HasSuffix(out, "\n") {
		t.Errorf("terminal output %q", out)
	}
	q := newProgress(nil, nil) // quiet: every method is a no-op
	q.start(1)
	q.done(true, 0)
	q.logf("x")
	q.finish()
}

func TestBadRequest(t *testing.T) {
	store, _ := openStore(t)
	c := New(store, Config{})
	bad := call("nope", "m", "q")
	rs := c.Answer(context.Background(), []results.Call{bad, call("openai", "", "q")})
	for i, r := range rs {
		var ce *CallError
		if !errors.As(r.Err, &ce) || ce.Cause != CauseRequest {
			t.Errorf("reply %d: %v", i, r.Err)
		}
	}
	fs := c.Failures()
	if len(fs) != 2 || fs[0].Label.Benchmark != "icbcbench" || len(c.Misses()) != 0 {
		t.Errorf("failures %+v", fs)
	}
}

// TestInterruptResume cancels a recording midway, as Ctrl-C does, and
// checks that the rerun sends exactly the requests not yet stored.
func TestInterruptResume(t *testing.T) {
	store, _ := openStore(t)
	f := newFake(t, KindChat, fakeKey)
	f.delay = 20 * time.Millisecond
	pcs := map[string]ProviderConfig{"p": withConcurrency(f.config(), 2)}
	var calls []results.Call
	for i := range 20 {
		calls = append(calls, call("p", "m", fmt.Sprint("q", i)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Millisecond)
	defer cancel()
	c1, _ := clientFor(t, store, Record, pcs, nil)
	c1.Answer(ctx, calls)
	stored := c1.Counts().Recorded
	if stored == 0 || stored == len(calls) {
		t.Skipf("the interruption came at an edge (%d stored); nothing to resume", stored)
	}
	for _, cc := range CountCauses(c1.Failures()) {
		if cc.Cause != CauseCanceled {
			t.Errorf("interrupted run failed with %s", cc.Cause)
		}
	}
	before := f.count()
	c2, _ := clientFor(t, store, Record, pcs, nil)
	for i, r := range c2.Answer(context.Background(), calls) {
		if r.Err != nil {
			t.Errorf("rerun reply %d: %v", i, r.Err)
		}
	}
	if sent := f.count() - before; sent != len(calls)-stored || c2.Counts().Hits != stored {
		t.Errorf("rerun sent %d, want %d; counts %+v", sent, len(calls)-stored, c2.Counts())
	}
}

// TestNoRedirect checks that a redirect is not followed, so the key
// headers never reach another host.
func TestNoRedirect(t *testing.T) {
	var leaked sync.Map
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store("hit", r.Header.Get("x-api-key"))
	}))
	defer other.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/messages", http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	store, _ := openStore(t)
	pcs := map[string]ProviderConfig{"p": {Kind: KindAnthropic, BaseURL: redirect.URL + "/v1", KeyEnv: "FAKE_KEY", Backoff: time.Millisecond}}
	c, _ := clientFor(t, store, Record, pcs, nil)
	r := c.Answer(context.Background(), []results.Call{call("p", "m", "q")})[0]
	var ce *CallError
	if !errors.As(r.Err, &ce) || ce.Cause != CauseHTTP || ce.Status != http.StatusTemporaryRedirect {
		t.Errorf("err %v", r.Err)
	}
	if _, ok := leaked.Load("hit"); ok {
		t.Error("the redirect was followed")
	}
}

// TestEndpointURL checks that the endpoint joins the base URL's path and
// that a query in the base URL (a key some gateways take there) stays a
// query.
func TestEndpointURL(t *testing.T) {
	for _, tc := range []struct{ base, endpoint, want string }{
		{"http://host/v1", "chat/completions", "http://host/v1/chat/completions"},
		{"http://host/v1/", "chat/completions", "http://host/v1/chat/completions"},
		{"http://host", "messages", "http://host/messages"},
		{"http://host/v1?key=K", "chat/completions", "http://host/v1/chat/completions?key=K"},
		{"http://host/v1/?key=K&x=a%20b", "responses", "http://host/v1/responses?key=K&x=a%20b"},
		{"https://g/v1beta", "models/gemini-2.5-pro:generateContent", "https://g/v1beta/models/gemini-2.5-pro:generateContent"},
	} {
		got, err := endpointURL(tc.base, tc.endpoint)
		if err != nil || got != tc.want {
			t.Errorf("endpointURL(%q, %q) = %q, %v; want %q", tc.base, tc.endpoint, got, err, tc.want)
		}
	}
	if _, err := endpointURL("host/v1", "x"); err == nil {
		t.Error("a base URL without a scheme was accepted")
	}
}

// TestBaseURLQuery records through a provider whose base URL carries a
// query and checks the request reached the endpoint's path with the query.
func TestBaseURLQuery(t *testing.T) {
	var got sync.Map
	f := newFake(t, KindChat, "")
	inner := f.srv.Config.Handler
	f.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store("path", r.URL.Path)
		got.Store("query", r.URL.RawQuery)
		inner.ServeHTTP(w, r)
	})
	pc := f.config()
	pc.BaseURL += "?key=K"
	store, _ := openStore(t)
	c, _ := clientFor(t, store, Record, map[string]ProviderConfig{"p": pc}, nil)
	if r := c.Answer(context.Background(), []results.Call{call("p", "m", "q")})[0]; r.Err != nil {
		t.Fatal(r.Err)
	}
	if p, _ := got.Load("path"); p != "/v1/chat/completions" {
		t.Errorf("path %v, want /v1/chat/completions", p)
	}
	if q, _ := got.Load("query"); q != "key=K" {
		t.Errorf("query %v, want key=K", q)
	}
}

// logAfter429 records one judge call whose first attempt gets a 429 and
// returns the client's progress log; edit, when not nil, changes the
// provider's configuration first.
func logAfter429(t *testing.T, edit func(*ProviderConfig)) string {
	t.Helper()
	store, _ := openStore(t)
	f := newFake(t, KindChat, fakeKey)
	f.script = []step{{status: 429}, {status: 200, body: ""}}
	pc := f.config()
	if edit != nil {
		edit(&pc)
	}
	var log bytes.Buffer
	c, _ := clientFor(t, store, Record, map[string]ProviderConfig{"p": pc}, &log)
	c.Answer(context.Background(), []results.Call{call("p", "judge-model", "en-007")})
	return log.String()
}

// TestRetryLineNamesCall: a retry line says which benchmark, task and
// system or judge the call is for, not only a key prefix.
func TestRetryLineNamesCall(t *testing.T) {
	log := logAfter429(t, nil)
	line := ""
	for _, l := range strings.Split(log, "\n") {
		if i := strings.Index(l, "retry "); i >= 0 {
			line = l[i:]
		}
	}
	if !strings.Contains(line, "icbcbench task en-007 judge judge-model") || !strings.Contains(line, "after rate_limit") {
		t.Fatalf("retry line %q does not name the call\n%s", line, log)
	}
}

// TestInterruptProgress: after an interrupt the progress does not jump
// to done (no "20/20" line), the calls stopped are counted as not sent,
// and no "failed" line is logged for them.
func TestInterruptProgress(t *testing.T) {
	store, _ := openStore(t)
	f := newFake(t, KindChat, fakeKey)
	f.delay = 20 * time.Millisecond
	pcs := map[string]ProviderConfig{"p": withConcurrency(f.config(), 2)}
	var calls []results.Call
	for i := range 20 {
		calls = append(calls, call("p", "m", fmt.Sprint("q", i)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Millisecond)
	defer cancel()
	var log bytes.Buffer
	c, _ := clientFor(t, store, Record, pcs, &log)
	c.Answer(ctx, calls)
	c.prog.mu.Lock()
	done, stopped := c.prog.ndone, c.prog.stopped
	c.prog.mu.Unlock()
	if stored := c.Counts().Recorded; stored == len(calls) {
		t.Skip("the run finished before the interrupt")
	}
	if done+stopped != len(calls) || stopped == 0 {
		t.Errorf("%d done and %d stopped of %d", done, stopped, len(calls))
	}
	if strings.Contains(log.String(), "20/20") || strings.Contains(log.String(), "failed p") {
		t.Errorf("progress after an interrupt:\n%s", log.String())
	}
}

// TestAnswerRequestBodies: the stored response of each request answered
// from the cache comes back as one line of compact JSON (the bytes
// json.Compact makes of it, written here by hand), duplicates included;
// a miss has none. A store without a trust record (its packs are hashed
// again on every read) has every response checked: the refusal is an
// error, and the replies carry the text. A store whose packs this
// process wrote and trusts passes its responses on unparsed: the
// refusal's body comes back as stored, and no reply has text.
func TestAnswerRequestBodies(t *testing.T) {
	want := `{"model":"m","choices":[{"message":{"content":"a \u00e9 b"}}]}`
	refusal := `{"model":"m","choices":[{"message":{"content":null,"refusal":"no"}}]}`
	for _, c := range []struct {
		name       string
		trustDir   string // "off": no trust record
		wantBodies []string
		wantText   string
		refusalErr bool
	}{
		{"untrusted", "off", []string{want, "", "", want}, "a é b", true},
		{"trusted", t.TempDir(), []string{want, "", refusal, want}, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(cache.TrustDirEnv, c.trustDir)
			store, _ := openStore(t)
			put := func(user, resp string) Request {
				req, _ := RequestOf(call("openai", "m", user).Prompt)
				if _, err := store.Put(&cache.Exchange{Request: req, Response: json.RawMessage(resp),
					Meta: cache.Meta{Provider: "openai", Model: "m", Source: "import"}}); err != nil {
					t.Fatal(err)
				}
				var r Request
				if err := json.Unmarshal(req, &r); err != nil {
					t.Fatal(err)
				}
				return r
			}
			good := put("q", "{\n  \"model\": \"m\",\n  \"choices\": [ {\"message\": {\"content\": \"a \\u00e9 b\"}} ]\n}\n")
			refused := put("r", refusal)
			missing, _ := RequestOf(call("openai", "m", "not stored").Prompt)
			var miss Request
			if err := json.Unmarshal(missing, &miss); err != nil {
				t.Fatal(err)
			}
			cl := New(store, Config{})
			replies, bodies := cl.AnswerRequestBodies(context.Background(), []Request{good, miss, refused, good})
			for i, w := range c.wantBodies {
				if string(bodies[i]) != w {
					t.Errorf("body %d = %q, want %q", i, bodies[i], w)
				}
			}
			if replies[0].Err != nil || replies[0].Text != c.wantText || replies[3].Text != c.wantText || replies[1].Err == nil || (replies[2].Err != nil) != c.refusalErr {
				t.Errorf("replies %+v", replies)
			}
		})
	}
}

// TestToolCallAnswers: an answer of tool calls without text is an answer
// for the proxy (checkOutput with calls) and an empty output for the
// client, in every kind's shape; so is a queued background response.
func TestToolCallAnswers(t *testing.T) {
	for _, c := range []struct {
		kind Kind
		body string
	}{
		{KindChat, `{"model":"m","choices":[{"message":{"content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`},
		{KindResponses, `{"model":"m","status":"completed","output":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}]}`},
		{KindResponses, `{"model":"m","status":"queued","output":[]}`},
		{KindAnthropic, `{"type":"message","model":"m","content":[{"type":"tool_use","id":"t","name":"f","input":{}}],"stop_reason":"tool_use"}`},
		{KindGemini, `{"modelVersion":"m","candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{}}}]},"finishReason":"STOP"}]}`},
	} {
		if _, ce := checkOutput(c.kind, []byte(c.body), true); ce != nil {
			t.Errorf("%s %s: %v, want an answer", c.kind, c.body, ce)
		}
		if _, ce := checkBody(c.kind, []byte(c.body)); ce == nil || ce.Cause != CauseEmpty {
			t.Errorf("%s %s: client check %v, want %s", c.kind, c.body, ce, CauseEmpty)
		}
	}
	// Without calls, blank text is empty for the proxy too.
	if _, ce := checkOutput(KindChat, []byte(`{"model":"m","choices":[{"message":{"content":" ","tool_calls":[]}}]}`), true); ce == nil || ce.Cause != CauseEmpty {
		t.Errorf("blank answer: %v, want %s", ce, CauseEmpty)
	}
}

// TestProviderBackoff: a provider's configured first retry delay is the
// one its retries wait (Backoff 40ms: the first wait is in [20ms, 40ms],
// half the delay plus jitter), not the client-wide default of a second.
func TestProviderBackoff(t *testing.T) {
	log := logAfter429(t, func(pc *ProviderConfig) { pc.Backoff = 40 * time.Millisecond })
	m := regexp.MustCompile(`retry .* in (\S+) after`).FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("no retry line:\n%s", log)
	}
	d, err := time.ParseDuration(m[1])
	if err != nil || d < 20*time.Millisecond || d > 40*time.Millisecond {
		t.Fatalf("first retry waited %s, want 20ms-40ms", m[1])
	}
}

// TestLatencyByClock: a recorded call's latency is measured by the
// client's Clock (each reading here 250 ms after the last), so that an
// injected clock governs every time the client keeps.
func TestLatencyByClock(t *testing.T) {
	store, _ := openStore(t)
	f := newFake(t, KindChat, fakeKey)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var mu sync.Mutex
	ticks := 0
	c := New(store, Config{Mode: Record, Providers: map[string]ProviderConfig{"p": f.config()}, Getenv: getenv, Seed: 1,
		Clock: func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			ticks++
			return t0.Add(time.Duration(ticks) * 250 * time.Millisecond)
		}})
	if r := c.Answer(context.Background(), []results.Call{call("p", "m", "q")})[0]; r.Err != nil {
		t.Fatal(r.Err)
	}
	keys, err := store.Keys()
	if err != nil || len(keys) != 1 {
		t.Fatalf("%d keys, %v", len(keys), err)
	}
	x, err := store.Get(keys[0])
	if err != nil || x.Meta.LatencyMS != 250 {
		t.Fatalf("latency %d ms (%v), want 250", x.Meta.LatencyMS, err)
	}
}
