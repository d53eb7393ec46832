-- Alerts: each member's preferences, the project's chat channels, and the queue of alerts due,
-- written with the change that makes each due.

ALTER TABLE members ADD COLUMN alerts text NOT NULL DEFAULT '{}';
CREATE TABLE chat_channels (
    project_id bigint NOT NULL REFERENCES projects (id),
    kind       text   NOT NULL,
    url        text   NOT NULL,
    PRIMARY KEY (project_id, kind)
);
CREATE TABLE alert_queue (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id bigint NOT NULL REFERENCES projects (id),
    lead_id    bigint NOT NULL,
    kind       text   NOT NULL,
    created_at bigint NOT NULL
);
