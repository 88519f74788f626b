package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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
	"github.com/finrepro/finrepro/cache/archive"
	"github.com/finrepro/finrepro/cache/reqkey"
	"github.com/finrepro/finrepro/replay"
)

// Test credentials: shaped like real keys, so that the secret scans
// recognise them too.
const (
	openAIKey    = "sk-proj-TESTKEYopenai0123456789abcdefXYZ"
	anthropicKey = "sk-ant-TESTKEYanthropic0123456789abcdefXYZ"
	geminiKey    = "AIzaTESTKEYgemini0123456789abcdefghijk"
)

// testProxy is a proxy in front of an upstream, over the cache in dir.
type testProxy struct {
	*httptest.Server
	srv   *Server
	store *cache.Store
	log   *bytes.Buffer
}

// newProxy is a proxy in mode over the cache in dir, in front of up
// (none: nothing listens), with Config's other fields set by opts before
// it serves.
func newProxy(t testing.TB, dir string, mode replay.Mode, up *upstream, opts ...func(*Config)) *testProxy {
	t.Helper()
	store, err := cache.Open(dir, cache.Options{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	base := "http://127.0.0.1:1" // nothing listens: offline must never dial
	if up != nil {
		base = up.URL
	}
	client := replay.New(store, replay.Config{Providers: map[string]replay.ProviderConfig{
		"openai":    {Kind: replay.KindChat, BaseURL: base + "/v1"},
		"anthropic": {Kind: replay.KindAnthropic, BaseURL: base + "/v1"},
		"gemini":    {Kind: replay.KindGemini, BaseURL: base + "/v1beta"},
	}})
	p := &testProxy{store: store, log: &bytes.Buffer{}}
	cfg := Config{Mode: mode, Client: client, Run: "test", Log: &lockedWriter{w: p.log}, MissDir: filepath.Join(t.TempDir(), "misses")}
	for _, o := range opts {
		o(&cfg)
	}
	p.srv, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p.Server = httptest.NewServer(p.srv)
	t.Cleanup(func() { p.Close(); store.Close() })
	return p
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// call sends one request and returns the status, the headers and the
// body; a body that breaks off returns the bytes read and the error.
func call(t testing.TB, method, url, body string, h map[string]string) (int, http.Header, []byte, error) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b, err
}

var (
	oaH  = map[string]string{"Authorization": "Bearer " + openAIKey, "Content-Type": "application/json", "X-Stainless-Retry-Count": "0"}
	antH = map[string]string{"X-Api-Key": anthropicKey, "Anthropic-Version": "2023-06-01", "Content-Type": "application/json"}
	gemH = map[string]string{"X-Goog-Api-Key": geminiKey, "Content-Type": "application/json"}
)

// exchangeCases are one request of each kind the proxy serves.
var exchangeCases = []struct {
	name, method, path, body string
	h                        map[string]string
	stream                   bool
}{
	{"chat", "POST", "/v1/chat/completions", `{"model":"gpt-test","messages":[{"role":"user","content":"hi"}]}`, oaH, false},
	{"chat stream", "POST", "/v1/chat/completions", `{"model":"gpt-test","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`, oaH, true},
	{"chat stream tool", "POST", "/v1/chat/completions", `{"model":"gpt-test","stream":true,"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}],"messages":[{"role":"user","content":"weather?"}]}`, oaH, true},
	{"responses", "POST", "/v1/responses", `{"model":"gpt-test","input":"hi"}`, oaH, false},
	{"responses stream", "POST", "/v1/responses", `{"model":"gpt-test","input":"hi","stream":true}`, oaH, true},
	{"embeddings", "POST", "/v1/embeddings", `{"model":"emb-test","input":"hi"}`, oaH, false},
	{"models", "GET", "/v1/models", ``, oaH, false},
	{"anthropic by headers", "POST", "/v1/messages", `{"model":"claude-test","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`, antH, false},
	{"anthropic stream by prefix", "POST", "/anthropic/v1/messages", `{"model":"claude-test","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, antH, true},
	{"gemini", "POST", "/gemini/v1beta/models/gemini-test:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, gemH, false},
	{"gemini stream", "POST", "/gemini/v1beta/models/gemini-test:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, gemH, true},
}

// TestRecordThenOffline records one exchange of each kind and replays it
// offline with the upstream stopped: the same status, Content-Type and
// bytes, the upstream sees nothing, and no credential is stored.
func TestRecordThenOffline(t *testing.T) {
	up := newUpstream(t)
	dir := t.TempDir()
	rec := newProxy(t, dir, replay.Record, up)
	type got struct {
		ct   string
		body []byte
	}
	recorded := map[string]got{}
	for _, c := range exchangeCases {
		st, h, b, err := call(t, c.method, rec.URL+c.path, c.body, c.h)
		if err != nil || st != 200 {
			t.Fatalf("%s: record: status %d, %v: %s", c.name, st, err, b)
		}
		if h.Get(HeaderCache) != "recorded" {
			t.Errorf("%s: record: %s %q", c.name, HeaderCache, h.Get(HeaderCache))
		}
		if h.Get("Openai-Organization") != "" {
			t.Errorf("%s: the organisation header reached the client", c.name)
		}
		recorded[c.name] = got{h.Get("Content-Type"), b}
	}
	rec.Close()
	rec.store.Close()
	up.Close()
	n := up.requests()
	off := newProxy(t, dir, replay.Offline, nil)
	for _, c := range exchangeCases {
		st, h, b, err := call(t, c.method, off.URL+c.path, c.body, c.h)
		if err != nil || st != 200 {
			t.Fatalf("%s: offline: status %d, %v: %s", c.name, st, err, b)
		}
		want := recorded[c.name]
		if !bytes.Equal(b, want.body) || h.Get("Content-Type") != want.ct {
			t.Errorf("%s: offline answer differs:\n got %s %q\nwant %s %q", c.name, h.Get("Content-Type"), b, want.ct, want.body)
		}
		if h.Get("X-Request-Id") == "" {
			t.Errorf("%s: provenance header x-request-id not replayed", c.name)
		}
	}
	if up.requests() != n {
		t.Errorf("the upstream saw %d requests offline", up.requests()-n)
	}
	assertNoSecrets(t, dir, openAIKey, anthropicKey, geminiKey, "org-secretorganisation")
}

// assertNoSecrets searches every byte under dir, and every decompressed
// exchange, for the values.
func assertNoSecrets(t *testing.T, dir string, values ...string) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, v := range values {
			if bytes.Contains(b, []byte(v)) {
				t.Errorf("%s holds a credential", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := archive.ScanSecrets(dir, values)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		t.Errorf("secret in the cache: %v", f)
	}
}

// TestMissShapes checks that an offline miss answers at once with 404 in
// each provider's own error shape, naming the key and the explain
// command, and never dials.
func TestMissShapes(t *testing.T) {
	off := newProxy(t, t.TempDir(), replay.Offline, nil)
	for _, c := range exchangeCases {
		st, h, b, _ := call(t, c.method, off.URL+c.path, c.body, c.h)
		if st != http.StatusNotFound || h.Get(HeaderCache) != "miss" {
			t.Fatalf("%s: status %d, cache %q", c.name, st, h.Get(HeaderCache))
		}
		key := h.Get(HeaderKey)
		var v struct {
			Type  string `json:"type"`
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
				Code    any    `json:"code"`
				Status  string `json:"status"`
				Details []struct {
					Reason string `json:"reason"`
				} `json:"details"`
			} `json:"error"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v: %s", c.name, err, b)
		}
		switch {
		case strings.Contains(c.path, "messages"):
			if v.Type != "error" || v.Error.Type != TypeMiss {
				t.Errorf("%s: not Anthropic's error shape: %s", c.name, b)
			}
		case strings.Contains(c.path, "gemini"):
			if v.Error.Code != float64(404) || v.Error.Status != "NOT_FOUND" || len(v.Error.Details) != 1 || v.Error.Details[0].Reason != TypeMiss {
				t.Errorf("%s: not Gemini's error shape: %s", c.name, b)
			}
		default:
			if v.Error.Type != TypeMiss || v.Error.Code != TypeMiss {
				t.Errorf("%s: not OpenAI's error shape: %s", c.name, b)
			}
		}
		if !strings.Contains(v.Error.Message, key) || !strings.Contains(v.Error.Message, "finrepro cache explain --dir ") {
			t.Errorf("%s: the message names neither key %s nor the explain command: %s", c.name, key, v.Error.Message)
		}
	}
	if c := off.srv.Counts(); c.Misses != len(exchangeCases) {
		t.Errorf("counts %+v", c)
	}
}

// TestMissExplain checks that the request object a miss writes has the
// miss's key and feeds cache explain.
func TestMissExplain(t *testing.T) {
	off := newProxy(t, t.TempDir(), replay.Offline, nil)
	_, h, b, _ := call(t, "POST", off.URL+"/v1/chat/completions", exchangeCases[0].body, oaH)
	key := h.Get(HeaderKey)
	m := regexpExplain.FindStringSubmatch(string(b))
	if m == nil {
		t.Fatalf("no explain command in %s", b)
	}
	raw, err := os.ReadFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	k, err := reqkey.Of(raw)
	if err != nil || k.String() != key {
		t.Fatalf("the written request has key %s (%v), the miss %s", k, err, key)
	}
	if bytes.Contains(raw, []byte(openAIKey)) {
		t.Fatal("the written request holds the API key")
	}
}

// TestSamplesByOccurrence sends one body three times in a run while
// recording, with a failed attempt (429) in between, and replays them in
// another run: answers 1, 2, 3 in order, the failure consumed no sample,
// a fourth occurrence misses, and another run starts again at sample 0.
func TestSamplesByOccurrence(t *testing.T) {
	up := newUpstream(t)
	dir := t.TempDir()
	rec := newProxy(t, dir, replay.Record, up)
	body := `{"model":"gpt-test","messages":[{"role":"user","content":"again RATE_LIMIT_ONCE"}]}`
	var answers []string
	var statuses []int
	for range 4 {
		st, h, b, _ := call(t, "POST", rec.URL+"/v1/chat/completions", body, oaH)
		statuses = append(statuses, st)
		if st == 200 {
			answers = append(answers, h.Get(HeaderSample)+" "+contentOf(t, b))
		}
	}
	// The first attempt is the 429; the three that follow are samples
	// 0, 1 and 2, the upstream's answers 1, 2 and 3.
	want := []string{`0 Answer 1 to "again RATE_LIMIT_ONCE".`, `1 Answer 2 to "again RATE_LIMIT_ONCE".`, `2 Answer 3 to "again RATE_LIMIT_ONCE".`}
	if fmt.Sprint(statuses) != "[429 200 200 200]" || fmt.Sprint(answers) != fmt.Sprint(want) {
		t.Fatalf("record: statuses %v answers %q", statuses, answers)
	}
	rec.Close()
	rec.store.Close()
	off := newProxy(t, dir, replay.Offline, nil)
	var got []string
	for range 3 {
		_, h, b, _ := call(t, "POST", off.URL+"/v1/chat/completions", body, oaH)
		got = append(got, h.Get(HeaderSample)+" "+contentOf(t, b))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("offline: %q, want %q", got, want)
	}
	if st, _, _, _ := call(t, "POST", off.URL+"/v1/chat/completions", body, oaH); st != http.StatusNotFound {
		t.Fatalf("a fourth occurrence: status %d, want 404", st)
	}
	other := map[string]string{HeaderRun: "other"}
	for k, v := range oaH {
		other[k] = v
	}
	if _, h, b, _ := call(t, "POST", off.URL+"/v1/chat/completions", body, other); h.Get(HeaderSample) != "0" || contentOf(t, b) != `Answer 1 to "again RATE_LIMIT_ONCE".` {
		t.Fatalf("another run: sample %s %s", h.Get(HeaderSample), b)
	}
}

func contentOf(t testing.TB, b []byte) string {
	var v struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(b, &v); err != nil || len(v.Choices) == 0 {
		t.Fatalf("not a chat completion: %s", b)
	}
	return v.Choices[0].Message.Content
}

// TestFailedStreamsNotStored checks that a stream cut before its terminal
// event, and one carrying an error event, reach the client as such and
// are not stored, for each family; the retry that follows is sample 0.
func TestFailedStreamsNotStored(t *testing.T) {
	streams := []struct{ name, path, body string }{
		{"chat", "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"%s"}]}`},
		{"responses", "/v1/responses", `{"model":"m","stream":true,"input":"%s"}`},
		{"anthropic", "/v1/messages", `{"model":"m","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"%s"}]}`},
		{"gemini", "/gemini/v1beta/models/m:streamGenerateContent?alt=sse", `{"contents":[{"parts":[{"text":"%s"}]}]}`},
	}
	for _, s := range streams {
		for _, trig := range []string{"CUT_ONCE", "STREAM_ERROR_ONCE"} {
			t.Run(s.name+" "+trig, func(t *testing.T) {
				up := newUpstream(t)
				dir := t.TempDir()
				rec := newProxy(t, dir, replay.Record, up)
				body := fmt.Sprintf(s.body, trig)
				st, h, b, err := call(t, "POST", rec.URL+s.path, body, antH)
				if trig == "CUT_ONCE" && err == nil {
					t.Fatalf("a cut stream reached the client whole: %s", b)
				}
				if trig == "STREAM_ERROR_ONCE" && (err != nil || st != 200 || !bytes.Contains(b, []byte("stream failed")) && !bytes.Contains(b, []byte("Overloaded"))) {
					t.Fatalf("the error event did not reach the client: %d %v %s", st, err, b)
				}
				key, _ := reqkey.Parse(h.Get(HeaderKey))
				if has, _ := rec.store.Has(key); has {
					t.Fatal("the failed stream was stored")
				}
				if c := rec.srv.Counts(); c.Failed != 1 || c.Recorded != 0 {
					t.Fatalf("counts %+v", c)
				}
				// The retry is sample 0 again, and stored whole.
				_, h2, _, err := call(t, "POST", rec.URL+s.path, body, antH)
				if err != nil || h2.Get(HeaderSample) != "0" || h2.Get(HeaderCache) != "recorded" {
					t.Fatalf("retry: %v sample %s cache %s", err, h2.Get(HeaderSample), h2.Get(HeaderCache))
				}
				if has, _ := rec.store.Has(key); !has {
					t.Fatal("the retry was not stored")
				}
				if !strings.Contains(rec.log.String(), `"outcome":"failed"`) {
					t.Errorf("the log has no failed line:\n%s", rec.log)
				}
			})
		}
	}
}

// TestServerState checks that a request continuing a response the run
// has not answered is refused, and one continuing a response it has is
// served, recording and offline.
func TestServerState(t *testing.T) {
	up := newUpstream(t)
	dir := t.TempDir()
	rec := newProxy(t, dir, replay.Record, up)
	next := `{"model":"gpt-test","input":"more","previous_response_id":"resp_1"}`
	st, _, b, _ := call(t, "POST", rec.URL+"/v1/responses", next, oaH)
	if st != http.StatusBadRequest || !bytes.Contains(b, []byte(TypeServerState)) {
		t.Fatalf("unseen previous_response_id: %d %s", st, b)
	}
	if st, _, b, _ := call(t, "GET", rec.URL+"/v1/responses/resp_1", "", oaH); st != http.StatusBadRequest {
		t.Fatalf("retrieving an unseen response: %d %s", st, b)
	}
	for _, mode := range []replay.Mode{replay.Record, replay.Offline} {
		p := rec
		if mode == replay.Offline {
			rec.Close()
			rec.store.Close()
			p = newProxy(t, dir, replay.Offline, nil)
		}
		if st, _, b, _ := call(t, "POST", p.URL+"/v1/responses", `{"model":"gpt-test","input":"first"}`, oaH); st != 200 || responseID(b) != "resp_1" {
			t.Fatalf("%s: first: %d %s", mode, st, b)
		}
		if st, _, b, _ := call(t, "POST", p.URL+"/v1/responses", next, oaH); st != 200 {
			t.Fatalf("%s: continuing a response of the run: %d %s", mode, st, b)
		}
	}
}

// TestConcurrentStreams records many distinct streams and repeated
// identical requests at once, then replays them concurrently: every
// answer is the recorded one and the identical requests got distinct
// samples.
func TestConcurrentStreams(t *testing.T) {
	up := newUpstream(t)
	dir := t.TempDir()
	rec := newProxy(t, dir, replay.Record, up)
	const n = 24
	body := func(i int) string {
		return fmt.Sprintf(`{"model":"m","stream":true,"messages":[{"role":"user","content":"q%d"}]}`, i%8)
	}
	run := func(p *testProxy) map[string]bool {
		var mu sync.Mutex
		got := map[string]bool{}
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				st, h, b, err := call(t, "POST", p.URL+"/v1/chat/completions", body(i), oaH)
				if err != nil || st != 200 {
					t.Errorf("%d: %d %v", i, st, err)
				}
				mu.Lock()
				got[h.Get(HeaderSample)+" "+string(b)] = true
				mu.Unlock()
			})
		}
		wg.Wait()
		return got
	}
	a := run(rec)
	if len(a) != n {
		t.Fatalf("recorded %d distinct (sample, answer) pairs, want %d", len(a), n)
	}
	rec.Close()
	rec.store.Close()
	off := newProxy(t, dir, replay.Offline, nil)
	b := run(off)
	for k := range a {
		if !b[k] {
			t.Errorf("offline lacks %q", k[:min(60, len(k))])
		}
	}
}

