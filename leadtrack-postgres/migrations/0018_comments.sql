-- The team's comments on a lead. `author` is core's `Actor` as JSON; `author_id` the user who
-- wrote it, who alone may edit or delete it.

CREATE TABLE lead_comments (
    project_id bigint NOT NULL REFERENCES projects (id),
    id         bigint GENERATED ALWAYS AS IDENTITY,
    lead_id    bigint NOT NULL,
    author_id  bigint,
    author     text   NOT NULL,
    text       text   NOT NULL,
    created_at bigint NOT NULL,
    edited_at  bigint,
    PRIMARY KEY (project_id, id),
    FOREIGN KEY (project_id, lead_id) REFERENCES leads (project_id, id)
);
CREATE INDEX lead_comments_lead ON lead_comments (project_id, lead_id, id);
