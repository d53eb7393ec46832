//! What a status update does, decided once for every backend. A backend finds and locks the
//! lead, loads its label, and then writes what [`Reopening`] or [`QueuedRating`] says with its
//! own SQL: the rules (what the lead's row becomes, which deliveries start skipped, which
//! webhook event and history entry a rating makes, what the caller is answered) live here.

use chrono::{DateTime, Utc};

use crate::activity::Activity;
use crate::api::{Rating, rating_event};
use crate::integration::Integrations;
use crate::job::{NewJob, StatusChange};
use crate::label::ConversionLabel;
use crate::lead::StoredLead;
use crate::project::Project;
use crate::request::StatusUpdate;
use crate::rules::plan_conversion;
use crate::types::{DeliveryState, IntegrationKind, JobId};
use crate::webhook::WebhookEvent;

/// The note a status update writes: `None` keeps the lead's note, `Some(None)` clears it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoteChange {
    /// Whether the update names a note at all (else the lead keeps its own).
    pub given: bool,
    /// The new note, when given; `None` clears it.
    pub note: Option<String>,
}

impl NoteChange {
    fn of(update: &StatusUpdate) -> Self {
        Self {
            given: update.note.is_some(),
            note: update.note.clone().flatten(),
        }
    }
}

/// A reset to `open`: the lead becomes open (with the price and note given, if any), and a
/// queued job no worker has picked up is cancelled; one being delivered finishes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reopening {
    /// The price given with the reset, in cents; `None` keeps the lead's.
    pub price: Option<i64>,
    /// The note given with the reset.
    pub note: NoteChange,
}

impl Reopening {
    /// The reset `update` asks for.
    pub fn of(update: &StatusUpdate) -> Self {
        Self {
            price: update.price,
            note: NoteChange::of(update),
        }
    }

    /// The entry the reset adds to the lead's history.
    pub fn activity(&self) -> Activity {
        Activity::Reopened {
            price: self.price,
            note: self.note.note.clone(),
        }
    }

    /// What the caller is answered: no job.
    pub fn outcome(lead: StoredLead) -> StatusChange {
        StatusChange {
            lead_id: lead.id,
            unique_identifier: lead.data.unique_identifier,
            job: None,
            warnings: Vec::new(),
        }
    }
}

/// A rating (a label or `lost`) of a lead with no unfinished job: the lead becomes
/// `pending` with the conversion's id, price and note, and one job is queued with a delivery
/// per connected integration, a webhook event and a history entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueuedRating {
    /// The job to queue, with its deliveries and warnings.
    pub job: NewJob,
    /// The label rated with; `None` for `lost`.
    pub label: Option<ConversionLabel>,
    /// The price given with the rating, in cents; `None` keeps the lead's.
    pub price_given: Option<i64>,
    /// The note given with the rating.
    pub note: NoteChange,
}

impl QueuedRating {
    /// Plans the rating `update` of `lead` (with its `label`) for the project's
    /// `integrations`, at `now`.
    pub fn plan(
        lead: &StoredLead,
        update: &StatusUpdate,
        label: Option<ConversionLabel>,
        project: &Project,
        integrations: &Integrations,
        now: DateTime<Utc>,
    ) -> Self {
        let job = plan_conversion(
            lead,
            update.conversion_id,
            update.price,
            label.as_ref(),
            project,
            integrations,
            now,
        );
        Self {
            job,
            label,
            price_given: update.price,
            note: NoteChange::of(update),
        }
    }

    /// Each delivery as it is first stored: its integration, state (pending, or skipped)
    /// and the skip's reason.
    pub fn deliveries(
        &self,
    ) -> impl Iterator<Item = (IntegrationKind, DeliveryState, Option<&str>)> {
        self.job
            .deliveries
            .iter()
            .map(|planned| match &planned.skip {
                Some(skip) => (
                    planned.integration,
                    DeliveryState::Skipped,
                    Some(skip.reason.as_str()),
                ),
                None => (planned.integration, DeliveryState::Pending, None),
            })
    }

    /// The lead webhook event the rating queues (`lead.converted` or `lead.lost`), and what
    /// it reports of the rating, once the job is `job_id`.
    pub fn webhook(&self, job_id: JobId) -> (WebhookEvent, Rating<'_>) {
        let rating = Rating {
            job_id,
            conversion_id: self.job.conversion_id,
            label: self.label.as_ref(),
            price: self.job.price,
        };
        (rating_event(self.job.conversion_id), rating)
    }

    /// The entry the rating adds to the lead's history.
    pub fn activity(&self, job_id: JobId) -> Activity {
        Activity::Rated {
            conversion_id: self.job.conversion_id,
            label: self.label.as_ref().map(|label| label.name.clone()),
            price: self.job.price,
            note: self.note.note.clone(),
            job_id,
        }
    }

    /// What the caller is answered: the job and its warnings.
    pub fn outcome(self, lead: StoredLead, job_id: JobId) -> StatusChange {
        StatusChange {
            lead_id: lead.id,
            unique_identifier: lead.data.unique_identifier,
            job: Some(job_id),
            warnings: self.job.warnings,
        }
    }
}
