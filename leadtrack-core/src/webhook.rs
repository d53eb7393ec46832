//! Lead webhooks: a project's subscriptions to the events of its leads' lives.
//!
//! A project may have several webhooks, each with its own URL, signing secret and the
//! [`WebhookEvent`]s it hears of. When an event happens, the store queues it for every
//! webhook of the project that subscribes to it, in the same transaction as the change
//! itself, so an acknowledged change never loses its event. A queued event is a delivery
//! of one event id to one webhook: the store holds at most one per pair, and the worker
//! sends it with the same signature and retries as the conversion webhook.
//!
//! These are separate from the conversion webhook ([`crate::integration::WebhookSettings`]),
//! which is one of the platforms a rating is forwarded to, chosen per label.

use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use strum::VariantArray;
use uuid::Uuid;

use crate::crm::{CrmOptions, CrmRecord};
use crate::integration::{Secret, generate_webhook_secret};
use crate::job::Lease;
use crate::target::{Refusal, Targets};
use crate::types::{AttemptOutcome, LeadId, ProjectId};

/// The most webhooks one project may have, and apart from them the most REST hooks.
pub const MAX_WEBHOOKS: usize = 20;

/// The events a CRM sync hears: a lead's arrival and merges make its contact, its ratings
/// its deal.
pub const CRM_EVENTS: [WebhookEvent; 4] = [
    WebhookEvent::LeadCreated,
    WebhookEvent::LeadUpdated,
    WebhookEvent::LeadConverted,
    WebhookEvent::LeadLost,
];

/// What a webhook is: who added it, and how its events are delivered.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    strum::AsRefStr,
    strum::Display,
    strum::EnumString,
    strum::IntoStaticStr,
)]
#[strum(serialize_all = "snake_case")]
pub enum WebhookKind {
    /// Added in the dashboard or on the command line: each event a signed post.
    #[default]
    Webhook,
    /// Subscribed by an automation tool through the API (`POST /api/hooks`): signed posts
    /// of one event; removed when its target answers `410 Gone`.
    RestHook,
    /// A HubSpot sync ([`crate::crm`]): its URL is HubSpot's API, its secret the private
    /// app's access token, and each event upserts the lead's contact or deal.
    Hubspot,
    /// A Pipedrive sync ([`crate::crm`]): its URL is Pipedrive's API, its secret the API
    /// token, and each event makes the lead's person and lead, or its deal.
    Pipedrive,
}

impl WebhookKind {
    /// How many of this kind a project may have.
    pub fn limit(self) -> usize {
        match self {
            Self::Webhook | Self::RestHook => MAX_WEBHOOKS,
            Self::Hubspot | Self::Pipedrive => 1,
        }
    }

    /// The CRM a sync of this kind keeps leads in; `None` for posts.
    pub fn crm(self) -> Option<&'static str> {
        match self {
            Self::Webhook | Self::RestHook => None,
            Self::Hubspot => Some("HubSpot"),
            Self::Pipedrive => Some("Pipedrive"),
        }
    }

    /// How many due events of a sync of this kind one worker claims together (syncs take
    /// their events one worker at a time): HubSpot's batch calls take 100 records, and
    /// Pipedrive's events are sent one after the other, a few calls each, so a few keep a
    /// claim well within its lease. `None` for posts, claimed one by one.
    pub fn claimed_together(self) -> Option<u32> {
        match self {
            Self::Webhook | Self::RestHook => None,
            Self::Hubspot => Some(100),
            Self::Pipedrive => Some(10),
        }
    }
}

/// Something that happened to a lead, which webhooks may subscribe to.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::AsRefStr,
    strum::Display,
    strum::EnumString,
    strum::IntoStaticStr,
    VariantArray,
)]
pub enum WebhookEvent {
    /// A lead was created (createLead or createServerSideLead answered 201).
    #[serde(rename = "lead.created")]
    #[strum(serialize = "lead.created")]
    LeadCreated,
    /// A create with a known `uniqueEventId` was merged into its lead (answered 200).
    #[serde(rename = "lead.updated")]
    #[strum(serialize = "lead.updated")]
    LeadUpdated,
    /// A lead was rated with a conversion label. The event id is the conversion's, the one
    /// every platform receives.
    #[serde(rename = "lead.converted")]
    #[strum(serialize = "lead.converted")]
    LeadConverted,
    /// A lead was rated `lost`. The event id is the conversion's, as for
    /// [`WebhookEvent::LeadConverted`].
    #[serde(rename = "lead.lost")]
    #[strum(serialize = "lead.lost")]
    LeadLost,
    /// A lead was erased at its person's request ([`crate::store::erasure`]): the lead
    /// the event carries is the anonymous record left, so a receiver erases its copy.
    #[serde(rename = "lead.erased")]
    #[strum(serialize = "lead.erased")]
    LeadErased,
}

