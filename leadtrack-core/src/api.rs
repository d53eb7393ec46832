//! The wire types of the five lead routes, exactly as CONTRACT.md sections 2 to 7 write them.
//!
//! Responses are what the server sends and the typed client decodes. Requests are what the
//! typed client sends; the server does not deserialize them with serde but validates the raw
//! JSON with [`crate::input`] and [`crate::status`], so that every rule of the contract
//! (aliases, `null` as absent, `[]` as `{}`, field-naming errors) holds.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::error::{ErrorCode, FieldError};
use crate::model::{AttemptOutcome, DeliveryState, JobRecord, JobState};

/// A JSON object, as leads keep `formData`, `userData` and `attributionData`.
pub type JsonObject = Map<String, Value>;

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
}

/// Where a lead stands (CONTRACT.md section 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LeadStatus {
    /// New, reset with `open`, or processed by a label without "mark as done".
    Open,
    /// A conversion job is queued or being delivered.
    Pending,
    /// Processed by a label with "mark as done".
    Rated,
    /// Processed with `lost`.
    Lost,
}

impl LeadStatus {
    /// Every status, in the order the contract lists them.
    pub const ALL: [LeadStatus; 4] = [Self::Open, Self::Pending, Self::Rated, Self::Lost];

    /// The status as it appears on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Pending => "pending",
            Self::Rated => "rated",
            Self::Lost => "lost",
        }
    }
}

impl fmt::Display for LeadStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LeadStatus {
    type Err = UnknownValue;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|status| status.as_str() == s)
            .ok_or_else(|| UnknownValue(s.to_owned()))
    }
}

/// A string that names none of an enumeration's values.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown value {0:?}")]
pub struct UnknownValue(pub String);

/// What `updateLeadStatus` applies: `open`, `lost`, or a conversion label.
///
/// On the wire it is one string: `"open"`, `"lost"` or the label's UUID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConversionId {
    /// Reset the lead to `open`; nothing is forwarded.
    Open,
    /// The lead is lost; forwarded per the project's `lost` mapping.
    Lost,
    /// A conversion label of the project.
    Label(Uuid),
}

impl fmt::Display for ConversionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Open => f.write_str("open"),
            Self::Lost => f.write_str("lost"),
            Self::Label(id) => id.hyphenated().fmt(f),
        }
    }
}

impl FromStr for ConversionId {
    type Err = UnknownValue;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "open" => Ok(Self::Open),
            "lost" => Ok(Self::Lost),
            _ => Uuid::try_parse(s)
                .map(Self::Label)
                .map_err(|_| UnknownValue(s.to_owned())),
        }
    }
}

impl Serialize for ConversionId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ConversionId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// The platforms a conversion is forwarded to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntegrationKind {
    /// Google Ads offline click conversions.
    GoogleAds,
    /// Google Analytics 4, Measurement Protocol.
    Ga4,
    /// Meta Conversions API.
    Meta,
    /// A signed JSON webhook.
    Webhook,
}

impl IntegrationKind {
    /// Every integration, in the order warnings are reported.
    pub const ALL: [IntegrationKind; 4] = [Self::GoogleAds, Self::Ga4, Self::Meta, Self::Webhook];

    /// The integration's wire name, e.g. `"google_ads"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::GoogleAds => "google_ads",
            Self::Ga4 => "ga4",
            Self::Meta => "meta",
            Self::Webhook => "webhook",
        }
    }
}

impl fmt::Display for IntegrationKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for IntegrationKind {
    type Err = UnknownValue;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|kind| kind.as_str() == s)
            .ok_or_else(|| UnknownValue(s.to_owned()))
    }
}

/// A lead as every read returns it: all keys present, in the contract's order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lead {
    /// Assigned by the service.
    pub id: i64,
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
}

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
    pub lead_id: Option<i64>,
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

impl From<crate::error::ValidationError> for ErrorBody {
    fn from(err: crate::error::ValidationError) -> Self {
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
    pub lead_id: i64,
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
    pub lead_id: i64,
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
}

/// Response of getLead.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GetLeadResponse {
    /// `Lead retrieved`.
    pub message: String,
    /// The lead found.
    pub lead: Lead,
}

/// Response of getLeadJobs: a lead's conversion jobs, newest first, with every delivery and
/// every attempt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetLeadJobsResponse {
    /// `Lead jobs retrieved`.
    pub message: String,
    /// The lead.
    pub lead_id: i64,
    /// Its jobs, newest first.
    pub jobs: Vec<JobView>,
}

/// A conversion job as getLeadJobs shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobView {
    /// The job's id.
    pub id: i64,
    /// The event id every platform received for this conversion.
    pub event_id: Uuid,
    /// The label or `lost` applied.
    pub conversion_id: ConversionId,
    /// `queued`, `running`, `done` or `cancelled`.
    pub status: JobState,
    /// The price reported, in cents.
    pub price: Option<i64>,
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
}

impl GetLeadJobsResponse {
    /// The response for a lead's job records.
    pub fn new(lead_id: i64, records: &[JobRecord]) -> Self {
        let jobs = records
            .iter()
            .map(|record| JobView {
                id: record.job.id.0,
                event_id: record.job.event_id,
                conversion_id: record.job.conversion_id,
                status: record.job.state,
                price: record.job.price,
                created_at: record.job.created_at,
                started_at: record.job.started_at,
                finished_at: record.job.finished_at,
                deliveries: record
                    .deliveries
                    .iter()
                    .map(|(delivery, attempts)| DeliveryView {
                        integration: delivery.integration,
                        status: delivery.state,
                        next_attempt_at: delivery.next_attempt_at,
                        detail: delivery.detail.clone(),
                        attempts: attempts
                            .iter()
                            .map(|attempt| AttemptView {
                                at: attempt.at,
                                outcome: attempt.outcome,
                                http_status: attempt.http_status,
                                error: attempt.error.clone(),
                                retry_at: attempt.retry_at,
                            })
                            .collect(),
                    })
                    .collect(),
            })
            .collect();
        Self {
            message: messages::LEAD_JOBS_RETRIEVED.to_owned(),
            lead_id,
            jobs,
        }
    }
}

