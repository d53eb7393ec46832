//! leadtrack's store traits ([`LeadStore`], [`Admin`], [`JobQueue`], [`Accounts`]) on
//! embedded SQLite: the default backend, a single file, no set-up.
//!
//! [`LeadStore`]: leadtrack_core::LeadStore
//! [`Admin`]: leadtrack_core::Admin
//! [`JobQueue`]: leadtrack_core::JobQueue
//! [`Accounts`]: leadtrack_core::Accounts
//!
//! - Durable by default ([`Synchronous::Full`]): a lead acknowledged to a caller survives a
//!   crash or a power loss, because a write is acknowledged only once the WAL holding it has
//!   been fsynced. [`Synchronous::Normal`] trades the last moments before a power loss for
//!   no fsyncs.
//! - No SQLite call runs on an async runtime's thread: one writer thread owns the write
//!   connection and commits waiting writes together (group commit); two pools of reader
//!   threads serve reads, one for quick lookups (keys, projects, one lead, sessions) and one
//!   for heavy reads (listings, searches, reports, exports), so heavy reads cannot starve
//!   the lookups every request makes. The store works under any async runtime.
//! - Overload fails fast: a read whose pool's queue is full, that waited for a reader longer
//!   than its pool's time limit (it does not run), or that runs longer than that, fails with
//!   [`StoreError::Unavailable`](leadtrack_core::StoreError::Unavailable), and so does a heavy read of a
//!   project that already holds half of the heavy readers and their queue; a read whose
//!   caller has gone is stopped.
//! - The schema is migrated on open; a database from an older leadtrack is upgraded.
//!
//! ```
//! use chrono::Utc;
//! use leadtrack_core::key::KeyHash;
//! use leadtrack_core::project::NewProject;
//! use leadtrack_core::{Admin, LeadStore};
//! use leadtrack_sqlite::SqliteStore;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), leadtrack_core::StoreError> {
//! let store = SqliteStore::open_temporary().await?;
//! let project = store
//!     .create_project(NewProject { public_id: Some("acme".into()), name: "ACME".into(), currency: None }, Utc::now())
//!     .await?;
//! let key = store.issue_api_key(project.id, Utc::now()).await?;
//! let found = store.authenticate(&KeyHash::of(&key.key)).await?;
//! assert_eq!(found.public_id, "acme");
//! store.close().await;
//! # Ok(())
//! # }
//! ```

#![forbid(unsafe_code)]

mod accounts;
mod activity;
mod admin;
mod alerts;
mod assignment;
mod backup;
mod clauses;
mod comments;
mod counts;
mod derived;
mod drafts;
mod erasure;
mod export;
mod fetches;
mod jobs;
mod keyset;
mod leads;
mod links;
mod listing;
mod lookup;
mod next_steps;
mod packed;
mod report;
mod rowid;
mod rows;
mod runtime;
mod schema;
mod secrets;
mod spend;
mod storage;
mod store;
mod views;
mod webhooks;
mod words;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration as StdDuration;

use leadtrack_core::StoreResult;
use leadtrack_core::types::ProjectId;
use leadtrack_core::vault::{SecretKey, Vault};

pub use backup::{BackupSummary, backup, restore};
pub use export::Export;
pub(crate) use rows::Error;
use runtime::{Lane, Runtime};
pub use runtime::{WriteStats, describe_metrics};
pub use secrets::{key_file, load_or_create_key, replace_key_file, rotate_secret_key};

/// How hard SQLite works to make commits durable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Synchronous {
    /// Every commit is fsynced before it is acknowledged: nothing acknowledged is lost,
    /// even on power loss. The default.
    #[default]
    Full,
    /// WAL commits are not fsynced one by one: a power loss may lose the last commits
    /// (never corrupt the database). A process crash loses nothing.
    Normal,
}

