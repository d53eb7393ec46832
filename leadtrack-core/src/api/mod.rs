//! The wire types of the lead routes, exactly as CONTRACT.md sections 2 to 7 write them,
//! and their conversions from the records.
//!
//! Responses are what the server sends and the typed client decodes. The request bodies
//! ([`CreateLeadRequest`], [`UpdateLeadStatusRequest`]) are what the typed client sends; the server does not deserialize them with
//! serde but validates the raw JSON with [`crate::request`], so that every rule of the
//! contract (aliases, `null` as absent, `[]` as `{}`, field-naming errors) holds.

mod activity;
mod hook;
mod jobs;
mod requests;
mod webhook;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use activity::{EventView, GetLeadActivityResponse};
pub use hook::{GetHooksResponse, Hook, sample};
pub use jobs::{AttemptView, DeliveryView, GetLeadJobsResponse, JobView};
pub use requests::{
    AttributionData, CreateLeadRequest, FormData, UpdateLeadStatusRequest, UserData,
};
pub use webhook::{Rating, WebhookBody, WebhookConversion, WebhookLabel, rating_event};

// The domain words the wire types are made of, so that a client needs only this module.
pub use crate::job::Warning;
pub use crate::types::{
    ConversionId, DeviceData, IntegrationKind, JsonObject, LeadId, LeadIdentifier, LeadStatus,
};

use crate::assignment::Assignee;
use crate::error::{ErrorCode, FieldError, ValidationError};
use crate::job::StatusChange;
use crate::lead::{CreatedLead, LeadPage, StoredLead};
use crate::next_step::NextStep;

/// The `message` texts of successful responses.
pub mod messages {
    /// createLead / createServerSideLead, 201.
    pub const LEAD_CREATED: &str = "Lead created successfully";
    /// createLead / createServerSideLead on a deduplicated lead, 200.
    pub const LEAD_UPDATED: &str = "Lead updated successfully";
    /// updateLeadStatus with `open`, 200.
    pub const STATUS_OPEN: &str = "Lead status updated to open";
    /// updateLeadStatus with a label or `lost`, 201.
    pub const LEAD_QUEUED: &str = "Lead queued for processing";
    /// updateLeadStatus conflict, 409.
    pub const JOB_PENDING: &str = "Lead already has a pending job";
    /// getLeads, 200.
    pub const LEADS_RETRIEVED: &str = "Leads retrieved";
    /// getLead, 200.
    pub const LEAD_RETRIEVED: &str = "Lead retrieved";
    /// getLeadJobs, 200.
    pub const LEAD_JOBS_RETRIEVED: &str = "Lead jobs retrieved";
    /// getLeadActivity, 200.
    pub const LEAD_ACTIVITY_RETRIEVED: &str = "Lead activity retrieved";
}

/// A lead as every read returns it: all keys present, in the contract's order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lead {
    /// Assigned by the service.
    pub id: LeadId,
    /// Where the lead stands.
    pub status: LeadStatus,
    /// From `formData.formName`.
    pub form_name: Option<String>,
    /// From `userData.firstName`.
    pub first_name: Option<String>,
    /// From `userData.lastName`.
    pub last_name: Option<String>,
    /// From `userData.phone`, as submitted (trimmed).
    pub phone: Option<String>,
    /// From `userData.email`, as submitted (trimmed).
    pub email: Option<String>,
    /// From `userData.companyName` (or its alias `company`).
    pub company_name: Option<String>,
    /// Value in cents, set by `updateLeadStatus`.
    pub price: Option<i64>,
    /// Set by `updateLeadStatus`.
    pub note: Option<String>,
    /// As submitted, custom fields and `uniqueEventId` included.
    pub form_data: Option<JsonObject>,
    /// As submitted, after the alias and trimming rules.
    pub user_data: Option<JsonObject>,
    /// As submitted, empty strings removed.
    pub attribution_data: Option<JsonObject>,
    /// The channel path: a string, or the JSON text of a submitted array or object.
    pub channel_flow: Option<String>,
    /// The caller's identifier; not unique.
    pub unique_identifier: Option<String>,
    /// When the lead was first created.
    #[serde(with = "crate::time::rfc3339_millis")]
    pub created_at: DateTime<Utc>,
    /// The last label UUID or `lost` applied.
    pub conversion_id: Option<ConversionId>,
    /// Why the lead is spam, while its status is `spam` (an addition).
    #[serde(default)]
    pub spam_reason: Option<String>,
    /// The earlier lead of the same person this one duplicates (an addition).
    #[serde(default)]
    pub duplicate_of: Option<LeadId>,
    /// The member it is assigned to, `{id, name}` (an addition).
    #[serde(default)]
    pub assignee: Option<Assignee>,
    /// When its next step is due ([`crate::next_step`], an addition).
    #[serde(default, with = "crate::time::rfc3339_millis_option")]
    pub next_step_at: Option<DateTime<Utc>>,
}

