//! Form tools: the project's inbound webhooks (Typeform, Tally, Webflow forms, Jotform, or
//! any JSON), each with its address, its mapping of fields, and a sample post tried
//! against the mapping before it is saved.

use askama::Template;
use leadtrack_core::Store;
use leadtrack_core::activity::ProjectActivity;
use leadtrack_core::inbound::{InboundHook, Preset, parse_mapping};
use leadtrack_core::integration::Secret;
use serde_json::Value;
use strum::VariantArray;
use warp::http::StatusCode;
use warp::reply::Response;

use super::{Answer, Frame, Owner, Problems, notice, sentence};
use crate::render::{self, Layout};
use crate::routes::Settings;
use crate::session::{self, Form};
use crate::{Config, Request};

/// One webhook as its card shows it.
struct Card {
    id: String,
    name: String,
    tool: &'static str,
    /// Whether its URL carries its secret.
    in_url: bool,
    url: String,
    /// The mapping as typed: `FIELD=JSONPATH` lines.
    mapping: String,
    /// The sample post typed, when one was tried.
    sample: String,
    /// What the sample made, when it was tried.
    preview: Option<Preview>,
}

/// A sample post tried against a mapping: the lead's fields, or why it is no lead.
struct Preview {
    fields: Vec<(String, String)>,
    problem: Option<String>,
}

#[derive(Template)]
#[template(path = "settings/inbound.html")]
struct InboundPage {
    layout: Layout,
    frame: Frame,
    cards: Vec<Card>,
    presets: Vec<(&'static str, &'static str)>,
    /// A new webhook's signing secret, shown once.
    new_secret: Option<String>,
    problems: Problems,
}

const NOTICES: &[(&str, &str)] = &[
    (
        "made",
        "Inbound webhook made: paste its address into the tool.",
    ),
    ("mapped", "Mapping saved: the next post is read with it."),
    (
        "removed",
        "Inbound webhook removed: its posts are refused from now on.",
    ),
];

/// What a page shows beyond the webhooks as stored.
#[derive(Default)]
struct Shown {
    notice: Option<String>,
    /// The card whose form was posted, as typed: `(id, mapping, sample, preview)`.
    typed: Option<(String, String, String, Option<Preview>)>,
    new_secret: Option<String>,
    problems: Problems,
}

/// The page.
async fn inbound_page<S: Store>(
    store: &S,
    (config, request): (&Config, &Request),
    owner: &Owner,
    status: StatusCode,
    shown: Shown,
) -> Answer {
    let hooks = store
        .inbound_hooks(owner.project().id)
        .await
        .map_err(|e| owner.failure(e))?;
    let origin = session::public_origin(request, config).unwrap_or_default();
    let mut typed = shown.typed;
    let cards = hooks
        .iter()
        .map(|hook| {
            let mut card = Card {
                id: hook.id.clone(),
                name: hook.name.clone(),
                tool: hook.preset.title(),
                in_url: hook.preset.secret_in_url(),
                url: format!("{origin}{}", hook.path()),
                mapping: mapping_text(hook),
                sample: String::new(),
                preview: None,
            };
            if typed.as_ref().is_some_and(|(id, ..)| *id == hook.id)
                && let Some((_, mapping, sample, preview)) = typed.take()
            {
                (card.mapping, card.sample, card.preview) = (mapping, sample, preview);
            }
            card
        })
        .collect();
    let (layout, frame) = owner.frame(Settings::Inbound, shown.notice);
    let page = InboundPage {
        layout,
        frame,
        cards,
        presets: Preset::VARIANTS
            .iter()
            .map(|p| (p.as_ref(), p.title()))
            .collect(),
        new_secret: shown.new_secret,
        problems: shown.problems,
    };
    Ok(render::page(status, &page))
}

/// `GET inbound`.
pub(super) async fn page<S: Store>(
    store: &S,
    config: &Config,
    request: &Request,
    owner: Owner,
) -> Answer {
    let shown = Shown {
        notice: notice(request, NOTICES),
        ..Shown::default()
    };
    inbound_page(store, (config, request), &owner, StatusCode::OK, shown).await
}

