//! Status updates and the conversion job queue.
//!
//! Many servers and workers share one database, so every rule is kept with row locks:
//!
//! - A status update locks the lead's row first (`FOR UPDATE`), so concurrent ratings of
//!   one lead run one after the other and the second sees the first's job (the 409 rule).
//!   The partial unique index `jobs_unfinished_per_lead` keeps the rule too: an insert that
//!   still meets it answers the same conflict.
//! - A worker claims a due job with `SELECT … FOR UPDATE SKIP LOCKED`, so concurrent
//!   claims never pick the same job and never wait for each other, and leases it.
//! - Every operation on a claimed job locks the job's row and checks the lease under that
//!   lock, so a job whose lease lapsed and was claimed again is never acted on by two
//!   workers.
use crate::Error;
use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::types::*;
use leadtrack_core::vault::Vault;

use chrono::Duration;
use leadtrack_core::account::Actor;
use leadtrack_core::activity::{Activity, EventRow};
use leadtrack_core::alert::AlertKind;
use leadtrack_core::job::{
    Attempt, ClaimedJob, Delivery, FormRating, JobRecord, QueueDepths, RetryTarget, StatusChange,
    TROUBLES_LISTED, Trouble, UndoTarget,
};
use leadtrack_core::lead::StoredLead;
use leadtrack_core::request::StatusUpdate;
use leadtrack_core::store::rating::{self, QueuedRating, Reopening};
use leadtrack_core::store::{Conflict, Entity, StoreError};
use leadtrack_core::time::{from_millis, to_millis};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::lease::{depth, due, new_lease};
use crate::rows::{self, ATTEMPT_COLUMNS, JOB_COLUMNS, LEAD_COLUMNS, all, one, run};
use crate::{activity, admin, alerts, drafts, leads, lookup, webhooks};

/// The error of a job (`id`) whose lease the caller no longer holds.
fn lease_lost(id: JobId) -> Error {
    Error::Store(StoreError::Conflict(Conflict::LeaseLost(id)))
}

/// The 409 of updateLeadStatus: the lead has an unfinished job.
fn job_pending(lead: LeadId) -> Error {
    Error::Store(StoreError::Conflict(Conflict::JobPending { lead_id: lead }))
}

/// Locks the row of the project's lead `id` (`FOR UPDATE`) until the transaction ends, and
/// reads it as it is once locked.
async fn lock_lead(
    c: &impl GenericClient,
    project: ProjectId,
    id: LeadId,
) -> Result<StoredLead, Error> {
    let sql =
        format!("SELECT {LEAD_COLUMNS} FROM leads WHERE project_id = $1 AND id = $2 FOR UPDATE");
    match one(c, &sql, &[&project.0, &id.0]).await? {
        Some(row) => rows::lead(&row),
        None => Err(admin::not_found(Entity::Lead)),
    }
}

