//! Reddit, through the Conversions API v3.
//!
//! `POST {base}/api/v3/pixels/{pixel_id}/conversion_events` with the conversion access
//! token as a Bearer token, and the events wrapped in `data` (with the settings' `test_id`
//! beside them, which sends them to Event Testing instead). Each event has `event_at` in
//! epoch milliseconds, its `action_source`, its `type` (a standard `tracking_type`, or
//! `CUSTOM` with its `custom_event_name`), the click id, the person's identifiers in
//! `user`, and in `metadata` the value, its currency and the `conversion_id` Reddit
//! deduplicates by (<https://ads-api.reddit.com/docs/v3/capi-migration> and the
//! Conversions API's direct integration, <https://ads-api.reddit.com/docs/v3/>).
//!
//! Reddit answers `200` when it took the events; `400`, `401` and `403` (a bad event, a bad
//! token, a pixel the token may not post to) are permanent; `429` and `5xx` are retried.
//!
//! This module holds the request and how its answer reads; a job's delivery is
//! `leadtrack-forward`'s.

use chrono::Duration;
use leadtrack_core::integration::RedditSettings;
use leadtrack_core::label::REDDIT_STANDARD_EVENTS;
use leadtrack_core::oauth::{OAuthApp, OAuthGrant, Provider};
use leadtrack_outbound::Outbound;
use serde_json::{Value, json};

use crate::api::{self, AdAccount};
use crate::oauth::{self, TokenCache};
use crate::outcome::{self, Answer, Outcome};

/// Where events go unless the settings say otherwise.
pub const DEFAULT_BASE_URL: &str = "https://ads-api.reddit.com";

/// The most events one request carries: 1,000, by the Conversions API v3's reference
/// (<https://ads-api.reddit.com/docs/v3/>, `events`).
pub const BATCH_SIZE: usize = 1_000;

/// How old an event Reddit takes: "Events must be sent within 7 days after they occur".
pub fn max_event_age() -> Duration {
    Duration::days(7)
}

/// The event `type` of a label's event name: a standard event's `tracking_type`, else a
/// custom event of that name.
pub fn event_type(name: &str) -> Value {
    match REDDIT_STANDARD_EVENTS
        .iter()
        .find(|(standard, _)| *standard == name)
    {
        Some((_, tracking_type)) => json!({"tracking_type": tracking_type}),
        None => json!({"tracking_type": "CUSTOM", "custom_event_name": name}),
    }
}

/// The request's body: `events`, with the settings' test id.
pub fn body(settings: &RedditSettings, events: Vec<Value>) -> Value {
    let mut data = json!({"events": events});
    if let Some(test_id) = settings.test_id.as_deref() {
        data["test_id"] = json!(test_id);
    }
    json!({"data": data})
}

/// Posts `body` to the pixel's conversion events, with the settings' token (or, signed
/// in, one renewed from the sign-in's refresh token).
pub async fn post(
    (http, tokens): (&Outbound, &TokenCache),
    settings: &RedditSettings,
    body: &Value,
) -> Result<Answer, Outcome> {
    let path = format!("/api/v3/pixels/{}/conversion_events", settings.pixel_id);
    let url = outcome::endpoint(settings.base_url.as_deref(), DEFAULT_BASE_URL, &path);
    let signed_in = (Provider::Reddit, settings.signed_in.as_ref());
    oauth::send_with_token(http, tokens, signed_in, &settings.access_token, |token| {
        Ok(http.post(&url)?.bearer_auth(token).json(body))
    })
    .await
}

/// The ad accounts the grant reaches (an account's id is its pixel's, `a2_...`): the
/// businesses of `GET /api/v3/me/businesses`, then each one's
/// `GET /api/v3/businesses/{business_id}/ad_accounts` (<https://ads-api.reddit.com/docs/v3/>,
/// Businesses and Ad Accounts), each answer's list in `data`.
pub async fn ad_accounts(
    http: &Outbound,
    app: &OAuthApp,
    grant: &OAuthGrant,
) -> Result<Vec<AdAccount>, String> {
    let read = |path: String| {
        let url = format!("{}{path}", app.endpoints.api);
        api::with_grant(
            http,
            (app, grant),
            "Reddit",
            move |token| Ok(http.get(&url)?.bearer_auth(token)),
            &[],
        )
    };
    let businesses = read("/api/v3/me/businesses".to_owned()).await?;
    let mut accounts = Vec::new();
    for business in businesses["data"].as_array().into_iter().flatten() {
        let Some(id) = business["id"].as_str() else {
            continue;
        };
        let found = read(format!("/api/v3/businesses/{id}/ad_accounts")).await?;
        accounts.extend(AdAccount::all_in(&found["data"]));
    }
    Ok(accounts)
}

/// Reads Reddit's answer by its status, with its words and without the token.
pub fn classify(answer: &Answer, settings: &RedditSettings) -> Outcome {
    answer.by_status(|| {
        outcome::scrub(
            format!("HTTP {}: {}", answer.status, answer.snippet()),
            &[settings.access_token.expose()],
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use leadtrack_core::integration::Secret;

    #[test]
    fn standard_events_are_tracking_types_and_the_rest_custom() {
        assert_eq!(event_type("Lead"), json!({"tracking_type": "LEAD"}));
        assert_eq!(event_type("SignUp"), json!({"tracking_type": "SIGN_UP"}));
        assert_eq!(
            event_type("Qualified lead"),
            json!({"tracking_type": "CUSTOM", "custom_event_name": "Qualified lead"})
        );
    }

    #[test]
    fn the_test_id_goes_beside_the_events() {
        let settings = RedditSettings {
            pixel_id: "a2_pixel".into(),
            access_token: Secret::new("rd-token"),
            signed_in: None,
            test_id: Some("t2_test".into()),
            base_url: None,
        };
        assert_eq!(
            body(&settings, vec![json!({"event_at": 1})]),
            json!({"data": {"events": [{"event_at": 1}], "test_id": "t2_test"}})
        );
    }
}
