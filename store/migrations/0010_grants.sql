-- 0010: grants, the "Approve and allow…" a person gave with a decision
-- (docs/protocol.md#grants).
--
-- One row per grant the bot minted. id is the grant's id as the backend
-- is told it ("g-…", derived from the decision's outbox key, so a retry
-- sends the same one); approval_id and revision name the card that made
-- it, whose threads its uses, expiry and revocation are posted in; actor
-- is the tenant user who gave it; scope is 'call' or 'values'; words is
-- the scope as the dialog showed it (redacted, one line); body is the
-- grant as sent to the backend (JSON). state is 'pending' while the
-- decision is in flight, 'live' once the backend recorded it, 'refused'
-- when the backend refused the decision (never live), 'revoking' while a
-- revocation is on its way, then 'revoked' or 'expired'. uses_seen and
-- last_use_at count the approval.auto_granted events that named it;
-- ended_posted is 1 once its end was posted in its threads. Times are
-- Unix milliseconds from the caller's clock, 0 for none.
--
-- The previous release runs beside this schema unchanged: it reads and
-- writes nothing here.
CREATE TABLE grants (
    id           TEXT   NOT NULL PRIMARY KEY,
    tenant       TEXT   NOT NULL,
    approval_id  TEXT   NOT NULL,
    revision     BIGINT NOT NULL,
    actor        TEXT   NOT NULL,
    scope        TEXT   NOT NULL,
    words        TEXT   NOT NULL,
    body         TEXT   NOT NULL,
    state        TEXT   NOT NULL,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    uses_allowed BIGINT NOT NULL,
    uses_seen    BIGINT NOT NULL,
    last_use_at  BIGINT NOT NULL,
    revoked_at   BIGINT NOT NULL,
    revoked_by   TEXT   NOT NULL,
    ended_posted BIGINT NOT NULL
);

-- A tenant's grants by state, soonest expiry first: /approvals grants.
CREATE INDEX grants_tenant ON grants (tenant, state, expires_at, id);

-- Live grants by expiry, across tenants: the tick that posts their end.
CREATE INDEX grants_expiry ON grants (state, expires_at, id);
