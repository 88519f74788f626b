package cli

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestReproduceMissAfterEarlyPages reruns reproduce of the demo into its
// output folder with the last benchmark's calls missing (a judge's
// model changed, as in TestReproduceMiss): the three benchmarks before
// are finished, and their task pages written, before the miss is known.
// The run must exit 3 and leave no SHA256SUMS; run into a new folder,
// it must write task pages, each listed in the folder's marker (so that
// a later run can remove it); once the bundle is as it was, a rerun writes the SHA256SUMS
// of the first run, every file matching it (checkSums).
func TestReproduceMissAfterEarlyPages(t *testing.T) {
	if testing.Short() {
		t.Skip("reproduces the demo four times")
	}
	dir := unpackDemo(t)
	out := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := run(t, "reproduce", dir, "--out", out, "--quiet"); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	first, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	const panel = "inputs/finresearchbench2/panel.json"
	model, other := `"model": "gpt-5.4"`, `"model": "gpt-5.4-mini"`
	rewriteBundleFile(t, dir, panel, model, other)
	// rerun into out, and run into a new folder, whose marker lists
	// only what the failed run wrote
	fresh := filepath.Join(t.TempDir(), "fresh")
	for _, o := range []string{out, fresh} {
		if code, _, stderr := run(t, "reproduce", dir, "--out", o, "--quiet"); code != ExitMiss {
			t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitMiss, stderr)
		}
		if _, err := os.Stat(filepath.Join(o, "SHA256SUMS")); !os.IsNotExist(err) {
			t.Errorf("SHA256SUMS after a failed run: %v", err)
		}
	}
	o, err := claimOutputFolder(fresh, false)
	if err != nil {
		t.Fatal(err)
	}
	pages := 0
	filepath.WalkDir(filepath.Join(fresh, "site", "tasks"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			pages++
			rel, _ := filepath.Rel(fresh, p)
			if _, ok := slices.BinarySearch(o.listed, filepath.ToSlash(rel)); !ok {
				t.Errorf("%s written but not in the marker", rel)
			}
		}
		return nil
	})
	if pages == 0 {
		t.Error("the failed run wrote no task page")
	}
	rewriteBundleFile(t, dir, panel, other, model)
	if code, _, stderr := run(t, "reproduce", dir, "--out", out, "--quiet"); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if again, _ := os.ReadFile(filepath.Join(out, "SHA256SUMS")); !bytes.Equal(again, first) {
		t.Error("SHA256SUMS differ from the first run's")
	}
	checkSums(t, out)
}
