//! Status updates and the conversion job queue.

use chrono::{DateTime, Duration, Utc};
use leadtrack_core::account::Actor;
use leadtrack_core::activity::{Activity, EventRow};
use leadtrack_core::alert::AlertKind;
use leadtrack_core::job::{
    Attempt, ClaimedJob, Delivery, FormRating, Job, JobRecord, Lease, RetryTarget, StatusChange,
    TROUBLES_LISTED, Trouble, UndoTarget,
};
use leadtrack_core::lead::StoredLead;
use leadtrack_core::request::StatusUpdate;
use leadtrack_core::store::rating::{self, QueuedRating, Reopening};
use leadtrack_core::store::{Conflict, Entity, StoreError};
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::{
    ConversionId, DeliveryState, JobId, JobState, LeadId, LeadIdentifier, LeadStatus, ProjectId,
};
use leadtrack_core::vault::Vault;
use rusqlite::{Connection, OptionalExtension};
use uuid::Uuid;

use crate::rows::{self, ATTEMPT_COLUMNS, Error, JOB_COLUMNS, LEAD_COLUMNS};
use crate::{activity, admin, alerts, drafts, leads, lookup, webhooks};

/// Applies updateLeadStatus (through `form`, if given) in the writer's transaction,
/// recording `by` as who rated the job and the change in the lead's history. The rules are
/// core's ([`leadtrack_core::store::rating`]).
pub(crate) fn update_status(
    conn: &Connection,
    project: ProjectId,
    (update, form): (&StatusUpdate, Option<FormRating>),
    by: &Actor,
    now: DateTime<Utc>,
) -> Result<StatusChange, Error> {
    let mut lead = lookup::find(conn, project, &update.identifier)?;
    drafts::discard(conn, project, lead.id)?;
    let label = match update.conversion_id {
        ConversionId::Label(id) => Some(admin::label(conn, project, id)?),
        _ => None,
    };
    if lead.status == LeadStatus::Spam {
        leads::release_spam(conn, project, &lead, by, now)?;
        (lead.status, lead.spam_reason) = (LeadStatus::Open, None);
    }
    match update.conversion_id {
        ConversionId::Open => return reopen(conn, project, lead, update, by, now),
        ConversionId::Label(_) | ConversionId::Lost => {}
    }
    let pending = conn
        .prepare_cached("SELECT 1 FROM jobs WHERE lead_id = ?1 AND finished_at IS NULL")?
        .query_row([lead.id.0], |_| Ok(()))
        .optional()?;
    if let Some(form) = form {
        let saved = conn
            .prepare_cached("SELECT 1 FROM jobs WHERE lead_id = ?1 AND form_token = ?2")?
            .query_row((lead.id.0, form.token.to_string()), |_| Ok(()))
            .optional()?;
        if saved.is_some() {
            let conflict = Conflict::AlreadySaved { lead_id: lead.id };
            return Err(Error::Store(StoreError::Conflict(conflict)));
        }
    }
    if pending.is_some() {
        return Err(Error::Store(StoreError::Conflict(Conflict::JobPending {
            lead_id: lead.id,
        })));
    }
    let project_row = admin::project(conn, project)?;
    let connected = admin::connected(conn, project)?;
    let earlier = if QueuedRating::needs_history(&lead) {
        jobs_of(conn, project, Jobs::Person(rating::person(&lead)))?
    } else {
        Vec::new()
    };
    let labels = if QueuedRating::needs_labels(update, &earlier) {
        admin::labels(conn, project)?
    } else {
        Vec::new()
    };
    let rated = (label, earlier.as_slice(), labels.as_slice());
    let asked = (update, form);
    let rating = QueuedRating::plan(&lead, asked, rated, &project_row, &connected, now);
    let job_id = queue(conn, project, &lead, &rating, by, now)?;
    for done in rating.activities(job_id) {
        let event = EventRow::of((project, lead.id), now, Some(by), &done)?;
        activity::record(conn, &event)?;
    }
    Ok(rating.outcome(lead, job_id))
}

