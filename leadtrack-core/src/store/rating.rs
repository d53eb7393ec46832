//! What a status update does, decided once for every backend. A backend finds and locks the
//! lead, loads its label, and then writes what [`Reopening`] or [`QueuedRating`] says with its
//! own SQL: the rules (what the lead's row becomes, which deliveries start skipped, which
//! webhook event and history entry a rating makes, what the caller is answered) live here.

use chrono::{DateTime, Utc};

use crate::activity::Activity;
use crate::api::{Rating, rating_event};
use crate::conversion::{self, Earlier};
use crate::job::{
    ClaimedJob, FormRating, JobRecord, NewJob, PlannedDelivery, PriorRating, StatusChange,
};
use crate::label::ConversionLabel;
use crate::lead::StoredLead;
use crate::project::Project;
use crate::request::StatusUpdate;
use crate::rules::{Rated, plan_conversion};
use crate::types::{ConversionId, DeliveryAction, DeliveryState, IntegrationKind, JobId, LeadId};
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
/// per connected integration and a history entry. A rating through a form is held for the
/// form's undo window, and remembers the lead's rating before it for an undo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueuedRating {
    /// The job to queue, with its deliveries and warnings.
    pub job: NewJob,
    /// The lead's rating before this one: what an undo restores.
    pub prior: PriorRating,
    /// The form it came through, if any.
    pub form: Option<FormRating>,
    /// The label rated with; `None` for `lost`.
    pub label: Option<ConversionLabel>,
    /// The price given with the rating, in cents; `None` keeps the lead's.
    pub price_given: Option<i64>,
    /// The note given with the rating.
    pub note: NoteChange,
}

impl QueuedRating {
    /// Whether planning a rating of `lead` needs the job records of its person
    /// ([`person`]): a lead rated before has a conversion to keep, restate or retract (an
    /// undo gives a lead never rated back its empty rating), and a duplicate and its
    /// original share one conversion. Most ratings are a lead's first, and skip the read.
    pub fn needs_history(lead: &StoredLead) -> bool {
        lead.conversion_id.is_some() || lead.duplicate_of.is_some() || lead.duplicated
    }

    /// Whether planning `update` needs the project's labels: only `lost`, to name the label
    /// conversions it withdraws, and only when the lead has jobs.
    pub fn needs_labels(update: &StatusUpdate, records: &[JobRecord]) -> bool {
        update.conversion_id == ConversionId::Lost && !records.is_empty()
    }

    /// Plans the rating `update` of `lead` (with its `label`) for the project's `connected`
    /// integrations, at `now`; `records` is the lead's jobs, from which the conversion's
    /// earlier jobs are found and, for `lost`, the label conversions it withdraws
    /// (`labels` is the project's).
    pub fn plan(
        lead: &StoredLead,
        (update, form): (&StatusUpdate, Option<FormRating>),
        (label, records, labels): (Option<ConversionLabel>, &[JobRecord], &[ConversionLabel]),
        project: &Project,
        connected: &[IntegrationKind],
        now: DateTime<Utc>,
    ) -> Self {
        let earlier = Earlier::of(records, update.conversion_id);
        let retracts = match update.conversion_id {
            ConversionId::Lost => conversion::retractions(records, labels),
            _ => Vec::new(),
        };
        let rated = Rated {
            conversion_id: update.conversion_id,
            label: label.as_ref(),
            price: update.price,
            earlier: earlier.as_ref(),
            retracts: &retracts,
        };
        let job = plan_conversion(lead, rated, project, connected, now);
        Self {
            job,
            prior: PriorRating::of(lead),
            form,
            label,
            price_given: update.price,
            note: NoteChange::of(update),
        }
    }

    /// When the job is due: at once, or once the form's undo window has passed.
    pub fn due_at(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        now + self
            .form
            .map_or_else(chrono::Duration::zero, |form| form.hold)
    }

