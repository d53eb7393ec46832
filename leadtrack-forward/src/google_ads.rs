//! Google Ads offline click conversions, through the Data Manager API (`events:ingest`),
//! the path Google opened to new developers in June 2026.
//!
//! One event per conversion: the click ids (`gclid`, `gbraid`, `wbraid`), the conversion
//! action as the destination, value and currency, `transactionId` = the conversion's id, and
//! hashed email and phone as user identifiers (enhanced conversions for leads). A new price
//! is the same event again: "send the event again with the same transactionId ... You don't
//! need to specify an adjustment type", and the new value replaces the old without counting
//! a second conversion
//! (<https://developers.google.com/data-manager/api/devguides/events/google-ads/conversion-adjustments>). The OAuth
//! access token comes from a refresh token, is cached until it expires, and is refreshed
//! once when the API answers 401.

use leadtrack_core::integration::GoogleAdsSettings;
use leadtrack_core::job::ClaimedJob;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::google;
use crate::oauth::{self, RefreshGrant, TokenCache};
use crate::outcome::{self, Answer, Outcome};

/// Where events go unless the settings say otherwise.
pub const DEFAULT_BASE_URL: &str = "https://datamanager.googleapis.com";
/// Where access tokens come from unless the settings say otherwise.
pub const DEFAULT_TOKEN_URL: &str = "https://oauth2.googleapis.com/token";

/// The conversion action id of a mapping: its id, or the last segment of a resource name
/// `customers/{customer}/conversionActions/{id}`.
pub fn conversion_action_id(mapping: &str) -> &str {
    mapping.trim().rsplit('/').next().unwrap_or_default()
}

/// A Google Ads customer id as digits (`123-456-7890` becomes `1234567890`).
fn account_id(id: &str) -> String {
    id.chars().filter(char::is_ascii_digit).collect()
}

/// Where an event goes: the settings' account (and manager account), the conversion
/// action `action`.
fn destination(settings: &GoogleAdsSettings, action: &str) -> Value {
    let mut destination = json!({
        "operatingAccount": {"accountType": "GOOGLE_ADS", "accountId": account_id(&settings.customer_id)},
        "productDestinationId": conversion_action_id(action),
    });
    if let Some(login) = &settings.login_customer_id {
        destination["loginAccount"] =
            json!({"accountType": "GOOGLE_ADS", "accountId": account_id(login)});
    }
    destination
}

/// The body of a test event to `action`: a made-up click id, a zero value in `currency`,
/// no personal data. Sent with `validateOnly`, Google checks the request and records
/// nothing.
pub fn test_payload(settings: &GoogleAdsSettings, action: &str, currency: &str) -> Value {
    json!({
        "destinations": [destination(settings, action)],
        "encoding": "HEX",
        "events": [{
            "transactionId": format!("leadtrack-test-{}", uuid::Uuid::new_v4()),
            "eventTimestamp": leadtrack_core::time::format(&chrono::Utc::now()),
            "eventSource": "WEB",
            "adIdentifiers": {"gclid": "leadtrack-test"},
            "conversionValue": 0.0,
            "currency": currency,
        }],
    })
}

/// The `events:ingest` body for `job`, to the conversion action `action`.
pub fn payload(job: &ClaimedJob, settings: &GoogleAdsSettings, action: &str) -> Value {
    let lead = &job.lead.data;
    let mut ad_identifiers = Map::new();
    for key in ["gclid", "gbraid", "wbraid"] {
        if let Some(id) = lead.google_click_id(key) {
            ad_identifiers.insert(key.into(), json!(id));
        }
    }
    let consent = google::consent(job);
    let user = google::hashed_user(job, consent);
    let mut identifiers = Vec::new();
    if let Some(hash) = user.email {
        identifiers.push(json!({"emailAddress": hash}));
    }
    if let Some(hash) = user.phone {
        identifiers.push(json!({"phoneNumber": hash}));
    }
    let mut event = json!({
        "transactionId": job.job.conversion_event_id.to_string(),
        "eventTimestamp": leadtrack_core::time::format(&job.job.converted_at),
        "eventSource": "WEB",
        "adIdentifiers": ad_identifiers,
    });
    if let Some(cents) = job.job.price {
        event["conversionValue"] = json!(cents as f64 / 100.0);
        event["currency"] = json!(job.project.currency);
    }
    if !identifiers.is_empty() {
        event["userData"] = json!({"userIdentifiers": identifiers});
    }
    // https://developers.google.com/data-manager/api/reference/rest/v1/Consent: adUserData
    // and adPersonalization, each CONSENT_GRANTED or CONSENT_DENIED.
    let signals = google::signals(
        consent,
        ["adUserData", "adPersonalization"],
        ["CONSENT_GRANTED", "CONSENT_DENIED"],
    );
    if !signals.is_empty() {
        event["consent"] = Value::Object(signals);
    }
    json!({
        "destinations": [destination(settings, action)],
        "encoding": "HEX",
        "events": [event],
    })
}

