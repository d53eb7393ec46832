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

use crate::normalize::{self, Rules};
use crate::outcome::{self, Outcome};

/// Where events go unless the settings say otherwise.
pub const DEFAULT_BASE_URL: &str = "https://www.google-analytics.com";

/// GA4 accepts events backdated this far at most; older ones are sent undated.
const MAX_BACKDATE_HOURS: i64 = 72;

/// The Measurement Protocol body for `job`, as the event `event_name`; `None` without a
/// client id (`cid`).
pub fn payload(job: &ClaimedJob, event_name: &str, now: DateTime<Utc>) -> Option<Value> {
    let lead = &job.lead.data;
    let client_id = lead.attribution("cid")?;
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
    params.insert("transaction_id".into(), json!(job.job.event_id.to_string()));

    let mut body = Map::new();
    body.insert("client_id".into(), json!(client_id));
    if now - job.job.created_at < chrono::Duration::hours(MAX_BACKDATE_HOURS) {
        body.insert(
            "timestamp_micros".into(),
            json!(job.job.created_at.timestamp_micros()),
        );
    }
    let country = job.project.phone_country_code.as_deref();
    let mut user_data = Map::new();
    if let Some(hash) = lead
        .user("email")
        .and_then(|email| normalize::hashed_email(email, Rules::Google))
    {
        user_data.insert("sha256_email_address".into(), json!([hash]));
    }
    if let Some(hash) = lead
        .user("phone")
        .and_then(|phone| normalize::hashed_phone(phone, country, Rules::Google))
    {
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

/// What the validation endpoint answers.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Validation {
    #[serde(default)]
    validation_messages: Vec<ValidationMessage>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ValidationMessage {
    #[serde(default)]
    field_path: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    validation_code: String,
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
    let base = settings
        .base_url
        .as_deref()
        .unwrap_or(DEFAULT_BASE_URL)
        .trim_end_matches('/');
    let path = if settings.validate {
        "/debug/mp/collect"
    } else {
        "/mp/collect"
    };
    let request = http
        .post(format!("{base}{path}"))
        .query(&[
            ("measurement_id", settings.measurement_id.as_str()),
            ("api_secret", settings.api_secret.expose()),
        ])
        .json(&body);
    let answer = match outcome::send(request).await {
        Ok(answer) => answer,
        Err(failure) => return failure,
    };
    let secrets = [settings.api_secret.expose()];
    let outcome = answer.by_status(|| {
        outcome::scrub(
            format!("HTTP {}: {}", answer.status, answer.snippet()),
            &secrets,
        )
    });
    if !(settings.validate && answer.is_success()) {
        return outcome;
    }
    match serde_json::from_slice::<Validation>(&answer.body) {
        Ok(validation) if validation.validation_messages.is_empty() => outcome,
        Ok(validation) => {
            let problems: Vec<String> = validation
                .validation_messages
                .iter()
                .map(|m| format!("{} {}: {}", m.validation_code, m.field_path, m.description))
                .collect();
            Outcome::Failed {
                status: Some(answer.status),
                error: outcome::short(&format!("GA4 validation: {}", problems.join("; "))),
            }
        }
        Err(_) => Outcome::Failed {
            status: Some(answer.status),
            error: format!("GA4 validation answered {}", answer.snippet()),
        },
    }
}
