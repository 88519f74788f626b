package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestProxyCLI starts finrepro proxy offline on a free port, sends it a
// request that is not stored, and stops it: the answer is a 404 miss,
// the log has its line and the final counts are printed.
func TestProxyCLI(t *testing.T) {
	dir := t.TempDir()
	logFile := filepath.Join(dir, "proxy.jsonl")
	var stderr syncBuffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		code <- env.main(ctx, []string{"proxy", "--dir", filepath.Join(dir, "cache"), "--listen", "127.0.0.1:0",
			"--log", logFile, "--misses", filepath.Join(dir, "misses")})
	}()
	addr := regexp.MustCompile(`listening on (http://\S+)`)
	var base string
	for i := 0; i < 200 && base == ""; i++ {
		time.Sleep(10 * time.Millisecond)
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		t.Fatalf("the proxy did not start: %s", stderr.String())
	}
	resp, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "finrepro_cache_miss") {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	cancel()
	if c := <-code; c != ExitOK {
		t.Fatalf("exit %d: %s", c, stderr.String())
	}
	if !strings.Contains(stderr.String(), "misses 1") {
		t.Errorf("no final counts: %s", stderr.String())
	}
	b, err := os.ReadFile(logFile)
	if err != nil || strings.Count(string(b), "\n") != 1 || !strings.Contains(string(b), `"outcome":"miss"`) {
		t.Fatalf("log %q (%v)", b, err)
	}
}

// TestProxyUsageCLI checks the proxy's usage errors.
func TestProxyUsageCLI(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"proxy"},
		{"proxy", "--dir", dir, "--mode", "online"},
		{"proxy", "--dir", dir, "--upstream", "openai"},
		{"proxy", "--dir", dir, "--upstream", "x=ftp://h"},
		{"proxy", "--dir", dir, "--pace", "fast"},
		{"proxy", "--dir", dir, "extra"},
	} {
		if code, _, stderr := run(t, args...); code != ExitUsage {
			t.Errorf("%q: exit %d, want %d: %s", args, code, ExitUsage, stderr)
		}
	}
}