// TestFramesFlushedOneByOne reads a replayed stream and checks that each
// stored frame arrives as its own read: a frame is written and flushed
// before the next.
func TestFramesFlushedOneByOne(t *testing.T) {
	up := newUpstream(t)
	dir := t.TempDir()
	rec := newProxy(t, dir, replay.Record, up)
	body := exchangeCases[8].body
	if st, _, _, err := call(t, "POST", rec.URL+"/anthropic/v1/messages", body, antH); st != 200 || err != nil {
		t.Fatal(st, err)
	}
	rec.Close()
	rec.store.Close()
	off := newProxy(t, dir, replay.Offline, nil)
	req, _ := http.NewRequest("POST", off.URL+"/anthropic/v1/messages", strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		t.Fatalf("Content-Type %q", resp.Header.Get("Content-Type"))
	}
	var events []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "event: ") {
			events = append(events, strings.TrimPrefix(sc.Text(), "event: "))
		}
	}
	want := "[message_start content_block_start ping content_block_delta content_block_delta content_block_delta content_block_stop message_delta message_stop]"
	if fmt.Sprint(events) != want {
		t.Fatalf("events %v\nwant %s", events, want)
	}
}

// TestPaceRecorded replays a stream whose frames arrived 30 ms apart with
// --pace recorded and checks that the replay takes about as long, while
// the collapsed replay does not.
func TestPaceRecorded(t *testing.T) {
	up := newUpstream(t)
	up.setDelay(func() { time.Sleep(30 * time.Millisecond) })
	dir := t.TempDir()
	rec := newProxy(t, dir, replay.Record, up)
	body := exchangeCases[1].body
	call(t, "POST", rec.URL+"/v1/chat/completions", body, oaH)
	rec.Close()
	rec.store.Close()
	for _, pace := range []Pace{Collapsed, Recorded} {
		off := newProxy(t, dir, replay.Offline, nil, func(c *Config) { c.Pace = pace })
		start := time.Now()
		st, _, _, _ := call(t, "POST", off.URL+"/v1/chat/completions", body, oaH)
		el := time.Since(start)
		// Six frames before the terminal one, 30 ms after each: at
		// least 150 ms recorded (five gaps precede the last data frame).
		if st != 200 || pace == Recorded && el < 150*time.Millisecond || pace == Collapsed && el > 100*time.Millisecond {
			t.Errorf("pace %s: %v (status %d)", pace, el, st)
		}
		off.Close()
		off.store.Close()
	}
}

