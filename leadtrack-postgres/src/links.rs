//! Invitations and links about an account (password resets, email changes): kept as their
//! link's SHA-256 only, found by it while live ([`LinkKind::lifetime`]), and deleted when
//! taken. Taking is one `DELETE … RETURNING` of a live row, so of two servers taking one
//! link at once exactly one gets it; what follows fails or commits with it.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::account::{PasswordHash, User, email_key};
use leadtrack_core::link::{
    Acceptance, AccountLink, Invitation, LinkHash, LinkKind, NewInvitation,
};
use leadtrack_core::project::Project;
use leadtrack_core::store::{Conflict, Entity, StoreError};
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::{ProjectId, Role, UserId};
use tokio_postgres::Row;

use crate::Error;
use crate::accounts;
use crate::admin::{self, not_found};
use crate::rows::{self, all, one, run};

// ----- links about an account -----

/// Makes the link, replacing the user's earlier one of its kind.
pub(crate) async fn issue(
    c: &impl GenericClient,
    user: UserId,
    (link, hash): (&AccountLink, &LinkHash),
    now: DateTime<Utc>,
    unless_since: Option<DateTime<Utc>>,
) -> Result<bool, Error> {
    accounts::user(c, user, true).await?;
    // The earlier link is replaced unless it was made after `unless_since`.
    let made = run(
        c,
        "INSERT INTO account_links (user_id, kind, link_hash, email, created_at)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (user_id, kind) DO UPDATE SET link_hash = EXCLUDED.link_hash,
             email = EXCLUDED.email, created_at = EXCLUDED.created_at
         WHERE $6::bigint IS NULL OR account_links.created_at <= $6::bigint",
        &[
            &user.0,
            &link.kind().as_ref(),
            &&hash.0[..],
            &link.email(),
            &to_millis(&now),
            &unless_since.as_ref().map(to_millis),
        ],
    )
    .await?;
    Ok(made > 0)
}

/// Takes the live link of `kind` with this hash: deletes it and answers its user and the
/// email it holds.
async fn take(
    c: &impl GenericClient,
    hash: &LinkHash,
    kind: LinkKind,
    now: DateTime<Utc>,
) -> Result<(UserId, Option<String>), Error> {
    let row = one(
        c,
        "DELETE FROM account_links WHERE link_hash = $1 AND kind = $2 AND created_at > $3
         RETURNING user_id, email",
        &[
            &&hash.0[..],
            &kind.as_ref(),
            &to_millis(&(now - kind.lifetime())),
        ],
    )
    .await?
    .ok_or_else(|| not_found(Entity::Link))?;
    Ok((UserId(row.try_get(0)?), row.try_get(1)?))
}

/// Takes a password-reset link: the new password, every session ended.
pub(crate) async fn reset_password(
    c: &impl GenericClient,
    hash: &LinkHash,
    password: &PasswordHash,
    now: DateTime<Utc>,
) -> Result<User, Error> {
    let (user, _) = take(c, hash, LinkKind::PasswordReset, now).await?;
    accounts::set_password(c, user, password).await?;
    accounts::user(c, user, false).await
}

/// Takes an email-change link: the email it holds becomes the user's, unless another user
/// has it (then the transaction rolls back, and the link with it). The unique index on
/// `users.email_key` decides between concurrent changes.
pub(crate) async fn confirm_email(
    c: &impl GenericClient,
    hash: &LinkHash,
    now: DateTime<Utc>,
) -> Result<User, Error> {
    let (user, email) = take(c, hash, LinkKind::EmailChange, now).await?;
    let email = email.ok_or_else(|| not_found(Entity::Link))?;
    let sql = format!(
        "UPDATE users u SET email = $2, email_key = $3 WHERE u.id = $1
         AND NOT EXISTS (SELECT 1 FROM users o WHERE o.email_key = $3 AND o.id <> $1)
         RETURNING {}",
        rows::USER_COLUMNS
    );
    let updated = one(c, &sql, &[&user.0, &email, &email_key(&email)]).await;
    match updated {
        Ok(Some(row)) => rows::user(&row),
        Ok(None) => Err(Error::Store(StoreError::Conflict(Conflict::UserExists(
            email,
        )))),
        Err(err) if err.is_unique_violation() => Err(Error::Store(StoreError::Conflict(
            Conflict::UserExists(email),
        ))),
        Err(err) => Err(err),
    }
}

// ----- invitations -----

const INVITATION_COLUMNS: &str = "id, project_id, email, role, invited_by, sent_at";

fn invitation_row(row: &Row) -> Result<Invitation, Error> {
    Ok(Invitation {
        id: row.try_get(0)?,
        project: ProjectId(row.try_get(1)?),
        email: row.try_get(2)?,
        role: rows::parse::<Role>("invitations.role", row.try_get(3)?)?,
        invited_by: row.try_get(4)?,
        sent_at: from_millis(row.try_get(5)?),
    })
}

