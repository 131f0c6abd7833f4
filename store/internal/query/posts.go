package query

// PostColumns is the column list PostList returns, in Scan order.
const PostColumns = `approval_id, target, revision, channel, ref, thread_ref, created_at`

// PostUpsert records where a card went; the same (approval, target,
// revision) again replaces the reference, keeping created_at.
// $1 approval_id, $2 target, $3 revision, $4 channel, $5 ref,
// $6 thread_ref, $7 created_at.
const PostUpsert = `INSERT INTO posts (` + PostColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (approval_id, target, revision) DO UPDATE SET
    channel = excluded.channel,
    ref = excluded.ref,
    thread_ref = excluded.thread_ref`

// PostList reads an approval's posts by revision, then time, then target.
// $1 approval_id.
const PostList = `SELECT ` + PostColumns + ` FROM posts WHERE approval_id = $1
ORDER BY revision, created_at, target`