// TestRefresh records a new draw under the next free sample.
func TestRefresh(t *testing.T) {
	up := newUpstream(t)
	dir := t.TempDir()
	body := exchangeCases[0].body
	rec := newProxy(t, dir, replay.Record, up)
	call(t, "POST", rec.URL+"/v1/chat/completions", body, oaH)
	rec.Close()
	rec.store.Close()
	ref := newProxy(t, dir, replay.Refresh, up)
	_, h, b, _ := call(t, "POST", ref.URL+"/v1/chat/completions", body, oaH)
	if h.Get(HeaderSample) != "1" || h.Get(HeaderCache) != "recorded" || contentOf(t, b) != `Answer 2 to "hi".` {
		t.Fatalf("refresh: sample %s cache %s %s", h.Get(HeaderSample), h.Get(HeaderCache), b)
	}
}

// TestBadRequests checks the proxy's own refusals.
func TestBadRequests(t *testing.T) {
	off := newProxy(t, t.TempDir(), replay.Offline, nil)
	for _, c := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/v1/chat/completions", `not json`, 400},
		{"POST", "/v1/chat/completions", `[1]`, 400},
		{"POST", "/v2/other", `{}`, 404},
		{"POST", "/nosuchprovider/v1/chat/completions", `{}`, 404},
		{"POST", "/gemini/v1beta/models/m:streamGenerateContent", `{}`, 400},
		{"DELETE", "/v1/responses/x", ``, 404},
		{"POST", "/v1/../../etc/passwd", `{}`, 404},
	} {
		if st, _, b, _ := call(t, c.method, off.URL+c.path, c.body, oaH); st != c.status {
			t.Errorf("%s %s: %d, want %d: %s", c.method, c.path, st, c.status, b)
		}
	}
}

