//! leadtrack's store traits ([`LeadStore`], [`Admin`], [`JobQueue`], [`Accounts`]) on
//! PostgreSQL 15 or later: for several API servers and delivery workers on one database.
//!
//! [`LeadStore`]: leadtrack_core::LeadStore
//! [`Admin`]: leadtrack_core::Admin
//! [`JobQueue`]: leadtrack_core::JobQueue
//! [`Accounts`]: leadtrack_core::Accounts
//!
//! - The same behaviour as the SQLite backend, proven by the same conformance suite
//!   (`leadtrack_core::testkit`). Where PostgreSQL needs another way to keep a rule, the
//!   rule stays: deduplication is `INSERT … ON CONFLICT` on a partial unique index; the 409
//!   rule a partial unique index on unfinished jobs, behind a row lock on the lead; job
//!   claims are `SELECT … FOR UPDATE SKIP LOCKED` with leases; search is a `pg_trgm` GIN
//!   index on a narrow copy of each lead's search text (kept by a trigger), with exact
//!   totals.
//! - A new lead is counted (per status, per facet's value) after its commit, by a counter
//!   each server runs (migration 42), so that concurrent creates never wait on the same
//!   count rows; readers add the leads not counted yet, so totals are exact at once.
//! - Concurrent creates are written in groups: the creates waiting at once run side by
//!   side in one transaction on one connection, their statements pipelined, and commit
//!   together; a group that fails runs each of its creates again alone.
//! - Nothing is cached in the process: a revoked key, a deactivated project or a changed
//!   setting takes effect on every server with the next request.
//! - Connections come from a pool ([`PgOptions::pool_size`] per process). A transaction
//!   that loses a serialisation race or a deadlock is retried.
//! - The schema is migrated at start, under an advisory lock, so that servers starting
//!   together migrate once.
//! - A worker waiting for work `LISTEN`s, and a store that queued work `NOTIFY`s after its
//!   commit ([`JobQueue::wait_for_work`]), so a delivery starts at once on an idle worker.
//! - The PostgreSQL end of `server migrate-to` ([`PgStore::import_rows`] and the methods
//!   beside it) writes a whole database given in `leadtrack_core::transfer`'s form.
//!
//! [`JobQueue::wait_for_work`]: leadtrack_core::JobQueue::wait_for_work

#![forbid(unsafe_code)]

mod accounts;
mod activity;
mod admin;
mod alerts;
mod assignment;
mod comments;
mod creates;
mod derived;
mod drafts;
mod erasure;
mod fetches;
mod import;
mod jobs;
mod keyset;
mod leads;
mod lease;
mod links;
mod listen;
mod listing;
mod lookup;
mod next_steps;
mod report;
mod rows;
mod schema;
mod secrets;
mod spend;
mod store;
#[cfg(feature = "testkit")]
pub mod testkit;
mod views;
mod webhooks;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration as StdDuration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use leadtrack_core::vault::{SecretKey, Vault};
use leadtrack_core::{StoreError, StoreResult};
use tokio_postgres::NoTls;

pub use import::ImportState;
pub(crate) use rows::Error;

/// How a [`PgStore`] connects.
#[derive(Clone, Debug)]
pub struct PgOptions {
    /// The most connections this process holds at once. Each request holds one for the
    /// length of its queries; the sum over every server and worker must stay below the
    /// database's `max_connections` (see `docs/SCALING.md`).
    pub pool_size: usize,
    /// How long a request waits for a free connection before it is refused as unavailable
    /// (503), so that an overloaded database sheds load instead of queueing it without end.
    pub wait: StdDuration,
    /// The longest a statement may run (`statement_timeout`); a longer one fails with
    /// [`StoreError::Unavailable`].
    pub statement_timeout: StdDuration,
}

impl Default for PgOptions {
    fn default() -> Self {
        Self {
            pool_size: 16,
            wait: StdDuration::from_secs(5),
            statement_timeout: StdDuration::from_secs(30),
        }
    }
}

/// The stores on PostgreSQL. Cheap to clone: clones share the pool.
#[derive(Clone)]
pub struct PgStore {
    pool: Pool,
    /// Seals and opens the secrets the database keeps.
    vault: Vault,
    /// Hears of work queued by any process, once a worker asks.
    listener: Arc<listen::Listener>,
    /// Counts new leads after their commit.
    counter: Arc<derived::Counter>,
    /// Writes concurrent creates together.
    creates: Arc<creates::Creates>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the URL: it may carry a password.
        f.debug_struct("PgStore")
            .field("pool", &self.pool.status())
            .finish()
    }
}

impl PgStore {
    /// Connects to the database a `postgres://` URL names with the default options, and
    /// migrates its schema. `key` seals the secrets it keeps (see [`leadtrack_core::vault`]).
    pub async fn connect(url: &str, key: &SecretKey) -> StoreResult<Self> {
        Self::connect_with(url, key, PgOptions::default()).await
    }

