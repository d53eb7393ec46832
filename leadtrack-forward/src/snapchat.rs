//! A conversion delivered to Snapchat's Conversions API v3 (the request and answer rules
//! are `leadtrack_platforms::snapchat`'s): the label's event, the first rating's time, the
//! conversion's id as `event_id`, the person's identifiers and the value.

use chrono::{DateTime, Utc};
use leadtrack_core::integration::SnapchatSettings;
use leadtrack_core::job::ClaimedJob;
use leadtrack_core::types::IntegrationKind;
use serde_json::{Map, Value, json};

use crate::user_data;
use leadtrack_outbound::Outbound;
use leadtrack_platforms::normalize::Rules;
use leadtrack_platforms::outcome::Outcome;
use leadtrack_platforms::snapchat::{classify, max_event_age, post};

/// Where a rated lead converts, as Snapchat's `action_source`: offline, in the team's hands.
const ACTION_SOURCE: &str = "OFFLINE";

/// The event of `job`, named `event_name`. Email and phone (digits with the country code)
/// are hashed, each in a list; the click id (`ScCid`), the `_scid` cookie, IP and user
/// agent go as they are.
pub(crate) fn event(job: &ClaimedJob, event_name: &str) -> Value {
    let lead = &job.lead.data;
    let [email, phone] = user_data::contact_hashes(job, (Rules::Plain, Rules::Meta));
    let device = &lead.device_data;
    let user_data = user_data::object(
        [("em", email), ("ph", phone)],
        true,
        [
            ("sc_click_id", lead.attribution("ScCid")),
            ("sc_cookie1", lead.attribution("_scid")),
            ("client_ip_address", device.ip_address.as_deref()),
            ("client_user_agent", device.user_agent.as_deref()),
        ],
    );
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
