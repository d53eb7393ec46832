//! The schema, as a constant list of migrations, applied at start in one transaction under
//! an advisory lock: of ten servers starting at once, one migrates and the others wait for
//! it, then find nothing left to do. `leadtrack_schema` records how many have been applied.
//! (Not a runner such as `refinery`: every migration here is applied in the one
//! transaction that holds the advisory lock, and the version is the same count the SQLite
//! backend keeps; a runner would own the transactions and keep a history table of its own.)
//!
//! Every table of a project's data carries `project_id` first in its primary key and in
//! each unique key, so that it can be distributed by project (Citus'
//! `create_distributed_table(…, 'project_id')`, see `docs/SCALING.md`). Times are
//! milliseconds since the epoch (`bigint`), as in the SQLite backend, and a lead's data is
//! the JSON text as submitted (`text`, not `jsonb`, which would reorder its keys).

use deadpool_postgres::GenericClient;
use leadtrack_core::StoreError;
use leadtrack_core::lead::LeadData;
use leadtrack_core::matching;

use crate::Error;

/// The advisory lock key migrations are applied under ("leadtrk" in ASCII).
pub(crate) const MIGRATION_LOCK: i64 = 0x006c_6561_6474_726b;

/// Every migration, oldest first. Never edit one that has shipped: append a new one.
pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: everything of leadtrack 0.1, as the SQLite backend's migrations 1 to 15 left it.
    r#"
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
    "#,
    // 2: search reads a narrow copy of each lead's search text and status. A search's
    // total is counted by rechecking each match the trigram index finds (it is lossy for
    // `LIKE`), one heap row each: in this table about 70 leads fit a page, where `leads`
    // holds about 9, so a search matching 25,000 of a project's 800,000 leads reads 12,000
    // pages instead of 28,000. The status is copied so that a search's per-status counts
    // (the inbox's tabs) need no other row either. A trigger keeps the copy, in the
    // transaction that changes the lead.
    r#"
    CREATE TABLE lead_search (
        project_id  bigint NOT NULL,
        id          bigint NOT NULL,
        status      text   NOT NULL,
        search_text text   NOT NULL,
        PRIMARY KEY (project_id, id)
    );
    INSERT INTO lead_search (project_id, id, status, search_text)
        SELECT project_id, id, status, search_text FROM leads ORDER BY project_id, id;
    DROP INDEX leads_search;
    -- Keyed by project too (btree_gin), so that a search within a small project can read
    -- that project's entries alone.
    CREATE INDEX lead_search_text ON lead_search
        USING gin (project_id, search_text gin_trgm_ops);

    CREATE FUNCTION lead_search_copy() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'INSERT' THEN
            INSERT INTO lead_search (project_id, id, status, search_text)
                VALUES (NEW.project_id, NEW.id, NEW.status, NEW.search_text);
        ELSIF TG_OP = 'DELETE' THEN
            DELETE FROM lead_search WHERE project_id = OLD.project_id AND id = OLD.id;
        ELSE
            UPDATE lead_search SET status = NEW.status, search_text = NEW.search_text
                WHERE project_id = NEW.project_id AND id = NEW.id;
        END IF;
        RETURN NULL;
    END
    $$;
    CREATE TRIGGER lead_search_copy AFTER INSERT OR DELETE ON leads
        FOR EACH ROW EXECUTE FUNCTION lead_search_copy();
    CREATE TRIGGER lead_search_update AFTER UPDATE OF status, search_text ON leads
        FOR EACH ROW
        WHEN (OLD.status IS DISTINCT FROM NEW.status
              OR OLD.search_text IS DISTINCT FROM NEW.search_text)
        EXECUTE FUNCTION lead_search_copy();
    "#,
    // 3: one identity per conversion: each job carries its conversion's id and the time
    // of its first rating (a job from before is its own conversion), and each delivery
    // what it does at its platform.
    r#"
    ALTER TABLE jobs ADD COLUMN conversion_event_id uuid;
    ALTER TABLE jobs ADD COLUMN converted_at bigint;
    UPDATE jobs SET conversion_event_id = event_id, converted_at = created_at;
    ALTER TABLE jobs ALTER COLUMN conversion_event_id SET NOT NULL;
    ALTER TABLE jobs ALTER COLUMN converted_at SET NOT NULL;
    ALTER TABLE deliveries ADD COLUMN action text NOT NULL DEFAULT 'send';
    "#,
    // 4: the undo window of dashboard ratings, per project.
    r#"
    ALTER TABLE projects ADD COLUMN undo_window_seconds integer NOT NULL DEFAULT 10;
    "#,
    // 5: a job of a form remembers the form's one-time token (at most one job per lead and
    // token) and the lead's rating before it, which an undo restores.
    r#"
    ALTER TABLE jobs ADD COLUMN form_token uuid;
    ALTER TABLE jobs ADD COLUMN prior text;
    CREATE UNIQUE INDEX jobs_form ON jobs (project_id, lead_id, form_token)
        WHERE form_token IS NOT NULL;
    "#,
    // 6: a `lost` job remembers the label conversions it withdraws.
    r#"
    ALTER TABLE jobs ADD COLUMN retracts text;
    "#,
    // 7: spam and duplicates: why a lead is spam, the lead it duplicates, and each
    // project's spam rules (a JSON object, `{}`: the defaults).
    r#"
    ALTER TABLE leads ADD COLUMN spam_reason text;
    ALTER TABLE leads ADD COLUMN duplicate_of bigint;
    ALTER TABLE leads ADD COLUMN duplicated boolean NOT NULL DEFAULT false;
    CREATE INDEX leads_duplicate ON leads (project_id, duplicate_of, created_at, id)
        WHERE duplicate_of IS NOT NULL;
    ALTER TABLE projects ADD COLUMN spam_rules text NOT NULL DEFAULT '{}';
    "#,
    // 8: the project's own history (a deleted lead leaves its id here).
    r#"
    CREATE TABLE project_events (
        id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        project_id bigint NOT NULL REFERENCES projects (id),
        at         bigint NOT NULL,
        actor      text,
        activity   text   NOT NULL
    );
    CREATE INDEX project_events_project ON project_events (project_id, at, id);
    "#,
    // 9: each user's dashboard preferences (a JSON object, `{}`: the defaults).
    r#"
    ALTER TABLE users ADD COLUMN preferences text NOT NULL DEFAULT '{}';
    "#,
    // 10: reviewing ratings before sending: the project's choice, and the drafts.
    r#"
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
    "#,
    // 11: the `q` search: its folded text (filled by `leads::backfill_q_text` right after),
    // with a trigram index keyed by project as `lead_search_text` is.
    r#"
    ALTER TABLE leads ADD COLUMN q_text text NOT NULL DEFAULT '';
    CREATE INDEX leads_q_text ON leads USING gin (project_id, q_text gin_trgm_ops);
    "#, // 12: the form name as the case-insensitive `form` filter matches it (core's
    // `matching::form_key`, filled by `leads::backfill` right after).
    r#"
    ALTER TABLE leads ADD COLUMN form_key text;
    "#,
    // 13: the filters of every source (the form exact or in any case, first touch, rating,
    // click ids), each read
    // along an index by creation time, and counted from kept counts: per project, facet
    // (the filtered column, as core's `LeadQuery::facets` names it), value and status, how
    // many leads have it, spread over 16 slots as `lead_status_counts` is. A click id's
    // value is its flag as text (`true`, `false`).
    r#"
    CREATE INDEX leads_form_key       ON leads (project_id, form_key, created_at, id) INCLUDE (status);
    CREATE INDEX leads_first_source   ON leads (project_id, first_source, created_at, id) INCLUDE (status);
    CREATE INDEX leads_first_medium   ON leads (project_id, first_medium, created_at, id) INCLUDE (status);
    CREATE INDEX leads_first_campaign ON leads (project_id, first_campaign, created_at, id) INCLUDE (status);
    CREATE INDEX leads_conversion     ON leads (project_id, conversion_id, created_at, id) INCLUDE (status);
    CREATE INDEX leads_has_gclid      ON leads (project_id, created_at, id) INCLUDE (status) WHERE has_gclid;
    CREATE INDEX leads_has_cid        ON leads (project_id, created_at, id) INCLUDE (status) WHERE has_cid;
    CREATE INDEX leads_has_fbp        ON leads (project_id, created_at, id) INCLUDE (status) WHERE has_fbp;
    CREATE INDEX leads_has_fbc        ON leads (project_id, created_at, id) INCLUDE (status) WHERE has_fbc;
    CREATE INDEX leads_has_msclkid    ON leads (project_id, created_at, id) INCLUDE (status) WHERE has_msclkid;
    CREATE INDEX leads_has_li_fat_id  ON leads (project_id, created_at, id) INCLUDE (status) WHERE has_li_fat_id;

    CREATE TABLE lead_facet_counts (
        project_id bigint   NOT NULL REFERENCES projects (id),
        facet      text     NOT NULL,
        value      text     NOT NULL,
        status     text     NOT NULL,
        slot       smallint NOT NULL,
        total      bigint   NOT NULL,
        PRIMARY KEY (project_id, facet, value, status, slot)
    );
    -- A lead's facets with a value.
    CREATE FUNCTION lead_facets(l leads) RETURNS TABLE (facet text, value text)
    LANGUAGE sql STABLE AS $$
        SELECT f.facet, f.value FROM (VALUES
            ('form_name', l.form_name),
            ('form_key', l.form_key),
            ('first_source', l.first_source),
            ('first_medium', l.first_medium),
            ('first_campaign', l.first_campaign),
            ('conversion_id', l.conversion_id),
            ('has_gclid', l.has_gclid::text),
            ('has_cid', l.has_cid::text),
            ('has_fbp', l.has_fbp::text),
            ('has_fbc', l.has_fbc::text),
            ('has_msclkid', l.has_msclkid::text),
            ('has_li_fat_id', l.has_li_fat_id::text)
        ) AS f (facet, value) WHERE f.value IS NOT NULL
    $$;
    INSERT INTO lead_facet_counts (project_id, facet, value, status, slot, total)
        SELECT l.project_id, f.facet, f.value, l.status, (l.id % 16)::smallint, count(*)
        FROM leads l CROSS JOIN LATERAL lead_facets(l) f
        GROUP BY 1, 2, 3, 4, 5;
    -- The counts a lead leaves and joins, summed so that no count is touched twice, and
    -- locked in one order (the key's), so that two writes never wait for each other's.
    CREATE FUNCTION leads_count_facets() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'UPDATE' AND (OLD.status, OLD.form_name, OLD.form_key, OLD.first_source,
                OLD.first_medium, OLD.first_campaign, OLD.conversion_id, OLD.has_gclid,
                OLD.has_cid, OLD.has_fbp, OLD.has_fbc, OLD.has_msclkid, OLD.has_li_fat_id)
            IS NOT DISTINCT FROM (NEW.status, NEW.form_name, NEW.form_key, NEW.first_source,
                NEW.first_medium, NEW.first_campaign, NEW.conversion_id, NEW.has_gclid,
                NEW.has_cid, NEW.has_fbp, NEW.has_fbc, NEW.has_msclkid, NEW.has_li_fat_id) THEN
            RETURN NULL;
        END IF;
        INSERT INTO lead_facet_counts (project_id, facet, value, status, slot, total)
            SELECT project_id, facet, value, status, slot, sum(change) FROM (
                SELECT OLD.project_id AS project_id, f.facet, f.value, OLD.status AS status,
                    (OLD.id % 16)::smallint AS slot, -1 AS change
                FROM lead_facets(OLD) f WHERE TG_OP <> 'INSERT'
                UNION ALL
                SELECT NEW.project_id, f.facet, f.value, NEW.status, (NEW.id % 16)::smallint, 1
                FROM lead_facets(NEW) f WHERE TG_OP <> 'DELETE'
            ) AS changes
            GROUP BY project_id, facet, value, status, slot HAVING sum(change) <> 0
            ORDER BY project_id, facet, value, status, slot
            ON CONFLICT (project_id, facet, value, status, slot)
            DO UPDATE SET total = lead_facet_counts.total + excluded.total;
        RETURN NULL;
    END
    $$;
    CREATE TRIGGER leads_count_facets AFTER INSERT OR UPDATE OR DELETE ON leads
        FOR EACH ROW EXECUTE FUNCTION leads_count_facets();
    "#,
    // 14: inbox views saved with a name, for their owner or (`shared`) the whole team;
    // `scope` is the owner for their own views and 0 for the team's, so that a name is
    // unique in each place.
    r#"
    CREATE TABLE saved_views (
        id         bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        project_id bigint  NOT NULL REFERENCES projects (id),
        owner_id   bigint  NOT NULL REFERENCES users (id),
        shared     boolean NOT NULL,
        scope      bigint  NOT NULL,
        name       text    NOT NULL,
        query      text    NOT NULL,
        columns    text,
        saved_at   bigint  NOT NULL,
        UNIQUE (project_id, scope, name)
    );
    "#,
    // 15: whether a member may export the project's leads (owners may; members once an
    // owner allows it, which none is yet).
    r#"
    ALTER TABLE members ADD COLUMN can_export boolean NOT NULL DEFAULT false;
    "#,
    // 16: the team without a shell. Pending invitations and links about an account (a
    // password reset, an email change), each kept only as its link's SHA-256 and deleted
    // once taken; where each session was started; the address behind each audit event.
    r#"
    CREATE TABLE invitations (
        id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        project_id bigint NOT NULL REFERENCES projects (id),
        email      text   NOT NULL,
        email_key  text   NOT NULL,
        role       text   NOT NULL,
        invited_by text   NOT NULL,
        link_hash  bytea  NOT NULL UNIQUE,
        sent_at    bigint NOT NULL,
        UNIQUE (project_id, email_key)
    );

    CREATE TABLE account_links (
        user_id    bigint NOT NULL REFERENCES users (id),
        kind       text   NOT NULL,
        link_hash  bytea  NOT NULL UNIQUE,
        email      text,
        created_at bigint NOT NULL,
        PRIMARY KEY (user_id, kind)
    );

    ALTER TABLE sessions ADD COLUMN address text NOT NULL DEFAULT '';
    ALTER TABLE sessions ADD COLUMN user_agent text NOT NULL DEFAULT '';
    ALTER TABLE project_events ADD COLUMN address text;
    "#,
    // 17: labels in an order the owners set (the number keys follow it; until now, the
    // order they were created in), and archived labels.
    r#"
    ALTER TABLE labels ADD COLUMN archived boolean NOT NULL DEFAULT false;
    ALTER TABLE labels ADD COLUMN position bigint NOT NULL DEFAULT 0;
    UPDATE labels SET position = ordered.position
    FROM (
        SELECT project_id, id,
               row_number() OVER (PARTITION BY project_id ORDER BY created_at, id) - 1 AS position
        FROM labels
    ) AS ordered
    WHERE labels.project_id = ordered.project_id AND labels.id = ordered.id;
    CREATE INDEX labels_order ON labels (project_id, position);
    "#,
    // 18: the team's comments on a lead. `author` is core's `Actor` as JSON; `author_id`
    // the user who wrote it, who alone may edit or delete it.
    r#"
    CREATE TABLE lead_comments (
        project_id bigint NOT NULL REFERENCES projects (id),
        id         bigint GENERATED ALWAYS AS IDENTITY,
        lead_id    bigint NOT NULL,
        author_id  bigint,
        author     text   NOT NULL,
        text       text   NOT NULL,
        created_at bigint NOT NULL,
        edited_at  bigint,
        PRIMARY KEY (project_id, id),
        FOREIGN KEY (project_id, lead_id) REFERENCES leads (project_id, id)
    );
    CREATE INDEX lead_comments_lead ON lead_comments (project_id, lead_id, id);
    "#,
    // 19: each lead's first touch (the first comment, rating or status change by a
    // person): when, and by whom, for the reports; from the history already recorded.
    r#"
    ALTER TABLE leads ADD COLUMN first_touch_at bigint;
    ALTER TABLE leads ADD COLUMN first_touch_by text;
    UPDATE leads SET first_touch_at = t.at, first_touch_by = t.name
    FROM (
        SELECT DISTINCT ON (project_id, lead_id) project_id, lead_id, at,
               actor::jsonb ->> 'name' AS name
        FROM lead_events
        WHERE actor::jsonb ->> 'kind' = 'user'
          AND activity::jsonb ->> 'type' IN ('rated', 'reopened', 'commented', 'spam', 'not_spam')
        ORDER BY project_id, lead_id, at, id
    ) AS t
    WHERE leads.project_id = t.project_id AND leads.id = t.lead_id;
    -- The reports read the touched leads of a range alone.
    CREATE INDEX leads_touched ON leads (project_id, created_at) WHERE first_touch_at IS NOT NULL;
    "#,
    // 20: who each lead is assigned to, and each project's round-robin rule with the
    // member its last lead went to.
    r#"
    ALTER TABLE leads ADD COLUMN assigned_to bigint REFERENCES users (id);
    -- "Mine": a member's leads by status, read without the unassigned ones.
    CREATE INDEX leads_assigned ON leads (project_id, assigned_to, status)
        WHERE assigned_to IS NOT NULL;
    CREATE TABLE round_robin (
        project_id bigint PRIMARY KEY REFERENCES projects (id),
        rule       text   NOT NULL,
        last_user  bigint
    );
    "#,
    // 21: alerts: each member's preferences, the project's chat channels, and the queue
    // of alerts due, written with the change that makes each due.
    r#"
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
    "#,
    // 22: secrets sealed at rest: the check value of the key they are sealed with (see
    // `secrets`, which seals what older builds kept plain right after).
    r#"
    CREATE TABLE secret_key_check (
        one   boolean PRIMARY KEY DEFAULT true CHECK (one),
        value text    NOT NULL
    );
    "#,
    // 23: the grants platforms gave by sign-in (`credentials`: sealed JSON).
    r#"
    CREATE TABLE oauth_grants (
        project_id  bigint NOT NULL REFERENCES projects (id),
        provider    text   NOT NULL,
        credentials text   NOT NULL,
        PRIMARY KEY (project_id, provider)
    );
    "#,
    // 24: the lead sources a project set up (`settings`: sealed JSON; `routing`: what the
    // platform's announcements name it by, a Meta page's id), and the leads they announced,
    // to fetch: each once per project, due at `due_at` (while claimed, its lease's end).
    r#"
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
    "#,
    // 25: inbound webhooks (`settings`: sealed JSON of the name, tool, secret and mapping).
    r#"
    CREATE TABLE inbound_hooks (
        id         text   PRIMARY KEY,
        project_id bigint NOT NULL REFERENCES projects (id),
        settings   text   NOT NULL,
        created_at bigint NOT NULL
    );
    CREATE INDEX inbound_hooks_project ON inbound_hooks (project_id, created_at);
    "#,
    // 26: a statement that inserts leads counts them and copies them to the search table
    // once, set-based, rather than once a lead: an import's batch of hundreds touched the
    // same few count rows hundreds of times. Updates and deletes keep their row triggers.
    r#"
    DROP TRIGGER leads_count_status ON leads;
    CREATE TRIGGER leads_count_status AFTER UPDATE OF status OR DELETE ON leads
        FOR EACH ROW EXECUTE FUNCTION leads_count_status();
    DROP TRIGGER leads_count_facets ON leads;
    CREATE TRIGGER leads_count_facets AFTER UPDATE OR DELETE ON leads
        FOR EACH ROW EXECUTE FUNCTION leads_count_facets();
    DROP TRIGGER lead_search_copy ON leads;
    CREATE TRIGGER lead_search_copy AFTER DELETE ON leads
        FOR EACH ROW EXECUTE FUNCTION lead_search_copy();
    -- The row functions without their insert branches, which no trigger runs any more.
    CREATE OR REPLACE FUNCTION leads_count_status() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN
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
    CREATE OR REPLACE FUNCTION lead_search_copy() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            DELETE FROM lead_search WHERE project_id = OLD.project_id AND id = OLD.id;
        ELSE
            UPDATE lead_search SET status = NEW.status, search_text = NEW.search_text
                WHERE project_id = NEW.project_id AND id = NEW.id;
        END IF;
        RETURN NULL;
    END
    $$;
    -- The counts are locked in the order the row triggers lock them: facets before
    -- statuses, each table's rows in the order of their keys.
    CREATE FUNCTION leads_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO lead_facet_counts (project_id, facet, value, status, slot, total)
            SELECT l.project_id, f.facet, f.value, l.status, (l.id % 16)::smallint, count(*)
            FROM inserted l CROSS JOIN LATERAL lead_facets(l) f
            GROUP BY 1, 2, 3, 4, 5
            ORDER BY 1, 2, 3, 4, 5
            ON CONFLICT (project_id, facet, value, status, slot)
            DO UPDATE SET total = lead_facet_counts.total + excluded.total;
        INSERT INTO lead_status_counts (project_id, status, slot, total)
            SELECT project_id, status, (id % 16)::smallint, count(*)
            FROM inserted
            GROUP BY 1, 2, 3
            ORDER BY 1, 2, 3
            ON CONFLICT (project_id, status, slot)
            DO UPDATE SET total = lead_status_counts.total + excluded.total;
        INSERT INTO lead_search (project_id, id, status, search_text)
            SELECT project_id, id, status, search_text FROM inserted;
        RETURN NULL;
    END
    $$;
    CREATE TRIGGER leads_inserted AFTER INSERT ON leads
        REFERENCING NEW TABLE AS inserted
        FOR EACH STATEMENT EXECUTE FUNCTION leads_inserted();
    "#,
];

