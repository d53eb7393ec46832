//! Lead webhooks: the list with how each one's deliveries stand, adding one (its secret
//! shown once), removing one.

use askama::Template;
use chrono::Utc;
use leadtrack_core::integration::Secret;
use leadtrack_core::types::AttemptOutcome;
use leadtrack_core::webhook::{NewWebhook, WebhookError, WebhookEvent, WebhookEvents, WebhookKind};
use leadtrack_core::{Admin, LeadWebhooks};
use strum::VariantArray;
use uuid::Uuid;
use warp::http::StatusCode;

use super::{Answer, Frame, Owner, Problems, notice};
use crate::Request;
use crate::format;
use crate::render::{self, Layout};
use crate::routes::Settings;
use crate::session::Form;

/// A webhook as the list shows it.
struct HookRow {
    id: String,
    url: String,
    /// Subscribed by an automation tool through the API (`/api/hooks`).
    rest_hook: bool,
    events: Vec<&'static str>,
    pending: u64,
    delivered: u64,
    failed: u64,
    last: Option<LastPost>,
}

/// A webhook's newest post.
struct LastPost {
    outcome: &'static str,
    ok: bool,
    http_status: Option<u16>,
    error: Option<String>,
    iso: String,
    when: String,
    ago: String,
}

/// An event, as the add form offers it.
struct EventChoice {
    name: &'static str,
    what: &'static str,
    checked: bool,
}

#[derive(Template)]
#[template(path = "settings/webhooks.html")]
struct WebhooksPage {
    layout: Layout,
    frame: Frame,
    hooks: Vec<HookRow>,
    url: String,
    choices: Vec<EventChoice>,
    problems: Problems,
    new_secret: Option<String>,
}

const NOTICES: &[(&str, &str)] = &[(
    "removed",
    "Webhook removed, with the events not yet posted to it.",
)];

/// What happened to a lead, for people.
fn what(event: WebhookEvent) -> &'static str {
    match event {
        WebhookEvent::LeadCreated => "A new lead arrives.",
        WebhookEvent::LeadUpdated => {
            "A lead is sent again with the same uniqueEventId and merged into the first."
        }
        WebhookEvent::LeadConverted => "A lead is rated with a conversion label.",
        WebhookEvent::LeadLost => "A lead is rated lost.",
        WebhookEvent::LeadErased => {
            "A person's leads are erased at their request: the post carries what stays."
        }
    }
}

/// The add form as typed: its URL and events (never the secret).
struct Typed {
    url: String,
    events: WebhookEvents,
}

impl Typed {
    fn fresh() -> Self {
        Self {
            url: String::new(),
            events: [WebhookEvent::LeadCreated].into_iter().collect(),
        }
    }
}

/// The webhooks page, showing the add form as `typed`, its `problems`, or a `new_secret`
/// once.
async fn webhooks_page<S: Admin + LeadWebhooks>(
    store: &S,
    owner: &Owner,
    status: StatusCode,
    notice: Option<String>,
    typed: Typed,
    problems: Problems,
    new_secret: Option<String>,
) -> Answer {
    let statuses = store
        .webhooks(owner.project().id)
        .await
        .map_err(|e| owner.failure(e))?;
    let now = Utc::now();
    // A CRM sync is shown with the integrations.
    let hooks = statuses
        .iter()
        .filter(|status| status.webhook.kind.crm().is_none())
        .map(|status| HookRow {
            id: status.webhook.id.to_string(),
            url: status.webhook.url.clone(),
            rest_hook: status.webhook.kind == WebhookKind::RestHook,
            events: status.webhook.events.iter().map(<&str>::from).collect(),
            pending: status.pending,
            delivered: status.delivered,
            failed: status.failed,
            last: status.last_attempt.as_ref().map(|attempt| LastPost {
                outcome: match attempt.outcome {
                    AttemptOutcome::Delivered => "delivered",
                    AttemptOutcome::Retry => "will retry",
                    AttemptOutcome::Failed => "failed",
                    AttemptOutcome::Skipped => "skipped",
                },
                ok: attempt.outcome == AttemptOutcome::Delivered,
                http_status: attempt.http_status,
                error: attempt.error.clone(),
                iso: format::iso(&attempt.at),
                when: format::exact(&attempt.at),
                ago: format::relative(&attempt.at, now),
            }),
        })
        .collect();
    let choices = WebhookEvent::VARIANTS
        .iter()
        .map(|event| EventChoice {
            name: (*event).into(),
            what: what(*event),
            checked: typed.events.contains(*event),
        })
        .collect();
    let (layout, frame) = owner.frame(Settings::Webhooks, notice);
    Ok(render::page(
        status,
        &WebhooksPage {
            layout,
            frame,
            hooks,
            url: typed.url,
            choices,
            problems,
            new_secret,
        },
    ))
}