var regexpExplain = regexp.MustCompile(`finrepro cache explain --dir \S+ (\S+\.json)`)

// TestTwoProxiesOneCache records through two proxies on one cache folder
// at once (two stores, as two processes would open it), then replays
// everything through a third, offline.
func TestTwoProxiesOneCache(t *testing.T) {
	up := newUpstream(t)
	dir := t.TempDir()
	a, b := newProxy(t, dir, replay.Record, up), newProxy(t, dir, replay.Record, up)
	body := func(i int) string {
		return fmt.Sprintf(`{"model":"m","stream":%v,"messages":[{"role":"user","content":"q%d"}]}`, i%2 == 0, i)
	}
	want := make([][]byte, 16)
	var wg sync.WaitGroup
	for i := range want {
		p := a
		if i%2 == 1 {
			p = b
		}
		wg.Go(func() {
			st, _, got, err := call(t, "POST", p.URL+"/v1/chat/completions", body(i), oaH)
			if st != 200 || err != nil {
				t.Errorf("%d: %d %v", i, st, err)
			}
			want[i] = got
		})
	}
	wg.Wait()
	for _, p := range []*testProxy{a, b} {
		p.Close()
		p.store.Close()
	}
	off := newProxy(t, dir, replay.Offline, nil)
	for i := range want {
		if _, _, got, _ := call(t, "POST", off.URL+"/v1/chat/completions", body(i), oaH); !bytes.Equal(got, want[i]) {
			t.Errorf("%d: offline %q, recorded %q", i, got, want[i])
		}
	}
}

