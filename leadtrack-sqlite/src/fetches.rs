//! The queue of leads the sources announced, to fetch from their platforms
//! ([`leadtrack_core::source::NewLeadFetch`]).

use chrono::{DateTime, Duration, Utc};
use leadtrack_core::job::QueueDepth;
use leadtrack_core::source::{ClaimedLeadFetch, FetchOutcome, NewLeadFetch};
use leadtrack_core::store::{Conflict, StoreError};
use leadtrack_core::time::to_millis;
use leadtrack_core::types::ProjectId;
use rusqlite::{Connection, OptionalExtension};
use uuid::Uuid;

use crate::rows::{self, Error};

/// [`leadtrack_core::JobQueue::queue_lead_fetch`].
pub(crate) fn queue(
    conn: &Connection,
    project: ProjectId,
    fetch: &NewLeadFetch,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    let queued = conn
        .prepare_cached(
            "INSERT INTO lead_fetches (project_id, kind, external_id, announced, due_at)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (project_id, kind, external_id) DO NOTHING",
        )?
        .execute((
            project.0,
            fetch.kind.as_ref(),
            &fetch.external_id,
            fetch.announced.to_string(),
            to_millis(&now),
        ))?;
    Ok(queued == 1)
}

/// [`leadtrack_core::JobQueue::claim_lead_fetch`]: `due_at` is when a queued fetch is due,
/// and when a claimed one's lease ends.
pub(crate) fn claim(
    conn: &Connection,
    now: DateTime<Utc>,
    lease_for: Duration,
) -> Result<Option<ClaimedLeadFetch>, Error> {
    let due = conn
        .prepare_cached(
            "SELECT id, project_id, kind, external_id, announced, attempts FROM lead_fetches
             WHERE done_at IS NULL AND due_at <= ?1 ORDER BY due_at, id LIMIT 1",
        )?
        .query_row([to_millis(&now)], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, i64>(1)?,
                row.get::<_, String>(2)?,
                row.get::<_, String>(3)?,
                row.get::<_, String>(4)?,
                row.get::<_, u32>(5)?,
            ))
        })
        .optional()?;
    let Some((id, project, kind, external_id, announced, attempts)) = due else {
        return Ok(None);
    };
    let lease = Uuid::new_v4();
    conn.prepare_cached(
        "UPDATE lead_fetches SET lease_token = ?2, due_at = ?3, attempts = attempts + 1
         WHERE id = ?1",
    )?
    .execute((id, lease.to_string(), to_millis(&(now + lease_for))))?;
    Ok(Some(ClaimedLeadFetch {
        id,
        lease,
        project: ProjectId(project),
        fetch: NewLeadFetch {
            kind: rows::parse("lead_fetches.kind", kind)?,
            external_id,
            announced: serde_json::from_str(&announced)?,
        },
        attempts,
    }))
}

/// [`leadtrack_core::JobQueue::finish_lead_fetch`].
pub(crate) fn finish(
    conn: &Connection,
    id: i64,
    lease: Uuid,
    outcome: &FetchOutcome,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let ended = match outcome {
        FetchOutcome::Fetched => conn
            .prepare_cached(
                "UPDATE lead_fetches SET done_at = ?3, lease_token = NULL, last_error = NULL
                 WHERE id = ?1 AND lease_token = ?2 AND done_at IS NULL",
            )?
            .execute((id, lease.to_string(), to_millis(&now)))?,
        FetchOutcome::Retry { at, error } => conn
            .prepare_cached(
                "UPDATE lead_fetches SET due_at = ?3, lease_token = NULL, last_error = ?4
                 WHERE id = ?1 AND lease_token = ?2 AND done_at IS NULL",
            )?
            .execute((id, lease.to_string(), to_millis(at), error))?,
    };
    if ended == 0 {
        return Err(StoreError::Conflict(Conflict::FetchLeaseLost(id)).into());
    }
    Ok(())
}

/// How the queue of fetches stands at `now_ms`: a fetch is queued until claimed, running
/// while leased (a lapsed lease included, until it is claimed again), and gone once done.
pub(crate) fn depth(conn: &Connection, now_ms: i64) -> Result<QueueDepth, Error> {
    let (queued, running, first_due): (i64, i64, Option<i64>) = conn
        .prepare_cached(
            "SELECT count(*) FILTER (WHERE lease_token IS NULL),
                    count(*) FILTER (WHERE lease_token IS NOT NULL),
                    min(due_at) FILTER (WHERE lease_token IS NULL)
             FROM lead_fetches WHERE done_at IS NULL",
        )?
        .query_row([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
    Ok(QueueDepth::at(queued, running, first_due, now_ms))
}
