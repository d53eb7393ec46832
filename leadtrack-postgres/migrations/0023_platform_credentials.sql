-- The grants platforms gave by sign-in (`credentials`: sealed JSON).

CREATE TABLE oauth_grants (
    project_id  bigint NOT NULL REFERENCES projects (id),
    provider    text   NOT NULL,
    credentials text   NOT NULL,
    PRIMARY KEY (project_id, provider)
);
