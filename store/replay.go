package store

import (
	"errors"
	"time"
)

// ReplaySeenParams names one signed request a chat platform sent, for
// ReplaySeen.
type ReplaySeenParams struct {
	// Key is the request's decoded signature bytes tagged with the
	// platform, so two spellings of one signature are one key. Required.
	Key []byte
	// Now is the caller's clock: a key held until Now or earlier is unseen.
	Now time.Time
	// Until is when Key is forgotten: past the signature's window, after Now.
	Until time.Time
}

// Check reports what is wrong with p, before the database is touched.
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
