//! The queue of leads the sources announced, to fetch from their platforms
//! ([`leadtrack_core::source::NewLeadFetch`]).

use chrono::{DateTime, Duration, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::job::QueueDepth;
use leadtrack_core::source::{ClaimedLeadFetch, FetchOutcome, NewLeadFetch};
use leadtrack_core::store::{Conflict, StoreError};
use leadtrack_core::time::to_millis;
use leadtrack_core::types::ProjectId;
use uuid::Uuid;

use crate::rows::{self, Error};

/// [`leadtrack_core::JobQueue::queue_lead_fetch`].
pub(crate) async fn queue(
    c: &impl GenericClient,
    project: ProjectId,
    fetch: &NewLeadFetch,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    let queued = c
        .execute(
            "INSERT INTO lead_fetches (project_id, kind, external_id, announced, due_at)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (project_id, kind, external_id) DO NOTHING",
            &[
                &project.0,
                &fetch.kind.as_ref(),
                &fetch.external_id,
                &fetch.announced.to_string(),
                &to_millis(&now),
            ],
        )
        .await?;
    Ok(queued == 1)
}

/// [`leadtrack_core::JobQueue::claim_lead_fetch`]: `due_at` is when a queued fetch is due,
/// and when a claimed one's lease ends; fetchers claiming together skip each other's.
pub(crate) async fn claim(
    c: &impl GenericClient,
    now: DateTime<Utc>,
    lease_for: Duration,
) -> Result<Option<ClaimedLeadFetch>, Error> {
    let lease = Uuid::new_v4();
    let row = c
        .query_opt(
            "UPDATE lead_fetches SET lease_token = $2, due_at = $3, attempts = attempts + 1
             WHERE id = (SELECT id FROM lead_fetches WHERE done_at IS NULL AND due_at <= $1
                         ORDER BY due_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
             RETURNING id, project_id, kind, external_id, announced, attempts - 1",
            &[&to_millis(&now), &lease, &to_millis(&(now + lease_for))],
        )
        .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    let attempts: i32 = row.try_get(5)?;
    let announced: String = row.try_get(4)?;
    Ok(Some(ClaimedLeadFetch {
        id: row.try_get(0)?,
        lease,
        project: ProjectId(row.try_get(1)?),
        fetch: NewLeadFetch {
            kind: rows::parse("lead_fetches.kind", row.try_get(2)?)?,
            external_id: row.try_get(3)?,
            announced: serde_json::from_str(&announced)?,
        },
        attempts: u32::try_from(attempts).unwrap_or(0),
    }))
}

/// [`leadtrack_core::JobQueue::finish_lead_fetch`].
pub(crate) async fn finish(
    c: &impl GenericClient,
    id: i64,
    lease: Uuid,
    outcome: &FetchOutcome,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let ended = match outcome {
        FetchOutcome::Fetched => {
            c.execute(
                "UPDATE lead_fetches SET done_at = $3, lease_token = NULL, last_error = NULL
                 WHERE id = $1 AND lease_token = $2 AND done_at IS NULL",
                &[&id, &lease, &to_millis(&now)],
            )
            .await?
        }
        FetchOutcome::Retry { at, error } => {
            c.execute(
                "UPDATE lead_fetches SET due_at = $3, lease_token = NULL, last_error = $4
                 WHERE id = $1 AND lease_token = $2 AND done_at IS NULL",
                &[&id, &lease, &to_millis(at), error],
            )
            .await?
        }
    };
    if ended == 0 {
        return Err(StoreError::Conflict(Conflict::FetchLeaseLost(id)).into());
    }
    Ok(())
}

/// How the queue of fetches stands at `now_ms`: a fetch is queued until claimed, running
/// while leased (a lapsed lease included, until it is claimed again), and gone once done.
pub(crate) async fn depth(c: &impl GenericClient, now_ms: i64) -> Result<QueueDepth, Error> {
    let row = c
        .query_one(
            "SELECT count(*) FILTER (WHERE lease_token IS NULL),
                    count(*) FILTER (WHERE lease_token IS NOT NULL),
                    min(due_at) FILTER (WHERE lease_token IS NULL)
             FROM lead_fetches WHERE done_at IS NULL",
            &[],
        )
        .await?;
    let (queued, running): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
    let first_due: Option<i64> = row.try_get(2)?;
    Ok(QueueDepth::at(queued, running, first_due, now_ms))
}
