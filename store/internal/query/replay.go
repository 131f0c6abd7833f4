package query

import "encoding/hex"

// ReplayRecord records a key until a time unless it is held and not past
// its time (rows affected 0: a replay). A key past its time is taken over
// in place, so the answer never depends on pruning. $1 key, $2 forget at,
// $3 now.
const ReplayRecord = `INSERT INTO replay_seen (key, forget_at) VALUES ($1, $2)
ON CONFLICT (key) DO UPDATE SET forget_at = excluded.forget_at WHERE replay_seen.forget_at <= $3`

// ReplayPrune forgets a few keys past their time, oldest first, through
// replay_seen_forget. lock as for the retention queries. $1 now, $2 limit.
func ReplayPrune(lock string) string {
	return `DELETE FROM replay_seen WHERE key IN (
    SELECT key FROM replay_seen WHERE forget_at <= $1
    ORDER BY forget_at, key
    LIMIT $2` + lock + `)`
}

// ReplayPruneBatch is how many old keys one ReplaySeen forgets: more than
// it records, so the table holds what is live and a short backlog.
const ReplayPruneBatch = 8

// ReplayKey is how a key is stored: lower-case hex, one spelling per key.
func ReplayKey(key []byte) string { return hex.EncodeToString(key) }
