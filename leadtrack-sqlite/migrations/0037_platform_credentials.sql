-- The grants platforms gave by sign-in (`credentials`: sealed JSON).

CREATE TABLE oauth_grants (
    project_id  INTEGER NOT NULL REFERENCES projects (id),
    provider    TEXT    NOT NULL,
    credentials TEXT    NOT NULL,
    PRIMARY KEY (project_id, provider)
) STRICT, WITHOUT ROWID;
