-- The project's own history (a deleted lead leaves its id here).

CREATE TABLE project_events (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id),
    at         INTEGER NOT NULL,
    actor      TEXT,
    activity   TEXT    NOT NULL
);
CREATE INDEX project_events_project ON project_events (project_id, at, id);