/// Applies updateLeadStatus (through `form`, if given) in the caller's transaction
/// ([`LeadStore::update_status_from`](leadtrack_core::LeadStore::update_status_from)),
/// recording `by` as who rated the job and the change in the lead's history. The rules are
/// core's ([`leadtrack_core::store::rating`]).
///
/// The lead's row is locked first, so that concurrent updates of one lead serialise: the
/// one that waited sees the job the other queued, and answers [`Conflict::JobPending`].
pub(crate) async fn update_status(
    c: &impl GenericClient,
    project: ProjectId,
    (update, form): (&StatusUpdate, Option<FormRating>),
    by: &Actor,
    now: DateTime<Utc>,
) -> Result<StatusChange, Error> {
    let found = lookup::find(c, project, &update.identifier).await?;
    // As it is once locked: a concurrent merge may have changed it meanwhile.
    let mut lead = lock_lead(c, project, found.id).await?;
    drafts::discard(c, project, lead.id).await?;
    let label = match update.conversion_id {
        ConversionId::Label(id) => Some(admin::label(c, project, id).await?),
        _ => None,
    };
    if lead.status == LeadStatus::Spam {
        leads::release_spam(c, project, &lead, by, now).await?;
        (lead.status, lead.spam_reason) = (LeadStatus::Open, None);
    }
    match update.conversion_id {
        ConversionId::Open => return reopen(c, project, lead, update, by, now).await,
        ConversionId::Label(_) | ConversionId::Lost => {}
    }
    let pending = one(
        c,
        "SELECT 1 FROM jobs WHERE project_id = $1 AND lead_id = $2 AND finished_at IS NULL",
        &[&project.0, &lead.id.0],
    )
    .await?;
    if let Some(form) = form {
        let saved = one(
            c,
            "SELECT 1 FROM jobs WHERE project_id = $1 AND lead_id = $2 AND form_token = $3",
            &[&project.0, &lead.id.0, &form.token],
        )
        .await?;
        if saved.is_some() {
            let conflict = Conflict::AlreadySaved { lead_id: lead.id };
            return Err(Error::Store(StoreError::Conflict(conflict)));
        }
    }
    if pending.is_some() {
        return Err(job_pending(lead.id));
    }
    let project_row = admin::project(c, project).await?;
    let connected = admin::connected(c, project).await?;
    let earlier = if QueuedRating::needs_history(&lead) {
        jobs_of(c, project, Jobs::Person(rating::person(&lead))).await?
    } else {
        Vec::new()
    };
    let labels = if QueuedRating::needs_labels(update, &earlier) {
        admin::labels(c, project).await?
    } else {
        Vec::new()
    };
    let rated = (label, earlier.as_slice(), labels.as_slice());
    let asked = (update, form);
    let rating = QueuedRating::plan(&lead, asked, rated, &project_row, &connected, now);
    let job_id = queue(c, project, &lead, &rating, by, now).await?;
    for done in rating.activities(job_id) {
        let event = EventRow::of((project, lead.id), now, Some(by), &done)?;
        activity::record(c, &event).await?;
    }
    Ok(rating.outcome(lead, job_id))
}

/// Resets `lead` to open ([`Reopening`]).
async fn reopen(
    c: &impl GenericClient,
    project: ProjectId,
    lead: StoredLead,
    update: &StatusUpdate,
    by: &Actor,
    now: DateTime<Utc>,
) -> Result<StatusChange, Error> {
    let reopening = Reopening::of(update);
    let now_ms = to_millis(&now);
    run(
        c,
        "UPDATE leads SET status = 'open', price = coalesce($3, price),
            note = CASE WHEN $4 THEN $5 ELSE note END, updated_at = $6
         WHERE project_id = $1 AND id = $2",
        &[
            &project.0,
            &lead.id.0,
            &reopening.price,
            &reopening.note.given,
            &reopening.note.note,
            &now_ms,
        ],
    )
    .await?;
    // A claim holding the job's row makes this wait, then find the job started.
    run(
        c,
        "UPDATE jobs SET state = 'cancelled', finished_at = $3
         WHERE project_id = $1 AND lead_id = $2 AND state = 'queued'
           AND started_at IS NULL AND finished_at IS NULL",
        &[&project.0, &lead.id.0, &now_ms],
    )
    .await?;
    let event = EventRow::of((project, lead.id), now, Some(by), &reopening.activity())?;
    activity::record(c, &event).await?;
    Ok(Reopening::outcome(lead))
}

