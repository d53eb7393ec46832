//! A lead's history: events recorded by the writes that change a lead, in their own
//! transaction, and read back oldest first; and deleting a lead, which leaves its id in the
//! project's history.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::activity::{
    Attribution, EventRow, LeadEvent, ProjectActivity, ProjectEvent, audit_retention, history,
};
use leadtrack_core::store::deletion::deletion;
use leadtrack_core::store::{Entity, StoreError};
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::{LeadId, ProjectId};

use crate::Error;
use leadtrack_core::store::sql::RATED_EVENT;

use crate::rows::{self, EVENT_COLUMNS, all, one, run};

/// Adds an event to the lead's history. Called inside the write that makes the change, so
/// the event commits (or rolls back) with it.
pub(crate) async fn record(c: &impl GenericClient, event: &EventRow) -> Result<(), Error> {
    run(
        c,
        "INSERT INTO lead_events (project_id, lead_id, at, actor, activity)
         VALUES ($1, $2, $3, $4, $5)",
        &[
            &event.project.0,
            &event.lead.0,
            &event.at,
            &event.actor,
            &event.activity,
        ],
    )
    .await?;
    if let Some(name) = &event.touch {
        run(
            c,
            "UPDATE leads SET first_touch_at = $3, first_touch_by = $4
             WHERE project_id = $1 AND id = $2 AND first_touch_at IS NULL",
            &[&event.project.0, &event.lead.0, &event.at, name],
        )
        .await?;
    }
    Ok(())
}

/// Makes the lead's history its recorded events alone ([`Step::ForgetCreation`]).
///
/// [`Step::ForgetCreation`]: leadtrack_core::store::arrival::Step::ForgetCreation
pub(crate) async fn forget_creation(
    c: &impl GenericClient,
    project: ProjectId,
    lead: LeadId,
) -> Result<(), Error> {
    run(
        c,
        "INSERT INTO lead_histories_recorded (project_id, lead_id) VALUES ($1, $2)
         ON CONFLICT DO NOTHING",
        &[&project.0, &lead.0],
    )
    .await?;
    Ok(())
}

/// The lead's history, oldest first (ties in the order recorded), with the `created` event
/// its row implies ([`history`]); none for a lead that is not the project's.
pub(crate) async fn lead_activity(
    c: &impl GenericClient,
    project: ProjectId,
    lead: LeadId,
) -> Result<Vec<LeadEvent>, Error> {
    let created = c
        .query_opt(
            "SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM lead_histories_recorded r
                    WHERE r.project_id = l.project_id AND r.lead_id = l.id)
                THEN created_at END
             FROM leads l WHERE project_id = $1 AND id = $2",
            &[&project.0, &lead.0],
        )
        .await?;
    let Some(created) = created else {
        return Ok(Vec::new());
    };
    let created: Option<i64> = created.try_get(0)?;
    let sql = format!(
        "SELECT {EVENT_COLUMNS} FROM lead_events WHERE project_id = $1 AND lead_id = $2
         ORDER BY at, id"
    );
    let recorded = all(c, &sql, &[&project.0, &lead.0])
        .await?
        .iter()
        .map(rows::event)
        .collect::<Result<_, _>>()?;
    Ok(history(created.map(from_millis), recorded))
}

/// The newest rating in the history of each of `leads` that has one.
pub(crate) async fn last_ratings(
    c: &impl GenericClient,
    project: ProjectId,
    leads: &[LeadId],
) -> Result<Vec<(LeadId, LeadEvent)>, Error> {
    let ids: Vec<i64> = leads.iter().map(|lead| lead.0).collect();
    let sql = format!(
        "SELECT DISTINCT ON (lead_id) lead_id, {EVENT_COLUMNS} FROM lead_events
         WHERE project_id = $1 AND lead_id = ANY($2) AND {RATED_EVENT}
         ORDER BY lead_id, at DESC, id DESC"
    );
    all(c, &sql, &[&project.0, &ids])
        .await?
        .iter()
        .map(|row| Ok((LeadId(row.try_get(0)?), rows::event_at(row, 1)?)))
        .collect()
}

