//! Sending deliveries to their platforms: alone (GA4, webhooks, and Microsoft
//! Advertising's restatements and retractions), or batched: the events of many jobs to one
//! destination in one request, up to the platform's batch size (Google Ads' Data Manager
//! and Snapchat 2,000; Meta, TikTok, Reddit, Pinterest and Microsoft Advertising 1,000;
//! LinkedIn 5,000), paced to the platform's quota.
//!
//! GA4 stays alone: a Measurement Protocol request carries the events of one `client_id`,
//! and each conversion is a different person's.

use std::time::Duration;

use chrono::Utc;
use leadtrack_core::conversion;
use leadtrack_core::integration::{Integrations, Platform, Secret};
use leadtrack_core::job::{ClaimedJob, Delivery};
use leadtrack_core::target::Targets;
use leadtrack_core::types::{DeliveryAction, IntegrationKind};
use leadtrack_outbound::Outbound;
use leadtrack_platforms::Outcome;
use leadtrack_platforms::oauth::TokenCache;
use serde_json::Value;

use crate::answer::Answered;
use crate::quota::{Pacer, Quota};
use crate::{
    ga4, google_ads, linkedin, meta, microsoft_ads, pinterest, reddit, snapchat, tiktok, webhook,
};

/// Sends deliveries to their platforms: the HTTP client, the OAuth token cache, and the
/// pacing of each quota scope.
pub struct Deliverer {
    pub(crate) http: Outbound,
    tokens: TokenCache,
    pub(crate) pacer: Pacer,
}

impl Deliverer {
    /// A deliverer that calls the addresses `targets` allow, with requests that time out
    /// after `timeout`.
    pub fn new(targets: Targets, timeout: Duration) -> Self {
        Self {
            http: Outbound::new(targets, timeout),
            tokens: TokenCache::default(),
            pacer: Pacer::default(),
        }
    }

    /// Does `delivery` of `job` at its platform, with the settings the job was claimed
    /// with: sends the conversion (in a request of its own), or restates or retracts it.
    pub async fn deliver(
        &self,
        delivery: &Delivery,
        job: &ClaimedJob,
        now: chrono::DateTime<Utc>,
    ) -> Outcome {
        match self.plan(delivery, job, now) {
            Plan::Ended(outcome) => outcome,
            Plan::Alone => self.deliver_alone(delivery, job, now).await,
            Plan::Batched { destination, event } => {
                let kind = delivery.integration;
                match self
                    .send(kind, &job.integrations, &destination, &[event])
                    .await
                {
                    Answered::All(outcome) | Answered::Held(outcome) => outcome,
                    Answered::Each(mut outcomes) => {
                        outcomes.pop().unwrap_or_else(|| Outcome::Failed {
                            status: None,
                            error: format!("{kind} answered for no event"),
                        })
                    }
                }
            }
        }
    }

    /// How `delivery` of `job` goes out: alone, in a batch to its destination, or not at
    /// all (a skip, or a platform no longer connected).
    pub(crate) fn plan(
        &self,
        delivery: &Delivery,
        job: &ClaimedJob,
        now: chrono::DateTime<Utc>,
    ) -> Plan {
        let (kind, action) = (delivery.integration, delivery.action);
        let able = match action {
            DeliveryAction::Send => true,
            DeliveryAction::Restate => conversion::can_restate(kind),
            DeliveryAction::Retract => conversion::can_retract(kind),
        };
        if !able {
            // Planned deliveries never ask this; a row from elsewhere might.
            return Plan::Ended(Outcome::skipped(format!(
                "{kind} cannot {action} a conversion"
            )));
        }
        let integrations = &job.integrations;
        if goes_alone(delivery) {
            return Plan::Alone;
        }
        if !integrations.is_connected(kind) {
            return Plan::Ended(disconnected(kind));
        }
        // The platforms with one destination: the pixel, event set or ad account.
        let one = |event| (String::new(), event);
        let prepared = match kind {
            // A restatement is the same event again, with the same transaction id.
            IntegrationKind::GoogleAds => google_ads::prepare(job),
            IntegrationKind::Meta => integrations
                .meta
                .as_ref()
                .map_or_else(|| Err(disconnected(kind)), |s| meta::prepare(s, job, now))
                .map(one),
            IntegrationKind::MicrosoftAds => microsoft_ads::prepare(job).map(one),
            IntegrationKind::Linkedin => linkedin::prepare(job).map(one),
            IntegrationKind::Tiktok => tiktok::prepare(job, now).map(one),
            IntegrationKind::Reddit => reddit::prepare(job, now).map(one),
            IntegrationKind::Pinterest => pinterest::prepare(job, now).map(one),
            IntegrationKind::Snapchat => snapchat::prepare(job, now).map(one),
            IntegrationKind::Ga4 | IntegrationKind::Webhook => return Plan::Alone,
        };
        match prepared {
            Ok((destination, event)) => Plan::Batched { destination, event },
            Err(skip) => Plan::Ended(skip),
        }
    }