impl WebhookEvent {
    /// This event's bit in a [`WebhookEvents`] set.
    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A set of [`WebhookEvent`]s. On the wire, a list of their names; in a store, a small
/// integer ([`WebhookEvents::bits`]).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct WebhookEvents(u8);

impl WebhookEvents {
    /// Every event.
    pub fn all() -> Self {
        WebhookEvent::VARIANTS.iter().copied().collect()
    }

    /// Whether the set holds `event`.
    pub fn contains(self, event: WebhookEvent) -> bool {
        self.0 & event.bit() != 0
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The events in the set, in [`WebhookEvent`] order.
    pub fn iter(self) -> impl Iterator<Item = WebhookEvent> {
        WebhookEvent::VARIANTS
            .iter()
            .copied()
            .filter(move |event| self.contains(*event))
    }

    /// The set as a store keeps it: one bit per event, in [`WebhookEvent`] order.
    pub fn bits(self) -> i64 {
        i64::from(self.0)
    }

    /// The set a store kept as [`WebhookEvents::bits`]; bits of no event are dropped.
    pub fn from_bits(bits: i64) -> Self {
        WebhookEvent::VARIANTS
            .iter()
            .copied()
            .filter(|event| bits & i64::from(event.bit()) != 0)
            .collect()
    }

    /// Parses event names separated by commas or spaces (`lead.created,lead.lost`).
    /// Errors: [`WebhookError::UnknownEvent`] naming the first name that is no event.
    pub fn parse_list(list: &str) -> Result<Self, WebhookError> {
        list.split([',', ' '])
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(|name| {
                name.parse::<WebhookEvent>()
                    .map_err(|_| WebhookError::UnknownEvent(name.to_owned()))
            })
            .collect()
    }
}

impl FromIterator<WebhookEvent> for WebhookEvents {
    fn from_iter<I: IntoIterator<Item = WebhookEvent>>(events: I) -> Self {
        Self(events.into_iter().fold(0, |bits, event| bits | event.bit()))
    }
}

impl fmt::Display for WebhookEvents {
    /// The event names, separated by `, `.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter().map(<&str>::from).collect();
        f.write_str(&names.join(", "))
    }
}

impl fmt::Debug for WebhookEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for WebhookEvents {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for WebhookEvents {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Vec::<WebhookEvent>::deserialize(deserializer)?
            .into_iter()
            .collect())
    }
}

/// Why a webhook cannot be added.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WebhookError {
    /// The URL is not one the server may call ([`crate::target`]).
    #[error("webhook URL: {0}")]
    Url(Refusal),
    /// No event was chosen.
    #[error("choose at least one event: {all}", all = WebhookEvents::all())]
    NoEvents,
    /// A name is not an event's.
    #[error("{0:?} is not an event; the events are {all}", all = WebhookEvents::all())]
    UnknownEvent(String),
    /// A blank signing secret was given.
    #[error("the signing secret must not be blank")]
    BlankSecret,
    /// The project has [`MAX_WEBHOOKS`] already.
    #[error("a project has at most {MAX_WEBHOOKS} webhooks")]
    TooMany,
    /// The project has [`MAX_WEBHOOKS`] REST hooks already.
    #[error("a project has at most {MAX_WEBHOOKS} REST hooks")]
    TooManyHooks,
    /// The project has a sync with this CRM already.
    #[error("the project is connected to {0} already")]
    CrmConnected(&'static str),
    /// A CRM sync was asked of a kind that is none.
    #[error("{0} is no CRM")]
    NoCrm(WebhookKind),
}

impl WebhookError {
    /// The input's field the error is about: `url`, `events` or `secret`, or `""` for
    /// the webhook as a whole.
    pub fn field(&self) -> &'static str {
        match self {
            Self::TooMany | Self::TooManyHooks | Self::CrmConnected(_) | Self::NoCrm(_) => "",
            Self::Url(_) => "url",
            Self::NoEvents | Self::UnknownEvent(_) => "events",
            Self::BlankSecret => "secret",
        }
    }
}

/// A webhook to add, checked by [`NewWebhook::new`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewWebhook {
    /// Where events are posted.
    pub url: String,
    /// The HMAC-SHA256 signing secret.
    pub secret: Secret,
    /// The events posted.
    pub events: WebhookEvents,
    /// What it is.
    pub kind: WebhookKind,
    /// For a CRM sync: where its deals go.
    pub crm: Option<CrmOptions>,
}

