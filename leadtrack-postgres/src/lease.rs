//! The leased queues (`jobs`, `webhook_events`): the row due soonest, locked so that
//! concurrent claims take different rows, the lease its worker then holds, and how deep a
//! queue stands. A leaf: the job queue and the webhook queue use it.

use chrono::{DateTime, Duration, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::job::{Lease, QueueDepth};
use leadtrack_core::store::StoreError;
use leadtrack_core::time::truncate_to_millis;
use uuid::Uuid;

use crate::Error;
use crate::rows::one;

/// The row due soonest at `now_ms` of a leased queue (`jobs`, `webhook_events`: `state`,
/// `due_at`, `lease_expires_at`) among those `scope` (an SQL condition) selects, locked (`FOR UPDATE SKIP LOCKED`: a row another
/// transaction holds is passed over, never waited for), as `(project_id, id)`: a queued
/// row due by then, or a running one whose lease has lapsed (its worker died), whichever
/// has waited longer (a tie goes to the queued one).
///
/// Each half is read from the table's partial index on its state, first the lapsed leases
/// (rarely any), then the queued rows due no later than the lapsed one found. When both
/// are found and the queued one wins, the lapsed row stays locked until the transaction
/// ends, so a concurrent claim passes over it for that moment.
pub(crate) async fn due(
    c: &impl GenericClient,
    (table, scope): (&str, &str),
    now_ms: i64,
) -> Result<Option<(i64, i64)>, Error> {
    let lapsed = one(
        c,
        &format!(
            "SELECT project_id, id, lease_expires_at FROM {table}
             WHERE {scope} AND state = 'running' AND lease_expires_at <= $1
             ORDER BY lease_expires_at, id LIMIT 1
             FOR UPDATE SKIP LOCKED"
        ),
        &[&now_ms],
    )
    .await?;
    let lapsed = match lapsed {
        Some(row) => Some((row.try_get(0)?, row.try_get(1)?, row.try_get::<_, i64>(2)?)),
        None => None,
    };
    let until = lapsed.map_or(now_ms, |(_, _, expired)| expired);
    let queued = one(
        c,
        &format!(
            "SELECT project_id, id FROM {table}
             WHERE {scope} AND state = 'queued' AND due_at <= $1
             ORDER BY due_at, id LIMIT 1
             FOR UPDATE SKIP LOCKED"
        ),
        &[&until],
    )
    .await?;
    Ok(match queued {
        Some(row) => Some((row.try_get(0)?, row.try_get(1)?)),
        None => lapsed.map(|(project, id, _)| (project, id)),
    })
}

/// How a leased queue (`jobs`, `webhook_events`) stands at `now_ms`, in one statement (one
/// snapshot); each figure is read from the table's partial index on its state.
pub(crate) async fn depth(
    c: &impl GenericClient,
    table: &str,
    now_ms: i64,
) -> Result<QueueDepth, Error> {
    let sql = format!(
        "SELECT (SELECT count(*) FROM {table} WHERE state = 'queued'),
                (SELECT count(*) FROM {table} WHERE state = 'running'),
                (SELECT min(due_at) FROM {table} WHERE state = 'queued')"
    );
    let row = one(c, &sql, &[])
        .await?
        .ok_or_else(|| StoreError::Invalid(format!("no depth of {table}")))?;
    let queued: i64 = row.try_get(0)?;
    let running: i64 = row.try_get(1)?;
    let first_due: Option<i64> = row.try_get(2)?;
    Ok(QueueDepth::at(queued, running, first_due, now_ms))
}

/// The lease a claim at `now` holds for `lease_for`, with a new token.
pub(crate) fn new_lease(now: DateTime<Utc>, lease_for: Duration) -> Result<Lease, Error> {
    let expires_at = now
        .checked_add_signed(lease_for)
        .ok_or_else(|| StoreError::Invalid("the lease would end out of range".to_owned()))?;
    Ok(Lease {
        token: Uuid::new_v4(),
        expires_at: truncate_to_millis(expires_at),
    })
}
