-- Lead webhooks, and their queue of events: one row per webhook and event id, holding the body
-- as it was when the event happened (emptied once delivered).

CREATE TABLE webhooks (
    id         TEXT    PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id),
    url        TEXT    NOT NULL,
    secret     TEXT    NOT NULL,
    events     INTEGER NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX webhooks_project ON webhooks (project_id, events);

CREATE TABLE webhook_events (
    id               INTEGER PRIMARY KEY,
    webhook_id       TEXT    NOT NULL REFERENCES webhooks (id),
    event_id         TEXT    NOT NULL,
    event            TEXT    NOT NULL,
    lead_id          INTEGER NOT NULL REFERENCES leads (id),
    occurred_at      INTEGER NOT NULL,
    body             TEXT    NOT NULL,
    state            TEXT    NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    due_at           INTEGER NOT NULL,
    lease_token      TEXT,
    lease_expires_at INTEGER,
    last_attempt_at  INTEGER,
    outcome          TEXT,
    http_status      INTEGER,
    error            TEXT,
    -- Exactly one delivery of an event to a webhook.
    UNIQUE (webhook_id, event_id)
) STRICT;
CREATE INDEX webhook_events_due    ON webhook_events (due_at, id) WHERE state = 'queued';
CREATE INDEX webhook_events_leased ON webhook_events (lease_expires_at, id)
    WHERE state = 'running';
CREATE INDEX webhook_events_state  ON webhook_events (webhook_id, state);
CREATE INDEX webhook_events_last   ON webhook_events (webhook_id, last_attempt_at, id)
    WHERE last_attempt_at IS NOT NULL;
