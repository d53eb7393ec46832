//! Meta, through the Conversions API.
//!
//! `POST {base}/{api_version}/{pixel_id}/events?access_token=..` with one server event whose
//! `action_source` the integration's settings give (`other` unless told). Graph API errors
//! name their code; the temporary ones are retried.

use chrono::{DateTime, Utc};
use leadtrack_core::channel::touches;
use leadtrack_core::integration::{MetaActionSource, MetaSettings};
use leadtrack_core::job::ClaimedJob;
use leadtrack_core::lead::{LeadData, StoredLead};
use leadtrack_core::project::Project;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use uuid::Uuid;

use crate::normalize::{self, Rules};
use crate::outcome::{self, Answer, Outcome};

/// Where events go unless the settings say otherwise.
pub const DEFAULT_BASE_URL: &str = "https://graph.facebook.com";

/// Graph API error codes that mean "try again later": unknown and service errors,
/// throttling (app, user, page, application request limits), temporary unavailability.
const TRANSIENT_CODES: [i64; 7] = [1, 2, 4, 17, 32, 341, 613];

/// The Conversions API body for `job`, as the event `event_name`, with the settings'
/// `action_source` and test event code.
///
/// The event follows the server-event parameters of
/// <https://developers.facebook.com/docs/marketing-api/conversions-api/parameters/server-event>
/// and the customer-information parameters of
/// <https://developers.facebook.com/docs/marketing-api/conversions-api/parameters/customer-information-parameters>.
/// A lead from Meta Lead Ads (Instant Forms) is sent as a CRM event for conversion leads
/// instead ([`crm_event`]): Meta's payload specification for those says "Do not use this
/// specification for events not related to this optimization", which "only supports
/// native Lead Ads", so the advertiser's own forms' leads never are.
pub fn payload(job: &ClaimedJob, event_name: &str, settings: &MetaSettings) -> Value {
    let lead = &job.lead.data;
    let region = job.project.region.as_deref();
    let mut custom_data = Map::new();
    if let Some(cents) = job.job.price {
        custom_data.insert("value".into(), json!(cents as f64 / 100.0));
        custom_data.insert("currency".into(), json!(job.project.currency));
    }
    if let Some(lead_id) = meta_lead_id(lead) {
        let at = job.job.converted_at;
        let event = crm_event(lead_id, lead, region, (event_name, at), custom_data);
        let event_id = job.job.conversion_event_id.to_string();
        return with_test_code(json!({"data": [with_id(event, &event_id)]}), settings);
    }
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
    let fbc = lead.meta_click_id(job.lead.created_at);
    let plain = [
        ("fbp", lead.attribution("fbp")),
        ("fbc", fbc.as_deref()),
        ("client_ip_address", device.ip_address.as_deref()),
        ("client_user_agent", device.user_agent.as_deref()),
    ];
    for (key, value) in plain {
        if let Some(value) = value {
            user_data.insert(key.into(), json!(value));
        }
    }
    let mut event = json!({
        "event_name": event_name,
        "event_time": job.job.converted_at.timestamp(),
        "action_source": settings.action_source,
        "event_id": job.job.conversion_event_id.to_string(),
        "user_data": user_data,
        "custom_data": custom_data,
    });
    // Meta requires the page of a website event: the last page the lead landed on.
    if settings.action_source == MetaActionSource::Website
        && let Some(page) = touches(lead)
            .into_iter()
            .rev()
            .find_map(|touch| touch.landing_page)
    {
        event["event_source_url"] = json!(page);
    }
    with_test_code(json!({"data": [event]}), settings)
}

/// `body` with the settings' test event code, if any.
fn with_test_code(mut body: Value, settings: &MetaSettings) -> Value {
    if let Some(code) = settings.test_event_code.as_deref() {
        body["test_event_code"] = json!(code);
    }
    body
}

/// `event` with its `event_id`, by which Meta drops an event it has already.
fn with_id(mut event: Value, event_id: &str) -> Value {
    event["event_id"] = json!(event_id);
    event
}

/// The event name of the first stage of the conversion leads funnel, sent when a Lead Ads
/// lead is kept.
pub const INITIAL_STAGE: &str = "Lead";

/// Meta's id of a lead that came from Meta Lead Ads (`formData.metaLeadId`).
fn meta_lead_id(lead: &LeadData) -> Option<u64> {
    lead.form_data.get("metaLeadId")?.as_str()?.parse().ok()
}

