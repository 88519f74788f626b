//go:build !unix

package replay

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