/// Marks `lead` pending with the rating, and inserts its job and deliveries; the job's id.
async fn queue(
    c: &impl GenericClient,
    project: ProjectId,
    lead: &StoredLead,
    rating: &QueuedRating,
    by: &Actor,
    now: DateTime<Utc>,
) -> Result<JobId, Error> {
    let job = &rating.job;
    let now_ms = to_millis(&now);
    let conversion_id = job.conversion_id.to_string();
    run(
        c,
        "UPDATE leads SET status = 'pending', price = coalesce($3, price),
            note = CASE WHEN $4 THEN $5 ELSE note END, conversion_id = $6, updated_at = $7
         WHERE project_id = $1 AND id = $2",
        &[
            &project.0,
            &lead.id.0,
            &rating.price_given,
            &rating.note.given,
            &rating.note.note,
            &conversion_id,
            &now_ms,
        ],
    )
    .await?;
    let inserted = one(
        c,
        "INSERT INTO jobs (project_id, event_id, lead_id, conversion_id, final_status, price,
            state, created_at, due_at, rated_by, conversion_event_id, converted_at,
            form_token, prior, retracts)
         VALUES ($1, $2, $3, $4, $5, $6, 'queued', $7, $8, $9, $10, $11, $12, $13, $14)
         RETURNING id",
        &[
            &project.0,
            &job.event_id,
            &lead.id.0,
            &conversion_id,
            &job.final_status.as_ref(),
            &job.price,
            &now_ms,
            &to_millis(&rating.due_at(now)),
            &rows::actor_json(Some(by))?,
            &job.conversion_event_id,
            &to_millis(&job.converted_at),
            &rating.form.map(|form| form.token),
            &rating.prior_json()?,
            &rating.retracts_json()?,
        ],
    )
    .await;
    // The lock on the lead makes this rare, but the unique index on unfinished jobs has
    // the last word.
    let job_id = match inserted {
        Err(err) if err.is_unique_violation() => return Err(job_pending(lead.id)),
        Ok(Some(row)) => JobId(row.try_get(0)?),
        Ok(None) => return Err(admin::not_found(Entity::Job)),
        Err(err) => return Err(err),
    };
    for (integration, action, state, detail) in rating.deliveries() {
        run(
            c,
            "INSERT INTO deliveries (project_id, job_id, integration, action, state, detail)
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                &project.0,
                &job_id.0,
                &integration.as_ref(),
                &action.as_ref(),
                &state.as_ref(),
                &detail,
            ],
        )
        .await?;
    }
    Ok(job_id)
}

/// [`leadtrack_core::LeadStore::lead_troubles`].
pub(crate) async fn lead_troubles(
    c: &impl GenericClient,
    project: ProjectId,
    leads: &[LeadId],
) -> Result<Vec<Trouble>, Error> {
    let ids: Vec<i64> = leads.iter().map(|lead| lead.0).collect();
    let jobs = all(
        c,
        "SELECT last.id FROM unnest($2::bigint[]) WITH ORDINALITY AS l (lead_id, n)
         CROSS JOIN LATERAL (SELECT max(id) AS id FROM jobs
                             WHERE project_id = $1 AND lead_id = l.lead_id) AS last
         WHERE last.id IS NOT NULL ORDER BY l.n",
        &[&project.0, &ids],
    )
    .await?;
    troubles_of(c, project, &jobs).await
}

/// [`leadtrack_core::LeadStore::troubles`]: read through the partial index of troubled
/// deliveries, whose condition this repeats to be used.
pub(crate) async fn troubles(
    c: &impl GenericClient,
    project: ProjectId,
) -> Result<Vec<Trouble>, Error> {
    let jobs = all(
        c,
        "SELECT DISTINCT d.job_id FROM deliveries d
         JOIN jobs j ON j.project_id = d.project_id AND j.id = d.job_id
         WHERE (d.state = 'failed' OR (d.state = 'pending' AND d.attempts > 0))
           AND d.project_id = $1
           AND j.id = (SELECT max(id) FROM jobs WHERE project_id = $1 AND lead_id = j.lead_id)
         ORDER BY d.job_id DESC LIMIT $2",
        &[&project.0, &i64::from(TROUBLES_LISTED)],
    )
    .await?;
    troubles_of(c, project, &jobs).await
}

