//! Drafts ([`leadtrack_core::draft`]): one per lead, kept with the project, discarded by any
//! rating of the lead ([`discard`], called by the rating's own write).

use leadtrack_core::draft::Draft;
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::{LeadId, ProjectId};
use rusqlite::Connection;

use crate::rows::{self, Error};

/// Keeps `draft` as its lead's draft, in place of any it had.
pub(crate) fn save(conn: &Connection, project: ProjectId, draft: &Draft) -> Result<(), Error> {
    rows::lead_exists(conn, project, draft.lead_id)?;
    conn.prepare_cached(
        "INSERT INTO rating_drafts (lead_id, project_id, conversion_id, price, actor, at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (lead_id) DO UPDATE SET conversion_id = excluded.conversion_id,
             price = excluded.price, actor = excluded.actor, at = excluded.at",
    )?
    .execute((
        draft.lead_id.0,
        project.0,
        draft.conversion_id.to_string(),
        draft.price,
        serde_json::to_string(&draft.by)?,
        to_millis(&draft.at),
    ))?;
    Ok(())
}

/// Drops the lead's draft; whether it had one.
pub(crate) fn discard(conn: &Connection, project: ProjectId, lead: LeadId) -> Result<bool, Error> {
    let dropped = conn
        .prepare_cached("DELETE FROM rating_drafts WHERE project_id = ?1 AND lead_id = ?2")?
        .execute((project.0, lead.0))?;
    Ok(dropped > 0)
}

/// The project's drafts, oldest first.
pub(crate) fn list(conn: &Connection, project: ProjectId) -> Result<Vec<Draft>, Error> {
    conn.prepare_cached(
        "SELECT lead_id, conversion_id, price, actor, at FROM rating_drafts
         WHERE project_id = ?1 ORDER BY at, lead_id",
    )?
    .query_and_then([project.0], |row| {
        Ok(Draft {
            lead_id: LeadId(row.get(0)?),
            conversion_id: rows::parse("rating_drafts.conversion_id", row.get(1)?)?,
            price: row.get(2)?,
            by: serde_json::from_str(&row.get::<_, String>(3)?)?,
            at: from_millis(row.get(4)?),
        })
    })?
    .collect()
}
