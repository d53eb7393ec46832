-- The team without a shell. Pending invitations and links about an account (a password reset,
-- an email change), each kept only as its link's SHA-256 and deleted once taken; where each
-- session was started; the address behind each audit event.

CREATE TABLE invitations (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id),
    email      TEXT    NOT NULL,
    email_key  TEXT    NOT NULL,
    role       TEXT    NOT NULL,
    invited_by TEXT    NOT NULL,
    link_hash  BLOB    NOT NULL UNIQUE,
    sent_at    INTEGER NOT NULL,
    UNIQUE (project_id, email_key)
) STRICT;

CREATE TABLE account_links (
    user_id    INTEGER NOT NULL REFERENCES users (id),
    kind       TEXT    NOT NULL,
    link_hash  BLOB    NOT NULL UNIQUE,
    email      TEXT,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, kind)
) STRICT, WITHOUT ROWID;

ALTER TABLE sessions ADD COLUMN address TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN user_agent TEXT NOT NULL DEFAULT '';
ALTER TABLE project_events ADD COLUMN address TEXT;