/// Options of [`SqliteStore::open_with`].
#[derive(Clone, Debug)]
pub struct SqliteOptions {
    /// Durability of commits; [`Synchronous::Full`] by default.
    pub synchronous: Synchronous,
    /// The readers of point lookups (API keys, projects, one lead, sessions, accounts):
    /// 2 threads, 1,024 waiting reads, 1 second per read by default. Every request makes
    /// one of these (its key, or its project), so the queue is deep enough for every
    /// connection the server allows to have one waiting.
    pub quick: ReadPool,
    /// The readers of listings, searches, counts, reports and exports: 4 threads, 256
    /// waiting reads, 2 seconds per read by default. One project may hold half of these
    /// places, so a busy project's dozens of concurrent listings are served, while a
    /// flood of its searches still leaves the other half to everyone else.
    pub heavy: ReadPool,
    /// How long a connection waits for a lock held by another process (an admin command
    /// writing to the database of a running server); 5 seconds by default.
    pub busy_timeout: StdDuration,
    /// The key secrets are sealed with (see [`leadtrack_core::vault`]). Without one, the
    /// key in [`key_file`] of the database, made on first open.
    pub secret_key: Option<SecretKey>,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self {
            synchronous: Synchronous::Full,
            quick: ReadPool {
                readers: 2,
                queue: 1_024,
                time_limit: StdDuration::from_secs(1),
            },
            heavy: ReadPool {
                readers: 4,
                queue: 256,
                time_limit: StdDuration::from_secs(2),
            },
            busy_timeout: StdDuration::from_secs(5),
            secret_key: None,
        }
    }
}

/// A pool of reader threads, each with its own connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadPool {
    /// Threads (and connections); at least 1.
    pub readers: usize,
    /// Reads that may wait for a thread (at least 1); past them a read fails at once with
    /// [`StoreError::Unavailable`](leadtrack_core::StoreError::Unavailable) rather than queue behind work it cannot overtake.
    pub queue: usize,
    /// How long one read may wait for a thread, and then run, before it fails with
    /// [`StoreError::Unavailable`](leadtrack_core::StoreError::Unavailable): a read that waited longer is refused without running,
    /// and one that runs longer is interrupted.
    pub time_limit: StdDuration,
}

/// The SQLite store. Cheap to clone: clones share the connections.
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

struct Inner {
    runtime: Runtime,
    /// Seals and opens the secrets the database keeps.
    vault: Vault,
    /// The database file's identity when it was opened: writes stop if it changes.
    opened: Option<storage::FileIdentity>,
    /// A shared lock on the database's lock file, so that a restore knows it is open.
    _open: std::fs::File,
    /// What lives as long as the store: a temporary database's directory (feature
    /// `testkit`), deleted when the last clone is dropped.
    _keep: Option<Box<dyn Send + Sync>>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path())
            .finish()
    }
}

impl SqliteStore {
    /// Opens (creating it if needed) the database at `path` with the default options.
    pub async fn open(path: impl AsRef<Path>) -> StoreResult<Self> {
        Self::open_with(path, SqliteOptions::default()).await
    }

    /// Opens (creating it if needed) the database at `path`.
    ///
    /// Refused ([`StoreError::Invalid`](leadtrack_core::StoreError::Invalid), saying why) when an existing file cannot be
    /// written, or when the file is missing but its write-ahead log is there.
    pub async fn open_with(path: impl AsRef<Path>, options: SqliteOptions) -> StoreResult<Self> {
        let path = path.as_ref();
        storage::check_before_open(path)?;
        let open = backup::hold_open(path)?;
        let vault = Self::vault_of(path, &options)?;
        let runtime = Runtime::start(path, &options, vault.clone()).await?;
        Ok(Self {
            inner: Arc::new(Inner {
                opened: storage::identity(path),
                runtime,
                vault,
                _open: open,
                _keep: None,
            }),
        })
    }

    /// Opens a fresh database in a temporary directory that is deleted when the last clone
    /// of the store is dropped. For tests (feature `testkit`).
    #[cfg(feature = "testkit")]
    pub async fn open_temporary() -> StoreResult<Self> {
        let dir = tempfile::tempdir().map_err(leadtrack_core::StoreError::backend)?;
        let path = dir.path().join("leadtrack.db");
        let open = backup::hold_open(&path)?;
        let options = SqliteOptions::default();
        let vault = Self::vault_of(&path, &options)?;
        let runtime = Runtime::start(&path, &options, vault.clone()).await?;
        Ok(Self {
            inner: Arc::new(Inner {
                opened: storage::identity(&path),
                runtime,
                vault,
                _open: open,
                _keep: Some(Box::new(dir)),
            }),
        })
    }