/// The click ids a lead's `attributionData` may carry, as [`Lead::click_ids`] lists them.
const CLICK_IDS: [&str; 13] = [
    "gclid",
    "gbraid",
    "wbraid",
    "fbclid",
    "fbc",
    "msclkid",
    "li_fat_id",
    "ttclid",
    "rdt_cid",
    "ScCid",
    "epik",
    "twclid",
    "cid",
];

impl Lead {
    /// A value of its `attributionData`, when it is text.
    pub fn attribution(&self, name: &str) -> Option<&str> {
        self.attribution_data.as_ref()?.get(name)?.as_str()
    }

    /// The click ids it carries, as `name=value` (what a CRM keeps of where it came from).
    pub fn click_ids(&self) -> Vec<String> {
        CLICK_IDS
            .iter()
            .filter_map(|name| Some(format!("{name}={}", self.attribution(name)?)))
            .collect()
    }

    /// Gives each of `leads` its next step's time, from `steps` (a store's
    /// [`crate::store::LeadStore::next_steps`] of them).
    pub fn with_next_steps(leads: &mut [Lead], steps: &[(LeadId, NextStep)]) {
        for lead in leads {
            lead.next_step_at = steps
                .iter()
                .find(|(id, _)| *id == lead.id)
                .map(|(_, step)| step.at);
        }
    }
}

impl From<&StoredLead> for Lead {
    fn from(stored: &StoredLead) -> Self {
        let data = &stored.data;
        let object = |map: &JsonObject| (!map.is_empty()).then(|| map.clone());
        let user = |name: &str| data.user(name).map(str::to_owned);
        Self {
            id: stored.id,
            status: stored.status,
            form_name: data.form_name().map(str::to_owned),
            first_name: user("firstName"),
            last_name: user("lastName"),
            phone: user("phone"),
            email: user("email"),
            company_name: user("companyName"),
            price: stored.price,
            note: stored.note.clone(),
            form_data: object(&data.form_data),
            user_data: object(&data.user_data),
            attribution_data: object(&data.attribution_data),
            channel_flow: data.channel_flow.clone(),
            unique_identifier: data.unique_identifier.clone(),
            created_at: stored.created_at,
            conversion_id: stored.conversion_id,
            spam_reason: stored.spam_reason.map(|reason| reason.as_ref().to_owned()),
            duplicate_of: stored.duplicate_of,
            assignee: stored.assignee.clone(),
            next_step_at: None,
        }
    }
}

/// The body of every error response.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    /// For people.
    pub message: String,
    /// For programs.
    pub code: ErrorCode,
    /// The offending fields of a validation error.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldError>,
    /// The lead of a `job_pending` conflict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_id: Option<LeadId>,
}

impl ErrorBody {
    /// An error body with just a message and a code.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code,
            errors: Vec::new(),
            lead_id: None,
        }
    }
}

impl From<ValidationError> for ErrorBody {
    fn from(err: ValidationError) -> Self {
        Self {
            message: err.message,
            code: err.code,
            errors: err.errors,
            lead_id: None,
        }
    }
}

/// Response of createLead and createServerSideLead (201 created, 200 updated).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateLeadResponse {
    /// `Lead created successfully` or `Lead updated successfully`.
    pub message: String,
    /// The lead written.
    pub lead_id: LeadId,
    /// The lead's `uniqueIdentifier` after the write.
    pub unique_identifier: Option<String>,
}

