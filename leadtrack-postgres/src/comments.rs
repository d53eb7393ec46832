//! A lead's comments: written, edited and deleted by their author, each change recorded in
//! the lead's history in the same transaction. A new comment locks its lead (`FOR SHARE`),
//! so that a deletion of the lead waits for it, and then deletes it with the lead.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::account::Actor;
use leadtrack_core::activity::{Activity, EventRow};
use leadtrack_core::comment::{self, Comment, comment_text};
use leadtrack_core::store::{Entity, StoreError};
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::{LeadId, ProjectId};
use tokio_postgres::Row;

use crate::Error;
use crate::activity;
use crate::rows::{self, all, one};

const COLUMNS: &str = "id, lead_id, author, text, created_at, edited_at";

fn from_row(row: &Row) -> Result<Comment, Error> {
    Ok(Comment {
        id: row.try_get(0)?,
        lead: LeadId(row.try_get(1)?),
        author: serde_json::from_str(row.try_get::<_, &str>(2)?)?,
        text: row.try_get(3)?,
        created_at: from_millis(row.try_get(4)?),
        edited_at: row.try_get::<_, Option<i64>>(5)?.map(from_millis),
    })
}

/// The id of the user behind `actor`, who alone may change what they wrote.
fn author_id(actor: &Actor) -> Option<i64> {
    comment::author_id(actor).map(|id| id.0)
}

fn checked(text: &str) -> Result<String, Error> {
    comment_text(text).map_err(|e| Error::Store(StoreError::Invalid(e)))
}

fn not_found() -> Error {
    Error::Store(StoreError::NotFound(Entity::Comment))
}

/// Records `activity` on the lead, by `by`, at `now`.
async fn record(
    c: &impl GenericClient,
    (project, lead): (ProjectId, LeadId),
    by: &Actor,
    activity: &Activity,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    activity::record(c, &EventRow::of((project, lead), now, Some(by), activity)?).await
}

pub(crate) async fn add(
    c: &impl GenericClient,
    (project, lead): (ProjectId, LeadId),
    author: &Actor,
    text: &str,
    now: DateTime<Utc>,
) -> Result<Comment, Error> {
    let text = checked(text)?;
    rows::lock_lead(c, project, lead).await?;
    let sql = format!(
        "INSERT INTO lead_comments (project_id, lead_id, author_id, author, text, created_at)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING {COLUMNS}"
    );
    let row = one(
        c,
        &sql,
        &[
            &project.0,
            &lead.0,
            &author_id(author),
            &rows::actor_json(Some(author))?,
            &text,
            &to_millis(&now),
        ],
    )
    .await?
    .ok_or_else(not_found)?;
    let added = from_row(&row)?;
    let commented = Activity::Commented {
        comment_id: added.id,
    };
    record(c, (project, lead), author, &commented, now).await?;
    Ok(added)
}

pub(crate) async fn list(
    c: &impl GenericClient,
    project: ProjectId,
    lead: LeadId,
) -> Result<Vec<Comment>, Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM lead_comments WHERE project_id = $1 AND lead_id = $2 ORDER BY id"
    );
    all(c, &sql, &[&project.0, &lead.0])
        .await?
        .iter()
        .map(from_row)
        .collect()
}

pub(crate) async fn edit(
    c: &impl GenericClient,
    project: ProjectId,
    (lead, id): (LeadId, i64),
    author: &Actor,
    text: &str,
    now: DateTime<Utc>,
) -> Result<Comment, Error> {
    let text = checked(text)?;
    let sql = format!(
        "UPDATE lead_comments SET text = $5, edited_at = $6
         WHERE project_id = $1 AND lead_id = $2 AND id = $3 AND author_id = $4
         RETURNING {COLUMNS}"
    );
    let row = one(
        c,
        &sql,
        &[
            &project.0,
            &lead.0,
            &id,
            &author_id(author),
            &text,
            &to_millis(&now),
        ],
    )
    .await?
    .ok_or_else(not_found)?;
    let edited = Activity::CommentEdited { comment_id: id };
    record(c, (project, lead), author, &edited, now).await?;
    from_row(&row)
}

pub(crate) async fn delete(
    c: &impl GenericClient,
    project: ProjectId,
    (lead, id): (LeadId, i64),
    author: &Actor,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let deleted = one(
        c,
        "DELETE FROM lead_comments
         WHERE project_id = $1 AND lead_id = $2 AND id = $3 AND author_id = $4 RETURNING id",
        &[&project.0, &lead.0, &id, &author_id(author)],
    )
    .await?;
    if deleted.is_none() {
        return Err(not_found());
    }
    let activity = Activity::CommentDeleted { comment_id: id };
    record(c, (project, lead), author, &activity, now).await
}