/// A column's value derived from a lead's data.
type DerivedColumn = fn(&LeadData) -> Option<String>;

/// Columns derived from a lead's data that a migration adds, filled by `leads::backfill`
/// right after it for the leads stored before: (the migration's index in [`MIGRATIONS`],
/// the column, its value).
const BACKFILLS: [(usize, &str, DerivedColumn); 2] = [
    (10, "q_text", |data| {
        Some(leadtrack_core::store::q_text(data))
    }),
    (11, "form_key", |data| {
        data.form_name().map(matching::form_key)
    }),
];

/// Creates the table recording the schema version, and applies the migrations the
/// database lacks, in one transaction holding the migration lock. A database newer than
/// this build is refused rather than misread.
pub(crate) async fn migrate(client: &mut deadpool_postgres::Object) -> Result<(), Error> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS leadtrack_schema (
             one     boolean PRIMARY KEY DEFAULT true CHECK (one),
             version integer NOT NULL
         );
         INSERT INTO leadtrack_schema (version) VALUES (0) ON CONFLICT DO NOTHING;",
    )
    .await?;
    let current = check_known(&tx).await?;
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(current) {
        tx.batch_execute(sql).await?;
        for (_, column, value) in BACKFILLS.iter().filter(|(after, ..)| *after == index) {
            crate::leads::backfill(&tx, column, *value).await?;
        }
        let version = i32::try_from(index + 1).unwrap_or(i32::MAX);
        tx.execute("UPDATE leadtrack_schema SET version = $1", &[&version])
            .await?;
        tracing::info!(version, "applied database migration");
    }
    tx.commit().await?;
    Ok(())
}

