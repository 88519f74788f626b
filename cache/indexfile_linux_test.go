package cache

import (
	"os"
	"syscall"
)

// diskBytes returns the bytes of disk f takes, or -1 where unknown.
func diskBytes(f *os.File) int64 {
	var st syscall.Stat_t
	if syscall.Fstat(int(f.Fd()), &st) != nil {
		return -1
	}
	return st.Blocks * 512
}
