//! The service's own records: projects, API keys, conversion labels, integration settings,
//! and the conversion jobs with their deliveries and attempts.

use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::api::{ConversionId, IntegrationKind, LeadStatus};
use crate::lead::StoredLead;

/// A project's internal id, as stores key their rows. The public id is [`Project::public_id`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ProjectId(pub i64);

/// A project: the unit every lead, key, label and integration belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Project {
    /// Internal id.
    pub id: ProjectId,
    /// The public id browsers send as `projectId`.
    pub public_id: String,
    /// A name for people.
    pub name: String,
    /// A deactivated project accepts no requests (`403 project_inactive`).
    pub active: bool,
    /// ISO 4217 code of lead prices, e.g. `EUR`.
    pub currency: String,
    /// Calling code (digits, e.g. `49`) put in front of national phone numbers for Meta.
    pub phone_country_code: Option<String>,
    /// What a `lost` conversion sends to each integration.
    pub lost_mapping: LabelMapping,
    /// When it was created.
    pub created_at: DateTime<Utc>,
}

/// The currency of a project created without one.
pub const DEFAULT_CURRENCY: &str = "USD";

/// What a new project starts with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewProject {
    /// The public id; generated when `None`. See [`validate_public_id`].
    pub public_id: Option<String>,
    /// A name for people.
    pub name: String,
    /// ISO 4217 code; [`DEFAULT_CURRENCY`] when `None`. See [`validate_currency`].
    pub currency: Option<String>,
}

/// Project settings that can change after creation; `None` leaves a setting as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProjectSettings {
    /// A new name.
    pub name: Option<String>,
    /// A new ISO 4217 currency.
    pub currency: Option<String>,
    /// A new phone calling code; `Some(None)` removes it.
    pub phone_country_code: Option<Option<String>>,
    /// A new mapping for `lost`.
    pub lost_mapping: Option<LabelMapping>,
}

/// A fresh random public project id, `prj_` and 16 hex digits.
pub fn generate_public_id() -> String {
    format!("prj_{}", hex::encode(random_bytes::<8>()))
}

/// Public ids are 1 to 64 characters of ASCII letters, digits, `_` and `-`.
pub fn validate_public_id(id: &str) -> Result<(), String> {
    let valid_chars = id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if (1..=64).contains(&id.len()) && valid_chars {
        Ok(())
    } else {
        Err(format!(
            "project id {id:?} must be 1 to 64 characters of letters, digits, '_' or '-'"
        ))
    }
}

/// Currencies are ISO 4217 codes: three uppercase ASCII letters.
pub fn validate_currency(code: &str) -> Result<(), String> {
    if code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase()) {
        Ok(())
    } else {
        Err(format!(
            "currency {code:?} must be an ISO 4217 code such as EUR or USD"
        ))
    }
}

/// Phone calling codes are 1 to 3 digits, without `+` or leading zeros.
pub fn validate_country_code(code: &str) -> Result<(), String> {
    let digits = code.bytes().all(|b| b.is_ascii_digit());
    if (1..=3).contains(&code.len()) && digits && !code.starts_with('0') {
        Ok(())
    } else {
        Err(format!(
            "country calling code {code:?} must be 1 to 3 digits without '+', such as 49 or 1"
        ))
    }
}

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    // The operating system's generator failing is not something a caller can handle.
    getrandom::fill(&mut bytes).expect("the operating system's random generator is unavailable");
    bytes
}

/// The SHA-256 of an API key: all a store keeps of it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyHash(pub [u8; 32]);

impl KeyHash {
    /// Hashes a presented key.
    pub fn of(key: &str) -> Self {
        Self(Sha256::digest(key.as_bytes()).into())
    }
}

impl fmt::Debug for KeyHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyHash({})", hex::encode(&self.0[..4]))
    }
}

/// Length of the display prefix of an API key (`lt_` and 8 characters).
pub const KEY_PREFIX_LEN: usize = 11;

/// A key as it is created: the plain text is shown once and never stored.
#[derive(Clone, PartialEq, Eq)]
pub struct GeneratedKey {
    /// The key to hand to the user, `lt_` and 48 hex digits.
    pub key: String,
    /// Its first [`KEY_PREFIX_LEN`] characters, kept for display and revocation.
    pub prefix: String,
    /// Its SHA-256.
    pub hash: KeyHash,
}

