//! Users, project members, sign-in sessions and failed sign-ins.
//!
//! Only a session token's hash is stored and looked up; whether a session is still live is
//! core's rule ([`Session::is_live`]), applied here to the row read. Nothing secret (a
//! password hash, a session hash) goes into an error or a log.

use chrono::{DateTime, Duration, Utc};
use leadtrack_core::account::{
    Attempts, Device, Member, Membership, NewUser, PasswordHash, Preferences, Session, SessionHash,
    SessionInfo, Throttled, User, email_key, validate_name,
};
use leadtrack_core::alert::AlertPreferences;
use leadtrack_core::store::{Conflict, Entity, StoreError, sql};
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::{ProjectId, Role, UserId};
use rusqlite::{Connection, OptionalExtension};

use crate::admin;
use crate::rows::{self, Error, PROJECT_COLUMNS, SESSION_COLUMNS, USER_COLUMNS};

fn not_found(entity: Entity) -> Error {
    Error::Store(StoreError::NotFound(entity))
}

/// How long failed sign-ins are kept: far longer than any throttle window.
fn failures_kept_for() -> Duration {
    Duration::days(1)
}

// ----- users -----

pub(crate) fn create_user(
    conn: &Connection,
    new: NewUser,
    now: DateTime<Utc>,
) -> Result<User, Error> {
    let key = email_key(&new.email);
    let taken = conn
        .prepare_cached("SELECT 1 FROM users WHERE email_key = ?1")?
        .query_row([&key], |_| Ok(()))
        .optional()?;
    if taken.is_some() {
        return Err(Error::Store(StoreError::Conflict(Conflict::UserExists(
            new.email,
        ))));
    }
    conn.prepare_cached(
        "INSERT INTO users (email, email_key, name, password_hash, disabled, created_at)
         VALUES (?1, ?2, ?3, ?4, 0, ?5)",
    )?
    .execute((
        &new.email,
        &key,
        &new.name,
        new.password_hash.as_phc(),
        to_millis(&now),
    ))?;
    user(conn, UserId(conn.last_insert_rowid()))
}

pub(crate) fn users(conn: &Connection) -> Result<Vec<User>, Error> {
    conn.prepare_cached(&format!(
        "SELECT {USER_COLUMNS} FROM users u ORDER BY u.created_at, u.id"
    ))?
    .query_and_then([], rows::user)?
    .collect()
}

pub(crate) fn user(conn: &Connection, id: UserId) -> Result<User, Error> {
    conn.prepare_cached(&format!(
        "SELECT {USER_COLUMNS} FROM users u WHERE u.id = ?1"
    ))?
    .query_and_then([id.0], rows::user)?
    .next()
    .ok_or_else(|| not_found(Entity::User))?
}

pub(crate) fn user_by_email(conn: &Connection, email: &str) -> Result<User, Error> {
    conn.prepare_cached(&format!(
        "SELECT {USER_COLUMNS} FROM users u WHERE u.email_key = ?1"
    ))?
    .query_and_then([email_key(email)], rows::user)?
    .next()
    .ok_or_else(|| not_found(Entity::User))?
}

pub(crate) fn password_hash(conn: &Connection, id: UserId) -> Result<PasswordHash, Error> {
    conn.prepare_cached("SELECT password_hash FROM users WHERE id = ?1")?
        .query_row([id.0], |row| row.get::<_, String>(0))
        .optional()?
        .map(PasswordHash::from_phc)
        .ok_or_else(|| not_found(Entity::User))
}

/// Replaces the hash and ends every session of the user.
pub(crate) fn set_password(
    conn: &Connection,
    id: UserId,
    hash: &PasswordHash,
) -> Result<(), Error> {
    let changed = conn
        .prepare_cached("UPDATE users SET password_hash = ?2 WHERE id = ?1")?
        .execute((id.0, hash.as_phc()))?;
    if changed == 0 {
        return Err(not_found(Entity::User));
    }
    end_sessions_of(conn, id)
}

