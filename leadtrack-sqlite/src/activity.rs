//! A lead's history: events recorded by the writes that change a lead, in their own
//! transaction, and read back oldest first; and deleting a lead, which leaves its id in the
//! project's history.

use chrono::{DateTime, Utc};
use leadtrack_core::activity::{
    Attribution, EventRow, LeadEvent, ProjectActivity, ProjectEvent, audit_retention, history,
};
use leadtrack_core::store::deletion::deletion;
use leadtrack_core::store::{Entity, StoreError};
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::{LeadId, ProjectId};
use rusqlite::{Connection, OptionalExtension};

use leadtrack_core::store::sql::RATED_EVENT;

use crate::rows::{self, EVENT_COLUMNS, Error};

/// Adds an event to the lead's history. Called inside the write that makes the change, so
/// the event commits (or rolls back) with it.
pub(crate) fn record(conn: &Connection, event: &EventRow) -> Result<(), Error> {
    conn.prepare_cached(
        "INSERT INTO lead_events (lead_id, project_id, at, actor, activity)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute((
        event.lead.0,
        event.project.0,
        event.at,
        &event.actor,
        &event.activity,
    ))?;
    if let Some(name) = &event.touch {
        conn.prepare_cached(
            "UPDATE leads SET first_touch_at = ?3, first_touch_by = ?4
             WHERE project_id = ?1 AND id = ?2 AND first_touch_at IS NULL",
        )?
        .execute((event.project.0, event.lead.0, event.at, name))?;
    }
    Ok(())
}

/// Makes the lead's history its recorded events alone ([`Step::ForgetCreation`]).
///
/// [`Step::ForgetCreation`]: leadtrack_core::store::arrival::Step::ForgetCreation
pub(crate) fn forget_creation(
    conn: &Connection,
    project: ProjectId,
    lead: LeadId,
) -> Result<(), Error> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO lead_histories_recorded (lead_id, project_id) VALUES (?1, ?2)",
    )?
    .execute((lead.0, project.0))?;
    Ok(())
}

/// The lead's history, oldest first (ties in the order recorded), with the `created` event
/// its row implies ([`history`]); none for a lead that is not the project's.
pub(crate) fn lead_activity(
    conn: &Connection,
    project: ProjectId,
    lead: LeadId,
) -> Result<Vec<LeadEvent>, Error> {
    let created: Option<Option<i64>> = conn
        .prepare_cached(
            "SELECT CASE WHEN id NOT IN (SELECT lead_id FROM lead_histories_recorded)
                THEN created_at END
             FROM leads WHERE project_id = ?1 AND id = ?2",
        )?
        .query_row((project.0, lead.0), |row| row.get(0))
        .optional()?;
    let Some(created) = created else {
        return Ok(Vec::new());
    };
    let recorded = conn
        .prepare_cached(&format!(
            "SELECT {EVENT_COLUMNS} FROM lead_events WHERE lead_id = ?1 AND project_id = ?2
             ORDER BY at, id"
        ))?
        .query_and_then((lead.0, project.0), rows::event)?
        .collect::<Result<_, _>>()?;
    Ok(history(created.map(from_millis), recorded))
}

/// The newest rating in the history of each of `leads` that has one.
pub(crate) fn last_ratings(
    conn: &Connection,
    project: ProjectId,
    leads: &[LeadId],
) -> Result<Vec<(LeadId, LeadEvent)>, Error> {
    let mut newest = conn.prepare_cached(&format!(
        "SELECT {EVENT_COLUMNS} FROM lead_events
         WHERE project_id = ?1 AND lead_id = ?2 AND {RATED_EVENT}
         ORDER BY at DESC, id DESC LIMIT 1"
    ))?;
    let mut found = Vec::new();
    for lead in leads {
        let event = newest
            .query_and_then((project.0, lead.0), rows::event)?
            .next()
            .transpose()?;
        found.extend(event.map(|event| (*lead, event)));
    }
    Ok(found)
}

