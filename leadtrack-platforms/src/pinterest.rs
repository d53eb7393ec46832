//! Pinterest, through the API for Conversions (v5).
//!
//! `POST {base}/v5/ad_accounts/{ad_account_id}/events` with the conversion access token as
//! a Bearer token (and `?test=true` in test mode: "The events will not be recorded but the
//! API will still return the same response messages"), the events in `data`. Each event
//! has its `event_name` (one of Pinterest's, [`leadtrack_core::label::PINTEREST_EVENTS`]),
//! `action_source`, `event_time` in Unix seconds, the `event_id` Pinterest deduplicates
//! by, the person's identifiers in `user_data` (email, phone and external id SHA-256
//! hashed, in lists; the click id `epik` as `click_id`, IP and user agent as they are) and
//! in `custom_data` the value, a decimal string, and its currency
//! (<https://developers.pinterest.com/docs/api/v5/events-create>).
//!
//! Pinterest answers `200` with a status per event; an event it refused says `failed` with
//! its `error_message`, which is a permanent failure. `429` (5,000 calls a minute per ad
//! account) and `5xx` are retried.
//!
//! This module holds the request and how its answer reads; a job's delivery is
//! `leadtrack-forward`'s.

use leadtrack_core::integration::PinterestSettings;
use leadtrack_core::oauth::{OAuthApp, OAuthGrant, Provider};
use leadtrack_outbound::Outbound;
use serde::Deserialize;
use serde_json::Value;

use crate::api::{self, AdAccount};
use crate::oauth::{self, TokenCache};
use crate::outcome::{self, Answer, Outcome};

/// Where events go unless the settings say otherwise.
pub const DEFAULT_BASE_URL: &str = "https://api.pinterest.com";

/// The most events one request carries in `data`: 1,000
/// (<https://developers.pinterest.com/docs/api/v5/events-create>).
pub const BATCH_SIZE: usize = 1_000;

/// Posts `events` to the ad account's events, with the settings' token (or, signed in, one
/// renewed from the sign-in's refresh token), in test mode when the settings (or `test`)
/// say so.
pub async fn post(
    (http, tokens): (&Outbound, &TokenCache),
    settings: &PinterestSettings,
    events: Vec<Value>,
    test: bool,
) -> Result<Answer, Outcome> {
    let path = format!("/v5/ad_accounts/{}/events", settings.ad_account_id);
    let url = outcome::endpoint(settings.base_url.as_deref(), DEFAULT_BASE_URL, &path);
    let body = serde_json::json!({ "data": events });
    let signed_in = (Provider::Pinterest, settings.signed_in.as_ref());
    oauth::send_with_token(http, tokens, signed_in, &settings.access_token, |token| {
        let request = http.post(&url)?.bearer_auth(token);
        let request = match test || settings.test {
            true => request.query(&[("test", "true")]),
            false => request,
        };
        Ok(request.json(&body))
    })
    .await
}

/// The ad accounts the grant reaches, owned and shared: `GET /v5/ad_accounts`, a page of
/// `items` and the `bookmark` of the next
/// (<https://developers.pinterest.com/docs/api/v5/ad_accounts-list>).
pub async fn ad_accounts(
    http: &Outbound,
    app: &OAuthApp,
    grant: &OAuthGrant,
) -> Result<Vec<AdAccount>, String> {
    /// Pages read at most: 2,500 accounts.
    const PAGES: usize = 10;
    let url = format!("{}/v5/ad_accounts", app.endpoints.api);
    let mut accounts = Vec::new();
    let mut bookmark: Option<String> = None;
    for _ in 0..PAGES {
        let mut query = vec![("page_size", "250".to_owned())];
        query.extend(bookmark.take().map(|at| ("bookmark", at)));
        let page = api::with_grant(
            http,
            (app, grant),
            "Pinterest",
            |token| Ok(http.get(&url)?.bearer_auth(token).query(&query)),
            &[],
        )
        .await?;
        accounts.extend(AdAccount::all_in(&page["items"]));
        match page["bookmark"].as_str().filter(|at| !at.is_empty()) {
            Some(next) => bookmark = Some(next.to_owned()),
            None => break,
        }
    }
    Ok(accounts)
}

/// The part of Pinterest's answer that says what became of each event.
#[derive(Deserialize)]
struct Received {
    #[serde(default)]
    events: Vec<EventStatus>,
}

#[derive(Deserialize)]
struct EventStatus {
    status: String,
    #[serde(default)]
    error_message: Option<String>,
}

/// Reads Pinterest's answer to one event: refused, it fails in Pinterest's words;
/// otherwise by its status, without the token.
pub fn classify(answer: &Answer, settings: &PinterestSettings) -> Outcome {
    let mut each = classify_each(answer, settings, 1);
    each.pop().unwrap_or_else(|| answer.by_status(String::new))
}

/// Reads Pinterest's answer to `count` events: when it lists a status per event, each its
/// own (a refused event fails in Pinterest's words, the others are delivered); otherwise
/// the request's status for all, without the token.
pub fn classify_each(answer: &Answer, settings: &PinterestSettings, count: usize) -> Vec<Outcome> {
    let secrets = [settings.access_token.expose()];
    let by_status = answer.by_status(|| {
        outcome::scrub(
            format!("HTTP {}: {}", answer.status, answer.snippet()),
            &secrets,
        )
    });
    let listed = serde_json::from_slice::<Received>(&answer.body)
        .map(|received| received.events)
        .unwrap_or_default();
    if listed.len() != count {
        return vec![by_status; count];
    }
    listed
        .into_iter()
        .map(|event| match event.status.as_str() {
            "failed" => Outcome::Failed {
                status: Some(answer.status),
                error: outcome::scrub(
                    outcome::short(&format!(
                        "Pinterest refused the event: {}",
                        event.error_message.unwrap_or_default()
                    )),
                    &secrets,
                ),
            },
            _ => by_status.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use leadtrack_core::integration::Secret;

    fn settings() -> PinterestSettings {
        PinterestSettings {
            ad_account_id: "549755885175".into(),
            access_token: Secret::new("pin-secret"),
            signed_in: None,
            test: false,
            base_url: None,
        }
    }

    fn answer(status: u16, body: &str) -> Answer {
        Answer {
            status,
            retry_after: None,
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn a_refused_event_fails_in_pinterests_words_and_the_rest_reads_by_status() {
        let processed = r#"{"num_events_received":1,"num_events_processed":1,"events":[{"status":"processed","error_message":null,"warning_message":null}]}"#;
        assert_eq!(
            classify(&answer(200, processed), &settings()),
            Outcome::Delivered { status: 200 }
        );
        let failed = r#"{"num_events_received":1,"num_events_processed":0,"events":[{"status":"failed","error_message":"event_time is too old","warning_message":null}]}"#;
        assert_eq!(
            classify(&answer(422, failed), &settings()),
            Outcome::Failed {
                status: Some(422),
                error: "Pinterest refused the event: event_time is too old".into(),
            }
        );
        assert!(matches!(
            classify(&answer(429, "{}"), &settings()),
            Outcome::Retry { .. }
        ));
        assert!(matches!(
            classify(&answer(401, "bad token pin-secret"), &settings()),
            Outcome::Failed { error, .. } if !error.contains("pin-secret")
        ));
    }
}
