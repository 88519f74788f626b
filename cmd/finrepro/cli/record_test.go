package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const cliFakeKey = "sk-cli-FAKEKEY-abcdefghijklmnop0123"

// chatServer imitates an OpenAI-compatible chat completions endpoint. A
// user message starting with "fail" gets HTTP 400 with the caller's key
// echoed, as OpenAI does for a bad key.
type chatServer struct {
	*httptest.Server
	mu    sync.Mutex
	calls int
}

func newChatServer(t *testing.T) *chatServer {
	s := &chatServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.calls++
		s.mu.Unlock()
		var body struct {
			Model    string `json:"model"`
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&body) != nil || len(body.Messages) == 0 {
			http.Error(w, `{"error":{"message":"bad request"}}`, 400)
			return
		}
		user := body.Messages[len(body.Messages)-1].Content
		w.Header().Set("Content-Type", "application/json")
		if strings.HasPrefix(user, "fail") {
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s","type":"invalid_request_error"}}`, r.Header.Get("Authorization"))
			return
		}
		fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`,
			body.Model, "echo "+user)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *chatServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// run runs finrepro in-process with FAKE_KEY set.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &o, Stderr: &e, Getenv: func(k string) string {
		if k == "FAKE_KEY" {
			return cliFakeKey
		}
		return ""
	}}
	code = env.main(context.Background(), args)
	return code, o.String(), e.String()
}

func writeFile(t *testing.T, dir, name, s string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func reqLine(user string) string {
	return fmt.Sprintf(`{"body":{"model":"local-model","messages":[{"role":"user","content":%q}],"temperature":0}}`, user)
}

func TestRecordReplayCLI(t *testing.T) {
	srv := newChatServer(t)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "cache")
	reqs := writeFile(t, tmp, "reqs.jsonl", reqLine("one")+"\n"+reqLine("two")+"\n"+reqLine("three")+"\n")
	rec := []string{"record", "--requests", reqs, "--provider", "local", "--base-url", srv.URL + "/v1", "--key-env", "FAKE_KEY", "--dir", dir, "--quiet"}

	code, out, errOut := run(t, append(rec, "--dry-run")...)
	if code != ExitOK || srv.count() != 0 || !strings.Contains(out, "3 of 3 requests not in the cache") {
		t.Fatalf("dry run: code %d, calls %d\n%s%s", code, srv.count(), out, errOut)
	}
	code, out, errOut = run(t, rec...)
	if code != ExitOK || srv.count() != 3 || !strings.Contains(out, "0 already stored, 3 recorded, 0 failed") {
		t.Fatalf("record: code %d, calls %d\n%s%s", code, srv.count(), out, errOut)
	}
	code, out, _ = run(t, rec...)
	if code != ExitOK || srv.count() != 3 || !strings.Contains(out, "3 already stored, 0 recorded") {
		t.Fatalf("rerun: code %d, calls %d\n%s", code, srv.count(), out)
	}

	code, out, errOut = run(t, "replay", "--requests", reqs, "--provider", "local", "--dir", dir)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != ExitOK || len(lines) != 3 || errOut != "" {
		t.Fatalf("replay: code %d\n%s%s", code, out, errOut)
	}
	for i, want := range []string{"echo one", "echo two", "echo three"} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("replay line %d = %s, want %q", i, lines[i], want)
		}
	}

	code, out, _ = run(t, append(rec, "--refresh")...)
	if code != ExitOK || srv.count() != 6 || !strings.Contains(out, "3 recorded") {
		t.Fatalf("refresh: code %d, calls %d\n%s", code, srv.count(), out)
	}
	sample1 := writeFile(t, tmp, "s1.jsonl", strings.Replace(reqLine("two"), `{"body"`, `{"sample":1,"body"`, 1)+"\n")
	if code, out, _ = run(t, "replay", "--requests", sample1, "--provider", "local", "--dir", dir); code != ExitOK || !strings.Contains(out, "echo two") {
		t.Errorf("replay of the refreshed sample: code %d %s", code, out)
	}

	more := writeFile(t, tmp, "more.jsonl", reqLine("two")+"\n"+reqLine("four")+"\n")
	code, out, errOut = run(t, "replay", "--requests", more, "--provider", "local", "--dir", dir)
	// One output line per request line, in order: the miss is marked in
	// place, so that line 2 of the output answers line 2 of the input.
	replies := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != ExitMiss || len(replies) != 2 || !strings.Contains(replies[0], "echo two") || !strings.HasPrefix(replies[1], `{"finrepro_miss":"`) ||
		!strings.Contains(errOut, "1 of 2 requests not in the cache") || !strings.Contains(errOut, "more.jsonl:2") {
		t.Errorf("replay with a miss: code %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if srv.count() != 6 {
		t.Errorf("replay called the server")
	}
}

// TestRecordFailureCLI checks the exit code and the failure report of a
// partly failed recording, and that the echoed key reaches no output and
// no byte of the store.
func TestRecordFailureCLI(t *testing.T) {
	srv := newChatServer(t)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "cache")
	reqs := writeFile(t, tmp, "reqs.jsonl", reqLine("ok")+"\n"+reqLine("fail please")+"\n")
	code, out, errOut := run(t, "record", "--requests", reqs, "--provider", "local", "--base-url", srv.URL+"/v1",
		"--key-env", "FAKE_KEY", "--dir", dir)
	if code != ExitFailure || !strings.Contains(out, "failures by cause: http_error 1") || !strings.Contains(out, "1 recorded, 1 failed") {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out+errOut, "[REDACTED]") {
		t.Errorf("the echoed key was not redacted:\n%s%s", out, errOut)
	}
	if strings.Contains(out+errOut, cliFakeKey) {
		t.Errorf("the key reached an output:\n%s%s", out, errOut)
	}
	_, dump, _ := run(t, "replay", "--requests", reqs, "--provider", "local", "--dir", dir)
	if strings.Contains(dump, cliFakeKey) || !strings.Contains(dump, "echo ok") {
		t.Errorf("replay output %s", dump)
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(cliFakeKey)) {
				t.Errorf("%s holds the key", p)
			}
		}
		return nil
	})
}