/// A CRM event for conversion leads, by Meta's payload specification
/// (<https://developers.facebook.com/docs/marketing-api/conversions-api/conversion-leads-integration/payload-specification>):
/// the funnel stage as `event_name`, `action_source` `system_generated`, Meta's `lead_id`
/// (with the hashed email and phone) in `user_data`, and `custom_data.event_source` `crm`
/// with `lead_event_source` naming the CRM.
fn crm_event(
    lead_id: u64,
    lead: &LeadData,
    region: Option<&str>,
    (stage, at): (&str, DateTime<Utc>),
    mut custom_data: Map<String, Value>,
) -> Value {
    let mut user_data = Map::new();
    user_data.insert("lead_id".into(), json!(lead_id));
    if let Some(hash) = lead
        .user("email")
        .and_then(|v| normalize::hashed_email(v, Rules::Meta))
    {
        user_data.insert("em".into(), json!([hash]));
    }
    if let Some(hash) = lead
        .user("phone")
        .and_then(|v| normalize::hashed_phone(v, region, Rules::Meta))
    {
        user_data.insert("ph".into(), json!([hash]));
    }
    custom_data.insert("event_source".into(), json!("crm"));
    custom_data.insert("lead_event_source".into(), json!("leadtrack"));
    json!({
        "event_name": stage,
        "event_time": at.timestamp(),
        "action_source": "system_generated",
        "user_data": user_data,
        "custom_data": custom_data,
    })
}

/// The initial stage ([`INITIAL_STAGE`]) of a Lead Ads lead just kept, as a body for the
/// pixel's events endpoint; `None` for a lead not from Lead Ads, or kept more than 7 days
/// after it was submitted. Its `event_id` is the same for the same lead, so that Meta drops
/// a second send.
pub fn initial_stage(
    project: &Project,
    lead: &StoredLead,
    settings: &MetaSettings,
    now: DateTime<Utc>,
) -> Option<Value> {
    let lead_id = meta_lead_id(&lead.data)?;
    if now - lead.created_at > max_event_age() {
        return None;
    }
    let region = project.region.as_deref();
    let stage = (INITIAL_STAGE, lead.created_at);
    let event = crm_event(lead_id, &lead.data, region, stage, Map::new());
    let event_id = Uuid::new_v5(
        &Uuid::NAMESPACE_OID,
        format!("meta-lead:{lead_id}").as_bytes(),
    );
    let body = json!({"data": [with_id(event, &event_id.to_string())]});
    Some(with_test_code(body, settings))
}

/// Sends the initial stage of a Lead Ads lead just kept to the project's Meta integration,
/// outside the job model (no job, nothing pending); what went wrong, naming no secret.
pub async fn send_initial_stage(
    http: &reqwest::Client,
    settings: &MetaSettings,
    project: &Project,
    lead: &StoredLead,
) -> Result<(), String> {
    let Some(body) = initial_stage(project, lead, settings, Utc::now()) else {
        return Ok(());
    };
    let answer = match post(http, settings, &body).await {
        Ok(answer) => classify(&answer, &[settings.access_token.expose()]),
        Err(failure) => failure,
    };
    match answer {
        Outcome::Delivered { .. } | Outcome::Skipped { .. } => Ok(()),
        Outcome::Retry { error, .. } | Outcome::Failed { error, .. } => Err(error),
    }
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

/// How old an event Meta takes: "event_time ... can be up to 7 days before you send an
/// event to Meta. If any event_time in data is greater than 7 days in the past, we return
/// an error for the entire request"
/// (<https://developers.facebook.com/docs/marketing-api/conversions-api/parameters/server-event#event-time>).
fn max_event_age() -> chrono::Duration {
    chrono::Duration::days(7)
}

/// Sends `job` to Meta.
pub(crate) async fn deliver(
    http: &reqwest::Client,
    settings: &MetaSettings,
    job: &ClaimedJob,
    now: DateTime<Utc>,
) -> Outcome {
    let Some(event_name) = job.mapping().meta_event.as_deref() else {
        return Outcome::skipped("the conversion is not mapped to a Meta event");
    };
    if now - job.job.converted_at > max_event_age() {
        return Outcome::skipped(
            "The conversion was first rated more than 7 days ago, and Meta refuses events \
             older than that",
        );
    }
    let body = payload(job, event_name, settings);
    match post(http, settings, &body).await {
        Ok(answer) => classify(&answer, &[settings.access_token.expose()]),
        Err(failure) => failure,
    }
}

/// Posts `body` to the pixel's events endpoint, with the settings' token.
pub(crate) async fn post(
    http: &reqwest::Client,
    settings: &MetaSettings,
    body: &Value,
) -> Result<Answer, Outcome> {
    let path = format!(
        "/{}/{}/events",
        settings.api_version.trim_matches('/'),
        settings.pixel_id
    );
    let url = outcome::endpoint(settings.base_url.as_deref(), DEFAULT_BASE_URL, &path);
    let request = http
        .post(url)
        .query(&[("access_token", settings.access_token.expose())])
        .json(body);
    outcome::send(request).await
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
