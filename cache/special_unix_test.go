//go:build unix

package cache

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestSpecialDictionary replaces a store's dictionary by a FIFO and then
// by a link to /dev/zero: Open is refused at once as corrupt, naming the
// pack that needs it, and Verify lists it, neither waiting on the FIFO nor
// reading /dev/zero.
func TestSpecialDictionary(t *testing.T) {
	for _, kind := range []string{"fifo", "zero"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			s := openTest(t, dir, Options{})
			if _, err := s.Load(bytes.NewReader(synthLines(t, 200, 6)), LoadOptions{Strict: true}); err != nil {
				t.Fatal(err)
			}
			s.Close()
			dicts, _ := filepath.Glob(filepath.Join(dir, dictsDir, "*.dict"))
			if len(dicts) != 1 {
				t.Fatalf("%d dictionaries", len(dicts))
			}
			os.Remove(dicts[0])
			var err error
			if kind == "fifo" {
				err = syscall.Mkfifo(dicts[0], 0o644)
			} else {
				err = os.Symlink("/dev/zero", dicts[0])
			}
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := Open(dir, Options{ReadOnly: true})
				if err == nil {
					v := openTest(t, dir, Options{ReadOnly: true, AllowCorrupt: true})
					_, err = v.Verify(context.Background(), func(Problem) {})
				}
				done <- err
			}()
			select {
			case err := <-done:
				var ce *CorruptError
				if !errors.As(err, &ce) {
					t.Errorf("open: %v, want a *CorruptError", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("still opening after 10 s")
			}
			v := openTest(t, dir, Options{ReadOnly: true, AllowCorrupt: true})
			if n, err := v.Verify(context.Background(), func(Problem) {}); err != nil || n == 0 {
				t.Errorf("verify: %d problems, %v", n, err)
			}
		})
	}
}
