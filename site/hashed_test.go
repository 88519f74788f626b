package site

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteHashed checks the hashes WriteHashed returns against the files
// it wrote, on a first run, a rerun and a rerun over a changed and a
// truncated page.
func TestWriteHashed(t *testing.T) {
	root := filepath.Join(t.TempDir(), "site")
	for run := range 3 {
		switch run {
		case 2:
			if err := os.WriteFile(filepath.Join(root, "index.html"), []byte("changed"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(filepath.Join(root, "assets", "site.css"), 10); err != nil {
				t.Fatal(err)
			}
		}
		sums, err := WriteHashed(root, fixture(false))
		if err != nil {
			t.Fatal(err)
		}
		want := hashes(t, root)
		if len(sums) != len(want) {
			t.Errorf("run %d: %d hashes for %d files", run, len(sums), len(want))
		}
		for i, s := range sums {
			if i > 0 && sums[i-1].Path >= s.Path {
				t.Errorf("run %d: %s listed after %s", run, s.Path, sums[i-1].Path)
			}
			if got := hex.EncodeToString(s.Sum[:]); got != want[s.Path] {
				t.Errorf("run %d: %s: hash %s, file hashes to %s", run, s.Path, got, want[s.Path])
			}
		}
	}
}