/// [`leadtrack_core::LeadStore::troubled_leads`], through the same index as [`troubles`].
pub(crate) async fn troubled_leads(
    c: &impl GenericClient,
    project: ProjectId,
) -> Result<u64, Error> {
    let row = one(
        c,
        "SELECT count(*) FROM (SELECT DISTINCT d.job_id FROM deliveries d
         JOIN jobs j ON j.project_id = d.project_id AND j.id = d.job_id
         WHERE (d.state = 'failed' OR (d.state = 'pending' AND d.attempts > 0))
           AND d.project_id = $1
           AND j.id = (SELECT max(id) FROM jobs WHERE project_id = $1 AND lead_id = j.lead_id)
         LIMIT $2) AS troubled",
        &[&project.0, &i64::from(TROUBLES_LISTED)],
    )
    .await?;
    let count: i64 = row.map_or(Ok(0), |row| row.try_get(0))?;
    Ok(count.unsigned_abs())
}

/// The troubled deliveries of the jobs whose ids are `jobs`' first columns, with their jobs.
async fn troubles_of(
    c: &impl GenericClient,
    project: ProjectId,
    jobs: &[Row],
) -> Result<Vec<Trouble>, Error> {
    let mut troubles = Vec::new();
    for row in jobs {
        let id = JobId(row.try_get(0)?);
        let troubled: Vec<Delivery> = deliveries(c, project, id)
            .await?
            .into_iter()
            .filter(Delivery::is_troubled)
            .collect();
        if troubled.is_empty() {
            continue;
        }
        let sql = format!("SELECT {JOB_COLUMNS} FROM jobs WHERE project_id = $1 AND id = $2");
        // A job deleted with its lead since its id was read is no trouble any more.
        let Some(job) = one(c, &sql, &[&project.0, &id.0]).await? else {
            continue;
        };
        let job = rows::job(&job)?;
        troubles.extend(troubled.into_iter().map(|delivery| Trouble {
            job: job.clone(),
            delivery,
        }));
    }
    Ok(troubles)
}

/// Whose jobs [`jobs_of`] reads.
enum Jobs {
    /// One lead's.
    Lead(LeadId),
    /// Those of a person's leads ([`rating::person`]): the lead and its duplicates.
    Person(LeadId),
}

/// A lead's jobs, newest first, each with its deliveries (in integration order) and their
/// attempts (oldest first); none for a lead that is not the project's.
pub(crate) async fn lead_jobs(
    c: &impl GenericClient,
    project: ProjectId,
    lead: LeadId,
) -> Result<Vec<JobRecord>, Error> {
    jobs_of(c, project, Jobs::Lead(lead)).await
}

/// The jobs of `whose`, as [`lead_jobs`] gives one lead's.
async fn jobs_of(
    c: &impl GenericClient,
    project: ProjectId,
    whose: Jobs,
) -> Result<Vec<JobRecord>, Error> {
    let (leads, lead) = match whose {
        Jobs::Lead(lead) => ("lead_id = $2", lead),
        Jobs::Person(lead) => (
            "lead_id IN (SELECT id FROM leads WHERE project_id = $1
                AND (id = $2 OR duplicate_of = $2))",
            lead,
        ),
    };
    let sql = format!(
        "SELECT {JOB_COLUMNS} FROM jobs WHERE project_id = $1 AND {leads}
         ORDER BY id DESC"
    );
    let jobs = all(c, &sql, &[&project.0, &lead.0])
        .await?
        .iter()
        .map(rows::job)
        .collect::<Result<Vec<_>, _>>()?;
    if jobs.is_empty() {
        return Ok(Vec::new());
    }
    // Every attempt of the lead's jobs at once, oldest first.
    let sql = format!(
        "SELECT a.job_id, {ATTEMPT_COLUMNS} FROM attempts a
         JOIN jobs j ON j.project_id = a.project_id AND j.id = a.job_id
         WHERE j.project_id = $1 AND j.{leads}
         ORDER BY a.id"
    );
    let mut attempts: Vec<(i64, Attempt)> = Vec::new();
    for row in all(c, &sql, &[&project.0, &lead.0]).await? {
        attempts.push((row.try_get(0)?, rows::attempt(&row, 1)?));
    }
    let mut records = Vec::with_capacity(jobs.len());
    for job in jobs {
        let deliveries = deliveries(c, job.project_id, job.id)
            .await?
            .into_iter()
            .map(|delivery| {
                let of_delivery: Vec<Attempt> = attempts
                    .iter()
                    .filter(|(of_job, a)| {
                        *of_job == job.id.0 && a.integration == delivery.integration
                    })
                    .map(|(_, a)| a.clone())
                    .collect();
                (delivery, of_delivery)
            })
            .collect();
        records.push(JobRecord { job, deliveries });
    }
    Ok(records)
}

