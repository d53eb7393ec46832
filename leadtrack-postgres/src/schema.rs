//! The schema, as the list of migrations in `migrations/`, applied at start in one
//! transaction under an advisory lock: of ten servers starting at once, one migrates and the
//! others wait for it, then find nothing left to do. `leadtrack_schema` records how many
//! have been applied.
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

/// Every migration, oldest first: the files of `migrations/` (`NNNN_name.sql`). Never edit
/// one that has shipped: add a new file, and its line here.
pub(crate) const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_initial.sql"),
    include_str!("../migrations/0002_search_table.sql"),
    include_str!("../migrations/0003_conversion_identity.sql"),
    include_str!("../migrations/0004_undo_window.sql"),
    include_str!("../migrations/0005_form_tokens.sql"),
    include_str!("../migrations/0006_lost_retracts.sql"),
    include_str!("../migrations/0007_spam_duplicates.sql"),
    include_str!("../migrations/0008_project_events.sql"),
    include_str!("../migrations/0009_user_preferences.sql"),
    include_str!("../migrations/0010_rating_drafts.sql"),
    include_str!("../migrations/0011_q_search.sql"),
    include_str!("../migrations/0012_form_key.sql"),
    include_str!("../migrations/0013_facet_counts.sql"),
    include_str!("../migrations/0014_saved_views.sql"),
    include_str!("../migrations/0015_member_export.sql"),
    include_str!("../migrations/0016_invitations_links.sql"),
    include_str!("../migrations/0017_label_order.sql"),
    include_str!("../migrations/0018_comments.sql"),
    include_str!("../migrations/0019_first_touch.sql"),
    include_str!("../migrations/0020_assignment.sql"),
    include_str!("../migrations/0021_alerts.sql"),
    include_str!("../migrations/0022_sealed_secrets.sql"),
    include_str!("../migrations/0023_platform_credentials.sql"),
    include_str!("../migrations/0024_lead_sources.sql"),
    include_str!("../migrations/0025_inbound_hooks.sql"),
    include_str!("../migrations/0026_set_based_insert_counts.sql"),
    include_str!("../migrations/0027_reset_requests.sql"),
    include_str!("../migrations/0028_phone_digits_in_q.sql"),
    include_str!("../migrations/0029_fbclid_is_a_meta_click.sql"),
    include_str!("../migrations/0030_troubled_deliveries.sql"),
    include_str!("../migrations/0031_next_steps.sql"),
    include_str!("../migrations/0032_ios_and_tiktok_click_ids.sql"),
    include_str!("../migrations/0033_reddit_snapchat_pinterest_x_click_ids.sql"),
    include_str!("../migrations/0034_attempt_batches.sql"),
    include_str!("../migrations/0035_spend.sql"),
    include_str!("../migrations/0036_spend_sources.sql"),
    include_str!("../migrations/0037_spend_source_settings.sql"),
    include_str!("../migrations/0038_erasure.sql"),
    include_str!("../migrations/0039_retention.sql"),
    include_str!("../migrations/0040_webhook_kinds.sql"),
    include_str!("../migrations/0041_crm_queue.sql"),
    include_str!("../migrations/0042_counts_after_the_commit.sql"),
    include_str!("../migrations/0043_email_sorted_by_its_key.sql"),
    include_str!("../migrations/0044_shorter_trigram_pending_lists.sql"),
    include_str!("../migrations/0045_unread_columns_dropped.sql"),
    include_str!("../migrations/0046_form_name_found_by_its_key.sql"),
    include_str!("../migrations/0047_creation_implied.sql"),
];

/// The table recording how many migrations a database has applied, made before the first.
const VERSION_TABLE: &str = include_str!("../sql/schema_version.sql");

/// A column's value derived from a lead's data.
type DerivedColumn = fn(&LeadData) -> Option<String>;

/// Columns derived from a lead's data that a migration adds, filled by `leads::backfill`
/// right after it for the leads stored before: (the migration's index in [`MIGRATIONS`],
/// the column, its value).
const BACKFILLS: [(usize, &str, DerivedColumn); 3] = [
    (10, "q_text", |data| {
        Some(leadtrack_core::store::q_text(data))
    }),
    (11, "form_key", |data| {
        data.form_name().map(matching::form_key)
    }),
    // A phone number's line became its digits.
    (27, "q_text", |data| {
        data.user("phone")
            .map(|_| leadtrack_core::store::q_text(data))
    }),
];

/// Creates the table recording the schema version, and applies the migrations the
/// database lacks, in one transaction holding the migration lock. A database newer than
/// this build is refused rather than misread.
pub(crate) async fn migrate(client: &mut deadpool_postgres::Object) -> Result<(), Error> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    tx.batch_execute(VERSION_TABLE).await?;
    let current = check_known(&tx).await?;
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(current) {
        tx.batch_execute(sql).await?;
        for (_, column, value) in BACKFILLS.iter().filter(|(after, ..)| *after == index) {
            crate::leads::backfill(&tx, column, *value).await?;
        }
        let version = i32::try_from(index + 1).unwrap_or(i32::MAX);
        tx.execute("UPDATE leadtrack_schema SET version = $1", &[&version])
            .await?;
    }
    tx.commit().await?;
    let version = MIGRATIONS.len();
    if version > current {
        tracing::info!(
            version,
            applied = version - current,
            "database at version {version}"
        );
    }
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

