-- 0001: the first schema.
--
-- One text runs on SQLite and PostgreSQL alike, so it avoids what the two
-- spell differently: no serial/identity columns (ids are TEXT made by the
-- caller), no TIMESTAMPTZ or now() (times are BIGINT Unix milliseconds from
-- the caller's clock; 0 in a NOT NULL time column means "unset"), no JSONB
-- and no BLOB/BYTEA (JSON is kept as TEXT), INTEGER 0/1 for booleans.
-- Partial indexes (CREATE INDEX … WHERE state = 'pending') work in both and
-- keep every scan the bot repeats proportional to what is due, not to what
-- the tables hold. A query uses such an index only when its WHERE repeats
-- the index's predicate literally (state = 'pending', never a parameter).

-- events: every accepted event id, for deduplication of redeliveries.
CREATE TABLE events (
    id          TEXT   NOT NULL PRIMARY KEY,
    tenant      TEXT   NOT NULL,
    type        TEXT   NOT NULL,
    body_sha256 TEXT   NOT NULL,
    approval_id TEXT   NOT NULL,
    received_at BIGINT NOT NULL
);

-- approvals: one row per approval; its requests live in revisions.
CREATE TABLE approvals (
    id            TEXT    NOT NULL PRIMARY KEY,
    tenant        TEXT    NOT NULL,
    revision      INTEGER NOT NULL,
    state         TEXT    NOT NULL,
    seen          INTEGER NOT NULL CHECK (seen IN (0, 1)),
    function      TEXT    NOT NULL,
    decision      TEXT    NULL,
    plan          TEXT    NULL,
    steps_done    INTEGER NOT NULL DEFAULT 0,
    next_step_at  BIGINT  NULL,
    deadline_at   BIGINT  NULL,
    requested_at  BIGINT  NOT NULL,
    created_at    BIGINT  NOT NULL,
    updated_at    BIGINT  NOT NULL,
    claimed_by    TEXT    NOT NULL DEFAULT '',
    claimed_until BIGINT  NOT NULL DEFAULT 0
);

-- The ladder's tick claims pending approvals whose next step or deadline is
-- due: one range scan on each index, so a tick costs O(due).
CREATE INDEX approvals_next_step_due ON approvals (next_step_at) WHERE state = 'pending';
CREATE INDEX approvals_deadline_due ON approvals (deadline_at) WHERE state = 'pending';
-- What waits in a tenant, oldest request first (digests, /approvals lists).
CREATE INDEX approvals_pending_by_tenant ON approvals (tenant, requested_at, id) WHERE state = 'pending';

-- revisions: each revision's request body (approval.Approval JSON), kept once.
CREATE TABLE revisions (
    approval_id TEXT    NOT NULL,
    revision    INTEGER NOT NULL,
    body        TEXT    NOT NULL,
    created_at  BIGINT  NOT NULL,
    PRIMARY KEY (approval_id, revision)
);

-- posts: every copy of a card on a surface, so edits and replies find it.
CREATE TABLE posts (
    approval_id TEXT    NOT NULL,
    target      TEXT    NOT NULL,
    revision    INTEGER NOT NULL,
    channel     TEXT    NOT NULL,
    ref         TEXT    NOT NULL,
    thread_ref  TEXT    NOT NULL DEFAULT '',
    created_at  BIGINT  NOT NULL,
    PRIMARY KEY (approval_id, target, revision)
);

-- outbox: every effect outside the process, performed by leased workers.
CREATE TABLE outbox (
    id              TEXT    NOT NULL PRIMARY KEY,
    tenant          TEXT    NOT NULL,
    approval_id     TEXT    NOT NULL,
    kind            TEXT    NOT NULL,
    target          TEXT    NOT NULL,
    coalesce_key    TEXT    NOT NULL DEFAULT '',
    payload         TEXT    NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at BIGINT  NOT NULL,
    claimed_by      TEXT    NOT NULL DEFAULT '',
    claimed_until   BIGINT  NOT NULL DEFAULT 0,
    last_error      TEXT    NOT NULL DEFAULT '',
    state           TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'dead')),
    created_at      BIGINT  NOT NULL,
    done_at         BIGINT  NULL
);

-- Claims scan only pending rows in due order; done and dead rows, which
-- accumulate, are never visited.
CREATE INDEX outbox_pending_due ON outbox (next_attempt_at, id) WHERE state = 'pending';
-- Coalescing looks for a waiting row with the same key.
CREATE INDEX outbox_pending_coalesce ON outbox (coalesce_key) WHERE state = 'pending';
-- OutboxStats counts dead rows without reading done ones.
CREATE INDEX outbox_dead ON outbox (done_at) WHERE state = 'dead';
