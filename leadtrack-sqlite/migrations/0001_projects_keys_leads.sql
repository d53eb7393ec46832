-- Projects, their API keys, and leads.

CREATE TABLE projects (
    id                 INTEGER PRIMARY KEY,
    public_id          TEXT    NOT NULL UNIQUE,
    name               TEXT    NOT NULL,
    active             INTEGER NOT NULL DEFAULT 1,
    currency           TEXT    NOT NULL,
    phone_country_code TEXT,
    lost_mapping       TEXT    NOT NULL,
    created_at         INTEGER NOT NULL
) STRICT;

CREATE TABLE api_keys (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id),
    key_hash   BLOB    NOT NULL UNIQUE,
    prefix     TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
) STRICT;
CREATE INDEX api_keys_project ON api_keys (project_id, prefix);

-- `data` holds the submitted lead (formData, userData, attributionData, deviceData,
-- channelFlow, uniqueIdentifier) as JSON; the columns after it are derived from it
-- so that every filter, lookup and sort has an index within the project.
CREATE TABLE leads (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id        INTEGER NOT NULL REFERENCES projects (id),
    status            TEXT    NOT NULL,
    price             INTEGER,
    note              TEXT,
    conversion_id     TEXT,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    data              TEXT    NOT NULL,
    form_name         TEXT,
    first_name        TEXT,
    last_name         TEXT,
    email             TEXT,
    phone             TEXT,
    company_name      TEXT,
    unique_identifier TEXT,
    unique_event_id   TEXT,
    email_key         TEXT,
    phone_key         TEXT,
    search_text       TEXT    NOT NULL,
    has_gclid         INTEGER NOT NULL,
    has_cid           INTEGER NOT NULL,
    has_fbp           INTEGER NOT NULL,
    has_fbc           INTEGER NOT NULL
) STRICT;
-- Deduplication: one lead per event id and project, also under concurrent creates.
CREATE UNIQUE INDEX leads_event ON leads (project_id, unique_event_id)
    WHERE unique_event_id IS NOT NULL;
CREATE INDEX leads_created    ON leads (project_id, created_at, id);
CREATE INDEX leads_status     ON leads (project_id, status, created_at, id);
CREATE INDEX leads_form       ON leads (project_id, form_name, created_at, id);
CREATE INDEX leads_identifier ON leads (project_id, unique_identifier, created_at, id);
CREATE INDEX leads_email_key  ON leads (project_id, email_key, created_at, id);
CREATE INDEX leads_phone_key  ON leads (project_id, phone_key, created_at, id);
CREATE INDEX leads_first_name ON leads (project_id, first_name COLLATE NOCASE, id);
CREATE INDEX leads_last_name  ON leads (project_id, last_name COLLATE NOCASE, id);
CREATE INDEX leads_email      ON leads (project_id, email COLLATE NOCASE, id);
CREATE INDEX leads_price      ON leads (project_id, price, id);
