package query

// EventInsert records an event id unless it exists (rows affected 0).
// $1 id, $2 tenant, $3 type, $4 body_sha256, $5 approval_id, $6 received_at.
const EventInsert = `INSERT INTO events (id, tenant, type, body_sha256, approval_id, received_at)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (id) DO NOTHING`

// EventDigest reads the stored digest of an event id. $1 id.
const EventDigest = `SELECT body_sha256 FROM events WHERE id = $1`
