//! The schema, as the list of migrations in `migrations/`. `PRAGMA user_version` records
//! how many have been applied; opening a database applies the rest in one transaction.
//!
//! Not `rusqlite_migration`: the migrations run on the writer's own connection, inside the
//! transaction that opens the store, before the writer's group commit starts; a runner
//! owning the connection and its transactions does not fit that.

use leadtrack_core::StoreError;
use rusqlite::{Connection, TransactionBehavior};

use crate::Error;

/// Every migration, oldest first: the files of `migrations/` (`NNNN_name.sql`), listed and
/// included at build time by `build.rs`. Never edit one that has shipped: add a new file.
pub(crate) const MIGRATIONS: &[&str] = include!(concat!(env!("OUT_DIR"), "/migrations.rs"));

/// A step of Rust run after a migration, in its transaction.
type Backfill = fn(&Connection) -> Result<(), Error>;

/// Work a migration needs that SQL cannot do, run right after it in the same transaction:
/// `(migration number, step)`.
const BACKFILLS: &[(usize, Backfill)] = &[
    (5, crate::leads::backfill_touches),
    (25, crate::leads::backfill_q_text),
    (26, crate::leads::backfill_form_key),
    (45, crate::leads::backfill_phone_q_text),
];

/// Applies the migrations `conn`'s database lacks. A database newer than this build is
/// refused rather than misread.
pub(crate) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    migrate_to(conn, MIGRATIONS.len())
}

