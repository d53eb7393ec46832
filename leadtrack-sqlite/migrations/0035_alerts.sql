-- Alerts: each member's preferences, the project's chat channels, and the queue of alerts due,
-- written with the change that makes each due.

ALTER TABLE members ADD COLUMN alerts TEXT NOT NULL DEFAULT '{}';
CREATE TABLE chat_channels (
    project_id INTEGER NOT NULL REFERENCES projects (id),
    kind       TEXT    NOT NULL,
    url        TEXT    NOT NULL,
    PRIMARY KEY (project_id, kind)
) STRICT, WITHOUT ROWID;
CREATE TABLE alert_queue (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id),
    lead_id    INTEGER NOT NULL,
    kind       TEXT    NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;