/// The statements that delete everything of a lead but its row, children first: `?1` the
/// project, `?2` the lead. An integration's last attempt that was the lead's is forgotten
/// with it.
pub(crate) const LEAD_CHILDREN: [&str; 12] = [
    "DELETE FROM last_attempts WHERE attempt_id IN (SELECT a.id FROM attempts a
        JOIN jobs j ON j.id = a.job_id WHERE j.project_id = ?1 AND j.lead_id = ?2)",
    "DELETE FROM attempts WHERE job_id IN
        (SELECT id FROM jobs WHERE project_id = ?1 AND lead_id = ?2)",
    "DELETE FROM deliveries WHERE job_id IN
        (SELECT id FROM jobs WHERE project_id = ?1 AND lead_id = ?2)",
    "DELETE FROM jobs WHERE project_id = ?1 AND lead_id = ?2",
    "DELETE FROM lead_events WHERE project_id = ?1 AND lead_id = ?2",
    "DELETE FROM lead_histories_recorded WHERE project_id = ?1 AND lead_id = ?2",
    "DELETE FROM rating_drafts WHERE project_id = ?1 AND lead_id = ?2",
    "DELETE FROM lead_comments WHERE project_id = ?1 AND lead_id = ?2",
    "DELETE FROM next_steps WHERE project_id = ?1 AND lead_id = ?2",
    // Lead ids are unique across projects here, and this table has no project column.
    "DELETE FROM webhook_events WHERE lead_id = ?2",
    "DELETE FROM crm_records WHERE lead_id = ?2",
    "DELETE FROM alert_queue WHERE project_id = ?1 AND lead_id = ?2",
];

/// Deletes a lead and everything of it, and records it in the project's history
/// ([`leadtrack_core::LeadStore::delete_lead`]).
pub(crate) fn delete_lead(
    conn: &Connection,
    project: ProjectId,
    lead: LeadId,
    by: &Attribution,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let unfinished: Option<bool> = conn
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM jobs WHERE lead_id = l.id AND finished_at IS NULL)
             FROM leads l WHERE l.project_id = ?1 AND l.id = ?2",
        )?
        .query_row((project.0, lead.0), |row| row.get(0))
        .optional()?;
    let Some(unfinished) = unfinished else {
        return Err(Error::Store(StoreError::NotFound(Entity::Lead)));
    };
    let activity = deletion(lead, unfinished)?;
    remove_lead(conn, project, lead)?;
    record_project_event(conn, project, by, &activity, now)
}

/// Removes a lead's rows, children first ([`LEAD_CHILDREN`], then the lead's own).
pub(crate) fn remove_lead(
    conn: &Connection,
    project: ProjectId,
    lead: LeadId,
) -> Result<(), Error> {
    for sql in LEAD_CHILDREN
        .iter()
        .chain(&["DELETE FROM leads WHERE project_id = ?1 AND id = ?2"])
    {
        conn.prepare_cached(sql)?.execute((project.0, lead.0))?;
    }
    Ok(())
}

/// Adds an event to the project's history, and deletes its events older than a year.
pub(crate) fn record_project_event(
    conn: &Connection,
    project: ProjectId,
    by: &Attribution,
    activity: &ProjectActivity,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    conn.prepare_cached("DELETE FROM project_events WHERE project_id = ?1 AND at < ?2")?
        .execute((project.0, to_millis(&(now - audit_retention()))))?;
    conn.prepare_cached(
        "INSERT INTO project_events (project_id, at, actor, activity, address)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute((
        project.0,
        to_millis(&now),
        rows::actor_json(Some(&by.actor))?,
        serde_json::to_string(activity)?,
        &by.address,
    ))?;
    Ok(())
}

/// The project's history, newest first: at most `limit` events before the id `before`,
/// none older than a year at `now`.
pub(crate) fn project_history(
    conn: &Connection,
    project: ProjectId,
    before: Option<i64>,
    limit: u32,
    now: DateTime<Utc>,
) -> Result<Vec<ProjectEvent>, Error> {
    conn.prepare_cached(
        "SELECT id, at, actor, activity, address FROM project_events
         WHERE project_id = ?1 AND at >= ?2 AND id < ?3
         ORDER BY id DESC LIMIT ?4",
    )?
    .query_and_then(
        (
            project.0,
            to_millis(&(now - audit_retention())),
            before.unwrap_or(i64::MAX),
            limit,
        ),
        |row| {
            Ok(ProjectEvent {
                id: row.get(0)?,
                at: from_millis(row.get(1)?),
                by: rows::actor(row.get(2)?)?,
                activity: serde_json::from_str(&row.get::<_, String>(3)?)?,
                address: row.get(4)?,
            })
        },
    )?
    .collect()
}
