-- Reviewing ratings before sending: the project's choice, and the drafts.

ALTER TABLE projects ADD COLUMN review_ratings boolean NOT NULL DEFAULT false;
CREATE TABLE rating_drafts (
    project_id    bigint NOT NULL REFERENCES projects (id),
    lead_id       bigint NOT NULL,
    conversion_id text   NOT NULL,
    price         bigint,
    actor         text   NOT NULL,
    at            bigint NOT NULL,
    PRIMARY KEY (project_id, lead_id),
    FOREIGN KEY (project_id, lead_id) REFERENCES leads (project_id, id)
);
CREATE INDEX rating_drafts_project ON rating_drafts (project_id, at);
