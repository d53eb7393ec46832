//! Leads' next steps ([`leadtrack_core::next_step`]): set and done with their history in
//! one write, listed when due, counted among open leads, and taken for their reminders.

use chrono::{DateTime, Utc};
use leadtrack_core::account::Actor;
use leadtrack_core::activity::{Activity, EventRow};
use leadtrack_core::comment::author_id;
use leadtrack_core::next_step::{Coverage, DUE_LISTED, DueStep, NextStep, Reminder};
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::{LeadId, ProjectId, UserId};
use rusqlite::{Connection, OptionalExtension, Row};

use crate::activity;
use crate::rows::{self, Error};

fn step(row: &Row<'_>, at: usize) -> Result<NextStep, rusqlite::Error> {
    Ok(NextStep {
        at: from_millis(row.get(at)?),
        note: row.get(at + 1)?,
    })
}

/// [`leadtrack_core::LeadStore::set_next_step`].
pub(crate) fn set(
    conn: &Connection,
    (project, lead): (ProjectId, LeadId),
    step: Option<&NextStep>,
    by: &Actor,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    rows::lead_exists(conn, project, lead)?;
    let activity = match step {
        Some(step) => {
            conn.prepare_cached(
                "INSERT INTO next_steps (lead_id, project_id, due_at, note, set_by, set_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (lead_id) DO UPDATE SET due_at = excluded.due_at,
                     note = excluded.note, set_by = excluded.set_by,
                     set_at = excluded.set_at, reminded = 0",
            )?
            .execute((
                lead.0,
                project.0,
                to_millis(&step.at),
                &step.note,
                author_id(by).map(|id| id.0),
                to_millis(&now),
            ))?;
            Activity::NextStep {
                due_at: step.at,
                note: step.note.clone(),
            }
        }
        None => {
            let removed = conn
                .prepare_cached("DELETE FROM next_steps WHERE project_id = ?1 AND lead_id = ?2")?
                .execute((project.0, lead.0))?;
            if removed == 0 {
                return Ok(());
            }
            Activity::NextStepDone
        }
    };
    let event = EventRow::of((project, lead), now, Some(by), &activity)?;
    activity::record(conn, &event)
}

/// [`leadtrack_core::LeadStore::next_steps`].
pub(crate) fn of_leads(
    conn: &Connection,
    project: ProjectId,
    leads: &[LeadId],
) -> Result<Vec<(LeadId, NextStep)>, Error> {
    let mut statement = conn.prepare_cached(
        "SELECT due_at, note FROM next_steps WHERE lead_id = ?1 AND project_id = ?2",
    )?;
    let mut found = Vec::new();
    for lead in leads {
        let step = statement
            .query_row((lead.0, project.0), |row| step(row, 0))
            .optional()?;
        found.extend(step.map(|step| (*lead, step)));
    }
    Ok(found)
}

/// [`leadtrack_core::LeadStore::due_steps`].
pub(crate) fn due(
    conn: &Connection,
    project: ProjectId,
    by: DateTime<Utc>,
    assignee: Option<UserId>,
) -> Result<Vec<DueStep>, Error> {
    conn.prepare_cached(
        "SELECT n.lead_id, n.due_at, n.note, l.assigned_to
         FROM next_steps n JOIN leads l ON l.id = n.lead_id
         WHERE n.project_id = ?1 AND n.due_at < ?2
           AND (?3 IS NULL OR l.assigned_to = ?3)
         ORDER BY n.due_at, n.lead_id LIMIT ?4",
    )?
    .query_map(
        (project.0, to_millis(&by), assignee.map(|u| u.0), DUE_LISTED),
        |row| {
            Ok(DueStep {
                lead: LeadId(row.get(0)?),
                step: step(row, 1)?,
                assignee: row.get::<_, Option<i64>>(3)?.map(UserId),
            })
        },
    )?
    .collect::<Result<_, _>>()
    .map_err(Error::from)
}

/// [`leadtrack_core::LeadStore::next_step_coverage`]: the open leads from the kept count
/// per status; the planned ones from the steps, few beside the leads.
pub(crate) fn coverage(conn: &Connection, project: ProjectId) -> Result<Coverage, Error> {
    let open = crate::counts::status_counts(conn, project)?
        .into_iter()
        .find_map(|(status, total)| (status == "open").then_some(total));
    let planned: i64 = conn
        .prepare_cached(
            "SELECT count(*) FROM next_steps n JOIN leads l ON l.id = n.lead_id
             WHERE n.project_id = ?1 AND l.status = 'open'",
        )?
        .query_row([project.0], |row| row.get(0))?;
    Ok(Coverage {
        open: u64::try_from(open.unwrap_or_default()).unwrap_or_default(),
        planned: u64::try_from(planned).unwrap_or_default(),
    })
}

/// [`leadtrack_core::JobQueue::take_reminders`]: marked as they are read, in the writer's
/// transaction.
pub(crate) fn take(
    conn: &Connection,
    now: DateTime<Utc>,
    limit: u32,
) -> Result<Vec<Reminder>, Error> {
    let mut taken: Vec<Reminder> = conn
        .prepare_cached(
            "UPDATE next_steps SET reminded = 1
             WHERE lead_id IN (SELECT lead_id FROM next_steps
                               WHERE reminded = 0 AND due_at <= ?1
                               ORDER BY due_at, lead_id LIMIT ?2)
             RETURNING project_id, lead_id, due_at, note, set_by,
                 (SELECT assigned_to FROM leads WHERE leads.id = next_steps.lead_id)",
        )?
        .query_map((to_millis(&now), limit), |row| {
            Ok(Reminder {
                project: ProjectId(row.get(0)?),
                lead: LeadId(row.get(1)?),
                step: step(row, 2)?,
                set_by: row.get::<_, Option<i64>>(4)?.map(UserId),
                assignee: row.get::<_, Option<i64>>(5)?.map(UserId),
            })
        })?
        .collect::<Result<_, _>>()?;
    // RETURNING gives no order.
    taken.sort_by_key(|reminder| (reminder.step.at, reminder.lead));
    Ok(taken)
}
