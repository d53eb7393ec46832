-- The project's own history (a deleted lead leaves its id here).

CREATE TABLE project_events (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id bigint NOT NULL REFERENCES projects (id),
    at         bigint NOT NULL,
    actor      text,
    activity   text   NOT NULL
);
CREATE INDEX project_events_project ON project_events (project_id, at, id);
