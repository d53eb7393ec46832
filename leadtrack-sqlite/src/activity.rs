//! A lead's history: events recorded by the writes that change a lead, in their own
//! transaction, and read back oldest first.

use leadtrack_core::activity::{EventRow, LeadEvent};
use leadtrack_core::types::{LeadId, ProjectId};
use rusqlite::Connection;

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
    Ok(())
}

/// The lead's events, oldest first (ties in the order recorded); none for a lead that is
/// not the project's.
pub(crate) fn lead_activity(
    conn: &Connection,
    project: ProjectId,
    lead: LeadId,
) -> Result<Vec<LeadEvent>, Error> {
    conn.prepare_cached(&format!(
        "SELECT {EVENT_COLUMNS} FROM lead_events WHERE lead_id = ?1 AND project_id = ?2
         ORDER BY at, id"
    ))?
    .query_and_then((lead.0, project.0), rows::event)?
    .collect()
}
