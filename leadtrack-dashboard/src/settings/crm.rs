//! CRM syncs: HubSpot and Pipedrive, each connected with its token, then its pipeline and
//! each label's stage picked from lists read from the CRM itself
//! (`leadtrack_platforms::crm`, which the command line shares). Connecting again keeps the
//! sync's records, so its deals are moved, never made twice.

use askama::Template;
use chrono::Utc;
use leadtrack_core::crm::CrmOptions;
use leadtrack_core::integration::Secret;
use leadtrack_core::label::rateable;
use leadtrack_core::webhook::{NewWebhook, Webhook, WebhookKind, WebhookStatus};
use leadtrack_core::{Admin, LeadWebhooks};
use leadtrack_platforms::crm::{self, PipelineChoice};
use leadtrack_platforms::hubspot;
use warp::http::StatusCode;

use super::{Answer, Frame, Owner, Problems, notice};
use crate::Request;
use crate::render::{self, Layout};
use crate::routes::Settings;
use crate::session::Form;

/// The CRMs, in the page's order.
const CRMS: [WebhookKind; 2] = [WebhookKind::Hubspot, WebhookKind::Pipedrive];

/// A CRM's card.
struct Card {
    slug: &'static str,
    title: &'static str,
    token_hint: &'static str,
    /// How the sync stands, when connected: synced, waiting, failed, and where deals go.
    status: Option<(u64, u64, u64, String)>,
    /// The pickers, when the CRM answered: its pipelines and the chosen one's stages.
    pickers: Option<Pickers>,
    /// Why there are no pickers, when the CRM did not answer.
    unread: Option<String>,
}

/// A connected CRM's pipeline and stage pickers.
struct Pickers {
    pipelines: Vec<(String, String)>,
    pipeline: String,
    /// One per label, then `lost`.
    stages: Vec<StageRow>,
}

/// A rating's stage picker.
struct StageRow {
    /// The select's id.
    id: String,
    /// The label's name, or `Lost`.
    label: String,
    /// The stages offered: each `LABEL=STAGE_ID` and its name.
    options: Vec<(String, String)>,
    /// The one chosen now.
    now: String,
}

#[derive(Template)]
#[template(path = "settings/crm.html")]
struct CrmPage {
    layout: Layout,
    frame: Frame,
    cards: Vec<Card>,
    problems: Problems,
}

const NOTICES: &[(&str, &str)] = &[
    (
        "connected",
        "Connected: new leads are synced. Choose where their deals go below.",
    ),
    ("saved", "Saved: the next ratings move deals as chosen."),
    (
        "pipeline",
        "Pipeline changed: choose each label's stage in it.",
    ),
    (
        "disconnected",
        "Disconnected. What was synced stays in the CRM.",
    ),
];

fn token_hint(kind: WebhookKind) -> &'static str {
    match kind {
        WebhookKind::Pipedrive => "Your API token: in Pipedrive, Personal preferences > API.",
        _ => {
            "A private app's access token (Settings > Integrations > Private apps) with the \
             scopes crm.objects.contacts.read/write, crm.objects.deals.read/write and \
             crm.schemas.contacts.write."
        }
    }
}

async fn crm_page<S: Admin + LeadWebhooks>(
    store: &S,
    owner: &Owner,
    (status, notice): (StatusCode, Option<String>),
    problems: Problems,
) -> Answer {
    let project = owner.project().id;
    let syncs = store
        .webhooks(project)
        .await
        .map_err(|e| owner.failure(e))?;
    let labels = store.labels(project).await.map_err(|e| owner.failure(e))?;
    let names: Vec<String> = rateable(&labels).map(|l| l.name.clone()).collect();
    let mut cards = Vec::new();
    for kind in CRMS {
        let sync = syncs.iter().find(|s| s.webhook.kind == kind);
        cards.push(card(owner, kind, sync, &names).await);
    }
    let (layout, frame) = owner.frame(Settings::Crm, notice);
    let page = CrmPage {
        layout,
        frame,
        cards,
        problems,
    };
    Ok(render::page(status, &page))
}

