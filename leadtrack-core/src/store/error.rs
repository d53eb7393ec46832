//! What a store operation can fail with. The HTTP layer maps each variant in one place.

use std::fmt;

use crate::types::{JobId, LeadId};

/// What a store operation can fail with. The HTTP layer maps each variant in one place.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The record does not exist (in this project).
    #[error("{0} not found")]
    NotFound(Entity),
    /// The operation conflicts with the record's state.
    #[error("{0}")]
    Conflict(Conflict),
    /// The request is invalid for reasons only the store can see.
    #[error("invalid: {0}")]
    Invalid(String),
    /// The store is closed or overloaded; the caller may retry later.
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// The backend failed.
    #[error("backend failure: {0}")]
    Backend(Box<dyn std::error::Error + Send + Sync>),
}

impl StoreError {
    /// Wraps any backend error.
    pub fn backend(err: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Backend(Box::new(err))
    }
}

/// The kinds of records a store keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entity {
    /// A project.
    Project,
    /// A lead.
    Lead,
    /// A conversion label.
    Label,
    /// An API key.
    ApiKey,
    /// A conversion job.
    Job,
    /// A user.
    User,
    /// A sign-in session (unknown, ended or expired).
    Session,
    /// A lead webhook or one of its event deliveries, or an inbound webhook.
    Webhook,
    /// An invitation (unknown, taken, revoked, renewed or expired).
    Invitation,
    /// A link about an account: a password reset or an email change (unknown, used,
    /// replaced or expired).
    Link,
    /// A comment on a lead (also one its reader did not write, for editing or deleting).
    Comment,
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Project => "project",
            Self::Lead => "lead",
            Self::Label => "conversion label",
            Self::ApiKey => "API key",
            Self::Job => "job",
            Self::User => "user",
            Self::Session => "session",
            Self::Webhook => "webhook",
            Self::Invitation => "invitation",
            Self::Link => "link",
            Self::Comment => "comment",
        })
    }
}

/// Why an operation conflicts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Conflict {
    /// The lead already has an unfinished conversion job (the 409 of updateLeadStatus).
    JobPending {
        /// The lead.
        lead_id: LeadId,
    },
    /// A project with this public id exists.
    ProjectExists(String),
    /// A user with this email (in any case) exists.
    UserExists(String),
    /// A key prefix matches several keys of the project; give the whole key.
    AmbiguousKey(String),
    /// The worker's lease on the job lapsed and another worker may hold it.
    LeaseLost(JobId),
    /// The worker's lease on a webhook event delivery (by its id) lapsed, and another
    /// worker may hold it.
    WebhookLeaseLost(i64),
    /// The fetcher's lease on a lead fetch (by its id) lapsed, and another fetcher may hold
    /// it.
    FetchLeaseLost(i64),
    /// The change would leave the project without an owner.
    LastOwner,
    /// The form's rating was saved already (a double click, a repeated Enter, a replay).
    AlreadySaved {
        /// The lead.
        lead_id: LeadId,
    },
    /// The label was used (a lead, a conversion or a draft has it): archive it instead.
    LabelInUse,
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::JobPending { lead_id } => write!(f, "lead {lead_id} already has a pending job"),
            Self::ProjectExists(id) => write!(f, "a project with id {id:?} already exists"),
            Self::UserExists(email) => write!(f, "a user with email {email:?} already exists"),
            Self::AmbiguousKey(prefix) => {
                write!(
                    f,
                    "the prefix {prefix:?} matches several keys; give the whole key"
                )
            }
            Self::LeaseLost(job) => write!(f, "the lease on job {} was lost", job.0),
            Self::WebhookLeaseLost(id) => {
                write!(f, "the lease on webhook event delivery {id} was lost")
            }
            Self::FetchLeaseLost(id) => write!(f, "the lease on lead fetch {id} was lost"),
            Self::LastOwner => {
                f.write_str("that is the project's last owner; make another member an owner first")
            }
            Self::AlreadySaved { lead_id } => {
                write!(f, "the rating of lead {lead_id} was already saved")
            }
            Self::LabelInUse => {
                f.write_str("the label has been used; archive it instead of deleting it")
            }
        }
    }
}

/// Shorthand for store results.
pub type StoreResult<T> = Result<T, StoreError>;