/// The deliveries of a job, in integration order.
async fn deliveries(
    c: &impl GenericClient,
    project: ProjectId,
    job: JobId,
) -> Result<Vec<Delivery>, Error> {
    let rows = all(
        c,
        "SELECT integration, state, attempts, next_attempt_at, detail, action
         FROM deliveries WHERE project_id = $1 AND job_id = $2",
        &[&project.0, &job.0],
    )
    .await?;
    let mut deliveries = rows.iter().map(delivery).collect::<Result<Vec<_>, _>>()?;
    deliveries.sort_by_key(|d| d.integration);
    Ok(deliveries)
}

/// A delivery from a row of `integration, state, attempts, next_attempt_at, detail,
/// action`.
fn delivery(row: &Row) -> Result<Delivery, Error> {
    Ok(Delivery {
        integration: rows::parse("deliveries.integration", row.try_get(0)?)?,
        state: rows::parse("deliveries.state", row.try_get(1)?)?,
        attempts: count("deliveries.attempts", row.try_get(2)?)?,
        next_attempt_at: row.try_get::<_, Option<i64>>(3)?.map(from_millis),
        detail: row.try_get(4)?,
        action: rows::parse("deliveries.action", row.try_get(5)?)?,
    })
}

/// An `integer` count column as a count.
fn count(column: &'static str, value: i32) -> Result<u32, Error> {
    u32::try_from(value).map_err(|_| Error::Corrupt {
        column,
        value: value.to_string(),
    })
}

/// Leases the job due soonest: a queued job due by `now`, or a running one whose lease
/// has lapsed (its worker died), with everything the worker needs to deliver it, read in
/// the same transaction. Concurrent claims take different jobs ([`due`]).
pub(crate) async fn claim(
    c: &impl GenericClient,
    vault: &Vault,
    now: DateTime<Utc>,
    lease_for: Duration,
) -> Result<Option<ClaimedJob>, Error> {
    let now_ms = to_millis(&now);
    let Some((project, id)) = due(c, ("jobs", "TRUE"), now_ms).await? else {
        return Ok(None);
    };
    let lease = new_lease(now, lease_for)?;
    let sql = format!(
        "UPDATE jobs SET state = 'running', lease_token = $3, lease_expires_at = $4,
            started_at = coalesce(started_at, $5)
         WHERE project_id = $1 AND id = $2
         RETURNING {JOB_COLUMNS}"
    );
    let params: [&(dyn ToSql + Sync); 5] = [
        &project,
        &id,
        &lease.token,
        &to_millis(&lease.expires_at),
        &now_ms,
    ];
    let job = match one(c, &sql, &params).await? {
        Some(row) => rows::job(&row)?,
        None => return Err(admin::not_found(Entity::Job)),
    };
    let lead = lookup::find(c, job.project_id, &LeadIdentifier::LeadId(job.lead_id)).await?;
    let deliveries = deliveries(c, job.project_id, job.id).await?;
    let project = admin::project(c, job.project_id).await?;
    let label = match job.conversion_id {
        // Labels are never deleted; should one vanish, the job still goes out, as `lost` would.
        ConversionId::Label(id) => match admin::label(c, job.project_id, id).await {
            Ok(label) => Some(label),
            Err(Error::Store(StoreError::NotFound(_))) => None,
            Err(err) => return Err(err),
        },
        ConversionId::Open | ConversionId::Lost => None,
    };
    let integrations = admin::integrations(c, vault, job.project_id).await?;
    let claimed = ClaimedJob {
        job,
        lease,
        lead,
        deliveries,
        project,
        label,
        integrations,
    };
    if let Some((event, about)) = rating::emitted(&claimed, now) {
        let (project, lead, event_id) = (claimed.project.id, claimed.lead.id, claimed.job.event_id);
        webhooks::enqueue(c, project, lead, event, event_id, Some(about), now).await?;
    }
    Ok(Some(claimed))
}