    /// Sends a delivery that goes alone.
    async fn deliver_alone(
        &self,
        delivery: &Delivery,
        job: &ClaimedJob,
        now: chrono::DateTime<Utc>,
    ) -> Outcome {
        let (kind, action) = (delivery.integration, delivery.action);
        let integrations = &job.integrations;
        let gone = || disconnected(kind);
        match kind {
            IntegrationKind::Ga4 => match &integrations.ga4 {
                Some(settings) => ga4::deliver(&self.http, settings, job, now).await,
                None => gone(),
            },
            IntegrationKind::MicrosoftAds => match &integrations.microsoft_ads {
                Some(settings) => {
                    let account = (&self.http, &self.tokens, settings);
                    microsoft_ads::deliver(account, job, action, now).await
                }
                None => gone(),
            },
            IntegrationKind::Webhook => match &integrations.webhook {
                Some(settings) => webhook::deliver(&self.http, settings, job, action, now).await,
                None => gone(),
            },
            _ => Outcome::Failed {
                status: None,
                error: format!("{kind}'s deliveries go in batches"),
            },
        }
    }

    /// Sends `events` to `destination` of the project's `kind` integration in one request,
    /// within the integration's quota.
    pub(crate) async fn send(
        &self,
        kind: IntegrationKind,
        integrations: &Integrations,
        destination: &str,
        events: &[Value],
    ) -> Answered {
        let scope = quota_scope(kind, integrations);
        if let Err(wait) = self.pacer.acquire(&scope.0, scope.1).await {
            let title = Platform::of(kind).title;
            return Answered::Held(Outcome::Retry {
                status: None,
                error: format!(
                    "{title} asked to slow down, or its request quota is spent: not sent; \
                     the next request may go in {} s",
                    wait.as_secs()
                ),
                retry_after: Some(wait),
            });
        }
        let answered = self.post(kind, integrations, destination, events).await;
        // A 429 that says how long to wait holds the scope back that long; without one,
        // each delivery's own backoff spaces the tries.
        let throttled = |outcome: &Outcome| match outcome {
            Outcome::Retry {
                status: Some(429),
                retry_after,
                ..
            } => *retry_after,
            _ => None,
        };
        let wait = match &answered {
            Answered::All(outcome) | Answered::Held(outcome) => throttled(outcome),
            Answered::Each(outcomes) => outcomes.iter().find_map(throttled),
        };
        if let Some(wait) = wait {
            self.pacer.hold(&scope.0, wait);
        }
        answered
    }

    /// Posts `events` to the platform; `Each` when it answered per event.
    async fn post(
        &self,
        kind: IntegrationKind,
        integrations: &Integrations,
        destination: &str,
        events: &[Value],
    ) -> Answered {
        use Answered::All;
        let (http, tokens, events) = (&self.http, &self.tokens, events.to_vec());
        let gone = || All(disconnected(kind));
        let i = integrations;
        match kind {
            IntegrationKind::GoogleAds => match &i.google_ads {
                Some(s) => All(google_ads::send((http, tokens), s, destination, events).await),
                None => gone(),
            },
            IntegrationKind::Meta => match &i.meta {
                Some(s) => All(meta::send(http, s, events).await),
                None => gone(),
            },
            IntegrationKind::MicrosoftAds => match &i.microsoft_ads {
                Some(s) => microsoft_ads::send((http, tokens, s), events).await,
                None => gone(),
            },
            IntegrationKind::Linkedin => match &i.linkedin {
                Some(s) => linkedin::send((http, tokens), s, events).await,
                None => gone(),
            },
            IntegrationKind::Tiktok => match &i.tiktok {
                Some(s) => All(tiktok::send(http, s, events).await),
                None => gone(),
            },
            IntegrationKind::Reddit => match &i.reddit {
                Some(s) => All(reddit::send((http, tokens), s, events).await),
                None => gone(),
            },
            IntegrationKind::Pinterest => match &i.pinterest {
                Some(s) => pinterest::send((http, tokens), s, events).await,
                None => gone(),
            },
            IntegrationKind::Snapchat => match &i.snapchat {
                Some(s) => All(snapchat::send(http, s, events).await),
                None => gone(),
            },
            IntegrationKind::Ga4 | IntegrationKind::Webhook => All(Outcome::Failed {
                status: None,
                error: format!("{kind} takes one event a request"),
            }),
        }
    }

    /// The refresh token `kind`'s platform issued in place of the one in `integrations`,
    /// if it did since this was last asked: `(old, new)`, for the store to keep.
    pub fn rotated_refresh_token(
        &self,
        kind: IntegrationKind,
        integrations: &Integrations,
    ) -> Option<(Secret, Secret)> {
        let old = integrations.refresh_token(kind)?;
        let new = self.tokens.take_rotated(old.expose())?;
        Some((old.clone(), Secret::new(new)))
    }
}

