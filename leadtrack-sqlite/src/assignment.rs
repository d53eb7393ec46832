//! Who leads are assigned to: by a person, and by the project's round-robin rule as a lead
//! arrives (in the writer's transaction that stores it, so turns are taken one at a time).

use chrono::{DateTime, Utc};
use leadtrack_core::account::{self, Actor};
use leadtrack_core::activity::{Activity, EventRow};
use leadtrack_core::alert::AlertKind;
use leadtrack_core::assignment::{Assignee, RoundRobin};
use leadtrack_core::store::{Entity, StoreError};
use leadtrack_core::types::{LeadId, ProjectId, UserId};
use rusqlite::{Connection, OptionalExtension};

use crate::rows::Error;
use crate::{accounts, activity, alerts};

/// The project's members who may take leads.
fn takers(conn: &Connection, project: ProjectId) -> Result<Vec<Assignee>, Error> {
    Ok(account::takers(accounts::members(conn, project)?))
}

/// Sets the lead's assignee and records it, by `by` (`None`: the round-robin rule).
fn set(
    conn: &Connection,
    (project, lead): (ProjectId, LeadId),
    assignee: Option<&Assignee>,
    by: Option<&Actor>,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    conn.prepare_cached("UPDATE leads SET assigned_to = ?3 WHERE project_id = ?1 AND id = ?2")?
        .execute((project.0, lead.0, assignee.map(|a| a.id.0)))?;
    // The assignee hears of it, unless they took it themselves.
    let taker = |user| matches!(by, Some(Actor::User { id, .. }) if *id == user);
    if let Some(assignee) = assignee.filter(|a| !taker(a.id)) {
        let kind = AlertKind::Assigned { user: assignee.id };
        alerts::enqueue(conn, (project, lead), kind, now)?;
    }
    let activity = Activity::Assigned {
        assignee: assignee.cloned(),
    };
    activity::record(conn, &EventRow::of((project, lead), now, by, &activity)?)
}

/// [`leadtrack_core::LeadStore::assign`].
pub(crate) fn assign(
    conn: &Connection,
    (project, leads): (ProjectId, &[LeadId]),
    to: Option<UserId>,
    by: &Actor,
    now: DateTime<Utc>,
) -> Result<Vec<LeadId>, Error> {
    let assignee = match to {
        None => None,
        Some(user) => Some(
            takers(conn, project)?
                .into_iter()
                .find(|taker| taker.id == user)
                .ok_or(Error::Store(StoreError::NotFound(Entity::User)))?,
        ),
    };
    let mut leads = leads.to_vec();
    leads.sort_unstable();
    leads.dedup();
    let mut changed = Vec::new();
    for lead in leads {
        let current: Option<i64> = conn
            .prepare_cached("SELECT assigned_to FROM leads WHERE project_id = ?1 AND id = ?2")?
            .query_row((project.0, lead.0), |row| row.get(0))
            .optional()?
            .ok_or(Error::Store(StoreError::NotFound(Entity::Lead)))?;
        if current != to.map(|user| user.0) {
            changed.push(lead);
        }
    }
    for lead in &changed {
        set(conn, (project, *lead), assignee.as_ref(), Some(by), now)?;
    }
    Ok(changed)
}

/// Gives a lead that has just arrived (of `form_name`), or just left spam, to the member
/// whose turn it is, when the project's round-robin rule covers it and it is nobody's yet.
pub(crate) fn in_turn(
    conn: &Connection,
    (project, lead): (ProjectId, LeadId),
    form_name: Option<&str>,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let Some((rule, last)) = conn
        .prepare_cached("SELECT rule, last_user FROM round_robin WHERE project_id = ?1")?
        .query_row([project.0], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, Option<i64>>(1)?))
        })
        .optional()?
    else {
        return Ok(());
    };
    let rule: RoundRobin = serde_json::from_str(&rule)?;
    let unassigned = conn
        .prepare_cached("SELECT 1 FROM leads WHERE id = ?1 AND assigned_to IS NULL")?
        .exists([lead.0])?;
    if !rule.covers(form_name) || !unassigned {
        return Ok(());
    }
    let takers = takers(conn, project)?;
    let next = rule.next(last.map(UserId), |user| takers.iter().any(|t| t.id == user));
    let Some(taker) = next.and_then(|user| takers.into_iter().find(|t| t.id == user)) else {
        return Ok(());
    };
    conn.prepare_cached("UPDATE round_robin SET last_user = ?2 WHERE project_id = ?1")?
        .execute((project.0, taker.id.0))?;
    set(conn, (project, lead), Some(&taker), None, now)
}

/// [`leadtrack_core::Admin::round_robin`].
pub(crate) fn rule(conn: &Connection, project: ProjectId) -> Result<Option<RoundRobin>, Error> {
    let rule: Option<String> = conn
        .prepare_cached("SELECT rule FROM round_robin WHERE project_id = ?1")?
        .query_row([project.0], |row| row.get(0))
        .optional()?;
    Ok(rule.map(|rule| serde_json::from_str(&rule)).transpose()?)
}

/// [`leadtrack_core::Admin::set_round_robin`]: a changed rule keeps its place in the turn.
pub(crate) fn set_rule(
    conn: &Connection,
    project: ProjectId,
    rule: Option<&RoundRobin>,
) -> Result<(), Error> {
    match rule {
        None => {
            conn.prepare_cached("DELETE FROM round_robin WHERE project_id = ?1")?
                .execute([project.0])?;
        }
        Some(rule) => {
            conn.prepare_cached(
                "INSERT INTO round_robin (project_id, rule) VALUES (?1, ?2)
                 ON CONFLICT (project_id) DO UPDATE SET rule = excluded.rule",
            )?
            .execute((project.0, serde_json::to_string(rule)?))?;
        }
    }
    Ok(())
}