/// Resets `lead` to open ([`Reopening`]).
fn reopen(
    conn: &Connection,
    project: ProjectId,
    lead: StoredLead,
    update: &StatusUpdate,
    by: &Actor,
    now: DateTime<Utc>,
) -> Result<StatusChange, Error> {
    let reopening = Reopening::of(update);
    conn.prepare_cached(
        "UPDATE leads SET status = 'open', price = coalesce(?2, price),
            note = CASE WHEN ?3 THEN ?4 ELSE note END, updated_at = ?5
         WHERE id = ?1",
    )?
    .execute((
        lead.id.0,
        reopening.price,
        reopening.note.given,
        &reopening.note.note,
        to_millis(&now),
    ))?;
    conn.prepare_cached(
        "UPDATE jobs SET state = 'cancelled', finished_at = ?2
         WHERE lead_id = ?1 AND state = 'queued' AND started_at IS NULL",
    )?
    .execute((lead.id.0, to_millis(&now)))?;
    let event = EventRow::of((project, lead.id), now, Some(by), &reopening.activity())?;
    activity::record(conn, &event)?;
    Ok(Reopening::outcome(lead))
}

/// Marks `lead` pending with the rating, and inserts its job and deliveries; the job's id.
fn queue(
    conn: &Connection,
    project: ProjectId,
    lead: &StoredLead,
    rating: &QueuedRating,
    by: &Actor,
    now: DateTime<Utc>,
) -> Result<JobId, Error> {
    let job = &rating.job;
    conn.prepare_cached(
        "UPDATE leads SET status = 'pending', price = coalesce(?2, price),
            note = CASE WHEN ?3 THEN ?4 ELSE note END, conversion_id = ?5, updated_at = ?6
         WHERE id = ?1",
    )?
    .execute((
        lead.id.0,
        rating.price_given,
        rating.note.given,
        &rating.note.note,
        job.conversion_id.to_string(),
        to_millis(&now),
    ))?;
    conn.prepare_cached(
        "INSERT INTO jobs (event_id, project_id, lead_id, conversion_id, final_status, price,
            state, created_at, due_at, rated_by, conversion_event_id, converted_at,
            form_token, prior, retracts)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'queued', ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )?
    .execute(rusqlite::params![
        job.event_id.to_string(),
        project.0,
        lead.id.0,
        job.conversion_id.to_string(),
        job.final_status.as_ref(),
        job.price,
        to_millis(&now),
        to_millis(&rating.due_at(now)),
        rows::actor_json(Some(by))?,
        job.conversion_event_id.to_string(),
        to_millis(&job.converted_at),
        rating.form.map(|form| form.token.to_string()),
        rating.prior_json()?,
        rating.retracts_json()?,
    ])?;
    let job_id = conn.last_insert_rowid();
    let mut insert = conn.prepare_cached(
        "INSERT INTO deliveries (job_id, integration, action, state, detail)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for (integration, action, state, detail) in rating.deliveries() {
        let kind = integration.as_ref();
        insert.execute((job_id, kind, action.as_ref(), state.as_ref(), detail))?;
    }
    Ok(JobId(job_id))
}

/// Leases the job due soonest: a queued job due by `now`, or a running one whose lease
/// has lapsed (its worker died).
pub(crate) fn claim(
    conn: &Connection,
    vault: &Vault,
    now: DateTime<Utc>,
    lease_for: Duration,
) -> Result<Option<ClaimedJob>, Error> {
    let now_ms = to_millis(&now);
    let Some(id) = rows::due(conn, ("jobs", "TRUE"), now_ms)? else {
        return Ok(None);
    };
    let lease = Lease {
        token: Uuid::new_v4(),
        expires_at: leadtrack_core::time::truncate_to_millis(now + lease_for),
    };
    conn.prepare_cached(
        "UPDATE jobs SET state = 'running', lease_token = ?2, lease_expires_at = ?3,
            started_at = coalesce(started_at, ?4)
         WHERE id = ?1",
    )?
    .execute((
        id,
        lease.token.to_string(),
        to_millis(&lease.expires_at),
        now_ms,
    ))?;
    let job = job(conn, JobId(id))?;
    let lead = conn
        .prepare_cached(&format!("SELECT {LEAD_COLUMNS} FROM leads WHERE id = ?1"))?
        .query_and_then([job.lead_id.0], rows::lead)?
        .next()
        .ok_or(StoreError::NotFound(Entity::Lead))??;
    let deliveries = deliveries(conn, job.id)?;
    let project = admin::project(conn, job.project_id)?;
    let label = match job.conversion_id {
        // Labels are never deleted; should one vanish, the job still goes out, as `lost` would.
        ConversionId::Label(id) => match admin::label(conn, job.project_id, id) {
            Ok(label) => Some(label),
            Err(Error::Store(StoreError::NotFound(_))) => None,
            Err(err) => return Err(err),
        },
        ConversionId::Open | ConversionId::Lost => None,
    };
    let integrations = admin::integrations(conn, vault, job.project_id)?;
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
        webhooks::enqueue(conn, project, lead, event, event_id, Some(about), now)?;
    }
    Ok(Some(claimed))
}

