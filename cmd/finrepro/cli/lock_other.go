//go:build !unix

package cli

import "os"

// lockFile does nothing on this platform: leftovers are never taken for
// free (tryLock is false) and stay until removed by hand.
func lockFile(f *os.File) error { return nil }

func tryLock(f *os.File) bool { return false }
