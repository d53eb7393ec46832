//! Turning rows into the core's records, and the error type of this crate's SQL code.

use std::str::FromStr;

use leadtrack_core::StoreError;
use leadtrack_core::account::{Actor, Preferences, Session, User};
use leadtrack_core::activity::LeadEvent;
use leadtrack_core::assignment::Assignee;
use leadtrack_core::job::{Attempt, Batch, Job, QueueDepth};
use leadtrack_core::label::ConversionLabel;
use leadtrack_core::lead::StoredLead;
use leadtrack_core::project::{Project, Retention};
use leadtrack_core::store::Entity;
use leadtrack_core::time::from_millis;
use leadtrack_core::types::{JobId, LeadId, ProjectId, UserId};
use rusqlite::{Connection, OptionalExtension, Row};

/// What the SQL code fails with; converted to [`StoreError`] at the store's boundary.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// SQLite failed.
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
    /// A JSON column did not hold what it should.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// A lead's stored data did not pack or unpack (`packed.rs`).
    #[error(transparent)]
    Packed(#[from] crate::packed::PackError),
    /// A sealed secret did not open.
    #[error(transparent)]
    Vault(#[from] leadtrack_core::vault::VaultError),
    /// A rule of the store was broken (not found, conflict, invalid).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A column held a value this build does not know.
    #[error("unexpected value in column {column}: {value:?}")]
    Corrupt {
        /// The column.
        column: &'static str,
        /// What it held.
        value: String,
    },
}

/// Whether SQLite failed because its storage refused the work: full, over a size limit,
/// read-only, or failing to write. A passing fault: the caller is told to retry, and the
/// store goes on once the storage recovers.
pub(crate) fn is_storage_fault(err: &rusqlite::Error) -> bool {
    matches!(
        err,
        rusqlite::Error::SqliteFailure(failure, _) if matches!(
            failure.code,
            rusqlite::ErrorCode::DiskFull
                | rusqlite::ErrorCode::ReadOnly
                | rusqlite::ErrorCode::SystemIoFailure
        )
    )
}

impl From<Error> for StoreError {
    fn from(err: Error) -> Self {
        match err {
            Error::Store(err) => err,
            Error::Sql(err) if is_storage_fault(&err) => {
                tracing::error!(error = %err, "the database's storage refused a write");
                StoreError::Unavailable("the storage refused the write".to_owned())
            }
            other => StoreError::backend(other),
        }
    }
}

/// Parses a text column into an enumeration.
pub(crate) fn parse<T: FromStr>(column: &'static str, value: String) -> Result<T, Error> {
    value.parse().map_err(|_| Error::Corrupt { column, value })
}

/// The id of the row of a leased queue (`jobs`, `webhook_events`: `state`, `due_at`,
/// `lease_expires_at`) due soonest at `now_ms` among those `scope` (an SQL condition)
/// selects: a queued one due by then, or a running one whose lease has lapsed (its worker
/// died), whichever has waited longer.
pub(crate) fn due(
    conn: &Connection,
    (table, scope): (&str, &str),
    now_ms: i64,
) -> Result<Option<i64>, Error> {
    let first = |sql: String| -> Result<Option<(i64, i64)>, Error> {
        Ok(conn
            .prepare_cached(&sql)?
            .query_row([now_ms], |row| Ok((row.get(0)?, row.get(1)?)))
            .optional()?)
    };
    let queued = first(format!(
        "SELECT id, due_at FROM {table} WHERE {scope} AND state = 'queued' AND due_at <= ?1
         ORDER BY due_at, id LIMIT 1"
    ))?;
    let lapsed = first(format!(
        "SELECT id, lease_expires_at FROM {table}
         WHERE {scope} AND state = 'running' AND lease_expires_at <= ?1
         ORDER BY lease_expires_at, id LIMIT 1"
    ))?;
    Ok([queued, lapsed]
        .into_iter()
        .flatten()
        .min_by_key(|(_, at)| *at)
        .map(|(id, _)| id))
}

/// How a leased queue (`jobs`, `webhook_events`) stands at `now_ms`. Each figure is read
/// from the table's partial index on its state.
pub(crate) fn depth(conn: &Connection, table: &str, now_ms: i64) -> Result<QueueDepth, Error> {
    let count = |state: &str| -> Result<i64, Error> {
        let sql = format!("SELECT count(*) FROM {table} WHERE state = '{state}'");
        Ok(conn.prepare_cached(&sql)?.query_row([], |row| row.get(0))?)
    };
    let first_due: Option<i64> = conn
        .prepare_cached(&format!(
            "SELECT min(due_at) FROM {table} WHERE state = 'queued'"
        ))?
        .query_row([], |row| row.get(0))?;
    Ok(QueueDepth::at(
        count("queued")?,
        count("running")?,
        first_due,
        now_ms,
    ))
}

/// Fails with [`Entity::Lead`] not found unless the project has the lead: what a record
/// of a lead (a comment, a draft, a next step) checks before it is written.
pub(crate) fn lead_exists(
    conn: &Connection,
    project: ProjectId,
    lead: LeadId,
) -> Result<(), Error> {
    conn.prepare_cached("SELECT 1 FROM leads WHERE project_id = ?1 AND id = ?2")?
        .query_row((project.0, lead.0), |_| Ok(()))
        .optional()?
        .ok_or(Error::Store(StoreError::NotFound(Entity::Lead)))
}

/// The columns [`lead`] reads, in order.
pub(crate) const LEAD_COLUMNS: &str = "id, project_id, status, price, note, conversion_id, created_at, data, spam_reason, duplicate_of, duplicated, assigned_to, (SELECT name FROM users WHERE users.id = leads.assigned_to)";

/// A lead written straight into `leads`, for tests of what is derived from it: its id,
/// project, status, creation time, search text and `q` text.
#[cfg(test)]
pub(crate) type TestLead<'a> = (i64, i64, &'a str, i64, &'a str, &'a str);

