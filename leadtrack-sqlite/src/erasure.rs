//! Erasing a person ([`leadtrack_core::LeadStore::erase_person`]) as core's [`erasure`]
//! plans it. With `secure_delete` on for the erasure, the bytes of what it removes or
//! rewrites are zeroed in the file, not left in free space; the word index deletes its
//! entries for good too (its `secure-delete` option, migration 57). After a checkpoint,
//! neither the database file nor its WAL holds them.
//!
//! [`erasure`]: leadtrack_core::store::erasure

use chrono::{DateTime, Utc};
use leadtrack_core::activity::{Attribution, ProjectActivity};
use leadtrack_core::store::erasure::{self, Erased, Erasure};
use leadtrack_core::store::sql::{self, PersonKey};
use leadtrack_core::time::to_millis;
use leadtrack_core::types::{LeadId, LeadIdentifier, LeadStatus, ProjectId};
use rusqlite::Connection;
use rusqlite::types::Value as SqlValue;

use crate::activity::{LEAD_CHILDREN, record_project_event};
use crate::leads::{Write, apply, write_row};
use crate::rows::{self, Error};

/// A lead of a person, as [`sql::person_leads`] finds it: its id, data, status, and
/// whether a worker is delivering one of its jobs.
type Found = (LeadId, String, String, bool);

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
            Ok((LeadId(row.get(0)?), row.get(1)?, row.get(2)?, row.get(3)?))
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
        erase_lead(conn, lead, (&stored, status), by, now, &mut erased)
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
    by: &Attribution,
    now: DateTime<Utc>,
    erased: &mut Erased,
) -> Result<(), Error> {
    let planned = Erasure::plan(stored, status, &by.actor)?;
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
    write_row(conn, Write::Update(lead), project, &planned.row, now)?;
    conn.prepare_cached("UPDATE leads SET erased_at = ?2, note = NULL WHERE id = ?1")?
        .execute((lead.0, to_millis(&now)))?;
    apply(conn, project, (lead, None), &planned.steps(), now)?;
    erased.erased += 1;
    erased.lead_ids.push(lead);
    Ok(())
}