    /// The vault of the key `options` give, or else of the database's key file.
    fn vault_of(path: &Path, options: &SqliteOptions) -> StoreResult<Vault> {
        Ok(match &options.secret_key {
            Some(key) => Vault::new(key),
            None => Vault::new(&load_or_create_key(&key_file(path))?.0),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        self.inner.runtime.path()
    }

    /// Commits every write already submitted, then closes the connections. Later calls on
    /// any clone fail with [`StoreError::Unavailable`](leadtrack_core::StoreError::Unavailable).
    pub async fn close(&self) {
        self.inner.runtime.close().await;
    }

    /// What the writer has committed since the store was opened.
    pub fn write_stats(&self) -> WriteStats {
        self.inner.runtime.write_stats()
    }

    /// How the data derived from the leads (the words' index, the kept counts per status,
    /// hour and facet) differs from a rebuild from the leads: empty when it matches. Runs
    /// on the writer, between its writes; for tests and diagnostics.
    pub async fn check_derived(&self) -> StoreResult<Vec<String>> {
        self.write(derived::check).await
    }

    /// How many leads the words' index has not reached yet: the writer indexes them when
    /// it is idle, or at least every 200 ms (until then they are searched one by one).
    pub async fn words_behind(&self) -> StoreResult<u64> {
        self.read(derived::words_behind).await
    }

    /// Copies the WAL back into the database file and empties it (SQLite's `TRUNCATE`
    /// checkpoint), from a connection of its own: after an erasure, the WAL's older frames
    /// still hold the pages as they were. Waits up to five seconds for readers and the
    /// writer; a checkpoint they keep from finishing is left to the next one.
    async fn checkpoint(&self) {
        let path = self.path().to_owned();
        // A thread of its own, not the runtime's: the store works under any runtime.
        let (sender, done) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            let checkpoint = rusqlite::Connection::open(&path).and_then(|conn| {
                conn.busy_timeout(std::time::Duration::from_secs(5))?;
                conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| {
                    row.get::<_, i64>(0)
                })
            });
            let _ = sender.send(checkpoint);
        });
        match done.await {
            Ok(Ok(0)) => {}
            Ok(Ok(_)) => tracing::warn!("a checkpoint after an erasure could not finish"),
            Ok(Err(err)) => tracing::warn!(error = %err, "a checkpoint after an erasure failed"),
            Err(_) => tracing::warn!("a checkpoint after an erasure stopped"),
        }
    }

    /// The vault of the store's key, for a closure that reads or writes secrets.
    fn vault(&self) -> Vault {
        self.inner.vault.clone()
    }

    async fn write<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&rusqlite::Connection) -> Result<T, Error> + Send + 'static,
    {
        if let Some(opened) = self.inner.opened {
            storage::check_still_there(self.path(), opened)?;
        }
        self.inner.runtime.write(f).await
    }

    /// A point lookup through an index, on the quick readers.
    async fn read<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&rusqlite::Connection) -> Result<T, Error> + Send + 'static,
    {
        self.inner.runtime.read(Lane::Quick, f).await
    }

    /// A read that may scan many of `project`'s leads, on the heavy readers.
    async fn read_heavy<T, F>(&self, project: ProjectId, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&rusqlite::Connection) -> Result<T, Error> + Send + 'static,
    {
        self.inner.runtime.read(Lane::Heavy(project), f).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;
    use leadtrack_core::label::{LabelMapping, NewLabel};
    use leadtrack_core::request::LeadQuery;
    use leadtrack_core::types::LeadIdentifier;
    use leadtrack_core::{Admin, LeadStore};

    #[tokio::test]
    async fn opening_an_older_database_migrates_it_and_keeps_its_data() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        {
            let mut conn = rusqlite::Connection::open(&path).unwrap();
            schema::migrate_to(&mut conn, 1).unwrap();
            conn.execute_batch(
                r#"INSERT INTO projects (public_id, name, currency, lost_mapping, created_at)
                       VALUES ('old', 'Old', 'EUR', '{"webhook":true}', 0);
                   INSERT INTO leads (project_id, status, created_at, updated_at, data, email,
                       email_key, search_text, has_gclid, has_cid, has_fbp, has_fbc)
                       VALUES (1, 'open', 0, 0, '{"userData":{"email":"a@x.io"}}', 'a@x.io',
                       'a@x.io', 'a@x.io', 0, 0, 0, 0);"#,
            )
            .unwrap();
            assert_eq!(schema::version(&conn), 1);
        }
        let store = SqliteStore::open(&path).await.unwrap();
        let project = store.project_by_public_id("old").await.unwrap();
        let lead = store
            .find_lead(project.id, &LeadIdentifier::Email("A@x.io".into()))
            .await
            .unwrap();
        assert_eq!(lead.data.user("email"), Some("a@x.io"));
        // The count and the search index were built from the rows already there.
        let all = store
            .list_leads(project.id, &LeadQuery::default())
            .await
            .unwrap();
        assert_eq!(all.total, 1);
        let searched = LeadQuery {
            search: Some("a@x.io".into()),
            ..LeadQuery::default()
        };
        assert_eq!(
            store.list_leads(project.id, &searched).await.unwrap().total,
            1
        );
        let label = store
            .create_label(
                project.id,
                NewLabel::done("Won", LabelMapping::default()),
                Utc::now(),
            )
            .await
            .unwrap();
        assert_eq!(store.label(project.id, label.id).await.unwrap(), label);
        store.close().await;
        let conn = rusqlite::Connection::open(&path).unwrap();
        assert_eq!(schema::version(&conn), schema::MIGRATIONS.len() as i64);
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |row| row.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
    }

    #[tokio::test]
    async fn leads_from_before_the_facet_counts_are_counted_and_found_by_form() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v25.db");
        {
            let mut conn = rusqlite::Connection::open(&path).unwrap();
            schema::migrate_to(&mut conn, 25).unwrap();
            conn.execute_batch(
                r#"INSERT INTO projects (public_id, name, currency, lost_mapping, created_at)
                       VALUES ('old', 'Old', 'EUR', '{}', 0);
                   INSERT INTO leads (project_id, status, created_at, updated_at, data,
                       form_name, search_text, has_gclid, has_cid, has_fbp, has_fbc,
                       first_source, conversion_id)
                   VALUES
                   (1, 'open', 1, 1, '{"formData":{"formName":"Contact"}}', 'Contact', '',
                       1, 0, 0, 0, 'google', NULL),
                   (1, 'lost', 2, 2, '{"formData":{"formName":"CONTACT"}}', 'CONTACT', '',
                       0, 0, 0, 0, 'google', 'lost'),
                   (1, 'open', 3, 3, '{}', NULL, '', 1, 0, 0, 0, NULL, NULL);"#,
            )
            .unwrap();
        }
        let store = SqliteStore::open(&path).await.unwrap();
        let project = store.project_by_public_id("old").await.unwrap();
        for (pairs, expected) in [
            ([("form", "contact")], 2),
            ([("source", "google")], 2),
            ([("gclid[exists]", "true")], 2),
            ([("gclid[exists]", "false")], 1),
            ([("conversionId", "lost")], 1),
        ] {
            let query = LeadQuery::from_pairs(pairs).unwrap();
            assert!(query.only_facet().is_some());
            let page = store.list_leads(project.id, &query).await.unwrap();
            assert_eq!(
                (page.total, page.leads.len()),
                (expected, expected as usize),
                "{pairs:?}"
            );
        }
        store.close().await;
    }

    #[tokio::test]
    async fn leads_from_before_are_found_by_their_number_and_meta_s_raw_click_id() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v44.db");
        {
            let mut conn = rusqlite::Connection::open(&path).unwrap();
            schema::migrate_to(&mut conn, 44).unwrap();
            conn.execute_batch(
                r#"INSERT INTO projects (public_id, name, currency, lost_mapping, created_at)
                       VALUES ('old', 'Old', 'EUR', '{}', 0);
                   INSERT INTO leads (project_id, status, created_at, updated_at, data,
                       search_text, q_text, has_gclid, has_cid, has_fbp, has_fbc)
                   VALUES
                   (1, 'open', 1, 1, '{"userData":{"phone":"+49 151 1234 5678"}}',
                       '+49 151 1234 5678', '+49 151 1234 5678', 0, 0, 0, 0),
                   (1, 'open', 2, 2, '{"userData":{"lastName":"Kaya"}}', 'kaya', 'kaya',
                       0, 0, 0, 0),
                   (1, 'open', 3, 3, '{"attributionData":{"fbclid":"IwAR"}}', '', 'iwar',
                       0, 0, 0, 0);"#,
            )
            .unwrap();
        }
        let store = SqliteStore::open(&path).await.unwrap();
        let project = store.project_by_public_id("old").await.unwrap();
        for (pair, expected) in [
            (("q", "0151 1234 5678"), vec![1]),
            (("q", "kaya"), vec![2]),
            (("fbc[exists]", "true"), vec![3]),
            (("fbc[exists]", "false"), vec![2, 1]),
        ] {
            let query = LeadQuery::from_pairs([pair]).unwrap();
            let page = store.list_leads(project.id, &query).await.unwrap();
            let ids: Vec<i64> = page.leads.iter().map(|lead| lead.id.0).collect();
            assert_eq!(
                (page.total, ids),
                (expected.len() as u64, expected),
                "{pair:?}"
            );
        }
        store.close().await;
    }

    #[tokio::test]
    async fn jobs_from_before_accounts_have_no_rater_and_leads_no_history() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v3.db");
        {
            let mut conn = rusqlite::Connection::open(&path).unwrap();
            schema::migrate_to(&mut conn, 3).unwrap();
            conn.execute_batch(
                r#"INSERT INTO projects (public_id, name, currency, lost_mapping, created_at)
                       VALUES ('old', 'Old', 'EUR', '{"webhook":true}', 0);
                   INSERT INTO leads (project_id, status, created_at, updated_at, data, email,
                       email_key, search_text, has_gclid, has_cid, has_fbp, has_fbc,
                       conversion_id)
                       VALUES (1, 'lost', 0, 0, '{"userData":{"email":"a@x.io"}}', 'a@x.io',
                       'a@x.io', 'a@x.io', 0, 0, 0, 0, 'lost');
                   INSERT INTO jobs (event_id, project_id, lead_id, conversion_id,
                       final_status, state, created_at, due_at, finished_at)
                       VALUES ('6f1c1b1e-8a43-4a5e-9a57-0c1f4d3a2b10', 1, 1, 'lost', 'lost',
                       'done', 0, 0, 0);"#,
            )
            .unwrap();
        }
        let store = SqliteStore::open(&path).await.unwrap();
        let project = store.project_by_public_id("old").await.unwrap();
        let lead = leadtrack_core::LeadId(1);
        let jobs = store.lead_jobs(project.id, lead).await.unwrap();
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0].job.rated_by, None);
        assert!(
            store
                .lead_activity(project.id, lead)
                .await
                .unwrap()
                .is_empty()
        );
        store.close().await;
    }

    #[tokio::test]
    async fn leads_from_before_reports_are_grouped_by_their_channel() {
        use leadtrack_core::report::{Grouping, ReportQuery, Touchpoint};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v4.db");
        {
            let mut conn = rusqlite::Connection::open(&path).unwrap();
            schema::migrate_to(&mut conn, 4).unwrap();
            let cookie: String = form_urlencoded_cookie(r#"[{"ch":{"s":"bing","m":"cpc"}}]"#);
            conn.execute_batch(&format!(
                r#"INSERT INTO projects (public_id, name, currency, lost_mapping, created_at)
                       VALUES ('old', 'Old', 'EUR', '{{"webhook":true}}', 0);
                   INSERT INTO leads (project_id, status, created_at, updated_at, data,
                       search_text, has_gclid, has_cid, has_fbp, has_fbc)
                   VALUES
                   (1, 'open', 0, 0, '{{"channelFlow":"[{{\"ch\":{{\"s\":\"google\",\"m\":\"cpc\"}}}},{{\"ch\":{{\"s\":\"(direct)\",\"m\":\"(none)\"}}}}]"}}', '', 0, 0, 0, 0),
                   (1, 'open', 0, 0, '{{"channelFlow":"{cookie}"}}', '', 0, 0, 0, 0),
                   (1, 'open', 0, 0, '{{"attributionData":{{"utm_source":"news"}}}}', '', 0, 0, 0, 0),
                   (1, 'open', 0, 0, '{{"userData":{{"email":"a@x.io"}}}}', '', 0, 0, 0, 0);"#
            ))
            .unwrap();
        }
        let store = SqliteStore::open(&path).await.unwrap();
        let project = store.project_by_public_id("old").await.unwrap();
        let day = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
        let report = |touch| {
            let store = store.clone();
            async move {
                let query = ReportQuery {
                    from: day,
                    to: day,
                    touch,
                    by: Grouping::SourceMedium,
                };
                let report = store.report(project.id, &query).await.unwrap();
                report
                    .groups
                    .into_iter()
                    .map(|g| g.name)
                    .collect::<Vec<_>>()
            }
        };
        assert_eq!(
            report(Touchpoint::First).await,
            [
                "(not set)",
                "bing / cpc",
                "google / cpc",
                "news / (not set)"
            ]
        );
        assert_eq!(
            report(Touchpoint::Last).await,
            [
                "(direct) / (none)",
                "(not set)",
                "bing / cpc",
                "news / (not set)"
            ]
        );
        store.close().await;
    }

    /// A channel path as the `lt_channelflow` cookie holds it, percent-encoded.
    fn form_urlencoded_cookie(flow: &str) -> String {
        flow.bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect()
    }
}
