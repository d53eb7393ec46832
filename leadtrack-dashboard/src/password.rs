//! Forgotten passwords: `GET /password/forgot` asks for the account's email, and `POST`
//! sends a reset link to it; `GET /password/reset/{token}` asks for a new password, and
//! `POST` sets it, ends every other session of the account and signs this browser in.
//!
//! The answer to a request is the same page whether or not an account has the email, and
//! comes as fast: the message is made and sent after the answer, on a task of its own.
//! Without a mailer or a public URL nothing is sent (the server's admin makes a link with
//! `server user reset-link`).
//!
//! Requests are limited per email and per client address ([`Config::reset_throttle`],
//! kept in the store like the sign-in throttle); past a limit the answer is the same page
//! and nothing is sent. A link sent less than [`RESET_KEPT_FOR`] ago stays the one that
//! works: asking again then sends nothing, so nobody can flood an inbox or void the link
//! its owner is about to follow.

use askama::Template;
use chrono::Utc;
use leadtrack_core::account::{Password, Throttled, email_key};
use leadtrack_core::link::{AccountLink, LinkKind, LinkToken, RESET_KEPT_FOR};
use leadtrack_core::store::Entity;
use leadtrack_core::{Accounts, Store, StoreError};
use leadtrack_http::Body;
use warp::http::StatusCode;
use warp::http::header;
use warp::reply::Response;

use crate::render::{self, Layout};
use crate::routes::Route;
use crate::session;
use crate::viewer::Viewer;
use crate::{Config, Request, mail};

#[derive(Template)]
#[template(path = "password.html")]
struct PasswordPage {
    layout: Layout,
    /// The forgot form (`None`), or a reset link's form (its path).
    reset_action: Option<String>,
    /// The email asked about, once the request is answered.
    asked: Option<String>,
    problem: Option<String>,
}

fn password_page(
    status: StatusCode,
    viewer: Option<&Viewer>,
    reset_action: Option<String>,
    asked: Option<String>,
    problem: Option<String>,
) -> Response {
    let title = if reset_action.is_some() {
        "Choose a new password"
    } else {
        "Reset your password"
    };
    let mut response = render::page(
        status,
        &PasswordPage {
            layout: Layout::new(title, viewer),
            reset_action,
            asked,
            problem,
        },
    );
    render::no_store(&mut response);
    response
}

/// The answer to a reset link that does not work.
fn gone() -> Response {
    render::error(
        StatusCode::GONE,
        None,
        "This reset link no longer works",
        "It was used already, replaced by a newer one, or it expired after an hour. Ask for \
         a new one from the sign-in page.",
    )
}

/// `GET /password/forgot`.
pub(crate) async fn forgot_form<S: Accounts>(store: &S, request: &Request) -> Response {
    match session::viewer(store, request).await {
        Ok(viewer) => password_page(StatusCode::OK, viewer.as_ref(), None, None, None),
        Err(err) => render::store_failure(err, None),
    }
}

/// `POST /password/forgot`: the same answer for every well-formed email.
pub(crate) async fn forgot<S: Store + Clone>(
    store: &S,
    config: &Config,
    request: &Request,
    body: Body,
) -> Response {
    let form = match session::anonymous_form(request, config, body).await {
        Ok(form) => form,
        Err(response) => return response,
    };
    let email = form.get("email").trim().to_owned();
    if leadtrack_core::account::validate_email(&email).is_err() {
        let problem = "Enter the email you sign in with.".to_owned();
        return password_page(StatusCode::BAD_REQUEST, None, None, None, Some(problem));
    }
    let address = crate::viewer::client_address(request, config);
    let counted = match counted(store, config, &email, &address).await {
        Ok(counted) => counted,
        Err(err) => return render::store_failure(err, None),
    };
    if let (true, Some(site), Some(_)) = (counted, &config.public_url, &config.mailer) {
        let (store, config, site, to) =
            (store.clone(), config.clone(), site.clone(), email.clone());
        tokio::spawn(async move { send_reset(&store, &config, &site, &to).await });
    }
    password_page(StatusCode::OK, None, None, Some(email), None)
}

