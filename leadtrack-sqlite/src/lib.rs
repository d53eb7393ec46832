//! leadtrack's store traits ([`LeadStore`], [`Admin`], [`JobQueue`]) on embedded SQLite:
//! the default backend, a single file, no set-up.
//!
//! - Durable by default: WAL with `synchronous=FULL`, so a lead acknowledged to a caller
//!   survives a crash or a power loss. [`Synchronous::Normal`] trades the last moments before
//!   a power loss for fewer fsyncs.
//! - No SQLite call runs on an async runtime's thread: one writer thread owns the write
//!   connection and commits waiting writes together (group commit); a pool of reader
//!   threads serves reads. The store works under any async runtime.
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

mod admin;
mod jobs;
mod leads;
mod rows;
mod runtime;
mod schema;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration as StdDuration;

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use leadtrack_core::integration::{IntegrationSettings, Integrations};
use leadtrack_core::job::{Attempt, ClaimedJob, JobRecord, StatusChange};
use leadtrack_core::key::{ApiKeyInfo, GeneratedKey, KeyHash, KeyRef};
use leadtrack_core::label::{ConversionLabel, NewLabel};
use leadtrack_core::lead::{CreatedLead, LeadData, LeadPage, StoredLead};
use leadtrack_core::project::{NewProject, Project, ProjectSettings};
use leadtrack_core::request::{LeadQuery, StatusUpdate};
use leadtrack_core::types::{
    IntegrationKind, JobId, LeadId, LeadIdentifier, LeadStatus, ProjectId,
};
use leadtrack_core::{Admin, JobQueue, LeadStore, StoreError, StoreResult};
use uuid::Uuid;

pub(crate) use rows::Error;
use runtime::Runtime;
pub use runtime::WriteStats;

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

impl Synchronous {
    fn pragma(self) -> &'static str {
        match self {
            Self::Full => "FULL",
            Self::Normal => "NORMAL",
        }
    }
}

/// Options of [`SqliteStore::open_with`].
#[derive(Clone, Debug)]
pub struct SqliteOptions {
    /// Durability of commits; [`Synchronous::Full`] by default.
    pub synchronous: Synchronous,
    /// Reader threads (and connections); 4 by default.
    pub readers: usize,
    /// How long a connection waits for a lock held by another process (an admin command
    /// writing to the database of a running server); 5 seconds by default.
    pub busy_timeout: StdDuration,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self {
            synchronous: Synchronous::Full,
            readers: 4,
            busy_timeout: StdDuration::from_secs(5),
        }
    }
}

/// The SQLite store. Cheap to clone: clones share the connections.
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

struct Inner {
    runtime: Runtime,
    /// Keeps a temporary database's directory until the last clone is dropped.
    _temp_dir: Option<tempfile::TempDir>,
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
    pub async fn open_with(path: impl AsRef<Path>, options: SqliteOptions) -> StoreResult<Self> {
        let runtime = Runtime::start(path.as_ref(), &options).await?;
        Ok(Self {
            inner: Arc::new(Inner {
                runtime,
                _temp_dir: None,
            }),
        })
    }

    /// Opens a fresh database in a temporary directory that is deleted when the last clone
    /// of the store is dropped. For tests.
    pub async fn open_temporary() -> StoreResult<Self> {
        let dir = tempfile::tempdir().map_err(StoreError::backend)?;
        let runtime =
            Runtime::start(&dir.path().join("leadtrack.db"), &SqliteOptions::default()).await?;
        Ok(Self {
            inner: Arc::new(Inner {
                runtime,
                _temp_dir: Some(dir),
            }),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        self.inner.runtime.path()
    }

    /// Commits every write already submitted, then closes the connections. Later calls on
    /// any clone fail with [`StoreError::Unavailable`].
    pub async fn close(&self) {
        self.inner.runtime.close().await;
    }

    /// What the writer has committed since the store was opened.
    pub fn write_stats(&self) -> WriteStats {
        self.inner.runtime.write_stats()
    }

    async fn write<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&rusqlite::Connection) -> Result<T, Error> + Send + 'static,
    {
        self.inner.runtime.write(f).await
    }

    async fn read<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&rusqlite::Connection) -> Result<T, Error> + Send + 'static,
    {
        self.inner.runtime.read(f).await
    }
}

#[async_trait]
impl LeadStore for SqliteStore {
    async fn authenticate(&self, key: &KeyHash) -> StoreResult<Project> {
        let key = *key;
        self.read(move |conn| admin::authenticate(conn, &key)).await
    }

    async fn project_by_public_id(&self, public_id: &str) -> StoreResult<Project> {
        let public_id = public_id.to_owned();
        self.read(move |conn| admin::project_by_public_id(conn, &public_id))
            .await
    }

    async fn create_lead(
        &self,
        project: ProjectId,
        data: LeadData,
        now: DateTime<Utc>,
    ) -> StoreResult<CreatedLead> {
        self.write(move |conn| leads::create(conn, project, data, now))
            .await
    }

