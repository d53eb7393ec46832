//! Conversion jobs: what a rating queues (the deliveries it plans and the warnings it
//! answers with), and the job as workers claim it and record their attempts on it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::account::Actor;
use crate::integration::Integrations;
use crate::label::{ConversionLabel, LabelMapping, mapping_for};
use crate::lead::StoredLead;
use crate::project::Project;
use crate::types::{
    AttemptOutcome, ConversionId, DeliveryAction, DeliveryState, IntegrationKind, JobId, JobState,
    LeadId, LeadStatus, ProjectId,
};

/// One integration that a queued conversion will skip, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// The integration that will be skipped.
    pub integration: IntegrationKind,
    /// A sentence a person understands.
    pub reason: String,
    /// The missing field: `gclid`, `cid` or `user_data`.
    pub field: String,
    /// When the warning was generated.
    #[serde(with = "crate::time::rfc3339_millis")]
    pub timestamp: DateTime<Utc>,
}

/// Why a lead cannot be sent to an integration: the missing field and a sentence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skip {
    /// `gclid`, `cid` or `user_data`.
    pub field: &'static str,
    /// A sentence a person understands.
    pub reason: String,
}

/// One integration a conversion goes to, or is skipped for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedDelivery {
    /// The integration.
    pub integration: IntegrationKind,
    /// What it does there.
    pub action: DeliveryAction,
    /// Why it is skipped, if it is.
    pub skip: Option<Skip>,
}

/// A label conversion a `lost` rating withdraws where the platform that has it can: what the
/// retraction names, as it was when the conversion was sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Retraction {
    /// The label's id.
    pub label_id: Uuid,
    /// The label's name.
    pub label_name: String,
    /// Whether the label marks leads done.
    pub mark_as_done: bool,
    /// The conversion's id.
    pub conversion_event_id: Uuid,
    /// When it was first rated.
    pub converted_at: DateTime<Utc>,
    /// The price the platforms have, in cents.
    pub price: Option<i64>,
    /// The Microsoft Advertising goal it was applied to, if it was.
    pub microsoft_ads_conversion: Option<String>,
    /// The platforms that have it.
    pub sent_to: Vec<IntegrationKind>,
}

/// A conversion job a status update queues, decided by [`crate::rules::plan_conversion`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewJob {
    /// The job's own event id (contract section 10).
    pub event_id: Uuid,
    /// The conversion's id, which every platform receives: an earlier job's of the same
    /// conversion, else this job's event id.
    pub conversion_event_id: Uuid,
    /// When the conversion was first rated: its time at every platform.
    pub converted_at: DateTime<Utc>,
    /// For `lost`: the lead's label conversions it withdraws.
    pub retracts: Vec<Retraction>,
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

/// A lead's rating as it stood before a rating changed it: what an undo restores.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PriorRating {
    /// Its status.
    pub status: LeadStatus,
    /// Its label or `lost`, if it had one.
    pub conversion_id: Option<ConversionId>,
    /// Its price, in cents.
    pub price: Option<i64>,
    /// Its note.
    pub note: Option<String>,
}

impl PriorRating {
    /// What `lead` has now; a spam lead, once rated, is a real lead, so `open`.
    pub fn of(lead: &StoredLead) -> Self {
        let status = match lead.status {
            LeadStatus::Spam => LeadStatus::Open,
            status => status,
        };
        Self {
            status,
            conversion_id: lead.conversion_id,
            price: lead.price,
            note: lead.note.clone(),
        }
    }
}

/// A rating made through a form, as the dashboard makes them: held for the project's undo
/// window, and saved once per form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FormRating {
    /// The form's one-time token: a second rating of a lead with it is refused
    /// ([`crate::store::Conflict::AlreadySaved`]); a bulk rating's leads share it.
    pub token: Uuid,
    /// How long the job waits, undoable, before a worker may take it.
    pub hold: chrono::Duration,
}

/// What an undo takes back: a lead's rating, or every rating of one form (a bulk rating).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UndoTarget {
    /// The lead's job, if it has not left yet.
    Lead(LeadId),
    /// The jobs of the form with this token that have not left yet.
    Form(Uuid),
}

/// Which failed deliveries to try again: a lead's, or an integration's since a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryTarget {
    /// The lead's last conversion, every platform it failed at.
    Lead(LeadId),
    /// The conversions rated since `since` that failed at `kind`.
    Integration {
        /// The platform.
        kind: IntegrationKind,
        /// The earliest rating time.
        since: DateTime<Utc>,
    },
}

/// The outcome of a status update.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusChange {
    /// The lead updated.
    pub lead_id: LeadId,
    /// Its `uniqueIdentifier`.
    pub unique_identifier: Option<String>,
    /// The job queued, or `None` for `open`.
    pub job: Option<JobId>,
    /// The integrations the queued conversion will skip.
    pub warnings: Vec<Warning>,
}

/// A conversion job: one rating of one lead, to be delivered to its integrations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// Its id.
    pub id: JobId,
    /// The job's own event id, stable across its retries.
    pub event_id: Uuid,
    /// The conversion's id (the same for every job of one lead and label, or of one lead and
    /// `lost`): what every platform receives, so each sees one conversion however often it
    /// is rated.
    pub conversion_event_id: Uuid,
    /// When the conversion was first rated: its time at every platform.
    pub converted_at: DateTime<Utc>,
    /// For `lost`: the lead's label conversions it withdraws.
    pub retracts: Vec<Retraction>,
    /// The lead's project.
    pub project_id: ProjectId,
    /// The lead.
    pub lead_id: LeadId,
    /// The label or `lost` applied.
    pub conversion_id: ConversionId,
    /// The status the lead takes when the job is done.
    pub final_status: LeadStatus,
    /// The lead's price when the rating was applied, in cents.
    pub price: Option<i64>,
    /// Who applied the rating (`None` for jobs from before this was recorded).
    pub rated_by: Option<Actor>,
    /// When the rating was applied: the conversion's time.
    pub created_at: DateTime<Utc>,
    /// When the job is next due.
    pub due_at: DateTime<Utc>,
    /// Where it stands.
    pub state: JobState,
    /// When a worker first picked it up.
    pub started_at: Option<DateTime<Utc>>,
    /// When it ended.
    pub finished_at: Option<DateTime<Utc>>,
}

