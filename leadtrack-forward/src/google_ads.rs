//! A conversion delivered to Google Ads as a Data Manager API event (the request and answer
//! rules are `leadtrack_platforms::google_ads`'s): the click ids, the hashed user data the
//! lead's consent allows, the value, and the conversion's id as `transactionId`.

use leadtrack_core::integration::GoogleAdsSettings;
use leadtrack_core::job::ClaimedJob;
use serde_json::{Map, Value, json};

use leadtrack_platforms::oauth::TokenCache;
use leadtrack_platforms::outcome::Outcome;

use crate::google;
use leadtrack_outbound::Outbound;
use leadtrack_platforms::google_ads::{destination, error_of, ingest};

/// The `events:ingest` body for `job`, to the conversion action `action`.
pub(crate) fn payload(job: &ClaimedJob, settings: &GoogleAdsSettings, action: &str) -> Value {
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
    http: &Outbound,
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
