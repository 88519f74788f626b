package cache

import (
	"os"
	"syscall"
)

// punchHole frees the disk blocks of n bytes at off of f, which then
// read as zeros; the file keeps its size.
func punchHole(f *os.File, off, n int64) {
	const keepSize, punchHole = 0x01, 0x02                     // FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE
	syscall.Fallocate(int(f.Fd()), keepSize|punchHole, off, n) // where unsupported, the blocks stay
}
