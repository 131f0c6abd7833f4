package store

import (
	"errors"
	"time"
)

// ReplaySeenParams names one signed request a chat platform sent, for
// ReplaySeen.
type ReplaySeenParams struct {
	// Key identifies the request: its decoded signature bytes, tagged
	// with the platform, so two spellings of one signature are one key.
	// Required.
	Key []byte
	// Now is the caller's clock: a key held until Now or earlier is
	// forgotten and counts as unseen.
	Now time.Time
	// Until is how long Key is remembered: past the time the signature
	// could still be accepted. It must be after Now.
	Until time.Time
}

// Check reports what is wrong with p, for the implementations to refuse
// before they touch the database.
func (p ReplaySeenParams) Check() error {
	switch {
	case len(p.Key) == 0:
		return errReplayNoKey
	case !p.Until.After(p.Now):
		return errReplayUntil
	}
	return nil
}

var (
	errReplayNoKey = errors.New("no key")
	errReplayUntil = errors.New("until is not after now")
)
