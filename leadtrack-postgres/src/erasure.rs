//! Erasing a person ([`leadtrack_core::LeadStore::erase_person`]) as core's [`erasure`]
//! plans it, in one transaction, each lead locked first so that a rating cannot queue a
//! job beside its erasure. PostgreSQL keeps the old row versions until vacuum reclaims
//! them (docs/privacy.md says how soon, and how to make it sooner).
//!
//! [`erasure`]: leadtrack_core::store::erasure

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::activity::{Attribution, ProjectActivity};
use leadtrack_core::store::erasure::{self, Erased, Erasure};
use leadtrack_core::store::sql::{self, PersonKey};
use leadtrack_core::time::to_millis;
use leadtrack_core::types::{LeadId, LeadIdentifier, LeadStatus, ProjectId};
use tokio_postgres::types::ToSql;

use crate::Error;
use crate::activity::{LEAD_CHILDREN, record_project_event};
use crate::leads::{apply, update};
use crate::rows::{self, all, run};

/// The leads not erased yet of the person `who` names, oldest first, as
/// [`sql::person_leads`] finds them, locked when `lock`.
async fn found(
    c: &impl GenericClient,
    project: ProjectId,
    who: &LeadIdentifier,
    (now, lock): (DateTime<Utc>, bool),
) -> Result<Vec<tokio_postgres::Row>, Error> {
    let Some((column, key)) = sql::person_key(who) else {
        return Ok(Vec::new());
    };
    let key: Box<dyn ToSql + Sync + Send> = match key {
        PersonKey::Id(id) => Box::new(id),
        PersonKey::Text(text) => Box::new(text),
    };
    let mut lookup = sql::person_leads(column, ["$1", "$2", "$3"]);
    if lock {
        lookup.push_str(" FOR UPDATE OF l");
    }
    all(c, &lookup, &[&project.0, key.as_ref(), &to_millis(&now)]).await
}

/// The ids of the leads erasing the person `who` names would erase
/// ([`leadtrack_core::LeadStore::person_leads`]).
pub(crate) async fn person_leads(
    c: &impl GenericClient,
    project: ProjectId,
    who: &LeadIdentifier,
) -> Result<Vec<LeadId>, Error> {
    let found = found(c, project, who, (Utc::now(), false)).await?;
    found
        .iter()
        .map(|row| Ok(LeadId(row.try_get(0)?)))
        .collect()
}

/// Erases the leads of the person `who` names, and records it in the project's history.
/// Returns what it erased, and whether it queued webhook events.
pub(crate) async fn erase_person(
    c: &impl GenericClient,
    project: ProjectId,
    who: &LeadIdentifier,
    by: &Attribution,
    now: DateTime<Utc>,
) -> Result<(Erased, bool), Error> {
    let mut erased = Erased::default();
    let found = found(c, project, who, (now, true)).await?;
    let mut leads = Vec::new();
    for row in &found {
        let lead = LeadId(row.try_get(0)?);
        erasure::blocked(lead, row.try_get(3)?)?;
        let status: LeadStatus = rows::parse("status", row.try_get::<_, String>(2)?)?;
        leads.push((lead, row.try_get::<_, String>(1)?, status));
    }
    if leads.is_empty() {
        return Ok((erased, false));
    }
    let mut queued = false;
    for (lead, stored, status) in leads {
        queued |= erase_lead(c, (project, lead), (&stored, status), by, now, &mut erased).await?;
    }
    let activity = ProjectActivity::PersonErased {
        lead_ids: erased.lead_ids.clone(),
    };
    record_project_event(c, project, by, &activity, now).await?;
    Ok((erased, queued))
}

/// Erases one lead, whose stored data is `stored` and status `status`, counting it and
/// what was delivered of it into `erased`. Returns whether it queued webhook events.
async fn erase_lead(
    c: &impl GenericClient,
    (project, lead): (ProjectId, LeadId),
    (stored, status): (&str, LeadStatus),
    by: &Attribution,
    now: DateTime<Utc>,
    erased: &mut Erased,
) -> Result<bool, Error> {
    let planned = Erasure::plan(stored, status, &by.actor)?;
    let delivered = sql::delivered_of_lead(["$1", "$2"]);
    for row in all(c, &delivered, &[&project.0, &lead.0]).await? {
        let count: i64 = row.try_get(1)?;
        erased.add_sent(row.try_get(0)?, u64::try_from(count).unwrap_or_default());
    }
    let settle = sql::settle_pending(["$1", "$2"]);
    run(c, &settle, &[&project.0, &lead.0]).await?;
    for sql in LEAD_CHILDREN {
        run(c, sql, &[&project.0, &lead.0]).await?;
    }
    if let Some(fetched) = &planned.fetched {
        run(c, &sql::forget_fetch(["$1", "$2"]), &[&project.0, fetched]).await?;
    }
    update(c, project, lead, &planned.row, now).await?;
    let sql = "UPDATE leads SET erased_at = $3, note = NULL WHERE project_id = $1 AND id = $2";
    run(c, sql, &[&project.0, &lead.0, &to_millis(&now)]).await?;
    let queued = apply(c, project, (lead, None), &planned.steps(), now).await?;
    erased.erased += 1;
    erased.lead_ids.push(lead);
    Ok(queued)
}