impl CreateLeadResponse {
    /// `true` when a new lead was created (201), `false` when an existing one was updated
    /// (deduplicated by `formData.uniqueEventId`, 200).
    pub fn is_new(&self) -> bool {
        self.message == messages::LEAD_CREATED
    }
}

/// Response of updateLeadStatus (200 for `open`, 201 when queued).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateLeadStatusResponse {
    /// `Lead status updated to open` or `Lead queued for processing`.
    pub message: String,
    /// The lead updated.
    pub lead_id: LeadId,
    /// The lead's `uniqueIdentifier`.
    pub unique_identifier: Option<String>,
    /// `open` or `pending`.
    pub status: LeadStatus,
    /// Whether a conversion job was queued.
    pub queued: bool,
    /// Present when queued: the integrations the conversion will skip.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<Warning>>,
}

/// Response of getLeads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetLeadsResponse {
    /// `Leads retrieved`.
    pub message: String,
    /// This page's leads.
    pub leads: Vec<Lead>,
    /// Leads matching the filters, on all pages.
    pub total: u64,
    /// The page returned, from 1.
    pub page: u32,
    /// Leads per page.
    pub limit: u32,
    /// `ceil(total / limit)`.
    pub total_pages: u64,
    /// Whether pages follow this one.
    pub has_more: bool,
    /// Present (`true`) when `total` is a lower bound: a `q` search stops counting past
    /// [`crate::request::query::Q_COUNTED`] matches or its page, whichever is further.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub total_is_lower_bound: bool,
}

/// Response of getLead.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GetLeadResponse {
    /// `Lead retrieved`.
    pub message: String,
    /// The lead found.
    pub lead: Lead,
}

impl From<&CreatedLead> for CreateLeadResponse {
    /// `Lead created successfully` or `Lead updated successfully`.
    fn from(created: &CreatedLead) -> Self {
        Self {
            message: if created.created {
                messages::LEAD_CREATED
            } else {
                messages::LEAD_UPDATED
            }
            .to_owned(),
            lead_id: created.lead_id,
            unique_identifier: created.unique_identifier.clone(),
        }
    }
}

impl From<&StatusChange> for UpdateLeadStatusResponse {
    /// `open`: 200 without warnings; queued: 201 with warnings.
    fn from(change: &StatusChange) -> Self {
        let queued = change.job.is_some();
        Self {
            message: if queued {
                messages::LEAD_QUEUED
            } else {
                messages::STATUS_OPEN
            }
            .to_owned(),
            lead_id: change.lead_id,
            unique_identifier: change.unique_identifier.clone(),
            status: if queued {
                LeadStatus::Pending
            } else {
                LeadStatus::Open
            },
            queued,
            warnings: queued.then(|| change.warnings.clone()),
        }
    }
}

/// `ceil(total / limit)`: how many pages of `limit` leads `total` leads fill.
pub fn total_pages(total: u64, limit: u32) -> u64 {
    total.div_ceil(u64::from(limit.max(1)))
}

