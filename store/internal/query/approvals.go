package query

// ApprovalColumns is every approval query's column list, in Scan order.
const ApprovalColumns = `id, tenant, revision, state, seen, function, decision, plan, steps_done,
    next_step_at, deadline_at, requested_at, created_at, updated_at, claimed_by, claimed_until, deciding,
    ladder_state, votes`

// ApprovalGet reads one approval. $1 id.
const ApprovalGet = `SELECT ` + ApprovalColumns + ` FROM approvals WHERE id = $1`

// ApprovalGetForUpdate is ApprovalGet with lock appended. $1 id.
func ApprovalGetForUpdate(lock string) string { return ApprovalGet + lock }

// ApprovalUpsert writes the whole row. $1…$19 in ApprovalColumns order.
const ApprovalUpsert = `INSERT INTO approvals (` + ApprovalColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
ON CONFLICT (id) DO UPDATE SET
    tenant = excluded.tenant,
    revision = excluded.revision,
    state = excluded.state,
    seen = excluded.seen,
    function = excluded.function,
    decision = excluded.decision,
    plan = excluded.plan,
    steps_done = excluded.steps_done,
    next_step_at = excluded.next_step_at,
    deadline_at = excluded.deadline_at,
    requested_at = excluded.requested_at,
    created_at = excluded.created_at,
    updated_at = excluded.updated_at,
    claimed_by = excluded.claimed_by,
    claimed_until = excluded.claimed_until,
    deciding = excluded.deciding,
    ladder_state = excluded.ladder_state,
    votes = excluded.votes`

// ApprovalListPending lists a tenant's pending approvals, oldest request
// first, through approvals_pending_by_tenant. $1 tenant, $2 limit.
const ApprovalListPending = `SELECT ` + ApprovalColumns + ` FROM approvals
WHERE tenant = $1 AND state = 'pending'
ORDER BY requested_at, id
LIMIT $2`

// approvalDue is the earlier of an approval's next step and deadline,
// whichever are set. (SQLite's two-argument MIN is NULL when either is;
// PostgreSQL's LEAST skips NULLs: CASE means the same in both.)
const approvalDue = `CASE
        WHEN next_step_at IS NULL THEN deadline_at
        WHEN deadline_at IS NULL OR next_step_at <= deadline_at THEN next_step_at
        ELSE deadline_at
    END`

// ApprovalClaimable selects the ids of due, unleased, pending approvals,
// earliest due first, through two range scans (next step, deadline): the
// cost follows the due approvals, never the pending ones. UNION ALL: for
// a plain UNION SQLite scans the whole primary key. $1 now, $2 limit.
const ApprovalClaimable = `SELECT id FROM approvals
WHERE id IN (
        SELECT id FROM approvals WHERE state = 'pending' AND next_step_at <= $1
        UNION ALL
        SELECT id FROM approvals WHERE state = 'pending' AND deadline_at <= $1
    )
    AND state = 'pending'
    AND (claimed_by = '' OR claimed_until <= $1)
ORDER BY ` + approvalDue + `, id
LIMIT $2`

// ApprovalClaimDue leases due approvals to a worker and returns them in
// no order; lock is appended to the selection. $1 now, $2 limit,
// $3 worker, $4 claimed_until.
func ApprovalClaimDue(lock string) string {
	return `UPDATE approvals SET claimed_by = $3, claimed_until = $4
WHERE id IN (` + ApprovalClaimable + lock + `)
RETURNING ` + ApprovalColumns
}
