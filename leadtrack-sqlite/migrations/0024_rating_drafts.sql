-- Reviewing ratings before sending: the project's choice, and the drafts.

ALTER TABLE projects ADD COLUMN review_ratings INTEGER NOT NULL DEFAULT 0;
CREATE TABLE rating_drafts (
    lead_id       INTEGER PRIMARY KEY REFERENCES leads (id),
    project_id    INTEGER NOT NULL REFERENCES projects (id),
    conversion_id TEXT    NOT NULL,
    price         INTEGER,
    actor         TEXT    NOT NULL,
    at            INTEGER NOT NULL
) STRICT;
CREATE INDEX rating_drafts_project ON rating_drafts (project_id, at);
