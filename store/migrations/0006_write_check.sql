-- 0006: the row a readiness check writes, to learn that the store takes
-- writes (store.Store's WriteCheck), not only that it answers a query.
--
-- A store that answers SELECT 1 may still refuse every write: a SQLite
-- file another process holds locked, a disk with no room left, a
-- PostgreSQL that failed over to a read-only standby. WriteCheck commits
-- one write here, on the path every writer takes, so /readyz fails as an
-- ingest would. The table holds one row at most (id 1), written in place
-- each time: checked_at is when the last check wrote it (Unix
-- milliseconds from the caller's clock), for a person looking under the
-- store.
--
-- The previous release runs beside this schema unchanged: it reads and
-- writes nothing here.
CREATE TABLE write_check (
    id         INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    checked_at BIGINT  NOT NULL
);