/// Queues again what the newest job of each lead `target` names failed to deliver
/// ([`rating::retry_of`]); a lead with an unfinished job is left as it is.
pub(crate) fn retry_failed(
    conn: &Connection,
    project: ProjectId,
    target: RetryTarget,
    by: &Actor,
    now: DateTime<Utc>,
) -> Result<Vec<JobId>, Error> {
    let (ids, kind): (Vec<i64>, _) = match target {
        RetryTarget::Lead(lead) => (vec![lead.0], None),
        RetryTarget::Integration { kind, since } => {
            let failed = conn
                .prepare_cached(
                    "SELECT DISTINCT j.lead_id FROM jobs j JOIN deliveries d ON d.job_id = j.id
                     WHERE j.project_id = ?1 AND d.integration = ?2 AND d.state = 'failed'
                        AND j.created_at >= ?3
                     ORDER BY j.lead_id",
                )?
                .query_map((project.0, kind.as_ref(), to_millis(&since)), |row| {
                    row.get(0)
                })?
                .collect::<Result<_, _>>()?;
            (failed, Some(kind))
        }
    };
    let mut queued = Vec::new();
    for id in ids {
        let lead = lookup::find(conn, project, &LeadIdentifier::LeadId(LeadId(id)))?;
        let unfinished = conn
            .prepare_cached("SELECT 1 FROM jobs WHERE lead_id = ?1 AND finished_at IS NULL")?
            .query_row([lead.id.0], |_| Ok(()))
            .optional()?;
        let records = lead_jobs(conn, project, lead.id)?;
        let retry = records
            .first()
            .and_then(|newest| rating::retry_of(newest, kind));
        let (None, Some(retry)) = (unfinished, retry) else {
            continue;
        };
        let job_id = queue(conn, project, &lead, &retry, by, now)?;
        let retried = Activity::Retried { job_id };
        activity::record(
            conn,
            &EventRow::of((project, lead.id), now, Some(by), &retried)?,
        )?;
        queued.push(job_id);
    }
    Ok(queued)
}