/// How a lead is found: the identifiers of getLead and updateLeadStatus.
///
/// Serializes as one property, e.g. `{"leadId": 42}` or `{"email": "a@example.com"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum LeadIdentifier {
    /// The lead's id.
    LeadId(i64),
    /// The caller's identifier (exact match; newest lead wins).
    UniqueIdentifier(String),
    /// Email, matched case-insensitively after trimming (newest lead wins).
    Email(String),
    /// Phone, matched ignoring spaces, `-`, `.`, `(` and `)` (newest lead wins).
    Phone(String),
}

impl LeadIdentifier {
    /// The query parameter / body property that carries this identifier.
    pub fn name(&self) -> &'static str {
        match self {
            Self::LeadId(_) => "leadId",
            Self::UniqueIdentifier(_) => "uniqueIdentifier",
            Self::Email(_) => "email",
            Self::Phone(_) => "phone",
        }
    }

    /// The identifier's value as text.
    pub fn value(&self) -> String {
        match self {
            Self::LeadId(id) => id.to_string(),
            Self::UniqueIdentifier(v) | Self::Email(v) | Self::Phone(v) => v.clone(),
        }
    }
}

/// `userData` of a create request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserData {
    /// First name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_name: Option<String>,
    /// Last name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_name: Option<String>,
    /// Email address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// Phone number, ideally with country code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    /// Company name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub company_name: Option<String>,
    /// Any other properties, kept as given.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `attributionData` of a create request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AttributionData {
    /// Google Ads click id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gclid: Option<String>,
    /// Google Ads app-to-web click id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gbraid: Option<String>,
    /// Google Ads web-to-app click id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wbraid: Option<String>,
    /// GA4 client id (the last two parts of the `_ga` cookie).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cid: Option<String>,
    /// GA4 session id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<String>,
    /// Meta browser id (`_fbp` cookie).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fbp: Option<String>,
    /// Meta click id (`_fbc` cookie).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fbc: Option<String>,
    /// Any other properties (`utm_source`, `msclkid`, ...), kept as given.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `formData` of a create request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FormData {
    /// The form's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form_name: Option<String>,
    /// The message submitted with the form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form_message: Option<String>,
    /// Deduplication key, scoped to the project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unique_event_id: Option<String>,
    /// Custom fields, kept as given.
    #[serde(flatten)]
    pub fields: JsonObject,
}

/// `deviceData` of a lead: what feeds the analytics and social-ad integrations.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceData {
    /// The visitor's IP address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_address: Option<String>,
    /// The visitor's browser user agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
}

/// Body of createLead and createServerSideLead, as the typed client sends it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateLeadRequest {
    /// The project's public id: required by createLead, optional for createServerSideLead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
    /// Contact data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_data: Option<UserData>,
    /// Click ids and campaign data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution_data: Option<AttributionData>,
    /// The form submission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form_data: Option<FormData>,
    /// The visitor's device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_data: Option<DeviceData>,
    /// The channel path: a string, or a JSON array or object (stored as its JSON text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_flow: Option<Value>,
    /// The caller's identifier, at most 255 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unique_identifier: Option<String>,
}

/// Body of updateLeadStatus, as the typed client sends it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateLeadStatusRequest {
    /// Which lead.
    #[serde(flatten)]
    pub identifier: LeadIdentifier,
    /// `open`, `lost` or a label.
    pub conversion_id: ConversionId,
    /// Value in cents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<i64>,
    /// Replaces the lead's note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample_lead() -> Lead {
        Lead {
            id: 42,
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
        }
    }

    #[test]
    fn lead_keys_are_all_present_in_contract_order() {
        let text = serde_json::to_string(&sample_lead()).unwrap();
        assert_eq!(
            text,
            r#"{"id":42,"status":"pending","formName":"Contact","firstName":"Ada","lastName":null,"phone":null,"email":"ada@example.com","companyName":null,"price":5000,"note":null,"formData":null,"userData":null,"attributionData":null,"channelFlow":null,"uniqueIdentifier":null,"createdAt":"2026-03-15T10:30:00.000Z","conversionId":"lost"}"#
        );
        let back: Lead = serde_json::from_str(&text).unwrap();
        assert_eq!(back, sample_lead());
    }

    #[test]
    fn conversion_ids_round_trip_as_strings() {
        let label = Uuid::parse_str("7d6c1f0e-1f47-4b8e-9a43-2a1c3b4d5e6f").unwrap();
        for (id, text) in [
            (ConversionId::Open, "open"),
            (ConversionId::Lost, "lost"),
            (
                ConversionId::Label(label),
                "7d6c1f0e-1f47-4b8e-9a43-2a1c3b4d5e6f",
            ),
        ] {
            assert_eq!(id.to_string(), text);
            assert_eq!(text.parse::<ConversionId>().unwrap(), id);
        }
        assert!("Open".parse::<ConversionId>().is_err());
        assert!("not-a-uuid".parse::<ConversionId>().is_err());
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
            lead_id: Some(42),
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
            lead_id: 42,
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
}
