//! The words every other module uses: ids, the small enumerations with their wire names,
//! and the JSON shapes leads carry.
//!
//! Each enumeration's wire name comes from one place: `strum` derives `as_ref()`
//! (`AsRefStr`), `Display`, `FromStr` (`EnumString`) and `VARIANTS` (`VariantArray`), with
//! the same case rule as its serde attribute (a test holds the two together).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use strum::{AsRefStr, Display, EnumString, IntoStaticStr, VariantArray};
use uuid::Uuid;

/// A JSON object, as leads keep `formData`, `userData` and `attributionData`.
pub type JsonObject = Map<String, Value>;

/// A lead's id: assigned by the service, unique across projects, a JSON number on the wire.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(transparent)]
pub struct LeadId(pub i64);

impl fmt::Display for LeadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A project's internal id, as stores key their rows. The public id is
/// [`crate::project::Project::public_id`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProjectId(pub i64);

/// A conversion job's id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JobId(pub i64);

/// A user's id: a person who signs in to the dashboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct UserId(pub i64);

impl fmt::Display for UserId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A string that names none of an enumeration's values.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown value {0:?}")]
pub struct UnknownValue(pub String);

/// Where a lead stands (CONTRACT.md section 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(AsRefStr, Display, EnumString, IntoStaticStr, VariantArray)]
#[strum(serialize_all = "lowercase")]
pub enum LeadStatus {
    /// New, reset with `open`, or processed by a label without "mark as done".
    Open,
    /// A conversion job is queued or being delivered.
    Pending,
    /// Processed by a label with "mark as done".
    Rated,
    /// Processed with `lost`.
    Lost,
    /// Held out of the inbox as junk ([`crate::spam::SpamReason`] says why): never
    /// forwarded, counted or announced, and left out of listings that name no status.
    Spam,
}

impl LeadStatus {
    /// The statuses a listing that names none shows: all but [`LeadStatus::Spam`].
    pub const LISTED: [LeadStatus; 4] = [Self::Open, Self::Pending, Self::Rated, Self::Lost];
}

/// The platforms a conversion is forwarded to, in the order warnings are reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(AsRefStr, Display, EnumString, IntoStaticStr, VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum IntegrationKind {
    /// Google Ads offline click conversions.
    GoogleAds,
    /// Google Analytics 4, Measurement Protocol.
    Ga4,
    /// Meta Conversions API.
    Meta,
    /// Microsoft Advertising offline conversions.
    MicrosoftAds,
    /// LinkedIn Conversions API.
    Linkedin,
    /// TikTok Events API, as CRM events.
    Tiktok,
    /// Reddit Conversions API v3.
    Reddit,
    /// Pinterest API for Conversions (v5).
    Pinterest,
    /// Snapchat Conversions API v3.
    Snapchat,
    /// A signed JSON webhook.
    Webhook,
}

/// What a user may do in a project they are a member of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(AsRefStr, Display, EnumString, VariantArray)]
#[strum(serialize_all = "lowercase")]
pub enum Role {
    /// Sees leads, their history and the reports; rates, exports and changes nothing.
    Viewer,
    /// Also rates leads, sorts out spam and exports.
    Member,
    /// Also manages keys, integrations, labels, members and settings.
    Owner,
}

impl Role {
    /// Whether this role includes what `needed` allows (an owner can do what a member can,
    /// and a member what a viewer can).
    pub fn allows(self, needed: Role) -> bool {
        self >= needed
    }
}

/// Where a conversion job stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(AsRefStr, Display, EnumString, VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum JobState {
    /// Waiting for its due time (first delivery or a retry).
    Queued,
    /// Leased by a worker that is delivering it.
    Running,
    /// Every delivery ended; the lead moved on.
    Done,
    /// Cancelled by `open` before any delivery started.
    Cancelled,
}

impl JobState {
    /// Whether the job still blocks a new conversion of its lead (the 409 rule).
    pub fn is_unfinished(self) -> bool {
        matches!(self, Self::Queued | Self::Running)
    }
}

/// Where one integration's delivery of a job stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(AsRefStr, Display, EnumString, VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum DeliveryState {
    /// Not yet delivered; due at its next attempt.
    Pending,
    /// The platform accepted it.
    Delivered,
    /// Not sent: the lead lacks what the platform needs.
    Skipped,
    /// Failed for good.
    Failed,
}

