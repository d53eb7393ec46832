//! REST hooks (`/api/hooks`): the subscriptions Zapier, Make and n8n make to a project's
//! lead events with its API key, per <https://resthooks.org/docs/>: subscribe with a target
//! and an event, list, unsubscribe by id, and a sample of each event for mapping fields.
//! A hook is a lead webhook ([`leadtrack_core::webhook`]) that posts one event, signed and
//! retried like the others.

use bytes::Bytes;
use chrono::Utc;
use leadtrack_core::api::{GetHooksResponse, Hook};
use leadtrack_core::request::hook::{hook_from_body, sample_event};
use leadtrack_core::{ErrorCode, LeadStore, LeadWebhooks, StoreError};
use uuid::Uuid;
use warp::http::StatusCode;
use warp::reply::Response;

use crate::reply::{self, ApiError};
use crate::request::{self, Api, authenticate, read_json_body};
use leadtrack_http::{Body, Request};

/// `POST /api/hooks`: `201` with the hook and the secret its posts are signed with.
pub(crate) async fn create<S: LeadStore + LeadWebhooks>(
    api: &Api<S>,
    request: &Request,
    body: Body,
) -> Result<Response, ApiError> {
    let project = authenticate(&api.store, &api.limiters, &request.headers).await?;
    let body: Bytes = read_json_body(&api.config, request, body).await?;
    let new = hook_from_body(&body, &api.config.targets)?;
    let webhook = match api.store.create_webhook(project.id, new, Utc::now()).await {
        // The body was checked above: what the store still refuses is the hooks' limit.
        Err(StoreError::Invalid(message)) => {
            return Err(ApiError::new(
                ErrorCode::TooManyHooks,
                upper_first(&message),
            ));
        }
        other => other?,
    };
    let hook = Hook::subscribed(&webhook).ok_or_else(ApiError::internal)?;
    tracing::info!(hook = %hook.id, event = %hook.event, "REST hook subscribed");
    Ok(reply::json(StatusCode::CREATED, &hook))
}

/// `GET /api/hooks`: the key's project's REST hooks, oldest first, without secrets.
pub(crate) async fn list<S: LeadStore + LeadWebhooks>(
    api: &Api<S>,
    request: &Request,
) -> Result<Response, ApiError> {
    let project = authenticate(&api.store, &api.limiters, &request.headers).await?;
    let hooks = rest_hooks(api, project.id).await?;
    Ok(reply::json(StatusCode::OK, &GetHooksResponse { hooks }))
}

/// `DELETE /api/hooks/{id}`: `204` once the hook is gone, with the events not yet posted
/// to it; `404 hook_not_found` for an id that is no REST hook of the key's project.
pub(crate) async fn delete<S: LeadStore + LeadWebhooks>(
    api: &Api<S>,
    request: &Request,
    id: &str,
) -> Result<Response, ApiError> {
    let project = authenticate(&api.store, &api.limiters, &request.headers).await?;
    let not_found = || ApiError::new(ErrorCode::HookNotFound, "Hook not found");
    let id = Uuid::parse_str(id).map_err(|_| not_found())?;
    let hooks = rest_hooks(api, project.id).await?;
    if !hooks.iter().any(|hook| hook.id == id) || !api.store.remove_webhook(project.id, id).await? {
        return Err(not_found());
    }
    tracing::info!(hook = %id, "REST hook unsubscribed");
    let mut response = Response::new(Vec::new().into());
    *response.status_mut() = StatusCode::NO_CONTENT;
    Ok(response)
}

/// `GET /api/hooks/sample?event=…`: a list of one sample payload of the event, as a hook
/// of the key's project would receive it (Zapier's `performList` shows it while a person
/// maps fields).
pub(crate) async fn sample<S: LeadStore>(
    api: &Api<S>,
    request: &Request,
) -> Result<Response, ApiError> {
    let project = authenticate(&api.store, &api.limiters, &request.headers).await?;
    let event = sample_event(request::query_pairs(&request.query))?;
    let body = leadtrack_core::api::sample(event, &project, Utc::now());
    Ok(reply::json(StatusCode::OK, &[body]))
}

/// The project's webhooks that are REST hooks.
async fn rest_hooks<S: LeadWebhooks>(
    api: &Api<S>,
    project: leadtrack_core::ProjectId,
) -> Result<Vec<Hook>, ApiError> {
    let webhooks = api.store.webhooks(project).await?;
    Ok(webhooks
        .iter()
        .filter_map(|s| Hook::of(&s.webhook))
        .collect())
}

/// `message` as a sentence: its first letter in upper case.
fn upper_first(message: &str) -> String {
    let mut chars = message.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}
