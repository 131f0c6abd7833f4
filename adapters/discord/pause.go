package discord

import (
	"context"
	"time"
)

// pause waits d unless ctx ends first; it reports whether the wait ran out.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
