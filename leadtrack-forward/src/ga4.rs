//! A conversion delivered to Google Analytics 4 as a Measurement Protocol event (the
//! request and answer rules are `leadtrack_platforms::ga4`'s): the lead's client id, the
//! mapped event, its value, and in validation mode the validation endpoint's messages.

use chrono::{DateTime, Utc};
use leadtrack_core::integration::Ga4Settings;
use leadtrack_core::job::ClaimedJob;
use serde_json::{Map, Value, json};

use leadtrack_platforms::outcome::{self, Outcome};

use crate::google;
use leadtrack_outbound::Outbound;
use leadtrack_platforms::ga4::{VALIDATION_PATH, failure, post, validation_messages};

/// GA4 accepts events backdated this far at most; older ones are sent undated.
const MAX_BACKDATE_HOURS: i64 = 72;

/// The Measurement Protocol body for `job`, as the event `event_name`; `None` without a
/// client id (`cid`).
pub(crate) fn payload(job: &ClaimedJob, event_name: &str, now: DateTime<Utc>) -> Option<Value> {
    let lead = &job.lead.data;
    let client_id = lead.ga_client_id()?;
    let mut params = Map::new();
    if let Some(session) = lead.attribution("sid") {
        params.insert(
            "session_id".into(),
            session
                .parse::<i64>()
                .map_or_else(|_| json!(session), |id| json!(id)),
        );
    }
    if let Some(cents) = job.job.price {
        params.insert("value".into(), json!(cents as f64 / 100.0));
        params.insert("currency".into(), json!(job.project.currency));
    }
    params.insert(
        "transaction_id".into(),
        json!(job.job.conversion_event_id.to_string()),
    );

    let mut body = Map::new();
    body.insert("client_id".into(), json!(client_id));
    // The conversion's time is its first rating's; past GA4's window the event goes
    // without one, and GA4 takes the time it arrives.
    let converted_at = job.job.converted_at;
    if now - converted_at < chrono::Duration::hours(MAX_BACKDATE_HOURS) {
        body.insert(
            "timestamp_micros".into(),
            json!(converted_at.timestamp_micros()),
        );
    }
    // https://developers.google.com/analytics/devguides/collection/protocol/ga4/reference:
    // "consent": "ad_user_data", "ad_personalization", each "GRANTED" or "DENIED".
    let consent = google::consent(job);
    let signals = google::signals(
        consent,
        ["ad_user_data", "ad_personalization"],
        ["GRANTED", "DENIED"],
    );
    if !signals.is_empty() {
        body.insert("consent".into(), Value::Object(signals));
    }
    let user = google::hashed_user(job, consent);
    let mut user_data = Map::new();
    if let Some(hash) = user.email {
        user_data.insert("sha256_email_address".into(), json!([hash]));
    }
    if let Some(hash) = user.phone {
        user_data.insert("sha256_phone_number".into(), json!([hash]));
    }
    if !user_data.is_empty() {
        body.insert("user_data".into(), Value::Object(user_data));
    }
    body.insert(
        "events".into(),
        json!([{"name": event_name, "params": params}]),
    );
    Some(Value::Object(body))
}

/// Sends `job` to GA4.
pub(crate) async fn deliver(
    http: &Outbound,
    settings: &Ga4Settings,
    job: &ClaimedJob,
    now: DateTime<Utc>,
) -> Outcome {
    let Some(event_name) = job.mapping().ga4_event.as_deref() else {
        return Outcome::skipped("the conversion is not mapped to a GA4 event");
    };
    let Some(body) = payload(job, event_name, now) else {
        return Outcome::skipped("the lead has no Google Analytics client id (cid)");
    };
    let path = if settings.validate {
        VALIDATION_PATH
    } else {
        "/mp/collect"
    };
    let answer = match post(http, settings, path, &body).await {
        Ok(answer) => answer,
        Err(failure) => return failure,
    };
    let outcome = answer.by_status(|| failure(&answer, settings));
    if !(settings.validate && answer.is_success()) {
        return outcome;
    }
    match validation_messages(&answer) {
        Ok(messages) if messages.is_empty() => outcome,
        Ok(messages) => {
            let problems: Vec<String> = messages.iter().map(ToString::to_string).collect();
            Outcome::Failed {
                status: Some(answer.status),
                error: outcome::short(&format!("GA4 validation: {}", problems.join("; "))),
            }
        }
        Err(failure) => failure,
    }
}
