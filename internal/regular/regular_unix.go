//go:build unix

package regular

import "syscall"

// openFlags open a file without following a final symbolic link and
// without waiting for a writer when it is a FIFO.
const openFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
