//go:build unix && !solaris && !aix

package batch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockState takes an exclusive advisory lock on dir's state folder, so
// that two runs cannot submit the same requests at once. The kernel drops
// it when the process ends, however it ends.
func lockState(dir string) (func(), error) {
	d := filepath.Join(dir, stateDir)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return nil, fmt.Errorf("batch: %w", err)
	}
	p := filepath.Join(d, "lock")
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("batch: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("batch: another finrepro batch command is running on %s", dir)
		}
		return nil, fmt.Errorf("batch: lock %s: %w", p, err)
	}
	return func() { f.Close() }, nil // closing the file releases the lock
}