impl GeneratedKey {
    /// A fresh random key (192 bits of randomness).
    pub fn generate() -> Self {
        let key = format!("lt_{}", hex::encode(random_bytes::<24>()));
        Self {
            prefix: key[..KEY_PREFIX_LEN].to_owned(),
            hash: KeyHash::of(&key),
            key,
        }
    }
}

impl fmt::Debug for GeneratedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GeneratedKey")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

/// What is known of a stored key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiKeyInfo {
    /// The key's display prefix.
    pub prefix: String,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it was revoked, if it was.
    pub revoked_at: Option<DateTime<Utc>>,
}

/// A key just created: its plain text (shown once) and its record.
#[derive(Clone, PartialEq, Eq)]
pub struct NewApiKey {
    /// The plain key.
    pub key: String,
    /// The stored record.
    pub info: ApiKeyInfo,
}

impl fmt::Debug for NewApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NewApiKey")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

/// What a conversion sends to each integration. A label has one; so has `lost`, per project.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelMapping {
    /// GA4 event name, e.g. `qualify_lead`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ga4_event: Option<String>,
    /// Meta event name, e.g. `Lead` or a CRM stage name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta_event: Option<String>,
    /// Google Ads conversion action: its id, or its resource name
    /// `customers/{customer}/conversionActions/{id}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub google_ads_action: Option<String>,
    /// Whether the webhook receives this conversion.
    #[serde(default)]
    pub webhook: bool,
}

impl LabelMapping {
    /// Whether this mapping sends anything to `kind`.
    pub fn maps(&self, kind: IntegrationKind) -> bool {
        match kind {
            IntegrationKind::GoogleAds => self.google_ads_action.is_some(),
            IntegrationKind::Ga4 => self.ga4_event.is_some(),
            IntegrationKind::Meta => self.meta_event.is_some(),
            IntegrationKind::Webhook => self.webhook,
        }
    }

    /// The mapping of `lost` in a new project: only the webhook hears of lost leads.
    pub fn default_lost() -> Self {
        Self {
            webhook: true,
            ..Self::default()
        }
    }
}

/// A conversion label: what a CRM rating means for the ad platforms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversionLabel {
    /// Its UUID, sent as `conversionId`.
    pub id: Uuid,
    /// The project it belongs to.
    pub project_id: ProjectId,
    /// A name for people, e.g. `Qualified`.
    pub name: String,
    /// Whether processed leads become `rated` (else `open`).
    pub mark_as_done: bool,
    /// What it sends to each integration.
    pub mapping: LabelMapping,
    /// When it was created.
    pub created_at: DateTime<Utc>,
}

/// What a new label is made of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewLabel {
    /// A name for people.
    pub name: String,
    /// Whether processed leads become `rated`.
    pub mark_as_done: bool,
    /// What it sends to each integration.
    pub mapping: LabelMapping,
}

/// A credential: kept by stores, sent to its platform, never printed.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// Wraps a credential.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The credential itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// Google Analytics 4 Measurement Protocol settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ga4Settings {
    /// The web stream's measurement id, `G-XXXXXXX`.
    pub measurement_id: String,
    /// A Measurement Protocol API secret of the stream.
    pub api_secret: Secret,
    /// Send to the validation endpoint and treat its messages as errors.
    #[serde(default)]
    pub validate: bool,
    /// Overrides `https://www.google-analytics.com`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
}

/// Meta Conversions API settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetaSettings {
    /// The pixel (dataset) id.
    pub pixel_id: String,
    /// A system-user access token.
    pub access_token: Secret,
    /// Graph API version, e.g. `v23.0`.
    pub api_version: String,
    /// Sends events to the Test Events tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_event_code: Option<String>,
    /// Overrides `https://graph.facebook.com`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
}

/// Google Ads settings, through the Data Manager API.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoogleAdsSettings {
    /// The Google Ads customer id conversions belong to (digits).
    pub customer_id: String,
    /// The manager account the credentials act through, if any (digits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub login_customer_id: Option<String>,
    /// OAuth client id.
    pub client_id: String,
    /// OAuth client secret.
    pub client_secret: Secret,
    /// OAuth refresh token with the `datamanager` scope.
    pub refresh_token: Secret,
    /// Overrides `https://oauth2.googleapis.com/token`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_url: Option<String>,
    /// Overrides `https://datamanager.googleapis.com`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
}

