//! The request bodies as the typed client sends them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::types::{ConversionId, DeviceData, JsonObject, LeadIdentifier};

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
    /// Microsoft Advertising click id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msclkid: Option<String>,
    /// LinkedIn click id (first-party `li_fat_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub li_fat_id: Option<String>,
    /// Any other properties (`utm_source`, `fbclid`, ...), kept as given.
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
