//! Google Analytics 4, through the Measurement Protocol.
//!
//! `POST {base}/mp/collect?measurement_id=..&api_secret=..` with one event. The endpoint
//! answers 2xx even to payloads it drops, so the settings' validation mode posts to
//! `/debug/mp/collect` instead and treats its `validationMessages` as errors.

use chrono::{DateTime, Utc};
use leadtrack_core::integration::Ga4Settings;
use leadtrack_core::job::ClaimedJob;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::google;
use crate::outcome::{self, Answer, Outcome};

/// Where events go unless the settings say otherwise.
pub const DEFAULT_BASE_URL: &str = "https://www.google-analytics.com";

/// GA4 accepts events backdated this far at most; older ones are sent undated.
const MAX_BACKDATE_HOURS: i64 = 72;

/// The Measurement Protocol body for `job`, as the event `event_name`; `None` without a
/// client id (`cid`).
pub fn payload(job: &ClaimedJob, event_name: &str, now: DateTime<Utc>) -> Option<Value> {
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

/// Where events go to be checked (and not recorded) instead of collected.
const VALIDATION_PATH: &str = "/debug/mp/collect";

/// The body of a test event: a made-up client id and one event named `event_name`, shaped
/// like a conversion (a transaction id, a zero value in `currency`), with no personal data.
/// It asks the validation endpoint for its strictest checks.
pub fn test_payload(event_name: &str, currency: &str) -> Value {
    json!({
        "client_id": "leadtrack.test",
        "validation_behavior": "ENFORCE_RECOMMENDATIONS",
        "events": [{
            "name": event_name,
            "params": {"transaction_id": "leadtrack-test", "value": 0.0, "currency": currency},
        }],
    })
}

/// What the validation endpoint answers.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Validation {
    #[serde(default)]
    validation_messages: Vec<ValidationMessage>,
}

/// One problem GA4's validation endpoint found in an event.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ValidationMessage {
    /// Where the problem is, e.g. `events`.
    #[serde(default)]
    pub field_path: String,
    /// What is wrong, in GA4's words.
    #[serde(default)]
    pub description: String,
    /// GA4's code for it, e.g. `NAME_INVALID`.
    #[serde(default)]
    pub validation_code: String,
}

impl std::fmt::Display for ValidationMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.validation_code, self.field_path, self.description
        )
    }
}

/// Posts `body` to `path` of the settings' endpoint, with their credentials.
async fn post(
    http: &reqwest::Client,
    settings: &Ga4Settings,
    path: &str,
    body: &Value,
) -> Result<Answer, Outcome> {
    let url = outcome::endpoint(settings.base_url.as_deref(), DEFAULT_BASE_URL, path);
    let request = http
        .post(url)
        .query(&[
            ("measurement_id", settings.measurement_id.as_str()),
            ("api_secret", settings.api_secret.expose()),
        ])
        .json(body);
    outcome::send(request).await
}

/// The validation endpoint's messages in its answer; a failure when it is not one.
fn validation_messages(answer: &Answer) -> Result<Vec<ValidationMessage>, Outcome> {
    serde_json::from_slice::<Validation>(&answer.body)
        .map(|validation| validation.validation_messages)
        .map_err(|_| Outcome::Failed {
            status: Some(answer.status),
            error: format!("GA4 validation answered {}", answer.snippet()),
        })
}

/// Sends `body` to GA4's validation endpoint, which checks the event and records nothing,
/// and returns the problems it found (none: the event is valid). The endpoint does not
/// check the API secret. Fails with the outcome of a request that did not get a 2xx answer
/// from the validator.
pub async fn validate(
    http: &reqwest::Client,
    settings: &Ga4Settings,
    body: &Value,
) -> Result<Vec<ValidationMessage>, Outcome> {
    let answer = post(http, settings, VALIDATION_PATH, body).await?;
    if !answer.is_success() {
        return Err(answer.by_status(|| failure(&answer, settings)));
    }
    validation_messages(&answer)
}

/// A failed answer described, without the credentials.
fn failure(answer: &Answer, settings: &Ga4Settings) -> String {
    outcome::scrub(
        format!("HTTP {}: {}", answer.status, answer.snippet()),
        &[settings.api_secret.expose()],
    )
}

/// Sends `job` to GA4.
pub(crate) async fn deliver(
    http: &reqwest::Client,
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