/// The schema version recorded in the database, 0 for one leadtrack never used.
async fn version(client: &impl GenericClient) -> Result<i32, Error> {
    let exists = client
        .query_one("SELECT to_regclass('leadtrack_schema') IS NOT NULL", &[])
        .await?
        .try_get::<_, bool>(0)?;
    if !exists {
        return Ok(0);
    }
    Ok(client
        .query_one("SELECT version FROM leadtrack_schema", &[])
        .await?
        .try_get(0)?)
}

/// The number of migrations the database has applied. A database newer than this build is
/// refused rather than misread.
async fn check_known(client: &impl GenericClient) -> Result<usize, Error> {
    let version = version(client).await?;
    match usize::try_from(version) {
        Ok(current) if current <= MIGRATIONS.len() => Ok(current),
        _ => Err(Error::Store(StoreError::Invalid(format!(
            "the database has schema version {version}, newer than this leadtrack knows ({}); upgrade leadtrack",
            MIGRATIONS.len()
        )))),
    }
}

/// Whether the database has every migration of this build applied: the readiness check.
pub(crate) async fn check_current(client: &impl GenericClient) -> Result<(), Error> {
    let version = version(client).await?;
    if usize::try_from(version).ok() == Some(MIGRATIONS.len()) {
        Ok(())
    } else {
        Err(Error::Store(StoreError::Unavailable(format!(
            "the database has schema version {version}, this build expects {}",
            MIGRATIONS.len()
        ))))
    }
}

