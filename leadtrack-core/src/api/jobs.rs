//! getLeadJobs: a lead's conversion jobs with every delivery and attempt.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::messages;
use crate::job::{Attempt, Batch, Delivery, JobRecord};
use crate::types::{
    AttemptOutcome, ConversionId, DeliveryAction, DeliveryState, IntegrationKind, JobId, JobState,
    LeadId,
};

/// Response of getLeadJobs: a lead's conversion jobs, newest first, with every delivery and
/// every attempt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetLeadJobsResponse {
    /// `Lead jobs retrieved`.
    pub message: String,
    /// The lead.
    pub lead_id: LeadId,
    /// Its jobs, newest first.
    pub jobs: Vec<JobView>,
}

/// A conversion job as getLeadJobs shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobView {
    /// The job's id.
    pub id: JobId,
    /// The job's own event id (stable across its retries).
    pub event_id: Uuid,
    /// The conversion's id, the one every platform receives: the same for every job of
    /// one lead and label (or of one lead and `lost`).
    pub conversion_event_id: Uuid,
    /// The label or `lost` applied.
    pub conversion_id: ConversionId,
    /// `queued`, `running`, `done` or `cancelled`.
    pub status: JobState,
    /// The price reported, in cents.
    pub price: Option<i64>,
    /// Who rated the lead: a user's name or `API key <prefix>`; `null` for jobs from before
    /// this was recorded.
    pub rated_by: Option<String>,
    /// When the rating was applied.
    #[serde(with = "crate::time::rfc3339_millis")]
    pub created_at: DateTime<Utc>,
    /// When a worker first picked it up.
    #[serde(with = "crate::time::rfc3339_millis_option")]
    pub started_at: Option<DateTime<Utc>>,
    /// When it ended.
    #[serde(with = "crate::time::rfc3339_millis_option")]
    pub finished_at: Option<DateTime<Utc>>,
    /// One per integration the conversion goes to (or skips).
    pub deliveries: Vec<DeliveryView>,
}

/// One integration's delivery of a job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryView {
    /// The integration.
    pub integration: IntegrationKind,
    /// What it does at the platform: `send`, `restate` or `retract`.
    pub action: DeliveryAction,
    /// `pending`, `delivered`, `skipped` or `failed`.
    pub status: DeliveryState,
    /// When the next attempt is due, while pending.
    #[serde(with = "crate::time::rfc3339_millis_option")]
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// Why it was skipped, or its last error.
    pub detail: Option<String>,
    /// Every attempt, oldest first.
    pub attempts: Vec<AttemptView>,
}

/// One delivery attempt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AttemptView {
    /// When it was made.
    #[serde(with = "crate::time::rfc3339_millis")]
    pub at: DateTime<Utc>,
    /// `delivered`, `skipped`, `retry` or `failed`.
    pub outcome: AttemptOutcome,
    /// The platform's HTTP status, when it answered.
    pub http_status: Option<u16>,
    /// What went wrong, briefly.
    pub error: Option<String>,
    /// For a retry: when the next attempt is due.
    #[serde(with = "crate::time::rfc3339_millis_option")]
    pub retry_at: Option<DateTime<Utc>>,
    /// (Addition) The batched request the attempt went out in (`{"id", "size"}`); `null`
    /// when it sent no batch: a skip, a webhook, GA4, an attempt recorded before batches.
    pub batch: Option<Batch>,
}

impl From<&Attempt> for AttemptView {
    fn from(attempt: &Attempt) -> Self {
        Self {
            at: attempt.at,
            outcome: attempt.outcome,
            http_status: attempt.http_status,
            error: attempt.error.clone(),
            retry_at: attempt.retry_at,
            batch: attempt.batch,
        }
    }
}

impl From<&(Delivery, Vec<Attempt>)> for DeliveryView {
    fn from((delivery, attempts): &(Delivery, Vec<Attempt>)) -> Self {
        Self {
            integration: delivery.integration,
            action: delivery.action,
            status: delivery.state,
            next_attempt_at: delivery.next_attempt_at,
            detail: delivery.detail.clone(),
            attempts: attempts.iter().map(AttemptView::from).collect(),
        }
    }
}

impl From<&JobRecord> for JobView {
    fn from(record: &JobRecord) -> Self {
        let job = &record.job;
        Self {
            id: job.id,
            event_id: job.event_id,
            conversion_event_id: job.conversion_event_id,
            conversion_id: job.conversion_id,
            status: job.state,
            price: job.price,
            rated_by: job.rated_by.as_ref().map(ToString::to_string),
            created_at: job.created_at,
            started_at: job.started_at,
            finished_at: job.finished_at,
            deliveries: record.deliveries.iter().map(DeliveryView::from).collect(),
        }
    }
}

impl GetLeadJobsResponse {
    /// The response for a lead's job records.
    pub fn new(lead_id: LeadId, records: &[JobRecord]) -> Self {
        Self {
            message: messages::LEAD_JOBS_RETRIEVED.to_owned(),
            lead_id,
            jobs: records.iter().map(JobView::from).collect(),
        }
    }
}
