//! The data derived from the leads: the kept counts per status and per facet's value, which
//! a counter adds new leads to after their commit (migration 42), and their check against a
//! recount of the leads themselves ([`crate::PgStore::check_derived`]). The words' trigram
//! index is PostgreSQL's own, kept in the leads' transactions.

use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{GenericClient, Pool, PoolError};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_postgres::error::SqlState;

use crate::Error;

/// The most new leads one transaction of the counter counts.
const BATCH: i32 = 2_000;

/// How often the counter looks for leads to count unasked: those another server left, or a
/// crash.
const EVERY: Duration = Duration::from_secs(1);

/// How long the counter, once woken, lets new leads gather before it counts them: each
/// round upserts a count row per facet's value, whether it counts one lead or fifty.
const GATHER: Duration = Duration::from_millis(100);

/// This process's counter of new leads: a task that counts them [`GATHER`] after it is woken
/// by a create's commit, and every [`EVERY`]. Stopped when dropped.
pub(crate) struct Counter {
    /// Wakes the task; a wake while it counts is kept for its next round.
    wake: Arc<Notify>,
    /// The task.
    task: JoinHandle<()>,
}

impl Counter {
    /// Starts the counter on `pool`.
    pub(crate) fn start(pool: Pool) -> Self {
        let wake = Arc::new(Notify::new());
        let task = tokio::spawn(count_forever(pool, Arc::clone(&wake)));
        Self { wake, task }
    }

    /// Asks for the leads committed so far to be counted soon.
    pub(crate) fn wake(&self) {
        self.wake.notify_one();
    }
}

impl Drop for Counter {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Counts the new leads whenever woken or [`EVERY`] passes, until the pool is closed. A
/// failed round (a deadlock with a change of the same leads, a lost connection) is tried
/// again in the next one: its leads stay uncounted until then, and readers count them.
async fn count_forever(pool: Pool, wake: Arc<Notify>) {
    loop {
        let counted = match pool.get().await {
            Ok(client) => counted_and_known(&client).await,
            Err(err) => Err(err.into()),
        };
        if let Err(err) = counted {
            if pool.is_closed() {
                return;
            }
            // Giving way to a change, or waiting for a busy pool, is the counter's lot.
            let expected = err.is_retryable()
                || err.code() == Some(&SqlState::LOCK_NOT_AVAILABLE)
                || matches!(err, Error::Pool(PoolError::Timeout(_)));
            if !expected {
                let error = crate::with_causes(&err);
                tracing::warn!(%error, "counting new leads failed; trying again");
            }
        }
        tokio::select! {
            () = wake.notified() => tokio::time::sleep(GATHER).await,
            () = tokio::time::sleep(EVERY) => {}
        }
    }
}

/// Counts every uncounted lead ([`count_all`]), then brings the planner's statistics of the
/// leads up to date when they know of fewer leads than this round counted
/// ([`leads::analyze_if_unknown`]). A new database has none: the cached plans of the
/// creates' foreign-key checks then read every lead of the project, and creates slowed
/// down as leads arrived (filling 20,000 leads fell from 3,900 to 520 a second) until
/// autovacuum's first `ANALYZE`, a minute or more later.
///
/// [`leads::analyze_if_unknown`]: crate::leads::analyze_if_unknown
async fn counted_and_known(c: &impl GenericClient) -> Result<(), Error> {
    let counted = count_all(c).await?;
    crate::leads::analyze_if_unknown(c, counted).await
}

/// Counts every uncounted lead: a batch at a time, until a batch comes back short; how many
/// it counted.
pub(crate) async fn count_all(c: &impl GenericClient) -> Result<u64, Error> {
    let mut counted = 0;
    loop {
        let taken: i32 = c
            .query_one("SELECT leads_count_uncounted($1)", &[&BATCH])
            .await?
            .try_get(0)?;
        counted += u64::try_from(taken).unwrap_or_default();
        if taken < BATCH {
            return Ok(counted);
        }
    }
}

/// How many leads are not counted yet.
pub(crate) async fn uncounted(c: &impl GenericClient) -> Result<u64, Error> {
    let row = c
        .query_one("SELECT count(*) FROM lead_uncounted", &[])
        .await?;
    Ok(u64::try_from(row.try_get::<_, i64>(0)?).unwrap_or(0))
}

/// Whether lead `l` is counted (migration 42).
const COUNTED: &str = "lead_is_counted(l.project_id, l.id)";

/// How the kept counts differ from a recount of the leads they count (not the uncounted
/// ones): one line per table that differs, none when they match. A count is kept in slots
/// (migration 1); the slots' sum is compared.
pub(crate) async fn check(c: &impl GenericClient) -> Result<Vec<String>, Error> {
    let mut differences = Vec::new();
    for (table, kept, recounted) in [
        (
            "lead_status_counts",
            "SELECT project_id, status, sum(total) FROM lead_status_counts
             GROUP BY 1, 2 HAVING sum(total) <> 0",
            format!(
                "SELECT l.project_id, l.status, count(*)::numeric FROM leads l
                 WHERE {COUNTED} GROUP BY 1, 2"
            ),
        ),
        (
            "lead_facet_counts",
            "SELECT project_id, facet, value, status, sum(total) FROM lead_facet_counts
             GROUP BY 1, 2, 3, 4 HAVING sum(total) <> 0",
            format!(
                "SELECT l.project_id, f.facet, f.value, l.status, count(*)::numeric
                 FROM leads l CROSS JOIN LATERAL lead_facets(l) f
                 WHERE {COUNTED} GROUP BY 1, 2, 3, 4"
            ),
        ),
    ] {
        let sql = format!(
            "SELECT (SELECT count(*) FROM ({kept} EXCEPT {recounted}) AS a)
                  + (SELECT count(*) FROM ({recounted} EXCEPT {kept}) AS b)"
        );
        let differ: i64 = c.query_one(&sql, &[]).await?.try_get(0)?;
        if differ > 0 {
            differences.push(format!("{table} differs from a recount in {differ} rows"));
        }
    }
    Ok(differences)
}
