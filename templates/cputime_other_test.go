//go:build !unix

package templates_test

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