func TestRecordUsageCLI(t *testing.T) {
	tmp := t.TempDir()
	reqs := writeFile(t, tmp, "reqs.jsonl", reqLine("x")+"\n")
	bad := writeFile(t, tmp, "bad.jsonl", `{"body":{"model":"m"}}`+"\n"+`{"body":[]}`+"\n")
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"record", "--requests", reqs}, ExitUsage, "--dir is required"},
		{[]string{"record", "--dir", tmp}, ExitUsage, "exactly one of"},
		{[]string{"record", "--requests", reqs, "--dir", tmp, "--provider", "custom"}, ExitUsage, "--base-url"},
		{[]string{"record", "--requests", reqs, "--dir", tmp, "--provider", "openai", "--kind", "soap"}, ExitUsage, "--kind"},
		{[]string{"record", "--requests", bad, "--dir", tmp, "--provider", "openai"}, ExitFailure, "bad.jsonl:2: body"},
		{[]string{"replay", "--requests", reqs}, ExitUsage, "required"},
		{[]string{"record", "--requests", reqs, "--dir", tmp, "--provider", "sim"}, ExitUsage, "simulator"},
		{[]string{"record", "--help"}, ExitOK, ""},
	}
	for _, tt := range tests {
		code, out, errOut := run(t, tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.msg) {
			t.Errorf("%v: code %d (want %d)\n%s%s", tt.args, code, tt.code, out, errOut)
		}
	}
}