    async fn find_lead(
        &self,
        project: ProjectId,
        identifier: &LeadIdentifier,
    ) -> StoreResult<StoredLead> {
        let identifier = identifier.clone();
        self.read(move |conn| leads::find(conn, project, &identifier))
            .await
    }

    async fn list_leads(&self, project: ProjectId, query: &LeadQuery) -> StoreResult<LeadPage> {
        let query = query.clone();
        self.read(move |conn| leads::list(conn, project, &query))
            .await
    }

    async fn update_status(
        &self,
        project: ProjectId,
        update: &StatusUpdate,
        now: DateTime<Utc>,
    ) -> StoreResult<StatusChange> {
        let update = update.clone();
        self.write(move |conn| jobs::update_status(conn, project, &update, now))
            .await
    }

    async fn lead_jobs(&self, project: ProjectId, lead: LeadId) -> StoreResult<Vec<JobRecord>> {
        self.read(move |conn| jobs::lead_jobs(conn, project, lead))
            .await
    }
}

#[async_trait]
impl Admin for SqliteStore {
    async fn create_project(
        &self,
        project: NewProject,
        now: DateTime<Utc>,
    ) -> StoreResult<Project> {
        self.write(move |conn| admin::create_project(conn, project, now))
            .await
    }

    async fn projects(&self) -> StoreResult<Vec<Project>> {
        self.read(admin::projects).await
    }

    async fn project(&self, public_id: &str) -> StoreResult<Project> {
        self.project_by_public_id(public_id).await
    }

    async fn update_project(
        &self,
        project: ProjectId,
        settings: ProjectSettings,
    ) -> StoreResult<Project> {
        self.write(move |conn| admin::update_project(conn, project, settings))
            .await
    }

    async fn set_project_active(&self, project: ProjectId, active: bool) -> StoreResult<Project> {
        self.write(move |conn| admin::set_project_active(conn, project, active))
            .await
    }

    async fn insert_api_key(
        &self,
        project: ProjectId,
        key: &GeneratedKey,
        now: DateTime<Utc>,
    ) -> StoreResult<ApiKeyInfo> {
        let key = key.clone();
        self.write(move |conn| admin::insert_api_key(conn, project, &key, now))
            .await
    }

    async fn api_keys(&self, project: ProjectId) -> StoreResult<Vec<ApiKeyInfo>> {
        self.read(move |conn| admin::api_keys(conn, project)).await
    }

    async fn revoke_api_key(
        &self,
        project: ProjectId,
        key: &KeyRef,
        now: DateTime<Utc>,
    ) -> StoreResult<ApiKeyInfo> {
        let key = key.clone();
        self.write(move |conn| admin::revoke_api_key(conn, project, &key, now))
            .await
    }

    async fn create_label(
        &self,
        project: ProjectId,
        label: NewLabel,
        now: DateTime<Utc>,
    ) -> StoreResult<ConversionLabel> {
        self.write(move |conn| admin::create_label(conn, project, label, now))
            .await
    }

    async fn labels(&self, project: ProjectId) -> StoreResult<Vec<ConversionLabel>> {
        self.read(move |conn| admin::labels(conn, project)).await
    }

    async fn label(&self, project: ProjectId, id: Uuid) -> StoreResult<ConversionLabel> {
        self.read(move |conn| admin::label(conn, project, id)).await
    }

    async fn integrations(&self, project: ProjectId) -> StoreResult<Integrations> {
        self.read(move |conn| admin::integrations(conn, project))
            .await
    }

    async fn set_integration(
        &self,
        project: ProjectId,
        settings: IntegrationSettings,
        now: DateTime<Utc>,
    ) -> StoreResult<()> {
        self.write(move |conn| admin::set_integration(conn, project, settings, now))
            .await
    }

    async fn remove_integration(
        &self,
        project: ProjectId,
        kind: IntegrationKind,
    ) -> StoreResult<bool> {
        self.write(move |conn| admin::remove_integration(conn, project, kind))
            .await
    }
}

#[async_trait]
impl JobQueue for SqliteStore {
    async fn claim_job(
        &self,
        now: DateTime<Utc>,
        lease_for: Duration,
    ) -> StoreResult<Option<ClaimedJob>> {
        self.write(move |conn| jobs::claim(conn, now, lease_for))
            .await
    }

    async fn record_attempt(&self, job: JobId, lease: Uuid, attempt: &Attempt) -> StoreResult<()> {
        let attempt = attempt.clone();
        self.write(move |conn| jobs::record_attempt(conn, job, lease, &attempt))
            .await
    }

    async fn reschedule_job(
        &self,
        job: JobId,
        lease: Uuid,
        due_at: DateTime<Utc>,
    ) -> StoreResult<()> {
        self.write(move |conn| jobs::reschedule(conn, job, lease, due_at))
            .await
    }

    async fn finish_job(
        &self,
        job: JobId,
        lease: Uuid,
        now: DateTime<Utc>,
    ) -> StoreResult<LeadStatus> {
        self.write(move |conn| jobs::finish(conn, job, lease, now))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use leadtrack_core::label::LabelMapping;

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
                NewLabel {
                    name: "Won".into(),
                    mark_as_done: true,
                    mapping: LabelMapping::default(),
                },
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
}