/// Sends `job` to Google Ads: its conversion, or the conversion's new value.
pub(crate) async fn deliver(
    http: &reqwest::Client,
    tokens: &TokenCache,
    settings: &GoogleAdsSettings,
    job: &ClaimedJob,
) -> Outcome {
    let Some(action) = job.mapping().google_ads_action.as_deref() else {
        return Outcome::skipped("the conversion is not mapped to a Google Ads conversion action");
    };
    if leadtrack_core::rules::skip_reason(
        leadtrack_core::types::IntegrationKind::GoogleAds,
        &job.lead,
        job.job.converted_at,
    )
    .is_some()
    {
        return Outcome::skipped(
            "the lead has no Google Ads click id, or its click is older than 90 days",
        );
    }
    let body = payload(job, settings, action);
    match ingest(http, tokens, settings, &body).await {
        Ok(answer) => answer.by_status(|| error_of(&answer, settings)),
        Err(failure) => failure,
    }
}

/// What a failed answer says, without the credentials.
pub(crate) fn error_of(answer: &Answer, settings: &GoogleAdsSettings) -> String {
    let secrets = [
        settings.client_secret.expose(),
        settings.refresh_token.expose(),
    ];
    outcome::scrub(
        format!("HTTP {}: {}", answer.status, google_error(&answer.body)),
        &secrets,
    )
}

/// Posts `body` to the Data Manager API's `events:ingest` with an access token, refreshing
/// the token once when it is no longer accepted.
pub(crate) async fn ingest(
    http: &reqwest::Client,
    tokens: &TokenCache,
    settings: &GoogleAdsSettings,
    body: &Value,
) -> Result<Answer, Outcome> {
    let url = outcome::endpoint(
        settings.base_url.as_deref(),
        DEFAULT_BASE_URL,
        "/v1/events:ingest",
    );
    oauth::send_authorized(http, tokens, &grant(settings), |token| {
        http.post(&url).bearer_auth(token).json(body)
    })
    .await
}

/// The settings' refresh-token grant at Google's OAuth endpoint.
fn grant(settings: &GoogleAdsSettings) -> RefreshGrant<'_> {
    RefreshGrant {
        token_url: settings.token_url.as_deref().unwrap_or(DEFAULT_TOKEN_URL),
        client_id: &settings.client_id,
        client_secret: Some(settings.client_secret.expose()),
        refresh_token: settings.refresh_token.expose(),
        scope: None,
    }
}

/// The message of a `google.rpc.Status` error body, or the body itself.
fn google_error(body: &[u8]) -> String {
    #[derive(Deserialize)]
    struct Status {
        error: StatusDetail,
    }
    #[derive(Deserialize)]
    struct StatusDetail {
        #[serde(default)]
        status: String,
        #[serde(default)]
        message: String,
    }
    match serde_json::from_slice::<Status>(body) {
        Ok(Status { error }) => outcome::short(&format!("{} {}", error.status, error.message)),
        Err(_) => outcome::short(&String::from_utf8_lossy(body)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversion_actions_by_id_or_resource_name() {
        assert_eq!(conversion_action_id("123456789"), "123456789");
        assert_eq!(
            conversion_action_id("customers/1234567890/conversionActions/987"),
            "987"
        );
        assert_eq!(account_id("123-456-7890"), "1234567890");
    }

    #[test]
    fn google_errors_read_their_status_and_message() {
        let body = br#"{"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT"}}"#;
        assert_eq!(
            google_error(body),
            "INVALID_ARGUMENT Request contains an invalid argument."
        );
        assert_eq!(google_error(b"oops"), "oops");
    }
}
