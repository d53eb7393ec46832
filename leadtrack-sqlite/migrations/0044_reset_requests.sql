-- Password-reset requests, counted like failed sign-ins (issue #49): 3 an hour for one
-- email and 20 from one address at most. Rows older than a day are deleted whenever a
-- request is recorded.
CREATE TABLE reset_requests (
    id        INTEGER PRIMARY KEY,
    email_key TEXT    NOT NULL,
    address   TEXT    NOT NULL,
    at        INTEGER NOT NULL
) STRICT;
CREATE INDEX reset_requests_email   ON reset_requests (email_key, at);
CREATE INDEX reset_requests_address ON reset_requests (address, at);
CREATE INDEX reset_requests_at      ON reset_requests (at);