// TestImportCLI exports a miss as Batch API input, imports a batch output
// and a hand-collected report, and replays both.
func TestImportCLI(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "cache")
	reqs := writeFile(t, tmp, "reqs.jsonl", `{"body":{"model":"gpt-4o","messages":[{"role":"user","content":"q"}]}}`+"\n")
	batch := filepath.Join(tmp, "batch.jsonl")
	code, out, errOut := run(t, "record", "--requests", reqs, "--provider", "openai", "--dir", dir, "--export-batch", batch)
	if code != ExitOK || !strings.Contains(out, "wrote 1 missing") {
		t.Fatalf("export: %d\n%s%s", code, out, errOut)
	}
	var in struct {
		CustomID string `json:"custom_id"`
	}
	b, _ := os.ReadFile(batch)
	json.Unmarshal(b, &in)
	res := writeFile(t, tmp, "out.jsonl", fmt.Sprintf(`{"id":"b1","custom_id":%q,"response":{"status_code":200,"request_id":"r","body":{"model":"gpt-4o","choices":[{"index":0,"message":{"content":"from batch"},"finish_reason":"stop"}]}},"error":null}`+"\n", in.CustomID))
	code, out, errOut = run(t, "record", "--import-batch-input", batch, "--import-batch-output", res, "--dir", dir)
	if code != ExitOK || !strings.Contains(out, "imported 1 batch results") {
		t.Fatalf("import batch: %d\n%s%s", code, out, errOut)
	}
	code, out, _ = run(t, "replay", "--requests", reqs, "--provider", "openai", "--dir", dir)
	if code != ExitOK || !strings.Contains(out, "from batch") {
		t.Errorf("replay of batch: %d %s", code, out)
	}

	writeFile(t, tmp, "t1.md", "# Hand-collected report\n")
	list := writeFile(t, tmp, "reports.jsonl", `{"prompt":{"provider":"openai","model":"o3-deep-research","user":"task 1"},"file":"t1.md","where":"chatgpt.com","when":"2025-06-01","product_version":"o3-deep-research"}`+"\n")
	code, out, errOut = run(t, "record", "--import-reports", list, "--dir", dir)
	if code != ExitOK || !strings.Contains(out, "imported 1 reports") {
		t.Fatalf("import reports: %d\n%s%s", code, out, errOut)
	}
	escape := writeFile(t, tmp, "escape.jsonl", `{"prompt":{"provider":"openai","model":"m","user":"u"},"file":"../x.md","where":"w","when":"d","product_version":"v"}`+"\n")
	if code, _, errOut := run(t, "record", "--import-reports", escape, "--dir", dir); code != ExitFailure || !strings.Contains(errOut, "escape.jsonl:1: file") {
		t.Errorf("path escape: %d %s", code, errOut)
	}
}

// TestRecordInterruptCLI interrupts a recording (as Ctrl-C cancels the
// command's context): the summary says how many requests were not sent
// and how to resume, and the rerun sends only those.
func TestRecordInterruptCLI(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		mu.Unlock()
		time.Sleep(50 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c","object":"chat.completion","created":1,"model":"local-model","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`)
	}))
	defer srv.Close()
	tmp := t.TempDir()
	var lines []string
	for i := range 12 {
		lines = append(lines, reqLine(fmt.Sprint("q", i)))
	}
	reqs := writeFile(t, tmp, "reqs.jsonl", strings.Join(lines, "\n")+"\n")
	args := []string{"record", "--requests", reqs, "--provider", "local", "--base-url", srv.URL + "/v1", "--key-env", "FAKE_KEY", "--dir", filepath.Join(tmp, "c"), "--concurrency", "1"}
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Millisecond)
	defer cancel()
	var o, e bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &o, Stderr: &e, Getenv: func(k string) string {
		if k == "FAKE_KEY" {
			return cliFakeKey
		}
		return ""
	}}
	code := env.main(ctx, args)
	mu.Lock()
	sent := calls
	mu.Unlock()
	if sent >= len(lines) {
		t.Skip("the recording finished before the interrupt")
	}
	if code != ExitFailure || !strings.Contains(o.String(), "Interrupted:") || !strings.Contains(o.String(), "Run the same command again") {
		t.Fatalf("interrupted record: exit %d\n%s%s", code, o.String(), e.String())
	}
	if strings.Contains(e.String(), "failed local") {
		t.Errorf("canceled calls logged as failures:\n%s", e.String())
	}
	code, out, errOut := run(t, args...)
	if code != ExitOK || !strings.Contains(out, "already stored") {
		t.Fatalf("resume: exit %d\n%s%s", code, out, errOut)
	}
}