/// `POST inbound`: makes a webhook for the tool picked; a tool that signs shows its
/// secret once.
pub(super) async fn create<S: Store>(
    store: &S,
    (config, request): (&Config, &Request),
    (owner, form): (Owner, Form),
) -> Answer {
    let Ok(preset) = form.get("preset").parse::<Preset>() else {
        let problems = Problems::one("preset", "Pick the form tool.");
        let shown = Shown {
            problems,
            ..Shown::default()
        };
        return inbound_page(
            store,
            (config, request),
            &owner,
            StatusCode::BAD_REQUEST,
            shown,
        )
        .await;
    };
    let secret = form.get("secret").trim();
    let given = (!secret.is_empty()).then(|| Secret::new(secret));
    let hook = InboundHook::new(owner.project().id, (form.get("name"), preset), given);
    keep(store, &owner, &hook).await?;
    tracing::info!(user = %owner.viewer.user.id, preset = %preset, "inbound webhook made");
    // A secret the tool signs with is shown once; one in the URL is shown with it.
    if preset.secret_in_url() || !secret.is_empty() {
        return Ok(owner.redirect(Settings::Inbound, Some("made")));
    }
    let shown = Shown {
        notice: Some(NOTICES[0].1.to_owned()),
        new_secret: Some(hook.secret.expose().to_owned()),
        ..Shown::default()
    };
    inbound_page(store, (config, request), &owner, StatusCode::OK, shown).await
}

/// `POST inbound/{id}`: tries the sample post against the mapping typed (`action=try`),
/// or saves the mapping. Nothing is saved while the mapping has a problem.
pub(super) async fn save<S: Store>(
    store: &S,
    (config, request): (&Config, &Request),
    (owner, form): (Owner, Form),
    id: &str,
) -> Answer {
    let Some(mut hook) = owned(store, &owner, id).await? else {
        return Ok(owner.not_found());
    };
    let (typed, sample) = (form.get("mapping"), form.get("sample"));
    let shown = |preview, problems| Shown {
        typed: Some((id.to_owned(), typed.to_owned(), sample.to_owned(), preview)),
        problems,
        ..Shown::default()
    };
    let (status, shown) = match parse_mapping(typed.lines()) {
        Err(problem) => {
            let problems = Problems::one("mapping", sentence(&problem));
            (StatusCode::BAD_REQUEST, shown(None, problems))
        }
        Ok(mapping) if form.get("action") == "try" => {
            let preview = preview(hook.preset, &mapping, sample);
            (StatusCode::OK, shown(Some(preview), Problems::default()))
        }
        Ok(mapping) => {
            hook.mapping = mapping;
            keep(store, &owner, &hook).await?;
            return Ok(owner.redirect(Settings::Inbound, Some("mapped")));
        }
    };
    inbound_page(store, (config, request), &owner, status, shown).await
}

/// `POST inbound/{id}/remove`.
pub(super) async fn remove<S: Store>(store: &S, (owner, _): (Owner, Form), id: &str) -> Answer {
    let Some(hook) = owned(store, &owner, id).await? else {
        return Ok(owner.not_found());
    };
    store
        .remove_inbound_hook(owner.project().id, id)
        .await
        .map_err(|e| owner.failure(e))?;
    let removed = ProjectActivity::InboundHookRemoved { name: hook.name };
    owner.record(store, removed).await?;
    Ok(owner.redirect(Settings::Inbound, Some("removed")))
}

/// The project's webhook `id`, if it has one.
async fn owned<S: Store>(
    store: &S,
    owner: &Owner,
    id: &str,
) -> Result<Option<InboundHook>, Response> {
    let hooks = store
        .inbound_hooks(owner.project().id)
        .await
        .map_err(|e| owner.failure(e))?;
    Ok(hooks.into_iter().find(|h| h.id == id))
}

/// Saves `hook` and writes that to the audit log.
async fn keep<S: Store>(store: &S, owner: &Owner, hook: &InboundHook) -> Result<(), Response> {
    store
        .save_inbound_hook(hook)
        .await
        .map_err(|e| owner.failure(e))?;
    let saved = ProjectActivity::InboundHookSaved {
        name: hook.name.clone(),
    };
    owner.record(store, saved).await
}

/// The mapping as the form's lines.
fn mapping_text(hook: &InboundHook) -> String {
    let lines: Vec<String> = hook
        .mapping
        .iter()
        .map(|pair| format!("{}={}", pair.target, pair.source))
        .collect();
    lines.join("\n")
}

/// What `sample` (a JSON post to a `preset` hook) makes with `mapping`: the lead's fields, each as
/// `section.field`, or the problem.
fn preview(preset: Preset, mapping: &[leadtrack_core::mapping::FieldMap], sample: &str) -> Preview {
    let Ok(document) = serde_json::from_str::<Value>(sample) else {
        return Preview {
            fields: Vec::new(),
            problem: Some("The sample is not JSON: paste the body the tool posts.".to_owned()),
        };
    };
    let mapped = preset.map_post(mapping, &document);
    let mut fields = Vec::new();
    for (section, value) in &mapped.body {
        match value {
            Value::Object(inner) => fields.extend(
                inner
                    .iter()
                    .filter(|(name, _)| *name != "inbound")
                    .map(|(name, value)| (format!("{section}.{name}"), text(value))),
            ),
            value => fields.push((section.clone(), text(value))),
        }
    }
    let problem = mapped.lead().err().map(|err| sentence(&err.message));
    Preview { fields, problem }
}

/// A value as the preview writes it.
fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
