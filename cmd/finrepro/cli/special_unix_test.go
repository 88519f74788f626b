//go:build unix

package cli

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/finrepro/finrepro/results"
)

// plant replaces the file at p by a hostile one: a FIFO, a symbolic link
// to /dev/zero, or a sparse regular file of 8 GiB.
func plant(t *testing.T, p, kind string) {
	t.Helper()
	if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var err error
	switch kind {
	case "fifo":
		err = syscall.Mkfifo(p, 0o644)
	case "zero":
		err = os.Symlink("/dev/zero", p)
	case "sparse":
		var f *os.File
		if f, err = os.Create(p); err == nil {
			err = f.Truncate(8 << 30)
			f.Close()
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

// runBounded runs finrepro and fails the test when it takes more than
// 20 s or allocates more than 256 MiB.
func runBounded(t *testing.T, args ...string) (int, string) {
	t.Helper()
	type result struct {
		code   int
		stderr string
	}
	done := make(chan result, 1)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	go func() {
		code, _, errOut := run(t, args...)
		done <- result{code, errOut}
	}()
	select {
	case r := <-done:
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > 256<<20 {
			t.Errorf("%s allocated %d MiB", strings.Join(args, " "), n>>20)
		}
		return r.code, r.stderr
	case <-time.After(20 * time.Second):
		t.Fatalf("%s still running after 20 s", strings.Join(args, " "))
	}
	return 0, ""
}

// TestSpecialFiles plants FIFOs, links to /dev/zero and an 8 GiB sparse
// file where a bundle has its manifest, a listed file, the cache's
// FORMAT and a pack: every command finishes at once with exit 4, naming
// the file, without reading it.
func TestSpecialFiles(t *testing.T) {
	for _, tc := range []struct {
		file  string // slash path in the bundle; "pack" is the first pack
		kinds []string
	}{
		{results.ManifestName, []string{"fifo", "zero", "sparse"}},
		{"inputs/icbcbench/tasks.jsonl", []string{"fifo", "zero", "sparse"}},
		{"cache/FORMAT", []string{"fifo", "zero", "sparse"}},
		{"pack", []string{"fifo", "zero"}},
	} {
		for _, kind := range tc.kinds {
			t.Run(strings.ReplaceAll(tc.file, "/", "_")+"_"+kind, func(t *testing.T) {
				dir := makeBundle(t)
				p := filepath.Join(dir, filepath.FromSlash(tc.file))
				if tc.file == "pack" {
					ps, _ := filepath.Glob(filepath.Join(dir, "cache", "packs", "*", "*.pack"))
					p = ps[0]
				}
				plant(t, p, kind)
				name := filepath.Base(p)
				cmds := [][]string{
					{"bundle", "verify", dir},
					{"reproduce", dir, "--quiet", "--out", filepath.Join(t.TempDir(), "out")},
				}
				if strings.HasPrefix(tc.file, "cache/") || tc.file == "pack" {
					cmds = append(cmds, []string{"cache", "verify", "--dir", filepath.Join(dir, "cache")},
						[]string{"cache", "stats", "--dir", filepath.Join(dir, "cache")})
				}
				for _, args := range cmds {
					code, errOut := runBounded(t, args...)
					if code != ExitIntegrity || !strings.Contains(errOut, name) {
						t.Errorf("%s: exit %d, want %d naming %s\n%s", strings.Join(args[:2], " "), code, ExitIntegrity, name, errOut)
					}
				}
			})
		}
	}
}

// unwritable makes the store in dir refuse new files even to root: its
// tmp folder becomes a link to /sys, where nobody may create a file.
func unwritable(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile("/sys/finrepro-probe", nil, 0o644); err == nil {
		os.Remove("/sys/finrepro-probe")
		t.Skip("/sys takes new files here")
	}
	if err := os.RemoveAll(filepath.Join(dir, "tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/sys", filepath.Join(dir, "tmp")); err != nil {
		t.Fatal(err)
	}
}

// TestRecordUnwritableStore records into a store that takes no writes:
// nothing is sent, and the error says why; cache load into it says so
// too and claims no exchange stored.
func TestRecordUnwritableStore(t *testing.T) {
	srv := newChatServer(t)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "cache")
	if code, _, errOut := cacheCLI(t, "", nil, "cache", "load", "--dir", dir); code != 0 {
		t.Fatalf("create: %d %s", code, errOut)
	}
	unwritable(t, dir)
	reqs := writeFile(t, tmp, "reqs.jsonl", reqLine("one")+"\n"+reqLine("two")+"\n"+reqLine("three")+"\n")
	code, out, errOut := run(t, "record", "--requests", reqs, "--provider", "local", "--base-url", srv.URL+"/v1", "--key-env", "FAKE_KEY", "--dir", dir, "--quiet")
	if code != ExitFailure || srv.count() != 0 || !strings.Contains(errOut, "cannot take writes") || !strings.Contains(errOut, "0 calls were paid") {
		t.Errorf("record: exit %d, %d calls\n%s%s", code, srv.count(), out, errOut)
	}
	code, out, errOut = cacheCLI(t, exchangeLines(2), nil, "cache", "load", "--dir", dir)
	if code != ExitFailure || strings.Contains(out, "new exchanges") || !strings.Contains(errOut, "cannot take writes") {
		t.Errorf("load: exit %d\n%s%s", code, out, errOut)
	}
}

// TestRecordStopsAtFirstFailedWrite makes the store refuse writes once
// the first call is answered (its tmp folder becomes a file): the
// recording stops there, and says one call was paid for and lost.
func TestRecordStopsAtFirstFailedWrite(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "cache")
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 { // one request at a time (--concurrency 1)
			os.RemoveAll(filepath.Join(dir, "tmp"))
			os.WriteFile(filepath.Join(dir, "tmp"), []byte("a file where a folder is expected"), 0o644)
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c","object":"chat.completion","model":"local-model","choices":[{"index":0,"message":{"role":"assistant","content":"yes"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3}}`)
	}))
	defer srv.Close()
	var lines []string
	for i := range 20 {
		lines = append(lines, reqLine(fmt.Sprintf("q%d", i)))
	}
	reqs := writeFile(t, tmp, "reqs.jsonl", strings.Join(lines, "\n")+"\n")
	code, out, errOut := run(t, "record", "--requests", reqs, "--provider", "local", "--base-url", srv.URL+"/v1", "--dir", dir, "--quiet", "--concurrency", "1")
	if code != ExitFailure || calls.Load() != 1 || !strings.Contains(errOut, "1 calls were paid for") || !strings.Contains(errOut, "19 other requests") {
		t.Errorf("record: exit %d, %d calls\n%s%s", code, calls.Load(), out, errOut)
	}
}