/// A database of an earlier version is brought up to date with its data.
#[cfg(all(test, leadtrack_postgres))]
mod tests {
    use leadtrack_core::LeadStore;
    use leadtrack_core::request::LeadQuery;
    use leadtrack_core::types::{LeadStatus, ProjectId};

    use super::MIGRATIONS;
    use crate::PgStore;
    use crate::testkit::{URL_VARIABLE, fresh_database};

    #[tokio::test]
    async fn migrations_copy_every_lead_to_the_search_table_and_fill_its_q_text() {
        let cluster = std::env::var(URL_VARIABLE).unwrap();
        let url = fresh_database(&cluster).await;
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        // The database as version 1 left it, with two projects' leads in it.
        client.batch_execute(MIGRATIONS[0]).await.unwrap();
        client
            .batch_execute(
                "CREATE TABLE leadtrack_schema (
                     one     boolean PRIMARY KEY DEFAULT true CHECK (one),
                     version integer NOT NULL
                 );
                 INSERT INTO leadtrack_schema (version) VALUES (1);
                 INSERT INTO projects (public_id, name, currency, lost_mapping, created_at)
                     VALUES ('a', 'A', 'EUR', '{}', 0), ('b', 'B', 'EUR', '{}', 0);
                 INSERT INTO leads (project_id, status, created_at, updated_at, data,
                     last_name, search_text, has_gclid, has_cid, has_fbp, has_fbc,
                     has_msclkid, has_li_fat_id, created_via)
                 SELECT 1 + n % 2, CASE WHEN n % 3 = 0 THEN 'lost' ELSE 'open' END, n, n,
                     '{\"userData\":{\"lastName\":\"Okafor-Müller\"}}', 'Okafor',
                     'okafor' || n, false, false, false, false, false,
                     false, 'server'
                 FROM generate_series(1, 30) AS n;",
            )
            .await
            .unwrap();
        let store = PgStore::connect(&url, &crate::testkit::test_key())
            .await
            .unwrap();
        store.ready().await.unwrap();
        let search = |term: &str| LeadQuery {
            search: Some(term.to_owned()),
            ..LeadQuery::default()
        };
        // Project 1 holds the even leads, of which 2, 8, 14, 20, 26 are not lost.
        let page = store.list_leads(ProjectId(1), &search("okafor")).await;
        assert_eq!(page.unwrap().total, 15);
        let page = store.list_leads(ProjectId(1), &search("okafor2")).await;
        let ids: Vec<i64> = page.unwrap().leads.iter().map(|lead| lead.id.0).collect();
        assert_eq!(ids, [28, 26, 24, 22, 20, 2]);
        let counts = store
            .status_counts(ProjectId(1), &search("okafor"))
            .await
            .unwrap();
        assert!(counts.contains(&(LeadStatus::Open, 10)), "{counts:?}");
        assert!(counts.contains(&(LeadStatus::Lost, 5)), "{counts:?}");
        // Migration 11 gave every lead its `q` text.
        let q = LeadQuery {
            q: vec!["muller".to_owned()],
            ..LeadQuery::default()
        };
        assert_eq!(store.list_leads(ProjectId(1), &q).await.unwrap().total, 15);
    }
}