/// Disables (ending every session) or enables the user.
pub(crate) fn set_user_disabled(
    conn: &Connection,
    id: UserId,
    disabled: bool,
) -> Result<User, Error> {
    let changed = conn
        .prepare_cached("UPDATE users SET disabled = ?2 WHERE id = ?1")?
        .execute((id.0, disabled))?;
    if changed == 0 {
        return Err(not_found(Entity::User));
    }
    if disabled {
        end_sessions_of(conn, id)?;
    }
    user(conn, id)
}

/// Replaces the user's preferences.
pub(crate) fn set_preferences(
    conn: &Connection,
    id: UserId,
    preferences: &Preferences,
) -> Result<(), Error> {
    let changed = conn
        .prepare_cached("UPDATE users SET preferences = ?2 WHERE id = ?1")?
        .execute((id.0, preferences.to_json()))?;
    if changed == 0 {
        return Err(not_found(Entity::User));
    }
    Ok(())
}

/// Renames the user.
pub(crate) fn set_name(conn: &Connection, id: UserId, name: &str) -> Result<User, Error> {
    let name = validate_name(name).map_err(|e| Error::Store(StoreError::Invalid(e)))?;
    let changed = conn
        .prepare_cached("UPDATE users SET name = ?2 WHERE id = ?1")?
        .execute((id.0, name))?;
    if changed == 0 {
        return Err(not_found(Entity::User));
    }
    user(conn, id)
}

// ----- members -----

/// Adds the member, or changes the role of one (who keeps their original `created_at`).
pub(crate) fn add_member(
    conn: &Connection,
    project: ProjectId,
    user_id: UserId,
    role: Role,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    admin::project(conn, project)?;
    user(conn, user_id)?;
    if role != Role::Owner {
        keep_an_owner(conn, project, user_id)?;
    }
    conn.prepare_cached(
        "INSERT INTO members (project_id, user_id, role, created_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (project_id, user_id) DO UPDATE SET role = excluded.role",
    )?
    .execute((project.0, user_id.0, role.as_ref(), to_millis(&now)))?;
    Ok(())
}

/// Fails with [`Conflict::LastOwner`] when `user` is the project's only owner: they may
/// neither leave nor be demoted. Runs in the write's transaction, so two owners demoting
/// each other at once cannot both succeed.
fn keep_an_owner(conn: &Connection, project: ProjectId, user: UserId) -> Result<(), Error> {
    let (is_owner, owners): (bool, i64) = conn
        .prepare_cached(
            "SELECT coalesce(sum(user_id = ?2), 0) > 0, count(*) FROM members
             WHERE project_id = ?1 AND role = 'owner'",
        )?
        .query_row((project.0, user.0), |row| Ok((row.get(0)?, row.get(1)?)))?;
    if is_owner && owners == 1 {
        return Err(Error::Store(StoreError::Conflict(Conflict::LastOwner)));
    }
    Ok(())
}

/// Lets the member export the project's leads, or no longer.
pub(crate) fn set_export(
    conn: &Connection,
    project: ProjectId,
    user: UserId,
    allowed: bool,
) -> Result<(), Error> {
    let changed = conn
        .prepare_cached(
            "UPDATE members SET can_export = ?3 WHERE project_id = ?1 AND user_id = ?2",
        )?
        .execute((project.0, user.0, allowed))?;
    if changed == 0 {
        return Err(not_found(Entity::User));
    }
    Ok(())
}

/// Sets what the member is alerted of.
pub(crate) fn set_alerts(
    conn: &Connection,
    project: ProjectId,
    user: UserId,
    alerts: &AlertPreferences,
) -> Result<(), Error> {
    let changed = conn
        .prepare_cached("UPDATE members SET alerts = ?3 WHERE project_id = ?1 AND user_id = ?2")?
        .execute((project.0, user.0, serde_json::to_string(alerts)?))?;
    if changed == 0 {
        return Err(not_found(Entity::User));
    }
    Ok(())
}

pub(crate) fn remove_member(
    conn: &Connection,
    project: ProjectId,
    user: UserId,
) -> Result<bool, Error> {
    keep_an_owner(conn, project, user)?;
    let removed = conn
        .prepare_cached("DELETE FROM members WHERE project_id = ?1 AND user_id = ?2")?
        .execute((project.0, user.0))?;
    Ok(removed > 0)
}