/// `GET webhooks`.
pub(super) async fn page<S: Admin + LeadWebhooks>(
    store: &S,
    request: &Request,
    owner: Owner,
) -> Answer {
    let notice = notice(request, NOTICES);
    let (fresh, none) = (Typed::fresh(), Problems::default());
    webhooks_page(store, &owner, StatusCode::OK, notice, fresh, none, None).await
}

/// `POST webhooks`: adds a webhook and shows its secret once, when it was generated.
pub(super) async fn add<S: Admin + LeadWebhooks>(
    store: &S,
    (owner, form): (Owner, Form),
) -> Answer {
    let url = form.get("url").trim().to_owned();
    let events = WebhookEvents::parse_list(&form.all("event").collect::<Vec<_>>().join(","));
    let secret = Some(form.get("secret")).filter(|s| !s.is_empty());
    let generated = secret.is_none();
    let typed_events = events.clone().unwrap_or_default();
    let targets = owner.outbound().targets();
    let new =
        events.and_then(|events| NewWebhook::new(&url, targets, secret.map(Secret::new), events));
    let typed = Typed {
        url,
        events: typed_events,
    };
    let refused = |err: WebhookError, typed| {
        let problems = Problems::one(err.field(), super::sentence(&err.to_string()));
        webhooks_page(
            store,
            &owner,
            StatusCode::BAD_REQUEST,
            None,
            typed,
            problems,
            None,
        )
    };
    let new = match new {
        Ok(new) => new,
        Err(err) => return refused(err, typed).await,
    };
    match store
        .create_webhook(owner.project().id, new, Utc::now())
        .await
    {
        Ok(hook) => {
            tracing::info!(user = %owner.viewer.user.id, webhook = %hook.id, "webhook added");
            let shown = generated.then(|| hook.secret.expose().to_owned());
            let (fresh, none) = (Typed::fresh(), Problems::default());
            let notice = Some("Webhook added: it hears of the events chosen from now on.".into());
            webhooks_page(
                store,
                &owner,
                StatusCode::CREATED,
                notice,
                fresh,
                none,
                shown,
            )
            .await
        }
        Err(leadtrack_core::StoreError::Invalid(_)) => refused(WebhookError::TooMany, typed).await,
        Err(err) => Err(owner.failure(err)),
    }
}

/// `POST webhooks/{id}/remove`.
pub(super) async fn remove<S: Admin + LeadWebhooks>(
    store: &S,
    (owner, _): (Owner, Form),
    id: &str,
) -> Answer {
    let Ok(id) = id.parse::<Uuid>() else {
        return Err(owner.not_found());
    };
    let removed = store
        .remove_webhook(owner.project().id, id)
        .await
        .map_err(|e| owner.failure(e))?;
    if !removed {
        return Err(owner.not_found());
    }
    tracing::info!(user = %owner.viewer.user.id, webhook = %id, "webhook removed");
    Ok(owner.redirect(Settings::Webhooks, Some("removed")))
}
