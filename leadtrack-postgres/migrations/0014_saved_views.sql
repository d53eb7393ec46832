-- Inbox views saved with a name, for their owner or (`shared`) the whole team; `scope` is the
-- owner for their own views and 0 for the team's, so that a name is unique in each place.

CREATE TABLE saved_views (
    id         bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id bigint  NOT NULL REFERENCES projects (id),
    owner_id   bigint  NOT NULL REFERENCES users (id),
    shared     boolean NOT NULL,
    scope      bigint  NOT NULL,
    name       text    NOT NULL,
    query      text    NOT NULL,
    columns    text,
    saved_at   bigint  NOT NULL,
    UNIQUE (project_id, scope, name)
);
