package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestUnchanged checks Unchanged on files equal to the data, differing in
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
	if p := write("same", data); !Unchanged(p, data) {
		t.Error("equal file reported changed")
	}
	if p := write("empty", nil); !Unchanged(p, nil) {
		t.Error("equal empty file reported changed")
	}
	for _, i := range []int{0, 1000, 128 << 10, 200000, size - 1} {
		b := bytes.Clone(data)
		b[i] ^= 1
		if p := write("diff", b); Unchanged(p, data) {
			t.Errorf("file differing at byte %d reported unchanged", i)
		}
	}
	if p := write("short", data[:size-1]); Unchanged(p, data) {
		t.Error("shorter file reported unchanged")
	}
	if p := write("long", append(bytes.Clone(data), 'x')); Unchanged(p, data) {
		t.Error("longer file reported unchanged")
	}
	if Unchanged(filepath.Join(dir, "missing"), nil) {
		t.Error("missing file reported unchanged")
	}
	if Unchanged(dir, nil) {
		t.Error("folder reported unchanged")
	}
}
