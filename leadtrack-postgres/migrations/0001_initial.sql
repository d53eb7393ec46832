-- Everything of leadtrack 0.1, as the SQLite backend's migrations 1 to 15 left it.

CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS btree_gin;

-- Shared by every project: distributed by Citus as reference tables.
CREATE TABLE projects (
    id              bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    public_id       text    NOT NULL UNIQUE,
    name            text    NOT NULL,
    active          boolean NOT NULL DEFAULT true,
    currency        text    NOT NULL,
    region          text,
    lost_mapping    text    NOT NULL,
    created_at      bigint  NOT NULL,
    allowed_origins text    NOT NULL DEFAULT '[]',
    default_consent text    NOT NULL DEFAULT '{}'
);

-- A key is found by its hash alone, before its project is known.
CREATE TABLE api_keys (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id bigint NOT NULL REFERENCES projects (id),
    key_hash   bytea  NOT NULL UNIQUE,
    prefix     text   NOT NULL,
    created_at bigint NOT NULL,
    revoked_at bigint
);
CREATE INDEX api_keys_project ON api_keys (project_id, prefix);

CREATE TABLE users (
    id            bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email         text    NOT NULL,
    email_key     text    NOT NULL UNIQUE,
    name          text    NOT NULL,
    password_hash text    NOT NULL,
    disabled      boolean NOT NULL DEFAULT false,
    created_at    bigint  NOT NULL
);

CREATE TABLE members (
    project_id bigint NOT NULL REFERENCES projects (id),
    user_id    bigint NOT NULL REFERENCES users (id),
    role       text   NOT NULL,
    created_at bigint NOT NULL,
    PRIMARY KEY (project_id, user_id)
);
CREATE INDEX members_user ON members (user_id, project_id);