/// Queues again what the newest job of each lead `target` names failed to deliver
/// ([`rating::retry_of`]); a lead with an unfinished job is left as it is. Each lead is
/// locked first, as a rating locks it.
pub(crate) async fn retry_failed(
    c: &impl GenericClient,
    project: ProjectId,
    target: RetryTarget,
    by: &Actor,
    now: DateTime<Utc>,
) -> Result<Vec<JobId>, Error> {
    let (ids, kind): (Vec<i64>, _) = match target {
        RetryTarget::Lead(lead) => (vec![lead.0], None),
        RetryTarget::Integration { kind, since } => {
            let rows = all(
                c,
                "SELECT DISTINCT j.lead_id FROM jobs j
                 JOIN deliveries d ON d.project_id = j.project_id AND d.job_id = j.id
                 WHERE j.project_id = $1 AND d.integration = $2 AND d.state = 'failed'
                    AND j.created_at >= $3
                 ORDER BY j.lead_id",
                &[&project.0, &kind.as_ref(), &to_millis(&since)],
            )
            .await?;
            let ids = rows
                .iter()
                .map(|row| row.try_get(0))
                .collect::<Result<_, _>>()?;
            (ids, Some(kind))
        }
    };
    let mut queued = Vec::new();
    for id in ids {
        let lead = lock_lead(c, project, LeadId(id)).await?;
        let unfinished = one(
            c,
            "SELECT 1 FROM jobs WHERE project_id = $1 AND lead_id = $2 AND finished_at IS NULL",
            &[&project.0, &lead.id.0],
        )
        .await?;
        let records = lead_jobs(c, project, lead.id).await?;
        let retry = records
            .first()
            .and_then(|newest| rating::retry_of(newest, kind));
        let (None, Some(retry)) = (unfinished, retry) else {
            continue;
        };
        let job_id = queue(c, project, &lead, &retry, by, now).await?;
        let retried = Activity::Retried { job_id };
        activity::record(
            c,
            &EventRow::of((project, lead.id), now, Some(by), &retried)?,
        )
        .await?;
        queued.push(job_id);
    }
    Ok(queued)
}

/// Undoes the ratings `target` names whose jobs no worker has taken: cancels each job and
/// gives its lead back the rating it had before ([`rating::restored`]). The jobs are
/// locked first, so a claim either took a job before (and it is not undone) or skips it.
pub(crate) async fn undo(
    c: &impl GenericClient,
    project: ProjectId,
    target: UndoTarget,
    by: &Actor,
    now: DateTime<Utc>,
) -> Result<Vec<LeadId>, Error> {
    let sql = |filter: &str| {
        format!(
            "SELECT id, lead_id, prior FROM jobs
             WHERE project_id = $1 AND {filter} AND state = 'queued' AND started_at IS NULL
             FOR UPDATE"
        )
    };
    let held = match target {
        UndoTarget::Lead(lead) => all(c, &sql("lead_id = $2"), &[&project.0, &lead.0]).await?,
        UndoTarget::Form(token) => all(c, &sql("form_token = $2"), &[&project.0, &token]).await?,
    };
    let mut restored = Vec::with_capacity(held.len());
    for row in held {
        let (job, lead): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
        let lead = lock_lead(c, project, LeadId(lead)).await?;
        let prior = row.try_get::<_, Option<&str>>(2)?;
        let prior = prior.map(serde_json::from_str).transpose()?;
        let back = rating::restored(prior, &lead);
        run(
            c,
            "UPDATE jobs SET state = 'cancelled', finished_at = $3
             WHERE project_id = $1 AND id = $2",
            &[&project.0, &job, &to_millis(&now)],
        )
        .await?;
        run(
            c,
            "UPDATE leads SET status = $3, conversion_id = $4, price = $5, note = $6,
                updated_at = $7
             WHERE project_id = $1 AND id = $2",
            &[
                &project.0,
                &lead.id.0,
                &back.status.as_ref(),
                &back.conversion_id.map(|id| id.to_string()),
                &back.price,
                &back.note,
                &to_millis(&now),
            ],
        )
        .await?;
        let undone = Activity::Undone { job_id: JobId(job) };
        activity::record(
            c,
            &EventRow::of((project, lead.id), now, Some(by), &undone)?,
        )
        .await?;
        restored.push(lead.id);
    }
    Ok(restored)
}