impl NewWebhook {
    /// A webhook from what a person gave: the URL (one `targets` allows), the events (at
    /// least one), and the secret, generated when there is none.
    pub fn new(
        url: &str,
        targets: &Targets,
        secret: Option<Secret>,
        events: WebhookEvents,
    ) -> Result<Self, WebhookError> {
        let url = String::from(targets.check(url).map_err(WebhookError::Url)?);
        if events.is_empty() {
            return Err(WebhookError::NoEvents);
        }
        let secret = match secret {
            Some(secret) if secret.expose().trim().is_empty() => {
                return Err(WebhookError::BlankSecret);
            }
            Some(secret) => secret,
            None => generate_webhook_secret(),
        };
        Ok(Self {
            url,
            secret,
            events,
            kind: WebhookKind::Webhook,
            crm: None,
        })
    }

    /// A REST hook: `event` posted to `url` (one `targets` allows), signed with a new
    /// secret.
    pub fn rest_hook(
        url: &str,
        targets: &Targets,
        event: WebhookEvent,
    ) -> Result<Self, WebhookError> {
        let events = WebhookEvents::from_iter([event]);
        Ok(Self {
            kind: WebhookKind::RestHook,
            ..Self::new(url, targets, None, events)?
        })
    }

    /// A sync with the CRM `kind` names, with its `token`, calling `api` (the CRM's API, or
    /// a server `targets` allows in its place).
    pub fn crm(
        kind: WebhookKind,
        (api, targets): (&str, &Targets),
        token: Secret,
        options: CrmOptions,
    ) -> Result<Self, WebhookError> {
        if kind.crm().is_none() {
            return Err(WebhookError::NoCrm(kind));
        }
        let events = CRM_EVENTS.into_iter().collect();
        Ok(Self {
            kind,
            crm: Some(options),
            ..Self::new(api, targets, Some(token), events)?
        })
    }

    /// Whether the project's `count` webhooks of this one's kind leave room for it; the
    /// error says which limit it meets.
    pub fn fits(&self, count: usize) -> Result<(), WebhookError> {
        match self.kind {
            _ if count < self.kind.limit() => Ok(()),
            WebhookKind::Webhook => Err(WebhookError::TooMany),
            WebhookKind::RestHook => Err(WebhookError::TooManyHooks),
            kind => Err(WebhookError::CrmConnected(kind.crm().unwrap_or_default())),
        }
    }

    /// Checks what [`NewWebhook::new`] checked, for a store given a value built otherwise:
    /// the URL's form only, since the operator's exceptions are known where it was given
    /// and where it is called.
    pub fn validate(&self) -> Result<(), WebhookError> {
        let events = self.events;
        Self::new(
            &self.url,
            &Targets::any(),
            Some(self.secret.clone()),
            events,
        )
        .map(|_| ())
    }
}

/// A webhook of a project.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Webhook {
    /// Its id.
    pub id: Uuid,
    /// Its project.
    pub project_id: ProjectId,
    /// Where events are posted.
    pub url: String,
    /// The HMAC-SHA256 signing secret.
    pub secret: Secret,
    /// The events posted.
    pub events: WebhookEvents,
    /// When it was added.
    pub created_at: DateTime<Utc>,
    /// What it is.
    pub kind: WebhookKind,
    /// For a CRM sync: where its deals go.
    pub crm: Option<CrmOptions>,
}

/// One attempt to post an event to a webhook, as recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookAttempt {
    /// When it was made.
    pub at: DateTime<Utc>,
    /// How it ended: delivered, retry, or failed (a webhook skips nothing).
    pub outcome: AttemptOutcome,
    /// The receiver's HTTP status, when it answered.
    pub http_status: Option<u16>,
    /// A short description of the failure (never the secret).
    pub error: Option<String>,
    /// For [`AttemptOutcome::Retry`]: when to try again.
    pub retry_at: Option<DateTime<Utc>>,
}

impl WebhookAttempt {
    /// The state the delivery is stored in after this attempt, and when it is next due: a
    /// retry is `queued` again, due at its `retry_at`; any other outcome ends it
    /// (`delivered`, `failed` or `skipped`). `None` for a retry without its time.
    pub fn next_state(&self) -> Option<(&'static str, Option<DateTime<Utc>>)> {
        Some(match (self.outcome, self.retry_at) {
            (AttemptOutcome::Retry, Some(retry_at)) => ("queued", Some(retry_at)),
            (AttemptOutcome::Retry, None) => return None,
            (AttemptOutcome::Delivered, _) => ("delivered", None),
            (AttemptOutcome::Failed, _) => ("failed", None),
            (AttemptOutcome::Skipped, _) => ("skipped", None),
        })
    }
}

/// A webhook and how its deliveries stand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookStatus {
    /// The webhook.
    pub webhook: Webhook,
    /// Events waiting to be posted (or being posted, or retried).
    pub pending: u64,
    /// Events the receiver accepted.
    pub delivered: u64,
    /// Events given up on.
    pub failed: u64,
    /// The newest attempt (the latest `at`; ties: the event queued last).
    pub last_attempt: Option<WebhookAttempt>,
}

