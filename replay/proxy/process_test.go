package proxy

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/replay"
)

// TestCurlFramesOneByOne reads a recording stream with curl -N while the
// upstream sends each frame only after curl has printed the one before:
// a proxy that buffered frames would stall. Then it replays the stream
// with recorded pacing and checks that curl sees the frames spread out.
func TestCurlFramesOneByOne(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl not installed")
	}
	up := newUpstream(t)
	step := make(chan struct{})
	up.setDelay(func() {
		select {
		case <-step:
		case <-time.After(5 * time.Second):
		}
	})
	dir := t.TempDir()
	rec := newProxy(t, dir, replay.Record, up)
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"one by one"}]}`
	args := []string{"-sN", "-H", "Content-Type: application/json", "-d", body}
	cmd := exec.Command(curl, append(args, rec.URL+"/v1/chat/completions")...)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	frames := 0
	for sc.Scan() {
		if !strings.HasPrefix(sc.Text(), "data: ") {
			continue
		}
		frames++
		if sc.Text() == "data: [DONE]" {
			break
		}
		// The upstream waits for this before its next frame.
		select {
		case step <- struct{}{}:
		case <-time.After(5 * time.Second):
			t.Fatalf("frame %d: the upstream did not ask for the next frame", frames)
		}
	}
	cmd.Wait()
	// Five frames (role, three pieces, finish), then [DONE].
	if frames != 6 {
		t.Fatalf("curl read %d frames, want 6", frames)
	}
	rec.Close()
	rec.store.Close()

	// The recorded gaps are the test's own lock steps: a few ms each.
	// Replayed with recorded pacing they keep their order and offsets.
	off := newProxy(t, dir, replay.Offline, nil, func(c *Config) { c.Pace = Recorded })
	cmd = exec.Command(curl, append(args, off.URL+"/v1/chat/completions")...)
	stdout, _ = cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc = bufio.NewScanner(stdout)
	n := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			n++
		}
	}
	cmd.Wait()
	if n != 6 {
		t.Fatalf("offline: curl read %d frames, want 6", n)
	}
}

// helperEnv makes the test binary a proxy process (see
// TestProxyProcess): its value is the cache folder.
const helperEnv = "FINREPRO_PROXY_HELPER_DIR"

// TestProxyProcess is a recording proxy in a process of its own when
// helperEnv is set; it writes its address to DIR.addr and serves until
// killed. Otherwise it does nothing.
func TestProxyProcess(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		return
	}
	store, err := cache.Open(dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	client := replay.New(store, replay.Config{Providers: map[string]replay.ProviderConfig{
		"openai": {Kind: replay.KindChat, BaseURL: os.Getenv("FINREPRO_PROXY_HELPER_UPSTREAM") + "/v1"},
	}})
	srv, err := New(Config{Mode: replay.Record, Client: client})
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv}
	ln, err := listen()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+".addr", []byte(ln.Addr().String()), 0o644); err != nil {
		t.Fatal(err)
	}
	hs.Serve(ln)
}

// TestKillMidStream kills a recording proxy process with SIGKILL in the
// middle of a stream: nothing of the stream is stored, the cache is
// sound, and a rerun records the exchange whole.
func TestKillMidStream(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	up := newUpstream(t)
	hold := make(chan struct{})
	frames := make(chan struct{}, 16)
	up.setDelay(func() {
		frames <- struct{}{}
		<-hold
	})
	dir := filepath.Join(t.TempDir(), "cache")
	cmd := exec.Command(os.Args[0], "-test.run=^TestProxyProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir, "FINREPRO_PROXY_HELPER_UPSTREAM="+up.URL)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var addr []byte
	for i := 0; i < 200 && len(addr) == 0; i++ {
		time.Sleep(25 * time.Millisecond)
		addr, _ = os.ReadFile(dir + ".addr")
	}
	if len(addr) == 0 {
		t.Fatal("the proxy process did not start")
	}
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"killed"}]}`
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+string(addr)+"/v1/chat/completions", strings.NewReader(body))
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	select {
	case <-frames: // the first frame is out: the stream is under way
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not start")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	close(hold)
	store, err := cache.Open(dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := store.Keys()
	if err != nil || len(keys) != 0 {
		t.Fatalf("after the kill the cache holds %d exchanges (%v)", len(keys), err)
	}
	if ps := store.Problems(); len(ps) != 0 {
		t.Fatalf("problems after the kill: %v", ps)
	}
	store.Close()
	up.setDelay(nil)
	rec := newProxy(t, dir, replay.Record, up)
	st, h, b, err := call(t, "POST", rec.URL+"/v1/chat/completions", body, oaH)
	if err != nil || st != 200 || h.Get(HeaderCache) != "recorded" || !strings.HasSuffix(string(b), "data: [DONE]\n\n") {
		t.Fatalf("rerun: %d %v %s %q", st, err, h.Get(HeaderCache), b)
	}
}

func listen() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }
