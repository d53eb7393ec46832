-- The platforms' accounts a project's ad spend is read from with its sign-in (issue #52),
-- and how the last read went.
CREATE TABLE spend_sources (
    project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    platform   TEXT    NOT NULL,
    account    TEXT    NOT NULL,
    synced_at  INTEGER,
    error      TEXT,
    PRIMARY KEY (project_id, platform)
) WITHOUT ROWID;
