package query

import "strconv"

// OutboxColumns is the column list every outbox query returns, in Scan
// order.
const OutboxColumns = `id, tenant, approval_id, kind, target, coalesce_key, payload, attempts,
    next_attempt_at, claimed_by, claimed_until, last_error, created_at, lane, priority, pace_key`

// A List spells, in one driver's dialect, "column is one of the ids bound
// to $n as a single parameter". A list of values has no portable
// parameter form (SQLite has no arrays; = ANY is PostgreSQL's), and
// writing one placeholder per value would make a new statement text for
// each length, which neither driver could prepare once. PostgreSQL binds
// a text[]; SQLite a JSON array of strings, read by json_each. Either way
// the parameter must be an empty list, never NULL, when there are none:
// NOT IN over a NULL is never true.
type List func(column string, n int) string

// param is the placeholder $n.
func param(n int) string { return "$" + strconv.Itoa(n) }

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
// $7 payload, $8 next_attempt_at, $9 created_at, $10 lane (not empty),
// $11 priority, $12 pace_key.
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
// into to the new row's priority, when that is higher: the waiting row
// now performs the new row's change too, which must not wait behind the
// cosmetic edits it was queued with. After an insert that added its row
// it matches nothing (no unclaimed row with the key waited), so
// PostgreSQL sends it with every keyed insert, unread. Through
// outbox_pending_coalesce. $1 coalesce_key, $2 priority.
const OutboxCoalescePriority = `UPDATE outbox SET priority = $2
WHERE coalesce_key = $1 AND state = 'pending' AND claimed_by = '' AND priority < $2`

// outboxDue selects cols of the due rows nobody holds, in claim order.
// Of one lane (lanePar > 0) it reads outbox_pending_lane in that order and
// stops at the limit; of every lane (draining, tests) it sorts the due
// rows of outbox_pending_due, O(due). A pace key not ready costs an index
// probe per row. $1 now, $2 limit, $3 ids excluded (in's list).
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
// may take, in claim order (outboxDue); the driver decides in Go which it
// takes (store/internal/claim). lock locks the rows selected until the
// transaction ends: " FOR UPDATE OF outbox SKIP LOCKED" on PostgreSQL (the
// outbox rows only, not the pace rows the filter reads), so claims
// running at once select disjoint rows; "" on SQLite. $1 now, $2 limit,
// $3 ids excluded, and with lane $4 the lane.
func OutboxClaimable(lane bool, in List, lock string) string {
	lanePar := 0
	if lane {
		lanePar = 4
	}
	return outboxDue(`id, pace_key`, lanePar, in, lock)
}

// OutboxClaimUnpaced leases the rows of outboxDue to a worker in one
// statement, for a claim without budgets (nothing to decide in Go; held
// keys are still passed over) and returns them, in no particular order.
// lock as for OutboxClaimable. $1 now, $2 limit, $3 ids excluded,
// $4 worker, $5 claimed_until, and with lane $6 the lane.
func OutboxClaimUnpaced(lane bool, in List, lock string) string {
	lanePar := 0
	if lane {
		lanePar = 6
	}
	return `UPDATE outbox SET claimed_by = $4, claimed_until = $5
WHERE id IN (` + outboxDue(`id`, lanePar, in, lock) + `)
RETURNING ` + OutboxColumns
}

// OutboxClaimIDs leases the rows a paced claim chose, which its
// transaction has selected (and on PostgreSQL locked) already, and
// returns them in no particular order. $1 worker, $2 claimed_until,
// $3 the ids (in's list).
func OutboxClaimIDs(in List) string {
	return `UPDATE outbox SET claimed_by = $1, claimed_until = $2
WHERE ` + in("id", 3) + `
RETURNING ` + OutboxColumns
}

// PaceCreate adds a key's pace row, as a key never paced (0, 0), unless
// it exists. PostgreSQL runs it before PaceGet's FOR UPDATE, which locks
// only rows that exist; two claims creating one key wait for each other
// here, in key order like the locks. $1 key.
const PaceCreate = `INSERT INTO pace (key, tat, ready_at) VALUES ($1, 0, 0)
ON CONFLICT (key) DO NOTHING`

// PaceGet reads a key's pace state; with lock " FOR UPDATE" (PostgreSQL)
// it holds the row until the transaction ends, so concurrent claims
// spend a key's budget one after the other, each reading what the one
// before committed. SQLite passes "": its single writer already
// serialises claims. No row is a key never paced. $1 key.
func PaceGet(lock string) string {
	return `SELECT tat, ready_at FROM pace WHERE key = $1` + lock
}

// PaceSet stores a key's pace state. $1 key, $2 tat, $3 ready_at.
const PaceSet = `INSERT INTO pace (key, tat, ready_at) VALUES ($1, $2, $3)
ON CONFLICT (key) DO UPDATE SET tat = excluded.tat, ready_at = excluded.ready_at`

// PaceHold holds the pace key of an outbox row until a time: ready_at
// becomes the later of itself and the hold, and tat moves forward by as
// much, keeping the distance the key's budget put between them, so after
// the hold the key allows one call and then one per every. A key with no
// row yet starts held (tat = ready_at = the hold); a row without a pace
// key holds nothing. Both databases evaluate DO UPDATE's SET against the
// row as it was. $1 outbox id, $2 hold.
const PaceHold = `INSERT INTO pace (key, tat, ready_at)
SELECT pace_key, CAST($2 AS BIGINT), CAST($2 AS BIGINT) FROM outbox WHERE id = $1 AND pace_key <> ''
ON CONFLICT (key) DO UPDATE SET
    tat = CASE WHEN excluded.ready_at > pace.ready_at
        THEN pace.tat + (excluded.ready_at - pace.ready_at) ELSE pace.tat END,
    ready_at = CASE WHEN excluded.ready_at > pace.ready_at
        THEN excluded.ready_at ELSE pace.ready_at END`

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

// OutboxStats counts each lane's pending rows with their earliest due
// time, through outbox_pending_lane, and then (dead = 1) the dead rows,
// through outbox_dead. Columns: dead (0 or 1), lane, count, earliest due
// (0 for the dead row).
const OutboxStats = `SELECT 0, lane, COUNT(*), MIN(next_attempt_at) FROM outbox
WHERE state = 'pending'
GROUP BY lane
UNION ALL
SELECT 1, '', COUNT(*), 0 FROM outbox WHERE state = 'dead'`

// OutboxDrop ends an approval's pending rows whose coalesce key matches
// a LIKE pattern and that no worker holds, as done, through
// outbox_pending_approval. A row a worker holds (in flight, or its lease
// lapsed but not taken over) is left to it.
// $1 approval_id, $2 the coalesce key's pattern, $3 done_at.
const OutboxDrop = `UPDATE outbox SET state = 'done', done_at = $3, last_error = 'dropped: the approval closed'
WHERE approval_id = $1 AND coalesce_key LIKE $2 AND state = 'pending' AND claimed_by = ''`

// LikePrefix is the LIKE pattern of the strings that start with prefix.
// The prefix must hold none of LIKE's wildcards (% and _), which the two
// dialects escape differently: the callers' marks are constants that do
// not.
func LikePrefix(prefix string) string { return prefix + "%" }
