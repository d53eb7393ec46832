//! Turning rows into the core's records, and the error type of this crate's SQL code.

use std::str::FromStr;

use deadpool_postgres::GenericClient;
use leadtrack_core::StoreError;
use leadtrack_core::account::{Actor, Preferences, Session, User};
use leadtrack_core::activity::LeadEvent;
use leadtrack_core::assignment::Assignee;
use leadtrack_core::job::{Attempt, Batch, Job};
use leadtrack_core::label::ConversionLabel;
use leadtrack_core::lead::StoredLead;
use leadtrack_core::project::{Project, Retention};
use leadtrack_core::time::from_millis;
use leadtrack_core::types::{JobId, LeadId, ProjectId, UserId};
use tokio_postgres::Row;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;

/// What the SQL code fails with; converted to [`StoreError`] at the store's boundary.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// PostgreSQL, or the connection to it, failed.
    #[error(transparent)]
    Sql(#[from] tokio_postgres::Error),
    /// No connection could be had from the pool.
    #[error(transparent)]
    Pool(#[from] deadpool_postgres::PoolError),
    /// A JSON column did not hold what it should.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
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

impl Error {
    /// PostgreSQL's SQLSTATE of the failure, if it is one of PostgreSQL's.
    pub(crate) fn code(&self) -> Option<&SqlState> {
        match self {
            Self::Sql(err) => err.code(),
            _ => None,
        }
    }

    /// Whether PostgreSQL aborted the transaction for a serialisation failure or a
    /// deadlock, so that running it again may succeed.
    pub(crate) fn is_retryable(&self) -> bool {
        matches!(
            self.code(),
            Some(&SqlState::T_R_SERIALIZATION_FAILURE | &SqlState::T_R_DEADLOCK_DETECTED)
        )
    }

    /// Whether a unique index refused the write.
    pub(crate) fn is_unique_violation(&self) -> bool {
        self.code() == Some(&SqlState::UNIQUE_VIOLATION)
    }
}

impl From<Error> for StoreError {
    fn from(err: Error) -> Self {
        match err {
            Error::Store(err) => err,
            Error::Pool(err) => {
                tracing::warn!(error = %err, "no database connection to be had");
                StoreError::Unavailable("no database connection is free".to_owned())
            }
            Error::Sql(err) if is_passing(&err) => {
                tracing::error!(error = %err, "the database refused the work");
                StoreError::Unavailable("the database cannot serve the request now".to_owned())
            }
            other => StoreError::backend(other),
        }
    }
}

/// Whether PostgreSQL failed for a passing reason: the connection is gone, the server is
/// shutting down or out of resources, or a statement ran past its time limit. The caller
/// is told to retry.
fn is_passing(err: &tokio_postgres::Error) -> bool {
    if err.is_closed() {
        return true;
    }
    err.code().is_some_and(|code| {
        let class = &code.code()[..2];
        // 08: connection exception; 53: insufficient resources; 57: operator
        // intervention (shutdown, statement timeout = 57014 query_canceled).
        matches!(class, "08" | "53" | "57")
    })
}

/// One row of `sql` with `params`, or `None`.
pub(crate) async fn one(
    c: &impl GenericClient,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Option<Row>, Error> {
    Ok(c.query_opt(&c.prepare_cached(sql).await?, params).await?)
}

/// The rows of `sql` with `params`.
pub(crate) async fn all(
    c: &impl GenericClient,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Vec<Row>, Error> {
    Ok(c.query(&c.prepare_cached(sql).await?, params).await?)
}

/// Locks the project's lead `FOR SHARE`, so that a deletion of the lead waits for the
/// caller's transaction (and then deletes what it wrote with the lead); fails with
/// [`leadtrack_core::store::Entity::Lead`] not found when there is none.
pub(crate) async fn lock_lead(
    c: &impl GenericClient,
    project: ProjectId,
    lead: LeadId,
) -> Result<(), Error> {
    one(
        c,
        "SELECT 1 FROM leads WHERE project_id = $1 AND id = $2 FOR SHARE",
        &[&project.0, &lead.0],
    )
    .await?
    .map(|_| ())
    .ok_or(Error::Store(leadtrack_core::StoreError::NotFound(
        leadtrack_core::store::Entity::Lead,
    )))
}

/// Runs `sql` with `params`; the number of rows it changed.
pub(crate) async fn run(
    c: &impl GenericClient,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<u64, Error> {
    Ok(c.execute(&c.prepare_cached(sql).await?, params).await?)
}

/// Parses a text column into an enumeration.
pub(crate) fn parse<T: FromStr>(column: &'static str, value: String) -> Result<T, Error> {
    value.parse().map_err(|_| Error::Corrupt { column, value })
}

/// The columns [`lead`] reads, in order.
pub(crate) const LEAD_COLUMNS: &str = "id, project_id, status, price, note, conversion_id, created_at, data, spam_reason, duplicate_of, duplicated, assigned_to, (SELECT name FROM users WHERE users.id = leads.assigned_to)";

/// A lead from a row of [`LEAD_COLUMNS`].
pub(crate) fn lead(row: &Row) -> Result<StoredLead, Error> {
    Ok(StoredLead {
        id: LeadId(row.try_get(0)?),
        project_id: ProjectId(row.try_get(1)?),
        status: parse("status", row.try_get(2)?)?,
        price: row.try_get(3)?,
        note: row.try_get(4)?,
        conversion_id: row
            .try_get::<_, Option<String>>(5)?
            .map(|id| parse("conversion_id", id))
            .transpose()?,
        created_at: from_millis(row.try_get(6)?),
        data: serde_json::from_str(row.try_get::<_, &str>(7)?)?,
        spam_reason: row
            .try_get::<_, Option<String>>(8)?
            .map(|reason| parse("spam_reason", reason))
            .transpose()?,
        duplicate_of: row.try_get::<_, Option<i64>>(9)?.map(LeadId),
        duplicated: row.try_get(10)?,
        assignee: Assignee::of_row(row.try_get(11)?, row.try_get(12)?),
    })
}

/// The columns [`project`] reads, in order.
pub(crate) const PROJECT_COLUMNS: &str = "id, public_id, name, active, currency, region, lost_mapping, created_at, allowed_origins, default_consent, undo_window_seconds, spam_rules, review_ratings, retention_days, spam_retention_days, retention_done_to, retention_ran_at, retention_erased";

/// A project from a row of [`PROJECT_COLUMNS`].
pub(crate) fn project(row: &Row) -> Result<Project, Error> {
    Ok(Project {
        id: ProjectId(row.try_get(0)?),
        public_id: row.try_get(1)?,
        name: row.try_get(2)?,
        active: row.try_get(3)?,
        currency: row.try_get(4)?,
        region: row.try_get(5)?,
        lost_mapping: serde_json::from_str(row.try_get::<_, &str>(6)?)?,
        created_at: from_millis(row.try_get(7)?),
        allowed_origins: serde_json::from_str(row.try_get::<_, &str>(8)?)?,
        undo_window_seconds: {
            let seconds: i32 = row.try_get(10)?;
            u32::try_from(seconds).map_err(|_| Error::Corrupt {
                column: "projects.undo_window_seconds",
                value: seconds.to_string(),
            })?
        },
        default_consent: serde_json::from_str(row.try_get::<_, &str>(9)?)?,
        spam_rules: serde_json::from_str(row.try_get::<_, &str>(11)?)?,
        review_ratings: row.try_get(12)?,
        retention: Retention {
            days: row
                .try_get::<_, Option<i32>>(13)?
                .map(|days| u32::try_from(days).unwrap_or_default()),
            spam_days: u32::try_from(row.try_get::<_, i32>(14)?).unwrap_or_default(),
            done_to: row.try_get::<_, Option<i64>>(15)?.map(from_millis),
            last_run: match row.try_get::<_, Option<i64>>(16)? {
                Some(at) => Some((
                    from_millis(at),
                    u64::try_from(row.try_get::<_, i64>(17)?).unwrap_or_default(),
                )),
                None => None,
            },
        },
    })
}

/// The columns [`label`] reads, in order.
pub(crate) const LABEL_COLUMNS: &str =
    "id, project_id, name, mark_as_done, mapping, created_at, archived";

/// A conversion label from a row of [`LABEL_COLUMNS`].
pub(crate) fn label(row: &Row) -> Result<ConversionLabel, Error> {
    Ok(ConversionLabel {
        id: row.try_get(0)?,
        project_id: ProjectId(row.try_get(1)?),
        name: row.try_get(2)?,
        mark_as_done: row.try_get(3)?,
        mapping: serde_json::from_str(row.try_get::<_, &str>(4)?)?,
        created_at: from_millis(row.try_get(5)?),
        archived: row.try_get(6)?,
    })
}

/// The columns [`job`] reads, in order.
pub(crate) const JOB_COLUMNS: &str = "id, event_id, project_id, lead_id, conversion_id, \
     final_status, price, state, created_at, due_at, started_at, finished_at, rated_by, \
     conversion_event_id, converted_at, retracts";

/// A job from a row of [`JOB_COLUMNS`].
pub(crate) fn job(row: &Row) -> Result<Job, Error> {
    Ok(Job {
        id: JobId(row.try_get(0)?),
        event_id: row.try_get(1)?,
        project_id: ProjectId(row.try_get(2)?),
        lead_id: LeadId(row.try_get(3)?),
        conversion_id: parse("jobs.conversion_id", row.try_get(4)?)?,
        final_status: parse("jobs.final_status", row.try_get(5)?)?,
        price: row.try_get(6)?,
        state: parse("jobs.state", row.try_get(7)?)?,
        created_at: from_millis(row.try_get(8)?),
        due_at: from_millis(row.try_get(9)?),
        started_at: row.try_get::<_, Option<i64>>(10)?.map(from_millis),
        finished_at: row.try_get::<_, Option<i64>>(11)?.map(from_millis),
        rated_by: actor(row.try_get(12)?)?,
        conversion_event_id: row.try_get(13)?,
        converted_at: from_millis(row.try_get(14)?),
        retracts: match row.try_get::<_, Option<String>>(15)? {
            Some(json) => serde_json::from_str(&json)?,
            None => Vec::new(),
        },
    })
}

/// The columns [`attempt`] reads, in order (of `attempts`, which queries may alias `a`).
pub(crate) const ATTEMPT_COLUMNS: &str =
    "a.integration, a.at, a.outcome, a.http_status, a.error, a.retry_at, a.batch_id, a.batch_size";

/// A delivery attempt from a row of [`ATTEMPT_COLUMNS`] starting at column `at`.
pub(crate) fn attempt(row: &Row, at: usize) -> Result<Attempt, Error> {
    Ok(Attempt {
        integration: parse("attempts.integration", row.try_get(at)?)?,
        at: from_millis(row.try_get(at + 1)?),
        outcome: parse("attempts.outcome", row.try_get(at + 2)?)?,
        http_status: row
            .try_get::<_, Option<i32>>(at + 3)?
            .and_then(|status| u16::try_from(status).ok()),
        error: row.try_get(at + 4)?,
        retry_at: row.try_get::<_, Option<i64>>(at + 5)?.map(from_millis),
        batch: match (row.try_get(at + 6)?, row.try_get::<_, Option<i32>>(at + 7)?) {
            (Some(id), Some(size)) => Some(Batch {
                id,
                size: u32::try_from(size).unwrap_or_default(),
            }),
            _ => None,
        },
    })
}

/// An actor from a nullable JSON column.
pub(crate) fn actor(json: Option<&str>) -> Result<Option<Actor>, Error> {
    Ok(json.map(serde_json::from_str).transpose()?)
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
pub(crate) fn user(row: &Row) -> Result<User, Error> {
    Ok(User {
        id: UserId(row.try_get(0)?),
        email: row.try_get(1)?,
        name: row.try_get(2)?,
        disabled: row.try_get(3)?,
        created_at: from_millis(row.try_get(4)?),
        preferences: Preferences::from_json(&row.try_get::<_, String>(5)?),
    })
}

/// The columns [`session`] reads, in order (of `sessions`, aliased `s`).
pub(crate) const SESSION_COLUMNS: &str = "s.user_id, s.created_at, s.last_seen_at";

/// A session from a row of [`SESSION_COLUMNS`] starting at column `at`.
pub(crate) fn session(row: &Row, at: usize) -> Result<Session, Error> {
    Ok(Session {
        user_id: UserId(row.try_get(at)?),
        created_at: from_millis(row.try_get(at + 1)?),
        last_seen_at: from_millis(row.try_get(at + 2)?),
    })
}

/// The columns [`event`] reads, in order.
pub(crate) const EVENT_COLUMNS: &str = "at, actor, activity";

/// A lead event from a row of [`EVENT_COLUMNS`].
pub(crate) fn event(row: &Row) -> Result<LeadEvent, Error> {
    event_at(row, 0)
}

/// A lead event from the columns of [`EVENT_COLUMNS`] starting at column `at`.
pub(crate) fn event_at(row: &Row, at: usize) -> Result<LeadEvent, Error> {
    Ok(LeadEvent {
        at: from_millis(row.try_get(at)?),
        by: actor(row.try_get(at + 1)?)?,
        activity: serde_json::from_str(row.try_get::<_, &str>(at + 2)?)?,
    })
}