/// How a due delivery goes out.
pub(crate) enum Plan {
    /// In a request of its own.
    Alone,
    /// With the other events to the same destination of the project's integration: Google
    /// Ads' conversion action, or empty for a platform with one destination (the pixel,
    /// event set or ad account).
    Batched {
        /// Where it goes within the integration.
        destination: String,
        /// Its event.
        event: Value,
    },
    /// Not at all: how it ended.
    Ended(Outcome),
}

/// The most events one request to `kind` carries.
pub(crate) fn batch_size(kind: IntegrationKind) -> usize {
    match kind {
        IntegrationKind::GoogleAds => leadtrack_platforms::google_ads::BATCH_SIZE,
        IntegrationKind::Meta => leadtrack_platforms::meta::BATCH_SIZE,
        IntegrationKind::Tiktok => leadtrack_platforms::tiktok::BATCH_SIZE,
        IntegrationKind::Reddit => leadtrack_platforms::reddit::BATCH_SIZE,
        IntegrationKind::Pinterest => leadtrack_platforms::pinterest::BATCH_SIZE,
        IntegrationKind::Snapchat => leadtrack_platforms::snapchat::BATCH_SIZE,
        IntegrationKind::Linkedin => leadtrack_platforms::linkedin::BATCH_SIZE,
        IntegrationKind::MicrosoftAds => leadtrack_platforms::microsoft_ads::BATCH_SIZE,
        IntegrationKind::Ga4 | IntegrationKind::Webhook => 1,
    }
}

/// Whether a batch `kind` refused with `outcome` may have been refused for what one of its
/// events holds, so that halving it finds the bad events: a `400` (Meta, the Data Manager
/// API, Reddit, Snapchat and the others refuse a request whole for one invalid event), or
/// any permanent code of TikTok, which answers a request with one code and HTTP `200`.
pub(crate) fn refused_for_an_event(kind: IntegrationKind, outcome: &Outcome) -> bool {
    match outcome {
        Outcome::Failed { status, .. } => {
            *status == Some(400) || (kind == IntegrationKind::Tiktok && *status == Some(200))
        }
        _ => false,
    }
}

/// Whether `delivery` goes in a request of its own: to GA4 or a webhook, or a Microsoft
/// Advertising restatement or retraction (adjustments, one conversion's at a time).
pub(crate) fn goes_alone(delivery: &Delivery) -> bool {
    match delivery.integration {
        IntegrationKind::MicrosoftAds => delivery.action != DeliveryAction::Send,
        kind => batch_size(kind) == 1,
    }
}

/// The quota scope `kind`'s requests count against, and its published quota: the Data
/// Manager API's is the Google Cloud project of the server's Google app (its OAuth client),
/// shared by every project, 300 requests a minute and 100,000 a day. The other platforms
/// publish no request quota that binds before their own `429` (LinkedIn's are per app and
/// unpublished; Pinterest's 5,000 calls a minute per ad account are 5 million events), so
/// their scope (the app, or the pixel, event set or ad account) is only held back by a
/// `429` for its `Retry-After`.
fn quota_scope(kind: IntegrationKind, integrations: &Integrations) -> (String, Option<Quota>) {
    let i = integrations;
    let id = match kind {
        IntegrationKind::GoogleAds => i.google_ads.as_ref().map(|s| s.client_id.as_str()),
        IntegrationKind::Meta => i.meta.as_ref().map(|s| s.pixel_id.as_str()),
        IntegrationKind::MicrosoftAds => i.microsoft_ads.as_ref().map(|s| s.account_id.as_str()),
        IntegrationKind::Linkedin => i.linkedin.as_ref().map(|s| s.client_id.as_str()),
        IntegrationKind::Tiktok => i.tiktok.as_ref().map(|s| s.event_set_id.as_str()),
        IntegrationKind::Reddit => i.reddit.as_ref().map(|s| s.pixel_id.as_str()),
        IntegrationKind::Pinterest => i.pinterest.as_ref().map(|s| s.ad_account_id.as_str()),
        IntegrationKind::Snapchat => i.snapchat.as_ref().map(|s| s.pixel_id.as_str()),
        IntegrationKind::Ga4 | IntegrationKind::Webhook => None,
    };
    let quota = (kind == IntegrationKind::GoogleAds).then(|| {
        let (per_minute, per_day) = leadtrack_platforms::google_ads::QUOTA;
        Quota {
            per_window: per_minute,
            window: Duration::from_secs(60),
            per_day,
        }
    });
    (format!("{kind}:{}", id.unwrap_or_default()), quota)
}

/// The skip of a delivery to an integration the project no longer has.
fn disconnected(kind: IntegrationKind) -> Outcome {
    Outcome::skipped(format!("{kind} is no longer connected"))
}