// TestOutputLinks plants links in the output folder: out/site pointing to
// a folder elsewhere, and out/csv/<file> pointing to a file elsewhere.
// reproduce writes nothing outside --out, the site is a real folder and
// SHA256SUMS lists exactly the files there.
func TestOutputLinks(t *testing.T) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "out")
	if code, _, errOut := run(t, "reproduce", "--quiet", "--no-sweep", "--out", out); code != 0 {
		t.Fatalf("first run: %d %s", code, errOut)
	}
	csvs, _ := filepath.Glob(filepath.Join(out, "csv", "*", "*.csv"))
	if len(csvs) == 0 {
		csvs, _ = filepath.Glob(filepath.Join(out, "csv", "*.csv"))
	}
	if len(csvs) == 0 {
		t.Fatal("no CSV output")
	}
	elsewhere := filepath.Join(tmp, "elsewhere")
	os.Mkdir(elsewhere, 0o755)
	victim := filepath.Join(tmp, "victim.csv")
	os.WriteFile(victim, []byte("keep me\n"), 0o644)
	os.RemoveAll(filepath.Join(out, "site"))
	if err := os.Symlink(elsewhere, filepath.Join(out, "site")); err != nil {
		t.Fatal(err)
	}
	os.Remove(csvs[0])
	if err := os.Symlink(victim, csvs[0]); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := run(t, "reproduce", "--quiet", "--no-sweep", "--out", out); code != 0 {
		t.Fatalf("second run: %d %s", code, errOut)
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Errorf("%d files written through the out/site link", len(ents))
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me\n" {
		t.Errorf("the file behind the out/csv link was overwritten")
	}
	for _, p := range []string{filepath.Join(out, "site"), csvs[0]} {
		if st, err := os.Lstat(p); err != nil || st.Mode()&os.ModeSymlink != 0 {
			t.Errorf("%s: %v, still a link", p, err)
		}
	}
	checkSums(t, out)
	// An --out that is itself a link is refused.
	link := filepath.Join(tmp, "outlink")
	os.Symlink(elsewhere, link)
	if code, _, errOut := run(t, "reproduce", "--quiet", "--no-sweep", "--out", link); code != ExitFailure || !strings.Contains(errOut, "symbolic link") {
		t.Errorf("--out link: %d %s", code, errOut)
	}
}