/// One integration's delivery of a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// The integration.
    pub integration: IntegrationKind,
    /// What it does at the platform.
    pub action: DeliveryAction,
    /// Where it stands.
    pub state: DeliveryState,
    /// Attempts made so far.
    pub attempts: u32,
    /// When the next attempt is due (pending deliveries only).
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// Why it was skipped, or the last error.
    pub detail: Option<String>,
}

impl Delivery {
    /// Whether it needs someone to look: it failed for good, or it failed and waits to be
    /// tried again. The stores' index of such deliveries (`deliveries_troubled`) states the
    /// same in SQL.
    pub fn is_troubled(&self) -> bool {
        match self.state {
            DeliveryState::Failed => true,
            DeliveryState::Pending => self.attempts > 0,
            DeliveryState::Delivered | DeliveryState::Skipped => false,
        }
    }
}

/// A delivery of a lead's last conversion that has not reached its platform
/// ([`Delivery::is_troubled`]), with the conversion's job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trouble {
    /// The lead's last job.
    pub job: Job,
    /// Its troubled delivery.
    pub delivery: Delivery,
}

/// The most troubled deliveries a project's list holds: past that many, a team has a
/// platform to fix, not leads to look at one by one.
pub const TROUBLES_LISTED: u32 = 200;

/// One delivery attempt, as recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// The integration.
    pub integration: IntegrationKind,
    /// When it was made.
    pub at: DateTime<Utc>,
    /// How it ended.
    pub outcome: AttemptOutcome,
    /// The platform's HTTP status, when it answered.
    pub http_status: Option<u16>,
    /// A short description of the failure (never a secret).
    pub error: Option<String>,
    /// For [`AttemptOutcome::Retry`]: when to try again.
    pub retry_at: Option<DateTime<Utc>>,
    /// The request it went out in, for a platform that takes many events in one.
    pub batch: Option<Batch>,
}

/// One request that carried the conversions of several jobs to a platform: every attempt
/// it made records the same id and size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Batch {
    /// The request's id, the same for every attempt made in it.
    pub id: Uuid,
    /// How many conversions it carried.
    pub size: u32,
}

/// A worker's hold on a job: operations on the job must present it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Lease {
    /// Identifies this hold; a job claimed again gets a new one.
    pub token: Uuid,
    /// When the hold lapses and another worker may claim the job.
    pub expires_at: DateTime<Utc>,
}

/// A job a worker has claimed, with everything it needs to deliver it, read in the same
/// transaction as the claim.
#[derive(Clone, Debug, PartialEq)]
pub struct ClaimedJob {
    /// The job.
    pub job: Job,
    /// The worker's hold.
    pub lease: Lease,
    /// The lead, device data included.
    pub lead: StoredLead,
    /// Every delivery of the job, ended ones included.
    pub deliveries: Vec<Delivery>,
    /// The lead's project (currency, phone region, default consent, `lost` mapping).
    pub project: Project,
    /// The label applied; `None` for `lost`.
    pub label: Option<ConversionLabel>,
    /// The project's integration settings.
    pub integrations: Integrations,
}

impl ClaimedJob {
    /// What this conversion sends to each integration.
    pub fn mapping(&self) -> &LabelMapping {
        mapping_for(self.label.as_ref(), &self.project.lost_mapping)
    }
}

/// A job with its deliveries and their attempts, as `getLeadJobs` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRecord {
    /// The job.
    pub job: Job,
    /// Its deliveries with their attempts, oldest first.
    pub deliveries: Vec<(Delivery, Vec<Attempt>)>,
}

/// How one delivery queue stands, for monitoring.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueDepth {
    /// Waiting for a worker, due now or later.
    pub queued: u64,
    /// Leased by a worker (a lapsed lease included, until it is claimed again).
    pub running: u64,
    /// How long the queued entry due first has been due; zero when none is due yet.
    pub oldest_due_for: chrono::Duration,
}

impl QueueDepth {
    /// The depth read off a queue at `now_ms`: its `queued` and `running` counts, and when
    /// its first queued entry is due (`first_due`, in epoch milliseconds), which counts as
    /// waiting only once it has come.
    pub fn at(queued: i64, running: i64, first_due: Option<i64>, now_ms: i64) -> Self {
        Self {
            queued: u64::try_from(queued).unwrap_or_default(),
            running: u64::try_from(running).unwrap_or_default(),
            oldest_due_for: first_due
                .filter(|due| *due <= now_ms)
                .map(|due| chrono::Duration::milliseconds(now_ms.saturating_sub(due)))
                .unwrap_or_default(),
        }
    }
}

/// How the work queues stand: [`crate::JobQueue::queue_depth`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueDepths {
    /// The conversion jobs.
    pub jobs: QueueDepth,
    /// The lead webhooks' events.
    pub webhook_events: QueueDepth,
    /// The leads the sources announced, waiting to be fetched (a fetch's lease is its
    /// `running`).
    pub lead_fetches: QueueDepth,
}