/// Writes `leads` straight into `leads` (its project's row not needed: foreign keys off).
#[cfg(test)]
pub(crate) fn insert_test_leads(conn: &rusqlite::Connection, leads: &[TestLead<'_>]) {
    conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    for lead in leads {
        conn.execute(
            "INSERT INTO leads (id, project_id, status, created_at, updated_at, data,
                 search_text, has_gclid, has_cid, has_fbp, has_fbc, q_text)
             VALUES (?1, ?2, ?3, ?4, 0, lead_pack('{}'), ?5, 0, 0, 0, 0, ?6)",
            *lead,
        )
        .unwrap();
    }
}

/// The steps of `sql`'s query plan with `params`.
#[cfg(test)]
pub(crate) fn plan_of(
    conn: &rusqlite::Connection,
    sql: &str,
    params: &[rusqlite::types::Value],
) -> Vec<String> {
    conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .unwrap()
        .query_map(rusqlite::params_from_iter(params), |row| {
            row.get::<_, String>(3)
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// A query plan without the steps that read each lead's assignee's name for
/// [`LEAD_COLUMNS`]: one lookup of a user by primary key per lead read.
#[cfg(test)]
pub(crate) fn without_assignee(plan: Vec<String>) -> Vec<String> {
    plan.into_iter()
        .filter(|step| {
            !step.starts_with("CORRELATED SCALAR SUBQUERY")
                && step != "SEARCH users USING INTEGER PRIMARY KEY (rowid=?)"
        })
        .collect()
}

/// A lead from a row of [`LEAD_COLUMNS`].
pub(crate) fn lead(row: &Row<'_>) -> Result<StoredLead, Error> {
    LeadRecord::of(row)?.parse()
}

/// A row of [`LEAD_COLUMNS`] as SQLite gave it: text not parsed yet.
///
/// Listings and exports send these from the reader thread and parse them on the caller's:
/// a page of 50 leads weighs its stored bytes (about 13 KB) while it waits for its caller,
/// where its parsed JSON objects weigh several times that. On a busy core, readers finish
/// pages faster than the async thread writes them out, and those waiting pages were most of
/// the server's peak memory.
pub(crate) struct LeadRecord {
    id: i64,
    project_id: i64,
    status: String,
    price: Option<i64>,
    note: Option<String>,
    conversion_id: Option<String>,
    created_at: i64,
    /// Packed (`packed.rs`), unpacked by [`Self::parse`].
    data: Vec<u8>,
    spam_reason: Option<String>,
    duplicate_of: Option<i64>,
    duplicated: bool,
    assigned_to: Option<i64>,
    assignee_name: Option<String>,
}

impl LeadRecord {
    /// Reads a row of [`LEAD_COLUMNS`].
    pub(crate) fn of(row: &Row<'_>) -> Result<Self, Error> {
        Ok(Self {
            id: row.get(0)?,
            project_id: row.get(1)?,
            status: row.get(2)?,
            price: row.get(3)?,
            note: row.get(4)?,
            conversion_id: row.get(5)?,
            created_at: row.get(6)?,
            data: row.get(7)?,
            spam_reason: row.get(8)?,
            duplicate_of: row.get(9)?,
            duplicated: row.get(10)?,
            assigned_to: row.get(11)?,
            assignee_name: row.get(12)?,
        })
    }

    /// The lead it holds.
    pub(crate) fn parse(self) -> Result<StoredLead, Error> {
        Ok(StoredLead {
            id: LeadId(self.id),
            project_id: ProjectId(self.project_id),
            status: parse("status", self.status)?,
            price: self.price,
            note: self.note,
            conversion_id: self
                .conversion_id
                .map(|id| parse("conversion_id", id))
                .transpose()?,
            created_at: from_millis(self.created_at),
            data: serde_json::from_str(&crate::packed::unpack(&self.data)?)?,
            spam_reason: self
                .spam_reason
                .map(|reason| parse("spam_reason", reason))
                .transpose()?,
            duplicate_of: self.duplicate_of.map(LeadId),
            duplicated: self.duplicated,
            assignee: Assignee::of_row(self.assigned_to, self.assignee_name),
        })
    }
}

/// The columns [`project`] reads, in order.
pub(crate) const PROJECT_COLUMNS: &str = "id, public_id, name, active, currency, region, lost_mapping, created_at, allowed_origins, default_consent, undo_window_seconds, spam_rules, review_ratings, retention_days, spam_retention_days, retention_done_to, retention_ran_at, retention_erased";

/// How many columns [`PROJECT_COLUMNS`] names: the index of the first column after them.
pub(crate) const PROJECT_COLUMN_COUNT: usize = 18;

/// A project from a row of [`PROJECT_COLUMNS`].
pub(crate) fn project(row: &Row<'_>) -> Result<Project, Error> {
    Ok(Project {
        id: ProjectId(row.get(0)?),
        public_id: row.get(1)?,
        name: row.get(2)?,
        active: row.get(3)?,
        currency: row.get(4)?,
        region: row.get(5)?,
        lost_mapping: serde_json::from_str(&row.get::<_, String>(6)?)?,
        created_at: from_millis(row.get(7)?),
        allowed_origins: serde_json::from_str(&row.get::<_, String>(8)?)?,
        undo_window_seconds: row.get(10)?,
        default_consent: serde_json::from_str(&row.get::<_, String>(9)?)?,
        spam_rules: serde_json::from_str(&row.get::<_, String>(11)?)?,
        review_ratings: row.get(12)?,
        retention: Retention {
            days: row.get(13)?,
            spam_days: row.get(14)?,
            done_to: row.get::<_, Option<i64>>(15)?.map(from_millis),
            last_run: row
                .get::<_, Option<i64>>(16)?
                .map(|at| {
                    let erased = row.get::<_, i64>(17)?;
                    Ok::<_, rusqlite::Error>((from_millis(at), u64::try_from(erased).unwrap_or(0)))
                })
                .transpose()?,
        },
    })
}

/// The columns [`label`] reads, in order.
pub(crate) const LABEL_COLUMNS: &str =
    "id, project_id, name, mark_as_done, mapping, created_at, archived";

/// A conversion label from a row of [`LABEL_COLUMNS`].
pub(crate) fn label(row: &Row<'_>) -> Result<ConversionLabel, Error> {
    Ok(ConversionLabel {
        id: parse("labels.id", row.get(0)?)?,
        project_id: ProjectId(row.get(1)?),
        name: row.get(2)?,
        mark_as_done: row.get(3)?,
        mapping: serde_json::from_str(&row.get::<_, String>(4)?)?,
        created_at: from_millis(row.get(5)?),
        archived: row.get(6)?,
    })
}

/// The columns [`job`] reads, in order.
pub(crate) const JOB_COLUMNS: &str = "id, event_id, project_id, lead_id, conversion_id, \
     final_status, price, state, created_at, due_at, started_at, finished_at, rated_by, \
     conversion_event_id, converted_at, retracts";

/// A job from a row of [`JOB_COLUMNS`].
pub(crate) fn job(row: &Row<'_>) -> Result<Job, Error> {
    Ok(Job {
        id: JobId(row.get(0)?),
        event_id: parse("jobs.event_id", row.get(1)?)?,
        project_id: ProjectId(row.get(2)?),
        lead_id: LeadId(row.get(3)?),
        conversion_id: parse("jobs.conversion_id", row.get(4)?)?,
        final_status: parse("jobs.final_status", row.get(5)?)?,
        price: row.get(6)?,
        state: parse("jobs.state", row.get(7)?)?,
        created_at: from_millis(row.get(8)?),
        due_at: from_millis(row.get(9)?),
        started_at: row.get::<_, Option<i64>>(10)?.map(from_millis),
        finished_at: row.get::<_, Option<i64>>(11)?.map(from_millis),
        rated_by: actor(row.get(12)?)?,
        conversion_event_id: parse("jobs.conversion_event_id", row.get(13)?)?,
        converted_at: from_millis(row.get(14)?),
        retracts: match row.get::<_, Option<String>>(15)? {
            Some(json) => serde_json::from_str(&json)?,
            None => Vec::new(),
        },
    })
}

/// The columns [`attempt`] reads, in order (of `attempts`, which queries may alias `a`).
pub(crate) const ATTEMPT_COLUMNS: &str =
    "a.integration, a.at, a.outcome, a.http_status, a.error, a.retry_at, a.batch_id, a.batch_size";

/// A delivery attempt from a row of [`ATTEMPT_COLUMNS`].
pub(crate) fn attempt(row: &Row<'_>) -> Result<Attempt, Error> {
    Ok(Attempt {
        integration: parse("attempts.integration", row.get(0)?)?,
        at: from_millis(row.get(1)?),
        outcome: parse("attempts.outcome", row.get(2)?)?,
        http_status: row.get(3)?,
        error: row.get(4)?,
        retry_at: row.get::<_, Option<i64>>(5)?.map(from_millis),
        batch: match (row.get::<_, Option<String>>(6)?, row.get(7)?) {
            (Some(id), Some(size)) => Some(Batch {
                id: parse("attempts.batch_id", id)?,
                size,
            }),
            _ => None,
        },
    })
}

/// An actor from a nullable JSON column.
pub(crate) fn actor(json: Option<String>) -> Result<Option<Actor>, Error> {
    Ok(json.map(|json| serde_json::from_str(&json)).transpose()?)
}

/// An actor as a nullable JSON column holds it.
pub(crate) fn actor_json(actor: Option<&Actor>) -> Result<Option<String>, Error> {
    Ok(actor.map(serde_json::to_string).transpose()?)
}

/// The columns [`user`] reads, in order (of `users`, which queries may alias `u`).
pub(crate) const USER_COLUMNS: &str =
    "u.id, u.email, u.name, u.disabled, u.created_at, u.preferences";

/// How many columns [`USER_COLUMNS`] has: a query's next column is at this index.
pub(crate) const USER_WIDTH: usize = 6;

/// A user from a row of [`USER_COLUMNS`] (the password hash is never part of it).
pub(crate) fn user(row: &Row<'_>) -> Result<User, Error> {
    Ok(User {
        id: UserId(row.get(0)?),
        email: row.get(1)?,
        name: row.get(2)?,
        disabled: row.get(3)?,
        created_at: from_millis(row.get(4)?),
        preferences: Preferences::from_json(&row.get::<_, String>(5)?),
    })
}

/// The columns [`session`] reads, in order (of `sessions`, aliased `s`).
pub(crate) const SESSION_COLUMNS: &str = "s.user_id, s.created_at, s.last_seen_at";

/// A session from a row of [`SESSION_COLUMNS`] starting at column `at`.
pub(crate) fn session(row: &Row<'_>, at: usize) -> Result<Session, Error> {
    Ok(Session {
        user_id: UserId(row.get(at)?),
        created_at: from_millis(row.get(at + 1)?),
        last_seen_at: from_millis(row.get(at + 2)?),
    })
}

/// The columns [`event`] reads, in order.
pub(crate) const EVENT_COLUMNS: &str = "at, actor, activity";

/// A lead event from a row of [`EVENT_COLUMNS`].
pub(crate) fn event(row: &Row<'_>) -> Result<LeadEvent, Error> {
    Ok(LeadEvent {
        at: from_millis(row.get(0)?),
        by: actor(row.get(1)?)?,
        activity: serde_json::from_str(&row.get::<_, String>(2)?)?,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn storage_faults_are_passing_and_other_failures_are_not() {
        use leadtrack_core::StoreError;

        let failure = |code: i32| {
            super::Error::Sql(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(code),
                None,
            ))
        };
        for code in [
            rusqlite::ffi::SQLITE_FULL,
            rusqlite::ffi::SQLITE_READONLY,
            rusqlite::ffi::SQLITE_IOERR_WRITE,
        ] {
            let err = StoreError::from(failure(code));
            assert!(matches!(err, StoreError::Unavailable(_)), "{code}: {err}");
        }
        let corrupt = StoreError::from(failure(rusqlite::ffi::SQLITE_CORRUPT));
        assert!(matches!(corrupt, StoreError::Backend(_)), "{corrupt}");
    }
}
