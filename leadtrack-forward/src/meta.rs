//! Meta, through the Conversions API.
//!
//! `POST {base}/{api_version}/{pixel_id}/events?access_token=..` with one server event of
//! `action_source: "system_generated"` and the CRM fields of Meta's conversion-leads
//! integration. Graph API errors name their code; the temporary ones are retried.

use leadtrack_core::integration::MetaSettings;
use leadtrack_core::job::ClaimedJob;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::normalize::{self, Rules};
use crate::outcome::{self, Answer, Outcome};

/// Where events go unless the settings say otherwise.
pub const DEFAULT_BASE_URL: &str = "https://graph.facebook.com";

/// Graph API error codes that mean "try again later": unknown and service errors,
/// throttling (app, user, page, application request limits), temporary unavailability.
const TRANSIENT_CODES: [i64; 7] = [1, 2, 4, 17, 32, 341, 613];

/// The Conversions API body for `job`, as the event `event_name`.
pub fn payload(job: &ClaimedJob, event_name: &str, test_event_code: Option<&str>) -> Value {
    let lead = &job.lead.data;
    let region = job.project.region.as_deref();
    let mut user_data = Map::new();
    let hashed = [
        (
            "em",
            lead.user("email")
                .and_then(|v| normalize::hashed_email(v, Rules::Meta)),
        ),
        (
            "ph",
            lead.user("phone")
                .and_then(|v| normalize::hashed_phone(v, region, Rules::Meta)),
        ),
        (
            "fn",
            lead.user("firstName").and_then(normalize::hashed_name),
        ),
        ("ln", lead.user("lastName").and_then(normalize::hashed_name)),
    ];
    for (key, hash) in hashed {
        if let Some(hash) = hash {
            user_data.insert(key.into(), json!([hash]));
        }
    }
    let device = &lead.device_data;
    let plain = [
        ("fbp", lead.attribution("fbp")),
        ("fbc", lead.attribution("fbc")),
        ("client_ip_address", device.ip_address.as_deref()),
        ("client_user_agent", device.user_agent.as_deref()),
    ];
    for (key, value) in plain {
        if let Some(value) = value {
            user_data.insert(key.into(), json!(value));
        }
    }
    let mut custom_data = Map::new();
    if let Some(cents) = job.job.price {
        custom_data.insert("value".into(), json!(cents as f64 / 100.0));
        custom_data.insert("currency".into(), json!(job.project.currency));
    }
    custom_data.insert("event_source".into(), json!("crm"));
    custom_data.insert("lead_event_source".into(), json!("leadtrack"));
    let event = json!({
        "event_name": event_name,
        "event_time": job.job.created_at.timestamp(),
        "action_source": "system_generated",
        "event_id": job.job.event_id.to_string(),
        "user_data": user_data,
        "custom_data": custom_data,
    });
    let mut body = json!({"data": [event]});
    if let Some(code) = test_event_code {
        body["test_event_code"] = json!(code);
    }
    body
}

/// A Graph API error body.
#[derive(Deserialize)]
struct GraphError {
    error: GraphErrorDetail,
}

#[derive(Deserialize)]
struct GraphErrorDetail {
    #[serde(default)]
    message: String,
    #[serde(default)]
    code: Option<i64>,
    #[serde(default)]
    error_subcode: Option<i64>,
    #[serde(default)]
    is_transient: Option<bool>,
}

/// Reads Meta's answer: success, or a Graph error whose code (or `is_transient`) says
/// whether a retry can help.
pub(crate) fn classify(answer: &Answer, secrets: &[&str]) -> Outcome {
    if answer.is_success() {
        return Outcome::Delivered {
            status: answer.status,
        };
    }
    let Ok(GraphError { error }) = serde_json::from_slice::<GraphError>(&answer.body) else {
        return answer.by_status(|| {
            outcome::scrub(
                format!("HTTP {}: {}", answer.status, answer.snippet()),
                secrets,
            )
        });
    };
    let code = error.code.unwrap_or_default();
    let description = outcome::scrub(
        outcome::short(&format!(
            "Meta error {code}{}: {}",
            error
                .error_subcode
                .map(|sub| format!("/{sub}"))
                .unwrap_or_default(),
            error.message
        )),
        secrets,
    );
    let transient = error.is_transient == Some(true)
        || TRANSIENT_CODES.contains(&code)
        || outcome::is_retryable_status(answer.status);
    if transient {
        Outcome::Retry {
            status: Some(answer.status),
            error: description,
            retry_after: answer.retry_after,
        }
    } else {
        Outcome::Failed {
            status: Some(answer.status),
            error: description,
        }
    }
}

/// Sends `job` to Meta.
pub(crate) async fn deliver(
    http: &reqwest::Client,
    settings: &MetaSettings,
    job: &ClaimedJob,
) -> Outcome {
    let Some(event_name) = job.mapping().meta_event.as_deref() else {
        return Outcome::skipped("the conversion is not mapped to a Meta event");
    };
    let base = settings
        .base_url
        .as_deref()
        .unwrap_or(DEFAULT_BASE_URL)
        .trim_end_matches('/');
    let url = format!(
        "{base}/{}/{}/events",
        settings.api_version.trim_matches('/'),
        settings.pixel_id
    );
    let body = payload(job, event_name, settings.test_event_code.as_deref());
    let request = http
        .post(url)
        .query(&[("access_token", settings.access_token.expose())])
        .json(&body);
    match outcome::send(request).await {
        Ok(answer) => classify(&answer, &[settings.access_token.expose()]),
        Err(failure) => failure,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, body: Value) -> Answer {
        Answer {
            status,
            retry_after: None,
            body: body.to_string().into_bytes(),
        }
    }

    #[test]
    fn graph_error_codes_decide_retry_or_failure() {
        let error = |code: i64| json!({"error": {"message": "m", "type": "OAuthException", "code": code, "fbtrace_id": "t"}});
        for code in TRANSIENT_CODES {
            assert!(
                matches!(
                    classify(&answer(400, error(code)), &[]),
                    Outcome::Retry { .. }
                ),
                "{code}"
            );
        }
        for code in [100, 190, 200, 294] {
            let outcome = classify(&answer(400, error(code)), &[]);
            assert!(matches!(outcome, Outcome::Failed { .. }), "{code}");
        }
        let transient = json!({"error": {"message": "m", "code": 100, "is_transient": true}});
        assert!(matches!(
            classify(&answer(400, transient), &[]),
            Outcome::Retry { .. }
        ));
        assert!(matches!(
            classify(&answer(503, json!("down")), &[]),
            Outcome::Retry { .. }
        ));
        assert_eq!(
            classify(&answer(200, json!({"events_received": 1})), &[]),
            Outcome::Delivered { status: 200 }
        );
    }

    #[test]
    fn error_messages_name_the_code_and_hide_the_token() {
        let body = json!({"error": {"message": "Invalid OAuth access token EAABsecret.", "code": 190, "error_subcode": 463}});
        let Outcome::Failed { error, status } = classify(&answer(400, body), &["EAABsecret"])
        else {
            panic!("a bad token is permanent");
        };
        assert_eq!(status, Some(400));
        assert_eq!(error, "Meta error 190/463: Invalid OAuth access token ***.");
    }
}
