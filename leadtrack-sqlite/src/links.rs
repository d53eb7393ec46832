//! Invitations and links about an account (password resets, email changes): kept as their
//! link's SHA-256 only, found by it while live ([`LinkKind::lifetime`]), and deleted when
//! taken, in the write that checks them, so that a link works once.

use chrono::{DateTime, Utc};
use leadtrack_core::account::{PasswordHash, User, email_key};
use leadtrack_core::link::{
    Acceptance, AccountLink, Invitation, LinkHash, LinkKind, NewInvitation,
};
use leadtrack_core::project::Project;
use leadtrack_core::store::{Conflict, Entity, StoreError};
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::{ProjectId, Role, UserId};
use rusqlite::{Connection, OptionalExtension, Row};

use crate::accounts;
use crate::admin;
use crate::rows::{self, Error};

fn not_found(entity: Entity) -> Error {
    Error::Store(StoreError::NotFound(entity))
}

// ----- links about an account -----

/// Makes the link, replacing the user's earlier one of its kind.
pub(crate) fn issue(
    conn: &Connection,
    user: UserId,
    (link, hash): (&AccountLink, &LinkHash),
    now: DateTime<Utc>,
    unless_since: Option<DateTime<Utc>>,
) -> Result<bool, Error> {
    accounts::user(conn, user)?;
    // The earlier link is replaced unless it was made after `unless_since`.
    let made = conn
        .prepare_cached(
            "INSERT INTO account_links (user_id, kind, link_hash, email, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (user_id, kind) DO UPDATE SET link_hash = excluded.link_hash,
                 email = excluded.email, created_at = excluded.created_at
             WHERE ?6 IS NULL OR account_links.created_at <= ?6",
        )?
        .execute((
            user.0,
            link.kind().as_ref(),
            &hash.0[..],
            link.email(),
            to_millis(&now),
            unless_since.as_ref().map(to_millis),
        ))?;
    Ok(made > 0)
}

/// Takes the live link of `kind` with this hash: deletes it and answers its user and the
/// email it holds.
fn take(
    conn: &Connection,
    hash: &LinkHash,
    kind: LinkKind,
    now: DateTime<Utc>,
) -> Result<(UserId, Option<String>), Error> {
    conn.prepare_cached(
        "DELETE FROM account_links WHERE link_hash = ?1 AND kind = ?2 AND created_at > ?3
         RETURNING user_id, email",
    )?
    .query_row(
        (
            &hash.0[..],
            kind.as_ref(),
            to_millis(&(now - kind.lifetime())),
        ),
        |row| Ok((UserId(row.get(0)?), row.get(1)?)),
    )
    .optional()?
    .ok_or_else(|| not_found(Entity::Link))
}

/// Takes a password-reset link: the new password, every session ended.
pub(crate) fn reset_password(
    conn: &Connection,
    hash: &LinkHash,
    password: &PasswordHash,
    now: DateTime<Utc>,
) -> Result<User, Error> {
    let (user, _) = take(conn, hash, LinkKind::PasswordReset, now)?;
    accounts::set_password(conn, user, password)?;
    accounts::user(conn, user)
}

/// Takes an email-change link: the email it holds becomes the user's, unless another user
/// has it (then the write rolls back, and the link with it).
pub(crate) fn confirm_email(
    conn: &Connection,
    hash: &LinkHash,
    now: DateTime<Utc>,
) -> Result<User, Error> {
    let (user, email) = take(conn, hash, LinkKind::EmailChange, now)?;
    let email = email.ok_or_else(|| not_found(Entity::Link))?;
    let key = email_key(&email);
    let taken = conn
        .prepare_cached("SELECT 1 FROM users WHERE email_key = ?1 AND id <> ?2")?
        .query_row((&key, user.0), |_| Ok(()))
        .optional()?;
    if taken.is_some() {
        return Err(Error::Store(StoreError::Conflict(Conflict::UserExists(
            email,
        ))));
    }
    conn.prepare_cached("UPDATE users SET email = ?2, email_key = ?3 WHERE id = ?1")?
        .execute((user.0, &email, &key))?;
    accounts::user(conn, user)
}

// ----- invitations -----

const INVITATION_COLUMNS: &str = "id, project_id, email, role, invited_by, sent_at";

fn invitation_row(row: &Row<'_>) -> Result<Invitation, Error> {
    Ok(Invitation {
        id: row.get(0)?,
        project: ProjectId(row.get(1)?),
        email: row.get(2)?,
        role: rows::parse::<Role>("invitations.role", row.get(3)?)?,
        invited_by: row.get(4)?,
        sent_at: from_millis(row.get(5)?),
    })
}