/// A signed JSON webhook.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookSettings {
    /// Where events are posted.
    pub url: String,
    /// The HMAC-SHA256 signing secret.
    pub secret: Secret,
}

/// One integration's settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum IntegrationSettings {
    /// Google Ads.
    GoogleAds(GoogleAdsSettings),
    /// Google Analytics 4.
    Ga4(Ga4Settings),
    /// Meta.
    Meta(MetaSettings),
    /// Webhook.
    Webhook(WebhookSettings),
}

impl IntegrationSettings {
    /// Which integration these settings are for.
    pub fn kind(&self) -> IntegrationKind {
        match self {
            Self::GoogleAds(_) => IntegrationKind::GoogleAds,
            Self::Ga4(_) => IntegrationKind::Ga4,
            Self::Meta(_) => IntegrationKind::Meta,
            Self::Webhook(_) => IntegrationKind::Webhook,
        }
    }
}

/// The integrations a project has connected.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Integrations {
    /// Google Ads, when connected.
    pub google_ads: Option<GoogleAdsSettings>,
    /// GA4, when connected.
    pub ga4: Option<Ga4Settings>,
    /// Meta, when connected.
    pub meta: Option<MetaSettings>,
    /// The webhook, when connected.
    pub webhook: Option<WebhookSettings>,
}

impl Integrations {
    /// Whether `kind` is connected.
    pub fn is_connected(&self, kind: IntegrationKind) -> bool {
        match kind {
            IntegrationKind::GoogleAds => self.google_ads.is_some(),
            IntegrationKind::Ga4 => self.ga4.is_some(),
            IntegrationKind::Meta => self.meta.is_some(),
            IntegrationKind::Webhook => self.webhook.is_some(),
        }
    }

    /// The connected integrations, in [`IntegrationKind::ALL`] order.
    pub fn connected(&self) -> Vec<IntegrationKind> {
        IntegrationKind::ALL
            .into_iter()
            .filter(|kind| self.is_connected(*kind))
            .collect()
    }

    /// Adds or replaces one integration's settings.
    pub fn set(&mut self, settings: IntegrationSettings) {
        match settings {
            IntegrationSettings::GoogleAds(s) => self.google_ads = Some(s),
            IntegrationSettings::Ga4(s) => self.ga4 = Some(s),
            IntegrationSettings::Meta(s) => self.meta = Some(s),
            IntegrationSettings::Webhook(s) => self.webhook = Some(s),
        }
    }
}

/// A conversion job's id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct JobId(pub i64);

/// Where a conversion job stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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
    /// The state as stores and the API write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Done => "done",
            Self::Cancelled => "cancelled",
        }
    }

    /// Whether the job still blocks a new conversion of its lead (the 409 rule).
    pub fn is_unfinished(self) -> bool {
        matches!(self, Self::Queued | Self::Running)
    }
}

impl std::str::FromStr for JobState {
    type Err = crate::api::UnknownValue;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [Self::Queued, Self::Running, Self::Done, Self::Cancelled]
            .into_iter()
            .find(|state| state.as_str() == s)
            .ok_or_else(|| crate::api::UnknownValue(s.to_owned()))
    }
}

/// A conversion job: one rating of one lead, to be delivered to its integrations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// Its id.
    pub id: JobId,
    /// The stable event id every platform receives for this conversion, across retries.
    pub event_id: Uuid,
    /// The lead's project.
    pub project_id: ProjectId,
    /// The lead.
    pub lead_id: i64,
    /// The label or `lost` applied.
    pub conversion_id: ConversionId,
    /// The status the lead takes when the job is done.
    pub final_status: LeadStatus,
    /// The lead's price when the rating was applied, in cents.
    pub price: Option<i64>,
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

/// Where one integration's delivery of a job stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryState {
    /// Not yet delivered; due at `next_attempt_at`.
    Pending,
    /// The platform accepted it.
    Delivered,
    /// Not sent: the lead lacks what the platform needs.
    Skipped,
    /// Failed for good.
    Failed,
}

impl DeliveryState {
    /// The state as stores and the API write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Delivered => "delivered",
            Self::Skipped => "skipped",
            Self::Failed => "failed",
        }
    }
}

