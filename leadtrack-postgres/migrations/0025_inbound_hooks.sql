-- Inbound webhooks (`settings`: sealed JSON of the name, tool, secret and mapping).

CREATE TABLE inbound_hooks (
    id         text   PRIMARY KEY,
    project_id bigint NOT NULL REFERENCES projects (id),
    settings   text   NOT NULL,
    created_at bigint NOT NULL
);
CREATE INDEX inbound_hooks_project ON inbound_hooks (project_id, created_at);
