package site

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// TestUnchanged checks unchanged on files equal to the data, differing in
// one byte (in the first, a middle and the last chunk), shorter, longer,
// missing and not regular.
func TestUnchanged(t *testing.T) {
	dir := t.TempDir()
	size := 3*(128<<10) + 17
	data := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := write("same", data); !unchanged(p, data) {
		t.Error("equal file reported changed")
	}
	if p := write("empty", nil); !unchanged(p, nil) {
		t.Error("equal empty file reported changed")
	}
	for _, i := range []int{0, 1000, 128 << 10, 200000, size - 1} {
		b := bytes.Clone(data)
		b[i] ^= 1
		if p := write("diff", b); unchanged(p, data) {
			t.Errorf("file differing at byte %d reported unchanged", i)
		}
	}
	if p := write("short", data[:size-1]); unchanged(p, data) {
		t.Error("shorter file reported unchanged")
	}
	if p := write("long", append(bytes.Clone(data), 'x')); unchanged(p, data) {
		t.Error("longer file reported unchanged")
	}
	if unchanged(filepath.Join(dir, "missing"), nil) {
		t.Error("missing file reported unchanged")
	}
	if unchanged(dir, nil) {
		t.Error("folder reported unchanged")
	}
}

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