/// Whether a request for `email` from `address` is within the limits, and if so counts
/// it.
async fn counted<S: Accounts>(
    store: &S,
    config: &Config,
    email: &str,
    address: &str,
) -> Result<bool, StoreError> {
    let (limits, now) = (config.reset_throttle, Utc::now());
    let what = Throttled::ResetRequest;
    let earlier = store
        .throttled_attempts(what, email, address, now - limits.window)
        .await?;
    if limits.retry_after(&earlier, now).is_some() {
        tracing::warn!("a password reset request is past its limits; nothing is sent");
        return Ok(false);
    }
    store.record_throttled(what, email, address, now).await?;
    Ok(true)
}

/// Makes a reset link for the account with the email `to`, if there is one, and sends it.
async fn send_reset<S: Accounts>(store: &S, config: &Config, site: &str, to: &str) {
    let user = match store.user_by_email(&email_key(to)).await {
        Ok(user) if !user.disabled => user,
        Ok(_) | Err(StoreError::NotFound(Entity::User)) => return,
        Err(err) => {
            tracing::warn!(error = %err, "no reset link was made");
            return;
        }
    };
    let (token, now) = (LinkToken::generate(), Utc::now());
    let issued = store
        .issue_link_unless_recent(
            user.id,
            &AccountLink::PasswordReset,
            &token.hash(),
            now,
            now - RESET_KEPT_FOR,
        )
        .await;
    match issued {
        Ok(true) => {}
        Ok(false) => {
            tracing::info!(user = %user.id, "the reset link sent last still works; none sent");
            return;
        }
        Err(err) => {
            tracing::warn!(error = %err, "no reset link was made");
            return;
        }
    }
    let url = LinkKind::PasswordReset.url(site, &token);
    let message = mail::password_reset(&user.email, &user.name, &url);
    if mail::deliver(config, &message).await == mail::Delivery::Sent {
        tracing::info!(user = %user.id, "password reset link sent");
    }
}

/// `GET /password/reset/{token}`.
pub(crate) async fn reset_form<S: Accounts>(store: &S, request: &Request, token: &str) -> Response {
    if LinkToken::parse(token).is_none() {
        return gone();
    }
    match session::viewer(store, request).await {
        Ok(viewer) => {
            let action = Some(request.path.clone());
            password_page(StatusCode::OK, viewer.as_ref(), action, None, None)
        }
        Err(err) => render::store_failure(err, None),
    }
}

/// `POST /password/reset/{token}`: the new password, every session of the account ended,
/// and this browser signed in.
pub(crate) async fn reset<S: Accounts>(
    store: &S,
    config: &Config,
    request: &Request,
    token: &str,
    body: Body,
) -> Response {
    let Some(token) = LinkToken::parse(token) else {
        return gone();
    };
    let form = match session::anonymous_form(request, config, body).await {
        Ok(form) => form,
        Err(response) => return response,
    };
    let password = match Password::new(form.get("password")) {
        Ok(password) => password,
        Err(problem) => {
            let (action, problem) = (
                Some(request.path.clone()),
                crate::settings::sentence(&problem),
            );
            return password_page(StatusCode::BAD_REQUEST, None, action, None, Some(problem));
        }
    };
    let Ok(hash) = tokio::task::spawn_blocking(move || password.hash()).await else {
        return render::store_failure(StoreError::Unavailable("hashing".into()), None);
    };
    let user = match store.reset_password(&token.hash(), &hash, Utc::now()).await {
        Ok(user) => user,
        Err(StoreError::NotFound(Entity::Link)) => return gone(),
        Err(err) => return render::store_failure(err, None),
    };
    tracing::info!(user = %user.id, "password reset");
    let cookie = match session::start(store, config, request, user.id).await {
        Ok(cookie) => cookie,
        Err(err) => return render::store_failure(err, None),
    };
    let mut response = render::redirect(&Route::Projects.path());
    response.headers_mut().insert(header::SET_COOKIE, cookie);
    response
}
