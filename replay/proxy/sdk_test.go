package proxy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/replay"
)

// sdkDir holds the SDK scripts and their pinned packages (package.json,
// package-lock.json); "npm ci" there installs node_modules.
const sdkDir = "testdata/sdk"

// needSDKs skips the test when node or the installed SDKs are missing,
// unless FINREPRO_SDK_TESTS=1 (set by CI), where that is a failure.
func needSDKs(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(sdkDir, "node_modules", "openai"))
	}
	if err != nil {
		if os.Getenv("FINREPRO_SDK_TESTS") == "1" {
			t.Fatalf("FINREPRO_SDK_TESTS=1 but the SDKs cannot run: %v (run npm ci in %s)", err, sdkDir)
		}
		t.Skipf("SDK tests skipped: %v (run npm ci in %s)", err, sdkDir)
	}
	return node
}

// runScript runs one SDK script against the proxy at base and returns
// what it printed.
func runScript(t *testing.T, node, script, base string) []byte {
	t.Helper()
	cmd := exec.Command(node, script)
	cmd.Dir = sdkDir
	cmd.Env = append(os.Environ(),
		"OPENAI_BASE_URL="+base+"/v1", "OPENAI_API_KEY="+openAIKey,
		"ANTHROPIC_BASE_URL="+base+"/anthropic", "ANTHROPIC_API_KEY="+anthropicKey,
		"GEMINI_BASE_URL="+base+"/gemini", "GEMINI_API_KEY="+geminiKey,
		"OPENAI_LOG=off", "ANTHROPIC_LOG=off",
	)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s\nstdout:\n%s", script, err, stderr.String(), out)
	}
	return out
}

// TestSDKs runs the official OpenAI, Anthropic and Gemini SDKs through the
// proxy: recording in front of an upstream that speaks each wire format
// (with a 429 and Retry-After, a 500, a stream cut before its terminal
// event and an in-stream error event along the way), then offline with
// the upstream stopped. The scripts print the same bytes both times, the
// upstream sees no request offline, and no stored byte holds an API key.
func TestSDKs(t *testing.T) {
	node := needSDKs(t)
	scripts := []string{"openai.mjs", "anthropic.mjs", "gemini.mjs"}
	up := newUpstream(t)
	dir := t.TempDir()
	rec := newProxy(t, dir, replay.Record, up)
	recorded := map[string][]byte{}
	for _, s := range scripts {
		recorded[s] = runScript(t, node, s, rec.URL)
		t.Logf("%s:\n%s", s, recorded[s])
	}
	c := rec.srv.Counts()
	// Each script meets one cut stream and one error event (failed) and
	// a 429 and a 500 passed through.
	if c.Failed != 6 || c.Upstream != 6 || c.Misses != 0 {
		t.Errorf("recording counts %+v, want 6 failed and 6 upstream errors\n%s", c, rec.log)
	}
	rec.Close()
	rec.store.Close()
	up.Close()
	n := up.requests()
	// Every request reached the upstream with its credential.
	for _, r := range up.reqs {
		if r.Header.Get("Authorization") == "" && r.Header.Get("X-Api-Key") == "" && r.Header.Get("X-Goog-Api-Key") == "" {
			t.Errorf("%s %s reached the upstream without its credential", r.Method, r.Path)
		}
	}
	off := newProxy(t, dir, replay.Offline, nil)
	for _, s := range scripts {
		got := runScript(t, node, s, off.URL)
		if !bytes.Equal(got, recorded[s]) {
			t.Errorf("%s: offline output differs from the recording run:\n%s", s, lineDiff(recorded[s], got))
		}
	}
	if c := off.srv.Counts(); c.Misses != 0 || c.Failed != 0 || c.Upstream != 0 || c.Hits == 0 {
		t.Errorf("offline counts %+v\n%s", c, off.log)
	}
	if up.requests() != n {
		t.Errorf("the upstream saw %d requests offline", up.requests()-n)
	}
	assertNoSecrets(t, dir, openAIKey, anthropicKey, geminiKey, "org-secretorganisation")
	for _, key := range []string{openAIKey, anthropicKey, geminiKey} {
		if strings.Contains(rec.log.String()+off.log.String(), key) {
			t.Error("an API key reached the request log")
		}
	}
	for s, out := range recorded {
		for _, want := range []string{"repeat.1", "repeat.2", "stream"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("%s printed no %s result", s, want)
			}
		}
	}
}

// lineDiff shows the first differing line of two outputs.
func lineDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return "line " + strconv.Itoa(i+1) + ":\n- " + x + "\n+ " + y
		}
	}
	return "(equal lines)"
}
