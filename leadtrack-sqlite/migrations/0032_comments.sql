-- The team's comments on a lead. `author` is core's `Actor` as JSON; `author_id` the user who
-- wrote it, who alone may edit or delete it.

CREATE TABLE lead_comments (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id),
    lead_id    INTEGER NOT NULL REFERENCES leads (id),
    author_id  INTEGER,
    author     TEXT    NOT NULL,
    text       TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    edited_at  INTEGER
) STRICT;
CREATE INDEX lead_comments_lead ON lead_comments (project_id, lead_id, id);