// TestAnswerChecks: an answer is stored after the replay client's checks
// of a recording. A refusal or an answer of blank text reaches the client
// but is not stored, and its retry asks for sample 0 again; tool calls
// without text and a queued background response are answers, stored.
func TestAnswerChecks(t *testing.T) {
	for _, c := range []struct {
		name, path, body string
		stored           bool
	}{
		{"refusal", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"REFUSE_ONCE"}]}`, false},
		{"blank", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"EMPTY_ONCE"}]}`, false},
		{"tool calls", "/v1/chat/completions", `{"model":"m","tools":[{"type":"function","function":{"name":"f"}}],"messages":[{"role":"user","content":"weather?"}]}`, true},
		{"background", "/v1/responses", `{"model":"m","input":"hi","background":true}`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			up := newUpstream(t)
			rec := newProxy(t, t.TempDir(), replay.Record, up)
			st, h, _, err := call(t, "POST", rec.URL+c.path, c.body, oaH)
			if err != nil || st != 200 {
				t.Fatalf("status %d, %v", st, err)
			}
			key, _ := reqkey.Parse(h.Get(HeaderKey))
			if has, _ := rec.store.Has(key); has != c.stored {
				t.Fatalf("stored %v, want %v (cache header %q)", has, c.stored, h.Get(HeaderCache))
			}
			if c.stored {
				return
			}
			if h.Get(HeaderCache) != "not-stored" || rec.srv.Counts().Failed != 1 {
				t.Fatalf("cache header %q, counts %+v", h.Get(HeaderCache), rec.srv.Counts())
			}
			_, h2, b2, _ := call(t, "POST", rec.URL+c.path, c.body, oaH)
			if h2.Get(HeaderSample) != "0" || h2.Get(HeaderCache) != "recorded" {
				t.Fatalf("retry: sample %s cache %s %s", h2.Get(HeaderSample), h2.Get(HeaderCache), b2)
			}
		})
	}
}

