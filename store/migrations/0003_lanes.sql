-- 0003: outbox lanes, priorities and pace keys.
--
-- One outbox served every kind of effect with one claim in due order, so
-- under load decisions waited behind chat traffic. Each row now belongs to
-- a lane (its own workers claim it), has a priority within the lane
-- (higher first), and may name a pace key: the platform budget it spends
-- (a Slack or Discord channel), shared by every worker of every replica
-- through the pace table and spent at claim time, so no worker sleeps for
-- a rate limit. The same rules as 0001 hold (one text for both databases,
-- BIGINT Unix milliseconds, partial indexes with a literal predicate).
--
-- The defaults keep the previous release working during a rolling
-- deploy: the rows it inserts land in the chat lane at priority 0 unpaced,
-- and its claim (outbox_pending_due, kept) still takes every lane's rows.

ALTER TABLE outbox ADD COLUMN lane TEXT NOT NULL DEFAULT 'chat';
ALTER TABLE outbox ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
ALTER TABLE outbox ADD COLUMN pace_key TEXT NOT NULL DEFAULT '';

-- Rows still queued go to the lanes their kinds belong to (threads'
-- KindDecision and KindEmail); every other kind is chat. Only pending
-- rows are rewritten (through outbox_pending_due): a large history of
-- done rows would hold the table's lock for seconds while the previous
-- release still serves.
UPDATE outbox SET lane = 'backend' WHERE kind = 'decision' AND state = 'pending';
UPDATE outbox SET lane = 'mail' WHERE kind = 'email' AND state = 'pending';

-- A lane's claim reads its pending rows in claim order (priority first,
-- then due time, then id) from this index and stops at its limit; rows of
-- other lanes and finished rows are never visited.
CREATE INDEX outbox_pending_lane ON outbox (lane, priority DESC, next_attempt_at, id) WHERE state = 'pending';

-- Closing an approval drops its pending rows that became moot (an
-- escalation nobody need read any more: OutboxDrop), found through this
-- index, before they spend a channel's budget for nothing.
CREATE INDEX outbox_pending_approval ON outbox (approval_id) WHERE state = 'pending';

-- pace: the shared rate-limit state of one pace key (GCRA). tat is the
-- theoretical arrival time of the key's next call; ready_at the earliest
-- instant the key allows a call (tat less the burst's allowance, or later
-- while a platform's Retry-After holds it). A claim passes over the rows
-- of a key whose ready_at is in the future without reading them in Go.
-- Rows are created by the first claim (or hold) of a key and never
-- removed: there is one per channel the bot has written to.
CREATE TABLE pace (
    key      TEXT   NOT NULL PRIMARY KEY,
    tat      BIGINT NOT NULL,
    ready_at BIGINT NOT NULL
);