/// The statements that delete everything of a lead but its row, children first: `$1` the
/// project, `$2` the lead. An integration's last attempt that was the lead's is forgotten
/// with it.
pub(crate) const LEAD_CHILDREN: [&str; 12] = [
    "DELETE FROM last_attempts WHERE project_id = $1 AND attempt_id IN (SELECT a.id
        FROM attempts a JOIN jobs j ON j.project_id = a.project_id AND j.id = a.job_id
        WHERE j.project_id = $1 AND j.lead_id = $2)",
    "DELETE FROM attempts WHERE project_id = $1 AND job_id IN
        (SELECT id FROM jobs WHERE project_id = $1 AND lead_id = $2)",
    "DELETE FROM deliveries WHERE project_id = $1 AND job_id IN
        (SELECT id FROM jobs WHERE project_id = $1 AND lead_id = $2)",
    "DELETE FROM jobs WHERE project_id = $1 AND lead_id = $2",
    "DELETE FROM lead_events WHERE project_id = $1 AND lead_id = $2",
    "DELETE FROM lead_histories_recorded WHERE project_id = $1 AND lead_id = $2",
    "DELETE FROM rating_drafts WHERE project_id = $1 AND lead_id = $2",
    "DELETE FROM lead_comments WHERE project_id = $1 AND lead_id = $2",
    "DELETE FROM next_steps WHERE project_id = $1 AND lead_id = $2",
    "DELETE FROM webhook_events WHERE project_id = $1 AND lead_id = $2",
    "DELETE FROM crm_records WHERE lead_id = $2
        AND webhook_id IN (SELECT id FROM webhooks WHERE project_id = $1)",
    "DELETE FROM alert_queue WHERE project_id = $1 AND lead_id = $2",
];

/// Deletes a lead and everything of it, and records it in the project's history
/// ([`leadtrack_core::LeadStore::delete_lead`]). The lead is locked first, so a rating
/// cannot queue a job beside the deletion.
pub(crate) async fn delete_lead(
    c: &impl GenericClient,
    project: ProjectId,
    lead: LeadId,
    by: &Attribution,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let locked = one(
        c,
        "SELECT id FROM leads WHERE project_id = $1 AND id = $2 FOR UPDATE",
        &[&project.0, &lead.0],
    )
    .await?;
    if locked.is_none() {
        return Err(Error::Store(StoreError::NotFound(Entity::Lead)));
    }
    let unfinished = one(
        c,
        "SELECT 1 FROM jobs WHERE project_id = $1 AND lead_id = $2 AND finished_at IS NULL",
        &[&project.0, &lead.0],
    )
    .await?;
    let activity = deletion(lead, unfinished.is_some())?;
    remove_lead(c, project, lead).await?;
    record_project_event(c, project, by, &activity, now).await
}

/// Removes a lead's rows, children first ([`LEAD_CHILDREN`], then the lead's own).
pub(crate) async fn remove_lead(
    c: &impl GenericClient,
    project: ProjectId,
    lead: LeadId,
) -> Result<(), Error> {
    for sql in LEAD_CHILDREN
        .iter()
        .chain(&["DELETE FROM leads WHERE project_id = $1 AND id = $2"])
    {
        run(c, sql, &[&project.0, &lead.0]).await?;
    }
    Ok(())
}

/// Adds an event to the project's history, and deletes its events older than a year.
pub(crate) async fn record_project_event(
    c: &impl GenericClient,
    project: ProjectId,
    by: &Attribution,
    activity: &ProjectActivity,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    run(
        c,
        "DELETE FROM project_events WHERE project_id = $1 AND at < $2",
        &[&project.0, &to_millis(&(now - audit_retention()))],
    )
    .await?;
    run(
        c,
        "INSERT INTO project_events (project_id, at, actor, activity, address)
         VALUES ($1, $2, $3, $4, $5)",
        &[
            &project.0,
            &to_millis(&now),
            &rows::actor_json(Some(&by.actor))?,
            &serde_json::to_string(activity)?,
            &by.address,
        ],
    )
    .await?;
    Ok(())
}

/// The project's history, newest first: at most `limit` events before the id `before`,
/// none older than a year at `now`.
pub(crate) async fn project_history(
    c: &impl GenericClient,
    project: ProjectId,
    before: Option<i64>,
    limit: u32,
    now: DateTime<Utc>,
) -> Result<Vec<ProjectEvent>, Error> {
    let rows = all(
        c,
        "SELECT id, at, actor, activity, address FROM project_events
         WHERE project_id = $1 AND at >= $2 AND id < $3
         ORDER BY id DESC LIMIT $4",
        &[
            &project.0,
            &to_millis(&(now - audit_retention())),
            &before.unwrap_or(i64::MAX),
            &i64::from(limit),
        ],
    )
    .await?;
    rows.iter()
        .map(|row| {
            Ok(ProjectEvent {
                id: row.try_get(0)?,
                at: from_millis(row.try_get(1)?),
                by: rows::actor(row.try_get(2)?)?,
                activity: serde_json::from_str(row.try_get::<_, &str>(3)?)?,
                address: row.try_get(4)?,
            })
        })
        .collect()
}