/// Undoes the ratings `target` names whose jobs no worker has taken: cancels each job and
/// gives its lead back the rating it had before ([`rating::restored`]).
pub(crate) fn undo(
    conn: &Connection,
    project: ProjectId,
    target: UndoTarget,
    by: &Actor,
    now: DateTime<Utc>,
) -> Result<Vec<LeadId>, Error> {
    const HELD: &str = "SELECT id, lead_id, prior FROM jobs
         WHERE project_id = ?1 AND state = 'queued' AND started_at IS NULL AND ";
    let row = |row: &rusqlite::Row<'_>| Ok((row.get(0)?, row.get(1)?, row.get(2)?));
    let held: Vec<(i64, i64, Option<String>)> = match target {
        UndoTarget::Lead(lead) => conn
            .prepare_cached(&format!("{HELD}lead_id = ?2"))?
            .query_map((project.0, lead.0), row)?
            .collect::<Result<_, _>>()?,
        UndoTarget::Form(token) => conn
            .prepare_cached(&format!("{HELD}form_token = ?2"))?
            .query_map((project.0, token.to_string()), row)?
            .collect::<Result<_, _>>()?,
    };
    let mut restored = Vec::with_capacity(held.len());
    for (job, lead, prior) in held {
        let lead = lookup::find(conn, project, &LeadIdentifier::LeadId(LeadId(lead)))?;
        let prior = prior.map(|json| serde_json::from_str(&json)).transpose()?;
        let back = rating::restored(prior, &lead);
        conn.prepare_cached("UPDATE jobs SET state = 'cancelled', finished_at = ?2 WHERE id = ?1")?
            .execute((job, to_millis(&now)))?;
        conn.prepare_cached(
            "UPDATE leads SET status = ?2, conversion_id = ?3, price = ?4, note = ?5,
                updated_at = ?6
             WHERE id = ?1",
        )?
        .execute((
            lead.id.0,
            back.status.as_ref(),
            back.conversion_id.map(|id| id.to_string()),
            back.price,
            &back.note,
            to_millis(&now),
        ))?;
        let undone = Activity::Undone { job_id: JobId(job) };
        activity::record(
            conn,
            &EventRow::of((project, lead.id), now, Some(by), &undone)?,
        )?;
        restored.push(lead.id);
    }
    Ok(restored)
}

/// [`leadtrack_core::LeadStore::lead_troubles`].
pub(crate) fn lead_troubles(
    conn: &Connection,
    project: ProjectId,
    leads: &[LeadId],
) -> Result<Vec<Trouble>, Error> {
    let mut last =
        conn.prepare_cached("SELECT max(id) FROM jobs WHERE lead_id = ?2 AND project_id = ?1")?;
    let mut jobs = Vec::new();
    for lead in leads {
        let id: Option<i64> = last.query_row((project.0, lead.0), |row| row.get(0))?;
        jobs.extend(id.map(JobId));
    }
    troubles_of(conn, jobs)
}

/// [`leadtrack_core::LeadStore::troubles`]: read through the partial index of troubled
/// deliveries, whose condition this repeats to be used.
pub(crate) fn troubles(conn: &Connection, project: ProjectId) -> Result<Vec<Trouble>, Error> {
    let jobs: Vec<JobId> = conn
        .prepare_cached(
            "SELECT DISTINCT d.job_id FROM deliveries d JOIN jobs j ON j.id = d.job_id
             WHERE (d.state = 'failed' OR (d.state = 'pending' AND d.attempts > 0))
               AND j.project_id = ?1
               AND j.id = (SELECT max(id) FROM jobs WHERE lead_id = j.lead_id)
             ORDER BY d.job_id DESC LIMIT ?2",
        )?
        .query_map((project.0, TROUBLES_LISTED), |row| row.get(0).map(JobId))?
        .collect::<Result<_, _>>()?;
    troubles_of(conn, jobs)
}

/// [`leadtrack_core::LeadStore::troubled_leads`], through the same index as [`troubles`].
pub(crate) fn troubled_leads(conn: &Connection, project: ProjectId) -> Result<u64, Error> {
    Ok(conn
        .prepare_cached(
            "SELECT count(*) FROM (SELECT DISTINCT d.job_id FROM deliveries d
             JOIN jobs j ON j.id = d.job_id
             WHERE (d.state = 'failed' OR (d.state = 'pending' AND d.attempts > 0))
               AND j.project_id = ?1
               AND j.id = (SELECT max(id) FROM jobs WHERE lead_id = j.lead_id)
             LIMIT ?2)",
        )?
        .query_row((project.0, TROUBLES_LISTED), |row| row.get::<_, i64>(0))?
        .unsigned_abs())
}

/// The troubled deliveries of `jobs`, with their jobs.
fn troubles_of(conn: &Connection, jobs: Vec<JobId>) -> Result<Vec<Trouble>, Error> {
    let mut troubles = Vec::new();
    for id in jobs {
        let troubled: Vec<Delivery> = deliveries(conn, id)?
            .into_iter()
            .filter(Delivery::is_troubled)
            .collect();
        if troubled.is_empty() {
            continue;
        }
        let found = job(conn, id)?;
        troubles.extend(troubled.into_iter().map(|delivery| Trouble {
            job: found.clone(),
            delivery,
        }));
    }
    Ok(troubles)
}

