//! Saved inbox views ([`leadtrack_core::saved_view`]): a user's own and their team's.

use chrono::{DateTime, Utc};
use leadtrack_core::saved_view::{NewSavedView, SavedView};
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::{ProjectId, UserId};
use rusqlite::{Connection, Row};

use crate::rows::Error;

const VIEW_COLUMNS: &str = "id, name, query, columns, owner_id, shared, saved_at";

fn view(row: &Row<'_>) -> rusqlite::Result<SavedView> {
    let columns: Option<String> = row.get(3)?;
    Ok(SavedView {
        id: row.get(0)?,
        name: row.get(1)?,
        query: row.get(2)?,
        // Written by `save` from a list of names: anything else reads as no columns.
        columns: columns.and_then(|json| serde_json::from_str(&json).ok()),
        owner: UserId(row.get(4)?),
        shared: row.get(5)?,
        saved_at: from_millis(row.get(6)?),
    })
}

/// Saves `new` for `owner`, or the team, replacing the view of its name there.
pub(crate) fn save(
    conn: &Connection,
    project: ProjectId,
    owner: UserId,
    new: &NewSavedView,
    now: DateTime<Utc>,
) -> Result<SavedView, Error> {
    // Names are unique per place: the owner's own views (`scope` is the owner) or the
    // team's (`scope` 0).
    let scope = if new.shared { 0 } else { owner.0 };
    let columns = match &new.columns {
        Some(columns) => Some(serde_json::to_string(columns)?),
        None => None,
    };
    Ok(conn
        .prepare_cached(&format!(
            "INSERT INTO saved_views (project_id, owner_id, shared, scope, name, query, columns,
                 saved_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT (project_id, scope, name) DO UPDATE SET owner_id = excluded.owner_id,
                 query = excluded.query, columns = excluded.columns,
                 saved_at = excluded.saved_at
             RETURNING {VIEW_COLUMNS}"
        ))?
        .query_row(
            (
                project.0,
                owner.0,
                new.shared,
                scope,
                &new.name,
                &new.query,
                columns,
                to_millis(&now),
            ),
            view,
        )?)
}

/// The views `user` sees in the project: their own, then the team's, each by name.
pub(crate) fn list(
    conn: &Connection,
    project: ProjectId,
    user: UserId,
) -> Result<Vec<SavedView>, Error> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {VIEW_COLUMNS} FROM saved_views
             WHERE project_id = ?1 AND scope IN (?2, 0)
             ORDER BY shared, name, id"
        ))?
        .query_map((project.0, user.0), view)?
        .collect::<Result<_, _>>()?)
}

/// Deletes one of the project's views; whether it had it.
pub(crate) fn delete(conn: &Connection, project: ProjectId, id: i64) -> Result<bool, Error> {
    Ok(conn
        .prepare_cached("DELETE FROM saved_views WHERE project_id = ?1 AND id = ?2")?
        .execute((project.0, id))?
        > 0)
}
