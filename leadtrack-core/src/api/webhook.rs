//! The JSON body of a webhook post: a lead webhook's event ([`crate::webhook`]) or the
//! conversion webhook's, which is a `lead.converted` or `lead.lost` event.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::Lead;
use crate::label::ConversionLabel;
use crate::lead::StoredLead;
use crate::project::Project;
use crate::types::{ConversionId, DeliveryAction, JobId};
use crate::webhook::WebhookEvent;

/// A webhook post's body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookBody {
    /// What happened.
    #[serde(rename = "type")]
    pub event: WebhookEvent,
    /// The event's id, the same in every attempt and for every webhook (the
    /// `X-Leadtrack-Event` header repeats it): a receiver deduplicates on it.
    pub id: Uuid,
    /// When it happened.
    #[serde(with = "crate::time::rfc3339_millis")]
    pub occurred_at: DateTime<Utc>,
    /// The project's public id.
    pub project_id: String,
    /// For `lead.converted` and `lead.lost`: the rating.
    #[serde(flatten)]
    pub conversion: Option<WebhookConversion>,
    /// The lead as it was just after the event.
    pub lead: Lead,
}

/// The rating a `lead.converted` or `lead.lost` event reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookConversion {
    /// The conversion job, as getLeadJobs lists it.
    pub job_id: JobId,
    /// The conversion's id, the same for every rating of one lead with one label (or
    /// `lost`): what receivers count conversions by.
    pub conversion_event_id: Uuid,
    /// Present (`true`) when this post gives a new value for a conversion posted before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub restated: bool,
    /// Present (`true`) when this post withdraws a conversion posted before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub retracted: bool,
    /// The label's UUID, or `lost`.
    pub conversion_id: ConversionId,
    /// The label (`null` for `lost`).
    pub label: Option<WebhookLabel>,
    /// The price reported, in cents.
    pub price: Option<i64>,
    /// The project's currency.
    pub currency: String,
}

/// A label, as a conversion event names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookLabel {
    /// Its UUID.
    pub id: Uuid,
    /// Its name.
    pub name: String,
    /// Whether the lead becomes `rated` once the conversion is delivered.
    pub mark_as_done: bool,
}

impl From<&ConversionLabel> for WebhookLabel {
    fn from(label: &ConversionLabel) -> Self {
        Self {
            id: label.id,
            name: label.name.clone(),
            mark_as_done: label.mark_as_done,
        }
    }
}

/// What a rating event reports besides the lead: the job, the rating and its label.
#[derive(Clone, Copy, Debug)]
pub struct Rating<'a> {
    /// The job queued.
    pub job_id: JobId,
    /// The conversion's id.
    pub conversion_event_id: Uuid,
    /// What the post does: a restatement or a retraction says so.
    pub action: DeliveryAction,
    /// The label or `lost`.
    pub conversion_id: ConversionId,
    /// The label, for a label.
    pub label: Option<&'a ConversionLabel>,
    /// The price reported, in cents.
    pub price: Option<i64>,
}

impl WebhookBody {
    /// The body of `event` (id `id`, at `at`) about `lead` of `project`; a rating event
    /// carries its `rating`.
    pub fn new(
        event: WebhookEvent,
        id: Uuid,
        at: DateTime<Utc>,
        project: &Project,
        lead: &StoredLead,
        rating: Option<Rating<'_>>,
    ) -> Self {
        Self {
            event,
            id,
            occurred_at: at,
            project_id: project.public_id.clone(),
            conversion: rating.map(|rating| WebhookConversion {
                job_id: rating.job_id,
                conversion_event_id: rating.conversion_event_id,
                restated: rating.action == DeliveryAction::Restate,
                retracted: rating.action == DeliveryAction::Retract,
                conversion_id: rating.conversion_id,
                label: rating.label.map(WebhookLabel::from),
                price: rating.price,
                currency: project.currency.clone(),
            }),
            lead: Lead::from(lead),
        }
    }

    /// The body as posted.
    pub fn to_json(&self) -> String {
        // A struct of strings, numbers and maps with string keys always serialises.
        serde_json::to_string(self).unwrap_or_else(|_| unreachable!("webhook bodies serialise"))
    }
}

/// The event a rating with `conversion_id` is: `lead.lost` for `lost`, else
/// `lead.converted`.
pub fn rating_event(conversion_id: ConversionId) -> WebhookEvent {
    match conversion_id {
        ConversionId::Lost => WebhookEvent::LeadLost,
        ConversionId::Label(_) | ConversionId::Open => WebhookEvent::LeadConverted,
    }
}
