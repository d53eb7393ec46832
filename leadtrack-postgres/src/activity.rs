//! A lead's history: events recorded by the writes that change a lead, in their own
//! transaction, and read back oldest first.

use deadpool_postgres::GenericClient;
use leadtrack_core::activity::{EventRow, LeadEvent};
use leadtrack_core::types::{LeadId, ProjectId};

use crate::Error;
use crate::rows::{self, EVENT_COLUMNS, all, run};

/// Adds an event to the lead's history. Called inside the write that makes the change, so
/// the event commits (or rolls back) with it.
pub(crate) async fn record(c: &impl GenericClient, event: &EventRow) -> Result<(), Error> {
    run(
        c,
        "INSERT INTO lead_events (project_id, lead_id, at, actor, activity)
         VALUES ($1, $2, $3, $4, $5)",
        &[
            &event.project.0,
            &event.lead.0,
            &event.at,
            &event.actor,
            &event.activity,
        ],
    )
    .await?;
    Ok(())
}

/// The lead's events, oldest first (ties in the order recorded); none for a lead that is
/// not the project's.
pub(crate) async fn lead_activity(
    c: &impl GenericClient,
    project: ProjectId,
    lead: LeadId,
) -> Result<Vec<LeadEvent>, Error> {
    let sql = format!(
        "SELECT {EVENT_COLUMNS} FROM lead_events WHERE project_id = $1 AND lead_id = $2
         ORDER BY at, id"
    );
    all(c, &sql, &[&project.0, &lead.0])
        .await?
        .iter()
        .map(rows::event)
        .collect()
}