fn job(conn: &Connection, id: JobId) -> Result<Job, Error> {
    conn.prepare_cached(&format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?1"))?
        .query_and_then([id.0], rows::job)?
        .next()
        .ok_or(StoreError::NotFound(Entity::Job))?
}

fn deliveries(conn: &Connection, job: JobId) -> Result<Vec<Delivery>, Error> {
    let mut deliveries = conn
        .prepare_cached(
            "SELECT integration, state, attempts, next_attempt_at, detail, action
             FROM deliveries WHERE job_id = ?1",
        )?
        .query_and_then([job.0], |row| -> Result<Delivery, Error> {
            Ok(Delivery {
                integration: rows::parse("deliveries.integration", row.get(0)?)?,
                state: rows::parse("deliveries.state", row.get(1)?)?,
                attempts: row.get(2)?,
                next_attempt_at: row.get::<_, Option<i64>>(3)?.map(from_millis),
                detail: row.get(4)?,
                action: rows::parse("deliveries.action", row.get(5)?)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    deliveries.sort_by_key(|d| d.integration);
    Ok(deliveries)
}

/// Fails unless `token` holds the job's lease.
fn check_lease(conn: &Connection, id: JobId, token: Uuid) -> Result<(), Error> {
    let held: Option<(String, Option<String>)> = conn
        .prepare_cached("SELECT state, lease_token FROM jobs WHERE id = ?1")?
        .query_row([id.0], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?;
    match held {
        None => Err(Error::Store(StoreError::NotFound(Entity::Job))),
        Some((state, Some(lease)))
            if state == JobState::Running.as_ref() && lease == token.to_string() =>
        {
            Ok(())
        }
        Some(_) => Err(Error::Store(StoreError::Conflict(Conflict::LeaseLost(id)))),
    }
}

/// Records an attempt, moves its delivery on, and adds a `delivery` event to the lead's
/// history.
pub(crate) fn record_attempt(
    conn: &Connection,
    id: JobId,
    token: Uuid,
    attempt: &Attempt,
) -> Result<(), Error> {
    check_lease(conn, id, token)?;
    let updated = conn
        .prepare_cached(
            "UPDATE deliveries SET state = ?3, attempts = attempts + 1, next_attempt_at = ?4,
                detail = ?5
             WHERE job_id = ?1 AND integration = ?2",
        )?
        .execute((
            id.0,
            attempt.integration.as_ref(),
            attempt.outcome.delivery_state().as_ref(),
            attempt.retry_at.as_ref().map(to_millis),
            &attempt.error,
        ))?;
    if updated == 0 {
        return Err(Error::Store(StoreError::Invalid(format!(
            "job {} has no delivery to {}",
            id.0, attempt.integration
        ))));
    }
    conn.prepare_cached(
        "INSERT INTO attempts (job_id, integration, at, outcome, http_status, error, retry_at,
            batch_id, batch_size)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute((
        id.0,
        attempt.integration.as_ref(),
        to_millis(&attempt.at),
        attempt.outcome.as_ref(),
        attempt.http_status,
        &attempt.error,
        attempt.retry_at.as_ref().map(to_millis),
        attempt.batch.map(|batch| batch.id.to_string()),
        attempt.batch.map(|batch| batch.size),
    ))?;
    let (project, lead): (i64, i64) = conn
        .prepare_cached("SELECT project_id, lead_id FROM jobs WHERE id = ?1")?
        .query_row([id.0], |row| Ok((row.get(0)?, row.get(1)?)))?;
    let delivery = Activity::Delivery {
        job_id: id,
        integration: attempt.integration,
        outcome: attempt.outcome,
        http_status: attempt.http_status,
        error: attempt.error.clone(),
    };
    let event = EventRow::of(
        (ProjectId(project), LeadId(lead)),
        attempt.at,
        None,
        &delivery,
    )?;
    activity::record(conn, &event)?;
    Ok(())
}

pub(crate) fn reschedule(
    conn: &Connection,
    id: JobId,
    token: Uuid,
    due_at: DateTime<Utc>,
) -> Result<(), Error> {
    check_lease(conn, id, token)?;
    conn.prepare_cached(
        "UPDATE jobs SET state = 'queued', due_at = ?2, lease_token = NULL, lease_expires_at = NULL
         WHERE id = ?1",
    )?
    .execute((id.0, to_millis(&due_at)))?;
    Ok(())
}

pub(crate) fn finish(
    conn: &Connection,
    id: JobId,
    token: Uuid,
    now: DateTime<Utc>,
) -> Result<LeadStatus, Error> {
    check_lease(conn, id, token)?;
    let ended = deliveries(conn, id)?;
    if ended.iter().any(|d| d.state == DeliveryState::Pending) {
        return Err(Error::Store(StoreError::Invalid(format!(
            "job {} still has deliveries pending",
            id.0
        ))));
    }
    let job = job(conn, id)?;
    if ended.iter().any(|d| d.state == DeliveryState::Failed) {
        alerts::enqueue(conn, (job.project_id, job.lead_id), AlertKind::Failed, now)?;
    }
    conn.prepare_cached(
        "UPDATE jobs SET state = 'done', finished_at = ?2, lease_token = NULL,
            lease_expires_at = NULL
         WHERE id = ?1",
    )?
    .execute((id.0, to_millis(&now)))?;
    // A lead reset to `open` while its job was delivered is no longer pending: it stays open.
    conn.prepare_cached(
        "UPDATE leads SET status = ?2, updated_at = ?3 WHERE id = ?1 AND status = 'pending'",
    )?
    .execute((job.lead_id.0, job.final_status.as_ref(), to_millis(&now)))?;
    let status: String = conn
        .prepare_cached("SELECT status FROM leads WHERE id = ?1")?
        .query_row([job.lead_id.0], |row| row.get(0))?;
    rows::parse("leads.status", status)
}

/// Whose jobs [`jobs_of`] reads.
enum Jobs {
    /// One lead's.
    Lead(LeadId),
    /// Those of a person's leads ([`rating::person`]): the lead and its duplicates.
    Person(LeadId),
}

pub(crate) fn lead_jobs(
    conn: &Connection,
    project: ProjectId,
    lead: LeadId,
) -> Result<Vec<JobRecord>, Error> {
    jobs_of(conn, project, Jobs::Lead(lead))
}

/// The jobs of `whose`, newest first, each with its deliveries and their attempts.
fn jobs_of(conn: &Connection, project: ProjectId, whose: Jobs) -> Result<Vec<JobRecord>, Error> {
    let (leads, lead) = match whose {
        Jobs::Lead(lead) => ("lead_id = ?1", lead),
        Jobs::Person(lead) => (
            "lead_id IN (SELECT id FROM leads WHERE id = ?1
                UNION SELECT id FROM leads WHERE project_id = ?2 AND duplicate_of = ?1)",
            lead,
        ),
    };
    let jobs: Vec<Job> = conn
        .prepare_cached(&format!(
            "SELECT {JOB_COLUMNS} FROM jobs WHERE {leads} AND project_id = ?2
             ORDER BY id DESC"
        ))?
        .query_and_then((lead.0, project.0), rows::job)?
        .collect::<Result<_, _>>()?;
    let mut records = Vec::with_capacity(jobs.len());
    for job in jobs {
        let attempts: Vec<Attempt> = conn
            .prepare_cached(&format!(
                "SELECT {ATTEMPT_COLUMNS} FROM attempts a WHERE a.job_id = ?1 ORDER BY a.id"
            ))?
            .query_and_then([job.id.0], rows::attempt)?
            .collect::<Result<_, _>>()?;
        let deliveries = deliveries(conn, job.id)?
            .into_iter()
            .map(|delivery| {
                let of_delivery: Vec<Attempt> = attempts
                    .iter()
                    .filter(|a| a.integration == delivery.integration)
                    .cloned()
                    .collect();
                (delivery, of_delivery)
            })
            .collect();
        records.push(JobRecord { job, deliveries });
    }
    Ok(records)
}