/// The oldest `sent_at` of a live invitation at `now`, in milliseconds (exclusive).
fn live_since(now: DateTime<Utc>) -> i64 {
    to_millis(&(now - LinkKind::Invitation.lifetime()))
}

/// Invites someone, or renews their pending invitation to the project.
pub(crate) async fn invite(
    c: &impl GenericClient,
    project: ProjectId,
    new: &NewInvitation,
    hash: &LinkHash,
    now: DateTime<Utc>,
) -> Result<Invitation, Error> {
    admin::project(c, project).await?;
    let sql = format!(
        "INSERT INTO invitations (project_id, email, email_key, role, invited_by, link_hash, sent_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (project_id, email_key) DO UPDATE SET email = EXCLUDED.email,
             role = EXCLUDED.role, invited_by = EXCLUDED.invited_by,
             link_hash = EXCLUDED.link_hash, sent_at = EXCLUDED.sent_at
         RETURNING {INVITATION_COLUMNS}"
    );
    let row = one(
        c,
        &sql,
        &[
            &project.0,
            &new.email,
            &email_key(&new.email),
            &new.role.as_ref(),
            &new.invited_by,
            &&hash.0[..],
            &to_millis(&now),
        ],
    )
    .await?
    .ok_or_else(|| not_found(Entity::Project))?;
    invitation_row(&row)
}

/// The project's pending invitations, newest first.
pub(crate) async fn invitations(
    c: &impl GenericClient,
    project: ProjectId,
) -> Result<Vec<Invitation>, Error> {
    let sql = format!(
        "SELECT {INVITATION_COLUMNS} FROM invitations WHERE project_id = $1
         ORDER BY sent_at DESC, id DESC"
    );
    all(c, &sql, &[&project.0])
        .await?
        .iter()
        .map(invitation_row)
        .collect()
}

/// Gives a pending invitation a new link.
pub(crate) async fn renew(
    c: &impl GenericClient,
    project: ProjectId,
    id: i64,
    hash: &LinkHash,
    now: DateTime<Utc>,
) -> Result<Invitation, Error> {
    let sql = format!(
        "UPDATE invitations SET link_hash = $3, sent_at = $4
         WHERE project_id = $1 AND id = $2 RETURNING {INVITATION_COLUMNS}"
    );
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] =
        [&project.0, &id, &&hash.0[..], &to_millis(&now)];
    match one(c, &sql, &params).await? {
        Some(row) => invitation_row(&row),
        None => Err(not_found(Entity::Invitation)),
    }
}

/// Revokes a pending invitation.
pub(crate) async fn revoke(
    c: &impl GenericClient,
    project: ProjectId,
    id: i64,
) -> Result<Invitation, Error> {
    let sql = format!(
        "DELETE FROM invitations WHERE project_id = $1 AND id = $2 RETURNING {INVITATION_COLUMNS}"
    );
    match one(c, &sql, &[&project.0, &id]).await? {
        Some(row) => invitation_row(&row),
        None => Err(not_found(Entity::Invitation)),
    }
}

/// The invitation whose link is live, and its project.
pub(crate) async fn find(
    c: &impl GenericClient,
    hash: &LinkHash,
    now: DateTime<Utc>,
) -> Result<(Invitation, Project), Error> {
    let sql = format!(
        "SELECT {INVITATION_COLUMNS} FROM invitations WHERE link_hash = $1 AND sent_at > $2"
    );
    let row = one(c, &sql, &[&&hash.0[..], &live_since(now)])
        .await?
        .ok_or_else(|| not_found(Entity::Invitation))?;
    let invitation = invitation_row(&row)?;
    let project = admin::project(c, invitation.project).await?;
    Ok((invitation, project))
}

/// Takes a live invitation: deletes it, then makes the account and the membership (in one
/// transaction: a failure restores it).
pub(crate) async fn accept(
    c: &impl GenericClient,
    hash: &LinkHash,
    account: &Acceptance,
    now: DateTime<Utc>,
) -> Result<(User, Project), Error> {
    let sql = format!(
        "DELETE FROM invitations WHERE link_hash = $1 AND sent_at > $2
         RETURNING {INVITATION_COLUMNS}"
    );
    let row = one(c, &sql, &[&&hash.0[..], &live_since(now)])
        .await?
        .ok_or_else(|| not_found(Entity::Invitation))?;
    let invitation = invitation_row(&row)?;
    let project = admin::project(c, invitation.project).await?;
    let user = match account {
        Acceptance::NewAccount(new) => accounts::create_user(c, new, now).await?,
        Acceptance::Existing(id) => accounts::user(c, *id, true).await?,
    };
    invitation
        .check_account(&user.email)
        .map_err(|e| Error::Store(StoreError::Invalid(e)))?;
    run(
        c,
        "INSERT INTO members (project_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (project_id, user_id) DO NOTHING",
        &[
            &project.id.0,
            &user.id.0,
            &invitation.role.as_ref(),
            &to_millis(&now),
        ],
    )
    .await?;
    Ok((user, project))
}
