-- Inbox views saved with a name, for their owner or (`shared`) the whole team; `scope` is the
-- owner for their own views and 0 for the team's, so that a name is unique in each place.

CREATE TABLE saved_views (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id),
    owner_id   INTEGER NOT NULL REFERENCES users (id),
    shared     INTEGER NOT NULL,
    scope      INTEGER NOT NULL,
    name       TEXT    NOT NULL,
    query      TEXT    NOT NULL,
    columns    TEXT,
    saved_at   INTEGER NOT NULL,
    UNIQUE (project_id, scope, name)
) STRICT;
