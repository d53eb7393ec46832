-- Where a spend source's reporting API is, when not at the platform's own address, and
-- the access token it is read with where not with the project's sign-in (TikTok's),
-- sealed (issue #52).
ALTER TABLE spend_sources ADD COLUMN base_url TEXT;

CREATE TABLE spend_tokens (
    project_id INTEGER NOT NULL,
    platform   TEXT    NOT NULL,
    token      TEXT    NOT NULL,
    PRIMARY KEY (project_id, platform),
    FOREIGN KEY (project_id, platform) REFERENCES spend_sources (project_id, platform)
        ON DELETE CASCADE
) WITHOUT ROWID;
