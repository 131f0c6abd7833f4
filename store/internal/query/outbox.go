package query

import "strconv"

// OutboxColumns is every outbox query's column list, in Scan order.
const OutboxColumns = `id, tenant, approval_id, kind, target, coalesce_key, payload, attempts,
    next_attempt_at, claimed_by, claimed_until, last_error, created_at, lane, priority, pace_key`

// A List spells, in one driver's dialect, "column is one of the ids bound
// to $n as one parameter"; the parameter must be an empty list, never
// NULL, when there are none.
type List func(column string, n int) string

// param is the placeholder $n.
func param(n int) string { return "$" + strconv.Itoa(n) }

// OutboxInsert enqueues one row unless an unclaimed pending row with its
// coalesce key waits (rows affected 0). The values are SELECTed so the
// insert can be conditional; the casts give PostgreSQL types it cannot
// infer in a select list. $1 id, $2 tenant, $3 approval_id, $4 kind,
// $5 target, $6 coalesce_key, $7 payload, $8 next_attempt_at,
// $9 created_at, $10 lane (not empty), $11 priority, $12 pace_key.
const OutboxInsert = outboxInsert + `
    )`

// OutboxInsertLocking is OutboxInsert with lock appended to the search
// for the waiting row (" FOR SHARE" on PostgreSQL), so no claim takes that
// row until the inserting transaction ends.
func OutboxInsertLocking(lock string) string {
	return outboxInsert + lock + `
    )`
}

const outboxInsert = `INSERT INTO outbox (id, tenant, approval_id, kind, target, coalesce_key, payload,
    attempts, next_attempt_at, claimed_by, claimed_until, last_error, state, created_at,
    lane, priority, pace_key)
SELECT CAST($1 AS TEXT), CAST($2 AS TEXT), CAST($3 AS TEXT), CAST($4 AS TEXT), CAST($5 AS TEXT),
    CAST($6 AS TEXT), CAST($7 AS TEXT), 0, CAST($8 AS BIGINT), '', 0, '', 'pending', CAST($9 AS BIGINT),
    CAST($10 AS TEXT), CAST($11 AS INTEGER), CAST($12 AS TEXT)
WHERE CAST($6 AS TEXT) = ''
    OR NOT EXISTS (
        SELECT 1 FROM outbox
        WHERE coalesce_key = $6 AND state = 'pending' AND claimed_by = ''`

// OutboxCoalescePriority raises the waiting row a keyed insert coalesced
// into to the new row's priority, which must not wait behind cosmetic
// edits; after an insert that added its row it matches nothing.
// $1 coalesce_key, $2 priority.
const OutboxCoalescePriority = `UPDATE outbox SET priority = $2
WHERE coalesce_key = $1 AND state = 'pending' AND claimed_by = '' AND priority < $2`

// outboxDue selects cols of the due rows nobody holds, in claim order: of
// one lane (lanePar > 0) in index order up to the limit, of every lane
// sorting the due rows. $1 now, $2 limit, $3 ids excluded (in's list).
func outboxDue(cols string, lanePar int, in List, lock string) string {
	lane := ""
	if lanePar > 0 {
		lane = ` AND lane = ` + param(lanePar)
	}
	return `SELECT ` + cols + ` FROM outbox
WHERE state = 'pending'` + lane + ` AND next_attempt_at <= $1
    AND (claimed_by = '' OR claimed_until <= $1)
    AND (pace_key = '' OR NOT EXISTS (
        SELECT 1 FROM pace WHERE pace.key = outbox.pace_key AND pace.ready_at > $1))
    AND NOT (` + in("id", 3) + `)
ORDER BY priority DESC, next_attempt_at, id
LIMIT $2` + lock
}

// OutboxClaimable selects the id and pace key of the rows a paced claim
// may take, in claim order, locked by lock so claims at once select
// disjoint rows. $1 now, $2 limit, $3 ids excluded, with lane $4 the lane.
func OutboxClaimable(lane bool, in List, lock string) string {
	lanePar := 0
	if lane {
		lanePar = 4
	}
	return outboxDue(`id, pace_key`, lanePar, in, lock)
}