/// Applies migrations up to `target` (a count); tests use it to build older databases.
pub(crate) fn migrate_to(conn: &mut Connection, target: usize) -> Result<(), StoreError> {
    // The schema's SQL functions: migration 62 packs with one, its view reads with one, and
    // the words' index's trigger (migration 63) writes with one.
    crate::packed::register(conn).map_err(StoreError::backend)?;
    crate::words::register(conn).map_err(StoreError::backend)?;
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
    }
    tx.commit().map_err(StoreError::backend)?;
    let version = target.min(MIGRATIONS.len()).max(current);
    if version > current {
        tracing::info!(
            version,
            applied = version - current,
            "database at version {version}"
        );
    }
    Ok(())
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
    use leadtrack_core::activity::LeadEvent;
    use leadtrack_core::types::{LeadId, ProjectId};

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
        // Something in the way of migration 2 (its `labels` taken by a view) makes it fail;
        // nothing of it may remain.
        conn.execute_batch("CREATE VIEW labels AS SELECT 1 AS x")
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
            crate::leads::new_row(data).unwrap()
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
        // Counted with the words, by the writer's batch (migration 51).
        crate::words::catch_up(&conn, 10).unwrap();
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

    /// Migrations 49 and 50: Google's iOS click ids (either) and TikTok's, then Reddit's,
    /// Snapchat's, Pinterest's and X's get their flags, and the kept counts count them.
    #[test]
    fn leads_of_an_older_database_get_their_newer_click_ids_counted() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, 48).unwrap();
        conn.execute_batch(
            r#"INSERT INTO projects (id, public_id, name, currency, lost_mapping, created_at)
                   VALUES (1, 'acme', 'Acme', 'EUR', '{}', 0);
               INSERT INTO leads (id, project_id, status, created_at, updated_at, data,
                   search_text, has_gclid, has_cid, has_fbp, has_fbc, q_text)
               VALUES
                 (1, 1, 'open', 0, 0, '{"attributionData":{"gbraid":"G","ttclid":"T"}}', '', 0, 0, 0, 0, ''),
                 (2, 1, 'open', 0, 0, '{"attributionData":{"wbraid":"W","ttclid":" "}}', '', 0, 0, 0, 0, ''),
                 (3, 1, 'lost', 0, 0, '{"attributionData":{"gbraid":7,"ttclid":"T"}}', '', 0, 0, 0, 0, ''),
                 (4, 1, 'open', 0, 0, '{"attributionData":{"_epik":"P","rdt_cid":"R"}}', '', 0, 0, 0, 0, '');"#,
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        let all = |sql: &str| -> Vec<(String, i64)> {
            conn.prepare(sql)
                .unwrap()
                .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        let flags = all("SELECT CAST(has_gbraid AS TEXT), has_ttclid FROM leads ORDER BY id");
        let expected = [("1", 1), ("1", 0), ("0", 1), ("0", 0)];
        assert_eq!(flags, expected.map(|(g, t)| (g.to_owned(), t)));
        // Migration 50: Pinterest's from its cookie too, and Reddit's.
        let flags = all("SELECT CAST(has_epik AS TEXT), has_rdt_cid FROM leads ORDER BY id");
        let expected = [("0", 0), ("0", 0), ("0", 0), ("1", 1)];
        assert_eq!(flags, expected.map(|(e, r)| (e.to_owned(), r)));
        // Counted with the words, by the writer's batch (migration 51).
        crate::words::catch_up(&conn, 10).unwrap();
        let counted = all(
            "SELECT facet || ' ' || value || ' ' || status, total FROM lead_facet_counts
             WHERE facet IN ('has_gbraid', 'has_ttclid') AND value = '1' ORDER BY 1",
        );
        let expected = [
            ("has_gbraid 1 open", 2),
            ("has_ttclid 1 lost", 1),
            ("has_ttclid 1 open", 1),
        ];
        assert_eq!(counted, expected.map(|(k, n)| (k.to_owned(), n)));
        // A new lead is counted by the writer's next batch.
        conn.execute_batch(
            r#"INSERT INTO leads (id, project_id, status, created_at, updated_at, data,
                   search_text, has_gclid, has_cid, has_fbp, has_fbc, q_text, has_ttclid)
               VALUES (5, 1, 'open', 0, 0, lead_pack('{}'), '', 0, 0, 0, 0, '', 1);"#,
        )
        .unwrap();
        crate::words::catch_up(&conn, 10).unwrap();
        let ttclid = all("SELECT status, total FROM lead_facet_counts
             WHERE facet = 'has_ttclid' AND value = '1' AND status = 'open'");
        assert_eq!(ttclid, [("open".to_owned(), 2)]);
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

    /// An older database's leads get their `q` text (migration 25), and after migration 43
    /// the writer indexes them on its own, in its words' index, which merges its segments
    /// sixteen at a time.
    #[test]
    fn leads_of_an_older_database_get_their_q_text_and_are_indexed_after() {
        use rusqlite::OptionalExtension;
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
        let found = |conn: &Connection| -> Option<i64> {
            conn.query_row(
                "SELECT rowid & 68719476735 FROM lead_words WHERE lead_words MATCH '\"mul\"'",
                [],
                |row| row.get(0),
            )
            .optional()
            .unwrap()
        };
        assert_eq!(
            found(&conn),
            None,
            "indexed by the writer, not the migration"
        );
        assert_eq!(crate::words::catch_up(&conn, 10).unwrap(), 1);
        assert_eq!(found(&conn), Some(1));
        let setting = |key: &str| -> i64 {
            conn.query_row(
                "SELECT v FROM lead_words_config WHERE k = ?1",
                [key],
                |row| row.get(0),
            )
            .unwrap()
        };
        assert_eq!((setting("automerge"), setting("crisismerge")), (16, 64));
    }

    /// Migration 62: each lead's data is packed, reads as the JSON it was, and the kept
    /// report counts read its campaign id through the view as before, also when a counted
    /// lead changes.
    #[test]
    fn leads_of_an_older_database_get_their_data_packed() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, 61).unwrap();
        let json = r#"{"userData":{"email":"a@x.io"},"attributionData":{"utm_id":"42"}}"#;
        conn.execute_batch(&format!(
            r#"INSERT INTO projects (id, public_id, name, currency, lost_mapping, created_at)
                   VALUES (1, 'acme', 'Acme', 'EUR', '{{}}', 0);
               INSERT INTO leads (id, project_id, status, created_at, updated_at, data,
                   search_text, has_gclid, has_cid, has_fbp, has_fbc, q_text, last_source)
               VALUES (1, 1, 'open', 0, 0, '{json}', '', 0, 0, 0, 0, '', 'google'),
                      (2, 1, 'open', 0, 0, '{{}}', '', 0, 0, 0, 0, '', 'google');"#
        ))
        .unwrap();
        crate::words::catch_up(&conn, 10).unwrap();
        let counts = |conn: &Connection| -> Vec<(String, String, i64)> {
            conn.prepare(
                "SELECT campaign_id, status, total FROM lead_report_counts
                 WHERE touch = 'last' AND total <> 0 ORDER BY 1, 2",
            )
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
        };
        let before = counts(&conn);
        migrate(&mut conn).unwrap();
        let stored: Vec<(String, String)> = conn
            .prepare("SELECT typeof(data), lead_json(data) FROM leads ORDER BY id")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let expected = [("blob", json), ("blob", "{}")];
        assert_eq!(stored, expected.map(|(t, j)| (t.to_owned(), j.to_owned())));
        assert_eq!(counts(&conn), before);
        assert_eq!(
            before,
            [("", "open", 1), ("42", "open", 1)].map(|(c, s, n)| (c.to_owned(), s.to_owned(), n))
        );
        // A counted lead's change moves its counts through the view's triggers.
        conn.execute("UPDATE leads SET status = 'qualified' WHERE id = 1", [])
            .unwrap();
        let after = [("", "open", 1), ("42", "qualified", 1)];
        assert_eq!(
            counts(&conn),
            after.map(|(c, s, n)| (c.to_owned(), s.to_owned(), n))
        );
    }

    /// Migration 63: the words' index holds of each indexed lead's `q` text only the words
    /// its search text lacks, as a rebuild does; its mark and the kept counts stay, the
    /// leads above the mark are indexed after, and an indexed lead's change follows.
    #[test]
    fn the_words_index_of_an_older_database_holds_each_word_once() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, 62).unwrap();
        crate::rows::insert_test_leads(
            &conn,
            &[
                (1, 1, "open", 0, "ada", "ada\nlovelace"),
                (2, 1, "rated", 0, "grace", "grace\nhopper"),
                (3, 1, "open", 0, "kay", "kay\nokafor"),
            ],
        );
        crate::words::catch_up(&conn, 2).unwrap();
        // The index as version 62 kept it: each indexed lead's whole `q` text (its trigger).
        conn.execute("UPDATE leads SET q_text = q_text", [])
            .unwrap();
        let in_column = |conn: &Connection, columns: &str, word: &str| -> i64 {
            conn.query_row(
                "SELECT count(*) FROM lead_words WHERE lead_words MATCH ?1",
                [format!("{{{columns}}} : \"{word}\"")],
                |row| row.get(0),
            )
            .unwrap()
        };
        let counts = |conn: &Connection| -> Vec<(String, i64)> {
            conn.prepare("SELECT status, total FROM lead_status_counts ORDER BY 1")
                .unwrap()
                .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        let before = counts(&conn);
        assert_eq!(in_column(&conn, "q_text", "ada"), 1);
        migrate(&mut conn).unwrap();
        assert_eq!(crate::words::indexed_to(&conn).unwrap(), 2);
        assert_eq!(counts(&conn), before);
        assert_eq!(crate::derived::check(&conn).unwrap(), Vec::<String>::new());
        assert_eq!(in_column(&conn, "q_text", "ada"), 0);
        assert_eq!(in_column(&conn, "q_text", "lovelace"), 1);
        assert_eq!(in_column(&conn, "search_text q_text", "ada"), 1);
        assert_eq!(in_column(&conn, "search_text q_text", "okafor"), 0);
        crate::words::catch_up(&conn, 10).unwrap();
        assert_eq!(in_column(&conn, "search_text q_text", "okafor"), 1);
        assert_eq!(in_column(&conn, "q_text", "kay"), 0);
        conn.execute(
            "UPDATE leads SET q_text = 'grace' || char(10) || 'kay' WHERE id = 2",
            [],
        )
        .unwrap();
        assert_eq!(in_column(&conn, "q_text", "kay"), 1);
        assert_eq!(in_column(&conn, "q_text", "grace"), 0);
        assert_eq!(in_column(&conn, "search_text q_text", "hopper"), 0);
        assert_eq!(crate::derived::check(&conn).unwrap(), Vec::<String>::new());
    }

    /// Migration 64: the unread columns of a lead's email, phone and company go; the lead's
    /// data and words stay, and the derived data still matches a rebuild.
    #[test]
    fn the_unread_columns_of_an_older_database_are_dropped() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, 63).unwrap();
        crate::rows::insert_test_leads(&conn, &[(1, 1, "open", 0, "ada", "ada\nlovelace")]);
        conn.execute(
            "UPDATE leads SET data = lead_pack('{\"userData\":{\"email\":\"a@x.io\"}}'),
                 email = 'a@x.io', phone = '+49 151', company_name = 'Acme' WHERE id = 1",
            [],
        )
        .unwrap();
        crate::words::catch_up(&conn, 10).unwrap();
        let columns = |conn: &Connection| -> Vec<String> {
            conn.prepare("SELECT name FROM pragma_table_info('leads')")
                .unwrap()
                .query_map([], |row| row.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        let read = |conn: &Connection| -> (String, i64) {
            conn.query_row(
                "SELECT lead_json(data), (SELECT count(*) FROM lead_words
                     WHERE lead_words MATCH '\"lovelace\"') FROM leads WHERE id = 1",
                [],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .unwrap()
        };
        let before = read(&conn);
        assert!(columns(&conn).contains(&"company_name".to_owned()));
        migrate(&mut conn).unwrap();
        let left = columns(&conn);
        for gone in ["email", "phone", "company_name"] {
            assert!(!left.contains(&gone.to_owned()), "{gone} is still a column");
        }
        assert!(left.contains(&"email_key".to_owned()));
        assert_eq!(read(&conn), before);
        assert_eq!(before.1, 1);
        assert_eq!(crate::derived::check(&conn).unwrap(), Vec::<String>::new());
    }

    /// Migration 66: a lead's first event, when it is its `created` by nobody at its
    /// creation time, goes, and the lead implies it; other leads are listed as told by their
    /// rows alone. Every history reads as before.
    #[test]
    fn the_created_rows_of_an_older_database_are_implied_by_their_leads() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, 65).unwrap();
        let leads = [1, 2, 3].map(|id| (id, 1, "open", 60_000, "", ""));
        crate::rows::insert_test_leads(&conn, &leads);
        let created = r#"{"type":"created"}"#;
        let key =
            serde_json::to_string(&leadtrack_core::account::Actor::api_key("lt_0123abcd")).unwrap();
        let events = [
            // A lead's usual history: created, then merged at the same time, then more.
            (1, 60_000, None, created),
            (1, 60_000, None, r#"{"type":"merged"}"#),
            (1, 120_000, Some(key.as_str()), r#"{"type":"not_spam"}"#),
            // Captured before histories (lead 2 has none), and created at another time.
            (3, 30_000, None, created),
            (3, 90_000, None, r#"{"type":"merged"}"#),
        ];
        for (lead, at, actor, activity) in events {
            conn.execute(
                "INSERT INTO lead_events (lead_id, project_id, at, actor, activity)
                 VALUES (?1, 1, ?2, ?3, ?4)",
                (lead, at, actor, activity),
            )
            .unwrap();
        }
        let recorded = |conn: &Connection, lead: i64| -> Vec<LeadEvent> {
            conn.prepare(&format!(
                "SELECT {} FROM lead_events WHERE lead_id = ?1 ORDER BY at, id",
                crate::rows::EVENT_COLUMNS
            ))
            .unwrap()
            .query_and_then([lead], crate::rows::event)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
        };
        let before = [1, 2, 3].map(|lead| recorded(&conn, lead));
        migrate(&mut conn).unwrap();
        for (lead, before) in [1, 2, 3].into_iter().zip(before) {
            let told = crate::activity::lead_activity(&conn, ProjectId(1), LeadId(lead)).unwrap();
            assert_eq!(told, before, "lead {lead}");
        }
        let left: i64 = conn
            .query_row("SELECT count(*) FROM lead_events", [], |row| row.get(0))
            .unwrap();
        assert_eq!(left, 4, "only lead 1's created row went");
        let listed: Vec<i64> = conn
            .prepare("SELECT lead_id FROM lead_histories_recorded ORDER BY lead_id")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(listed, [2, 3]);
    }
}