    /// Connects to the database a `postgres://` URL names, and migrates its schema. `key`
    /// seals the secrets it keeps (see [`leadtrack_core::vault`]); every server and worker
    /// of one database uses the same.
    ///
    /// Errors: [`StoreError::Invalid`] for a URL that is not one, a database newer than
    /// this build, or one whose secrets are sealed with another key;
    /// [`StoreError::Unavailable`] when the database cannot be reached.
    pub async fn connect_with(url: &str, key: &SecretKey, options: PgOptions) -> StoreResult<Self> {
        let mut config = tokio_postgres::Config::from_str(url)
            .map_err(|_| StoreError::Invalid("not a valid PostgreSQL URL".to_owned()))?;
        let timeout_ms = options.statement_timeout.as_millis();
        config.options(format!("-c statement_timeout={timeout_ms}"));
        if config.get_application_name().is_none() {
            config.application_name("leadtrack");
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(StdDuration::from_secs(10));
        }
        let listen_config = config.clone();
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(options.pool_size.max(1))
            .wait_timeout(Some(options.wait))
            .create_timeout(Some(StdDuration::from_secs(10)))
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(StoreError::backend)?;
        let listener = Arc::new(listen::Listener::new(listen_config, pool.clone()));
        let vault = Vault::new(key);
        // The first connection's failure is the answer, in PostgreSQL's words (which never
        // repeat the password).
        let mut client = pool.get().await.map_err(|err| {
            let reason = match &err {
                deadpool_postgres::PoolError::Backend(err) => with_causes(err),
                other => with_causes(other),
            };
            StoreError::Unavailable(format!("cannot connect: {reason}"))
        })?;
        schema::migrate(&mut client).await?;
        secrets::prepare(&mut client, &vault).await?;
        drop(client);
        // Started once the schema has its counting function.
        let counter = Arc::new(derived::Counter::start(pool.clone()));
        let creates = Arc::new(creates::Creates::start(pool.clone()));
        Ok(Self {
            pool,
            vault,
            listener,
            counter,
            creates,
        })
    }

    /// Seals every secret again with `new` (and makes the check value `new`'s), in one
    /// transaction; returns how many were sealed again. Every server and worker must then
    /// connect with `new`: stop them first, as one still on the old key fails to read
    /// the secrets.
    pub async fn rotate_secret_key(&self, new: &SecretKey) -> StoreResult<usize> {
        let mut client = self.client().await?;
        let count = secrets::rotate(&mut client, &self.vault, &Vault::new(new)).await?;
        Ok(count)
    }

    /// How the kept counts (per status, per facet's value) differ from a recount of the
    /// leads they count: empty when they match. For tests and diagnostics.
    pub async fn check_derived(&self) -> StoreResult<Vec<String>> {
        let client = self.client().await?;
        Ok(derived::check(&client).await?)
    }

    /// How many leads the kept counts do not count yet: none soon after the last create.
    /// For tests and diagnostics.
    pub async fn uncounted(&self) -> StoreResult<u64> {
        let client = self.client().await?;
        Ok(derived::uncounted(&client).await?)
    }

    /// Closes the pool: connections in use close when they are returned, and later calls
    /// fail with [`StoreError::Unavailable`].
    pub fn close(&self) {
        self.pool.close();
        self.listener.stop();
    }

    /// A connection from the pool.
    pub(crate) async fn client(&self) -> Result<deadpool_postgres::Object, Error> {
        self.pool.get().await.map_err(Error::from)
    }
}

/// An error and its causes, `outer: inner: …`: PostgreSQL's errors say what failed only in
/// their causes ("db error: FATAL: database \"x\" does not exist").
pub(crate) fn with_causes(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(inner) = cause {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        cause = inner.source();
    }
    text
}

/// Runs `$body` in a transaction on a pooled connection (`$tx` names the transaction in
/// it), committing it, and runs it again from the start when PostgreSQL aborted it for a
/// serialisation failure or a deadlock (a few times, then the error stands).
///
/// A failed body's transaction is rolled back before the call returns. Dropped, it would
/// only be sent its rollback, and keep its row locks a moment longer: a claim on another
/// connection right after (`FOR UPDATE SKIP LOCKED`) would pass over a row it may take.
macro_rules! transaction {
    ($store:expr, |$tx:ident| $body:expr) => {{
        let mut tries = 0_u32;
        loop {
            tries += 1;
            let result: Result<_, $crate::Error> = async {
                let mut client = $store.client().await?;
                let $tx = client.transaction().await?;
                let done: Result<_, $crate::Error> = async { Ok($body) }.await;
                match done {
                    Ok(value) => {
                        $tx.commit().await?;
                        Ok(value)
                    }
                    Err(err) => {
                        // The body's error stands: a rollback fails only on a broken
                        // connection, which the pool does not hand out again.
                        let _ = $tx.rollback().await;
                        Err(err)
                    }
                }
            }
            .await;
            match result {
                Err(err) if err.is_retryable() && tries < 5 => continue,
                other => break other.map_err(leadtrack_core::StoreError::from),
            }
        }
    }};
}
pub(crate) use transaction;
