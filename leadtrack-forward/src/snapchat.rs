//! A conversion delivered to Snapchat's Conversions API v3 (the request and answer rules
//! are `leadtrack_platforms::snapchat`'s): the label's event, the first rating's time, the
//! conversion's id as `event_id`, the person's identifiers and the value.

use chrono::{DateTime, Utc};
use leadtrack_core::integration::SnapchatSettings;
use leadtrack_core::job::ClaimedJob;
use leadtrack_core::types::IntegrationKind;
use serde_json::{Map, Value, json};

use leadtrack_outbound::Outbound;
use leadtrack_platforms::normalize::{self, Rules};
use leadtrack_platforms::outcome::Outcome;
use leadtrack_platforms::snapchat::{classify, max_event_age, post};

/// Where a rated lead converts, as Snapchat's `action_source`: offline, in the team's hands.
const ACTION_SOURCE: &str = "OFFLINE";

/// The event of `job`, named `event_name`. Email and phone (digits with the country code)
/// are hashed, each in a list; the click id (`ScCid`), the `_scid` cookie, IP and user
/// agent go as they are.
pub(crate) fn event(job: &ClaimedJob, event_name: &str) -> Value {
    let lead = &job.lead.data;
    let region = job.project.region.as_deref();
    let device = &lead.device_data;
    let hashed = [
        (
            "em",
            lead.user("email")
                .and_then(|v| normalize::hashed_email(v, Rules::Plain)),
        ),
        (
            "ph",
            lead.user("phone")
                .and_then(|v| normalize::hashed_phone(v, region, Rules::Meta)),
        ),
    ];
    let plain = [
        ("sc_click_id", lead.attribution("ScCid").map(str::to_owned)),
        ("sc_cookie1", lead.attribution("_scid").map(str::to_owned)),
        ("client_ip_address", device.ip_address.clone()),
        ("client_user_agent", device.user_agent.clone()),
    ];
    let user_data: Map<String, Value> = hashed
        .into_iter()
        .map(|(key, value)| (key, value.map(|hash| json!([hash]))))
        .chain(plain.map(|(key, value)| (key, value.map(Value::from))))
        .filter_map(|(key, value)| Some((key.to_owned(), value?)))
        .collect();
    let mut custom_data = Map::new();
    if let Some(cents) = job.job.price {
        custom_data.insert("value".into(), json!(cents as f64 / 100.0));
        custom_data.insert("currency".into(), json!(job.project.currency));
    }
    json!({
        "event_name": event_name,
        "event_time": job.job.converted_at.timestamp_millis(),
        "action_source": ACTION_SOURCE,
        "event_id": job.job.conversion_event_id.to_string(),
        "user_data": user_data,
        "custom_data": custom_data,
    })
}

/// The event `job` sends to Snapchat, or why it sends none.
pub(crate) fn prepare(job: &ClaimedJob, now: DateTime<Utc>) -> Result<Value, Outcome> {
    let Some(event_name) = job.mapping().snapchat_event.as_deref() else {
        return Err(Outcome::skipped(
            "the conversion is not mapped to a Snapchat event",
        ));
    };
    if let Some(skip) =
        leadtrack_core::rules::skip_reason(IntegrationKind::Snapchat, &job.lead, now)
    {
        return Err(Outcome::skipped(skip.reason));
    }
    if now - job.job.converted_at > max_event_age() {
        return Err(Outcome::skipped(
            "The conversion was first rated more than 37 days ago, and Snapchat reports \
             events of the last 37 days",
        ));
    }
    Ok(event(job, event_name))
}

/// Sends `events` in one request.
pub(crate) async fn send(
    http: &Outbound,
    settings: &SnapchatSettings,
    events: Vec<Value>,
) -> Outcome {
    match post(http, settings, events, false).await {
        Ok(answer) => classify(&answer, settings),
        Err(failure) => failure,
    }
}