impl std::str::FromStr for DeliveryState {
    type Err = crate::api::UnknownValue;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [Self::Pending, Self::Delivered, Self::Skipped, Self::Failed]
            .into_iter()
            .find(|state| state.as_str() == s)
            .ok_or_else(|| crate::api::UnknownValue(s.to_owned()))
    }
}

/// One integration's delivery of a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// The integration.
    pub integration: IntegrationKind,
    /// Where it stands.
    pub state: DeliveryState,
    /// Attempts made so far.
    pub attempts: u32,
    /// When the next attempt is due (pending deliveries only).
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// Why it was skipped, or the last error.
    pub detail: Option<String>,
}

/// How one delivery attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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
    /// The outcome as stores and the API write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Delivered => "delivered",
            Self::Skipped => "skipped",
            Self::Retry => "retry",
            Self::Failed => "failed",
        }
    }

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

impl std::str::FromStr for AttemptOutcome {
    type Err = crate::api::UnknownValue;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [Self::Delivered, Self::Skipped, Self::Retry, Self::Failed]
            .into_iter()
            .find(|outcome| outcome.as_str() == s)
            .ok_or_else(|| crate::api::UnknownValue(s.to_owned()))
    }
}

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
    /// The lead's project (currency, phone country code, `lost` mapping).
    pub project: Project,
    /// The label applied; `None` for `lost`.
    pub label: Option<ConversionLabel>,
    /// The project's integration settings.
    pub integrations: Integrations,
}

impl ClaimedJob {
    /// What this conversion sends to each integration.
    pub fn mapping(&self) -> &LabelMapping {
        crate::rules::mapping_for(self.label.as_ref(), &self.project.lost_mapping)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_hash_to_what_a_presented_key_hashes_to() {
        let generated = GeneratedKey::generate();
        assert!(generated.key.starts_with("lt_"));
        assert_eq!(generated.key.len(), 51);
        assert!(generated.key.starts_with(&generated.prefix));
        assert_eq!(generated.prefix.len(), KEY_PREFIX_LEN);
        assert_eq!(KeyHash::of(&generated.key), generated.hash);
        assert_ne!(GeneratedKey::generate().key, generated.key);
        assert!(!format!("{generated:?}").contains(&generated.key));
    }

    #[test]
    fn key_hash_is_sha256() {
        assert_eq!(
            hex::encode(KeyHash::of("test@example.com").0),
            "973dfe463ec85785f5f95af5ba3906eedb2d931c24e69824a89ea65dba4e813b"
        );
    }

    #[test]
    fn secrets_never_print() {
        let settings = WebhookSettings {
            url: "https://example.com/hook".into(),
            secret: Secret::new("whsec_abc"),
        };
        let printed = format!("{settings:?}");
        assert!(!printed.contains("whsec_abc"), "{printed}");
        assert_eq!(settings.secret.expose(), "whsec_abc");
    }

    #[test]
    fn identifiers_and_codes_are_validated() {
        assert!(validate_public_id("acme-prod_1").is_ok());
        assert!(validate_public_id("").is_err());
        assert!(validate_public_id("has space").is_err());
        assert!(validate_public_id(&"x".repeat(65)).is_err());
        assert!(validate_public_id(&generate_public_id()).is_ok());
        assert!(validate_currency("EUR").is_ok());
        assert!(validate_currency("eur").is_err());
        assert!(validate_currency("EURO").is_err());
        assert!(validate_country_code("49").is_ok());
        assert!(validate_country_code("+49").is_err());
        assert!(validate_country_code("049").is_err());
    }

    #[test]
    fn integration_settings_are_tagged_by_kind() {
        let settings = IntegrationSettings::Ga4(Ga4Settings {
            measurement_id: "G-TEST".into(),
            api_secret: Secret::new("s3cret"),
            validate: false,
            base_url: None,
        });
        let json = serde_json::to_value(&settings).unwrap();
        assert_eq!(json["kind"], "ga4");
        assert_eq!(json["apiSecret"], "s3cret");
        let back: IntegrationSettings = serde_json::from_value(json).unwrap();
        assert_eq!(back, settings);
        assert_eq!(back.kind(), IntegrationKind::Ga4);
    }
}
