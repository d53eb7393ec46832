//! A conversion delivered to Pinterest's API for Conversions (the request and answer rules
//! are `leadtrack_platforms::pinterest`'s): the label's event, the first rating's time, the
//! conversion's id as `event_id`, the person's identifiers and the value.

use leadtrack_core::integration::PinterestSettings;
use leadtrack_core::job::ClaimedJob;
use leadtrack_core::types::IntegrationKind;
use serde_json::{Map, Value, json};

use crate::answer::Answered;
use crate::user_data;
use leadtrack_outbound::Outbound;
use leadtrack_platforms::normalize::{self, Rules};
use leadtrack_platforms::oauth::TokenCache;
use leadtrack_platforms::outcome::Outcome;
use leadtrack_platforms::pinterest::{classify_each, post};

/// Where a rated lead converts, as Pinterest's `action_source`: where the team rates it.
const ACTION_SOURCE: &str = "offline";

/// The event of `job`, named `event_name`. Email, phone (digits with the country code) and
/// the caller's own id are hashed, each in a list; the click id (`epik`, or its `_epik`
/// cookie), IP and user agent go as they are.
pub(crate) fn event(job: &ClaimedJob, event_name: &str) -> Value {
    let lead = &job.lead.data;
    let [email, phone] = user_data::contact_hashes(job, (Rules::Plain, Rules::Meta));
    let external_id = lead
        .unique_identifier
        .as_deref()
        .map(|id| normalize::sha256_hex(id.trim()));
    let device = &lead.device_data;
    let user_data = user_data::object(
        [("em", email), ("ph", phone), ("external_id", external_id)],
        true,
        [
            ("click_id", lead.epik()),
            ("client_ip_address", device.ip_address.as_deref()),
            ("client_user_agent", device.user_agent.as_deref()),
        ],
    );
    let mut custom_data = Map::new();
    if let Some(cents) = job.job.price {
        custom_data.insert(
            "value".into(),
            json!(format!("{:.2}", cents as f64 / 100.0)),
        );
        custom_data.insert("currency".into(), json!(job.project.currency));
    }
    json!({
        "event_name": event_name,
        "action_source": ACTION_SOURCE,
        "event_time": job.job.converted_at.timestamp(),
        "event_id": job.job.conversion_event_id.to_string(),
        "user_data": user_data,
        "custom_data": custom_data,
    })
}

/// The event `job` sends to Pinterest, or why it sends none.
pub(crate) fn prepare(
    job: &ClaimedJob,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Value, Outcome> {
    let Some(event_name) = job.mapping().pinterest_event.as_deref() else {
        return Err(Outcome::skipped(
            "the conversion is not mapped to a Pinterest event",
        ));
    };
    if let Some(skip) =
        leadtrack_core::rules::skip_reason(IntegrationKind::Pinterest, &job.lead, now)
    {
        return Err(Outcome::skipped(skip.reason));
    }
    Ok(event(job, event_name))
}

/// Sends `events` in one request; Pinterest answers for each.
pub(crate) async fn send(
    http: (&Outbound, &TokenCache),
    settings: &PinterestSettings,
    events: Vec<Value>,
) -> Answered {
    let count = events.len();
    match post(http, settings, events, false).await {
        Ok(answer) => Answered::Each(classify_each(&answer, settings, count)),
        Err(failure) => Answered::All(failure),
    }
}