/// A CRM's card: its pickers read from the CRM when connected.
async fn card(
    owner: &Owner,
    kind: WebhookKind,
    sync: Option<&WebhookStatus>,
    labels: &[String],
) -> Card {
    let mut card = Card {
        slug: kind.into(),
        title: kind.crm().unwrap_or_default(),
        token_hint: token_hint(kind),
        status: None,
        pickers: None,
        unread: None,
    };
    let Some(sync) = sync else { return card };
    let options = sync.webhook.crm.clone().unwrap_or_default();
    let said = crm::describe(kind, &options);
    card.status = Some((sync.delivered, sync.pending, sync.failed, said));
    let account = (kind, sync.webhook.url.as_str(), &sync.webhook.secret);
    match crm::choices(owner.outbound(), account, &options).await {
        Ok((pipelines, pipeline)) => {
            card.pickers = Some(pickers(kind, &pipelines, pipeline, (&options, labels)))
        }
        Err(why) => card.unread = Some(why),
    }
    card
}

fn pickers(
    kind: WebhookKind,
    pipelines: &[PipelineChoice],
    pipeline: String,
    (options, labels): (&CrmOptions, &[String]),
) -> Pickers {
    let stages: Vec<(String, String)> = pipelines
        .iter()
        .find(|p| p.id == pipeline)
        .map(|p| p.stages.clone())
        .unwrap_or_default();
    // Each select posts `stage=LABEL=STAGE_ID`; an empty stage maps nothing.
    let offered = |key: &str, none: &str| {
        let mut offered = vec![(format!("{key}="), none.to_owned())];
        offered.extend(
            stages
                .iter()
                .map(|(id, name)| (format!("{key}={id}"), name.clone())),
        );
        offered
    };
    let slug: &str = kind.into();
    let row = |key: String, label: String, none: &str, now: Option<&str>| {
        let now = format!("{key}={}", now.unwrap_or_default());
        let id = format!(
            "{slug}-stage-{}",
            label
                .to_lowercase()
                .replace(|c: char| !c.is_alphanumeric(), "-")
        );
        StageRow {
            options: offered(&key, none),
            id,
            label,
            now,
        }
    };
    let mut rows: Vec<_> = labels
        .iter()
        .map(|label| {
            row(
                label.to_lowercase(),
                label.clone(),
                "No deal",
                options.stage(Some(label)),
            )
        })
        .collect();
    let lost_default = match kind {
        WebhookKind::Pipedrive => "Keep its stage, marked lost",
        _ if hubspot::pipeline(options) == hubspot::DEFAULT_PIPELINE => "Closed lost (closedlost)",
        _ => "No change",
    };
    rows.push(row(
        "lost".to_owned(),
        "Lost".to_owned(),
        lost_default,
        options.stage(None),
    ));
    Pickers {
        pipelines: pipelines
            .iter()
            .map(|p| (p.id.clone(), p.name.clone()))
            .collect(),
        pipeline,
        stages: rows,
    }
}

/// `GET crm`.
pub(super) async fn page<S: Admin + LeadWebhooks>(
    store: &S,
    request: &Request,
    owner: Owner,
) -> Answer {
    let notice = notice(request, NOTICES);
    crm_page(store, &owner, (StatusCode::OK, notice), Problems::default()).await
}

/// The CRM a path's `{kind}` names, and the project's sync with it, if any; `404` for a
/// kind that is no CRM.
async fn sync_of<S: LeadWebhooks>(
    store: &S,
    owner: &Owner,
    kind: &str,
) -> Result<(WebhookKind, Option<Webhook>), warp::reply::Response> {
    let Some(kind) = kind
        .parse::<WebhookKind>()
        .ok()
        .filter(|k| k.crm().is_some())
    else {
        return Err(owner.not_found());
    };
    let syncs = store
        .webhooks(owner.project().id)
        .await
        .map_err(|e| owner.failure(e))?;
    let sync = syncs
        .into_iter()
        .map(|s| s.webhook)
        .find(|w| w.kind == kind);
    Ok((kind, sync))
}