/// How the job, webhook event and lead fetch queues stand at `now`.
pub(crate) async fn queue_depth(
    c: &impl GenericClient,
    now: DateTime<Utc>,
) -> Result<QueueDepths, Error> {
    let now_ms = to_millis(&now);
    Ok(QueueDepths {
        jobs: depth(c, "jobs", now_ms).await?,
        webhook_events: depth(c, "webhook_events", now_ms).await?,
        lead_fetches: crate::fetches::depth(c, now_ms).await?,
    })
}

/// The job a worker holds, as `(project, lead)`: locks the job's row (named by its id
/// alone) until the transaction ends, and fails unless `token` holds its lease, so that no
/// claim can take the job over while the caller acts on it.
async fn check_lease(
    c: &impl GenericClient,
    id: JobId,
    token: Uuid,
) -> Result<(ProjectId, LeadId), Error> {
    let held = one(
        c,
        "SELECT project_id, lead_id, state, lease_token FROM jobs WHERE id = $1 FOR UPDATE",
        &[&id.0],
    )
    .await?;
    let Some(row) = held else {
        return Err(admin::not_found(Entity::Job));
    };
    let state: &str = row.try_get(2)?;
    let lease: Option<Uuid> = row.try_get(3)?;
    if state == JobState::Running.as_ref() && lease == Some(token) {
        Ok((ProjectId(row.try_get(0)?), LeadId(row.try_get(1)?)))
    } else {
        Err(lease_lost(id))
    }
}

/// Records an attempt on a claimed job, moves its delivery on, keeps the project's newest
/// attempt per integration (`last_attempts`), and adds a `delivery` event to the lead's
/// history. Errors: [`Conflict::LeaseLost`]; [`StoreError::Invalid`] for an integration
/// the job does not deliver to.
pub(crate) async fn record_attempt(
    c: &impl GenericClient,
    job: JobId,
    lease: Uuid,
    attempt: &Attempt,
) -> Result<(), Error> {
    let (project, lead) = check_lease(c, job, lease).await?;
    let integration = attempt.integration.as_ref();
    let retry_at = attempt.retry_at.as_ref().map(to_millis);
    let updated = run(
        c,
        "UPDATE deliveries SET state = $4, attempts = attempts + 1, next_attempt_at = $5,
            detail = $6
         WHERE project_id = $1 AND job_id = $2 AND integration = $3",
        &[
            &project.0,
            &job.0,
            &integration,
            &attempt.outcome.delivery_state().as_ref(),
            &retry_at,
            &attempt.error,
        ],
    )
    .await?;
    if updated == 0 {
        return Err(Error::Store(StoreError::Invalid(format!(
            "job {} has no delivery to {}",
            job.0, attempt.integration
        ))));
    }
    let at = to_millis(&attempt.at);
    let inserted = one(
        c,
        "INSERT INTO attempts (project_id, job_id, integration, at, outcome, http_status,
            error, retry_at, batch_id, batch_size)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         RETURNING id",
        &[
            &project.0,
            &job.0,
            &integration,
            &at,
            &attempt.outcome.as_ref(),
            &attempt.http_status.map(i32::from),
            &attempt.error,
            &retry_at,
            &attempt.batch.map(|batch| batch.id),
            &attempt
                .batch
                .map(|batch| i32::try_from(batch.size).unwrap_or(i32::MAX)),
        ],
    )
    .await?;
    let attempt_id: i64 = match inserted {
        Some(row) => row.try_get(0)?,
        None => return Err(admin::not_found(Entity::Job)),
    };
    // The newest attempt per project and integration: the latest `at`, ties going to the
    // attempt recorded last. The row lock of the upsert orders concurrent attempts.
    run(
        c,
        "INSERT INTO last_attempts (project_id, integration, attempt_id, at)
         VALUES ($1, $2, $3, $4)
         ON CONFLICT (project_id, integration) DO UPDATE
             SET attempt_id = excluded.attempt_id, at = excluded.at
             WHERE (excluded.at, excluded.attempt_id)
                 > (last_attempts.at, last_attempts.attempt_id)",
        &[&project.0, &integration, &attempt_id, &at],
    )
    .await?;
    let delivery = Activity::Delivery {
        job_id: job,
        integration: attempt.integration,
        outcome: attempt.outcome,
        http_status: attempt.http_status,
        error: attempt.error.clone(),
    };
    let event = EventRow::of((project, lead), attempt.at, None, &delivery)?;
    activity::record(c, &event).await?;
    Ok(())
}

