//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
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
