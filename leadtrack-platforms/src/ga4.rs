//! Google Analytics 4, through the Measurement Protocol.
//!
//! `POST {base}/mp/collect?measurement_id=..&api_secret=..` with one event. The endpoint
//! answers 2xx even to payloads it drops, so the settings' validation mode posts to
//! `/debug/mp/collect` instead and treats its `validationMessages` as errors.
//!
//! This module holds the requests and how their answers read; a job's delivery is
//! `leadtrack-forward`'s. The validation endpoint also checks a connection by hand
//! ([`validate`], [`test_payload`]).

use leadtrack_core::integration::Ga4Settings;
use leadtrack_outbound::Outbound;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::outcome::{self, Answer, Outcome};

/// Where events go unless the settings say otherwise.
pub const DEFAULT_BASE_URL: &str = "https://www.google-analytics.com";

/// Where events go to be checked (and not recorded) instead of collected.
pub const VALIDATION_PATH: &str = "/debug/mp/collect";

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
pub async fn post(
    http: &Outbound,
    settings: &Ga4Settings,
    path: &str,
    body: &Value,
) -> Result<Answer, Outcome> {
    let url = outcome::endpoint(settings.base_url.as_deref(), DEFAULT_BASE_URL, path);
    let request = http.post(&url).map(|request| {
        request
            .query(&[
                ("measurement_id", settings.measurement_id.as_str()),
                ("api_secret", settings.api_secret.expose()),
            ])
            .json(body)
    });
    outcome::send(request).await
}

/// The validation endpoint's messages in its answer; a failure when it is not one.
pub fn validation_messages(answer: &Answer) -> Result<Vec<ValidationMessage>, Outcome> {
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
    http: &Outbound,
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
pub fn failure(answer: &Answer, settings: &Ga4Settings) -> String {
    outcome::scrub(
        format!("HTTP {}: {}", answer.status, answer.snippet()),
        &[settings.api_secret.expose()],
    )
}
