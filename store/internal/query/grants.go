package query

import (
	"strconv"
	"strings"

	"approvalsbot/store"
)

// GrantColumns is the column list the grant reads return, in ScanGrant's
// order.
const GrantColumns = `id, tenant, approval_id, revision, actor, scope, words, body, state, created_at, expires_at, ` +
	`uses_allowed, uses_seen, last_use_at, revoked_at, revoked_by, ended_posted`

// GrantInsert keeps a new grant unless its id is held (rows affected 0).
// $1…$17 as GrantColumns.
const GrantInsert = `INSERT INTO grants (` + GrantColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
ON CONFLICT (id) DO NOTHING`

// GrantGet reads one grant. $1 id.
const GrantGet = `SELECT ` + GrantColumns + ` FROM grants WHERE id = $1`

// GrantGetForUpdate reads one grant and locks it; lock is " FOR UPDATE"
// on PostgreSQL, "" on SQLite (its one writer orders every write). $1 id.
func GrantGetForUpdate(lock string) string { return GrantGet + lock }

// GrantUpdate writes what changes of a grant after it was made. $1 id,
// $2 state, $3 uses_seen, $4 last_use_at, $5 revoked_at, $6 revoked_by,
// $7 ended_posted.
const GrantUpdate = `UPDATE grants SET state = $2, uses_seen = $3, last_use_at = $4, revoked_at = $5,
    revoked_by = $6, ended_posted = $7
WHERE id = $1`

// GrantList lists a tenant's grants through grants_tenant, soonest expiry
// first. $1 tenant, $2 limit; with states, $3… the states.
func GrantList(states int) string {
	q := `SELECT ` + GrantColumns + ` FROM grants WHERE tenant = $1`
	if states > 0 {
		ph := make([]string, states)
		for i := range ph {
			ph[i] = "$" + strconv.Itoa(i+3)
		}
		q += ` AND state IN (` + strings.Join(ph, ", ") + `)`
	}
	return q + `
ORDER BY expires_at, id
LIMIT $2`
}

// GrantListExpired lists live grants past their time through
// grants_expiry. $1 now, $2 limit.
const GrantListExpired = `SELECT ` + GrantColumns + ` FROM grants
WHERE state = 'live' AND expires_at <= $1
ORDER BY expires_at, id
LIMIT $2`

// GrantArgs are g's values in GrantColumns order.
func GrantArgs(g *store.Grant) []any {
	return []any{g.ID, g.Tenant, g.ApprovalID, int64(g.Revision), g.Actor, g.Scope, g.Words, Text(g.Body), g.State,
		Millis(g.CreatedAt), Millis(g.ExpiresAt), int64(g.UsesAllowed), int64(g.UsesSeen), Millis(g.LastUseAt),
		Millis(g.RevokedAt), g.RevokedBy, Bool(g.EndedPosted)}
}

// GrantUpdateArgs are g's values for GrantUpdate.
func GrantUpdateArgs(g *store.Grant) []any {
	return []any{g.ID, g.State, int64(g.UsesSeen), Millis(g.LastUseAt), Millis(g.RevokedAt), g.RevokedBy, Bool(g.EndedPosted)}
}

// ScanGrant reads one row of GrantColumns.
func ScanGrant(r Scanner) (*store.Grant, error) {
	var (
		g                                    store.Grant
		revision, allowed, seen, ended       int64
		body                                 string
		created, expires, lastUse, revokedAt int64
	)
	if err := r.Scan(&g.ID, &g.Tenant, &g.ApprovalID, &revision, &g.Actor, &g.Scope, &g.Words, &body, &g.State,
		&created, &expires, &allowed, &seen, &lastUse, &revokedAt, &g.RevokedBy, &ended); err != nil {
		return nil, err
	}
	g.Revision, g.UsesAllowed, g.UsesSeen, g.EndedPosted = int(revision), int(allowed), int(seen), ended != 0
	g.Body = []byte(body)
	g.CreatedAt, g.ExpiresAt, g.LastUseAt, g.RevokedAt = Time(created), Time(expires), Time(lastUse), Time(revokedAt)
	return &g, nil
}