/// How a lead stands in one of its project's CRMs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeadSync {
    /// Which CRM.
    pub kind: WebhookKind,
    /// What the CRM calls the lead.
    pub record: CrmRecord,
    /// The lead's events waiting to be synced (or being synced, or retried).
    pub pending: u64,
    /// The lead's events given up on.
    pub failed: u64,
    /// The newest attempt to sync one of the lead's events.
    pub last_attempt: Option<WebhookAttempt>,
}

/// An event delivery a worker claimed: one event for one webhook.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimedWebhookEvent {
    /// The delivery's id, to record the attempt on.
    pub id: i64,
    /// The worker's hold on it.
    pub lease: Lease,
    /// The webhook, with its settings as they are now.
    pub webhook: Webhook,
    /// The event.
    pub event: WebhookEvent,
    /// The event's id, the same for every webhook and every attempt.
    pub event_id: Uuid,
    /// The lead it is about.
    pub lead_id: LeadId,
    /// When it happened.
    pub occurred_at: DateTime<Utc>,
    /// Attempts made before this one.
    pub attempts: u32,
    /// The JSON body to post, as it was when the event happened
    /// ([`crate::api::WebhookBody`]).
    pub body: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_names_are_the_documented_ones() {
        let names: Vec<String> = WebhookEvent::VARIANTS
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(
            names,
            [
                "lead.created",
                "lead.updated",
                "lead.converted",
                "lead.lost",
                "lead.erased"
            ]
        );
        for event in WebhookEvent::VARIANTS {
            assert_eq!(
                serde_json::to_value(event).unwrap(),
                serde_json::Value::String(event.to_string())
            );
        }
    }

    #[test]
    fn event_sets_round_trip_through_bits_lists_and_json() {
        let set = WebhookEvents::parse_list(" lead.lost,lead.created  lead.lost").unwrap();
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            [WebhookEvent::LeadCreated, WebhookEvent::LeadLost]
        );
        assert_eq!(set.bits(), 0b1001);
        assert_eq!(WebhookEvents::from_bits(set.bits()), set);
        assert_eq!(
            WebhookEvents::from_bits(0b1110_0000),
            WebhookEvents::default()
        );
        assert_eq!(set.to_string(), "lead.created, lead.lost");
        let json = serde_json::to_string(&set).unwrap();
        assert_eq!(json, r#"["lead.created","lead.lost"]"#);
        assert_eq!(serde_json::from_str::<WebhookEvents>(&json).unwrap(), set);
        assert_eq!(
            WebhookEvents::parse_list("lead.created,lead.deleted"),
            Err(WebhookError::UnknownEvent("lead.deleted".to_owned()))
        );
        assert!(WebhookEvents::parse_list(" , ").unwrap().is_empty());
    }

    #[test]
    fn new_webhooks_need_an_address_the_server_may_call_and_an_event() {
        let events = WebhookEvents::all();
        let strict = Targets::default();
        for (url, refusal) in [
            ("ftp://crm.example", Refusal::Scheme("ftp".to_owned())),
            ("https://", Refusal::NotAnAddress),
            ("crm.example/hook", Refusal::NotAnAddress),
            ("https://a b", Refusal::NotAnAddress),
            ("http://crm.example/hook", Refusal::Http),
        ] {
            assert_eq!(
                NewWebhook::new(url, &strict, None, events),
                Err(WebhookError::Url(refusal))
            );
        }
        assert_eq!(
            NewWebhook::new("https://10.0.0.1/hook", &strict, None, events)
                .unwrap_err()
                .to_string(),
            "webhook URL: the address is private (10.0.0.1); the server's operator can allow it"
        );
        let none = WebhookEvents::default();
        assert_eq!(
            NewWebhook::new("https://crm.example/hook", &strict, None, none),
            Err(WebhookError::NoEvents)
        );
        assert_eq!(
            NewWebhook::new(
                "https://crm.example",
                &strict,
                Some(Secret::new(" ")),
                events
            ),
            Err(WebhookError::BlankSecret)
        );
        let hook = NewWebhook::new(" HTTPS://crm.example/hook ", &strict, None, events).unwrap();
        assert_eq!(hook.url, "https://crm.example/hook");
        assert!(hook.secret.expose().starts_with("whsec_"));
        assert_eq!(hook.validate(), Ok(()));
        let local = Targets::new("127.0.0.0/8", true).unwrap();
        let given = NewWebhook::new(
            "http://localhost:9/x",
            &local,
            Some(Secret::new("s3")),
            events,
        );
        assert_eq!(given.unwrap().secret, Secret::new("s3"));
    }
}
