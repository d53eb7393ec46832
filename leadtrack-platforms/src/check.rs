//! One test event to a connected platform, sent by hand to check a connection, in each
//! platform's own test mode so that nothing counts as a conversion:
//!
//! - GA4: the validation endpoint, `/debug/mp/collect`, which records nothing
//!   (<https://developers.google.com/analytics/devguides/collection/protocol/ga4/validating-events>);
//! - Meta: an event with a `test_event_code`, shown in Events Manager's Test events tab
//!   only (<https://developers.facebook.com/docs/marketing-api/conversions-api/using-the-api#testEvents>);
//! - Google Ads: `events:ingest` with `validateOnly: true`, "validated but not executed"
//!   (<https://developers.google.com/data-manager/api/reference/rest/v1/events/ingest>);
//! - TikTok: an event with a `test_event_code`, shown in Events Manager's Test events tab
//!   only ([`crate::tiktok`]);
//! - Reddit: an event with a `test_id`, shown in Events Manager's Event Testing only
//!   ([`crate::reddit`]);
//! - Pinterest: an event sent with `test=true`, checked and not recorded
//!   ([`crate::pinterest`]);
//! - Snapchat: an event to its validation endpoint, checked and not recorded
//!   ([`crate::snapchat`]);
//! - Microsoft Advertising and LinkedIn, which have no test mode for conversions: no event,
//!   only a fresh access token from the refresh token, which shows the credentials work;
//! - the webhook: a signed `ping` event, which receivers acknowledge and ignore.

use chrono::Utc;
use leadtrack_core::integration::Integrations;
use leadtrack_core::project::Project;
use leadtrack_core::target::Targets;
use leadtrack_core::types::IntegrationKind;
use leadtrack_outbound::Outbound;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::google_ads;
use crate::normalize::sha256_hex;
use crate::oauth::{RefreshGrant, TokenCache};
use crate::outcome::{Answer, Outcome};
use crate::{ga4, linkedin, meta, microsoft_ads, pinterest, reddit, snapchat, tiktok, webhook};

/// The HTTP client for tests a person waits on, under the operator's `targets`: a short
/// time limit.
pub fn client(targets: Targets) -> Outbound {
    Outbound::new(targets, std::time::Duration::from_secs(10))
}

/// What to send.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TestRequest {
    /// The event name for GA4, Meta and TikTok (`qualify_lead`, `Lead`); a default when
    /// `None`.
    pub event: Option<String>,
    /// Meta's or TikTok's test event code, or Reddit's test id; the integration's own when
    /// `None`. Each needs one: without it the event would count.
    pub test_event_code: Option<String>,
    /// The Google Ads conversion action (id or resource name) to validate against.
    pub conversion_action: Option<String>,
}

/// What the platform made of the test event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestAnswer {
    /// Whether the platform accepted it.
    pub accepted: bool,
    /// The HTTP status, when the platform answered.
    pub status: Option<u16>,
    /// The platform's answer, shortened, without credentials.
    pub detail: String,
}

/// Why no test event was sent.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TestError {
    /// The integration is not connected.
    #[error("{0} is not connected")]
    NotConnected(IntegrationKind),
    /// Something the test needs was not given.
    #[error("{0}")]
    Missing(&'static str),
}

