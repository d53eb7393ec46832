//! The storage abstraction: everything the routes, the admin commands and the forwarding
//! worker need from a database, with nothing of any particular database in it.

use std::fmt;

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

use crate::api::{
    ConversionId, CreateLeadResponse, GetLeadsResponse, IntegrationKind, LeadIdentifier,
    LeadStatus, UpdateLeadStatusResponse, Warning, messages,
};
use crate::lead::{LeadData, StoredLead};
use crate::model::{
    ApiKeyInfo, Attempt, ClaimedJob, ConversionLabel, GeneratedKey, IntegrationSettings,
    Integrations, JobId, JobRecord, KEY_PREFIX_LEN, KeyHash, NewApiKey, NewLabel, NewProject,
    Project, ProjectId, ProjectSettings,
};
use crate::query::{LeadQuery, total_pages};
use crate::rules::{self, PlannedDelivery};
use crate::status::StatusUpdate;

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
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Project => "project",
            Self::Lead => "lead",
            Self::Label => "conversion label",
            Self::ApiKey => "API key",
            Self::Job => "job",
        })
    }
}

/// Why an operation conflicts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Conflict {
    /// The lead already has an unfinished conversion job (the 409 of updateLeadStatus).
    JobPending {
        /// The lead.
        lead_id: i64,
    },
    /// A project with this public id exists.
    ProjectExists(String),
    /// A key prefix matches several keys of the project; give the whole key.
    AmbiguousKey(String),
    /// The worker's lease on the job lapsed and another worker may hold it.
    LeaseLost(JobId),
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::JobPending { lead_id } => write!(f, "lead {lead_id} already has a pending job"),
            Self::ProjectExists(id) => write!(f, "a project with id {id:?} already exists"),
            Self::AmbiguousKey(prefix) => {
                write!(
                    f,
                    "the prefix {prefix:?} matches several keys; give the whole key"
                )
            }
            Self::LeaseLost(job) => write!(f, "the lease on job {} was lost", job.0),
        }
    }
}

/// Shorthand for store results.
pub type StoreResult<T> = Result<T, StoreError>;

/// How a key to revoke is named: by the whole key, or by its display prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyRef {
    /// The whole key, by its hash.
    Hash(KeyHash),
    /// The first characters of the key (at least the display prefix).
    Prefix(String),
}

impl KeyRef {
    /// A whole key (longer than a display prefix) is named by its hash, anything shorter
    /// by prefix.
    pub fn parse(key_or_prefix: &str) -> Self {
        let text = key_or_prefix.trim();
        if text.len() > KEY_PREFIX_LEN {
            Self::Hash(KeyHash::of(text))
        } else {
            Self::Prefix(text.to_owned())
        }
    }
}

/// The outcome of a create: a new lead, or a deduplicated one updated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreatedLead {
    /// The lead written.
    pub lead_id: i64,
    /// Its `uniqueIdentifier` after the write.
    pub unique_identifier: Option<String>,
    /// `true` for a new lead, `false` when an existing one was updated.
    pub created: bool,
}

impl CreatedLead {
    /// The response body: `Lead created successfully` or `Lead updated successfully`.
    pub fn to_response(&self) -> CreateLeadResponse {
        CreateLeadResponse {
            message: if self.created {
                messages::LEAD_CREATED
            } else {
                messages::LEAD_UPDATED
            }
            .to_owned(),
            lead_id: self.lead_id,
            unique_identifier: self.unique_identifier.clone(),
        }
    }
}

/// One page of a lead listing.
#[derive(Clone, Debug, PartialEq)]
pub struct LeadPage {
    /// The page's leads, in the query's order.
    pub leads: Vec<StoredLead>,
    /// Leads matching the filters on all pages.
    pub total: u64,
}

impl LeadPage {
    /// The getLeads response for this page of `query`.
    pub fn to_response(&self, query: &LeadQuery) -> GetLeadsResponse {
        let total_pages = total_pages(self.total, query.limit);
        GetLeadsResponse {
            message: messages::LEADS_RETRIEVED.to_owned(),
            leads: self.leads.iter().map(StoredLead::to_api).collect(),
            total: self.total,
            page: query.page,
            limit: query.limit,
            total_pages,
            has_more: u64::from(query.page) < total_pages,
        }
    }
}

/// The outcome of a status update.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusChange {
    /// The lead updated.
    pub lead_id: i64,
    /// Its `uniqueIdentifier`.
    pub unique_identifier: Option<String>,
    /// The job queued, or `None` for `open`.
    pub job: Option<JobId>,
    /// The integrations the queued conversion will skip.
    pub warnings: Vec<Warning>,
}

