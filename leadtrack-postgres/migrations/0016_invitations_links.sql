-- The team without a shell. Pending invitations and links about an account (a password reset,
-- an email change), each kept only as its link's SHA-256 and deleted once taken; where each
-- session was started; the address behind each audit event.

CREATE TABLE invitations (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id bigint NOT NULL REFERENCES projects (id),
    email      text   NOT NULL,
    email_key  text   NOT NULL,
    role       text   NOT NULL,
    invited_by text   NOT NULL,
    link_hash  bytea  NOT NULL UNIQUE,
    sent_at    bigint NOT NULL,
    UNIQUE (project_id, email_key)
);

CREATE TABLE account_links (
    user_id    bigint NOT NULL REFERENCES users (id),
    kind       text   NOT NULL,
    link_hash  bytea  NOT NULL UNIQUE,
    email      text,
    created_at bigint NOT NULL,
    PRIMARY KEY (user_id, kind)
);

ALTER TABLE sessions ADD COLUMN address text NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN user_agent text NOT NULL DEFAULT '';
ALTER TABLE project_events ADD COLUMN address text;
