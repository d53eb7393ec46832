-- Inbound webhooks (`settings`: sealed JSON of the name, tool, secret and mapping).

CREATE TABLE inbound_hooks (
    id         TEXT    PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id),
    settings   TEXT    NOT NULL,
    created_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX inbound_hooks_project ON inbound_hooks (project_id, created_at);
