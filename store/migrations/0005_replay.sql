-- 0005: the signed requests chat platforms sent, for replay refusal.
--
-- A Slack or Discord request is signed over its timestamp and body, and
-- its signature is accepted for a few minutes: a captured click sent
-- again within them would pass the signature check. Every replica checks
-- a request's signature against this table (store.Store's ReplaySeen), so
-- a request seen by one replica is refused by all. The key is the
-- decoded signature, tagged with the platform, in lower-case hex (one
-- spelling per signature, whatever case the header used); forget_at is
-- when the key may go (Unix milliseconds from the caller's clock), past
-- the window in which the signature could be accepted at all.
--
-- The previous release runs beside this schema unchanged: it reads and
-- writes nothing here.
CREATE TABLE replay_seen (
    key       TEXT   NOT NULL PRIMARY KEY,
    forget_at BIGINT NOT NULL
);

-- Keys past their time, oldest first: each ReplaySeen forgets a few.
CREATE INDEX replay_seen_forget ON replay_seen (forget_at, key);
