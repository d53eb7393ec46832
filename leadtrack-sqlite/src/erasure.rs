//! Erasing a person ([`leadtrack_core::LeadStore::erase_person`]) as core's [`erasure`]
//! plans it. With `secure_delete` on for the erasure, the bytes of what it removes or
//! rewrites are zeroed in the file, not left in free space; the word index deletes its
//! entries for good too (its `secure-delete` option, migration 57). After a checkpoint,
//! neither the database file nor its WAL holds them.
//!
//! [`erasure`]: leadtrack_core::store::erasure

use chrono::{DateTime, Utc};
use leadtrack_core::account::Actor;
use leadtrack_core::activity::{Attribution, ProjectActivity};
use leadtrack_core::store::erasure::{self, Erased, Erasure};
use leadtrack_core::store::sql::{self, PersonKey};
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::{LeadId, LeadIdentifier, LeadStatus, ProjectId};
use rusqlite::Connection;
use rusqlite::types::Value as SqlValue;

use crate::activity::{LEAD_CHILDREN, record_project_event, remove_lead};
use crate::leads::{apply, rewrite_row};
use crate::packed;
use crate::rows::{self, Error};

/// A lead of a person, as [`sql::person_leads`] finds it: its id, data, status, and
/// whether a worker is delivering one of its jobs.
type Found = (LeadId, String, String, bool);

/// The JSON of a lead found by [`sql::person_leads`] or [`sql::expired_leads`].
fn json(row: &rusqlite::Row<'_>) -> rusqlite::Result<String> {
    Ok(row.get::<_, packed::Json>(1)?.0)
}

