//go:build !unix

package templates

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
