package query

import "approvalsbot/store"

// OutcomeColumns is the column list the outcome reads return, in
// ScanOutcome's order.
const OutcomeColumns = `approval_id, tenant, job_id, function, args_sha256, effect, ladder, restricted,
    revision, state, actor, surface, grant_id, steps, quick, requested_at, decided_at, first_look_at`

// OutcomeRequest records a revision's call; a closed row keeps its state
// and close. $1 approval, $2 tenant, $3 job, $4 function, $5 digest,
// $6 effect, $7 ladder, $8 restricted, $9 revision, $10 requested at.
const OutcomeRequest = `INSERT INTO outcomes (approval_id, tenant, job_id, function, args_sha256, effect, ladder,
    restricted, revision, state, requested_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10)
ON CONFLICT (approval_id) DO UPDATE SET
    job_id = excluded.job_id,
    function = excluded.function,
    args_sha256 = excluded.args_sha256,
    effect = excluded.effect,
    restricted = excluded.restricted,
    revision = excluded.revision
WHERE outcomes.revision < excluded.revision`

// OutcomeClose records how an approval closed; a row decided already (an
// approval a re-check refused) takes the new state alone. $1 approval,
// $2 state, $3 actor, $4 surface, $5 grant, $6 steps, $7 quick, $8 decided
// at, $9 first look at.
const OutcomeClose = `UPDATE outcomes SET state = $2,
    actor = CASE WHEN decided_at > 0 THEN actor ELSE $3 END,
    surface = CASE WHEN decided_at > 0 THEN surface ELSE $4 END,
    grant_id = CASE WHEN decided_at > 0 THEN grant_id ELSE $5 END,
    steps = CASE WHEN decided_at > 0 THEN steps ELSE $6 END,
    quick = CASE WHEN decided_at > 0 THEN quick ELSE $7 END,
    first_look_at = CASE WHEN decided_at > 0 THEN first_look_at ELSE $9 END,
    decided_at = CASE WHEN decided_at > 0 THEN decided_at ELSE $8 END
WHERE approval_id = $1`

// OutcomeListTenant lists a tenant's decided rows in a window through
// outcomes_tenant_decided. $1 tenant, $2 since, $3 until (exclusive),
// $4 after at, $5 after id, $6 limit.
const OutcomeListTenant = `SELECT ` + OutcomeColumns + ` FROM outcomes
WHERE tenant = $1 AND decided_at > 0 AND decided_at >= $2 AND decided_at < $3
  AND (decided_at > $4 OR (decided_at = $4 AND approval_id > $5))
ORDER BY decided_at, approval_id
LIMIT $6`

// OutcomeListAll lists every tenant's decided rows in a window through
// outcomes_decided. $1 since, $2 until (exclusive), $3 after at, $4 after
// id, $5 limit.
const OutcomeListAll = `SELECT ` + OutcomeColumns + ` FROM outcomes
WHERE decided_at > 0 AND decided_at >= $1 AND decided_at < $2
  AND (decided_at > $3 OR (decided_at = $3 AND approval_id > $4))
ORDER BY decided_at, approval_id
LIMIT $5`

// OutcomeRepeated finds an earlier approval of the same call within a
// window, through outcomes_approved: one approval's key, then one range.
// $1 approval, $2 window in milliseconds.
const OutcomeRepeated = `SELECT COUNT(*) FROM outcomes me
WHERE me.approval_id = $1 AND me.state = 'approved' AND EXISTS (
    SELECT 1 FROM outcomes o
    WHERE o.state = 'approved' AND o.tenant = me.tenant AND o.function = me.function
      AND o.args_sha256 = me.args_sha256 AND o.args_sha256 <> ''
      AND o.decided_at >= me.decided_at - $2 AND o.decided_at <= me.decided_at
      AND (o.decided_at < me.decided_at OR o.approval_id < me.approval_id))`

// OutcomePrune deletes decided rows at or before a time, oldest first,
// through outcomes_decided. $1 before, $2 limit.
func OutcomePrune(lock string) string {
	return `DELETE FROM outcomes WHERE approval_id IN (
    SELECT approval_id FROM outcomes WHERE decided_at > 0 AND decided_at <= $1
    ORDER BY decided_at, approval_id
    LIMIT $2` + lock + `)`
}

// OutcomeRequestArgs are p's values in OutcomeRequest's order.
func OutcomeRequestArgs(p store.OutcomeRequestParams) []any {
	return []any{p.ApprovalID, p.Tenant, p.Job, p.Function, p.ArgsSHA256, p.Effect, p.Ladder,
		Bool(p.Restricted), p.Revision, Millis(p.RequestedAt)}
}

// OutcomeCloseArgs are p's values in OutcomeClose's order.
func OutcomeCloseArgs(p store.OutcomeCloseParams) []any {
	return []any{p.ApprovalID, p.State, p.Actor, p.Surface, p.Grant, p.Steps, Bool(p.Quick),
		Millis(p.DecidedAt), Millis(p.FirstLookAt)}
}

// OutcomeListArgs are p's values for OutcomeListTenant (tenant set) or
// OutcomeListAll, and the query to run.
func OutcomeListArgs(p store.OutcomeListParams) (string, []any) {
	until := int64(1<<63 - 1)
	if !p.Until.IsZero() {
		until = Millis(p.Until)
	}
	args := []any{Millis(p.Since), until, Millis(p.AfterAt), p.AfterID, p.Limit}
	if p.Tenant == "" {
		return OutcomeListAll, args
	}
	return OutcomeListTenant, append([]any{p.Tenant}, args...)
}

// ScanOutcome reads one row of OutcomeColumns.
func ScanOutcome(r Scanner) (*store.Outcome, error) {
	var (
		o                                 store.Outcome
		restricted, quick                 int64
		requestedAt, decidedAt, firstLook int64
	)
	err := r.Scan(&o.ApprovalID, &o.Tenant, &o.Job, &o.Function, &o.ArgsSHA256, &o.Effect, &o.Ladder, &restricted,
		&o.Revision, &o.State, &o.Actor, &o.Surface, &o.Grant, &o.Steps, &quick, &requestedAt, &decidedAt, &firstLook)
	if err != nil {
		return nil, err
	}
	o.Restricted, o.Quick = restricted == 1, quick == 1
	o.RequestedAt, o.DecidedAt, o.FirstLookAt = Time(requestedAt), Time(decidedAt), Time(firstLook)
	return &o, nil
}
