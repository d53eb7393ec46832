-- The lead sources a project set up (`settings`: sealed JSON; `routing`: what the platform's
-- announcements name it by, a Meta page's id), and the leads they announced, to fetch: each
-- once per project, due at `due_at` (while claimed, its lease's end).

CREATE TABLE lead_sources (
    project_id INTEGER NOT NULL REFERENCES projects (id),
    kind       TEXT    NOT NULL,
    settings   TEXT    NOT NULL,
    routing    TEXT,
    PRIMARY KEY (project_id, kind)
) STRICT, WITHOUT ROWID;
CREATE INDEX lead_sources_routing ON lead_sources (kind, routing) WHERE routing IS NOT NULL;
CREATE TABLE lead_fetches (
    id           INTEGER PRIMARY KEY,
    project_id   INTEGER NOT NULL REFERENCES projects (id),
    kind         TEXT    NOT NULL,
    external_id  TEXT    NOT NULL,
    announced    TEXT    NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    due_at       INTEGER NOT NULL,
    lease_token  TEXT,
    last_error   TEXT,
    done_at      INTEGER,
    UNIQUE (project_id, kind, external_id)
) STRICT;
CREATE INDEX lead_fetches_due ON lead_fetches (due_at) WHERE done_at IS NULL;
