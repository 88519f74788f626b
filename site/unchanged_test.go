package site

import (
	"bytes"
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