/// Invites someone, or renews their pending invitation to the project.
pub(crate) fn invite(
    conn: &Connection,
    project: ProjectId,
    new: &NewInvitation,
    hash: &LinkHash,
    now: DateTime<Utc>,
) -> Result<Invitation, Error> {
    admin::project(conn, project)?;
    conn.prepare_cached(&format!(
        "INSERT INTO invitations (project_id, email, email_key, role, invited_by, link_hash, sent_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (project_id, email_key) DO UPDATE SET email = excluded.email,
             role = excluded.role, invited_by = excluded.invited_by,
             link_hash = excluded.link_hash, sent_at = excluded.sent_at
         RETURNING {INVITATION_COLUMNS}"
    ))?
    .query_and_then(
        (
            project.0,
            &new.email,
            email_key(&new.email),
            new.role.as_ref(),
            &new.invited_by,
            &hash.0[..],
            to_millis(&now),
        ),
        invitation_row,
    )?
    .next()
    .ok_or_else(|| not_found(Entity::Project))?
}

/// The project's pending invitations, newest first.
pub(crate) fn invitations(conn: &Connection, project: ProjectId) -> Result<Vec<Invitation>, Error> {
    conn.prepare_cached(&format!(
        "SELECT {INVITATION_COLUMNS} FROM invitations WHERE project_id = ?1
         ORDER BY sent_at DESC, id DESC"
    ))?
    .query_and_then([project.0], invitation_row)?
    .collect()
}

/// Gives a pending invitation a new link.
pub(crate) fn renew(
    conn: &Connection,
    project: ProjectId,
    id: i64,
    hash: &LinkHash,
    now: DateTime<Utc>,
) -> Result<Invitation, Error> {
    conn.prepare_cached(&format!(
        "UPDATE invitations SET link_hash = ?3, sent_at = ?4
         WHERE project_id = ?1 AND id = ?2 RETURNING {INVITATION_COLUMNS}"
    ))?
    .query_and_then(
        (project.0, id, &hash.0[..], to_millis(&now)),
        invitation_row,
    )?
    .next()
    .ok_or_else(|| not_found(Entity::Invitation))?
}

/// Revokes a pending invitation.
pub(crate) fn revoke(conn: &Connection, project: ProjectId, id: i64) -> Result<Invitation, Error> {
    conn.prepare_cached(&format!(
        "DELETE FROM invitations WHERE project_id = ?1 AND id = ?2 RETURNING {INVITATION_COLUMNS}"
    ))?
    .query_and_then((project.0, id), invitation_row)?
    .next()
    .ok_or_else(|| not_found(Entity::Invitation))?
}

/// The invitation whose link is live, and its project.
pub(crate) fn find(
    conn: &Connection,
    hash: &LinkHash,
    now: DateTime<Utc>,
) -> Result<(Invitation, Project), Error> {
    let invitation = conn
        .prepare_cached(&format!(
            "SELECT {INVITATION_COLUMNS} FROM invitations WHERE link_hash = ?1 AND sent_at > ?2"
        ))?
        .query_and_then((&hash.0[..], live_since(now)), invitation_row)?
        .next()
        .ok_or_else(|| not_found(Entity::Invitation))??;
    let project = admin::project(conn, invitation.project)?;
    Ok((invitation, project))
}

/// The oldest `sent_at` of a live invitation at `now`, in milliseconds (exclusive).
fn live_since(now: DateTime<Utc>) -> i64 {
    to_millis(&(now - LinkKind::Invitation.lifetime()))
}

/// Takes a live invitation: deletes it, then makes the account and the membership (in one
/// write: a failure restores it).
pub(crate) fn accept(
    conn: &Connection,
    hash: &LinkHash,
    account: &Acceptance,
    now: DateTime<Utc>,
) -> Result<(User, Project), Error> {
    let invitation = conn
        .prepare_cached(&format!(
            "DELETE FROM invitations WHERE link_hash = ?1 AND sent_at > ?2
             RETURNING {INVITATION_COLUMNS}"
        ))?
        .query_and_then((&hash.0[..], live_since(now)), invitation_row)?
        .next()
        .ok_or_else(|| not_found(Entity::Invitation))??;
    let project = admin::project(conn, invitation.project)?;
    let user = match account {
        Acceptance::NewAccount(new) => accounts::create_user(conn, new.clone(), now)?,
        Acceptance::Existing(id) => accounts::user(conn, *id)?,
    };
    invitation
        .check_account(&user.email)
        .map_err(|e| Error::Store(StoreError::Invalid(e)))?;
    conn.prepare_cached(
        "INSERT INTO members (project_id, user_id, role, created_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (project_id, user_id) DO NOTHING",
    )?
    .execute((
        project.id.0,
        user.id.0,
        invitation.role.as_ref(),
        to_millis(&now),
    ))?;
    Ok((user, project))
}
