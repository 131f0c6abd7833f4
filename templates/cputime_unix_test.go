//go:build unix

package templates_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process used so far. Benchmarks report it
// per op besides wall time, which a shared machine inflates.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
