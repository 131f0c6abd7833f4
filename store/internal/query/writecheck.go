package query

// Readiness (migration 0006's write_check).

// WriteCheck writes the one row of write_check, in place. $1 now.
const WriteCheck = `INSERT INTO write_check (id, checked_at) VALUES (1, $1)
ON CONFLICT (id) DO UPDATE SET checked_at = excluded.checked_at`
