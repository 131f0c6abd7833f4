package query

import "approvalsbot/store"

// PasskeyColumns is the column list the passkey reads return, in
// ScanPasskey's order.
const PasskeyColumns = `id, tenant, member, name, credential, sign_count, created_at, last_used_at`

// PasskeyInsert enrols a credential unless its id is held (rows
// affected 0). $1…$8 as PasskeyColumns.
const PasskeyInsert = `INSERT INTO passkeys (` + PasskeyColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (id) DO NOTHING`

// PasskeyListMember lists a member's passkeys through passkeys_member.
// $1 tenant, $2 member.
const PasskeyListMember = `SELECT ` + PasskeyColumns + ` FROM passkeys
WHERE tenant = $1 AND member = $2
ORDER BY created_at, id`

// PasskeyListTenant lists every passkey of a tenant. $1 tenant.
const PasskeyListTenant = `SELECT ` + PasskeyColumns + ` FROM passkeys
WHERE tenant = $1
ORDER BY created_at, id`

// PasskeyDelete removes a member's passkey. $1 id, $2 tenant, $3 member.
const PasskeyDelete = `DELETE FROM passkeys WHERE id = $1 AND tenant = $2 AND member = $3`

// PasskeyUse moves a member's passkey's signature count forward, or
// keeps it at 0 for an authenticator that counts nothing, and stamps its
// use; any other count changes nothing (rows affected 0). $1 id,
// $2 tenant, $3 member, $4 count, $5 now.
const PasskeyUse = `UPDATE passkeys SET sign_count = $4, last_used_at = $5
WHERE id = $1 AND tenant = $2 AND member = $3
  AND (sign_count < $4 OR (sign_count = 0 AND $4 = 0))`

// PasskeyCount counts a member's passkeys with an id (0 or 1): why
// PasskeyUse changed nothing. $1 id, $2 tenant, $3 member.
const PasskeyCount = `SELECT COUNT(*) FROM passkeys WHERE id = $1 AND tenant = $2 AND member = $3`

// ChallengeColumns is the column list of passkey_challenges, in
// ScanChallenge's order.
const ChallengeColumns = `id, purpose, tenant, member, approval_id, revision, digest, session, created_at, expires_at, used_at`

// ChallengeInsert keeps a new challenge. $1…$11 as ChallengeColumns.
const ChallengeInsert = `INSERT INTO passkey_challenges (` + ChallengeColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`

// ChallengeTake marks an unused challenge used (no row: used already,
// or absent). $1 id, $2 now.
const ChallengeTake = `UPDATE passkey_challenges SET used_at = $2
WHERE id = $1 AND used_at = 0
RETURNING ` + ChallengeColumns

// ChallengeGet reads one challenge. $1 id.
const ChallengeGet = `SELECT ` + ChallengeColumns + ` FROM passkey_challenges WHERE id = $1`

// ChallengePrune forgets a few challenges past their time, oldest first,
// through passkey_challenges_expiry. lock as for the retention queries.
// $1 now, $2 limit.
func ChallengePrune(lock string) string {
	return `DELETE FROM passkey_challenges WHERE id IN (
    SELECT id FROM passkey_challenges WHERE expires_at <= $1
    ORDER BY expires_at, id
    LIMIT $2` + lock + `)`
}

// ChallengePruneBatch is how many expired challenges one new challenge
// forgets: more than it adds, so the table holds what is live.
const ChallengePruneBatch = 8

// PasskeyArgs are p's values in PasskeyColumns order.
func PasskeyArgs(p store.PasskeyAddParams) []any {
	return []any{p.ID, p.Tenant, p.Member, p.Name, Text(p.Credential), int64(p.SignCount), Millis(p.Now), int64(0)}
}

// ScanPasskey reads one row of PasskeyColumns.
func ScanPasskey(r Scanner) (*store.Passkey, error) {
	var (
		p                      store.Passkey
		cred                   string
		count, created, usedAt int64
	)
	if err := r.Scan(&p.ID, &p.Tenant, &p.Member, &p.Name, &cred, &count, &created, &usedAt); err != nil {
		return nil, err
	}
	p.Credential = []byte(cred)
	p.SignCount = uint32(count)
	p.CreatedAt = Time(created)
	p.LastUsedAt = Time(usedAt)
	return &p, nil
}

// ChallengeArgs are c's values in ChallengeColumns order.
func ChallengeArgs(c *store.PasskeyChallenge) []any {
	return []any{c.ID, c.Purpose, c.Tenant, c.Member, c.ApprovalID, int64(c.Revision), c.Digest, Text(c.Session),
		Millis(c.CreatedAt), Millis(c.ExpiresAt), Millis(c.UsedAt)}
}

// ScanChallenge reads one row of ChallengeColumns.
func ScanChallenge(r Scanner) (*store.PasskeyChallenge, error) {
	var (
		c                        store.PasskeyChallenge
		revision                 int64
		session                  string
		created, expires, usedAt int64
	)
	if err := r.Scan(&c.ID, &c.Purpose, &c.Tenant, &c.Member, &c.ApprovalID, &revision, &c.Digest, &session,
		&created, &expires, &usedAt); err != nil {
		return nil, err
	}
	c.Revision = int(revision)
	c.Session = []byte(session)
	c.CreatedAt = Time(created)
	c.ExpiresAt = Time(expires)
	c.UsedAt = Time(usedAt)
	return &c, nil
}
