package query

import (
	"fmt"
	"strings"
)

// Retention: each selecting query reads one partial index in age order
// and stops at its limit, locked by lock (docs/design.md#tombstones).

// OutboxPrune deletes rows finished at or before a time. $1 before,
// $2 limit.
func OutboxPrune(lock string) string {
	return `DELETE FROM outbox WHERE id IN (
    SELECT id FROM outbox WHERE state <> 'pending' AND done_at <= $1
    ORDER BY done_at, id
    LIMIT $2` + lock + `)`
}

// OutboxScrubbable selects the id and payload of rows to scrub, oldest
// first. $1 kind, $2 created after, $3 created at or before, $4 the
// target's LIKE pattern, $5 the payload's, $6 limit.
func OutboxScrubbable(lock string) string {
	return `SELECT id, payload FROM outbox
WHERE kind = $1 AND created_at > $2 AND created_at <= $3 AND target LIKE $4 AND payload LIKE $5
ORDER BY created_at, id
LIMIT $6` + lock
}

// OutboxSetPayload rewrites one row's payload. $1 id, $2 payload.
const OutboxSetPayload = `UPDATE outbox SET payload = $2 WHERE id = $1`

// ApprovalScrubbable selects the id and decision in flight of approvals
// to scrub, oldest change first. $1 updated at or before, $2 the LIKE
// pattern, $3 limit.
func ApprovalScrubbable(lock string) string {
	return `SELECT id, deciding FROM approvals
WHERE deciding IS NOT NULL AND updated_at <= $1 AND deciding LIKE $2
ORDER BY updated_at, id
LIMIT $3` + lock
}

// ApprovalSetDeciding rewrites one decision in flight. $1 id, $2 deciding.
const ApprovalSetDeciding = `UPDATE approvals SET deciding = $2 WHERE id = $1 AND deciding IS NOT NULL`

// ApprovalPrunable selects the ids of closed approvals to prune: no
// decision in flight, no pending outbox row. $1 before, $2 limit.
func ApprovalPrunable(lock string) string {
	return `SELECT id FROM approvals
WHERE state <> 'pending' AND decision IS NOT NULL AND updated_at <= $1 AND deciding IS NULL
    AND NOT EXISTS (
        SELECT 1 FROM outbox WHERE outbox.approval_id = approvals.id AND outbox.state = 'pending')
ORDER BY updated_at, id
LIMIT $2` + lock
}

// The statements below prune what ApprovalPrunable selected, in its
// transaction. $1 the ids (in's list).

// RevisionDeleteOf deletes the approvals' revisions.
func RevisionDeleteOf(in List) string {
	return `DELETE FROM revisions WHERE ` + in("approval_id", 1)
}

// PostDeleteOf deletes the approvals' posts.
func PostDeleteOf(in List) string {
	return `DELETE FROM posts WHERE ` + in("approval_id", 1)
}

// ApprovalToTombstone clears what a tombstone does not keep.
func ApprovalToTombstone(in List) string {
	return `UPDATE approvals SET decision = NULL, plan = NULL, ladder_state = NULL, votes = NULL, function = '', steps_done = 0,
    next_step_at = NULL, deadline_at = NULL, claimed_by = '', claimed_until = 0
WHERE ` + in("id", 1) + ` AND state <> 'pending' AND deciding IS NULL`
}

// ApprovalToTombstoneChecked is ApprovalToTombstone checking the
// selection's conditions again, as READ COMMITTED sees them now, and
// returning the ids it cut.
func ApprovalToTombstoneChecked(in List) string {
	return ApprovalToTombstone(in) + ` AND decision IS NOT NULL
    AND NOT EXISTS (
        SELECT 1 FROM outbox WHERE outbox.approval_id = approvals.id AND outbox.state = 'pending')
RETURNING id`
}

// ApprovalForget deletes tombstones last changed at or before a time that
// no event received since is about. $1 before, $2 limit.
func ApprovalForget(lock string) string {
	return `DELETE FROM approvals WHERE id IN (
    SELECT id FROM approvals WHERE state <> 'pending' AND decision IS NULL AND updated_at <= $1
        AND NOT EXISTS (
            SELECT 1 FROM events WHERE events.approval_id = approvals.id AND events.received_at > $1)
    ORDER BY updated_at, id
    LIMIT $2` + lock + `)`
}

// EventPrune deletes event ids received at or before a time whose
// approval is not held. $1 before, $2 limit.
func EventPrune(lock string) string {
	return `DELETE FROM events WHERE id IN (
    SELECT id FROM events WHERE received_at <= $1
        AND NOT EXISTS (SELECT 1 FROM approvals WHERE approvals.id = events.approval_id)
    ORDER BY received_at, id
    LIMIT $2` + lock + `)`
}

// LikeContains is the LIKE pattern of the strings that contain s.
func LikeContains(s string) string { return "%" + s + "%" }

// PlainLike refuses text that LIKE would read as wildcards or escapes.
func PlainLike(ss ...string) error {
	for _, s := range ss {
		if strings.ContainsAny(s, `%_\`) {
			return fmt.Errorf("%q holds a LIKE wildcard (%%, _ or \\)", s)
		}
	}
	return nil
}
