//! Users, project members, sign-in sessions and failed sign-ins.
//!
//! Only a session token's hash is stored and looked up; whether a session is still live is
//! core's rule ([`Session::is_live`]), applied here to the row read. Nothing secret (a
//! password hash, a session hash) goes into an error or a log.
//!
//! The writes run in a READ COMMITTED transaction of their own (`transaction!`), and keep
//! their rules with many servers on one database: the unique index on `users.email_key`
//! decides between concurrent creates of one email, and a change that could leave a
//! project without an owner first locks the project's owner rows.

use chrono::{DateTime, Duration, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::account::{
    Attempts, Device, Member, Membership, NewUser, PasswordHash, Preferences, Session, SessionHash,
    SessionInfo, Throttled, User, email_key, validate_name,
};
use leadtrack_core::alert::AlertPreferences;
use leadtrack_core::store::{Conflict, Entity, StoreError, sql};
use leadtrack_core::time::{from_millis, to_millis, truncate_to_millis};
use leadtrack_core::types::{ProjectId, Role, UserId};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use crate::Error;
use crate::admin::{self, not_found};
use crate::rows::{self, PROJECT_COLUMNS, SESSION_COLUMNS, USER_COLUMNS, all, one, run};

/// How long failed sign-ins are kept: far longer than any throttle window.
fn failures_kept_for() -> Duration {
    Duration::days(1)
}

/// A [`StoreError::Conflict`].
fn conflict(conflict: Conflict) -> Error {
    Error::Store(StoreError::Conflict(conflict))
}

// ----- users -----

/// Creates a user. The unique index on `email_key` decides, also between concurrent
/// creates on several servers: an email taken in any case is [`Conflict::UserExists`].
pub(crate) async fn create_user(
    c: &impl GenericClient,
    user: &NewUser,
    now: DateTime<Utc>,
) -> Result<User, Error> {
    let sql = format!(
        "INSERT INTO users AS u (email, email_key, name, password_hash, disabled, created_at)
         VALUES ($1, $2, $3, $4, false, $5)
         ON CONFLICT (email_key) DO NOTHING
         RETURNING {USER_COLUMNS}"
    );
    let params: [&(dyn ToSql + Sync); 5] = [
        &user.email,
        &email_key(&user.email),
        &user.name,
        &user.password_hash.as_phc(),
        &to_millis(&now),
    ];
    match one(c, &sql, &params).await? {
        Some(row) => rows::user(&row),
        None => Err(conflict(Conflict::UserExists(user.email.clone()))),
    }
}

/// Every user, oldest first.
pub(crate) async fn users(c: &impl GenericClient) -> Result<Vec<User>, Error> {
    let sql = format!("SELECT {USER_COLUMNS} FROM users u ORDER BY u.created_at, u.id");
    all(c, &sql, &[]).await?.iter().map(rows::user).collect()
}

/// The user with this id. With `lock`, the row is locked `FOR SHARE` until the
/// transaction ends, so that a concurrent disable or password change waits for it (and
/// then sees what it wrote), or has already been applied to the row returned.
pub(crate) async fn user(c: &impl GenericClient, id: UserId, lock: bool) -> Result<User, Error> {
    let sql = if lock {
        format!("SELECT {USER_COLUMNS} FROM users u WHERE u.id = $1 FOR SHARE")
    } else {
        format!("SELECT {USER_COLUMNS} FROM users u WHERE u.id = $1")
    };
    match one(c, &sql, &[&id.0]).await? {
        Some(row) => rows::user(&row),
        None => Err(not_found(Entity::User)),
    }
}

/// The user with this email, in any case.
pub(crate) async fn user_by_email(c: &impl GenericClient, email: &str) -> Result<User, Error> {
    let sql = format!("SELECT {USER_COLUMNS} FROM users u WHERE u.email_key = $1");
    match one(c, &sql, &[&email_key(email)]).await? {
        Some(row) => rows::user(&row),
        None => Err(not_found(Entity::User)),
    }
}

/// The user's password hash, for sign-in.
pub(crate) async fn password_hash(
    c: &impl GenericClient,
    user: UserId,
) -> Result<PasswordHash, Error> {
    match one(
        c,
        "SELECT password_hash FROM users WHERE id = $1",
        &[&user.0],
    )
    .await?
    {
        Some(row) => Ok(PasswordHash::from_phc(row.try_get::<_, String>(0)?)),
        None => Err(not_found(Entity::User)),
    }
}

/// Replaces the hash and ends every session of the user.
pub(crate) async fn set_password(
    c: &impl GenericClient,
    user: UserId,
    hash: &PasswordHash,
) -> Result<(), Error> {
    let changed = run(
        c,
        "UPDATE users SET password_hash = $2 WHERE id = $1",
        &[&user.0, &hash.as_phc()],
    )
    .await?;
    if changed == 0 {
        return Err(not_found(Entity::User));
    }
    end_sessions_of(c, user).await
}

/// Disables (ending every session) or enables the user.
pub(crate) async fn set_user_disabled(
    c: &impl GenericClient,
    user: UserId,
    disabled: bool,
) -> Result<User, Error> {
    let sql = format!("UPDATE users u SET disabled = $2 WHERE u.id = $1 RETURNING {USER_COLUMNS}");
    let updated = match one(c, &sql, &[&user.0, &disabled]).await? {
        Some(row) => rows::user(&row)?,
        None => return Err(not_found(Entity::User)),
    };
    if disabled {
        end_sessions_of(c, user).await?;
    }
    Ok(updated)
}

/// Replaces the user's preferences.
pub(crate) async fn set_preferences(
    c: &impl GenericClient,
    user: UserId,
    preferences: &Preferences,
) -> Result<(), Error> {
    let json = preferences.to_json();
    let changed = c
        .execute(
            "UPDATE users SET preferences = $2 WHERE id = $1",
            &[&user.0, &json],
        )
        .await?;
    if changed == 0 {
        return Err(not_found(Entity::User));
    }
    Ok(())
}

/// Renames the user.
pub(crate) async fn set_name(
    c: &impl GenericClient,
    id: UserId,
    name: &str,
) -> Result<User, Error> {
    let name = validate_name(name).map_err(|e| Error::Store(StoreError::Invalid(e)))?;
    let sql = format!("UPDATE users u SET name = $2 WHERE u.id = $1 RETURNING {USER_COLUMNS}");
    match one(c, &sql, &[&id.0, &name]).await? {
        Some(row) => rows::user(&row),
        None => Err(not_found(Entity::User)),
    }
}

// ----- members -----

/// Adds the member, or changes the role of one (who keeps their original `created_at`).
/// Demoting the project's last owner is [`Conflict::LastOwner`], also when two owners are
/// demoted at once by different servers ([`keep_an_owner`]).
pub(crate) async fn add_member(
    c: &impl GenericClient,
    project: ProjectId,
    user_id: UserId,
    role: Role,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    admin::project(c, project).await?;
    user(c, user_id, false).await?;
    if role != Role::Owner {
        keep_an_owner(c, project, user_id).await?;
    }
    run(
        c,
        "INSERT INTO members (project_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (project_id, user_id) DO UPDATE SET role = EXCLUDED.role",
        &[&project.0, &user_id.0, &role.as_ref(), &to_millis(&now)],
    )
    .await?;
    Ok(())
}

/// Fails with [`Conflict::LastOwner`] when `user` is the project's only owner: they may
/// neither leave nor be demoted.
///
/// The project's owner rows are locked (`FOR UPDATE`, in user order, so that two such
/// changes never deadlock) until the transaction ends. A concurrent change of an owner
/// therefore waits here for the other to commit, and READ COMMITTED then re-checks the rows
/// it waited for: an owner the other demoted or removed is no longer counted. So two owners
/// demoting each other at once cannot both succeed. An owner added concurrently may go
/// uncounted, which can only refuse a change, never leave a project without an owner.
async fn keep_an_owner(
    c: &impl GenericClient,
    project: ProjectId,
    user: UserId,
) -> Result<(), Error> {
    let owners = all(
        c,
        "SELECT user_id FROM members WHERE project_id = $1 AND role = 'owner'
         ORDER BY user_id FOR UPDATE",
        &[&project.0],
    )
    .await?
    .iter()
    .map(|row| row.try_get::<_, i64>(0))
    .collect::<Result<Vec<_>, _>>()?;
    if owners == [user.0] {
        return Err(conflict(Conflict::LastOwner));
    }
    Ok(())
}

/// Sets what the member is alerted of.
pub(crate) async fn set_alerts(
    c: &impl GenericClient,
    project: ProjectId,
    user: UserId,
    alerts: &AlertPreferences,
) -> Result<(), Error> {
    let changed = run(
        c,
        "UPDATE members SET alerts = $3 WHERE project_id = $1 AND user_id = $2",
        &[&project.0, &user.0, &serde_json::to_string(alerts)?],
    )
    .await?;
    if changed == 0 {
        return Err(not_found(Entity::User));
    }
    Ok(())
}

/// Lets the member export the project's leads, or no longer.
pub(crate) async fn set_export(
    c: &impl GenericClient,
    project: ProjectId,
    user: UserId,
    allowed: bool,
) -> Result<(), Error> {
    let changed = run(
        c,
        "UPDATE members SET can_export = $3 WHERE project_id = $1 AND user_id = $2",
        &[&project.0, &user.0, &allowed],
    )
    .await?;
    if changed == 0 {
        return Err(not_found(Entity::User));
    }
    Ok(())
}

/// Ends the user's membership; `false` when they were not a member. The project's last
/// owner stays ([`keep_an_owner`]).
pub(crate) async fn remove_member(
    c: &impl GenericClient,
    project: ProjectId,
    user: UserId,
) -> Result<bool, Error> {
    keep_an_owner(c, project, user).await?;
    let removed = run(
        c,
        "DELETE FROM members WHERE project_id = $1 AND user_id = $2",
        &[&project.0, &user.0],
    )
    .await?;
    Ok(removed > 0)
}

/// The project's members, oldest membership first.
pub(crate) async fn members(
    c: &impl GenericClient,
    project: ProjectId,
) -> Result<Vec<Member>, Error> {
    let sql = format!(
        "SELECT {USER_COLUMNS}, m.role, m.can_export, m.alerts FROM members m
         JOIN users u ON u.id = m.user_id
         WHERE m.project_id = $1 ORDER BY m.created_at, u.id"
    );
    all(c, &sql, &[&project.0])
        .await?
        .iter()
        .map(|row| {
            Ok(Member {
                user: rows::user(row)?,
                role: rows::parse("members.role", row.try_get(rows::USER_WIDTH)?)?,
                can_export: row.try_get(rows::USER_WIDTH + 1)?,
                alerts: serde_json::from_str(row.try_get::<_, &str>(rows::USER_WIDTH + 2)?)?,
            })
        })
        .collect()
}

/// The columns of a membership: the project's ([`PROJECT_COLUMNS`] of `projects p`), then
/// the role and whether the member may export.
fn membership_columns() -> String {
    format!(
        "{}, m.role, m.can_export, m.alerts",
        sql::qualified(PROJECT_COLUMNS, "p")
    )
}

/// A membership from a row of [`membership_columns`].
fn membership(row: &Row) -> Result<Membership, Error> {
    let role_at = PROJECT_COLUMNS.split(", ").count();
    Ok(Membership {
        project: rows::project(row)?,
        role: rows::parse("members.role", row.try_get(role_at)?)?,
        can_export: row.try_get(role_at + 1)?,
        alerts: serde_json::from_str(row.try_get::<_, &str>(role_at + 2)?)?,
    })
}

/// The projects the user is a member of, oldest project first.
pub(crate) async fn memberships(
    c: &impl GenericClient,
    user: UserId,
) -> Result<Vec<Membership>, Error> {
    let sql = format!(
        "SELECT {} FROM members m JOIN projects p ON p.id = m.project_id
         WHERE m.user_id = $1 ORDER BY p.created_at, p.id",
        membership_columns()
    );
    all(c, &sql, &[&user.0])
        .await?
        .iter()
        .map(membership)
        .collect()
}

/// The user's membership of the project; a project they are not in is not found either.
pub(crate) async fn membership_of(
    c: &impl GenericClient,
    user: UserId,
    public_id: &str,
) -> Result<Membership, Error> {
    let sql = format!(
        "SELECT {} FROM members m JOIN projects p ON p.id = m.project_id
         WHERE m.user_id = $1 AND p.public_id = $2",
        membership_columns()
    );
    match one(c, &sql, &[&user.0, &public_id]).await? {
        Some(row) => membership(&row),
        None => Err(not_found(Entity::Project)),
    }
}

// ----- sessions -----

/// Starts a session. The user's sessions that are no longer live are deleted on the way,
/// so that the table keeps only what can still be used. A disabled user has no sessions:
/// for them nothing is stored, and the session returned is never found.
///
/// The user's row is locked `FOR SHARE` while the session is made: a concurrent disable or
/// password change either is already in the row read (nothing is stored), or waits for
/// this transaction and then ends the new session with the others.
pub(crate) async fn create_session(
    c: &impl GenericClient,
    user_id: UserId,
    hash: &SessionHash,
    device: &Device,
    now: DateTime<Utc>,
) -> Result<Session, Error> {
    let found = user(c, user_id, true).await?;
    let session = Session {
        user_id,
        created_at: truncate_to_millis(now),
        last_seen_at: truncate_to_millis(now),
    };
    if found.disabled {
        return Ok(session);
    }
    let sql = format!("SELECT s.hash, {SESSION_COLUMNS} FROM sessions s WHERE s.user_id = $1");
    let mut dead: Vec<Vec<u8>> = Vec::new();
    for row in all(c, &sql, &[&user_id.0]).await? {
        if !rows::session(&row, 1)?.is_live(now) {
            dead.push(row.try_get(0)?);
        }
    }
    if !dead.is_empty() {
        run(
            c,
            "DELETE FROM sessions WHERE user_id = $1 AND hash = ANY($2)",
            &[&user_id.0, &dead],
        )
        .await?;
    }
    run(
        c,
        "INSERT INTO sessions (hash, user_id, created_at, last_seen_at, address, user_agent)
         VALUES ($1, $2, $3, $3, $4, $5)",
        &[
            &&hash.0[..],
            &user_id.0,
            &to_millis(&now),
            &device.address,
            &device.user_agent,
        ],
    )
    .await?;
    Ok(session)
}

/// The user's live sessions, the most recently used first.
pub(crate) async fn sessions(
    c: &impl GenericClient,
    user: UserId,
    now: DateTime<Utc>,
) -> Result<Vec<SessionInfo>, Error> {
    let sql = format!(
        "SELECT s.hash, {SESSION_COLUMNS}, s.address, s.user_agent FROM sessions s
         WHERE s.user_id = $1 ORDER BY s.last_seen_at DESC, s.created_at DESC"
    );
    let mut live = Vec::new();
    for row in all(c, &sql, &[&user.0]).await? {
        let hash: Vec<u8> = row.try_get(0)?;
        let info = SessionInfo {
            hash: SessionHash(hash.try_into().unwrap_or([0; 32])),
            session: rows::session(&row, 1)?,
            device: Device {
                address: row.try_get(4)?,
                user_agent: row.try_get(5)?,
            },
        };
        if info.session.is_live(now) {
            live.push(info);
        }
    }
    Ok(live)
}

/// Ends every session of the user but `keep`.
pub(crate) async fn end_other_sessions(
    c: &impl GenericClient,
    user: UserId,
    keep: &SessionHash,
) -> Result<u64, Error> {
    run(
        c,
        "DELETE FROM sessions WHERE user_id = $1 AND hash <> $2",
        &[&user.0, &&keep.0[..]],
    )
    .await
}

/// The live session with this hash and its enabled user.
pub(crate) async fn session(
    c: &impl GenericClient,
    hash: &SessionHash,
    now: DateTime<Utc>,
) -> Result<(User, Session), Error> {
    let sql = format!(
        "SELECT {USER_COLUMNS}, {SESSION_COLUMNS} FROM sessions s
         JOIN users u ON u.id = s.user_id WHERE s.hash = $1"
    );
    let found = match one(c, &sql, &[&&hash.0[..]]).await? {
        Some(row) => Some((rows::user(&row)?, rows::session(&row, rows::USER_WIDTH)?)),
        None => None,
    };
    match found {
        Some((user, session)) if !user.disabled && session.is_live(now) => Ok((user, session)),
        _ => Err(not_found(Entity::Session)),
    }
}

/// Moves the session's `last_seen_at` to `now`, never back (requests may finish out of
/// order). An unknown session is left alone.
pub(crate) async fn touch_session(
    c: &impl GenericClient,
    hash: &SessionHash,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    run(
        c,
        "UPDATE sessions SET last_seen_at = GREATEST(last_seen_at, $2) WHERE hash = $1",
        &[&&hash.0[..], &to_millis(&now)],
    )
    .await?;
    Ok(())
}

/// Ends every session of the user; none is no error.
pub(crate) async fn end_sessions_of(c: &impl GenericClient, user: UserId) -> Result<(), Error> {
    run(c, "DELETE FROM sessions WHERE user_id = $1", &[&user.0]).await?;
    Ok(())
}

// ----- the throttles -----

/// Records an attempt, and forgets those older than a day.
pub(crate) async fn record_throttled(
    c: &impl GenericClient,
    what: Throttled,
    email: &str,
    address: &str,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let table = what.table();
    let forgotten = to_millis(&(now - failures_kept_for()));
    run(
        c,
        &format!("DELETE FROM {table} WHERE at < $1"),
        &[&forgotten],
    )
    .await?;
    run(
        c,
        &format!("INSERT INTO {table} (email_key, address, at) VALUES ($1, $2, $3)"),
        &[&email_key(email), &address, &to_millis(&now)],
    )
    .await?;
    Ok(())
}

/// The attempts for the email (by [`email_key`]) and from the address at or after
/// `since`, oldest first (ties in the order recorded).
pub(crate) async fn throttled_attempts(
    c: &impl GenericClient,
    what: Throttled,
    email: &str,
    address: &str,
    since: DateTime<Utc>,
) -> Result<Attempts, Error> {
    let (table, since) = (what.table(), to_millis(&since));
    let times = async |column: &str, value: &str| -> Result<Vec<DateTime<Utc>>, Error> {
        let sql =
            format!("SELECT at FROM {table} WHERE {column} = $1 AND at >= $2 ORDER BY at, id");
        let rows: Vec<Row> = all(c, &sql, &[&value, &since]).await?;
        rows.iter()
            .map(|row| Ok(from_millis(row.try_get(0)?)))
            .collect()
    };
    Ok(Attempts {
        by_email: times("email_key", &email_key(email)).await?,
        by_address: times("address", address).await?,
    })
}
