//! A conversion delivered to Reddit's Conversions API v3 (the request and answer rules are
//! `leadtrack_platforms::reddit`'s): the label's event, the first rating's time, the
//! conversion's id as `metadata.conversion_id`, the person's identifiers and the value.

use chrono::{DateTime, Utc};
use leadtrack_core::integration::RedditSettings;
use leadtrack_core::job::ClaimedJob;
use leadtrack_core::types::IntegrationKind;
use serde_json::{Value, json};

use crate::user_data;
use leadtrack_outbound::Outbound;
use leadtrack_platforms::normalize::{self, Rules};
use leadtrack_platforms::oauth::TokenCache;
use leadtrack_platforms::outcome::Outcome;
use leadtrack_platforms::reddit::{body, classify, event_type, max_event_age, post};

/// Where a rated lead converts, as Reddit's `action_source`: neither on the website nor in
/// an app, but where the team rates it (Reddit's "Other").
const ACTION_SOURCE: &str = "OTHER";

/// The event of `job`, named `event_name`. Email and phone are hashed by Reddit's rules,
/// the caller's own id as `external_id`; the click id (`rdt_cid`) and the `_rdt_uuid`
/// cookie go as they are, with the browser's IP and user agent.
pub(crate) fn event(job: &ClaimedJob, event_name: &str) -> Value {
    let lead = &job.lead.data;
    let [email, phone] = user_data::contact_hashes(job, (Rules::Reddit, Rules::Reddit));
    let external_id = lead
        .unique_identifier
        .as_deref()
        .map(|id| normalize::sha256_hex(id.trim()));
    let device = &lead.device_data;
    let user = user_data::object(
        [
            ("email", email),
            ("phone_number", phone),
            ("external_id", external_id),
        ],
        false,
        [
            ("uuid", lead.attribution("_rdt_uuid")),
            ("ip_address", device.ip_address.as_deref()),
            ("user_agent", device.user_agent.as_deref()),
        ],
    );
    let mut metadata = json!({"conversion_id": job.job.conversion_event_id.to_string()});
    if let Some(cents) = job.job.price {
        metadata["value"] = json!(cents as f64 / 100.0);
        metadata["currency"] = json!(job.project.currency);
    }
    let mut event = json!({
        "event_at": job.job.converted_at.timestamp_millis(),
        "action_source": ACTION_SOURCE,
        "type": event_type(event_name),
        "user": user,
        "metadata": metadata,
    });
    if let Some(click) = lead.attribution("rdt_cid") {
        event["click_id"] = json!(click);
    }
    event
}

/// The event `job` sends to Reddit, or why it sends none.
pub(crate) fn prepare(job: &ClaimedJob, now: DateTime<Utc>) -> Result<Value, Outcome> {
    let Some(event_name) = job.mapping().reddit_event.as_deref() else {
        return Err(Outcome::skipped(
            "the conversion is not mapped to a Reddit event",
        ));
    };
    if let Some(skip) = leadtrack_core::rules::skip_reason(IntegrationKind::Reddit, &job.lead, now)
    {
        return Err(Outcome::skipped(skip.reason));
    }
    if now - job.job.converted_at > max_event_age() {
        return Err(Outcome::skipped(
            "The conversion was first rated more than 7 days ago, and Reddit takes events \
             within 7 days of when they happened",
        ));
    }
    Ok(event(job, event_name))
}

/// Sends `events` in one request.
pub(crate) async fn send(
    http: (&Outbound, &TokenCache),
    settings: &RedditSettings,
    events: Vec<Value>,
) -> Outcome {
    let body = body(settings, events);
    match post(http, settings, &body).await {
        Ok(answer) => classify(&answer, settings),
        Err(failure) => failure,
    }
}
