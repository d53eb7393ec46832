//! Erasing a person ([`leadtrack_core::LeadStore::erase_person`]) as core's [`erasure`]
//! plans it, in one transaction, each lead locked first so that a rating cannot queue a
//! job beside its erasure. PostgreSQL keeps the old row versions until vacuum reclaims
//! them (docs/privacy.md says how soon, and how to make it sooner).
//!
//! [`erasure`]: leadtrack_core::store::erasure

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::account::Actor;
use leadtrack_core::activity::{Attribution, ProjectActivity};
use leadtrack_core::store::erasure::{self, Erased, Erasure};
use leadtrack_core::store::sql::{self, PersonKey};
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::{LeadId, LeadIdentifier, LeadStatus, ProjectId};
use tokio_postgres::types::ToSql;

use crate::Error;
use crate::activity::{LEAD_CHILDREN, record_project_event, remove_lead};
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
        let lead = (project, lead);
        let by = Some(&by.actor);
        queued |= erase_lead(c, lead, (&stored, status), by, now, &mut erased).await?;
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
    by: Option<&Actor>,
    now: DateTime<Utc>,
    erased: &mut Erased,
) -> Result<bool, Error> {
    let planned = Erasure::plan(stored, status, by)?;
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

/// One batch of the project's retention rule
/// ([`leadtrack_core::LeadStore::erase_expired`]): old spam deleted, then old leads erased
/// by the service, from where the last batch left off. Returns how many leads went, and
/// whether it queued webhook events.
pub(crate) async fn erase_expired(
    c: &impl GenericClient,
    project: ProjectId,
    now: DateTime<Utc>,
    limit: u32,
) -> Result<(u64, bool), Error> {
    let retention = crate::admin::project(c, project).await?.retention;
    let (before, spam_before) = retention.cutoffs(now);
    let spam_sql = format!("{} FOR UPDATE", sql::expired_spam(["$1", "$2", "$3"]));
    let limit_param = i64::from(limit);
    let spam = all(
        c,
        &spam_sql,
        &[&project.0, &to_millis(&spam_before), &limit_param],
    )
    .await?;
    for row in &spam {
        remove_lead(c, project, LeadId(row.try_get(0)?)).await?;
    }
    let taken = spam.len() as u64;
    let (erased, queued, done_to) = match before {
        Some(before) if taken < u64::from(limit) => {
            let left = u64::from(limit) - taken;
            erase_old(c, (project, retention.done_to), (before, now), left).await?
        }
        _ => (0, false, retention.done_to),
    };
    let count = i64::try_from(taken + erased).unwrap_or(i64::MAX);
    let record = sql::record_retention(["$1", "$2", "$3", "$4"]);
    let done_to = done_to.as_ref().map(to_millis);
    run(
        c,
        &record,
        &[&project.0, &done_to, &to_millis(&now), &count],
    )
    .await?;
    Ok((taken + erased, queued))
}

/// Erases up to `left` leads created before `before`, from `done_to` on; returns how many,
/// whether it queued webhook events, and where the rule leaves off
/// ([`erasure::retention_done_to`]).
async fn erase_old(
    c: &impl GenericClient,
    (project, done_to): (ProjectId, Option<DateTime<Utc>>),
    (before, now): (DateTime<Utc>, DateTime<Utc>),
    left: u64,
) -> Result<(u64, bool, Option<DateTime<Utc>>), Error> {
    let from = done_to.as_ref().map_or(i64::MIN, to_millis);
    let lookup = format!(
        "{} FOR UPDATE OF l",
        sql::expired_leads(["$1", "$2", "$3", "$4", "$5"])
    );
    let limit = i64::try_from(left).unwrap_or(i64::MAX);
    let params: [&(dyn ToSql + Sync); 5] = [
        &project.0,
        &from,
        &to_millis(&before),
        &to_millis(&now),
        &limit,
    ];
    let found = all(c, &lookup, &params).await?;
    let complete = (found.len() as u64) < left;
    let (mut erased, mut queued, mut reached) = (Erased::default(), false, None);
    for row in &found {
        if row.try_get::<_, bool>(3)? {
            // The next run takes it up, once its delivery has an answer.
            let done = erasure::retention_done_to(done_to, reached, (false, before));
            return Ok((erased.erased, queued, done));
        }
        let lead = (project, LeadId(row.try_get(0)?));
        let status: LeadStatus = rows::parse("status", row.try_get::<_, String>(2)?)?;
        let stored: String = row.try_get(1)?;
        queued |= erase_lead(c, lead, (&stored, status), None, now, &mut erased).await?;
        reached = Some(from_millis(row.try_get(4)?));
    }
    let done = erasure::retention_done_to(done_to, reached, (complete, before));
    Ok((erased.erased, queued, done))
}