#[cfg(test)]
mod listed {
    /// Every file of `migrations/` is applied, in the order of its number.
    #[test]
    fn every_migration_file_is_listed_in_order() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations");
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        files.sort();
        assert_eq!(files.len(), super::MIGRATIONS.len());
        for (file, sql) in files.iter().zip(super::MIGRATIONS) {
            let text = std::fs::read_to_string(file).unwrap();
            assert_eq!(&text, sql, "{}", file.display());
        }
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

    /// A fresh database as the first `version` migrations left it, holding what `seed`
    /// inserts, opened by this build (which migrates it).
    async fn migrated_from(version: usize, seed: &str) -> PgStore {
        let (url, client) = at_version(version).await;
        client.batch_execute(seed).await.unwrap();
        let store = PgStore::connect(&url, &crate::testkit::test_key())
            .await
            .unwrap();
        store.ready().await.unwrap();
        store
    }

    /// A fresh database as the first `version` migrations left it, and a client of it.
    async fn at_version(version: usize) -> (String, tokio_postgres::Client) {
        let cluster = std::env::var(URL_VARIABLE).unwrap();
        let url = fresh_database(&cluster).await;
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        for migration in &MIGRATIONS[..version] {
            client.batch_execute(migration).await.unwrap();
        }
        client.batch_execute(super::VERSION_TABLE).await.unwrap();
        let version = format!("UPDATE leadtrack_schema SET version = {version}");
        client.batch_execute(&version).await.unwrap();
        (url, client)
    }

    #[tokio::test]
    async fn migrations_copy_every_lead_to_the_search_table_and_fill_its_q_text() {
        // The database as version 1 left it, with two projects' leads in it.
        let store = migrated_from(
            1,
            "INSERT INTO projects (public_id, name, currency, lost_mapping, created_at)
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
        .await;
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

    #[tokio::test]
    async fn leads_from_before_are_found_by_their_number_and_meta_s_raw_click_id() {
        // The database as version 27 left it, with a lead whose `q` text holds its phone
        // number as it was written and one with Meta's raw click id not counted as its click.
        let store = migrated_from(
            27,
            "INSERT INTO projects (public_id, name, currency, lost_mapping, created_at)
                     VALUES ('a', 'A', 'EUR', '{}', 0);
                 INSERT INTO leads (project_id, status, created_at, updated_at, data,
                     search_text, q_text, has_gclid, has_cid, has_fbp, has_fbc,
                     has_msclkid, has_li_fat_id, created_via)
                 VALUES (1, 'open', 1, 1, '{\"userData\":{\"phone\":\"+49 151 1234 5678\"}}',
                     '+49 151 1234 5678', '+49 151 1234 5678', false, false, false, false,
                     false, false, 'server'),
                 (1, 'open', 2, 2, '{\"attributionData\":{\"fbclid\":\"IwAR\"}}',
                     '', 'iwar', false, false, false, false, false, false, 'server');",
        )
        .await;
        for (pair, expected) in [
            (("q", "0151 1234 5678"), 1),
            (("fbc[exists]", "true"), 2),
            (("fbc[exists]", "false"), 1),
        ] {
            let query = LeadQuery::from_pairs([pair]).unwrap();
            let page = store.list_leads(ProjectId(1), &query).await.unwrap();
            let ids: Vec<i64> = page.leads.iter().map(|lead| lead.id.0).collect();
            assert_eq!((page.total, ids), (1, vec![expected]), "{pair:?}");
        }
    }

    #[tokio::test]
    async fn the_created_rows_of_an_older_database_are_implied_by_their_leads() {
        // Version 46: lead 1's history begins with its `created` row, lead 2 has no
        // history, and lead 3's `created` row says another time than the lead.
        let store = migrated_from(
            46,
            r#"INSERT INTO projects (public_id, name, currency, lost_mapping, created_at)
                     VALUES ('a', 'A', 'EUR', '{}', 0);
                 INSERT INTO leads (project_id, status, created_at, updated_at, data,
                     search_text, q_text, has_gclid, has_cid, has_fbp, has_fbc,
                     has_msclkid, has_li_fat_id, created_via)
                 SELECT 1, 'open', 60000, 60000, '{}', '', '', false, false, false, false,
                     false, false, 'server'
                 FROM generate_series(1, 3);
                 INSERT INTO lead_events (project_id, lead_id, at, actor, activity) VALUES
                     (1, 1, 60000, NULL, '{"type":"created"}'),
                     (1, 1, 60000, NULL, '{"type":"merged"}'),
                     (1, 1, 120000, NULL, '{"type":"not_spam"}'),
                     (1, 3, 30000, NULL, '{"type":"created"}'),
                     (1, 3, 90000, NULL, '{"type":"merged"}');"#,
        )
        .await;
        let at = |ms: i64| chrono::DateTime::UNIX_EPOCH + chrono::Duration::milliseconds(ms);
        for (lead, expected) in [
            (
                1,
                vec![
                    (60_000, "created"),
                    (60_000, "merged"),
                    (120_000, "not_spam"),
                ],
            ),
            (2, vec![]),
            (3, vec![(30_000, "created"), (90_000, "merged")]),
        ] {
            let history = store
                .lead_activity(ProjectId(1), leadtrack_core::LeadId(lead))
                .await
                .unwrap();
            let told: Vec<_> = history
                .iter()
                .map(|event| {
                    let json = serde_json::to_value(&event.activity).unwrap();
                    (event.at, json["type"].as_str().unwrap().to_owned())
                })
                .collect();
            let expected: Vec<_> = expected
                .into_iter()
                .map(|(ms, kind)| (at(ms), kind.to_owned()))
                .collect();
            assert_eq!(told, expected, "lead {lead}");
        }
    }
}
