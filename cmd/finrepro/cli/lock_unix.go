//go:build unix

package cli

import (
	"os"
	"syscall"
)

// lockFile locks f exclusively; the lock ends when f is closed or the
// process dies, even by kill -9.
func lockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }

// tryLock reports whether f's lock was free (and takes it).
func tryLock(f *os.File) bool { return lockFile(f) == nil }
