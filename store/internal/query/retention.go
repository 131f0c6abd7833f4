package query

import (
	"fmt"
	"strings"
)

// Retention: what the store prunes, in batches. Each selecting query reads
// one partial index of migration 0004 in age order and stops at its limit,
// so a batch costs the rows it removes. lock is appended to the selecting
// query: " FOR UPDATE SKIP LOCKED" on PostgreSQL, so replicas pruning at
// once take disjoint rows and never wait for a writer (a row an ingest or
// a click holds is left to the next pass); "" on SQLite, whose single
// writer runs each batch alone.

// OutboxPrune deletes finished rows (done or dead) finished at or before
// a time, through outbox_finished. $1 before, $2 limit.
func OutboxPrune(lock string) string {
	return `DELETE FROM outbox WHERE id IN (
    SELECT id FROM outbox WHERE state <> 'pending' AND done_at <= $1
    ORDER BY done_at, id
    LIMIT $2` + lock + `)`
}

// OutboxScrubbable selects the id and payload of rows of a kind, created
// in a window, whose target starts with a prefix and whose payload holds
// a mark, oldest first, through outbox_kind_created. $1 kind, $2 created
// after (exclusive), $3 created at or before, $4 the target's LIKE
// pattern, $5 the payload's LIKE pattern, $6 limit.
func OutboxScrubbable(lock string) string {
	return `SELECT id, payload FROM outbox
WHERE kind = $1 AND created_at > $2 AND created_at <= $3 AND target LIKE $4 AND payload LIKE $5
ORDER BY created_at, id
LIMIT $6` + lock
}

// OutboxSetPayload rewrites one row's payload. $1 id, $2 payload.
const OutboxSetPayload = `UPDATE outbox SET payload = $2 WHERE id = $1`

// ApprovalScrubbable selects the id and decision in flight of approvals
// whose decision in flight holds a mark and that last changed at or
// before a time, oldest change first, through approvals_deciding.
// $1 updated at or before, $2 the LIKE pattern, $3 limit.
func ApprovalScrubbable(lock string) string {
	return `SELECT id, deciding FROM approvals
WHERE deciding IS NOT NULL AND updated_at <= $1 AND deciding LIKE $2
ORDER BY updated_at, id
LIMIT $3` + lock
}

// ApprovalSetDeciding rewrites one approval's decision in flight, and
// nothing else. $1 id, $2 deciding.
const ApprovalSetDeciding = `UPDATE approvals SET deciding = $2 WHERE id = $1 AND deciding IS NOT NULL`

// ApprovalPrunable selects the ids of closed approvals not pruned yet
// that last changed at or before a time, with no decision in flight and
// no pending outbox row (an edit or a reply still to be made needs the
// revision and the posts), oldest change first, through approvals_closed
// and, per approval, outbox_pending_approval. $1 before, $2 limit.
func ApprovalPrunable(lock string) string {
	return `SELECT id FROM approvals
WHERE state <> 'pending' AND decision IS NOT NULL AND updated_at <= $1 AND deciding IS NULL
    AND NOT EXISTS (
        SELECT 1 FROM outbox WHERE outbox.approval_id = approvals.id AND outbox.state = 'pending')
ORDER BY updated_at, id
LIMIT $2` + lock
}

// The statements that prune the approvals ApprovalPrunable selected and
// locked, in the same transaction. $1 the ids (in's list).

// RevisionDeleteOf deletes the revisions (the request bodies) of the
// approvals, through the primary key.
func RevisionDeleteOf(in List) string {
	return `DELETE FROM revisions WHERE ` + in("approval_id", 1)
}

// PostDeleteOf deletes the posts (where each card went) of the
// approvals, through the primary key.
func PostDeleteOf(in List) string {
	return `DELETE FROM posts WHERE ` + in("approval_id", 1)
}

// ApprovalToTombstone clears what a tombstone does not keep. updated_at
// stays: the tombstone's age counts from the approval's last change.
func ApprovalToTombstone(in List) string {
	return `UPDATE approvals SET decision = NULL, plan = NULL, ladder_state = NULL, function = '', steps_done = 0,
    next_step_at = NULL, deadline_at = NULL, claimed_by = '', claimed_until = 0
WHERE ` + in("id", 1) + ` AND state <> 'pending' AND deciding IS NULL`
}

// ApprovalToTombstoneChecked is ApprovalToTombstone that checks the
// selection's conditions again and returns the ids it cut. Under READ
// COMMITTED (PostgreSQL) each statement reads what committed before it
// began, so this one sees an outbox row a writer enqueued while it held
// the approval, after the selection's snapshot and before the prune's
// lock: such an approval is left whole, for a later pass.
func ApprovalToTombstoneChecked(in List) string {
	return ApprovalToTombstone(in) + ` AND decision IS NOT NULL
    AND NOT EXISTS (
        SELECT 1 FROM outbox WHERE outbox.approval_id = approvals.id AND outbox.state = 'pending')
RETURNING id`
}

// ApprovalForget deletes tombstones that last changed at or before a
// time and that no event received since is about (a backend sending the
// request again keeps the tombstone), through approvals_pruned and
// events_by_approval. $1 before, $2 limit.
func ApprovalForget(lock string) string {
	return `DELETE FROM approvals WHERE id IN (
    SELECT id FROM approvals WHERE state <> 'pending' AND decision IS NULL AND updated_at <= $1
        AND NOT EXISTS (
            SELECT 1 FROM events WHERE events.approval_id = approvals.id AND events.received_at > $1)
    ORDER BY updated_at, id
    LIMIT $2` + lock + `)`
}

// EventPrune deletes event ids received at or before a time whose
// approval is not held (forgotten, or never stored), through
// events_received and the approvals' primary key. $1 before, $2 limit.
func EventPrune(lock string) string {
	return `DELETE FROM events WHERE id IN (
    SELECT id FROM events WHERE received_at <= $1
        AND NOT EXISTS (SELECT 1 FROM approvals WHERE approvals.id = events.approval_id)
    ORDER BY received_at, id
    LIMIT $2` + lock + `)`
}

// LikeContains is the LIKE pattern of the strings that contain s, which
// must hold none of LIKE's wildcards (% and _), as for LikePrefix.
func LikeContains(s string) string { return "%" + s + "%" }

// PlainLike refuses text that LIKE would read as wildcards or escapes,
// before it goes into LikePrefix or LikeContains.
func PlainLike(ss ...string) error {
	for _, s := range ss {
		if strings.ContainsAny(s, `%_\`) {
			return fmt.Errorf("%q holds a LIKE wildcard (%%, _ or \\)", s)
		}
	}
	return nil
}