impl StatusChange {
    /// The response body (`open`: 200 without warnings; queued: 201 with warnings).
    pub fn to_response(&self) -> UpdateLeadStatusResponse {
        let queued = self.job.is_some();
        UpdateLeadStatusResponse {
            message: if queued {
                messages::LEAD_QUEUED
            } else {
                messages::STATUS_OPEN
            }
            .to_owned(),
            lead_id: self.lead_id,
            unique_identifier: self.unique_identifier.clone(),
            status: if queued {
                LeadStatus::Pending
            } else {
                LeadStatus::Open
            },
            queued,
            warnings: queued.then(|| self.warnings.clone()),
        }
    }
}

/// A conversion job a status update queues, decided by [`plan_conversion`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewJob {
    /// The stable event id platforms deduplicate on.
    pub event_id: Uuid,
    /// The label or `lost`.
    pub conversion_id: ConversionId,
    /// The status the lead takes when the job is done.
    pub final_status: LeadStatus,
    /// The price to report, in cents.
    pub price: Option<i64>,
    /// The integrations to deliver to (or skip).
    pub deliveries: Vec<PlannedDelivery>,
    /// The response's warnings: the skipped deliveries.
    pub warnings: Vec<Warning>,
}

/// Decides the job a label or `lost` queues for `lead`, once the store has checked the
/// label exists (`label` is `None` only for `lost`) and that the lead has no unfinished job.
///
/// Every backend calls this inside the transaction that queues the job, so the rules of
/// CONTRACT.md sections 5 and 6 live in one place.
pub fn plan_conversion(
    lead: &StoredLead,
    update: &StatusUpdate,
    label: Option<&ConversionLabel>,
    project: &Project,
    integrations: &Integrations,
    now: DateTime<Utc>,
) -> NewJob {
    let mapping = rules::mapping_for(label, &project.lost_mapping);
    let connected = integrations.connected();
    let deliveries = rules::plan_deliveries(lead, &connected, mapping, now);
    NewJob {
        event_id: Uuid::new_v4(),
        conversion_id: update.conversion_id,
        final_status: rules::final_status(update.conversion_id, label),
        price: update.price.or(lead.price),
        warnings: rules::warnings(lead, &connected, mapping, now),
        deliveries,
    }
}

