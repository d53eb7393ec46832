//! Meta Lead Ads' webhook: the subscription check, and the signed posts announcing new
//! leads of the pages the projects set up
//! (<https://developers.facebook.com/docs/graph-api/webhooks/getting-started>,
//! <https://developers.facebook.com/docs/marketing-api/guides/lead-ads/retrieving/>).
//! An announcement names the lead, not its answers: each is queued for the
//! [`Fetcher`](crate::Fetcher), which reads it from the Graph API with the page's token.

use chrono::Utc;
use hmac::{Hmac, KeyInit, Mac};
use leadtrack_core::source::{NewLeadFetch, SourceKind};
use leadtrack_core::{Admin, ErrorCode, JobQueue, LeadStore};
use leadtrack_http::{Body, Request};
use serde_json::Value;
use sha2::Sha256;
use subtle::ConstantTimeEq;
use warp::http::{StatusCode, header};
use warp::reply::Response;

use crate::{BODY_LIMIT, MetaApp, store_error};

/// Meta's subscription check: `hub.mode=subscribe` with the app's verify token is
/// answered with `hub.challenge`, as text; anything else `403`.
pub(crate) fn subscription(app: &MetaApp, request: &Request) -> Response {
    let token = request.param("hub.verify_token").unwrap_or_default();
    let same: bool = token
        .as_bytes()
        .ct_eq(app.verify_token.expose().as_bytes())
        .into();
    match request.param("hub.challenge") {
        Some(challenge) if same && request.param("hub.mode").as_deref() == Some("subscribe") => {
            let mut answer = Response::new(challenge.into());
            answer.headers_mut().insert(
                header::CONTENT_TYPE,
                header::HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            answer
        }
        _ => {
            tracing::warn!("a Meta webhook subscription check with a wrong verify token refused");
            leadtrack_http::error(
                ErrorCode::InvalidApiKey,
                "The verify token is not this server's",
            )
        }
    }
}

/// A post announcing leads: verified by its `X-Hub-Signature-256` (HMAC-SHA256 of the
/// raw body with the app secret) before anything else, then each `leadgen` change queued
/// for every project that set its page up (`entry[].id`).
pub(crate) async fn announcement<S: LeadStore + Admin + JobQueue>(
    store: &S,
    app: &MetaApp,
    request: &Request,
    body: Body,
) -> Response {
    let bytes = match body.read(&request.headers, BODY_LIMIT).await {
        Ok(bytes) => bytes,
        Err(err) => return leadtrack_http::error(ErrorCode::PayloadTooLarge, err.to_string()),
    };
    let signature = request
        .headers
        .get("x-hub-signature-256")
        .and_then(|value| value.to_str().ok());
    let Some(signature) = signature else {
        tracing::warn!("an unsigned post to the Meta webhook refused");
        return leadtrack_http::error(
            ErrorCode::MissingApiKey,
            "The post has no X-Hub-Signature-256",
        );
    };
    if !signed_by(app, &bytes, signature) {
        tracing::warn!("a post to the Meta webhook with a wrong signature refused");
        return leadtrack_http::error(
            ErrorCode::InvalidApiKey,
            "The X-Hub-Signature-256 is not the app's",
        );
    }
    let Ok(posted) = serde_json::from_slice::<Value>(&bytes) else {
        return leadtrack_http::error(ErrorCode::InvalidJson, "The body is not JSON");
    };
    let now = Utc::now();
    let mut queued = 0;
    for (page, announced) in leadgen_changes(&posted) {
        let Some(leadgen_id) = text_id(&announced["leadgen_id"]) else {
            continue;
        };
        let projects = match store
            .lead_sources_routed(SourceKind::MetaLeadAds, &page)
            .await
        {
            Ok(projects) => projects,
            Err(err) => return store_error(&err),
        };
        if projects.is_empty() {
            tracing::info!(page, "a Meta lead of a page no project set up ignored");
        }
        for (project, _) in projects {
            let fetch = NewLeadFetch {
                kind: SourceKind::MetaLeadAds,
                external_id: leadgen_id.clone(),
                announced: announced.clone(),
            };
            match store.queue_lead_fetch(project, &fetch, now).await {
                Ok(new) => queued += usize::from(new),
                Err(err) => return store_error(&err),
            }
        }
    }
    leadtrack_http::json(StatusCode::OK, &serde_json::json!({"queued": queued}))
}

/// Whether `signature` (`sha256=` and the hex digest) is the app secret's HMAC-SHA256 of
/// `body`, compared in constant time.
fn signed_by(app: &MetaApp, body: &[u8], signature: &str) -> bool {
    let Some(digest) = signature
        .strip_prefix("sha256=")
        .and_then(|hex| hex::decode(hex).ok())
    else {
        return false;
    };
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(app.app_secret.expose().as_bytes()) else {
        return false;
    };
    mac.update(body);
    mac.verify_slice(&digest).is_ok()
}

/// The `leadgen` changes of a post, each with its page's id: `entry[].id` and
/// `entry[].changes[].value`.
fn leadgen_changes(posted: &Value) -> Vec<(String, Value)> {
    let mut changes = Vec::new();
    let entries = posted.get("entry").and_then(Value::as_array);
    for entry in entries.into_iter().flatten() {
        let Some(page) = text_id(&entry["id"]) else {
            continue;
        };
        let listed = entry.get("changes").and_then(Value::as_array);
        for change in listed.into_iter().flatten() {
            if change["field"] == "leadgen" {
                changes.push((page.clone(), change["value"].clone()));
            }
        }
    }
    changes
}

/// An id Meta writes as text (or, in older samples, as a number).
fn text_id(value: &Value) -> Option<String> {
    match value {
        Value::String(id) if !id.is_empty() => Some(id.clone()),
        Value::Number(id) => Some(id.to_string()),
        _ => None,
    }
}
