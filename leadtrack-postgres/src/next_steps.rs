//! Leads' next steps ([`leadtrack_core::next_step`]): set and done with their history in
//! one transaction (the lead locked `FOR SHARE`, so that a deletion of the lead waits and
//! then deletes the step with it), listed when due, counted among open leads, and taken
//! for their reminders.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::account::Actor;
use leadtrack_core::activity::{Activity, EventRow};
use leadtrack_core::comment::author_id;
use leadtrack_core::next_step::{Coverage, DUE_LISTED, DueStep, NextStep, Reminder};
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::{LeadId, ProjectId, UserId};
use tokio_postgres::Row;

use crate::Error;
use crate::activity;
use crate::rows::{all, lock_lead, one, run};

fn step(row: &Row, at: usize) -> Result<NextStep, Error> {
    Ok(NextStep {
        at: from_millis(row.try_get(at)?),
        note: row.try_get(at + 1)?,
    })
}

fn count(value: i64) -> u64 {
    u64::try_from(value).unwrap_or_default()
}

/// [`leadtrack_core::LeadStore::set_next_step`].
pub(crate) async fn set(
    c: &impl GenericClient,
    (project, lead): (ProjectId, LeadId),
    step: Option<&NextStep>,
    by: &Actor,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    lock_lead(c, project, lead).await?;
    let activity = match step {
        Some(step) => {
            run(
                c,
                "INSERT INTO next_steps (lead_id, project_id, due_at, note, set_by, set_at)
                 VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (lead_id) DO UPDATE SET due_at = excluded.due_at,
                     note = excluded.note, set_by = excluded.set_by,
                     set_at = excluded.set_at, reminded = false",
                &[
                    &lead.0,
                    &project.0,
                    &to_millis(&step.at),
                    &step.note,
                    &author_id(by).map(|id| id.0),
                    &to_millis(&now),
                ],
            )
            .await?;
            Activity::NextStep {
                due_at: step.at,
                note: step.note.clone(),
            }
        }
        None => {
            let removed = run(
                c,
                "DELETE FROM next_steps WHERE project_id = $1 AND lead_id = $2",
                &[&project.0, &lead.0],
            )
            .await?;
            if removed == 0 {
                return Ok(());
            }
            Activity::NextStepDone
        }
    };
    activity::record(c, &EventRow::of((project, lead), now, Some(by), &activity)?).await
}

/// [`leadtrack_core::LeadStore::next_steps`].
pub(crate) async fn of_leads(
    c: &impl GenericClient,
    project: ProjectId,
    leads: &[LeadId],
) -> Result<Vec<(LeadId, NextStep)>, Error> {
    let ids: Vec<i64> = leads.iter().map(|lead| lead.0).collect();
    all(
        c,
        "SELECT lead_id, due_at, note FROM next_steps WHERE project_id = $1 AND lead_id = ANY($2)",
        &[&project.0, &ids],
    )
    .await?
    .iter()
    .map(|row| Ok((LeadId(row.try_get(0)?), step(row, 1)?)))
    .collect()
}

/// [`leadtrack_core::LeadStore::due_steps`].
pub(crate) async fn due(
    c: &impl GenericClient,
    project: ProjectId,
    by: DateTime<Utc>,
    assignee: Option<UserId>,
) -> Result<Vec<DueStep>, Error> {
    all(
        c,
        "SELECT n.lead_id, n.due_at, n.note, l.assigned_to
         FROM next_steps n JOIN leads l ON l.project_id = n.project_id AND l.id = n.lead_id
         WHERE n.project_id = $1 AND n.due_at < $2
           AND ($3::bigint IS NULL OR l.assigned_to = $3)
         ORDER BY n.due_at, n.lead_id LIMIT $4",
        &[
            &project.0,
            &to_millis(&by),
            &assignee.map(|user| user.0),
            &i64::from(DUE_LISTED),
        ],
    )
    .await?
    .iter()
    .map(|row| {
        Ok(DueStep {
            lead: LeadId(row.try_get(0)?),
            step: step(row, 1)?,
            assignee: row.try_get::<_, Option<i64>>(3)?.map(UserId),
        })
    })
    .collect()
}

/// [`leadtrack_core::LeadStore::next_step_coverage`]: the open leads from the kept counts
/// per status; the planned ones from the steps, few beside the leads.
pub(crate) async fn coverage(
    c: &impl GenericClient,
    project: ProjectId,
) -> Result<Coverage, Error> {
    let row = one(
        c,
        "SELECT (SELECT coalesce(sum(total), 0)::bigint FROM lead_status_totals
                 WHERE project_id = $1 AND status = 'open'),
                (SELECT count(*) FROM next_steps n
                 JOIN leads l ON l.project_id = n.project_id AND l.id = n.lead_id
                 WHERE n.project_id = $1 AND l.status = 'open')",
        &[&project.0],
    )
    .await?;
    let Some(row) = row else {
        return Ok(Coverage::default());
    };
    Ok(Coverage {
        open: count(row.try_get(0)?),
        planned: count(row.try_get(1)?),
    })
}

/// [`leadtrack_core::JobQueue::take_reminders`]: marked as they are read; a step another
/// worker is taking is skipped (`SKIP LOCKED`).
pub(crate) async fn take(
    c: &impl GenericClient,
    now: DateTime<Utc>,
    limit: u32,
) -> Result<Vec<Reminder>, Error> {
    let rows = all(
        c,
        "UPDATE next_steps n SET reminded = true FROM (
             SELECT lead_id FROM next_steps WHERE NOT reminded AND due_at <= $1
             ORDER BY due_at, lead_id LIMIT $2 FOR UPDATE SKIP LOCKED) due
         WHERE n.lead_id = due.lead_id
         RETURNING n.project_id, n.lead_id, n.due_at, n.note, n.set_by,
             (SELECT assigned_to FROM leads l WHERE l.project_id = n.project_id AND l.id = n.lead_id)",
        &[&to_millis(&now), &i64::from(limit)],
    )
    .await?;
    let mut taken = rows
        .iter()
        .map(|row| {
            Ok(Reminder {
                project: ProjectId(row.try_get(0)?),
                lead: LeadId(row.try_get(1)?),
                step: step(row, 2)?,
                set_by: row.try_get::<_, Option<i64>>(4)?.map(UserId),
                assignee: row.try_get::<_, Option<i64>>(5)?.map(UserId),
            })
        })
        .collect::<Result<Vec<_>, Error>>()?;
    taken.sort_by_key(|reminder| (reminder.step.at, reminder.lead));
    Ok(taken)
}