/// `POST crm/{kind}`: connects the CRM with a token, or changes its token, pipeline and
/// stages; each checked with the CRM before it is kept.
pub(super) async fn save<S: Admin + LeadWebhooks>(
    store: &S,
    (owner, form): (Owner, Form),
    kind: &str,
) -> Answer {
    let (kind, existing) = sync_of(store, &owner, kind).await?;
    let project = owner.project().id;
    let token = match (form.get("token").trim(), &existing) {
        ("", Some(sync)) => sync.secret.clone(),
        ("", None) => return refuse(store, &owner, kind, "Give the token.".to_owned()).await,
        (token, _) => Secret::new(token),
    };
    let kept = existing
        .as_ref()
        .and_then(|sync| sync.crm.clone())
        .unwrap_or_default();
    let pipeline = form.get("pipeline").trim();
    // A new pipeline has other stages: its stages are chosen once its page shows them.
    let moved =
        existing.is_some() && !pipeline.is_empty() && Some(pipeline) != kept.pipeline.as_deref();
    let stages: Vec<String> = form
        .all("stage")
        .filter_map(|pair| pair.split_once('=').filter(|(_, stage)| !stage.is_empty()))
        .filter(|_| !moved)
        .map(|(label, stage)| format!("{label}={stage}"))
        .collect();
    let pipeline = (!pipeline.is_empty()).then_some(pipeline);
    let options = match CrmOptions::new(pipeline, stages.iter().map(String::as_str)) {
        Ok(options) => options,
        Err(err) => return refuse(store, &owner, kind, err.to_string()).await,
    };
    let api = match (form.get("base_url").trim(), &existing) {
        ("", Some(sync)) => sync.url.clone(),
        ("", None) => crm::default_api(kind).to_owned(),
        (url, _) => url.to_owned(),
    };
    let sync = match NewWebhook::crm(kind, (&api, owner.outbound().targets()), token, options) {
        Ok(sync) => sync,
        Err(err) => return refuse(store, &owner, kind, super::sentence(&err.to_string())).await,
    };
    let options = match crm::prepare(owner.outbound(), &sync).await {
        Ok(options) => options,
        Err(why) => return refuse(store, &owner, kind, super::sentence(&why)).await,
    };
    let sync = NewWebhook {
        crm: Some(options),
        ..sync
    };
    let saved = match &existing {
        Some(old) => store.update_webhook(project, old.id, sync).await,
        None => store.create_webhook(project, sync, Utc::now()).await,
    };
    saved.map_err(|e| owner.failure(e))?;
    let notice = match (&existing, moved) {
        (None, _) => "connected",
        (Some(_), true) => "pipeline",
        (Some(_), false) => "saved",
    };
    Ok(owner.redirect(Settings::Crm, Some(notice)))
}

/// The page again, with `why` on the CRM's card.
async fn refuse<S: Admin + LeadWebhooks>(
    store: &S,
    owner: &Owner,
    kind: WebhookKind,
    why: String,
) -> Answer {
    let problems = Problems::one(kind.into(), why);
    crm_page(store, owner, (StatusCode::BAD_REQUEST, None), problems).await
}

/// `POST crm/{kind}/disconnect`: the project's leads are no longer synced to the CRM.
pub(super) async fn disconnect<S: Admin + LeadWebhooks>(
    store: &S,
    (owner, _): (Owner, Form),
    kind: &str,
) -> Answer {
    let (_, found) = sync_of(store, &owner, kind).await?;
    let Some(sync) = found else {
        return Err(owner.not_found());
    };
    store
        .remove_webhook(owner.project().id, sync.id)
        .await
        .map_err(|e| owner.failure(e))?;
    Ok(owner.redirect(Settings::Crm, Some("disconnected")))
}
