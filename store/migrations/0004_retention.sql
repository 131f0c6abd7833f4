-- 0004: retention.
--
-- Nothing was ever deleted: every request body (arguments, agent text),
-- decision comment, card reference and chat handle stayed for good. The
-- store now prunes in small batches (store.Store's *Prune and *Scrub
-- methods), and each batch finds its rows through one of these partial
-- indexes, in age order, so a pass costs what it removes, not what the
-- tables hold. The same rules as 0001 hold (one text for both databases,
-- partial indexes whose predicate the queries repeat literally).
--
-- A closed approval is pruned to its tombstone: the approvals row keeps
-- id, tenant, revision, state and seen, so a redelivered request still
-- meets a closed approval and posts nothing; its decision, plan, function,
-- revisions and posts go. "Pruned" is "closed with no decision": every
-- closing transition records a decision, so a closed row without one is a
-- pruned one.
--
-- The previous release runs beside this schema unchanged: it reads a
-- pruned approval as a closed one with no decision, and none of its
-- statements reads these indexes.

-- Closed approvals not pruned yet, oldest change first (ApprovalPrune).
CREATE INDEX approvals_closed ON approvals (updated_at, id) WHERE state <> 'pending' AND decision IS NOT NULL;
-- Tombstones, oldest change first (ApprovalForget).
CREATE INDEX approvals_pruned ON approvals (updated_at, id) WHERE state <> 'pending' AND decision IS NULL;
-- Decisions in flight, which may hold a chat handle (ApprovalScrub).
CREATE INDEX approvals_deciding ON approvals (updated_at, id) WHERE deciding IS NOT NULL;
-- Finished outbox rows (done or dead), oldest first (OutboxPrune).
CREATE INDEX outbox_finished ON outbox (done_at, id) WHERE state <> 'pending';
-- Rows of one kind by age, whatever their state: the rows that may carry
-- a chat handle (OutboxScrub).
CREATE INDEX outbox_kind_created ON outbox (kind, created_at, id);
-- Event ids by age (EventPrune).
CREATE INDEX events_received ON events (received_at, id);
-- The latest event about an approval: a tombstone is kept while events
-- about it keep coming (ApprovalForget).
CREATE INDEX events_by_approval ON events (approval_id, received_at);