/// Returns a claimed job to the queue, due at `due_at`, releasing the lease.
/// Errors: [`Conflict::LeaseLost`].
pub(crate) async fn reschedule(
    c: &impl GenericClient,
    job: JobId,
    lease: Uuid,
    due_at: DateTime<Utc>,
) -> Result<(), Error> {
    let (project, _) = check_lease(c, job, lease).await?;
    run(
        c,
        "UPDATE jobs SET state = 'queued', due_at = $3, lease_token = NULL,
            lease_expires_at = NULL
         WHERE project_id = $1 AND id = $2",
        &[&project.0, &job.0, &to_millis(&due_at)],
    )
    .await?;
    Ok(())
}

/// Ends a claimed job whose deliveries have all ended, and moves its lead to the job's
/// final status unless the lead was reset to `open` meanwhile; the lead's status.
/// Errors: [`Conflict::LeaseLost`]; [`StoreError::Invalid`] while a delivery is pending.
pub(crate) async fn finish(
    c: &impl GenericClient,
    job: JobId,
    lease: Uuid,
    now: DateTime<Utc>,
) -> Result<LeadStatus, Error> {
    let (project, lead) = check_lease(c, job, lease).await?;
    let ended = deliveries(c, project, job).await?;
    if ended.iter().any(|d| d.state == DeliveryState::Pending) {
        return Err(Error::Store(StoreError::Invalid(format!(
            "job {} still has deliveries pending",
            job.0
        ))));
    }
    if ended.iter().any(|d| d.state == DeliveryState::Failed) {
        alerts::enqueue(c, (project, lead), AlertKind::Failed, now).await?;
    }
    let now_ms = to_millis(&now);
    let finished = one(
        c,
        "UPDATE jobs SET state = 'done', finished_at = $3, lease_token = NULL,
            lease_expires_at = NULL
         WHERE project_id = $1 AND id = $2
         RETURNING final_status",
        &[&project.0, &job.0, &now_ms],
    )
    .await?;
    let final_status: String = match finished {
        Some(row) => row.try_get(0)?,
        None => return Err(admin::not_found(Entity::Job)),
    };
    // A lead reset to `open` while its job was delivered is no longer pending: it stays open.
    run(
        c,
        "UPDATE leads SET status = $3, updated_at = $4
         WHERE project_id = $1 AND id = $2 AND status = 'pending'",
        &[&project.0, &lead.0, &final_status, &now_ms],
    )
    .await?;
    let status = one(
        c,
        "SELECT status FROM leads WHERE project_id = $1 AND id = $2",
        &[&project.0, &lead.0],
    )
    .await?;
    match status {
        Some(row) => rows::parse("leads.status", row.try_get(0)?),
        None => Err(admin::not_found(Entity::Lead)),
    }
}