    /// The retractions as their column holds them.
    pub fn retracts_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(&self.job.retracts)
    }

    /// The prior rating as its column holds it.
    pub fn prior_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(&self.prior)
    }

    /// Each delivery as it is first stored: its integration, what it does, its state
    /// (pending, or skipped) and the skip's reason.
    pub fn deliveries(
        &self,
    ) -> impl Iterator<Item = (IntegrationKind, DeliveryAction, DeliveryState, Option<&str>)> {
        self.job.deliveries.iter().map(|planned| {
            let (state, reason) = match &planned.skip {
                Some(skip) => (DeliveryState::Skipped, Some(skip.reason.as_str())),
                None => (DeliveryState::Pending, None),
            };
            (planned.integration, planned.action, state, reason)
        })
    }

    /// The entries the rating adds to the lead's history: `rated`, then the note typed
    /// with it, if any, as a `note` of the same job.
    pub fn activities(&self, job_id: JobId) -> Vec<Activity> {
        let rated = Activity::Rated {
            conversion_id: self.job.conversion_id,
            label: self.label.as_ref().map(|label| label.name.clone()),
            price: self.job.price,
            note: self.note.note.clone(),
            job_id,
        };
        let note = self
            .note
            .note
            .clone()
            .map(|note| Activity::Note { note, job_id });
        std::iter::once(rated).chain(note).collect()
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

/// The lead webhook event a job claimed at `now` emits: `lead.converted` or `lead.lost`,
/// with its rating, when this claim is the first (the job leaves its undo window; a claim
/// set `started_at` to its own time, so a later claim of a lapsed lease finds an earlier
/// one). A rating again that sends nothing new (every platform has the conversion at that
/// value) emits none, so undone and repeated ratings never reach the lead webhooks.
pub fn emitted(claimed: &ClaimedJob, now: DateTime<Utc>) -> Option<(WebhookEvent, Rating<'_>)> {
    let job = &claimed.job;
    if job.started_at != Some(crate::time::truncate_to_millis(now)) {
        return None;
    }
    let new_conversion = job.conversion_event_id == job.event_id;
    let sends = claimed
        .deliveries
        .iter()
        .any(|delivery| delivery.state == DeliveryState::Pending);
    (new_conversion || sends).then(|| {
        let rating = Rating {
            job_id: job.id,
            conversion_event_id: job.conversion_event_id,
            action: DeliveryAction::Send,
            conversion_id: job.conversion_id,
            label: claimed.label.as_ref(),
            price: job.price,
        };
        (rating_event(job.conversion_id), rating)
    })
}

/// What an undo restores: the lead's rating before the undone one (a job from before this
/// was recorded restores `open`, keeping the lead's price and note).
pub fn restored(prior: Option<PriorRating>, lead: &StoredLead) -> PriorRating {
    prior.unwrap_or_else(|| PriorRating {
        status: crate::types::LeadStatus::Open,
        conversion_id: None,
        ..PriorRating::of(lead)
    })
}

/// The person a rating of `lead` re-rates: the lead it duplicates, else itself. The jobs of
/// the person's leads (it and its duplicates) are one conversion history, so that rating
/// any of them keeps, restates or retracts the one conversion, and a platform never counts
/// one person twice.
pub fn person(lead: &StoredLead) -> LeadId {
    lead.duplicate_of.unwrap_or(lead.id)
}

/// The job that sends again what the lead's job `record` failed to deliver for good (at
/// `kind` alone, when given): the same conversion (label, price, id, time, retractions),
/// a delivery for each failed platform doing what it did. `None` when the job has not
/// ended or nothing of it failed.
pub fn retry_of(record: &JobRecord, kind: Option<IntegrationKind>) -> Option<QueuedRating> {
    let job = &record.job;
    if job.state != crate::types::JobState::Done {
        return None;
    }
    let deliveries: Vec<PlannedDelivery> = record
        .deliveries
        .iter()
        .map(|(delivery, _)| delivery)
        .filter(|d| d.state == DeliveryState::Failed && kind.is_none_or(|k| k == d.integration))
        .map(|d| PlannedDelivery {
            integration: d.integration,
            action: d.action,
            skip: None,
        })
        .collect();
    if deliveries.is_empty() {
        return None;
    }
    let new = NewJob {
        event_id: uuid::Uuid::new_v4(),
        conversion_event_id: job.conversion_event_id,
        converted_at: job.converted_at,
        retracts: job.retracts.clone(),
        conversion_id: job.conversion_id,
        final_status: job.final_status,
        price: job.price,
        deliveries,
        warnings: Vec::new(),
    };
    Some(QueuedRating {
        job: new,
        prior: PriorRating {
            status: crate::types::LeadStatus::Open,
            conversion_id: Some(job.conversion_id),
            price: job.price,
            note: None,
        },
        form: None,
        label: None,
        price_given: None,
        note: NoteChange {
            given: false,
            note: None,
        },
    })
}
