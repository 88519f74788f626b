//go:build unix

package regular

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRead builds each kind of file a hostile folder can hold and checks
// that only a regular file within the limit is read, and that a FIFO
// (which would block an open without O_NONBLOCK) is refused at once.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	tests := []struct {
		name, path string
		limit      int64
		want       string // the data, or a part of the error
	}{
		{"regular", file, 5, "12345"},
		{"over the limit", file, 4, "more than the limit of 4"},
		{"link to a regular file", link, 5, "a symbolic link, not a regular file"},
		{"link to a device", filepath.Join(dir, "zero"), 5, "a symbolic link"},
		{"FIFO", fifo, 5, "a FIFO, not a regular file"},
		{"folder", dir, 5, "a folder, not a regular file"},
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Read(tc.path, tc.limit)
			got := string(b)
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("Read(%s, %d) = %q, want %q", tc.name, tc.limit, got, tc.want)
			}
		})
	}
}