/// Sends one test event to the project's `kind` integration and reports its answer.
pub async fn send_test(
    http: &Outbound,
    project: &Project,
    integrations: &Integrations,
    kind: IntegrationKind,
    request: &TestRequest,
) -> Result<TestAnswer, TestError> {
    let not_connected = || TestError::NotConnected(kind);
    let event_id = Uuid::new_v4().to_string();
    let now = Utc::now();
    let answer = match kind {
        IntegrationKind::Ga4 => {
            let settings = integrations.ga4.as_ref().ok_or_else(not_connected)?;
            let event = request.event.as_deref().unwrap_or("qualify_lead");
            let body = ga4::test_payload(event, &project.currency);
            return Ok(match ga4::validate(http, settings, &body).await {
                Ok(messages) if messages.is_empty() => TestAnswer {
                    accepted: true,
                    status: Some(200),
                    detail: "valid: the validation endpoint found no problem".to_owned(),
                },
                Ok(messages) => TestAnswer {
                    accepted: false,
                    status: Some(200),
                    detail: messages
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; "),
                },
                Err(failure) => unanswered(failure),
            });
        }
        IntegrationKind::Meta => {
            let settings = integrations.meta.as_ref().ok_or_else(not_connected)?;
            let code = request
                .test_event_code
                .as_deref()
                .or(settings.test_event_code.as_deref())
                .ok_or(TestError::Missing(
                    "Meta needs a test event code (Events Manager, Test events tab), or the event would count",
                ))?;
            let body = json!({
                "data": [{
                    "event_name": request.event.as_deref().unwrap_or("Lead"),
                    "event_time": now.timestamp(),
                    "action_source": settings.action_source,
                    "event_id": event_id,
                    "user_data": {"em": [sha256_hex("test@leadtrack.invalid")]},
                    "custom_data": {"value": 0.0, "currency": project.currency},
                }],
                "test_event_code": code,
            });
            let secrets = [settings.access_token.expose()];
            meta::post(http, settings, &body)
                .await
                .map(|answer| described(&answer, |a| meta::classify(a, &secrets)))
        }
        IntegrationKind::GoogleAds => {
            let settings = integrations.google_ads.as_ref().ok_or_else(not_connected)?;
            let action = request
                .conversion_action
                .as_deref()
                .ok_or(TestError::Missing(
                    "name the Google Ads conversion action to validate against",
                ))?;
            let mut body = google_ads::test_payload(settings, action, &project.currency);
            body["validateOnly"] = json!(true);
            validate_ingest(http, settings, &body).await
        }
        IntegrationKind::MicrosoftAds => {
            let settings = integrations
                .microsoft_ads
                .as_ref()
                .ok_or_else(not_connected)?;
            return Ok(token_check(http, &microsoft_ads::grant(settings)).await);
        }
        IntegrationKind::Linkedin => {
            let settings = integrations.linkedin.as_ref().ok_or_else(not_connected)?;
            return Ok(token_check(http, &linkedin::grant(settings)).await);
        }
        IntegrationKind::Tiktok => {
            let settings = integrations.tiktok.as_ref().ok_or_else(not_connected)?;
            let code = request
                .test_event_code
                .as_deref()
                .or(settings.test_event_code.as_deref())
                .ok_or(TestError::Missing(
                    "TikTok needs a test event code (Events Manager, Test events tab), or the event would count",
                ))?;
            let settings = leadtrack_core::integration::TiktokSettings {
                test_event_code: Some(code.to_owned()),
                ..settings.clone()
            };
            let event = json!({
                "event": request.event.as_deref().unwrap_or("Lead"),
                "event_time": now.timestamp(),
                "event_id": event_id,
                "user": {"email": sha256_hex("test@leadtrack.invalid")},
                "properties": {"value": 0.0, "currency": project.currency},
            });
            let body = tiktok::body(&settings, vec![event]);
            tiktok::post(http, &settings, &body)
                .await
                .map(|answer| described(&answer, |a| tiktok::classify(a, &settings)))
        }
        IntegrationKind::Reddit => {
            let settings = integrations.reddit.as_ref().ok_or_else(not_connected)?;
            let test_id = request
                .test_event_code
                .as_deref()
                .or(settings.test_id.as_deref())
                .ok_or(TestError::Missing(
                    "Reddit needs a test id (Events Manager, Event Testing), or the event would count",
                ))?;
            let settings = leadtrack_core::integration::RedditSettings {
                test_id: Some(test_id.to_owned()),
                ..settings.clone()
            };
            let event = json!({
                "event_at": now.timestamp_millis(),
                "action_source": "OTHER",
                "type": reddit::event_type(request.event.as_deref().unwrap_or("Lead")),
                "user": {"email": sha256_hex("test@leadtrack.invalid")},
                "metadata": {"conversion_id": event_id, "value": 0.0, "currency": project.currency},
            });
            let body = reddit::body(&settings, vec![event]);
            reddit::post((http, &TokenCache::default()), &settings, &body)
                .await
                .map(|answer| described(&answer, |a| reddit::classify(a, &settings)))
        }
        IntegrationKind::Pinterest => {
            let settings = integrations.pinterest.as_ref().ok_or_else(not_connected)?;
            let event = json!({
                "event_name": request.event.as_deref().unwrap_or("lead"),
                "action_source": "offline",
                "event_time": now.timestamp(),
                "event_id": event_id,
                "user_data": {"em": [sha256_hex("test@leadtrack.invalid")]},
                "custom_data": {"value": "0.00", "currency": project.currency},
            });
            pinterest::post((http, &TokenCache::default()), settings, vec![event], true)
                .await
                .map(|answer| described(&answer, |a| pinterest::classify(a, settings)))
        }
        IntegrationKind::Snapchat => {
            let settings = integrations.snapchat.as_ref().ok_or_else(not_connected)?;
            let event = json!({
                "event_name": request.event.as_deref().unwrap_or("SIGN_UP"),
                "event_time": now.timestamp_millis(),
                "action_source": "OFFLINE",
                "event_id": event_id,
                "user_data": {"em": [sha256_hex("test@leadtrack.invalid")]},
                "custom_data": {"value": 0.0, "currency": project.currency},
            });
            snapchat::post(http, settings, vec![event], true)
                .await
                .map(|answer| described(&answer, |a| snapchat::classify(a, settings)))
        }
        IntegrationKind::Webhook => {
            let settings = integrations.webhook.as_ref().ok_or_else(not_connected)?;
            let ping = json!({
                "type": "ping",
                "id": event_id,
                "occurredAt": leadtrack_core::time::format(&now),
                "projectId": project.public_id,
            });
            let secret = &settings.secret;
            let post = webhook::Post {
                url: &settings.url,
                secret,
                event_id: &event_id,
                body: ping.to_string(),
            };
            webhook::post(http, post, now)
                .await
                .map(|answer| described(&answer, |a| a.by_status(|| webhook::error_of(a, secret))))
        }
    };
    Ok(answer.unwrap_or_else(unanswered))
}

