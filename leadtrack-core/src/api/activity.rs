//! getLeadActivity: a lead's history, oldest first.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::messages;
use crate::activity::{Activity, LeadEvent};
use crate::types::LeadId;

/// Response of getLeadActivity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetLeadActivityResponse {
    /// `Lead activity retrieved`.
    pub message: String,
    /// The lead.
    pub lead_id: LeadId,
    /// What happened to it, oldest first.
    pub events: Vec<EventView>,
}

/// One event of a lead's history: `{"at", "by", "type", ...the type's fields}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventView {
    /// When it happened.
    #[serde(with = "crate::time::rfc3339_millis")]
    pub at: DateTime<Utc>,
    /// Who did it: a user's name or `API key <prefix>`; `null` for what the service did.
    pub by: Option<String>,
    /// What happened.
    #[serde(flatten)]
    pub activity: Activity,
}

impl From<&LeadEvent> for EventView {
    fn from(event: &LeadEvent) -> Self {
        Self {
            at: event.at,
            by: event.by.as_ref().map(ToString::to_string),
            activity: event.activity.clone(),
        }
    }
}

impl GetLeadActivityResponse {
    /// The response for a lead's events.
    pub fn new(lead_id: LeadId, events: &[LeadEvent]) -> Self {
        Self {
            message: messages::LEAD_ACTIVITY_RETRIEVED.to_owned(),
            lead_id,
            events: events.iter().map(EventView::from).collect(),
        }
    }
}