// OutboxClaimUnpaced leases due rows in one statement, for a claim without
// budgets, and returns them in no order. $1 now, $2 limit, $3 ids
// excluded, $4 worker, $5 claimed_until, with lane $6 the lane.
func OutboxClaimUnpaced(lane bool, in List, lock string) string {
	lanePar := 0
	if lane {
		lanePar = 6
	}
	return `UPDATE outbox SET claimed_by = $4, claimed_until = $5
WHERE id IN (` + outboxDue(`id`, lanePar, in, lock) + `)
RETURNING ` + OutboxColumns
}

// OutboxClaimIDs leases the rows a paced claim chose and returns them in
// no order. $1 worker, $2 claimed_until, $3 the ids (in's list).
func OutboxClaimIDs(in List) string {
	return `UPDATE outbox SET claimed_by = $1, claimed_until = $2
WHERE ` + in("id", 3) + `
RETURNING ` + OutboxColumns
}

// PaceCreate adds a key's pace row as never paced (0, 0) unless it
// exists; PostgreSQL runs it before PaceGet's FOR UPDATE, which locks only
// rows that exist. $1 key.
const PaceCreate = `INSERT INTO pace (key, tat, ready_at) VALUES ($1, 0, 0)
ON CONFLICT (key) DO NOTHING`

// PaceGet reads a key's pace state, locked by lock so claims spend a key
// one after the other. No row is a key never paced. $1 key.
func PaceGet(lock string) string {
	return `SELECT tat, ready_at FROM pace WHERE key = $1` + lock
}

// PaceSet stores a key's pace state. $1 key, $2 tat, $3 ready_at.
const PaceSet = `INSERT INTO pace (key, tat, ready_at) VALUES ($1, $2, $3)
ON CONFLICT (key) DO UPDATE SET tat = excluded.tat, ready_at = excluded.ready_at`

// PaceHold holds an outbox row's pace key until a time
// (docs/design.md#holding-a-pace-key). Both databases evaluate DO
// UPDATE's SET against the row as it was. $1 outbox id, $2 hold.
const PaceHold = `INSERT INTO pace (key, tat, ready_at)
SELECT pace_key, CAST($2 AS BIGINT), CAST($2 AS BIGINT) FROM outbox WHERE id = $1 AND pace_key <> ''
ON CONFLICT (key) DO UPDATE SET
    tat = CASE WHEN excluded.ready_at > pace.ready_at
        THEN pace.tat + (excluded.ready_at - pace.ready_at) ELSE pace.tat END,
    ready_at = CASE WHEN excluded.ready_at > pace.ready_at
        THEN excluded.ready_at ELSE pace.ready_at END`

// The results of a claimed row change it only while it is pending and
// claimed by the worker reporting, so a worker taken over cannot
// overwrite the new holder's outcome; 0 rows: see OutboxExists.

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

// OutboxStats counts each lane's pending rows with their earliest due
// time, then (dead = 1) the dead rows. Columns: dead, lane, count, due.
const OutboxStats = `SELECT 0, lane, COUNT(*), MIN(next_attempt_at) FROM outbox
WHERE state = 'pending'
GROUP BY lane
UNION ALL
SELECT 1, '', COUNT(*), 0 FROM outbox WHERE state = 'dead'`

// OutboxDrop ends as done an approval's pending rows whose coalesce key
// matches a LIKE pattern and that no worker holds.
// $1 approval_id, $2 the coalesce key's pattern, $3 done_at.
const OutboxDrop = `UPDATE outbox SET state = 'done', done_at = $3, last_error = 'dropped: the approval closed'
WHERE approval_id = $1 AND coalesce_key LIKE $2 AND state = 'pending' AND claimed_by = ''`

// LikePrefix is the LIKE pattern of the strings that start with prefix,
// which holds no wildcard: the dialects escape them differently.
func LikePrefix(prefix string) string { return prefix + "%" }