/// The storage a leadtrack service runs on.
///
/// Every method is confined to what its arguments name: lead operations take the project of
/// the caller's key and never see or touch another project's records (another project's lead
/// is simply not found). Times are passed in, so callers and tests control the clock.
///
/// A backend passes `leadtrack_core::testkit` (feature `testkit`) before it is used.
#[async_trait]
pub trait LeadStore: Send + Sync + 'static {
    // ----- leads -----

    /// Creates a lead, or, when `data` carries a `formData.uniqueEventId` that a lead of the
    /// project already has, merges `data` into that lead ([`LeadData::merge`]). Atomic:
    /// concurrent creates with one event id make one lead.
    async fn create_lead(
        &self,
        project: ProjectId,
        data: LeadData,
        now: DateTime<Utc>,
    ) -> StoreResult<CreatedLead>;

    /// Finds a lead by id, or the most recently created match of the other identifiers
    /// (ties: the higher id), by the matching rules of [`crate::matching`].
    async fn find_lead(
        &self,
        project: ProjectId,
        identifier: &LeadIdentifier,
    ) -> StoreResult<Option<StoredLead>>;

    /// One page of the project's leads matching `query`, and the total count.
    async fn list_leads(&self, project: ProjectId, query: &LeadQuery) -> StoreResult<LeadPage>;

    /// Applies updateLeadStatus atomically.
    ///
    /// `open`: the lead becomes `open`, `price` and `note` apply, and a job of the lead that
    /// no worker has started is cancelled. A label or `lost`: fails with
    /// [`Conflict::JobPending`] when the lead has an unfinished job; otherwise `price` and
    /// `note` apply, the lead becomes `pending` with the `conversionId` recorded, and the job
    /// of [`plan_conversion`] is queued, due at once.
    ///
    /// Errors: [`Entity::Lead`] or [`Entity::Label`] not found.
    async fn update_status(
        &self,
        project: ProjectId,
        update: &StatusUpdate,
        now: DateTime<Utc>,
    ) -> StoreResult<StatusChange>;

    // ----- projects -----

    /// Creates a project (active, with [`crate::model::LabelMapping::default_lost`]).
    /// Errors: [`Conflict::ProjectExists`]; [`StoreError::Invalid`] for a bad id or currency.
    async fn create_project(&self, project: NewProject, now: DateTime<Utc>)
    -> StoreResult<Project>;

    /// Every project, oldest first.
    async fn projects(&self) -> StoreResult<Vec<Project>>;

    /// The project with this public id.
    async fn project_by_public_id(&self, public_id: &str) -> StoreResult<Option<Project>>;

    /// Changes a project's settings.
    async fn update_project(
        &self,
        project: ProjectId,
        settings: ProjectSettings,
    ) -> StoreResult<Project>;

    /// Activates or deactivates a project; a deactivated project's routes answer 403.
    async fn set_project_active(&self, project: ProjectId, active: bool) -> StoreResult<Project>;

    // ----- API keys -----

    /// Stores a generated key (its hash and prefix only).
    async fn insert_api_key(
        &self,
        project: ProjectId,
        key: &GeneratedKey,
        now: DateTime<Utc>,
    ) -> StoreResult<ApiKeyInfo>;

    /// Generates a key for the project and stores it; the plain key is returned once.
    async fn issue_api_key(
        &self,
        project: ProjectId,
        now: DateTime<Utc>,
    ) -> StoreResult<NewApiKey> {
        let key = GeneratedKey::generate();
        let info = self.insert_api_key(project, &key, now).await?;
        Ok(NewApiKey { key: key.key, info })
    }

    /// The project's keys, revoked ones included, oldest first.
    async fn api_keys(&self, project: ProjectId) -> StoreResult<Vec<ApiKeyInfo>>;

    /// Revokes a key of the project. Errors: [`Entity::ApiKey`] not found,
    /// [`Conflict::AmbiguousKey`].
    async fn revoke_api_key(
        &self,
        project: ProjectId,
        key: &KeyRef,
        now: DateTime<Utc>,
    ) -> StoreResult<ApiKeyInfo>;

    /// The project of an unrevoked key, found by the key's hash alone: the lookup's cost
    /// depends on the hash, never on how much of a guessed key is right.
    async fn authenticate(&self, key: &KeyHash) -> StoreResult<Option<Project>>;

    // ----- conversion labels -----

    /// Creates a label.
    async fn create_label(
        &self,
        project: ProjectId,
        label: NewLabel,
        now: DateTime<Utc>,
    ) -> StoreResult<ConversionLabel>;

    /// The project's labels, oldest first.
    async fn labels(&self, project: ProjectId) -> StoreResult<Vec<ConversionLabel>>;

    /// A label of the project.
    async fn label(&self, project: ProjectId, id: Uuid) -> StoreResult<Option<ConversionLabel>>;

    // ----- integrations -----

    /// The project's connected integrations.
    async fn integrations(&self, project: ProjectId) -> StoreResult<Integrations>;

    /// Connects an integration, or replaces its settings.
    async fn set_integration(
        &self,
        project: ProjectId,
        settings: IntegrationSettings,
        now: DateTime<Utc>,
    ) -> StoreResult<()>;

    /// Disconnects an integration; `false` when it was not connected.
    async fn remove_integration(
        &self,
        project: ProjectId,
        kind: IntegrationKind,
    ) -> StoreResult<bool>;

    // ----- the job queue -----

    /// Claims the job due soonest (a queued job due by `now`, or a running job whose lease
    /// lapsed) with a lease lasting `lease_for`.
    async fn claim_job(
        &self,
        now: DateTime<Utc>,
        lease_for: Duration,
    ) -> StoreResult<Option<ClaimedJob>>;

    /// Records a delivery attempt and moves the delivery to the attempt's
    /// [`crate::model::AttemptOutcome::delivery_state`]. Errors: [`Conflict::LeaseLost`].
    async fn record_attempt(&self, job: JobId, lease: Uuid, attempt: &Attempt) -> StoreResult<()>;

    /// Returns a claimed job to the queue, due at `due_at`, releasing the lease.
    async fn reschedule_job(
        &self,
        job: JobId,
        lease: Uuid,
        due_at: DateTime<Utc>,
    ) -> StoreResult<()>;

    /// Ends a job whose deliveries have all ended, and moves its lead to the job's final
    /// status, unless the lead was reset to `open` meanwhile. Returns the lead's status.
    async fn finish_job(
        &self,
        job: JobId,
        lease: Uuid,
        now: DateTime<Utc>,
    ) -> StoreResult<LeadStatus>;

    /// A lead's jobs, newest first, with their deliveries and attempts.
    async fn lead_jobs(&self, project: ProjectId, lead_id: i64) -> StoreResult<Vec<JobRecord>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_keys_are_named_by_hash_and_short_ones_by_prefix() {
        let key = GeneratedKey::generate();
        assert_eq!(KeyRef::parse(&key.key), KeyRef::Hash(key.hash));
        assert_eq!(
            KeyRef::parse(&key.prefix),
            KeyRef::Prefix(key.prefix.clone())
        );
        assert_eq!(KeyRef::parse(" lt_ab "), KeyRef::Prefix("lt_ab".into()));
    }

    #[test]
    fn page_responses_count_pages() {
        let query = LeadQuery {
            limit: 10,
            page: 3,
            ..LeadQuery::default()
        };
        let page = LeadPage {
            leads: vec![],
            total: 25,
        };
        let response = page.to_response(&query);
        assert_eq!((response.total_pages, response.has_more), (3, false));
        let response = page.to_response(&LeadQuery {
            page: 2,
            ..query.clone()
        });
        assert!(response.has_more);
        let response = page.to_response(&LeadQuery { page: 9, ..query });
        assert_eq!((response.total, response.has_more), (25, false));
    }
}
