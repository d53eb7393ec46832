//! Saved inbox views ([`leadtrack_core::saved_view`]): a user's own and their team's.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::saved_view::{NewSavedView, SavedView};
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::{ProjectId, UserId};
use tokio_postgres::Row;

use crate::Error;
use crate::rows::{all, run};

const VIEW_COLUMNS: &str = "id, name, query, columns, owner_id, shared, saved_at";

fn view(row: &Row) -> Result<SavedView, Error> {
    let columns: Option<&str> = row.try_get(3)?;
    Ok(SavedView {
        id: row.try_get(0)?,
        name: row.try_get(1)?,
        query: row.try_get(2)?,
        // Written by `save` from a list of names: anything else reads as no columns.
        columns: columns.and_then(|json| serde_json::from_str(json).ok()),
        owner: UserId(row.try_get(4)?),
        shared: row.try_get(5)?,
        saved_at: from_millis(row.try_get(6)?),
    })
}

/// Saves `new` for `owner`, or the team, replacing the view of its name there.
pub(crate) async fn save(
    c: &impl GenericClient,
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
    let sql = format!(
        "INSERT INTO saved_views (project_id, owner_id, shared, scope, name, query, columns,
             saved_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (project_id, scope, name) DO UPDATE SET owner_id = excluded.owner_id,
             query = excluded.query, columns = excluded.columns, saved_at = excluded.saved_at
         RETURNING {VIEW_COLUMNS}"
    );
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 8] = [
        &project.0,
        &owner.0,
        &new.shared,
        &scope,
        &new.name,
        &new.query,
        &columns,
        &to_millis(&now),
    ];
    let row = c.query_one(&c.prepare_cached(&sql).await?, &params).await?;
    view(&row)
}

/// The views `user` sees in the project: their own, then the team's, each by name.
pub(crate) async fn list(
    c: &impl GenericClient,
    project: ProjectId,
    user: UserId,
) -> Result<Vec<SavedView>, Error> {
    let sql = format!(
        "SELECT {VIEW_COLUMNS} FROM saved_views
         WHERE project_id = $1 AND scope IN ($2, 0)
         ORDER BY shared, name COLLATE \"C\", id"
    );
    all(c, &sql, &[&project.0, &user.0])
        .await?
        .iter()
        .map(view)
        .collect()
}

/// Deletes one of the project's views; whether it had it.
pub(crate) async fn delete(
    c: &impl GenericClient,
    project: ProjectId,
    id: i64,
) -> Result<bool, Error> {
    let sql = "DELETE FROM saved_views WHERE project_id = $1 AND id = $2";
    Ok(run(c, sql, &[&project.0, &id]).await? > 0)
}
