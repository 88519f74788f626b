//go:build unix

package replay

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) the process has used: on a
// busy machine it varies far less than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
