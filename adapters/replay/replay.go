// Package replay refuses a signed chat request that any replica has seen
// before: each is remembered by its decoded signature bytes in the store
// every replica shares, for two signature windows
// (docs/design.md#replayed-requests).
package replay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"approvalsbot/store"
)

// Store keeps the requests seen, for every replica; store.Store
// satisfies it.
type Store interface {
	ReplaySeen(ctx context.Context, p store.ReplaySeenParams) (seenBefore bool, err error)
}

// Guard tells a platform's new signed requests from replays.
type Guard struct {
	store    Store
	platform string
	keep     time.Duration
}

// New remembers the requests of platform ("slack", "discord": the keys
// of two platforms never meet) in st for two of window.
func New(st Store, platform string, window time.Duration) *Guard {
	return &Guard{store: st, platform: platform, keep: 2 * window}
}

// ErrNoSignature is a request without signature bytes: nothing to tell
// it apart by.
var ErrNoSignature = errors.New("replay: no signature")

// First reports whether the request signed with sig (the signature's
// decoded bytes) is new to every replica, recording it either way. An
// error means the store could not say: the caller must refuse the
// request, as it cannot tell it from a replay.
func (g *Guard) First(ctx context.Context, sig []byte, now time.Time) (bool, error) {
	if len(sig) == 0 {
		return false, ErrNoSignature
	}
	key := make([]byte, 0, len(g.platform)+1+len(sig))
	key = append(append(append(key, g.platform...), 0), sig...)
	seen, err := g.store.ReplaySeen(ctx, store.ReplaySeenParams{Key: key, Now: now, Until: now.Add(g.keep)})
	if err != nil {
		return false, fmt.Errorf("check %s request for a replay: %w", g.platform, err)
	}
	return !seen, nil
}
