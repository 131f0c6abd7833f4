package query

// OutboxColumns is the column list every outbox query returns, in Scan
// order.
const OutboxColumns = `id, tenant, approval_id, kind, target, coalesce_key, payload, attempts,
    next_attempt_at, claimed_by, claimed_until, last_error, created_at`

// OutboxInsert enqueues one row, unless it has a coalesce key and an
// unclaimed pending row with that key waits already: that row renders the
// approval's latest state when it runs, so a second one would repeat it.
// A claimed row (in flight, or with a lapsed lease its worker may still
// complete) may have rendered an older state, so a new row is added to
// run after it. The caller reads rows affected to tell whether it was
// added.
//
// The values are SELECTed rather than given in VALUES so that the
// insert can be conditional; the casts give PostgreSQL the parameter
// types it cannot infer in a select list.
//
// $1 id, $2 tenant, $3 approval_id, $4 kind, $5 target, $6 coalesce_key,
// $7 payload, $8 next_attempt_at, $9 created_at.
const OutboxInsert = outboxInsert + `
    )`

// OutboxInsertLocking is OutboxInsert with lock appended to the query that
// looks for the waiting row: " FOR SHARE" on PostgreSQL, so that the row
// a new one coalesces into cannot be claimed (FOR UPDATE SKIP LOCKED skips
// it) until the inserting transaction ends; a worker that claimed it
// earlier would render the approval's state from before that transaction
// and nothing would render the new one. SQLite uses OutboxInsert: its
// single writer already keeps claims out of a write transaction.
func OutboxInsertLocking(lock string) string {
	return outboxInsert + lock + `
    )`
}

const outboxInsert = `INSERT INTO outbox (id, tenant, approval_id, kind, target, coalesce_key, payload,
    attempts, next_attempt_at, claimed_by, claimed_until, last_error, state, created_at)
SELECT CAST($1 AS TEXT), CAST($2 AS TEXT), CAST($3 AS TEXT), CAST($4 AS TEXT), CAST($5 AS TEXT),
    CAST($6 AS TEXT), CAST($7 AS TEXT), 0, CAST($8 AS BIGINT), '', 0, '', 'pending', CAST($9 AS BIGINT)
WHERE CAST($6 AS TEXT) = ''
    OR NOT EXISTS (
        SELECT 1 FROM outbox
        WHERE coalesce_key = $6 AND state = 'pending' AND claimed_by = ''`

// OutboxClaimable selects the ids of due rows nobody holds (never claimed,
// released by a retry, or with a lapsed lease), oldest due first, through
// outbox_pending_due. $1 now, $2 limit.
const OutboxClaimable = `SELECT id FROM outbox
WHERE state = 'pending' AND next_attempt_at <= $1
    AND (claimed_by = '' OR claimed_until <= $1)
ORDER BY next_attempt_at, id
LIMIT $2`

// OutboxClaim leases due rows to a worker and returns them (in no
// particular order). lock is appended to the selecting subquery:
// " FOR UPDATE SKIP LOCKED" on PostgreSQL, "" on SQLite.
// $1 now, $2 limit, $3 worker, $4 claimed_until.
func OutboxClaim(lock string) string {
	return `UPDATE outbox SET claimed_by = $3, claimed_until = $4
WHERE id IN (` + OutboxClaimable + lock + `)
RETURNING ` + OutboxColumns
}

// The results of a claimed row. Each changes the row only while it is
// still pending and claimed by the worker reporting, so a worker whose
// lease lapsed and was taken over cannot overwrite the new holder's
// outcome; zero rows affected means the lease is lost (or the id unknown:
// see OutboxExists).

// OutboxComplete marks a row done. $1 id, $2 worker, $3 done_at.
const OutboxComplete = `UPDATE outbox SET state = 'done', done_at = $3
WHERE id = $1 AND claimed_by = $2 AND state = 'pending'`

// OutboxRetry releases a row to run again. $1 id, $2 worker,
// $3 next_attempt_at, $4 last_error, $5 attempts to add (0 or 1).
const OutboxRetry = `UPDATE outbox SET claimed_by = '', claimed_until = 0,
    next_attempt_at = $3, last_error = $4, attempts = attempts + $5
WHERE id = $1 AND claimed_by = $2 AND state = 'pending'`

// OutboxDead ends a row for good; the failed try counts as an attempt.
// $1 id, $2 worker, $3 last_error, $4 done_at.
const OutboxDead = `UPDATE outbox SET state = 'dead', last_error = $3, attempts = attempts + 1, done_at = $4
WHERE id = $1 AND claimed_by = $2 AND state = 'pending'`

// OutboxExists counts rows with an id (0 or 1). $1 id.
const OutboxExists = `SELECT COUNT(*) FROM outbox WHERE id = $1`

// OutboxStats counts pending rows with their earliest due time (0 when
// none) and dead rows, each through its partial index.
const OutboxStats = `SELECT
    (SELECT COUNT(*) FROM outbox WHERE state = 'pending'),
    (SELECT COALESCE(MIN(next_attempt_at), 0) FROM outbox WHERE state = 'pending'),
    (SELECT COUNT(*) FROM outbox WHERE state = 'dead')`
