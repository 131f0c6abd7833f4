package query

// RevisionColumns is the column list RevisionGet returns, in Scan order.
const RevisionColumns = `approval_id, revision, body, created_at`

// RevisionInsert keeps the first body of a revision. $1 approval_id,
// $2 revision, $3 body, $4 created_at.
const RevisionInsert = `INSERT INTO revisions (` + RevisionColumns + `)
VALUES ($1, $2, $3, $4)
ON CONFLICT (approval_id, revision) DO NOTHING`

// RevisionGet reads one revision. $1 approval_id, $2 revision.
const RevisionGet = `SELECT ` + RevisionColumns + ` FROM revisions WHERE approval_id = $1 AND revision = $2`
