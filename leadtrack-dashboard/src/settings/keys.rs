//! API keys: the list, a new key (shown once), revoking one by its prefix.

use askama::Template;
use chrono::Utc;
use leadtrack_core::key::{KEY_PREFIX_LEN, KeyRef};
use leadtrack_core::store::{Conflict, Entity};
use leadtrack_core::{Admin, StoreError};
use warp::http::StatusCode;

use super::{Answer, Frame, Owner, notice, sentence};
use crate::Request;
use crate::format;
use crate::render::{self, Layout};
use crate::routes::Settings;
use crate::session::Form;

/// A key as the list shows it.
struct KeyRow {
    prefix: String,
    created: String,
    revoked: Option<String>,
}

#[derive(Template)]
#[template(path = "settings/keys.html")]
struct KeysPage {
    layout: Layout,
    frame: Frame,
    keys: Vec<KeyRow>,
    new_key: Option<String>,
    problem: Option<String>,
}

const NOTICES: &[(&str, &str)] = &[(
    "revoked",
    "Key revoked: requests that use it are refused from now on.",
)];

/// The keys page, newest key first, showing `new_key` once or the revocation's `problem`.
async fn keys_page<S: Admin>(
    store: &S,
    owner: &Owner,
    status: StatusCode,
    notice: Option<String>,
    new_key: Option<String>,
    problem: Option<String>,
) -> Answer {
    let keys = store
        .api_keys(owner.project().id)
        .await
        .map_err(|e| owner.failure(e))?;
    let keys = keys
        .iter()
        .rev()
        .map(|key| KeyRow {
            prefix: key.prefix.clone(),
            created: format::exact(&key.created_at),
            revoked: key.revoked_at.as_ref().map(format::exact),
        })
        .collect();
    let (layout, frame) = owner.frame(Settings::Keys, notice);
    Ok(render::page(
        status,
        &KeysPage {
            layout,
            frame,
            keys,
            new_key,
            problem,
        },
    ))
}

/// `GET keys`.
pub(super) async fn page<S: Admin>(store: &S, request: &Request, owner: Owner) -> Answer {
    let notice = notice(request, NOTICES);
    keys_page(store, &owner, StatusCode::OK, notice, None, None).await
}

/// `POST keys`: creates a key and shows it, once.
pub(super) async fn create<S: Admin>(store: &S, (owner, _): (Owner, Form)) -> Answer {
    let key = store
        .issue_api_key(owner.project().id, Utc::now())
        .await
        .map_err(|e| owner.failure(e))?;
    tracing::info!(user = %owner.viewer.user.id, prefix = %key.info.prefix, "API key created");
    keys_page(
        store,
        &owner,
        StatusCode::CREATED,
        None,
        Some(key.key),
        None,
    )
    .await
}

/// `POST keys/revoke`: revokes the key with the `prefix` given.
pub(super) async fn revoke<S: Admin>(store: &S, (owner, form): (Owner, Form)) -> Answer {
    let prefix = form.get("prefix").trim();
    let refused =
        |status, problem: String| keys_page(store, &owner, status, None, None, Some(problem));
    // A shorter prefix could name every key at once.
    if prefix.len() < KEY_PREFIX_LEN {
        let problem = format!("Name the key by its first {KEY_PREFIX_LEN} characters.");
        return refused(StatusCode::BAD_REQUEST, problem).await;
    }
    let revoked = store
        .revoke_api_key(owner.project().id, &KeyRef::parse(prefix), Utc::now())
        .await;
    match revoked {
        Ok(key) => {
            tracing::info!(user = %owner.viewer.user.id, prefix = %key.prefix, "API key revoked");
            Ok(owner.redirect(Settings::Keys, Some("revoked")))
        }
        Err(StoreError::NotFound(Entity::ApiKey)) => {
            let problem = "No key of this project starts with that prefix.".to_owned();
            refused(StatusCode::BAD_REQUEST, problem).await
        }
        Err(StoreError::Conflict(conflict @ Conflict::AmbiguousKey(_))) => {
            refused(StatusCode::CONFLICT, sentence(&conflict.to_string())).await
        }
        Err(err) => Err(owner.failure(err)),
    }
}
