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

use chrono::{DateTime, Utc};
use leadtrack_core::integration::{
    Ga4Settings, GoogleAdsSettings, Integrations, MetaSettings, PinterestSettings, RedditSettings,
    SnapchatSettings, TiktokSettings, WebhookSettings,
};
use leadtrack_core::project::Project;
use leadtrack_core::target::Targets;
use leadtrack_core::types::IntegrationKind;
use leadtrack_outbound::Outbound;
use serde_json::json;
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
    let probe = Probe {
        http,
        project,
        request,
        event_id: Uuid::new_v4().to_string(),
        now: Utc::now(),
    };
    let not_connected = || TestError::NotConnected(kind);
    Ok(match kind {
        IntegrationKind::Ga4 => {
            probe
                .ga4(integrations.ga4.as_ref().ok_or_else(not_connected)?)
                .await
        }
        IntegrationKind::Meta => {
            probe
                .meta(integrations.meta.as_ref().ok_or_else(not_connected)?)
                .await?
        }
        IntegrationKind::GoogleAds => {
            let settings = integrations.google_ads.as_ref().ok_or_else(not_connected)?;
            probe.google_ads(settings).await?
        }
        IntegrationKind::MicrosoftAds => {
            let settings = integrations
                .microsoft_ads
                .as_ref()
                .ok_or_else(not_connected)?;
            token_check(http, &microsoft_ads::grant(settings)).await
        }
        IntegrationKind::Linkedin => {
            let settings = integrations.linkedin.as_ref().ok_or_else(not_connected)?;
            token_check(http, &linkedin::grant(settings)).await
        }
        IntegrationKind::Tiktok => {
            probe
                .tiktok(integrations.tiktok.as_ref().ok_or_else(not_connected)?)
                .await?
        }
        IntegrationKind::Reddit => {
            probe
                .reddit(integrations.reddit.as_ref().ok_or_else(not_connected)?)
                .await?
        }
        IntegrationKind::Pinterest => {
            let settings = integrations.pinterest.as_ref().ok_or_else(not_connected)?;
            probe.pinterest(settings).await
        }
        IntegrationKind::Snapchat => {
            let settings = integrations.snapchat.as_ref().ok_or_else(not_connected)?;
            probe.snapchat(settings).await
        }
        IntegrationKind::Webhook => {
            let settings = integrations.webhook.as_ref().ok_or_else(not_connected)?;
            probe.webhook(settings).await
        }
    })
}

/// One test event being sent: what it is sent for, and its id and time.
struct Probe<'a> {
    /// The client it is sent with.
    http: &'a Outbound,
    /// The project it is sent for (its currency, its public id).
    project: &'a Project,
    /// What was asked for.
    request: &'a TestRequest,
    /// The event's id.
    event_id: String,
    /// When it is sent.
    now: DateTime<Utc>,
}

/// The test person's email, hashed as the platforms take it.
fn test_email() -> String {
    sha256_hex("test@leadtrack.invalid")
}

