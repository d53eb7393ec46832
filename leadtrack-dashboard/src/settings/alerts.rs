//! The project's chat channels for new leads: a Slack incoming webhook, a Microsoft Teams
//! Workflows webhook and a Google Chat webhook. Their URLs are secrets (whoever has one can
//! post to the channel): stored, never shown again. Each member chooses their own email
//! alerts in their profile.

use askama::Template;
use leadtrack_core::Store;
use leadtrack_core::activity::ProjectActivity;
use leadtrack_core::alert::{ChatKind, webhook_url};
use strum::VariantArray;
use warp::http::StatusCode;

use super::{Answer, Frame, Owner, Problems, notice, sentence};
use crate::Request;
use crate::render::{self, Layout};
use crate::routes::Settings;
use crate::session::Form;

/// A channel's form.
struct Channel {
    kind: &'static str,
    title: &'static str,
    hint: &'static str,
    connected: bool,
}

#[derive(Template)]
#[template(path = "settings/alerts.html")]
struct AlertsPage {
    layout: Layout,
    frame: Frame,
    channels: Vec<Channel>,
    problems: Problems,
}

const NOTICES: &[(&str, &str)] = &[
    ("saved", "Channel saved: new leads are posted to it."),
    ("removed", "Channel removed."),
];

/// Where each chat's webhook URL comes from, in words.
fn hint(kind: ChatKind) -> &'static str {
    match kind {
        ChatKind::Slack => {
            "An incoming webhook's URL (https://hooks.slack.com/services/…): in Slack, add the \
             Incoming Webhooks app to the channel."
        }
        ChatKind::Teams => {
            "A Workflows webhook's URL: in the channel, Workflows > \"Post to a channel when a \
             webhook request is received\"."
        }
        ChatKind::GoogleChat => {
            "A space's webhook URL (https://chat.googleapis.com/v1/spaces/…): in the space, \
             Apps & integrations > Webhooks."
        }
    }
}

async fn alerts_page<S: Store>(
    store: &S,
    owner: &Owner,
    (status, notice): (StatusCode, Option<String>),
    problems: Problems,
) -> Answer {
    let connected = store
        .chat_channels(owner.project().id)
        .await
        .map_err(|e| owner.failure(e))?;
    let channels = ChatKind::VARIANTS
        .iter()
        .map(|kind| Channel {
            kind: (*kind).into(),
            title: kind.title(),
            hint: hint(*kind),
            connected: connected.iter().any(|c| c.kind == *kind),
        })
        .collect();
    let (layout, frame) = owner.frame(Settings::Alerts, notice);
    let page = AlertsPage {
        layout,
        frame,
        channels,
        problems,
    };
    Ok(render::page(status, &page))
}

/// `GET alerts`.
pub(super) async fn page<S: Store>(store: &S, request: &Request, owner: Owner) -> Answer {
    let notice = notice(request, NOTICES);
    alerts_page(store, &owner, (StatusCode::OK, notice), Problems::default()).await
}

/// `POST alerts/{kind}` (`url`) and `POST alerts/{kind}/remove`: sets or removes a channel,
/// and records it in the audit log.
pub(super) async fn save<S: Store>(
    store: &S,
    (owner, form): (Owner, Form),
    (kind, remove): (&str, bool),
) -> Answer {
    let Ok(kind) = kind.parse::<ChatKind>() else {
        return Err(owner.not_found());
    };
    let url = if remove {
        None
    } else {
        match webhook_url(form.get("url"), owner.outbound().targets()) {
            Ok(url) => Some(url),
            Err(problem) => {
                let problems = Problems::one(kind.into(), sentence(&problem));
                let status = (StatusCode::BAD_REQUEST, None);
                return alerts_page(store, &owner, status, problems).await;
            }
        }
    };
    store
        .set_chat_channel(owner.project().id, kind, url.as_deref())
        .await
        .map_err(|e| owner.failure(e))?;
    let activity = match url {
        Some(_) => ProjectActivity::ChatChannelSaved { chat: kind },
        None => ProjectActivity::ChatChannelRemoved { chat: kind },
    };
    owner.record(store, activity).await?;
    Ok(owner.redirect(
        Settings::Alerts,
        Some(if remove { "removed" } else { "saved" }),
    ))
}
