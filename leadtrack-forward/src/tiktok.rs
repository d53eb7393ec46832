//! A conversion delivered to TikTok's Events API as a CRM event (the request and answer
//! rules are `leadtrack_platforms::tiktok`'s): the label's event name, the first rating's
//! time, the conversion's id as `event_id`, the person's identifiers and the value.

use chrono::{DateTime, Utc};
use leadtrack_core::integration::TiktokSettings;
use leadtrack_core::job::ClaimedJob;
use serde_json::{Map, Value, json};

use crate::user_data;
use leadtrack_outbound::Outbound;
use leadtrack_platforms::normalize::{self, Rules};
use leadtrack_platforms::outcome::Outcome;
use leadtrack_platforms::tiktok::{body, classify, max_event_age, post};

/// The event of `job`, named `event_name`. Email and phone are hashed as TikTok asks
/// (trimmed and lowercased; E.164 with `+`), the caller's own id as `external_id`; the
/// click id and the `_ttp` cookie go as they are, with the browser's IP and user agent.
pub(crate) fn event(job: &ClaimedJob, event_name: &str) -> Value {
    let lead = &job.lead.data;
    let [email, phone] = user_data::contact_hashes(job, (Rules::Plain, Rules::Plain));
    let external_id = lead
        .unique_identifier
        .as_deref()
        .map(|id| normalize::sha256_hex(&id.trim().to_lowercase()));
    let device = &lead.device_data;
    let user = user_data::object(
        [
            ("email", email),
            ("phone", phone),
            ("external_id", external_id),
        ],
        false,
        [
            ("ttclid", lead.attribution("ttclid")),
            ("ttp", lead.attribution("_ttp")),
            ("ip", device.ip_address.as_deref()),
            ("user_agent", device.user_agent.as_deref()),
        ],
    );
    let mut properties = Map::new();
    if let Some(cents) = job.job.price {
        properties.insert("value".into(), json!(cents as f64 / 100.0));
        properties.insert("currency".into(), json!(job.project.currency));
    }
    json!({
        "event": event_name,
        "event_time": job.job.converted_at.timestamp(),
        "event_id": job.job.conversion_event_id.to_string(),
        "user": user,
        "properties": properties,
    })
}

/// The event `job` sends to TikTok, or why it sends none.
pub(crate) fn prepare(job: &ClaimedJob, now: DateTime<Utc>) -> Result<Value, Outcome> {
    let Some(event_name) = job.mapping().tiktok_event.as_deref() else {
        return Err(Outcome::skipped(
            "the conversion is not mapped to a TikTok event",
        ));
    };
    if let Some(skip) = leadtrack_core::rules::skip_reason(
        leadtrack_core::types::IntegrationKind::Tiktok,
        &job.lead,
        now,
    ) {
        return Err(Outcome::skipped(skip.reason));
    }
    if now - job.job.converted_at > max_event_age() {
        return Err(Outcome::skipped(
            "The conversion was first rated more than 28 days ago, and TikTok matches \
             offline and CRM events to ads for 28 days at most",
        ));
    }
    Ok(event(job, event_name))
}

/// Sends `events` in one request.
pub(crate) async fn send(
    http: &Outbound,
    settings: &TiktokSettings,
    events: Vec<Value>,
) -> Outcome {
    let body = body(settings, events);
    match post(http, settings, &body).await {
        Ok(answer) => classify(&answer, settings),
        Err(failure) => failure,
    }
}