-- Only the SHA-256 of a session token is kept.
CREATE TABLE sessions (
    hash         bytea  PRIMARY KEY,
    user_id      bigint NOT NULL REFERENCES users (id),
    created_at   bigint NOT NULL,
    last_seen_at bigint NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE login_failures (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email_key text   NOT NULL,
    address   text   NOT NULL,
    at        bigint NOT NULL
);
CREATE INDEX login_failures_email   ON login_failures (email_key, at);
CREATE INDEX login_failures_address ON login_failures (address, at);
CREATE INDEX login_failures_at      ON login_failures (at);

-- A copy of a SQLite database into this one (`server migrate-to`): which, since when,
-- and whether it finished. A copy that did not finish is resumed by running it again.
CREATE TABLE leadtrack_import (
    one         boolean PRIMARY KEY DEFAULT true CHECK (one),
    source      text    NOT NULL,
    started_at  bigint  NOT NULL,
    finished_at bigint
);

-- A project's data: distributed by `project_id`.
CREATE TABLE leads (
    project_id        bigint  NOT NULL REFERENCES projects (id),
    id                bigint  GENERATED ALWAYS AS IDENTITY,
    status            text    NOT NULL,
    price             bigint,
    note              text,
    conversion_id     text,
    created_at        bigint  NOT NULL,
    updated_at        bigint  NOT NULL,
    data              text    NOT NULL,
    form_name         text,
    first_name        text,
    last_name         text,
    email             text,
    phone             text,
    company_name      text,
    unique_identifier text,
    unique_event_id   text,
    email_key         text,
    phone_key         text,
    search_text       text    NOT NULL,
    has_gclid         boolean NOT NULL,
    has_cid           boolean NOT NULL,
    has_fbp           boolean NOT NULL,
    has_fbc           boolean NOT NULL,
    has_msclkid       boolean NOT NULL,
    has_li_fat_id     boolean NOT NULL,
    first_source      text,
    first_medium      text,
    first_campaign    text,
    last_source       text,
    last_medium       text,
    last_campaign     text,
    created_via       text    NOT NULL,
    PRIMARY KEY (project_id, id)
);
-- Deduplication: one lead per event id, project and route, also under concurrent
-- creates (`INSERT … ON CONFLICT` on this index).
CREATE UNIQUE INDEX leads_event ON leads (project_id, unique_event_id, created_via)
    WHERE unique_event_id IS NOT NULL;
CREATE INDEX leads_created    ON leads (project_id, created_at, id);
CREATE INDEX leads_status     ON leads (project_id, status, created_at, id);
CREATE INDEX leads_form       ON leads (project_id, form_name, created_at, id);
CREATE INDEX leads_identifier ON leads (project_id, unique_identifier, created_at, id)
    WHERE unique_identifier IS NOT NULL;
CREATE INDEX leads_email_key  ON leads (project_id, email_key, created_at, id)
    WHERE email_key IS NOT NULL;
CREATE INDEX leads_phone_key  ON leads (project_id, phone_key, created_at, id)
    WHERE phone_key IS NOT NULL;
-- Names and emails sort ignoring case as SQLite's NOCASE does: A-Z folded, then bytes.
CREATE INDEX leads_first_name ON leads (project_id,
    (translate(first_name, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') COLLATE "C"), id);
CREATE INDEX leads_last_name  ON leads (project_id,
    (translate(last_name, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') COLLATE "C"), id);
CREATE INDEX leads_email      ON leads (project_id,
    (translate(email, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') COLLATE "C"), id);
CREATE INDEX leads_price      ON leads (project_id, price, id);
-- Substring search: trigrams of the lowercased search text, keyed by project too
-- (btree_gin), so that a search within a project reads that project's entries alone.
CREATE INDEX leads_search ON leads USING gin (project_id, search_text gin_trgm_ops);

-- The count of each project's leads per status, kept by a trigger, so that an
-- unfiltered or status-only listing counts its total without a scan. Each count is
-- spread over 16 slots (by lead id), so concurrent creates in one project rarely wait
-- for each other's row lock: the total is the sum of the slots.
CREATE TABLE lead_status_counts (
    project_id bigint   NOT NULL REFERENCES projects (id),
    status     text     NOT NULL,
    slot       smallint NOT NULL,
    total      bigint   NOT NULL,
    PRIMARY KEY (project_id, status, slot)
);
-- Counts one lead more (+1) or fewer (-1) in a status's slot.
CREATE FUNCTION leads_count_add(project bigint, lead bigint, lead_status text, change int)
RETURNS void LANGUAGE sql AS $$
    INSERT INTO lead_status_counts (project_id, status, slot, total)
        VALUES (project, lead_status, lead % 16, change)
        ON CONFLICT (project_id, status, slot)
        DO UPDATE SET total = lead_status_counts.total + change;
$$;
-- A status change touches two counts; they are always locked in the order of their
-- statuses, so that two changes the opposite way (a rating, open to pending, and a
-- finished job, pending to open) cannot each hold the count the other one waits for.
CREATE FUNCTION leads_count_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM leads_count_add(NEW.project_id, NEW.id, NEW.status, 1);
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM leads_count_add(OLD.project_id, OLD.id, OLD.status, -1);
    ELSIF OLD.status < NEW.status THEN
        PERFORM leads_count_add(OLD.project_id, OLD.id, OLD.status, -1);
        PERFORM leads_count_add(NEW.project_id, NEW.id, NEW.status, 1);
    ELSIF OLD.status > NEW.status THEN
        PERFORM leads_count_add(NEW.project_id, NEW.id, NEW.status, 1);
        PERFORM leads_count_add(OLD.project_id, OLD.id, OLD.status, -1);
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER leads_count_status AFTER INSERT OR UPDATE OF status OR DELETE ON leads
    FOR EACH ROW EXECUTE FUNCTION leads_count_status();

CREATE TABLE lead_events (
    project_id bigint NOT NULL REFERENCES projects (id),
    id         bigint GENERATED ALWAYS AS IDENTITY,
    lead_id    bigint NOT NULL,
    at         bigint NOT NULL,
    actor      text,
    activity   text   NOT NULL,
    PRIMARY KEY (project_id, id),
    FOREIGN KEY (project_id, lead_id) REFERENCES leads (project_id, id)
);
CREATE INDEX lead_events_lead ON lead_events (project_id, lead_id, at, id);

CREATE TABLE labels (
    project_id   bigint  NOT NULL REFERENCES projects (id),
    id           uuid    NOT NULL,
    name         text    NOT NULL,
    mark_as_done boolean NOT NULL,
    mapping      text    NOT NULL,
    created_at   bigint  NOT NULL,
    PRIMARY KEY (project_id, id)
);
CREATE INDEX labels_project ON labels (project_id, created_at);

CREATE TABLE integrations (
    project_id bigint NOT NULL REFERENCES projects (id),
    kind       text   NOT NULL,
    settings   text   NOT NULL,
    updated_at bigint NOT NULL,
    PRIMARY KEY (project_id, kind)
);

CREATE TABLE jobs (
    project_id       bigint NOT NULL REFERENCES projects (id),
    id               bigint GENERATED ALWAYS AS IDENTITY,
    event_id         uuid   NOT NULL,
    lead_id          bigint NOT NULL,
    conversion_id    text   NOT NULL,
    final_status     text   NOT NULL,
    price            bigint,
    state            text   NOT NULL,
    created_at       bigint NOT NULL,
    due_at           bigint NOT NULL,
    lease_token      uuid,
    lease_expires_at bigint,
    started_at       bigint,
    finished_at      bigint,
    rated_by         text,
    PRIMARY KEY (project_id, id),
    UNIQUE (project_id, event_id),
    FOREIGN KEY (project_id, lead_id) REFERENCES leads (project_id, id)
);
-- The 409 rule, enforced by the database too: at most one unfinished job per lead.
CREATE UNIQUE INDEX jobs_unfinished_per_lead ON jobs (project_id, lead_id)
    WHERE finished_at IS NULL;
-- The worker names a job by its id alone.
CREATE INDEX jobs_id     ON jobs (id);
CREATE INDEX jobs_lead   ON jobs (project_id, lead_id, id);
CREATE INDEX jobs_due    ON jobs (due_at, id) WHERE state = 'queued';
CREATE INDEX jobs_leased ON jobs (lease_expires_at, id) WHERE state = 'running';

CREATE TABLE deliveries (
    project_id      bigint NOT NULL,
    job_id          bigint NOT NULL,
    integration     text   NOT NULL,
    state           text   NOT NULL,
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at bigint,
    detail          text,
    PRIMARY KEY (project_id, job_id, integration),
    FOREIGN KEY (project_id, job_id) REFERENCES jobs (project_id, id)
);

CREATE TABLE attempts (
    project_id  bigint NOT NULL,
    id          bigint GENERATED ALWAYS AS IDENTITY,
    job_id      bigint NOT NULL,
    integration text   NOT NULL,
    at          bigint NOT NULL,
    outcome     text   NOT NULL,
    http_status integer,
    error       text,
    retry_at    bigint,
    PRIMARY KEY (project_id, id),
    FOREIGN KEY (project_id, job_id) REFERENCES jobs (project_id, id)
);
CREATE INDEX attempts_job ON attempts (project_id, job_id, id);

-- The newest delivery attempt per project and integration, for the settings page:
-- the latest `at`, ties going to the attempt recorded last.
CREATE TABLE last_attempts (
    project_id  bigint NOT NULL REFERENCES projects (id),
    integration text   NOT NULL,
    attempt_id  bigint NOT NULL,
    at          bigint NOT NULL,
    PRIMARY KEY (project_id, integration)
);

CREATE TABLE webhooks (
    project_id bigint NOT NULL REFERENCES projects (id),
    id         uuid   NOT NULL,
    url        text   NOT NULL,
    secret     text   NOT NULL,
    events     bigint NOT NULL,
    created_at bigint NOT NULL,
    seq        bigint GENERATED ALWAYS AS IDENTITY,
    PRIMARY KEY (project_id, id)
);
CREATE INDEX webhooks_project ON webhooks (project_id, created_at, seq);

CREATE TABLE webhook_events (
    project_id       bigint NOT NULL,
    id               bigint GENERATED ALWAYS AS IDENTITY,
    webhook_id       uuid   NOT NULL,
    event_id         uuid   NOT NULL,
    event            text   NOT NULL,
    lead_id          bigint NOT NULL,
    occurred_at      bigint NOT NULL,
    body             text   NOT NULL,
    state            text   NOT NULL,
    attempts         integer NOT NULL DEFAULT 0,
    due_at           bigint NOT NULL,
    lease_token      uuid,
    lease_expires_at bigint,
    last_attempt_at  bigint,
    outcome          text,
    http_status      integer,
    error            text,
    PRIMARY KEY (project_id, id),
    -- Exactly one delivery of an event to a webhook.
    UNIQUE (project_id, webhook_id, event_id),
    FOREIGN KEY (project_id, webhook_id) REFERENCES webhooks (project_id, id),
    FOREIGN KEY (project_id, lead_id) REFERENCES leads (project_id, id)
);
-- The worker names a delivery by its id alone.
CREATE INDEX webhook_events_id     ON webhook_events (id);
CREATE INDEX webhook_events_due    ON webhook_events (due_at, id) WHERE state = 'queued';
CREATE INDEX webhook_events_leased ON webhook_events (lease_expires_at, id)
    WHERE state = 'running';
CREATE INDEX webhook_events_state  ON webhook_events (project_id, webhook_id, state);
CREATE INDEX webhook_events_last   ON webhook_events (project_id, webhook_id, last_attempt_at, id)
    WHERE last_attempt_at IS NOT NULL;