/// Google Ads' answer to `body`, with a token of its own (a test is not a delivery and
/// shares no cache with the worker).
async fn validate_ingest(
    http: &Outbound,
    settings: &leadtrack_core::integration::GoogleAdsSettings,
    body: &Value,
) -> Result<TestAnswer, Outcome> {
    let answer = google_ads::ingest(http, &TokenCache::default(), settings, body).await?;
    Ok(described(&answer, |a| {
        a.by_status(|| google_ads::error_of(a, settings))
    }))
}

/// Whether the grant's credentials get an access token.
async fn token_check(http: &Outbound, grant: &RefreshGrant<'_>) -> TestAnswer {
    match TokenCache::default().token(http, grant).await {
        Ok(_) => TestAnswer {
            accepted: true,
            status: Some(200),
            detail: "the credentials got an access token (the platform has no test mode for conversions, so no event was sent)".to_owned(),
        },
        Err(failure) => unanswered(failure),
    }
}

/// The answer as `classify` reads it, with the platform's body.
fn described(answer: &Answer, classify: impl FnOnce(&Answer) -> Outcome) -> TestAnswer {
    match classify(answer) {
        Outcome::Delivered { status } => TestAnswer {
            accepted: true,
            status: Some(status),
            detail: answer.snippet(),
        },
        Outcome::Retry { status, error, .. } | Outcome::Failed { status, error } => TestAnswer {
            accepted: false,
            status,
            detail: error,
        },
        Outcome::Skipped { reason } => TestAnswer {
            accepted: false,
            status: Some(answer.status),
            detail: reason,
        },
    }
}

/// A request that got no usable answer (a connection error, a refused token).
fn unanswered(failure: Outcome) -> TestAnswer {
    match failure {
        Outcome::Retry { status, error, .. } | Outcome::Failed { status, error } => TestAnswer {
            accepted: false,
            status,
            detail: error,
        },
        other => TestAnswer {
            accepted: false,
            status: None,
            detail: format!("{other:?}"),
        },
    }
}
