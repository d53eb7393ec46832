//! Snapchat, through the Conversions API v3.
//!
//! `POST {base}/v3/{pixel_id}/events?access_token=...`, the events in `data`, each with its
//! `event_name`, `event_time` in epoch milliseconds, `action_source`, the `event_id`
//! Snapchat deduplicates by, the person's identifiers in `user_data` (email and phone
//! SHA-256 hashed, in lists; the click id `ScCid` as `sc_click_id` and the `_scid` cookie as
//! `sc_cookie1`, IP and user agent as they are) and the value in `custom_data`
//! (<https://developers.snap.com/api/marketing-api/Conversions-API/Parameters>). A test
//! goes to `/v3/{pixel_id}/events/validate`, which checks the events and records none
//! (<https://developers.snap.com/api/marketing-api/Conversions-API/VerifySetUp>).
//!
//! Snapchat answers `200` when it took the events; `400` (an invalid event) and `401` are
//! permanent, `429` and `5xx` are retried. The token travels in the query, so every
//! message is scrubbed of it.
//!
//! This module holds the request and how its answer reads; a job's delivery is
//! `leadtrack-forward`'s.

use chrono::Duration;
use leadtrack_core::integration::SnapchatSettings;
use leadtrack_outbound::Outbound;
use serde_json::{Value, json};

use crate::outcome::{self, Answer, Outcome};

/// Where events go unless the settings say otherwise.
pub const DEFAULT_BASE_URL: &str = "https://tr.snapchat.com";

/// The most events one request carries: 2,000, by the Conversions API's batch rules
/// (<https://developers.snap.com/api/marketing-api/Conversions-API/UsingTheAPI>).
pub const BATCH_SIZE: usize = 2_000;

/// How old an event Snapchat reports: "events can have a date (timestamp) of maximum 37
/// days back to be eligible to be reported via the Conversions API"
/// (<https://marketingapi.snapchat.com/docs/conversion.html>).
pub fn max_event_age() -> Duration {
    Duration::days(37)
}

/// Posts `events` to the pixel's events endpoint, or to its validation endpoint when
/// `validate`.
pub async fn post(
    http: &Outbound,
    settings: &SnapchatSettings,
    events: Vec<Value>,
    validate: bool,
) -> Result<Answer, Outcome> {
    let suffix = if validate { "/validate" } else { "" };
    let path = format!("/v3/{}/events{suffix}", settings.pixel_id);
    let url = outcome::endpoint(settings.base_url.as_deref(), DEFAULT_BASE_URL, &path);
    let body = json!({ "data": events });
    let request = http.post(&url).map(|request| {
        request
            .query(&[("access_token", settings.access_token.expose())])
            .json(&body)
    });
    outcome::send(request).await
}

/// Reads Snapchat's answer by its status, with its words and without the token.
pub fn classify(answer: &Answer, settings: &SnapchatSettings) -> Outcome {
    answer.by_status(|| {
        outcome::scrub(
            format!("HTTP {}: {}", answer.status, answer.snippet()),
            &[settings.access_token.expose()],
        )
    })
}
