//! The schema, as a constant list of migrations. `PRAGMA user_version` records how many
//! have been applied; opening a database applies the rest in one transaction.
//!
//! Not `rusqlite_migration`: the migrations run on the writer's own connection, inside the
//! transaction that opens the store, before the writer's group commit starts; a runner
//! owning the connection and its transactions does not fit that.

use leadtrack_core::StoreError;
use rusqlite::{Connection, TransactionBehavior};

use crate::Error;

/// Every migration, oldest first. Never edit one that has shipped: append a new one.
pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: projects, their API keys, and leads.
    r#"
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
    "#,
    // 2: conversion labels, integrations, and the conversion job queue.
    r#"
    CREATE TABLE labels (
        id           TEXT    PRIMARY KEY,
        project_id   INTEGER NOT NULL REFERENCES projects (id),
        name         TEXT    NOT NULL,
        mark_as_done INTEGER NOT NULL,
        mapping      TEXT    NOT NULL,
        created_at   INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX labels_project ON labels (project_id, created_at);

    CREATE TABLE integrations (
        project_id INTEGER NOT NULL REFERENCES projects (id),
        kind       TEXT    NOT NULL,
        settings   TEXT    NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (project_id, kind)
    ) STRICT, WITHOUT ROWID;

    CREATE TABLE jobs (
        id               INTEGER PRIMARY KEY AUTOINCREMENT,
        event_id         TEXT    NOT NULL UNIQUE,
        project_id       INTEGER NOT NULL REFERENCES projects (id),
        lead_id          INTEGER NOT NULL REFERENCES leads (id),
        conversion_id    TEXT    NOT NULL,
        final_status     TEXT    NOT NULL,
        price            INTEGER,
        state            TEXT    NOT NULL,
        created_at       INTEGER NOT NULL,
        due_at           INTEGER NOT NULL,
        lease_token      TEXT,
        lease_expires_at INTEGER,
        started_at       INTEGER,
        finished_at      INTEGER
    ) STRICT;
    -- The 409 rule, enforced by the database too: at most one unfinished job per lead.
    CREATE UNIQUE INDEX jobs_unfinished_per_lead ON jobs (lead_id) WHERE finished_at IS NULL;
    CREATE INDEX jobs_lead   ON jobs (lead_id, id);
    CREATE INDEX jobs_due    ON jobs (due_at, id) WHERE state = 'queued';
    CREATE INDEX jobs_leased ON jobs (lease_expires_at, id) WHERE state = 'running';

    CREATE TABLE deliveries (
        job_id          INTEGER NOT NULL REFERENCES jobs (id),
        integration     TEXT    NOT NULL,
        state           TEXT    NOT NULL,
        attempts        INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER,
        detail          TEXT,
        PRIMARY KEY (job_id, integration)
    ) STRICT, WITHOUT ROWID;

    CREATE TABLE attempts (
        id          INTEGER PRIMARY KEY,
        job_id      INTEGER NOT NULL REFERENCES jobs (id),
        integration TEXT    NOT NULL,
        at          INTEGER NOT NULL,
        outcome     TEXT    NOT NULL,
        http_status INTEGER,
        error       TEXT,
        retry_at    INTEGER
    ) STRICT;
    CREATE INDEX attempts_job ON attempts (job_id, id);
    "#,
    // 3: what keeps listings fast in large projects: a per-project lead count for the
    // unfiltered total, and a trigram index answering substring searches.
    r#"
    CREATE TABLE lead_counts (
        project_id INTEGER PRIMARY KEY REFERENCES projects (id),
        total      INTEGER NOT NULL
    ) STRICT;
    INSERT INTO lead_counts (project_id, total)
        SELECT project_id, count(*) FROM leads GROUP BY project_id;
    CREATE TRIGGER leads_count_insert AFTER INSERT ON leads BEGIN
        INSERT INTO lead_counts (project_id, total) VALUES (new.project_id, 1)
            ON CONFLICT (project_id) DO UPDATE SET total = total + 1;
    END;
    CREATE TRIGGER leads_count_delete AFTER DELETE ON leads BEGIN
        UPDATE lead_counts SET total = total - 1 WHERE project_id = old.project_id;
    END;

    CREATE VIRTUAL TABLE leads_search USING fts5 (
        search_text, content = 'leads', content_rowid = 'id', tokenize = 'trigram'
    );
    INSERT INTO leads_search (leads_search) VALUES ('rebuild');
    CREATE TRIGGER leads_search_insert AFTER INSERT ON leads BEGIN
        INSERT INTO leads_search (rowid, search_text) VALUES (new.id, new.search_text);
    END;
    CREATE TRIGGER leads_search_update AFTER UPDATE OF search_text ON leads BEGIN
        INSERT INTO leads_search (leads_search, rowid, search_text)
            VALUES ('delete', old.id, old.search_text);
        INSERT INTO leads_search (rowid, search_text) VALUES (new.id, new.search_text);
    END;
    CREATE TRIGGER leads_search_delete AFTER DELETE ON leads BEGIN
        INSERT INTO leads_search (leads_search, rowid, search_text)
            VALUES ('delete', old.id, old.search_text);
    END;
    "#,
    // 4: team accounts (users, members, sessions, failed sign-ins), a lead's history, and
    // who rated a job.
    r#"
    -- `email` as given; `email_key` (trimmed, lowercased) makes it unique in any case.
    CREATE TABLE users (
        id            INTEGER PRIMARY KEY,
        email         TEXT    NOT NULL,
        email_key     TEXT    NOT NULL UNIQUE,
        name          TEXT    NOT NULL,
        password_hash TEXT    NOT NULL,
        disabled      INTEGER NOT NULL DEFAULT 0,
        created_at    INTEGER NOT NULL
    ) STRICT;

    CREATE TABLE members (
        project_id INTEGER NOT NULL REFERENCES projects (id),
        user_id    INTEGER NOT NULL REFERENCES users (id),
        role       TEXT    NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (project_id, user_id)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX members_user ON members (user_id, project_id);

    -- Only the SHA-256 of a session token is kept: the database never holds a usable token.
    CREATE TABLE sessions (
        hash         BLOB    PRIMARY KEY,
        user_id      INTEGER NOT NULL REFERENCES users (id),
        created_at   INTEGER NOT NULL,
        last_seen_at INTEGER NOT NULL
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX sessions_user ON sessions (user_id);

    -- Rows older than a day are deleted whenever a failure is recorded.
    CREATE TABLE login_failures (
        id        INTEGER PRIMARY KEY,
        email_key TEXT    NOT NULL,
        address   TEXT    NOT NULL,
        at        INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX login_failures_email   ON login_failures (email_key, at);
    CREATE INDEX login_failures_address ON login_failures (address, at);
    CREATE INDEX login_failures_at      ON login_failures (at);

    -- `actor` and `activity` hold core's `Actor` and `Activity` as JSON; `actor` is NULL
    -- for what the service did by itself.
    CREATE TABLE lead_events (
        id         INTEGER PRIMARY KEY,
        lead_id    INTEGER NOT NULL REFERENCES leads (id),
        project_id INTEGER NOT NULL REFERENCES projects (id),
        at         INTEGER NOT NULL,
        actor      TEXT,
        activity   TEXT    NOT NULL
    ) STRICT;
    CREATE INDEX lead_events_lead ON lead_events (lead_id, id);

    -- Who rated the lead (an `Actor` as JSON); NULL for jobs queued before this migration.
    ALTER TABLE jobs ADD COLUMN rated_by TEXT;
    "#,
    // 5: the first and last touch of each lead's channel path, which reports group by
    // (`leadtrack_core::report::touch_columns` of the lead's data, written with the lead).
    // Rows already there are filled by `backfill_touches` right after this step: parsing
    // channel paths (JSON, or the URL-encoded cookie) is core's work, not SQL's.
    r#"
    ALTER TABLE leads ADD COLUMN first_source   TEXT;
    ALTER TABLE leads ADD COLUMN first_medium   TEXT;
    ALTER TABLE leads ADD COLUMN first_campaign TEXT;
    ALTER TABLE leads ADD COLUMN last_source    TEXT;
    ALTER TABLE leads ADD COLUMN last_medium    TEXT;
    ALTER TABLE leads ADD COLUMN last_campaign  TEXT;
    "#,
    // 6: what a report reads, and nothing else: the project's leads in a range of creation
    // times with every column it counts, so it never visits the table (built after the
    // backfill of 5, which then need not keep it up to date row by row).
    r#"
    CREATE INDEX leads_report ON leads (
        project_id, created_at,
        first_source, first_medium, first_campaign, last_source, last_medium, last_campaign,
        status, conversion_id, price
    );
    "#,
    // 7: the newest delivery attempt per project and integration, for the settings page.
    // A trigger keeps it as attempts are recorded, so reading it never scans a project's
    // jobs; the newest is the latest `at`, ties going to the attempt recorded last.
    r#"
    CREATE TABLE last_attempts (
        project_id  INTEGER NOT NULL REFERENCES projects (id),
        integration TEXT    NOT NULL,
        attempt_id  INTEGER NOT NULL REFERENCES attempts (id),
        at          INTEGER NOT NULL,
        PRIMARY KEY (project_id, integration)
    ) STRICT, WITHOUT ROWID;
    INSERT INTO last_attempts (project_id, integration, attempt_id, at)
        SELECT j.project_id, a.integration, a.id, a.at
        FROM attempts a JOIN jobs j ON j.id = a.job_id WHERE true
        ON CONFLICT (project_id, integration) DO UPDATE
            SET attempt_id = excluded.attempt_id, at = excluded.at
            WHERE (excluded.at, excluded.attempt_id) > (last_attempts.at, last_attempts.attempt_id);
    CREATE TRIGGER attempts_last AFTER INSERT ON attempts BEGIN
        INSERT INTO last_attempts (project_id, integration, attempt_id, at)
            SELECT project_id, new.integration, new.id, new.at FROM jobs WHERE id = new.job_id
            ON CONFLICT (project_id, integration) DO UPDATE
                SET attempt_id = excluded.attempt_id, at = excluded.at
                WHERE (excluded.at, excluded.attempt_id)
                    > (last_attempts.at, last_attempts.attempt_id);
    END;
    "#,
    // 8: the count of each project's leads per status, kept by triggers, so that a
    // listing filtered only by status (an inbox tab) counts its total without a scan.
    r#"
    CREATE TABLE lead_status_counts (
        project_id INTEGER NOT NULL REFERENCES projects (id),
        status     TEXT    NOT NULL,
        total      INTEGER NOT NULL,
        PRIMARY KEY (project_id, status)
    ) STRICT, WITHOUT ROWID;
    INSERT INTO lead_status_counts (project_id, status, total)
        SELECT project_id, status, count(*) FROM leads GROUP BY project_id, status;
    CREATE TRIGGER leads_status_count_insert AFTER INSERT ON leads BEGIN
        INSERT INTO lead_status_counts (project_id, status, total)
            VALUES (new.project_id, new.status, 1)
            ON CONFLICT (project_id, status) DO UPDATE SET total = total + 1;
    END;
    CREATE TRIGGER leads_status_count_update AFTER UPDATE OF status ON leads
    WHEN old.status IS NOT new.status BEGIN
        UPDATE lead_status_counts SET total = total - 1
            WHERE project_id = old.project_id AND status = old.status;
        INSERT INTO lead_status_counts (project_id, status, total)
            VALUES (new.project_id, new.status, 1)
            ON CONFLICT (project_id, status) DO UPDATE SET total = total + 1;
    END;
    CREATE TRIGGER leads_status_count_delete AFTER DELETE ON leads BEGIN
        UPDATE lead_status_counts SET total = total - 1
            WHERE project_id = old.project_id AND status = old.status;
    END;
    "#,
    // 9: hardening. A project's allowed browser origins (a JSON array of strings, empty:
    // any). The route each lead was created by (`browser` or `server`): a browser create
    // merges only into browser leads, so one event id may name one lead per route, and the
    // dedup index holds per route. Leads from before this migration count as `server`:
    // nobody can tell which route made them, and wrongly protecting one from a browser
    // merge costs a duplicate, while the opposite lets anyone overwrite it.
    r#"
    ALTER TABLE projects ADD COLUMN allowed_origins TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE leads ADD COLUMN created_via TEXT NOT NULL DEFAULT 'server';
    DROP INDEX leads_event;
    CREATE UNIQUE INDEX leads_event ON leads (project_id, unique_event_id, created_via)
        WHERE unique_event_id IS NOT NULL;
    "#,
    // 10: a project's phone region (`DE`) replaces its calling code (`49`): national
    // numbers are read by the rules of a country, which a calling code shared by several
    // (1, 7, 44) does not name. Each code becomes the country libphonenumber's metadata
    // (9.0.33) calls the main one for it, whose numbering the others sharing it follow.
    r#"
    ALTER TABLE projects ADD COLUMN region TEXT;
    WITH main_region (code, region) AS (VALUES
        ('1','US'),('7','RU'),('20','EG'),('27','ZA'),('30','GR'),('31','NL'),('32','BE'),
        ('33','FR'),('34','ES'),('36','HU'),('39','IT'),('40','RO'),('41','CH'),('43','AT'),
        ('44','GB'),('45','DK'),('46','SE'),('47','NO'),('48','PL'),('49','DE'),('51','PE'),
        ('52','MX'),('53','CU'),('54','AR'),('55','BR'),('56','CL'),('57','CO'),('58','VE'),
        ('60','MY'),('61','AU'),('62','ID'),('63','PH'),('64','NZ'),('65','SG'),('66','TH'),
        ('81','JP'),('82','KR'),('84','VN'),('86','CN'),('90','TR'),('91','IN'),('92','PK'),
        ('93','AF'),('94','LK'),('95','MM'),('98','IR'),('211','SS'),('212','MA'),
        ('213','DZ'),('216','TN'),('218','LY'),('220','GM'),('221','SN'),('222','MR'),
        ('223','ML'),('224','GN'),('225','CI'),('226','BF'),('227','NE'),('228','TG'),
        ('229','BJ'),('230','MU'),('231','LR'),('232','SL'),('233','GH'),('234','NG'),
        ('235','TD'),('236','CF'),('237','CM'),('238','CV'),('239','ST'),('240','GQ'),
        ('241','GA'),('242','CG'),('243','CD'),('244','AO'),('245','GW'),('246','IO'),
        ('247','AC'),('248','SC'),('249','SD'),('250','RW'),('251','ET'),('252','SO'),
        ('253','DJ'),('254','KE'),('255','TZ'),('256','UG'),('257','BI'),('258','MZ'),
        ('260','ZM'),('261','MG'),('262','RE'),('263','ZW'),('264','NA'),('265','MW'),
        ('266','LS'),('267','BW'),('268','SZ'),('269','KM'),('290','SH'),('291','ER'),
        ('297','AW'),('298','FO'),('299','GL'),('350','GI'),('351','PT'),('352','LU'),
        ('353','IE'),('354','IS'),('355','AL'),('356','MT'),('357','CY'),('358','FI'),
        ('359','BG'),('370','LT'),('371','LV'),('372','EE'),('373','MD'),('374','AM'),
        ('375','BY'),('376','AD'),('377','MC'),('378','SM'),('380','UA'),('381','RS'),
        ('382','ME'),('383','XK'),('385','HR'),('386','SI'),('387','BA'),('389','MK'),
        ('420','CZ'),('421','SK'),('423','LI'),('500','FK'),('501','BZ'),('502','GT'),
        ('503','SV'),('504','HN'),('505','NI'),('506','CR'),('507','PA'),('508','PM'),
        ('509','HT'),('590','GP'),('591','BO'),('592','GY'),('593','EC'),('594','GF'),
        ('595','PY'),('596','MQ'),('597','SR'),('598','UY'),('599','CW'),('670','TL'),
        ('672','NF'),('673','BN'),('674','NR'),('675','PG'),('676','TO'),('677','SB'),
        ('678','VU'),('679','FJ'),('680','PW'),('681','WF'),('682','CK'),('683','NU'),
        ('685','WS'),('686','KI'),('687','NC'),('688','TV'),('689','PF'),('690','TK'),
        ('691','FM'),('692','MH'),('850','KP'),('852','HK'),('853','MO'),('855','KH'),
        ('856','LA'),('880','BD'),('886','TW'),('960','MV'),('961','LB'),('962','JO'),
        ('963','SY'),('964','IQ'),('965','KW'),('966','SA'),('967','YE'),('968','OM'),
        ('970','PS'),('971','AE'),('972','IL'),('973','BH'),('974','QA'),('975','BT'),
        ('976','MN'),('977','NP'),('992','TJ'),('993','TM'),('994','AZ'),('995','GE'),
        ('996','KG'),('998','UZ')
    )
    UPDATE projects SET region = main_region.region
        FROM main_region WHERE main_region.code = projects.phone_country_code;
    ALTER TABLE projects DROP COLUMN phone_country_code;
    "#,
    // 11: a project's default consent for leads that give none (a JSON object of
    // `adUserData` and `adPersonalization`; empty: unknown).
    r#"
    ALTER TABLE projects ADD COLUMN default_consent TEXT NOT NULL DEFAULT '{}';
    "#,
    // 12: the click ids of Microsoft Advertising (`msclkid`) and LinkedIn (`li_fat_id`),
    // for getLeads' `[exists]` filters, as `has_gclid` and the others: a non-blank string
    // in `attributionData`.
    r#"
    ALTER TABLE leads ADD COLUMN has_msclkid INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE leads ADD COLUMN has_li_fat_id INTEGER NOT NULL DEFAULT 0;
    UPDATE leads SET
        has_msclkid = coalesce(
            trim(json_extract(data, '$.attributionData.msclkid')) <> ''
                AND json_type(data, '$.attributionData.msclkid') = 'text', 0),
        has_li_fat_id = coalesce(
            trim(json_extract(data, '$.attributionData.li_fat_id')) <> ''
                AND json_type(data, '$.attributionData.li_fat_id') = 'text', 0)
    WHERE json_extract(data, '$.attributionData.msclkid') IS NOT NULL
       OR json_extract(data, '$.attributionData.li_fat_id') IS NOT NULL;
    "#, // 13: lead webhooks, and their queue of events: one row per webhook and event id,
    // holding the body as it was when the event happened (emptied once delivered).
    r#"
    CREATE TABLE webhooks (
        id         TEXT    PRIMARY KEY,
        project_id INTEGER NOT NULL REFERENCES projects (id),
        url        TEXT    NOT NULL,
        secret     TEXT    NOT NULL,
        events     INTEGER NOT NULL,
        created_at INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX webhooks_project ON webhooks (project_id, events);

    CREATE TABLE webhook_events (
        id               INTEGER PRIMARY KEY,
        webhook_id       TEXT    NOT NULL REFERENCES webhooks (id),
        event_id         TEXT    NOT NULL,
        event            TEXT    NOT NULL,
        lead_id          INTEGER NOT NULL REFERENCES leads (id),
        occurred_at      INTEGER NOT NULL,
        body             TEXT    NOT NULL,
        state            TEXT    NOT NULL,
        attempts         INTEGER NOT NULL DEFAULT 0,
        due_at           INTEGER NOT NULL,
        lease_token      TEXT,
        lease_expires_at INTEGER,
        last_attempt_at  INTEGER,
        outcome          TEXT,
        http_status      INTEGER,
        error            TEXT,
        -- Exactly one delivery of an event to a webhook.
        UNIQUE (webhook_id, event_id)
    ) STRICT;
    CREATE INDEX webhook_events_due    ON webhook_events (due_at, id) WHERE state = 'queued';
    CREATE INDEX webhook_events_leased ON webhook_events (lease_expires_at, id)
        WHERE state = 'running';
    CREATE INDEX webhook_events_state  ON webhook_events (webhook_id, state);
    CREATE INDEX webhook_events_last   ON webhook_events (webhook_id, last_attempt_at, id)
        WHERE last_attempt_at IS NOT NULL;
    "#, // 14: the trigram index, keyed by project. Its rowid is the lead's project and id
    // (`project_id << 36 | id`), so a search within a project reads only that project's
    // part of each trigram's list, and counts its matches without visiting a lead. It is
    // contentless (the leads hold the text) and case-sensitive (search text and terms are
    // lowercased before they get here), so a phrase of the term's trigrams matches exactly
    // the leads whose text contains the term.
    r#"
    DROP TRIGGER leads_search_insert;
    DROP TRIGGER leads_search_update;
    DROP TRIGGER leads_search_delete;
    DROP TABLE leads_search;
    CREATE VIRTUAL TABLE leads_search USING fts5 (
        search_text, content = '', contentless_delete = 1,
        tokenize = 'trigram case_sensitive 1'
    );
    INSERT INTO leads_search (rowid, search_text)
        SELECT project_id << 36 | id, search_text FROM leads;
    CREATE TRIGGER leads_search_insert AFTER INSERT ON leads BEGIN
        INSERT INTO leads_search (rowid, search_text)
            VALUES (new.project_id << 36 | new.id, new.search_text);
    END;
    CREATE TRIGGER leads_search_update AFTER UPDATE OF search_text ON leads BEGIN
        DELETE FROM leads_search WHERE rowid = old.project_id << 36 | old.id;
        INSERT INTO leads_search (rowid, search_text)
            VALUES (new.project_id << 36 | new.id, new.search_text);
    END;
    CREATE TRIGGER leads_search_delete AFTER DELETE ON leads BEGIN
        DELETE FROM leads_search WHERE rowid = old.project_id << 36 | old.id;
    END;
    "#, // 15: the lookup indexes hold only the leads that have the value looked up: a lead
    // without a `uniqueIdentifier` (most of them), email or phone costs no entry. A lookup
    // `= ?` implies the value is there, so each index still serves it.
    r#"
    DROP INDEX leads_identifier;
    CREATE INDEX leads_identifier ON leads (project_id, unique_identifier, created_at, id)
        WHERE unique_identifier IS NOT NULL;
    DROP INDEX leads_email_key;
    CREATE INDEX leads_email_key ON leads (project_id, email_key, created_at, id)
        WHERE email_key IS NOT NULL;
    DROP INDEX leads_phone_key;
    CREATE INDEX leads_phone_key ON leads (project_id, phone_key, created_at, id)
        WHERE phone_key IS NOT NULL;
    "#, // 16: the trigram index merges its segments 16 at a time (SQLite's default is 4),
    // and is forced to only once 64 wait at one level (default 16). Each lead's insert
    // writes a small segment; fewer, larger merges rewrite each entry fewer times, so the
    // writer spends less time merging and its commits stall less often (createLead's p99
    // under load, in `docs/performance.md`), while a search reads a few more segments. See
    // <https://sqlite.org/fts5.html#the_automerge_configuration_option> and
    // <https://sqlite.org/fts5.html#the_crisismerge_configuration_option>.
    r#"
    INSERT INTO leads_search (leads_search, rank) VALUES ('automerge', 16);
    INSERT INTO leads_search (leads_search, rank) VALUES ('crisismerge', 64);
    "#, // 17: one identity per conversion: each job carries its conversion's id and the
    // time of its first rating (a job from before is its own conversion), and each
    // delivery what it does at its platform.
    r#"
    ALTER TABLE jobs ADD COLUMN conversion_event_id TEXT;
    ALTER TABLE jobs ADD COLUMN converted_at INTEGER;
    UPDATE jobs SET conversion_event_id = event_id, converted_at = created_at;
    ALTER TABLE deliveries ADD COLUMN action TEXT NOT NULL DEFAULT 'send';
    "#, // 18: the undo window of dashboard ratings, per project.
    r#"
    ALTER TABLE projects ADD COLUMN undo_window_seconds INTEGER NOT NULL DEFAULT 10;
    "#, // 19: a job of a form remembers the form's one-time token (at most one job per lead
    // and token) and the lead's rating before it, which an undo restores.
    r#"
    ALTER TABLE jobs ADD COLUMN form_token TEXT;
    ALTER TABLE jobs ADD COLUMN prior TEXT;
    CREATE UNIQUE INDEX jobs_form ON jobs (lead_id, form_token) WHERE form_token IS NOT NULL;
    "#, // 20: a `lost` job remembers the label conversions it withdraws.
    r#"
    ALTER TABLE jobs ADD COLUMN retracts TEXT;
    "#, // 21: spam and duplicates: why a lead is spam, the lead it duplicates, and each
    // project's spam rules (a JSON object, `{}`: the defaults).
    r#"
    ALTER TABLE leads ADD COLUMN spam_reason TEXT;
    ALTER TABLE leads ADD COLUMN duplicate_of INTEGER;
    ALTER TABLE leads ADD COLUMN duplicated INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX leads_duplicate ON leads (project_id, duplicate_of, created_at, id)
        WHERE duplicate_of IS NOT NULL;
    ALTER TABLE projects ADD COLUMN spam_rules TEXT NOT NULL DEFAULT '{}';
    "#, // 22: the project's own history (a deleted lead leaves its id here).
    r#"
    CREATE TABLE project_events (
        id         INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL REFERENCES projects (id),
        at         INTEGER NOT NULL,
        actor      TEXT,
        activity   TEXT    NOT NULL
    );
    CREATE INDEX project_events_project ON project_events (project_id, at, id);
    "#, // 23: each user's dashboard preferences (a JSON object, `{}`: the defaults).
    r#"
    ALTER TABLE users ADD COLUMN preferences TEXT NOT NULL DEFAULT '{}';
    "#, // 24: reviewing ratings before sending: the project's choice, and the drafts.
    r#"
    ALTER TABLE projects ADD COLUMN review_ratings INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE rating_drafts (
        lead_id       INTEGER PRIMARY KEY REFERENCES leads (id),
        project_id    INTEGER NOT NULL REFERENCES projects (id),
        conversion_id TEXT    NOT NULL,
        price         INTEGER,
        actor         TEXT    NOT NULL,
        at            INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX rating_drafts_project ON rating_drafts (project_id, at);
    "#, // 25: the `q` search: its folded text (filled by `leads::backfill_q_text`), in a
    // trigram index of its own whose rowids carry the lead's project, as `leads_search`'s.
    r#"
    ALTER TABLE leads ADD COLUMN q_text TEXT NOT NULL DEFAULT '';
    CREATE VIRTUAL TABLE leads_q USING fts5 (
        q_text, content = '', contentless_delete = 1, tokenize = 'trigram case_sensitive 1'
    );
    CREATE TRIGGER leads_q_insert AFTER INSERT ON leads BEGIN
        INSERT INTO leads_q (rowid, q_text) VALUES (new.project_id << 36 | new.id, new.q_text);
    END;
    CREATE TRIGGER leads_q_update AFTER UPDATE OF q_text ON leads BEGIN
        DELETE FROM leads_q WHERE rowid = old.project_id << 36 | old.id;
        INSERT INTO leads_q (rowid, q_text) VALUES (new.project_id << 36 | new.id, new.q_text);
    END;
    CREATE TRIGGER leads_q_delete AFTER DELETE ON leads BEGIN
        DELETE FROM leads_q WHERE rowid = old.project_id << 36 | old.id;
    END;
    INSERT INTO leads_q (leads_q, rank) VALUES ('automerge', 16);
    INSERT INTO leads_q (leads_q, rank) VALUES ('crisismerge', 64);
    "#, // 26: the form name as the case-insensitive `form` filter matches it (core's
    // `matching::form_key`, filled by `leads::backfill_form_key`).
    r#"
    ALTER TABLE leads ADD COLUMN form_key TEXT;
    "#,
    // 27: the filters of every source (the form exact or in any case, first touch, rating,
    // click ids), each read
    // along an index by creation time, and counted from kept counts: per project, facet
    // (the filtered column, as core's `LeadQuery::facets` names it), value and status, how
    // many leads have it. Triggers keep them; a click id's value is its flag as text.
    r#"
    CREATE INDEX leads_form_key       ON leads (project_id, form_key, created_at, id, status);
    CREATE INDEX leads_first_source   ON leads (project_id, first_source, created_at, id, status);
    CREATE INDEX leads_first_medium   ON leads (project_id, first_medium, created_at, id, status);
    CREATE INDEX leads_first_campaign ON leads (project_id, first_campaign, created_at, id, status);
    CREATE INDEX leads_conversion     ON leads (project_id, conversion_id, created_at, id, status);
    CREATE INDEX leads_has_gclid      ON leads (project_id, created_at, id, status) WHERE has_gclid = 1;
    CREATE INDEX leads_has_cid        ON leads (project_id, created_at, id, status) WHERE has_cid = 1;
    CREATE INDEX leads_has_fbp        ON leads (project_id, created_at, id, status) WHERE has_fbp = 1;
    CREATE INDEX leads_has_fbc        ON leads (project_id, created_at, id, status) WHERE has_fbc = 1;
    CREATE INDEX leads_has_msclkid    ON leads (project_id, created_at, id, status) WHERE has_msclkid = 1;
    CREATE INDEX leads_has_li_fat_id  ON leads (project_id, created_at, id, status) WHERE has_li_fat_id = 1;

    CREATE TABLE lead_facet_counts (
        project_id INTEGER NOT NULL REFERENCES projects (id),
        facet      TEXT    NOT NULL,
        value      TEXT    NOT NULL,
        status     TEXT    NOT NULL,
        total      INTEGER NOT NULL,
        PRIMARY KEY (project_id, facet, value, status)
    ) STRICT, WITHOUT ROWID;
    INSERT INTO lead_facet_counts (project_id, facet, value, status, total)
        SELECT project_id, facet, value, status, count(*) FROM (
        SELECT project_id, status, 'form_name' AS facet, form_name AS value FROM leads UNION ALL
        SELECT project_id, status, 'form_key' AS facet, form_key AS value FROM leads UNION ALL
        SELECT project_id, status, 'first_source' AS facet, first_source AS value FROM leads UNION ALL
        SELECT project_id, status, 'first_medium' AS facet, first_medium AS value FROM leads UNION ALL
        SELECT project_id, status, 'first_campaign' AS facet, first_campaign AS value FROM leads UNION ALL
        SELECT project_id, status, 'conversion_id' AS facet, conversion_id AS value FROM leads UNION ALL
        SELECT project_id, status, 'has_gclid', CAST(has_gclid AS TEXT) FROM leads UNION ALL
        SELECT project_id, status, 'has_cid', CAST(has_cid AS TEXT) FROM leads UNION ALL
        SELECT project_id, status, 'has_fbp', CAST(has_fbp AS TEXT) FROM leads UNION ALL
        SELECT project_id, status, 'has_fbc', CAST(has_fbc AS TEXT) FROM leads UNION ALL
        SELECT project_id, status, 'has_msclkid', CAST(has_msclkid AS TEXT) FROM leads UNION ALL
        SELECT project_id, status, 'has_li_fat_id', CAST(has_li_fat_id AS TEXT) FROM leads
        ) WHERE value IS NOT NULL GROUP BY project_id, facet, value, status;
    CREATE TRIGGER leads_facets_insert AFTER INSERT ON leads BEGIN
        INSERT INTO lead_facet_counts (project_id, facet, value, status, total)
            SELECT new.project_id, facet, value, new.status, 1 FROM (
            SELECT 'form_name' AS facet, new.form_name AS value UNION ALL
            SELECT 'form_key', new.form_key UNION ALL
            SELECT 'first_source', new.first_source UNION ALL
            SELECT 'first_medium', new.first_medium UNION ALL
            SELECT 'first_campaign', new.first_campaign UNION ALL
            SELECT 'conversion_id', new.conversion_id UNION ALL
            SELECT 'has_gclid', CAST(new.has_gclid AS TEXT) UNION ALL
            SELECT 'has_cid', CAST(new.has_cid AS TEXT) UNION ALL
            SELECT 'has_fbp', CAST(new.has_fbp AS TEXT) UNION ALL
            SELECT 'has_fbc', CAST(new.has_fbc AS TEXT) UNION ALL
            SELECT 'has_msclkid', CAST(new.has_msclkid AS TEXT) UNION ALL
            SELECT 'has_li_fat_id', CAST(new.has_li_fat_id AS TEXT))
            WHERE value IS NOT NULL
            ON CONFLICT (project_id, facet, value, status) DO UPDATE SET total = total + 1;
    END;
    CREATE TRIGGER leads_facets_update AFTER UPDATE OF
        status, form_name, form_key, first_source, first_medium, first_campaign, conversion_id,
        has_gclid, has_cid, has_fbp, has_fbc, has_msclkid, has_li_fat_id ON leads
    WHEN (old.status, old.form_name, old.form_key, old.first_source, old.first_medium,
          old.first_campaign, old.conversion_id, old.has_gclid, old.has_cid, old.has_fbp,
          old.has_fbc, old.has_msclkid, old.has_li_fat_id)
      IS NOT (new.status, new.form_name, new.form_key, new.first_source, new.first_medium,
          new.first_campaign, new.conversion_id, new.has_gclid, new.has_cid, new.has_fbp,
          new.has_fbc, new.has_msclkid, new.has_li_fat_id)
    BEGIN
        UPDATE lead_facet_counts SET total = total - 1
            WHERE project_id = old.project_id AND status = old.status AND (facet, value) IN (
            SELECT 'form_name' AS facet, old.form_name AS value UNION ALL
            SELECT 'form_key', old.form_key UNION ALL
            SELECT 'first_source', old.first_source UNION ALL
            SELECT 'first_medium', old.first_medium UNION ALL
            SELECT 'first_campaign', old.first_campaign UNION ALL
            SELECT 'conversion_id', old.conversion_id UNION ALL
            SELECT 'has_gclid', CAST(old.has_gclid AS TEXT) UNION ALL
            SELECT 'has_cid', CAST(old.has_cid AS TEXT) UNION ALL
            SELECT 'has_fbp', CAST(old.has_fbp AS TEXT) UNION ALL
            SELECT 'has_fbc', CAST(old.has_fbc AS TEXT) UNION ALL
            SELECT 'has_msclkid', CAST(old.has_msclkid AS TEXT) UNION ALL
            SELECT 'has_li_fat_id', CAST(old.has_li_fat_id AS TEXT));
        INSERT INTO lead_facet_counts (project_id, facet, value, status, total)
            SELECT new.project_id, facet, value, new.status, 1 FROM (
            SELECT 'form_name' AS facet, new.form_name AS value UNION ALL
            SELECT 'form_key', new.form_key UNION ALL
            SELECT 'first_source', new.first_source UNION ALL
            SELECT 'first_medium', new.first_medium UNION ALL
            SELECT 'first_campaign', new.first_campaign UNION ALL
            SELECT 'conversion_id', new.conversion_id UNION ALL
            SELECT 'has_gclid', CAST(new.has_gclid AS TEXT) UNION ALL
            SELECT 'has_cid', CAST(new.has_cid AS TEXT) UNION ALL
            SELECT 'has_fbp', CAST(new.has_fbp AS TEXT) UNION ALL
            SELECT 'has_fbc', CAST(new.has_fbc AS TEXT) UNION ALL
            SELECT 'has_msclkid', CAST(new.has_msclkid AS TEXT) UNION ALL
            SELECT 'has_li_fat_id', CAST(new.has_li_fat_id AS TEXT))
            WHERE value IS NOT NULL
            ON CONFLICT (project_id, facet, value, status) DO UPDATE SET total = total + 1;
    END;
    CREATE TRIGGER leads_facets_delete AFTER DELETE ON leads BEGIN
        UPDATE lead_facet_counts SET total = total - 1
            WHERE project_id = old.project_id AND status = old.status AND (facet, value) IN (
            SELECT 'form_name' AS facet, old.form_name AS value UNION ALL
            SELECT 'form_key', old.form_key UNION ALL
            SELECT 'first_source', old.first_source UNION ALL
            SELECT 'first_medium', old.first_medium UNION ALL
            SELECT 'first_campaign', old.first_campaign UNION ALL
            SELECT 'conversion_id', old.conversion_id UNION ALL
            SELECT 'has_gclid', CAST(old.has_gclid AS TEXT) UNION ALL
            SELECT 'has_cid', CAST(old.has_cid AS TEXT) UNION ALL
            SELECT 'has_fbp', CAST(old.has_fbp AS TEXT) UNION ALL
            SELECT 'has_fbc', CAST(old.has_fbc AS TEXT) UNION ALL
            SELECT 'has_msclkid', CAST(old.has_msclkid AS TEXT) UNION ALL
            SELECT 'has_li_fat_id', CAST(old.has_li_fat_id AS TEXT));
    END;
    "#,
    // 28: inbox views saved with a name, for their owner or (`shared`) the whole team;
    // `scope` is the owner for their own views and 0 for the team's, so that a name is
    // unique in each place.
    r#"
    CREATE TABLE saved_views (
        id         INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL REFERENCES projects (id),
        owner_id   INTEGER NOT NULL REFERENCES users (id),
        shared     INTEGER NOT NULL,
        scope      INTEGER NOT NULL,
        name       TEXT    NOT NULL,
        query      TEXT    NOT NULL,
        columns    TEXT,
        saved_at   INTEGER NOT NULL,
        UNIQUE (project_id, scope, name)
    ) STRICT;
    "#,
    // 29: whether a member may export the project's leads (owners may; members once an
    // owner allows it, which none is yet).
    r#"
    ALTER TABLE members ADD COLUMN can_export INTEGER NOT NULL DEFAULT 0;
    "#,
    // 30: the team without a shell. Pending invitations and links about an account (a
    // password reset, an email change), each kept only as its link's SHA-256 and deleted
    // once taken; where each session was started; the address behind each audit event.
    r#"
    CREATE TABLE invitations (
        id         INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL REFERENCES projects (id),
        email      TEXT    NOT NULL,
        email_key  TEXT    NOT NULL,
        role       TEXT    NOT NULL,
        invited_by TEXT    NOT NULL,
        link_hash  BLOB    NOT NULL UNIQUE,
        sent_at    INTEGER NOT NULL,
        UNIQUE (project_id, email_key)
    ) STRICT;

    CREATE TABLE account_links (
        user_id    INTEGER NOT NULL REFERENCES users (id),
        kind       TEXT    NOT NULL,
        link_hash  BLOB    NOT NULL UNIQUE,
        email      TEXT,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (user_id, kind)
    ) STRICT, WITHOUT ROWID;

    ALTER TABLE sessions ADD COLUMN address TEXT NOT NULL DEFAULT '';
    ALTER TABLE sessions ADD COLUMN user_agent TEXT NOT NULL DEFAULT '';
    ALTER TABLE project_events ADD COLUMN address TEXT;
    "#,
    // 31: labels in an order the owners set (the number keys follow it; until now, the
    // order they were created in), and archived labels.
    r#"
    ALTER TABLE labels ADD COLUMN archived INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE labels ADD COLUMN position INTEGER NOT NULL DEFAULT 0;
    UPDATE labels SET position = (
        SELECT count(*) FROM labels o WHERE o.project_id = labels.project_id
            AND (o.created_at < labels.created_at
                 OR (o.created_at = labels.created_at AND o.id < labels.id)));
    CREATE INDEX labels_order ON labels (project_id, position);
    "#,
    // 32: the team's comments on a lead. `author` is core's `Actor` as JSON; `author_id`
    // the user who wrote it, who alone may edit or delete it.
    r#"
    CREATE TABLE lead_comments (
        id         INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL REFERENCES projects (id),
        lead_id    INTEGER NOT NULL REFERENCES leads (id),
        author_id  INTEGER,
        author     TEXT    NOT NULL,
        text       TEXT    NOT NULL,
        created_at INTEGER NOT NULL,
        edited_at  INTEGER
    ) STRICT;
    CREATE INDEX lead_comments_lead ON lead_comments (project_id, lead_id, id);
    "#,
    // 33: each lead's first touch (the first comment, rating or status change by a
    // person): when, and by whom, for the reports; from the history already recorded.
    r#"
    ALTER TABLE leads ADD COLUMN first_touch_at INTEGER;
    ALTER TABLE leads ADD COLUMN first_touch_by TEXT;
    CREATE TEMP TABLE touches AS
        SELECT e.lead_id, e.at, json_extract(e.actor, '$.name') AS name
        FROM lead_events e
        WHERE json_extract(e.actor, '$.kind') = 'user'
          AND json_extract(e.activity, '$.type')
              IN ('rated', 'reopened', 'commented', 'spam', 'not_spam')
          AND NOT EXISTS (
              SELECT 1 FROM lead_events o
              WHERE o.lead_id = e.lead_id AND (o.at < e.at OR (o.at = e.at AND o.id < e.id))
                AND json_extract(o.actor, '$.kind') = 'user'
                AND json_extract(o.activity, '$.type')
                    IN ('rated', 'reopened', 'commented', 'spam', 'not_spam'));
    UPDATE leads SET first_touch_at = t.at, first_touch_by = t.name
        FROM touches t WHERE t.lead_id = leads.id;
    DROP TABLE touches;
    -- The reports read the touched leads of a range alone.
    CREATE INDEX leads_touched ON leads (project_id, created_at) WHERE first_touch_at IS NOT NULL;
    "#,
    // 34: who each lead is assigned to, and each project's round-robin rule with the
    // member its last lead went to.
    r#"
    ALTER TABLE leads ADD COLUMN assigned_to INTEGER REFERENCES users (id);
    -- "Mine": a member's leads by status, read without the unassigned ones.
    CREATE INDEX leads_assigned ON leads (project_id, assigned_to, status)
        WHERE assigned_to IS NOT NULL;
    CREATE TABLE round_robin (
        project_id INTEGER PRIMARY KEY REFERENCES projects (id),
        rule       TEXT    NOT NULL,
        last_user  INTEGER
    ) STRICT;
    "#,
    // 35: alerts: each member's preferences, the project's chat channels, and the queue
    // of alerts due, written with the change that makes each due.
    r#"
    ALTER TABLE members ADD COLUMN alerts TEXT NOT NULL DEFAULT '{}';
    CREATE TABLE chat_channels (
        project_id INTEGER NOT NULL REFERENCES projects (id),
        kind       TEXT    NOT NULL,
        url        TEXT    NOT NULL,
        PRIMARY KEY (project_id, kind)
    ) STRICT, WITHOUT ROWID;
    CREATE TABLE alert_queue (
        id         INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL REFERENCES projects (id),
        lead_id    INTEGER NOT NULL,
        kind       TEXT    NOT NULL,
        created_at INTEGER NOT NULL
    ) STRICT;
    "#,
    // 36: secrets sealed at rest: the check value of the key they are sealed with (see
    // `secrets`, which seals what older builds kept plain right after).
    r#"
    CREATE TABLE secret_key_check (
        id    INTEGER PRIMARY KEY CHECK (id = 1),
        value TEXT    NOT NULL
    ) STRICT;
    "#,
    // 37: the grants platforms gave by sign-in (`credentials`: sealed JSON).
    r#"
    CREATE TABLE oauth_grants (
        project_id  INTEGER NOT NULL REFERENCES projects (id),
        provider    TEXT    NOT NULL,
        credentials TEXT    NOT NULL,
        PRIMARY KEY (project_id, provider)
    ) STRICT, WITHOUT ROWID;
    "#,
    // 38: the lead sources a project set up (`settings`: sealed JSON; `routing`: what the
    // platform's announcements name it by, a Meta page's id), and the leads they announced,
    // to fetch: each once per project, due at `due_at` (while claimed, its lease's end).
    r#"
    CREATE TABLE lead_sources (
        project_id INTEGER NOT NULL REFERENCES projects (id),
        kind       TEXT    NOT NULL,
        settings   TEXT    NOT NULL,
        routing    TEXT,
        PRIMARY KEY (project_id, kind)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX lead_sources_routing ON lead_sources (kind, routing) WHERE routing IS NOT NULL;
    CREATE TABLE lead_fetches (
        id           INTEGER PRIMARY KEY,
        project_id   INTEGER NOT NULL REFERENCES projects (id),
        kind         TEXT    NOT NULL,
        external_id  TEXT    NOT NULL,
        announced    TEXT    NOT NULL,
        attempts     INTEGER NOT NULL DEFAULT 0,
        due_at       INTEGER NOT NULL,
        lease_token  TEXT,
        last_error   TEXT,
        done_at      INTEGER,
        UNIQUE (project_id, kind, external_id)
    ) STRICT;
    CREATE INDEX lead_fetches_due ON lead_fetches (due_at) WHERE done_at IS NULL;
    "#,
    // 39: inbound webhooks (`settings`: sealed JSON of the name, tool, secret and mapping).
    r#"
    CREATE TABLE inbound_hooks (
        id         TEXT    PRIMARY KEY,
        project_id INTEGER NOT NULL REFERENCES projects (id),
        settings   TEXT    NOT NULL,
        created_at INTEGER NOT NULL
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX inbound_hooks_project ON inbound_hooks (project_id, created_at);
    "#,
    // 40: the `q` search's short words: each lead's strings of one and two characters, in
    // an index of their own (see the `grams` module, which writes it and fills it for the
    // leads stored before it). Only which leads hold a token is kept (`detail = none`).
    r#"
    CREATE VIRTUAL TABLE leads_q_grams USING fts5 (
        grams, content = '', contentless_delete = 1, detail = none, tokenize = 'ascii'
    );
    CREATE TRIGGER leads_q_grams_delete AFTER DELETE ON leads BEGIN
        DELETE FROM leads_q_grams WHERE rowid = old.project_id << 36 | old.id;
    END;
    INSERT INTO leads_q_grams (leads_q_grams, rank) VALUES ('automerge', 16);
    INSERT INTO leads_q_grams (leads_q_grams, rank) VALUES ('crisismerge', 64);
    "#,
    // 41: the count of each project's leads per hour of creation (`created_at / 3600000`)
    // and status, kept by triggers, so that a listing filtered by a range of dates (a date
    // preset: a month is 80,000 leads at a million) counts its total and tabs from a few
    // hundred rows, and counts lead by lead only the partial hours at its ends.
    r#"
    CREATE TABLE lead_hour_counts (
        project_id INTEGER NOT NULL REFERENCES projects (id),
        hour       INTEGER NOT NULL,
        status     TEXT    NOT NULL,
        total      INTEGER NOT NULL,
        PRIMARY KEY (project_id, hour, status)
    ) STRICT, WITHOUT ROWID;
    INSERT INTO lead_hour_counts (project_id, hour, status, total)
        SELECT project_id, created_at / 3600000, status, count(*) FROM leads
        GROUP BY project_id, created_at / 3600000, status;
    CREATE TRIGGER leads_hour_count_insert AFTER INSERT ON leads BEGIN
        INSERT INTO lead_hour_counts (project_id, hour, status, total)
            VALUES (new.project_id, new.created_at / 3600000, new.status, 1)
            ON CONFLICT (project_id, hour, status) DO UPDATE SET total = total + 1;
    END;
    CREATE TRIGGER leads_hour_count_update AFTER UPDATE OF status, created_at ON leads
    WHEN (old.status, old.created_at / 3600000) IS NOT (new.status, new.created_at / 3600000)
    BEGIN
        UPDATE lead_hour_counts SET total = total - 1 WHERE project_id = old.project_id
            AND hour = old.created_at / 3600000 AND status = old.status;
        INSERT INTO lead_hour_counts (project_id, hour, status, total)
            VALUES (new.project_id, new.created_at / 3600000, new.status, 1)
            ON CONFLICT (project_id, hour, status) DO UPDATE SET total = total + 1;
    END;
    CREATE TRIGGER leads_hour_count_delete AFTER DELETE ON leads BEGIN
        UPDATE lead_hour_counts SET total = total - 1 WHERE project_id = old.project_id
            AND hour = old.created_at / 3600000 AND status = old.status;
    END;
    "#, // 42: the leads out of creation order. A lead's id is above every earlier one's,
    // and leads mostly arrive as they are created, so the project's other leads are in
    // creation order by id too: a page of a search newest (or oldest) first is then the
    // first matches its index finds by id, with these checked besides (`listing.rs`). A
    // lead is kept here when a lead with a lower id was created after it (an import of
    // older leads, say) or when its creation time changes.
    r#"
    CREATE TABLE lead_order_breaks (
        project_id INTEGER NOT NULL REFERENCES projects (id),
        lead_id    INTEGER NOT NULL,
        PRIMARY KEY (project_id, lead_id)
    ) STRICT, WITHOUT ROWID;
    INSERT INTO lead_order_breaks (project_id, lead_id)
        SELECT project_id, id FROM (
            SELECT project_id, id, created_at, max(created_at) OVER (
                PARTITION BY project_id ORDER BY id
                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
            ) AS latest_before FROM leads
        ) WHERE created_at < latest_before;
    CREATE TRIGGER leads_order_insert AFTER INSERT ON leads
    WHEN new.created_at < (SELECT max(created_at) FROM leads WHERE project_id = new.project_id)
    BEGIN
        INSERT OR IGNORE INTO lead_order_breaks (project_id, lead_id)
            VALUES (new.project_id, new.id);
    END;
    CREATE TRIGGER leads_order_update AFTER UPDATE OF created_at, project_id ON leads
    WHEN (old.created_at, old.project_id) IS NOT (new.created_at, new.project_id)
    BEGIN
        DELETE FROM lead_order_breaks WHERE project_id = old.project_id AND lead_id = old.id;
        INSERT OR IGNORE INTO lead_order_breaks (project_id, lead_id)
            VALUES (new.project_id, new.id);
    END;
    CREATE TRIGGER leads_order_delete AFTER DELETE ON leads BEGIN
        DELETE FROM lead_order_breaks WHERE project_id = old.project_id AND lead_id = old.id;
    END;
    "#,
];

/// A step of Rust run after a migration, in its transaction.
type Backfill = fn(&Connection) -> Result<(), Error>;

/// Work a migration needs that SQL cannot do, run right after it in the same transaction:
/// `(migration number, step)`.
const BACKFILLS: &[(usize, Backfill)] = &[
    (5, crate::leads::backfill_touches),
    (25, crate::leads::backfill_q_text),
    (26, crate::leads::backfill_form_key),
    (40, crate::grams::backfill),
];

/// Applies the migrations `conn`'s database lacks. A database newer than this build is
/// refused rather than misread.
pub(crate) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    migrate_to(conn, MIGRATIONS.len())
}

/// Applies migrations up to `target` (a count); tests use it to build older databases.
pub(crate) fn migrate_to(conn: &mut Connection, target: usize) -> Result<(), StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(StoreError::backend)?;
    let current = check_known(&tx)?;
    for (index, sql) in MIGRATIONS.iter().enumerate().take(target).skip(current) {
        tx.execute_batch(sql).map_err(StoreError::backend)?;
        for (_, backfill) in BACKFILLS.iter().filter(|(after, _)| *after == index + 1) {
            backfill(&tx)?;
        }
        tx.pragma_update(None, "user_version", (index + 1) as i64)
            .map_err(StoreError::backend)?;
        tracing::info!(version = index + 1, "applied database migration");
    }
    tx.commit().map_err(StoreError::backend)
}

/// The number of migrations `conn`'s database has applied. A database newer than this
/// build is refused rather than misread.
pub(crate) fn check_known(conn: &Connection) -> Result<usize, StoreError> {
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(StoreError::backend)?;
    match usize::try_from(version) {
        Ok(current) if current <= MIGRATIONS.len() => Ok(current),
        _ => Err(StoreError::Invalid(format!(
            "the database has schema version {version}, newer than this leadtrack knows ({}); upgrade leadtrack",
            MIGRATIONS.len()
        ))),
    }
}

/// Whether `conn`'s database has every migration of this build applied: the readiness
/// check. A database another process migrated further, or not at all, is not served.
pub(crate) fn check_current(conn: &Connection) -> Result<(), StoreError> {
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(StoreError::backend)?;
    if usize::try_from(version).ok() == Some(MIGRATIONS.len()) {
        Ok(())
    } else {
        Err(StoreError::Unavailable(format!(
            "the database has schema version {version}, this build expects {}",
            MIGRATIONS.len()
        )))
    }
}

/// The schema version recorded in the database.
#[cfg(test)]
pub(crate) fn version(conn: &Connection) -> i64 {
    conn.query_row("PRAGMA user_version", [], |row| row.get(0))
        .expect("user_version is readable")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_database_with_every_migration_is_current() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, MIGRATIONS.len() - 1).unwrap();
        let behind = check_current(&conn).unwrap_err();
        assert!(
            matches!(&behind, StoreError::Unavailable(reason) if reason.contains(&format!("version {}", MIGRATIONS.len() - 1))),
            "{behind:?}"
        );
        migrate(&mut conn).unwrap();
        check_current(&conn).unwrap();
        conn.pragma_update(None, "user_version", MIGRATIONS.len() as i64 + 1)
            .unwrap();
        assert!(matches!(
            check_current(&conn),
            Err(StoreError::Unavailable(_))
        ));
    }

    #[test]
    fn every_migration_applies_in_order_on_an_empty_database() {
        let mut conn = Connection::open_in_memory().unwrap();
        for step in 1..=MIGRATIONS.len() {
            migrate_to(&mut conn, step).unwrap();
            assert_eq!(version(&conn), step as i64);
        }
        let problems: Vec<String> = conn
            .prepare("PRAGMA foreign_key_check")
            .unwrap()
            .query_map([], |row| row.get::<_, String>(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(problems.is_empty());
        let integrity: String = conn
            .query_row("PRAGMA integrity_check", [], |row| row.get(0))
            .unwrap();
        assert_eq!(integrity, "ok");
    }

    #[test]
    fn migrating_twice_is_a_no_op() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        migrate(&mut conn).unwrap();
        assert_eq!(version(&conn), MIGRATIONS.len() as i64);
    }

    #[test]
    fn newer_databases_are_refused() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", MIGRATIONS.len() as i64 + 1)
            .unwrap();
        let err = migrate(&mut conn).unwrap_err();
        assert!(err.to_string().contains("upgrade leadtrack"), "{err}");
    }

    #[test]
    fn a_failing_migration_leaves_the_database_as_it_was() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, 1).unwrap();
        // Something in the way of migration 2 makes it fail; nothing of it may remain.
        conn.execute_batch("CREATE TABLE labels (x INTEGER)")
            .unwrap();
        assert!(migrate(&mut conn).is_err());
        assert_eq!(version(&conn), 1);
        let jobs: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE name = 'jobs'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(jobs, 0);
    }

    #[test]
    fn the_last_attempts_of_an_older_database_are_found() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, 6).unwrap();
        // Two projects' jobs (without their projects and leads), and attempts recorded out
        // of time order.
        conn.execute_batch(
            "PRAGMA foreign_keys = OFF;
             INSERT INTO jobs (id, event_id, project_id, lead_id, conversion_id, final_status,
                 state, created_at, due_at)
             VALUES (1, 'e1', 1, 1, 'lost', 'lost', 'done', 0, 0),
                    (2, 'e2', 2, 2, 'lost', 'lost', 'done', 0, 0);
             INSERT INTO attempts (id, job_id, integration, at, outcome)
             VALUES (1, 1, 'webhook', 50, 'failed'), (2, 1, 'webhook', 40, 'delivered'),
                    (3, 1, 'ga4', 10, 'delivered'), (4, 2, 'webhook', 99, 'delivered');",
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        conn.execute_batch(
            "INSERT INTO attempts (id, job_id, integration, at, outcome)
             VALUES (5, 1, 'ga4', 10, 'failed'), (6, 1, 'webhook', 45, 'delivered');",
        )
        .unwrap();
        let last: Vec<(i64, String, i64)> = conn
            .prepare("SELECT project_id, integration, attempt_id FROM last_attempts ORDER BY 1, 2")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            last,
            [
                (1, "ga4".to_owned(), 5),
                (1, "webhook".to_owned(), 1),
                (2, "webhook".to_owned(), 4)
            ]
        );
    }

    #[test]
    fn leads_of_an_older_database_count_as_created_with_a_key() {
        use leadtrack_core::request::CreateRoute;
        use leadtrack_core::types::{LeadId, ProjectId};

        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, 8).unwrap();
        conn.execute_batch(
            "INSERT INTO projects (id, public_id, name, currency, lost_mapping, created_at)
             VALUES (1, 'acme', 'Acme', 'EUR', '{}', 0);
             INSERT INTO leads (id, project_id, status, created_at, updated_at, data,
                 unique_event_id, search_text, has_gclid, has_cid, has_fbp, has_fbc)
             VALUES (1, 1, 'open', 0, 0, '{\"formData\":{\"uniqueEventId\":\"evt\"}}',
                 'evt', '', 0, 0, 0, 0);",
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        let allowed: String = conn
            .query_row("SELECT allowed_origins FROM projects", [], |row| row.get(0))
            .unwrap();
        assert_eq!(allowed, "[]");
        let row = || {
            let data = serde_json::from_value(serde_json::json!({
                "userData": {"email": "b@x.io"}, "formData": {"uniqueEventId": "evt"}
            }))
            .unwrap();
            leadtrack_core::store::LeadRow::of(data).unwrap()
        };
        let now = chrono::Utc::now();
        let browser = crate::leads::create(
            &conn,
            ProjectId(1),
            (CreateRoute::Browser, None),
            row(),
            now,
        )
        .unwrap();
        assert!(
            browser.created,
            "a browser create does not merge into the old lead"
        );
        let server =
            crate::leads::create(&conn, ProjectId(1), (CreateRoute::Server, None), row(), now)
                .unwrap();
        assert_eq!((server.lead_id, server.created), (LeadId(1), false));
    }

    #[test]
    fn leads_of_an_older_database_are_counted_per_hour() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, 40).unwrap();
        conn.execute_batch(
            "INSERT INTO projects (id, public_id, name, currency, lost_mapping, created_at)
             VALUES (1, 'acme', 'Acme', 'EUR', '{}', 0);",
        )
        .unwrap();
        for (id, status, at) in [
            (1, "open", 7_200_000),
            (2, "open", 10_799_999),
            (3, "lost", 7_200_001),
            (4, "open", 10_800_000),
        ] {
            conn.execute(
                "INSERT INTO leads (id, project_id, status, created_at, updated_at, data,
                     search_text, has_gclid, has_cid, has_fbp, has_fbc)
                 VALUES (?1, 1, ?2, ?3, 0, '{}', '', 0, 0, 0, 0)",
                (id, status, at),
            )
            .unwrap();
        }
        migrate(&mut conn).unwrap();
        let kept: Vec<(i64, String, i64)> = conn
            .prepare("SELECT hour, status, total FROM lead_hour_counts ORDER BY hour, status")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let expected = [(2, "lost", 1), (2, "open", 2), (3, "open", 1)];
        let expected: Vec<_> = expected.map(|(h, s, n)| (h, s.to_owned(), n)).into();
        assert_eq!(kept, expected);
    }

    #[test]
    fn calling_codes_of_an_older_database_become_regions() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, 9).unwrap();
        conn.execute_batch(
            "INSERT INTO projects (id, public_id, name, currency, lost_mapping, created_at,
                 phone_country_code)
             VALUES (1, 'de', 'DE', 'EUR', '{}', 0, '49'), (2, 'us', 'US', 'USD', '{}', 0, '1'),
                    (3, 'it', 'IT', 'EUR', '{}', 0, '39'), (4, 'gb', 'GB', 'GBP', '{}', 0, '44'),
                    (5, 'none', 'None', 'EUR', '{}', 0, NULL),
                    (6, 'odd', 'Odd', 'EUR', '{}', 0, '999');",
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        let regions: Vec<Option<String>> = conn
            .prepare("SELECT region FROM projects ORDER BY id")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let expected = [Some("DE"), Some("US"), Some("IT"), Some("GB"), None, None];
        assert_eq!(regions, expected.map(|r| r.map(str::to_owned)));
    }

    #[test]
    fn leads_of_an_older_database_get_their_microsoft_and_linkedin_click_ids() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, 11).unwrap();
        conn.execute_batch(
            r#"INSERT INTO projects (id, public_id, name, currency, lost_mapping, created_at)
                   VALUES (1, 'acme', 'Acme', 'EUR', '{}', 0);
               INSERT INTO leads (id, project_id, status, created_at, updated_at, data,
                   search_text, has_gclid, has_cid, has_fbp, has_fbc)
               VALUES
                 (1, 1, 'open', 0, 0, '{"attributionData":{"msclkid":"M","li_fat_id":"L"}}', '', 0, 0, 0, 0),
                 (2, 1, 'open', 0, 0, '{"attributionData":{"msclkid":"  ","li_fat_id":5}}', '', 0, 0, 0, 0),
                 (3, 1, 'open', 0, 0, '{"userData":{"email":"a@x.io"}}', '', 0, 0, 0, 0);"#,
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        let flags: Vec<(i64, i64)> = conn
            .prepare("SELECT has_msclkid, has_li_fat_id FROM leads ORDER BY id")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(flags, [(1, 1), (0, 0), (0, 0)]);
    }

    #[test]
    fn leads_of_an_older_database_are_found_in_the_project_keyed_search_index() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, 13).unwrap();
        conn.execute_batch(
            "INSERT INTO projects (id, public_id, name, currency, lost_mapping, created_at)
                 VALUES (1, 'a', 'A', 'EUR', '{}', 0), (2, 'b', 'B', 'EUR', '{}', 0);
             INSERT INTO leads (id, project_id, status, created_at, updated_at, data,
                 search_text, has_gclid, has_cid, has_fbp, has_fbc)
             VALUES (1, 1, 'open', 0, 0, '{}', 'ada\nlovelace', 0, 0, 0, 0),
                    (2, 2, 'open', 0, 0, '{}', 'ada\nbyron', 0, 0, 0, 0),
                    (3, 1, 'open', 0, 0, '{}', 'grace\nhopper', 0, 0, 0, 0);",
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        let found = |term: &str, project: i64| -> Vec<i64> {
            conn.prepare(
                "SELECT rowid & 68719476735 FROM leads_search
                 WHERE leads_search MATCH ?1 AND rowid BETWEEN ?2 << 36 AND (?2 + 1 << 36) - 1
                 ORDER BY rowid",
            )
            .unwrap()
            .query_map((term, project), |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
        };
        assert_eq!(found("\"ada\"", 1), [1]);
        assert_eq!(found("\"ada\"", 2), [2]);
        assert_eq!(found("\"hopper\"", 1), [3]);
        assert_eq!(found("\"ADA\"", 1), Vec::<i64>::new(), "case-sensitive");
        // Kept up to date from then on.
        conn.execute(
            "UPDATE leads SET search_text = 'ada\nking' WHERE id = 3",
            [],
        )
        .unwrap();
        assert_eq!(found("\"ada\"", 1), [1, 3]);
        assert_eq!(found("\"hopper\"", 1), Vec::<i64>::new());
    }

    #[test]
    fn leads_of_an_older_database_get_their_q_text_and_its_indexes() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, 24).unwrap();
        conn.execute_batch(
            r#"INSERT INTO projects (id, public_id, name, currency, lost_mapping, created_at)
                 VALUES (1, 'a', 'A', 'EUR', '{}', 0);
             INSERT INTO leads (id, project_id, status, created_at, updated_at, data,
                 search_text, has_gclid, has_cid, has_fbp, has_fbc)
             VALUES (1, 1, 'open', 0, 0,
                 '{"userData":{"firstName":"Anna","lastName":"Müller"},"uniqueIdentifier":"CRM-1"}',
                 'anna', 0, 0, 0, 0);"#,
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        let q_text: String = conn
            .query_row("SELECT q_text FROM leads WHERE id = 1", [], |row| {
                row.get(0)
            })
            .unwrap();
        assert_eq!(q_text, "anna\nmuller\ncrm-1");
        let found: i64 = conn
            .query_row(
                "SELECT rowid & 68719476735 FROM leads_q WHERE leads_q MATCH '\"mul\"'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(found, 1);
        // And its short words ("mu", "1") in the index of their own (migration 40).
        let found: i64 = conn
            .query_row(
                "SELECT rowid & 68719476735 FROM leads_q_grams
                 WHERE leads_q_grams MATCH '\"6d75\" AND \"31\"'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(found, 1);
    }

    #[test]
    fn leads_out_of_creation_order_are_kept_from_the_first_and_after() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, 41).unwrap();
        // Lead 3 was created before lead 2, and lead 4 at the same time as lead 2.
        conn.execute_batch(
            "INSERT INTO projects (id, public_id, name, currency, lost_mapping, created_at)
                 VALUES (1, 'a', 'A', 'EUR', '{}', 0), (2, 'b', 'B', 'EUR', '{}', 0);
             INSERT INTO leads (id, project_id, status, created_at, updated_at, data,
                 search_text, has_gclid, has_cid, has_fbp, has_fbc)
             VALUES (1, 1, 'open', 10, 0, '{}', '', 0, 0, 0, 0),
                    (2, 1, 'open', 30, 0, '{}', '', 0, 0, 0, 0),
                    (3, 1, 'open', 20, 0, '{}', '', 0, 0, 0, 0),
                    (4, 1, 'open', 30, 0, '{}', '', 0, 0, 0, 0),
                    (5, 2, 'open', 5, 0, '{}', '', 0, 0, 0, 0);",
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        let breaks = |conn: &Connection| -> Vec<(i64, i64)> {
            conn.prepare("SELECT project_id, lead_id FROM lead_order_breaks")
                .unwrap()
                .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        assert_eq!(
            breaks(&conn),
            [(1, 3)],
            "project 2's older lead is its own first"
        );
        // After the migration: a lead older than the project's newest is kept, one as new
        // is not, one whose creation time changes is, and a deleted one leaves.
        conn.execute_batch(
            "INSERT INTO leads (id, project_id, status, created_at, updated_at, data,
                 search_text, has_gclid, has_cid, has_fbp, has_fbc)
             VALUES (6, 1, 'open', 25, 0, '{}', '', 0, 0, 0, 0),
                    (7, 1, 'open', 30, 0, '{}', '', 0, 0, 0, 0),
                    (8, 2, 'open', 6, 0, '{}', '', 0, 0, 0, 0);
             UPDATE leads SET created_at = 40 WHERE id = 2;
             DELETE FROM leads WHERE id = 3;",
        )
        .unwrap();
        assert_eq!(breaks(&conn), [(1, 2), (1, 6)]);
    }

    #[test]
    fn the_trigram_index_merges_its_segments_sixteen_at_a_time() {
        use rusqlite::OptionalExtension;
        let mut conn = Connection::open_in_memory().unwrap();
        let setting = |conn: &Connection, key: &str| -> Option<i64> {
            conn.query_row(
                "SELECT v FROM leads_search_config WHERE k = ?1",
                [key],
                |row| row.get(0),
            )
            .optional()
            .unwrap()
        };
        migrate_to(&mut conn, 15).unwrap();
        assert_eq!(setting(&conn, "automerge"), None, "SQLite's default");
        migrate(&mut conn).unwrap();
        assert_eq!(setting(&conn, "automerge"), Some(16));
        assert_eq!(setting(&conn, "crisismerge"), Some(64));
    }
}
