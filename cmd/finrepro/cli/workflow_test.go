package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/finrepro/finrepro/results"
)

// forecastServer imitates an OpenAI-compatible server whose model answers
// forecasting questions: every reply ends with a final answer.
type forecastServer struct {
	*httptest.Server
	mu    sync.Mutex
	calls int
}

func newForecastServer(t *testing.T) *forecastServer {
	s := &forecastServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Model string `json:"model"`
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&body) != nil {
			http.Error(w, `{"error":{"message":"bad request"}}`, 400)
			return
		}
		s.mu.Lock()
		s.calls++
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"Reasoning from public data.\nFinal answer: Yes\nEvidence:\n"},"finish_reason":"stop"}],"usage":{"prompt_tokens":50,"completion_tokens":9}}`, body.Model)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *forecastServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// readmeExample returns the command lines of the README's worked example.
func readmeExample(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "<!-- worked example -->\n```sh\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("README has no worked example block")
	}
	return strings.Split(strings.TrimSpace(block), "\n")
}

// shellWords splits a command line at spaces outside double quotes.
func shellWords(line string) []string {
	var out []string
	var cur strings.Builder
	quoted, in := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, in = !quoted, true
		case r == ' ' && !quoted:
			if in {
				out = append(out, cur.String())
				cur.Reset()
			}
			in = false
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// TestReadmeWorkedExample runs the README's "Adding your own agent" lines
// one by one, with the local server's URL for localhost:8000: the
// requests that "finrepro requests" writes, recorded by "finrepro
// record", make the offline reproduce succeed with no miss, and the
// agent's late predictions are reported on the terminal.
func TestReadmeWorkedExample(t *testing.T) {
	srv := newForecastServer(t)
	lines := readmeExample(t)
	t.Chdir(t.TempDir())
	if len(lines) < 6 {
		t.Fatalf("worked example has %d lines", len(lines))
	}
	var last string
	for _, line := range lines {
		line = strings.ReplaceAll(line, "http://localhost:8000/v1", srv.URL+"/v1")
		words := shellWords(line)
		if words[0] != "finrepro" {
			t.Fatalf("%q: not a finrepro command", line)
		}
		args, redirect := words[1:], ""
		if n := len(args); n >= 2 && args[n-2] == ">" {
			args, redirect = args[:n-2], args[n-1]
		}
		code, out, errOut := run(t, args...)
		if code != ExitOK {
			t.Fatalf("%s: exit %d\n%s%s", line, code, out, errOut)
		}
		if redirect != "" {
			if err := os.WriteFile(redirect, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		last = out + errOut
	}
	// The agent answers all 24 forecasting tasks of the small demo.
	if srv.count() != 24 {
		t.Errorf("the server answered %d requests, want 24", srv.count())
	}
	if !strings.Contains(last, `every prediction of "My Agent" (24 of 24) was recorded after its task's deadline`) {
		t.Errorf("reproduce does not report the late predictions:\n%s", last)
	}
	// The recorded requests replay: a second requests --missing is empty.
	code, out, errOut := run(t, "requests", "mine", "--benchmark", "findeepforecast", "--system", "My Agent", "--missing")
	if code != ExitOK || out != "" || !strings.Contains(errOut, "wrote 0 missing requests (24 already in the cache)") {
		t.Errorf("requests after recording: %d %q %s", code, out, errOut)
	}
	// The provenance of the added system reaches the outputs.
	sums, err := os.ReadFile(filepath.Join("mine-out", "json", "findeepforecast", "headline.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(sums, []byte("My Agent")) {
		t.Errorf("headline.json has no My Agent")
	}
}

// TestBundleSealCreateDiff seals a deliberate edit, refuses a folder that
// is not a bundle, packs deterministically and diffs two bundles.
func TestBundleSealCreateDiff(t *testing.T) {
	tmp := t.TempDir()
	a := filepath.Join(tmp, "a")
	if code, out, errOut := run(t, "bundle", "create", "--out", a, "--from", "@demo"); code != ExitOK || !strings.Contains(out, "sealed and verified") {
		t.Fatalf("create: %d %s%s", code, out, errOut)
	}
	if code, _, errOut := run(t, "bundle", "create", "--out", a, "--from", "@demo"); code != ExitUsage || !strings.Contains(errOut, "not empty") {
		t.Errorf("create into a full folder: %d %s", code, errOut)
	}
	// A deliberate edit: the configuration grows by 10 bytes, a file is added.
	cfg := filepath.Join(a, "inputs", "findeepforecast", "config.json")
	old, _ := os.ReadFile(cfg)
	edited := bytes.Replace(old, []byte(`"evaluated_at":`), []byte(`"evaluated_at"          :`), 1)
	if len(edited) != len(old)+10 {
		t.Fatalf("edit: %d -> %d bytes", len(old), len(edited))
	}
	os.WriteFile(cfg, edited, 0o644)
	os.WriteFile(filepath.Join(a, "NOTES.md"), []byte("notes\n"), 0o644)
	if code, _, _ := run(t, "bundle", "verify", a); code != ExitIntegrity {
		t.Errorf("verify after an edit: exit %d, want %d", code, ExitIntegrity)
	}
	code, out, errOut := run(t, "bundle", "seal", a)
	want := fmt.Sprintf("  added   NOTES.md (6 bytes)\n  changed inputs/findeepforecast/config.json (%d -> %d bytes)\n", len(old), len(old)+10)
	if code != ExitOK || !strings.HasPrefix(out, want) {
		t.Errorf("seal: %d\n%s\nwant prefix\n%s%s", code, out, want, errOut)
	}
	if code, _, errOut := run(t, "bundle", "verify", a); code != ExitOK {
		t.Errorf("verify after seal: %d %s", code, errOut)
	}
	if code, out, _ := run(t, "bundle", "seal", a); code != ExitOK || !strings.Contains(out, "nothing changed") {
		t.Errorf("second seal: %d %s", code, out)
	}
	plain := filepath.Join(tmp, "plain")
	os.MkdirAll(plain, 0o755)
	os.WriteFile(filepath.Join(plain, "x.txt"), []byte("x"), 0o644)
	if code, _, errOut := run(t, "bundle", "seal", plain); code != ExitIntegrity || !strings.Contains(errOut, "is not a bundle") {
		t.Errorf("seal of a plain folder: %d %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(plain, results.ManifestName)); err == nil {
		t.Error("seal wrote a manifest into a plain folder")
	}

	// pack twice: the same bytes; the archive verifies.
	p1, p2 := filepath.Join(tmp, "1.tar.zst"), filepath.Join(tmp, "2.tar.zst")
	for _, p := range []string{p1, p2} {
		if code, _, errOut := run(t, "bundle", "pack", a, "--out", p); code != ExitOK {
			t.Fatalf("pack: %d %s", code, errOut)
		}
	}
	b1, _ := os.ReadFile(p1)
	b2, _ := os.ReadFile(p2)
	if !bytes.Equal(b1, b2) {
		t.Error("two packs of one bundle differ")
	}
	if code, _, errOut := run(t, "bundle", "verify", p1); code != ExitOK {
		t.Errorf("verify of the pack: %d %s", code, errOut)
	}

	// create from the pack with a replaced published table, then diff.
	b := filepath.Join(tmp, "b")
	pub := filepath.Join(tmp, "pub")
	os.MkdirAll(pub, 0o755)
	orig, err := os.ReadFile(filepath.Join(a, "published", "findeepforecast", "headline.csv"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(pub, "headline.csv"), orig, 0o644)
	os.WriteFile(filepath.Join(pub, "ignored.txt"), []byte("not a table"), 0o644)
	if code, out, errOut := run(t, "bundle", "create", "--out", b, "--from", p1, "--published", "findeepforecast="+pub); code != ExitOK {
		t.Fatalf("create from pack: %d %s%s", code, out, errOut)
	}
	if code, out, errOut := run(t, "system", "add", b, "--benchmark", "findeepforecast", "--name", "New One", "--provider", "vllm", "--model", "m"); code != ExitOK {
		t.Fatalf("system add: %d %s%s", code, out, errOut)
	}
	code, out, errOut = run(t, "bundle", "diff", a, b)
	for _, w := range []string{
		"removed published/findeepforecast/markets.csv",
		"changed inputs/findeepforecast/config.json",
		`findeepforecast: system "New One" only in B`,
		"Exchanges: 0 only in A, 0 only in B, 0 with another response",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("diff lacks %q:\n%s%s", w, out, errOut)
		}
	}
	if code != ExitOK {
		t.Errorf("diff: exit %d", code)
	}
}

// TestEndpointRuleShared: the request of an exchange that cache load
// stores is answered by replay --requests in the same form, and an
// endpoint one refuses the other refuses too.
func TestEndpointRuleShared(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "cache")
	req := `{"provider":"openai","endpoint":"chat/completions","body":{"model":"m","messages":[{"role":"user","content":"q"}]}}`
	writeFile(t, tmp, "x.jsonl", `{"request":`+req+`,"response":{"choices":[{"message":{"content":"stored answer"}}]}}`+"\n")
	if code, out, errOut := run(t, "cache", "load", "--dir", dir, filepath.Join(tmp, "x.jsonl")); code != ExitOK {
		t.Fatalf("load: %d %s%s", code, out, errOut)
	}
	writeFile(t, tmp, "r.jsonl", req+"\n")
	if code, out, errOut := run(t, "replay", "--requests", filepath.Join(tmp, "r.jsonl"), "--dir", dir); code != ExitOK || !strings.Contains(out, "stored answer") {
		t.Errorf("replay of a loaded request: %d %s%s", code, out, errOut)
	}
	bad := strings.Replace(req, `"chat/completions"`, `"/v1/chat/completions"`, 1)
	writeFile(t, tmp, "bad.jsonl", `{"request":`+bad+`,"response":{}}`+"\n")
	code, _, loadErr := run(t, "cache", "load", "--strict", "--dir", dir, filepath.Join(tmp, "bad.jsonl"))
	if code == ExitOK || !strings.Contains(loadErr, `starts with /`) {
		t.Errorf("load of /v1/...: %d %s", code, loadErr)
	}
	writeFile(t, tmp, "badr.jsonl", bad+"\n")
	code, _, replayErr := run(t, "replay", "--requests", filepath.Join(tmp, "badr.jsonl"), "--dir", dir)
	if code == ExitOK || !strings.Contains(replayErr, `starts with /`) {
		t.Errorf("replay of /v1/...: %d %s", code, replayErr)
	}
}

// TestBundleCreateFromParts makes a bundle from one benchmark's inputs
// and a recorded cache, then diffs a changed configuration: the
// published cells that move are listed.
func TestBundleCreateFromParts(t *testing.T) {
	srv := newChatServer(t)
	tmp := t.TempDir()
	demoDir := demoCopy(t)
	// A cache recorded elsewhere, with one real exchange.
	rec := filepath.Join(tmp, "rec")
	reqs := writeFile(t, tmp, "reqs.jsonl", reqLine("one")+"\n")
	if code, out, errOut := run(t, "record", "--requests", reqs, "--provider", "local", "--base-url", srv.URL+"/v1", "--dir", rec, "--quiet"); code != ExitOK {
		t.Fatalf("record: %d %s%s", code, out, errOut)
	}
	b := filepath.Join(tmp, "b")
	in := filepath.Join(demoDir, "inputs", "findeepforecast")
	code, out, errOut := run(t, "bundle", "create", "--out", b, "--inputs", "findeepforecast="+in, "--published", "findeepforecast="+filepath.Join(demoDir, "published", "findeepforecast"), "--cache", filepath.Join(demoDir, "cache"), "--cache", rec, "--name", "parts")
	if code != ExitOK || !strings.Contains(out, "(parts)") || !strings.Contains(out, "benchmarks findeepforecast;") {
		t.Fatalf("create: %d %s%s", code, out, errOut)
	}
	m, err := results.OpenBundle(b)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Manifest.Synthetic || !slices.Equal(m.Manifest.Benchmarks, []string{"findeepforecast"}) {
		t.Errorf("manifest: %+v", m.Manifest)
	}
	// The recorded exchange is in the new bundle's cache.
	code, out, _ = run(t, "replay", "--requests", reqs, "--provider", "local", "--dir", filepath.Join(b, "cache"))
	if code != ExitOK || !strings.Contains(out, "echo one") {
		t.Errorf("replay from the created bundle: %d %s", code, out)
	}
	if code, _, errOut := run(t, "reproduce", b, "--no-sweep", "--out", filepath.Join(tmp, "o")); code != ExitOK {
		t.Errorf("reproduce of the created bundle: %d %s", code, errOut)
	}
	if code, _, errOut := run(t, "bundle", "create", "--out", filepath.Join(tmp, "c"), "--inputs", "nosuch="+in); code != ExitUsage || !strings.Contains(errOut, "known: icbcbench") {
		t.Errorf("unknown benchmark: %d %s", code, errOut)
	}

	// Evaluated a week later, more tasks are resolved: cells move.
	c := filepath.Join(tmp, "c")
	if code, _, errOut := run(t, "bundle", "create", "--out", c, "--from", b); code != ExitOK {
		t.Fatalf("create c: %d %s", code, errOut)
	}
	cfg := filepath.Join(c, "inputs", "findeepforecast", "config.json")
	old, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, bytes.Replace(old, []byte(`"evaluated_at": "2026-02-02T00:00:00Z"`), []byte(`"evaluated_at": "2025-11-20T00:00:00Z"`), 1), 0o644)
	if code, _, errOut := run(t, "bundle", "seal", c); code != ExitOK {
		t.Fatalf("seal: %d %s", code, errOut)
	}
	code, out, errOut = run(t, "bundle", "diff", b, c)
	if code != ExitOK || strings.Contains(out, "Published cells that would change from A to B: 0\n") || !strings.Contains(out, "findeepforecast headline ") {
		t.Errorf("diff of an earlier evaluation date: %d\n%s%s", code, out, errOut)
	}
}

// TestRecordWithSimulatedJudges grows a copy of the demo with a real
// ICBCBench system (whose answers a simulated judge would grade): recording says up front that the judges are
// simulated, records the system's own calls, fails on the judges' and
// still leaves a bundle that verifies, with the recorded calls kept.
func TestRecordWithSimulatedJudges(t *testing.T) {
	srv := newChatServer(t)
	dir := demoCopy(t)
	if code, out, errOut := run(t, "system", "add", dir, "--benchmark", "icbcbench", "--name", "Local", "--provider", "vllm", "--model", "m"); code != ExitOK {
		t.Fatalf("system add: %d %s%s", code, out, errOut)
	}
	code, _, errOut := run(t, "reproduce", dir, "--mode", "record", "--yes", "--no-sweep", "--base-url", "vllm="+srv.URL+"/v1", "--out", filepath.Join(t.TempDir(), "o"))
	up := strings.Index(errOut, "judges are simulated")
	if code != ExitFailure || up < 0 || !strings.Contains(errOut, "could not be recorded (what was recorded is kept and sealed)") {
		t.Fatalf("record: %d\n%s", code, errOut)
	}
	if srv.count() == 0 {
		t.Error("the system's own calls were not recorded")
	}
	if code, _, errOut := run(t, "bundle", "verify", dir); code != ExitOK {
		t.Errorf("bundle after a partly failed recording: %d %s", code, errOut)
	}
	code, out, _ := run(t, "requests", dir, "--benchmark", "icbcbench", "--system", "Local", "--missing")
	if code != ExitOK || out != "" {
		t.Errorf("the recorded calls are not kept: %d %q", code, out)
	}
	// The built-in demo itself cannot be recorded into, and says how.
	if code, _, errOut := run(t, "reproduce", "--mode", "record", "--yes"); code != ExitUsage || !strings.Contains(errOut, "bundle create --out") {
		t.Errorf("record into the built-in demo: %d %s", code, errOut)
	}
}