// TestNothingSentAfterFailedWrite: once the store has refused an answer,
// the proxy forwards nothing more (the answer could not be kept), as the
// replay client records nothing more.
func TestNothingSentAfterFailedWrite(t *testing.T) {
	up := newUpstream(t)
	dir := t.TempDir()
	rec := newProxy(t, dir, replay.Record, up)
	body := `{"model":"m","messages":[{"role":"user","content":"%s"}]}`
	if _, h, _, _ := call(t, "POST", rec.URL+"/v1/chat/completions", fmt.Sprintf(body, "one"), oaH); h.Get(HeaderCache) != "recorded" {
		t.Fatalf("first answer %q", h.Get(HeaderCache))
	}
	// The store's temporary folder becomes a file: no write succeeds.
	tmp := filepath.Join(dir, "tmp")
	if err := os.RemoveAll(tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmp, []byte("not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, h, _, _ := call(t, "POST", rec.URL+"/v1/chat/completions", fmt.Sprintf(body, "two"), oaH); h.Get(HeaderCache) != "not-stored" {
		t.Fatalf("second answer %q, want not-stored", h.Get(HeaderCache))
	}
	sent := up.requests()
	st, _, b, _ := call(t, "POST", rec.URL+"/v1/chat/completions", fmt.Sprintf(body, "three"), oaH)
	if st != http.StatusBadGateway || up.requests() != sent || !bytes.Contains(b, []byte("takes no writes")) {
		t.Fatalf("after a failed write: status %d, %d requests sent (want %d): %s", st, up.requests(), sent, b)
	}
}

// TestStoredStreams replays streams stored by hand one after another, so
// that each is read into a buffer an earlier one used and parsed in
// place: a long one with escapes, non-ASCII text, runs of plain bytes of
// every length and a b64 frame, a short one, one that fails to parse at
// its last frame only (answered as a miss, not one of its frames sent),
// and the long one again. Each frame's stored JSON is written beside the
// bytes it stands for.
func TestStoredStreams(t *testing.T) {
	type frame struct{ stored, want string }
	var long []frame
	for i := range 300 {
		pad := strings.Repeat("x", i%40)
		long = append(long, frame{
			fmt.Sprintf(`{"at_us":%d,"data":"data: {\"n\":%d,\"t\":\"caf\u00e9 \ud83d\ude00 中\\\/%s\"}\n\n"}`, i, i, pad),
			fmt.Sprintf("data: {\"n\":%d,\"t\":\"café 😀 中\\/%s\"}\n\n", i, pad),
		})
	}
	long = append(long, frame{`{"b64":"/w0K","at_us":300}`, "\xff\r\n"}, frame{`{"at_us":301,"data":"data: [DONE]\n\n"}`, "data: [DONE]\n\n"})
	short := []frame{{`{"at_us":0,"data":"data: {}\n\n"}`, "data: {}\n\n"}}
	// Valid JSON (the store takes only that), refused for its last frame.
	bad := append(short[:1:1], frame{`{"at_us":-1,"data":"data: [DONE]\n\n"}`, ""})
	streams := map[string][]frame{"long": long, "short": short, "bad": bad}
	dir := t.TempDir()
	store, err := cache.Open(dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	body := func(name string) string {
		return `{"model":"m","stream":true,"messages":[{"role":"user","content":"` + name + `"}]}`
	}
	for name, frames := range streams {
		var stored []string
		for _, f := range frames {
			stored = append(stored, f.stored)
		}
		resp := `{"finrepro_stream":1,"content_type":"text/event-stream; charset=utf-8","frames":[` + strings.Join(stored, ",") + `]}`
		raw, err := (&replay.Request{Provider: "openai", Endpoint: "chat/completions", Body: []byte(body(name))}).Encode()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Put(&cache.Exchange{Request: raw, Response: []byte(resp), Meta: cache.Meta{Source: cache.SourceSim}}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	store.Close()
	off := newProxy(t, dir, replay.Offline, nil)
	for i, name := range []string{"long", "short", "bad", "long"} {
		h := map[string]string{HeaderRun: fmt.Sprint("run ", i)}
		st, hdr, got, err := call(t, "POST", off.URL+"/v1/chat/completions", body(name), h)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if name == "bad" {
			if st != http.StatusNotFound || !bytes.Contains(got, []byte(TypeMiss)) || bytes.Contains(got, []byte("data:")) {
				t.Fatalf("bad: status %d: %s", st, got)
			}
			continue
		}
		var want strings.Builder
		for _, f := range streams[name] {
			want.WriteString(f.want)
		}
		if st != 200 || hdr.Get("Content-Type") != "text/event-stream; charset=utf-8" || string(got) != want.String() {
			t.Fatalf("%s: status %d, Content-Type %q:\n got %q\nwant %q", name, st, hdr.Get("Content-Type"), got, want.String())
		}
	}
	if c := off.srv.Counts(); c.Hits != 3 || c.Misses != 1 {
		t.Errorf("counts %+v, want 3 hits and 1 miss", c)
	}
}