/// The leads not erased yet of the person `who` names, oldest first.
fn found(
    conn: &Connection,
    project: ProjectId,
    who: &LeadIdentifier,
    now: DateTime<Utc>,
) -> Result<Vec<Found>, Error> {
    let Some((column, key)) = sql::person_key(who) else {
        return Ok(Vec::new());
    };
    let key = match key {
        PersonKey::Id(id) => SqlValue::Integer(id),
        PersonKey::Text(text) => SqlValue::Text(text),
    };
    let found = conn
        .prepare_cached(&sql::person_leads(column, ["?1", "?2", "?3"]))?
        .query_map((project.0, key, to_millis(&now)), |row| {
            Ok((LeadId(row.get(0)?), json(row)?, row.get(2)?, row.get(3)?))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(found)
}

/// The ids of the leads erasing the person `who` names would erase
/// ([`leadtrack_core::LeadStore::person_leads`]).
pub(crate) fn person_leads(
    conn: &Connection,
    project: ProjectId,
    who: &LeadIdentifier,
) -> Result<Vec<LeadId>, Error> {
    let found = found(conn, project, who, Utc::now())?;
    Ok(found.into_iter().map(|(lead, ..)| lead).collect())
}

/// Erases the leads of the person `who` names, and records it in the project's history.
pub(crate) fn erase_person(
    conn: &Connection,
    project: ProjectId,
    who: &LeadIdentifier,
    by: &Attribution,
    now: DateTime<Utc>,
) -> Result<Erased, Error> {
    let found = found(conn, project, who, now)?;
    let mut erased = Erased::default();
    if found.is_empty() {
        return Ok(erased);
    }
    for (lead, _, _, delivering) in &found {
        erasure::blocked(*lead, *delivering)?;
    }
    conn.pragma_update(None, "secure_delete", true)?;
    let written = found.into_iter().try_for_each(|(lead, stored, status, _)| {
        let status: LeadStatus = rows::parse("status", status)?;
        let lead = (project, lead);
        erase_lead(
            conn,
            lead,
            (&stored, status),
            Some(&by.actor),
            now,
            &mut erased,
        )
    });
    // Off again whatever happened: the writer's other work frees nothing personal.
    conn.pragma_update(None, "secure_delete", false)?;
    written?;
    let activity = ProjectActivity::PersonErased {
        lead_ids: erased.lead_ids.clone(),
    };
    record_project_event(conn, project, by, &activity, now)?;
    Ok(erased)
}

/// Erases one lead, whose stored data is `stored` and status `status`, counting it and
/// what was delivered of it into `erased`.
fn erase_lead(
    conn: &Connection,
    (project, lead): (ProjectId, LeadId),
    (stored, status): (&str, LeadStatus),
    by: Option<&Actor>,
    now: DateTime<Utc>,
    erased: &mut Erased,
) -> Result<(), Error> {
    let planned = Erasure::plan(stored, status, by)?;
    let delivered = conn
        .prepare_cached(&sql::delivered_of_lead(["?1", "?2"]))?
        .query_map((project.0, lead.0), |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    for (destination, count) in delivered {
        erased.add_sent(&destination, u64::try_from(count).unwrap_or_default());
    }
    conn.prepare_cached(&sql::settle_pending(["?1", "?2"]))?
        .execute((project.0, lead.0))?;
    for sql in LEAD_CHILDREN {
        conn.prepare_cached(sql)?.execute((project.0, lead.0))?;
    }
    if let Some(fetched) = &planned.fetched {
        conn.prepare_cached(&sql::forget_fetch(["?1", "?2"]))?
            .execute((project.0, fetched))?;
    }
    rewrite_row(conn, project, lead, &planned.row, now)?;
    conn.prepare_cached("UPDATE leads SET erased_at = ?2, note = NULL WHERE id = ?1")?
        .execute((lead.0, to_millis(&now)))?;
    apply(conn, project, (lead, None), &planned.steps(), now)?;
    erased.erased += 1;
    erased.lead_ids.push(lead);
    Ok(())
}

/// One batch of the project's retention rule
/// ([`leadtrack_core::LeadStore::erase_expired`]): old spam deleted, then old leads erased
/// by the service, from where the last batch left off.
pub(crate) fn erase_expired(
    conn: &Connection,
    project: ProjectId,
    now: DateTime<Utc>,
    limit: u32,
) -> Result<u64, Error> {
    let retention = crate::admin::project(conn, project)?.retention;
    let (before, spam_before) = retention.cutoffs(now);
    let spam: Vec<i64> = conn
        .prepare_cached(&sql::expired_spam(["?1", "?2", "?3"]))?
        .query_map((project.0, to_millis(&spam_before), limit), |row| {
            row.get(0)
        })?
        .collect::<Result<_, _>>()?;
    conn.pragma_update(None, "secure_delete", true)?;
    let taken = spam.len() as u64;
    let written = spam
        .iter()
        .try_for_each(|lead| remove_lead(conn, project, LeadId(*lead)));
    let erased = written.and_then(|()| match before {
        Some(before) if taken < u64::from(limit) => {
            let left = u64::from(limit) - taken;
            erase_old(conn, (project, retention.done_to), (before, now), left)
        }
        _ => Ok((0, retention.done_to)),
    });
    conn.pragma_update(None, "secure_delete", false)?;
    let (erased, done_to) = erased?;
    conn.prepare_cached(&sql::record_retention(["?1", "?2", "?3", "?4"]))?
        .execute((
            project.0,
            done_to.as_ref().map(to_millis),
            to_millis(&now),
            i64::try_from(taken + erased).unwrap_or(i64::MAX),
        ))?;
    Ok(taken + erased)
}

/// Erases up to `left` leads created before `before`, from `done_to` on; returns how many,
/// and where the rule leaves off ([`erasure::retention_done_to`]).
fn erase_old(
    conn: &Connection,
    (project, done_to): (ProjectId, Option<DateTime<Utc>>),
    (before, now): (DateTime<Utc>, DateTime<Utc>),
    left: u64,
) -> Result<(u64, Option<DateTime<Utc>>), Error> {
    let from = done_to.as_ref().map_or(i64::MIN, to_millis);
    let sql = sql::expired_leads(["?1", "?2", "?3", "?4", "?5"]);
    let found: Vec<(Found, i64)> = conn
        .prepare_cached(&sql)?
        .query_map(
            (
                project.0,
                from,
                to_millis(&before),
                to_millis(&now),
                i64::try_from(left).unwrap_or(i64::MAX),
            ),
            |row| {
                let lead = (LeadId(row.get(0)?), json(row)?, row.get(2)?, row.get(3)?);
                Ok((lead, row.get(4)?))
            },
        )?
        .collect::<Result<_, _>>()?;
    let complete = (found.len() as u64) < left;
    let mut erased = Erased::default();
    let mut reached = None;
    for ((lead, stored, status, delivering), created_at) in found {
        if delivering {
            // The next run takes it up, once its delivery has an answer.
            let done = erasure::retention_done_to(done_to, reached, (false, before));
            return Ok((erased.erased, done));
        }
        let status: LeadStatus = rows::parse("status", status)?;
        erase_lead(
            conn,
            (project, lead),
            (&stored, status),
            None,
            now,
            &mut erased,
        )?;
        reached = Some(from_millis(created_at));
    }
    let done = erasure::retention_done_to(done_to, reached, (complete, before));
    Ok((erased.erased, done))
}
