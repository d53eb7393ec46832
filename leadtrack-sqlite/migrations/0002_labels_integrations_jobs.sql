-- Conversion labels, integrations, and the conversion job queue.

CREATE TABLE labels (
    id           TEXT    PRIMARY KEY,
    project_id   INTEGER NOT NULL REFERENCES projects (id),
    name         TEXT    NOT NULL,
    mark_as_done INTEGER NOT NULL,
    mapping      TEXT    NOT NULL,
    created_at   INTEGER NOT NULL
) STRICT;
CREATE INDEX labels_project ON labels (project_id, created_at);

CREATE TABLE integrations (
    project_id INTEGER NOT NULL REFERENCES projects (id),
    kind       TEXT    NOT NULL,
    settings   TEXT    NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (project_id, kind)
) STRICT, WITHOUT ROWID;

CREATE TABLE jobs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id         TEXT    NOT NULL UNIQUE,
    project_id       INTEGER NOT NULL REFERENCES projects (id),
    lead_id          INTEGER NOT NULL REFERENCES leads (id),
    conversion_id    TEXT    NOT NULL,
    final_status     TEXT    NOT NULL,
    price            INTEGER,
    state            TEXT    NOT NULL,
    created_at       INTEGER NOT NULL,
    due_at           INTEGER NOT NULL,
    lease_token      TEXT,
    lease_expires_at INTEGER,
    started_at       INTEGER,
    finished_at      INTEGER
) STRICT;
-- The 409 rule, enforced by the database too: at most one unfinished job per lead.
CREATE UNIQUE INDEX jobs_unfinished_per_lead ON jobs (lead_id) WHERE finished_at IS NULL;
CREATE INDEX jobs_lead   ON jobs (lead_id, id);
CREATE INDEX jobs_due    ON jobs (due_at, id) WHERE state = 'queued';
CREATE INDEX jobs_leased ON jobs (lease_expires_at, id) WHERE state = 'running';

CREATE TABLE deliveries (
    job_id          INTEGER NOT NULL REFERENCES jobs (id),
    integration     TEXT    NOT NULL,
    state           TEXT    NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER,
    detail          TEXT,
    PRIMARY KEY (job_id, integration)
) STRICT, WITHOUT ROWID;

CREATE TABLE attempts (
    id          INTEGER PRIMARY KEY,
    job_id      INTEGER NOT NULL REFERENCES jobs (id),
    integration TEXT    NOT NULL,
    at          INTEGER NOT NULL,
    outcome     TEXT    NOT NULL,
    http_status INTEGER,
    error       TEXT,
    retry_at    INTEGER
) STRICT;
CREATE INDEX attempts_job ON attempts (job_id, id);