impl Probe<'_> {
    /// The event name asked for, else `default`.
    fn event<'b>(&'b self, default: &'b str) -> &'b str {
        self.request.event.as_deref().unwrap_or(default)
    }

    /// The test code asked for, else the integration's `own`; `missing` says why one is
    /// needed.
    fn test_code<'b>(
        &'b self,
        own: Option<&'b str>,
        missing: &'static str,
    ) -> Result<&'b str, TestError> {
        let given = self.request.test_event_code.as_deref();
        given.or(own).ok_or(TestError::Missing(missing))
    }

    /// GA4's validation endpoint's answer.
    async fn ga4(&self, settings: &Ga4Settings) -> TestAnswer {
        let body = ga4::test_payload(self.event("qualify_lead"), &self.project.currency);
        match ga4::validate(self.http, settings, &body).await {
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
        }
    }

    /// A Meta event with a test event code.
    async fn meta(&self, settings: &MetaSettings) -> Result<TestAnswer, TestError> {
        let code = self.test_code(
            settings.test_event_code.as_deref(),
            "Meta needs a test event code (Events Manager, Test events tab), or the event would count",
        )?;
        let body = json!({
            "data": [{
                "event_name": self.event("Lead"),
                "event_time": self.now.timestamp(),
                "action_source": settings.action_source,
                "event_id": self.event_id,
                "user_data": {"em": [test_email()]},
                "custom_data": {"value": 0.0, "currency": self.project.currency},
            }],
            "test_event_code": code,
        });
        let secrets = [settings.access_token.expose()];
        let answer = meta::post(self.http, settings, &body).await;
        Ok(answered(answer, |a| meta::classify(a, &secrets)))
    }

    /// Google Ads' `events:ingest`, validated only.
    async fn google_ads(&self, settings: &GoogleAdsSettings) -> Result<TestAnswer, TestError> {
        let action = self
            .request
            .conversion_action
            .as_deref()
            .ok_or(TestError::Missing(
                "name the Google Ads conversion action to validate against",
            ))?;
        let mut body = google_ads::test_payload(settings, action, &self.project.currency);
        body["validateOnly"] = json!(true);
        let answer = google_ads::ingest(self.http, &TokenCache::default(), settings, &body).await;
        Ok(answered(answer, |a| {
            a.by_status(|| google_ads::error_of(a, settings))
        }))
    }

    /// A TikTok event with a test event code.
    async fn tiktok(&self, settings: &TiktokSettings) -> Result<TestAnswer, TestError> {
        let code = self.test_code(
            settings.test_event_code.as_deref(),
            "TikTok needs a test event code (Events Manager, Test events tab), or the event would count",
        )?;
        let settings = TiktokSettings {
            test_event_code: Some(code.to_owned()),
            ..settings.clone()
        };
        let event = json!({
            "event": self.event("Lead"),
            "event_time": self.now.timestamp(),
            "event_id": self.event_id,
            "user": {"email": test_email()},
            "properties": {"value": 0.0, "currency": self.project.currency},
        });
        let body = tiktok::body(&settings, vec![event]);
        let answer = tiktok::post(self.http, &settings, &body).await;
        Ok(answered(answer, |a| tiktok::classify(a, &settings)))
    }

    /// A Reddit event with a test id.
    async fn reddit(&self, settings: &RedditSettings) -> Result<TestAnswer, TestError> {
        let test_id = self.test_code(
            settings.test_id.as_deref(),
            "Reddit needs a test id (Events Manager, Event Testing), or the event would count",
        )?;
        let settings = RedditSettings {
            test_id: Some(test_id.to_owned()),
            ..settings.clone()
        };
        let event = json!({
            "event_at": self.now.timestamp_millis(),
            "action_source": "OTHER",
            "type": reddit::event_type(self.event("Lead")),
            "user": {"email": test_email()},
            "metadata": {"conversion_id": self.event_id, "value": 0.0, "currency": self.project.currency},
        });
        let body = reddit::body(&settings, vec![event]);
        let answer = reddit::post((self.http, &TokenCache::default()), &settings, &body).await;
        Ok(answered(answer, |a| reddit::classify(a, &settings)))
    }

    /// A Pinterest event sent with `test=true`.
    async fn pinterest(&self, settings: &PinterestSettings) -> TestAnswer {
        let event = json!({
            "event_name": self.event("lead"),
            "action_source": "offline",
            "event_time": self.now.timestamp(),
            "event_id": self.event_id,
            "user_data": {"em": [test_email()]},
            "custom_data": {"value": "0.00", "currency": self.project.currency},
        });
        let cache = TokenCache::default();
        let answer = pinterest::post((self.http, &cache), settings, vec![event], true).await;
        answered(answer, |a| pinterest::classify(a, settings))
    }

    /// A Snapchat event to its validation endpoint.
    async fn snapchat(&self, settings: &SnapchatSettings) -> TestAnswer {
        let event = json!({
            "event_name": self.event("SIGN_UP"),
            "event_time": self.now.timestamp_millis(),
            "action_source": "OFFLINE",
            "event_id": self.event_id,
            "user_data": {"em": [test_email()]},
            "custom_data": {"value": 0.0, "currency": self.project.currency},
        });
        let answer = snapchat::post(self.http, settings, vec![event], true).await;
        answered(answer, |a| snapchat::classify(a, settings))
    }

    /// A signed `ping` to the webhook.
    async fn webhook(&self, settings: &WebhookSettings) -> TestAnswer {
        let ping = json!({
            "type": "ping",
            "id": self.event_id,
            "occurredAt": leadtrack_core::time::format(&self.now),
            "projectId": self.project.public_id,
        });
        let secret = &settings.secret;
        let post = webhook::Post {
            url: &settings.url,
            secret,
            event_id: &self.event_id,
            body: ping.to_string(),
        };
        let answer = webhook::post(self.http, post, self.now).await;
        answered(answer, |a| a.by_status(|| webhook::error_of(a, secret)))
    }
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

/// The platform's answer as `classify` reads it, or why there was none.
fn answered(
    answer: Result<Answer, Outcome>,
    classify: impl FnOnce(&Answer) -> Outcome,
) -> TestAnswer {
    match answer {
        Ok(answer) => described(&answer, classify),
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
