-- 0012: how each approval was decided, for the figures of approval
-- fatigue (the digest's lines, `bot report`, the repeat counter).
--
-- One row per approval the bot was asked about, written in the
-- transaction that stores each revision (what the call was: job,
-- function as cards show it, digest, effect, ladder) and rewritten in the
-- transaction that closes it (state, who decided, on which surface, when,
-- the first act a person recorded, the steps reached). Nothing of the
-- call's arguments, values or agent text is kept here; args_sha256 is
-- kept to tell identical calls apart and is never shown. function is
-- the name as redacted for cards. grant_id is the grant a decision
-- carried; empty while grants are not recorded. Times are Unix
-- milliseconds from the caller's clock, 0 for unset (decided_at while
-- pending; first_look_at when nobody acted). quick is 1 for a
-- destructive call approved within seconds of its card being posted
-- where that person decided.
--
-- A row outlives its approval's pruning (retention prunes these rows on
-- their own, OutcomePrune) so a week's figures survive a short
-- retention of content. Approvals closed before this migration have no
-- row: the figures start with it.
--
-- The previous release runs beside this schema unchanged: it reads and
-- writes nothing here (approvals it closes have no closing figures).
CREATE TABLE outcomes (
    approval_id   TEXT    NOT NULL PRIMARY KEY,
    tenant        TEXT    NOT NULL,
    job_id        TEXT    NOT NULL,
    function      TEXT    NOT NULL,
    args_sha256   TEXT    NOT NULL,
    effect        TEXT    NOT NULL,
    ladder        TEXT    NOT NULL,
    restricted    INTEGER NOT NULL CHECK (restricted IN (0, 1)),
    revision      INTEGER NOT NULL,
    state         TEXT    NOT NULL,
    actor         TEXT    NOT NULL DEFAULT '',
    surface       TEXT    NOT NULL DEFAULT '',
    grant_id      TEXT    NOT NULL DEFAULT '',
    steps         INTEGER NOT NULL DEFAULT 0,
    quick         INTEGER NOT NULL DEFAULT 0 CHECK (quick IN (0, 1)),
    requested_at  BIGINT  NOT NULL,
    decided_at    BIGINT  NOT NULL DEFAULT 0,
    first_look_at BIGINT  NOT NULL DEFAULT 0
);

-- A tenant's (or, through the second, every tenant's) decisions in a
-- window, in decision order: the digest and the report read a range of
-- one of these and nothing else.
CREATE INDEX outcomes_tenant_decided ON outcomes (tenant, decided_at, approval_id) WHERE decided_at > 0;
CREATE INDEX outcomes_decided ON outcomes (decided_at, approval_id) WHERE decided_at > 0;
-- The same call approved before (OutcomeRepeated): one range of this.
CREATE INDEX outcomes_approved ON outcomes (tenant, function, args_sha256, decided_at) WHERE state = 'approved';
-- Retention (OutcomePrune) deletes decided rows oldest decision first,
-- through outcomes_decided.