pub(crate) fn members(conn: &Connection, project: ProjectId) -> Result<Vec<Member>, Error> {
    conn.prepare_cached(&format!(
        "SELECT {USER_COLUMNS}, m.role, m.can_export, m.alerts FROM members m
         JOIN users u ON u.id = m.user_id
         WHERE m.project_id = ?1 ORDER BY m.created_at, u.id"
    ))?
    .query_and_then([project.0], |row| {
        Ok(Member {
            user: rows::user(row)?,
            role: rows::parse("members.role", row.get(rows::USER_WIDTH)?)?,
            can_export: row.get(rows::USER_WIDTH + 1)?,
            alerts: serde_json::from_str(&row.get::<_, String>(rows::USER_WIDTH + 2)?)?,
        })
    })?
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

fn membership(row: &rusqlite::Row<'_>) -> Result<Membership, Error> {
    Ok(Membership {
        project: rows::project(row)?,
        role: rows::parse("members.role", row.get(rows::PROJECT_COLUMN_COUNT)?)?,
        can_export: row.get(rows::PROJECT_COLUMN_COUNT + 1)?,
        alerts: serde_json::from_str(&row.get::<_, String>(rows::PROJECT_COLUMN_COUNT + 2)?)?,
    })
}

pub(crate) fn memberships(conn: &Connection, user: UserId) -> Result<Vec<Membership>, Error> {
    conn.prepare_cached(&format!(
        "SELECT {} FROM members m JOIN projects p ON p.id = m.project_id
         WHERE m.user_id = ?1 ORDER BY p.created_at, p.id",
        membership_columns()
    ))?
    .query_and_then([user.0], membership)?
    .collect()
}

/// The user's membership of the project; a project they are not in is not found either.
pub(crate) fn membership_of(
    conn: &Connection,
    user: UserId,
    public_id: &str,
) -> Result<Membership, Error> {
    conn.prepare_cached(&format!(
        "SELECT {} FROM members m JOIN projects p ON p.id = m.project_id
         WHERE m.user_id = ?1 AND p.public_id = ?2",
        membership_columns()
    ))?
    .query_and_then((user.0, public_id), membership)?
    .next()
    .ok_or_else(|| not_found(Entity::Project))?
}

// ----- sessions -----

/// Starts a session. The user's sessions that are no longer live are deleted on the way,
/// so that the table keeps only what can still be used. A disabled user has no sessions:
/// for them nothing is stored, and the session returned is never found.
pub(crate) fn create_session(
    conn: &Connection,
    user_id: UserId,
    hash: &SessionHash,
    device: &Device,
    now: DateTime<Utc>,
) -> Result<Session, Error> {
    let user = user(conn, user_id)?;
    let session = Session {
        user_id,
        created_at: leadtrack_core::time::truncate_to_millis(now),
        last_seen_at: leadtrack_core::time::truncate_to_millis(now),
    };
    if user.disabled {
        return Ok(session);
    }
    let existing: Vec<(Vec<u8>, Session)> = conn
        .prepare_cached(&format!(
            "SELECT s.hash, {SESSION_COLUMNS} FROM sessions s WHERE s.user_id = ?1"
        ))?
        .query_and_then([user_id.0], |row| -> Result<_, Error> {
            Ok((row.get(0)?, rows::session(row, 1)?))
        })?
        .collect::<Result<_, _>>()?;
    let mut delete = conn.prepare_cached("DELETE FROM sessions WHERE hash = ?1")?;
    for (dead, _) in existing.iter().filter(|(_, s)| !s.is_live(now)) {
        delete.execute([dead])?;
    }
    conn.prepare_cached(
        "INSERT INTO sessions (hash, user_id, created_at, last_seen_at, address, user_agent)
         VALUES (?1, ?2, ?3, ?3, ?4, ?5)",
    )?
    .execute((
        &hash.0[..],
        user_id.0,
        to_millis(&now),
        &device.address,
        &device.user_agent,
    ))?;
    Ok(session)
}

/// The user's live sessions, the most recently used first.
pub(crate) fn sessions(
    conn: &Connection,
    user: UserId,
    now: DateTime<Utc>,
) -> Result<Vec<SessionInfo>, Error> {
    let all: Vec<SessionInfo> = conn
        .prepare_cached(&format!(
            "SELECT s.hash, {SESSION_COLUMNS}, s.address, s.user_agent FROM sessions s
             WHERE s.user_id = ?1 ORDER BY s.last_seen_at DESC, s.created_at DESC"
        ))?
        .query_and_then([user.0], |row| -> Result<_, Error> {
            let hash: Vec<u8> = row.get(0)?;
            Ok(SessionInfo {
                hash: SessionHash(hash.try_into().unwrap_or([0; 32])),
                session: rows::session(row, 1)?,
                device: Device {
                    address: row.get(4)?,
                    user_agent: row.get(5)?,
                },
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(all.into_iter().filter(|s| s.session.is_live(now)).collect())
}

/// Ends every session of the user but `keep`.
pub(crate) fn end_other_sessions(
    conn: &Connection,
    user: UserId,
    keep: &SessionHash,
) -> Result<u64, Error> {
    let ended = conn
        .prepare_cached("DELETE FROM sessions WHERE user_id = ?1 AND hash <> ?2")?
        .execute((user.0, &keep.0[..]))?;
    Ok(ended as u64)
}

/// The live session with this hash and its enabled user.
pub(crate) fn session(
    conn: &Connection,
    hash: &SessionHash,
    now: DateTime<Utc>,
) -> Result<(User, Session), Error> {
    let found = conn
        .prepare_cached(&format!(
            "SELECT {USER_COLUMNS}, {SESSION_COLUMNS} FROM sessions s
             JOIN users u ON u.id = s.user_id WHERE s.hash = ?1"
        ))?
        .query_and_then([&hash.0[..]], |row| -> Result<_, Error> {
            Ok((rows::user(row)?, rows::session(row, rows::USER_WIDTH)?))
        })?
        .next()
        .transpose()?;
    match found {
        Some((user, session)) if !user.disabled && session.is_live(now) => Ok((user, session)),
        _ => Err(not_found(Entity::Session)),
    }
}

/// Moves the session's `last_seen_at` to `now`, never back (requests may finish out of
/// order). An unknown session is left alone.
pub(crate) fn touch_session(
    conn: &Connection,
    hash: &SessionHash,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    conn.prepare_cached(
        "UPDATE sessions SET last_seen_at = max(last_seen_at, ?2) WHERE hash = ?1",
    )?
    .execute((&hash.0[..], to_millis(&now)))?;
    Ok(())
}

pub(crate) fn end_sessions_of(conn: &Connection, user: UserId) -> Result<(), Error> {
    conn.prepare_cached("DELETE FROM sessions WHERE user_id = ?1")?
        .execute([user.0])?;
    Ok(())
}

// ----- the throttles -----

/// Records an attempt, and forgets those older than a day.
pub(crate) fn record_throttled(
    conn: &Connection,
    what: Throttled,
    email: &str,
    address: &str,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let table = what.table();
    conn.prepare_cached(&format!("DELETE FROM {table} WHERE at < ?1"))?
        .execute([to_millis(&(now - failures_kept_for()))])?;
    conn.prepare_cached(&format!(
        "INSERT INTO {table} (email_key, address, at) VALUES (?1, ?2, ?3)"
    ))?
    .execute((email_key(email), address, to_millis(&now)))?;
    Ok(())
}

/// The attempts for the email and from the address at or after `since`, oldest first.
pub(crate) fn throttled_attempts(
    conn: &Connection,
    what: Throttled,
    email: &str,
    address: &str,
    since: DateTime<Utc>,
) -> Result<Attempts, Error> {
    let (table, since) = (what.table(), to_millis(&since));
    let times = |column: &str, value: &str| -> Result<Vec<DateTime<Utc>>, Error> {
        let sql =
            format!("SELECT at FROM {table} WHERE {column} = ?1 AND at >= ?2 ORDER BY at, id");
        Ok(conn
            .prepare_cached(&sql)?
            .query_map((value, since), |row| row.get::<_, i64>(0))?
            .map(|at| at.map(from_millis))
            .collect::<Result<_, _>>()?)
    };
    Ok(Attempts {
        by_email: times("email_key", &email_key(email))?,
        by_address: times("address", address)?,
    })
}