impl GetLeadsResponse {
    /// The response for `page` of a listing, `page_number` (from 1) of pages of `limit`.
    pub fn new(page: &LeadPage, page_number: u32, limit: u32) -> Self {
        let total_pages = total_pages(page.total, limit);
        Self {
            message: messages::LEADS_RETRIEVED.to_owned(),
            leads: page.leads.iter().map(Lead::from).collect(),
            total: page.total,
            page: page_number,
            limit,
            total_pages,
            has_more: u64::from(page_number) < total_pages,
            total_is_lower_bound: page.total_is_lower_bound,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample_lead() -> Lead {
        Lead {
            id: LeadId(42),
            status: LeadStatus::Pending,
            form_name: Some("Contact".into()),
            first_name: Some("Ada".into()),
            last_name: None,
            phone: None,
            email: Some("ada@example.com".into()),
            company_name: None,
            price: Some(5000),
            note: None,
            form_data: None,
            user_data: None,
            attribution_data: None,
            channel_flow: None,
            unique_identifier: None,
            created_at: crate::time::from_millis(1_773_570_600_000),
            conversion_id: Some(ConversionId::Lost),
            spam_reason: None,
            duplicate_of: Some(LeadId(41)),
            assignee: Some(Assignee {
                id: crate::types::UserId(7),
                name: "Grace".into(),
            }),
            next_step_at: Some(crate::time::from_millis(1_773_657_000_000)),
        }
    }

    #[test]
    fn lead_keys_are_all_present_in_contract_order() {
        let text = serde_json::to_string(&sample_lead()).unwrap();
        assert_eq!(
            text,
            r#"{"id":42,"status":"pending","formName":"Contact","firstName":"Ada","lastName":null,"phone":null,"email":"ada@example.com","companyName":null,"price":5000,"note":null,"formData":null,"userData":null,"attributionData":null,"channelFlow":null,"uniqueIdentifier":null,"createdAt":"2026-03-15T10:30:00.000Z","conversionId":"lost","spamReason":null,"duplicateOf":41,"assignee":{"id":7,"name":"Grace"},"nextStepAt":"2026-03-16T10:30:00.000Z"}"#
        );
        let back: Lead = serde_json::from_str(&text).unwrap();
        assert_eq!(back, sample_lead());
    }

    #[test]
    fn status_request_serializes_one_identifier_property() {
        let request = UpdateLeadStatusRequest {
            identifier: LeadIdentifier::Email("a@example.com".into()),
            conversion_id: ConversionId::Lost,
            price: Some(5000),
            note: None,
        };
        assert_eq!(
            serde_json::to_value(&request).unwrap(),
            json!({"email": "a@example.com", "conversionId": "lost", "price": 5000})
        );
    }

    #[test]
    fn error_body_omits_empty_extras() {
        let body = ErrorBody::new(ErrorCode::InvalidApiKey, "Invalid API key");
        assert_eq!(
            serde_json::to_string(&body).unwrap(),
            r#"{"message":"Invalid API key","code":"invalid_api_key"}"#
        );
        let conflict = ErrorBody {
            lead_id: Some(LeadId(42)),
            ..ErrorBody::new(ErrorCode::JobPending, messages::JOB_PENDING)
        };
        assert_eq!(
            serde_json::to_string(&conflict).unwrap(),
            r#"{"message":"Lead already has a pending job","code":"job_pending","leadId":42}"#
        );
    }

    #[test]
    fn open_response_has_no_warnings_key() {
        let response = UpdateLeadStatusResponse {
            message: messages::STATUS_OPEN.into(),
            lead_id: LeadId(42),
            unique_identifier: None,
            status: LeadStatus::Open,
            queued: false,
            warnings: None,
        };
        assert_eq!(
            serde_json::to_string(&response).unwrap(),
            r#"{"message":"Lead status updated to open","leadId":42,"uniqueIdentifier":null,"status":"open","queued":false}"#
        );
    }

    #[test]
    fn page_responses_count_pages() {
        let page = LeadPage {
            leads: vec![],
            total: 25,
            total_is_lower_bound: false,
        };
        let response = GetLeadsResponse::new(&page, 3, 10);
        assert_eq!((response.total_pages, response.has_more), (3, false));
        assert!(GetLeadsResponse::new(&page, 2, 10).has_more);
        let response = GetLeadsResponse::new(&page, 9, 10);
        assert_eq!((response.total, response.has_more), (25, false));
        assert_eq!(total_pages(0, 50), 0);
        assert_eq!(total_pages(101, 50), 3);
    }

    #[test]
    fn a_lower_bound_total_is_said_and_an_exact_one_is_not() {
        let mut page = LeadPage {
            leads: vec![],
            total: 1_001,
            total_is_lower_bound: true,
        };
        assert_eq!(
            serde_json::to_string(&GetLeadsResponse::new(&page, 1, 50)).unwrap(),
            r#"{"message":"Leads retrieved","leads":[],"total":1001,"page":1,"limit":50,"totalPages":21,"hasMore":true,"totalIsLowerBound":true}"#
        );
        page.total_is_lower_bound = false;
        assert_eq!(
            serde_json::to_string(&GetLeadsResponse::new(&page, 1, 50)).unwrap(),
            r#"{"message":"Leads retrieved","leads":[],"total":1001,"page":1,"limit":50,"totalPages":21,"hasMore":true}"#
        );
    }
}
