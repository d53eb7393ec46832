//! Signing in and out.
//!
//! A failed sign-in says the same whether or not the email has an account, and takes as
//! long (a decoy hash is verified for unknown emails). Failures are counted per email and
//! per client address in the store, so the throttle holds across restarts and across
//! servers sharing one database; past it, every attempt (the right password too) gets
//! `429` with `Retry-After` until the window has passed.

use askama::Template;
use chrono::Utc;
use leadtrack_core::account::{PasswordHash, Throttled, User, email_key};
use leadtrack_core::store::Entity;
use leadtrack_core::{Accounts, StoreError};
use leadtrack_http::Body;
use warp::http::StatusCode;
use warp::http::header::{self, HeaderValue};
use warp::reply::Response;

use crate::render::{self, Layout};
use crate::routes::{Links, Route};
use crate::session::{self, Form};
use crate::{Config, Request};

/// The one message of every failed sign-in.
const NO_MATCH: &str = "That email and password do not match an account.";

#[derive(Template)]
#[template(path = "login.html")]
struct LoginPage<'a> {
    layout: Layout,
    email: &'a str,
    next: &'a str,
    problem: Option<String>,
}

fn login_page(status: StatusCode, email: &str, next: &str, problem: Option<String>) -> Response {
    render::page(
        status,
        &LoginPage {
            layout: Layout::new("Sign in", None),
            email,
            next,
            problem,
        },
    )
}

/// Whether `password` is the user's (one Argon2id verification, off the async threads).
pub(crate) async fn verify<S: Accounts>(
    store: &S,
    user: &User,
    password: &str,
) -> Result<bool, StoreError> {
    Ok(matches(store.password_hash(user.id).await?, password).await)
}

/// Where to go after signing in: `next` when it is a path on this site, else `/`.
/// Anything that a browser could read as another site (`//host`, `/\host`, a scheme) is
/// refused.
fn local_path(next: &str) -> &str {
    let local = next.starts_with('/')
        && !next.starts_with("//")
        && !next.contains('\\')
        && next.len() <= 2048
        && !next.chars().any(char::is_control);
    if local { next } else { "/" }
}

/// `GET /login`: the form, or straight on for a user who is signed in.
pub(crate) async fn form<S: Accounts>(store: &S, _config: &Config, request: &Request) -> Response {
    let next = request.param("next").unwrap_or_default();
    match session::viewer(store, request).await {
        Ok(Some(_)) => render::redirect(local_path(&next)),
        Ok(None) => login_page(StatusCode::OK, "", local_path(&next), None),
        Err(err) => render::store_failure(err, None),
    }
}

/// `POST /login`.
pub(crate) async fn sign_in<S: Accounts>(
    store: &S,
    config: &Config,
    request: &Request,
    body: Body,
) -> Response {
    let form = match session::anonymous_form(request, config, body).await {
        Ok(form) => form,
        Err(response) => return response,
    };
    match attempt(store, config, request, &form).await {
        Ok(response) => response,
        Err(err) => render::store_failure(err, None),
    }
}

async fn attempt<S: Accounts>(
    store: &S,
    config: &Config,
    request: &Request,
    form: &Form,
) -> Result<Response, StoreError> {
    let (email, password) = (form.get("email").trim(), form.get("password"));
    let next = local_path(form.get("next"));
    let address = crate::viewer::client_address(request, config);
    let now = Utc::now();

    let failures = store
        .throttled_attempts(
            Throttled::FailedSignIn,
            email,
            &address,
            now - config.throttle.window,
        )
        .await?;
    if let Some(wait) = config.throttle.retry_after(&failures, now) {
        tracing::warn!("sign-in refused by the throttle");
        let minutes = (wait.num_seconds() + 59) / 60;
        let problem = format!(
            "Too many failed sign-ins. Try again in {minutes} minute{}.",
            if minutes == 1 { "" } else { "s" }
        );
        let mut response = login_page(StatusCode::TOO_MANY_REQUESTS, email, next, Some(problem));
        if let Ok(value) = HeaderValue::from_str(&wait.num_seconds().max(1).to_string()) {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        return Ok(response);
    }

    let Some(user) = check_password(store, email, password).await? else {
        store
            .record_throttled(Throttled::FailedSignIn, email, &address, now)
            .await?;
        tracing::info!("sign-in failed");
        return Ok(login_page(
            StatusCode::UNAUTHORIZED,
            email,
            next,
            Some(NO_MATCH.to_owned()),
        ));
    };
    let cookie = session::start(store, config, request, user.id).await?;
    tracing::info!(user = %user.id, "signed in");
    // Someone in one project has nothing to choose: straight to its inbox.
    let landing = match store.memberships(user.id).await?.as_slice() {
        [only] if next == "/" => Links::new(&only.project.public_id).inbox(),
        _ => next.to_owned(),
    };
    let mut response = render::redirect(&landing);
    response.headers_mut().insert(header::SET_COOKIE, cookie);
    Ok(response)
}

/// The user whose password this is, if the email names an enabled user and the password
/// matches. Costs one Argon2id verification whatever the outcome.
async fn check_password<S: Accounts>(
    store: &S,
    email: &str,
    password: &str,
) -> Result<Option<User>, StoreError> {
    let user = match store.user_by_email(&email_key(email)).await {
        Ok(user) => Some(user),
        Err(StoreError::NotFound(Entity::User)) => None,
        Err(err) => return Err(err),
    };
    let hash = match &user {
        Some(user) => store.password_hash(user.id).await?,
        None => PasswordHash::decoy().clone(),
    };
    let matches = matches(hash, password).await;
    Ok(user.filter(|user| matches && !user.disabled))
}

/// Whether `password` is the one `hash` holds (one Argon2id verification, off the async
/// threads).
async fn matches(hash: PasswordHash, password: &str) -> bool {
    let password = password.to_owned();
    tokio::task::spawn_blocking(move || hash.verify(&password))
        .await
        .unwrap_or(false)
}

/// `POST /logout`: ends every session of the user (on every device) and clears the cookie.
pub(crate) async fn sign_out<S: Accounts>(
    store: &S,
    config: &Config,
    request: &Request,
    body: Body,
) -> Response {
    let viewer = match session::viewer(store, request).await {
        Ok(Some(viewer)) => viewer,
        Ok(None) => return render::redirect(&Route::SignInForm.href(&[])),
        Err(err) => return render::store_failure(err, None),
    };
    let form = match session::read_form(request, config, body).await {
        Ok(form) => form,
        Err(response) => return response,
    };
    if !session::genuine_form(request, config, &viewer, &form) {
        return render::forged(Some(&viewer));
    }
    if let Err(err) = store.end_sessions(viewer.user.id).await {
        return render::store_failure(err, Some(&viewer));
    }
    tracing::info!(user = %viewer.user.id, "signed out");
    let mut response = render::redirect(&Route::SignInForm.href(&[]));
    response.headers_mut().insert(
        header::SET_COOKIE,
        session::cleared_cookie(session::is_https(request, config)),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::local_path;

    #[test]
    fn only_local_paths_are_followed() {
        for local in ["/", "/projects/acme", "/projects/acme?tab=open#x"] {
            assert_eq!(local_path(local), local);
        }
        for foreign in [
            "",
            "https://evil.example",
            "//evil.example",
            "/\\evil.example",
            "\\\\evil.example",
            "javascript:alert(1)",
            "/a\nb",
        ] {
            assert_eq!(local_path(foreign), "/", "{foreign:?}");
        }
    }
}
