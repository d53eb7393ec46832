-- Team accounts (users, members, sessions, failed sign-ins), a lead's history, and who rated a
-- job.

-- `email` as given; `email_key` (trimmed, lowercased) makes it unique in any case.
CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    email         TEXT    NOT NULL,
    email_key     TEXT    NOT NULL UNIQUE,
    name          TEXT    NOT NULL,
    password_hash TEXT    NOT NULL,
    disabled      INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL
) STRICT;

CREATE TABLE members (
    project_id INTEGER NOT NULL REFERENCES projects (id),
    user_id    INTEGER NOT NULL REFERENCES users (id),
    role       TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (project_id, user_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX members_user ON members (user_id, project_id);

-- Only the SHA-256 of a session token is kept: the database never holds a usable token.
CREATE TABLE sessions (
    hash         BLOB    PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users (id),
    created_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX sessions_user ON sessions (user_id);

-- Rows older than a day are deleted whenever a failure is recorded.
CREATE TABLE login_failures (
    id        INTEGER PRIMARY KEY,
    email_key TEXT    NOT NULL,
    address   TEXT    NOT NULL,
    at        INTEGER NOT NULL
) STRICT;
CREATE INDEX login_failures_email   ON login_failures (email_key, at);
CREATE INDEX login_failures_address ON login_failures (address, at);
CREATE INDEX login_failures_at      ON login_failures (at);

-- `actor` and `activity` hold core's `Actor` and `Activity` as JSON; `actor` is NULL
-- for what the service did by itself.
CREATE TABLE lead_events (
    id         INTEGER PRIMARY KEY,
    lead_id    INTEGER NOT NULL REFERENCES leads (id),
    project_id INTEGER NOT NULL REFERENCES projects (id),
    at         INTEGER NOT NULL,
    actor      TEXT,
    activity   TEXT    NOT NULL
) STRICT;
CREATE INDEX lead_events_lead ON lead_events (lead_id, id);

-- Who rated the lead (an `Actor` as JSON); NULL for jobs queued before this migration.
ALTER TABLE jobs ADD COLUMN rated_by TEXT;
