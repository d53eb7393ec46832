//! A lead's comments: written, edited and deleted by their author, each change recorded in
//! the lead's history in the same write.

use chrono::{DateTime, Utc};
use leadtrack_core::account::Actor;
use leadtrack_core::activity::{Activity, EventRow};
use leadtrack_core::comment::{self, Comment, comment_text};
use leadtrack_core::store::{Entity, StoreError};
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::{LeadId, ProjectId};
use rusqlite::{Connection, Row};

use crate::activity;
use crate::rows::{self, Error};

const COLUMNS: &str = "id, lead_id, author, text, created_at, edited_at";

fn from_row(row: &Row<'_>) -> Result<Comment, Error> {
    Ok(Comment {
        id: row.get(0)?,
        lead: LeadId(row.get(1)?),
        author: serde_json::from_str(&row.get::<_, String>(2)?)?,
        text: row.get(3)?,
        created_at: from_millis(row.get(4)?),
        edited_at: row.get::<_, Option<i64>>(5)?.map(from_millis),
    })
}

/// The id of the user behind `actor`, who alone may change what they wrote.
fn author_id(actor: &Actor) -> Option<i64> {
    comment::author_id(actor).map(|id| id.0)
}

fn checked(text: &str) -> Result<String, Error> {
    comment_text(text).map_err(|e| Error::Store(StoreError::Invalid(e)))
}

/// Records `activity` on the lead, by `by`, at `now`.
fn record(
    conn: &Connection,
    (project, lead): (ProjectId, LeadId),
    by: &Actor,
    activity: &Activity,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    activity::record(
        conn,
        &EventRow::of((project, lead), now, Some(by), activity)?,
    )
}

pub(crate) fn add(
    conn: &Connection,
    (project, lead): (ProjectId, LeadId),
    author: &Actor,
    text: &str,
    now: DateTime<Utc>,
) -> Result<Comment, Error> {
    let text = checked(text)?;
    rows::lead_exists(conn, project, lead)?;
    let id: i64 = conn
        .prepare_cached(
            "INSERT INTO lead_comments (project_id, lead_id, author_id, author, text, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
        )?
        .query_row(
            (
                project.0,
                lead.0,
                author_id(author),
                rows::actor_json(Some(author))?,
                &text,
                to_millis(&now),
            ),
            |row| row.get(0),
        )?;
    record(
        conn,
        (project, lead),
        author,
        &Activity::Commented { comment_id: id },
        now,
    )?;
    find(conn, project, (lead, id))
}

fn find(
    conn: &Connection,
    project: ProjectId,
    (lead, id): (LeadId, i64),
) -> Result<Comment, Error> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM lead_comments WHERE project_id = ?1 AND lead_id = ?2 AND id = ?3"
    ))?
    .query_and_then((project.0, lead.0, id), from_row)?
    .next()
    .ok_or(Error::Store(StoreError::NotFound(Entity::Comment)))?
}

pub(crate) fn list(
    conn: &Connection,
    project: ProjectId,
    lead: LeadId,
) -> Result<Vec<Comment>, Error> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM lead_comments WHERE project_id = ?1 AND lead_id = ?2 ORDER BY id"
    ))?
    .query_and_then((project.0, lead.0), from_row)?
    .collect()
}

pub(crate) fn edit(
    conn: &Connection,
    project: ProjectId,
    (lead, id): (LeadId, i64),
    author: &Actor,
    text: &str,
    now: DateTime<Utc>,
) -> Result<Comment, Error> {
    let text = checked(text)?;
    let changed = conn
        .prepare_cached(
            "UPDATE lead_comments SET text = ?5, edited_at = ?6
             WHERE project_id = ?1 AND lead_id = ?2 AND id = ?3 AND author_id = ?4",
        )?
        .execute((
            project.0,
            lead.0,
            id,
            author_id(author),
            &text,
            to_millis(&now),
        ))?;
    if changed == 0 {
        return Err(Error::Store(StoreError::NotFound(Entity::Comment)));
    }
    record(
        conn,
        (project, lead),
        author,
        &Activity::CommentEdited { comment_id: id },
        now,
    )?;
    find(conn, project, (lead, id))
}

pub(crate) fn delete(
    conn: &Connection,
    project: ProjectId,
    (lead, id): (LeadId, i64),
    author: &Actor,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let deleted = conn
        .prepare_cached(
            "DELETE FROM lead_comments
             WHERE project_id = ?1 AND lead_id = ?2 AND id = ?3 AND author_id = ?4",
        )?
        .execute((project.0, lead.0, id, author_id(author)))?;
    if deleted == 0 {
        return Err(Error::Store(StoreError::NotFound(Entity::Comment)));
    }
    record(
        conn,
        (project, lead),
        author,
        &Activity::CommentDeleted { comment_id: id },
        now,
    )
}
