package report

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestUnchanged checks Unchanged on files equal to the data, differing in
// one byte (in the first, a middle and the last chunk), shorter, longer,
// missing and not regular.
func TestUnchanged(t *testing.T) {
	dir := t.TempDir()
	size := 3*(128<<10) + 17
	data := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	write := func(name string, b []byte) string {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return name
	}
	if p := write("same", data); !Unchanged(root, p, data) {
		t.Error("equal file reported changed")
	}
	if p := write("empty", nil); !Unchanged(root, p, nil) {
		t.Error("equal empty file reported changed")
	}
	for _, i := range []int{0, 1000, 128 << 10, 200000, size - 1} {
		b := bytes.Clone(data)
		b[i] ^= 1
		if p := write("diff", b); Unchanged(root, p, data) {
			t.Errorf("file differing at byte %d reported unchanged", i)
		}
	}
	if p := write("short", data[:size-1]); Unchanged(root, p, data) {
		t.Error("shorter file reported unchanged")
	}
	if p := write("long", append(bytes.Clone(data), 'x')); Unchanged(root, p, data) {
		t.Error("longer file reported unchanged")
	}
	if Unchanged(root, "missing", nil) {
		t.Error("missing file reported unchanged")
	}
	if Unchanged(root, ".", nil) {
		t.Error("folder reported unchanged")
	}
	os.Symlink(filepath.Join(dir, "same"), filepath.Join(dir, "link"))
	if Unchanged(root, "link", data) {
		t.Error("link reported unchanged")
	}
}

// TestUnchangedAllocations checks that comparing a file with the bytes
// it holds allocates far less than the file's size: the read buffer is
// reused between calls, not made anew for each of a site's pages.
func TestUnchangedAllocations(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("page "), 60_000) // 300 KB
	if err := os.WriteFile(filepath.Join(dir, "p.html"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	Unchanged(root, "p.html", data) // the first call may make the buffer
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const calls = 20
	for range calls {
		if !Unchanged(root, "p.html", data) {
			t.Fatal("the file does not hold its own bytes")
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / calls; per > 16<<10 {
		t.Errorf("%d bytes allocated per comparison, want at most 16 KB", per)
	}
}
