-- The lead sources a project set up (`settings`: sealed JSON; `routing`: what the platform's
-- announcements name it by, a Meta page's id), and the leads they announced, to fetch: each
-- once per project, due at `due_at` (while claimed, its lease's end).

CREATE TABLE lead_sources (
    project_id bigint NOT NULL REFERENCES projects (id),
    kind       text   NOT NULL,
    settings   text   NOT NULL,
    routing    text,
    PRIMARY KEY (project_id, kind)
);
CREATE INDEX lead_sources_routing ON lead_sources (kind, routing) WHERE routing IS NOT NULL;
CREATE TABLE lead_fetches (
    id           bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id   bigint  NOT NULL REFERENCES projects (id),
    kind         text    NOT NULL,
    external_id  text    NOT NULL,
    announced    text    NOT NULL,
    attempts     integer NOT NULL DEFAULT 0,
    due_at       bigint  NOT NULL,
    lease_token  uuid,
    last_error   text,
    done_at      bigint,
    UNIQUE (project_id, kind, external_id)
);
CREATE INDEX lead_fetches_due ON lead_fetches (due_at) WHERE done_at IS NULL;
