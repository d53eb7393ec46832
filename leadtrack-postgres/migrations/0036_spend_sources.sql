-- The platforms' accounts a project's ad spend is read from with its sign-in (issue #52),
-- and how the last read went.
CREATE TABLE spend_sources (
    project_id bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    platform   text   NOT NULL,
    account    text   NOT NULL,
    synced_at  bigint,
    error      text,
    PRIMARY KEY (project_id, platform)
);
