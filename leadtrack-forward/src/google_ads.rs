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
use leadtrack_platforms::google_ads::{conversion_action_id, destination, error_of, ingest};

/// The `events:ingest` event of `job`.
pub(crate) fn event(job: &ClaimedJob) -> Value {
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
    event
}

/// The conversion action `job` goes to and its event, or why it sends none.
pub(crate) fn prepare(job: &ClaimedJob) -> Result<(String, Value), Outcome> {
    let Some(action) = job.mapping().google_ads_action.as_deref() else {
        return Err(Outcome::skipped(
            "the conversion is not mapped to a Google Ads conversion action",
        ));
    };
    if leadtrack_core::rules::skip_reason(
        leadtrack_core::types::IntegrationKind::GoogleAds,
        &job.lead,
        job.job.converted_at,
    )
    .is_some()
    {
        return Err(Outcome::skipped(
            "the lead has no Google Ads click id, or its click is older than 90 days",
        ));
    }
    Ok((conversion_action_id(action).to_owned(), event(job)))
}

/// Sends `events` to the conversion action `action` in one request (a restatement is the
/// same event again, with the same transaction id): Google takes all of them or none.
pub(crate) async fn send(
    (http, tokens): (&Outbound, &TokenCache),
    settings: &GoogleAdsSettings,
    action: &str,
    events: Vec<Value>,
) -> Outcome {
    let body = json!({
        "destinations": [destination(settings, action)],
        "encoding": "HEX",
        "events": events,
    });
    match ingest(http, tokens, settings, &body).await {
        Ok(answer) => answer.by_status(|| error_of(&answer, settings)),
        Err(failure) => failure,
    }
}