/// What a delivery does at its platform: the first report of a conversion, a new value
/// for one already reported, or the withdrawal of one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(AsRefStr, Display, EnumString, VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum DeliveryAction {
    /// Reports the conversion.
    #[default]
    Send,
    /// Reports a new value for a conversion the platform already has.
    Restate,
    /// Withdraws a conversion the platform already has.
    Retract,
}

/// How one delivery attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(AsRefStr, Display, EnumString, IntoStaticStr, VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum AttemptOutcome {
    /// The platform accepted the conversion.
    Delivered,
    /// Not sent: the lead lacks what the platform needs (e.g. the click is too old).
    Skipped,
    /// A temporary failure; another attempt follows.
    Retry,
    /// A permanent failure, or retries ran out.
    Failed,
}

impl AttemptOutcome {
    /// The state a delivery is in after an attempt with this outcome.
    pub fn delivery_state(self) -> DeliveryState {
        match self {
            Self::Delivered => DeliveryState::Delivered,
            Self::Skipped => DeliveryState::Skipped,
            Self::Retry => DeliveryState::Pending,
            Self::Failed => DeliveryState::Failed,
        }
    }
}

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

/// How a lead is found: the identifiers of getLead and updateLeadStatus.
///
/// Serializes as one property, e.g. `{"leadId": 42}` or `{"email": "a@example.com"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum LeadIdentifier {
    /// The lead's id.
    LeadId(LeadId),
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

/// One consent signal: what the person chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::AsRefStr, strum::Display, strum::EnumString, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum ConsentStatus {
    /// The person agreed.
    Granted,
    /// The person refused.
    Denied,
}

/// A lead's consent to Google's advertising uses of its data, as Google's consent mode
/// names them (the `consent` of createLead and createServerSideLead, an addition). A signal
/// not given is unknown: the project's default applies, else none is sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Consent {
    /// `adUserData`: whether user data may be sent to Google for advertising. Denied, only
    /// click ids go to Google.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ad_user_data: Option<ConsentStatus>,
    /// `adPersonalization`: whether the data may be used for personalised advertising.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ad_personalization: Option<ConsentStatus>,
}

impl Consent {
    /// Whether no signal is given.
    pub fn is_empty(&self) -> bool {
        self.ad_user_data.is_none() && self.ad_personalization.is_none()
    }

    /// Each signal of `self`, else of `fallback`.
    pub fn or(self, fallback: Consent) -> Consent {
        Consent {
            ad_user_data: self.ad_user_data.or(fallback.ad_user_data),
            ad_personalization: self.ad_personalization.or(fallback.ad_personalization),
        }
    }
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

/// `N` bytes from the operating system's random generator, for ids, keys and tokens.
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    // The operating system's generator failing is not something a caller can handle.
    getrandom::fill(&mut bytes).expect("the operating system's random generator is unavailable");
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant's strum name is its serde name, and parses back.
    fn wire_names_agree<T>()
    where
        T: VariantArray + AsRef<str> + Serialize + FromStr + PartialEq + fmt::Debug + Copy,
    {
        for &variant in T::VARIANTS {
            assert_eq!(
                serde_json::to_value(variant).unwrap(),
                Value::String(variant.as_ref().to_owned())
            );
            assert_eq!(variant.as_ref().parse::<T>().ok(), Some(variant));
        }
    }

    #[test]
    fn strum_and_serde_agree_on_every_wire_name() {
        wire_names_agree::<LeadStatus>();
        wire_names_agree::<IntegrationKind>();
        wire_names_agree::<JobState>();
        wire_names_agree::<DeliveryState>();
        wire_names_agree::<AttemptOutcome>();
        wire_names_agree::<Role>();
        assert_eq!(IntegrationKind::GoogleAds.as_ref(), "google_ads");
        assert_eq!(LeadStatus::Open.to_string(), "open");
        assert!("Open".parse::<LeadStatus>().is_err());
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
    fn owners_may_do_what_members_may() {
        assert!(Role::Owner.allows(Role::Member) && Role::Owner.allows(Role::Owner));
        assert!(Role::Member.allows(Role::Member) && !Role::Member.allows(Role::Owner));
    }

    #[test]
    fn ids_are_plain_numbers_on_the_wire() {
        assert_eq!(serde_json::to_string(&LeadId(42)).unwrap(), "42");
        assert_eq!(
            serde_json::to_value(LeadIdentifier::LeadId(LeadId(7))).unwrap(),
            serde_json::json!({"leadId": 7})
        );
    }
}
