-- 0009: members' passkeys, and the challenges a passkey answers.
--
-- passkeys: one WebAuthn credential a tenant member enrolled (adapters/
-- passkey). id is the credential id in unpadded base64url (one spelling
-- per credential, unique across tenants as authenticators make it);
-- credential is the verified credential record as JSON (public key,
-- flags, transports, authenticator), owned by the passkey package;
-- sign_count is the authenticator's signature counter as last seen, kept
-- apart so that moving it forward is one conditional UPDATE: a count that
-- does not move forward (a cloned authenticator) changes nothing. Times
-- are Unix milliseconds from the caller's clock; last_used_at 0: never.
--
-- passkey_challenges: a challenge the bot issued, kept until it expires
-- so that any replica can finish the ceremony and each is answered once.
-- id is the SHA-256 (hex) of the reference the browser carries back;
-- purpose is 'approve' (bound to one approval, revision, digest and
-- member) or 'enrol' (bound to the member only); session is the
-- ceremony's session data (JSON, owned by the passkey package); used_at
-- is when it was taken, 0 while unused.
--
-- The previous release runs beside this schema unchanged: it reads and
-- writes nothing here.
CREATE TABLE passkeys (
    id           TEXT   NOT NULL PRIMARY KEY,
    tenant       TEXT   NOT NULL,
    member       TEXT   NOT NULL,
    name         TEXT   NOT NULL,
    credential   TEXT   NOT NULL,
    sign_count   BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    last_used_at BIGINT NOT NULL
);

-- A member's passkeys, in the order they were enrolled.
CREATE INDEX passkeys_member ON passkeys (tenant, member, created_at, id);

CREATE TABLE passkey_challenges (
    id          TEXT   NOT NULL PRIMARY KEY,
    purpose     TEXT   NOT NULL,
    tenant      TEXT   NOT NULL,
    member      TEXT   NOT NULL,
    approval_id TEXT   NOT NULL,
    revision    BIGINT NOT NULL,
    digest      TEXT   NOT NULL,
    session     TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    used_at     BIGINT NOT NULL
);

-- Challenges past their time, oldest first: each new one forgets a few.
CREATE INDEX passkey_challenges_expiry ON passkey_challenges (expires_at, id);
