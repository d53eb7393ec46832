//! Who leads are assigned to: by a person, and by the project's round-robin rule as a lead
//! arrives, in the transaction that stores it. The rule's row is locked (`FOR UPDATE`)
//! while a turn is taken, so leads arriving together take turns one at a time.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::account::{self, Actor};
use leadtrack_core::activity::{Activity, EventRow};
use leadtrack_core::alert::AlertKind;
use leadtrack_core::assignment::{Assignee, RoundRobin};
use leadtrack_core::store::{Entity, StoreError};
use leadtrack_core::types::{LeadId, ProjectId, UserId};

use crate::rows::{all, one, run};
use crate::{Error, accounts, activity, alerts};

/// The project's members who may take leads.
async fn takers(c: &impl GenericClient, project: ProjectId) -> Result<Vec<Assignee>, Error> {
    Ok(account::takers(accounts::members(c, project).await?))
}

/// Sets the lead's assignee and records it, by `by` (`None`: the round-robin rule).
async fn set(
    c: &impl GenericClient,
    (project, lead): (ProjectId, LeadId),
    assignee: Option<&Assignee>,
    by: Option<&Actor>,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    run(
        c,
        "UPDATE leads SET assigned_to = $3 WHERE project_id = $1 AND id = $2",
        &[&project.0, &lead.0, &assignee.map(|a| a.id.0)],
    )
    .await?;
    // The assignee hears of it, unless they took it themselves.
    let taker = |user| matches!(by, Some(Actor::User { id, .. }) if *id == user);
    if let Some(assignee) = assignee.filter(|a| !taker(a.id)) {
        let kind = AlertKind::Assigned { user: assignee.id };
        alerts::enqueue(c, (project, lead), kind, now).await?;
    }
    let activity = Activity::Assigned {
        assignee: assignee.cloned(),
    };
    activity::record(c, &EventRow::of((project, lead), now, by, &activity)?).await
}

/// [`leadtrack_core::LeadStore::assign`]; the leads are locked in id order, as every
/// transaction that locks several leads does.
pub(crate) async fn assign(
    c: &impl GenericClient,
    (project, leads): (ProjectId, &[LeadId]),
    to: Option<UserId>,
    by: &Actor,
    now: DateTime<Utc>,
) -> Result<Vec<LeadId>, Error> {
    let assignee = match to {
        None => None,
        Some(user) => Some(
            takers(c, project)
                .await?
                .into_iter()
                .find(|taker| taker.id == user)
                .ok_or(Error::Store(StoreError::NotFound(Entity::User)))?,
        ),
    };
    let mut ids: Vec<i64> = leads.iter().map(|lead| lead.0).collect();
    ids.sort_unstable();
    ids.dedup();
    let found = all(
        c,
        "SELECT id, assigned_to FROM leads WHERE project_id = $1 AND id = ANY($2)
         ORDER BY id FOR UPDATE",
        &[&project.0, &ids],
    )
    .await?;
    if found.len() != ids.len() {
        return Err(Error::Store(StoreError::NotFound(Entity::Lead)));
    }
    let mut changed = Vec::new();
    for row in &found {
        let current: Option<i64> = row.try_get(1)?;
        if current != to.map(|user| user.0) {
            changed.push(LeadId(row.try_get(0)?));
        }
    }
    for lead in &changed {
        set(c, (project, *lead), assignee.as_ref(), Some(by), now).await?;
    }
    Ok(changed)
}

/// Gives a lead that has just arrived (of `form_name`), or just left spam, to the member
/// whose turn it is, when the project's round-robin rule covers it and it is nobody's yet.
pub(crate) async fn in_turn(
    c: &impl GenericClient,
    (project, lead): (ProjectId, LeadId),
    form_name: Option<&str>,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    loop {
        let Some(row) = one(
            c,
            "SELECT rule, last_user FROM round_robin WHERE project_id = $1 FOR UPDATE",
            &[&project.0],
        )
        .await?
        else {
            return Ok(());
        };
        let rule: RoundRobin = serde_json::from_str(row.try_get::<_, &str>(0)?)?;
        let last: Option<i64> = row.try_get(1)?;
        let unassigned = one(
            c,
            "SELECT 1 FROM leads WHERE project_id = $1 AND id = $2 AND assigned_to IS NULL",
            &[&project.0, &lead.0],
        )
        .await?
        .is_some();
        if !rule.covers(form_name) || !unassigned {
            return Ok(());
        }
        let takers = takers(c, project).await?;
        let next = rule.next(last.map(UserId), |user| takers.iter().any(|t| t.id == user));
        let Some(taker) = next.and_then(|user| takers.into_iter().find(|t| t.id == user)) else {
            return Ok(());
        };
        // The row lock keeps other transactions out, not a create of the same group
        // (`creates`): the turn moves only from the one read, else it is read again.
        let moved = run(
            c,
            "UPDATE round_robin SET last_user = $2
             WHERE project_id = $1 AND last_user IS NOT DISTINCT FROM $3",
            &[&project.0, &taker.id.0, &last],
        )
        .await?;
        if moved == 1 {
            return set(c, (project, lead), Some(&taker), None, now).await;
        }
    }
}

/// [`leadtrack_core::Admin::round_robin`].
pub(crate) async fn rule(
    c: &impl GenericClient,
    project: ProjectId,
) -> Result<Option<RoundRobin>, Error> {
    let row = one(
        c,
        "SELECT rule FROM round_robin WHERE project_id = $1",
        &[&project.0],
    )
    .await?;
    match row {
        Some(row) => Ok(Some(serde_json::from_str(row.try_get::<_, &str>(0)?)?)),
        None => Ok(None),
    }
}

/// [`leadtrack_core::Admin::set_round_robin`]: a changed rule keeps its place in the turn.
pub(crate) async fn set_rule(
    c: &impl GenericClient,
    project: ProjectId,
    rule: Option<&RoundRobin>,
) -> Result<(), Error> {
    match rule {
        None => {
            run(
                c,
                "DELETE FROM round_robin WHERE project_id = $1",
                &[&project.0],
            )
            .await?;
        }
        Some(rule) => {
            run(
                c,
                "INSERT INTO round_robin (project_id, rule) VALUES ($1, $2)
                 ON CONFLICT (project_id) DO UPDATE SET rule = excluded.rule",
                &[&project.0, &serde_json::to_string(rule)?],
            )
            .await?;
        }
    }
    Ok(())
}
