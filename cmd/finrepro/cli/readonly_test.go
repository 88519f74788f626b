package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/results"
)

// treeState lists every entry under dir with its type, permissions and,
// for a file, the SHA-256 of its bytes: two equal states mean nothing was
// created, removed or changed, which holds even as root (whom chmod does
// not stop).
func treeState(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		line := filepath.ToSlash(rel) + " " + info.Mode().String()
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			line += " " + hex.EncodeToString(h[:])
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// makeReadOnly removes every write permission under dir (chmod -R a-w)
// and restores them when the test ends, so that the folder can be
// removed.
func makeReadOnly(t *testing.T, dir string) {
	t.Helper()
	var paths []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			paths = append(paths, p)
		}
		return err
	})
	modes := map[string]fs.FileMode{}
	// Deepest first, so that a folder loses its write bit after its
	// contents.
	for _, p := range slices.Backward(paths) {
		info, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		modes[p] = info.Mode().Perm()
		if err := os.Chmod(p, info.Mode().Perm()&^0o222); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, p := range paths {
			os.Chmod(p, modes[p])
		}
	})
}

// diffStates reports the entries that differ between two tree states.
func diffStates(t *testing.T, what string, before, after []string) {
	t.Helper()
	if slices.Equal(before, after) {
		return
	}
	for _, l := range after {
		if !slices.Contains(before, l) {
			t.Errorf("%s: bundle changed: now %s", what, l)
		}
	}
	for _, l := range before {
		if !slices.Contains(after, l) {
			t.Errorf("%s: bundle changed: was %s", what, l)
		}
	}
}

// TestBundleReadOnly runs every command that reads a bundle on a
// read-only copy of the demo bundle: each succeeds and leaves the bundle
// byte for byte as it was.
func TestBundleReadOnly(t *testing.T) {
	dir := unpackDemo(t)
	makeReadOnly(t, dir)
	ro := treeState(t, dir)
	out := t.TempDir()
	for _, args := range [][]string{
		{"bundle", "verify", dir},
		{"reproduce", dir, "--out", filepath.Join(out, "reproduce"), "--quiet"},
		{"sweep", dir, "--knob", "findeepforecast.tolerance_scale=0.5"},
		{"site", dir, "--out", filepath.Join(out, "site"), "--no-sweep"},
	} {
		name := strings.Join(args[:2], " ")
		if code, _, stderr := run(t, args...); code != 0 {
			t.Errorf("%s: exit %d\n%s", name, code, stderr)
		}
		diffStates(t, name, ro, treeState(t, dir))
	}
}

// TestBundleWithoutCache reproduces a bundle that has no cache yet: every
// call is a miss (exit 3), the bundle gains no cache folder, and a second
// run fails the same way rather than on a file the first one left.
func TestBundleWithoutCache(t *testing.T) {
	dir := unpackDemo(t)
	if err := os.RemoveAll(filepath.Join(dir, results.CacheDir)); err != nil {
		t.Fatal(err)
	}
	m, err := results.OpenBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := results.Seal(dir, *m.Manifest, nil, nil); err != nil {
		t.Fatal(err)
	}
	before := treeState(t, dir)
	for i := range 2 {
		code, _, stderr := run(t, "reproduce", dir, "--out", filepath.Join(t.TempDir(), "out"), "--no-sweep")
		if code != ExitMiss || !strings.Contains(stderr, "not in the cache") {
			t.Fatalf("run %d: exit %d, want %d with the misses\n%s", i+1, code, ExitMiss, stderr)
		}
		diffStates(t, "reproduce", before, treeState(t, dir))
	}
	if _, err := os.Stat(filepath.Join(dir, results.CacheDir)); !os.IsNotExist(err) {
		t.Errorf("reproduce created %s in the bundle (%v)", results.CacheDir, err)
	}
}
