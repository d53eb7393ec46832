//! The signed-in user's own account: their name, their email (changed once a link sent to
//! the new address is followed), their password, and their sessions.
//!
//! | path | what |
//! |---|---|
//! | `GET /profile` | the page |
//! | `POST /profile/name` | renames |
//! | `POST /profile/alerts` | what one is alerted of in a project (`project`): new leads (`new_leads`: `instant`, `hourly`, `off`), leads assigned to one (`assigned`), next steps due on one's leads (`next_steps`), failed conversions (`failures`, owners) |
//! | `POST /profile/email` | with the current password: sends a confirmation link to the new email |
//! | `GET /profile/email/{token}`, `POST` | confirms the new email (from any browser) |
//! | `POST /profile/password` | with the current password: sets a new one, ends the other sessions |
//! | `POST /profile/sessions/end-others` | signs out every other session |
//!
//! Asking for the current password goes through the sign-in throttle: a wrong one counts as
//! a failed sign-in of the account, so a borrowed session cannot guess it.

use askama::Template;
use chrono::{DurationRound, TimeDelta, Utc};
use leadtrack_core::account::{SessionInfo, Throttled};
use leadtrack_core::alert::{AlertPreferences, NewLeads};
use leadtrack_core::link::{AccountLink, LinkKind, LinkToken};
use leadtrack_core::store::{Conflict, Entity};
use leadtrack_core::types::Role;
use leadtrack_core::{Accounts, Store, StoreError};
use leadtrack_http::{Body, Params};
use warp::http::StatusCode;
use warp::http::header;
use warp::reply::Response;

use crate::render::{self, Layout};
use crate::routes::{Profile, Route};
use crate::session::{self, Form};
use crate::settings::{Problems, sentence};
use crate::viewer::Viewer;
use crate::{Config, Request, access, format, login, mail};

/// A session as the page lists it.
struct SessionRow {
    device: String,
    address: String,
    signed_in: String,
    last_seen: String,
    current: bool,
}

/// A project's alerts as the profile's form shows them.
struct AlertsRow {
    public_id: String,
    name: String,
    new_leads: NewLeads,
    assigned: bool,
    failures: bool,
    next_steps: bool,
    owner: bool,
}

impl AlertsRow {
    /// Whether new leads are told as `choice` (`instant`, `hourly`, `off`) says.
    fn chose(&self, choice: &str) -> bool {
        self.new_leads.as_ref() == choice
    }
}

#[derive(Template)]
#[template(path = "profile.html")]
struct ProfilePage {
    layout: Layout,
    csrf: String,
    user_name: String,
    email: String,
    new_email: String,
    sessions: Vec<SessionRow>,
    /// One alerts form per project.
    alerts: Vec<AlertsRow>,
    notice: Option<&'static str>,
    /// A confirmation link that could not be sent, to follow from here.
    link: Option<String>,
    problems: Problems,
}

const NOTICES: &[(&str, &str)] = &[
    ("name", "Name changed."),
    (
        "email-sent",
        "We sent a link to your new email. Your email changes when you follow it.",
    ),
    (
        "email",
        "Email changed: sign in with the new one from now on.",
    ),
    (
        "password",
        "Password changed. Your other sessions were signed out.",
    ),
    ("sessions", "Every other session was signed out."),
    ("alerts", "Alerts saved."),
];

/// Answers a profile `page`.
pub(crate) async fn handle<S: Store>(
    store: &S,
    config: &Config,
    request: &Request,
    page: Profile,
    params: &Params<'_>,
    body: Body,
) -> Response {
    let token = params.get("token");
    let answer = async {
        match page {
            Profile::Page => {
                let viewer = access::signed_in(store, request).await?;
                let notice = request.param("saved").and_then(|saved| {
                    NOTICES
                        .iter()
                        .find(|(key, _)| *key == saved)
                        .map(|(_, n)| *n)
                });
                profile_page(store, &viewer, StatusCode::OK, notice, Outcome::default()).await
            }
            Profile::Alerts => {
                alerts(
                    store,
                    access::user_form(store, config, request, body).await?,
                )
                .await
            }
            Profile::Name => {
                rename(
                    store,
                    access::user_form(store, config, request, body).await?,
                )
                .await
            }
            Profile::Email => {
                let form = access::user_form(store, config, request, body).await?;
                change_email(store, config, request, form).await
            }
            Profile::Password => {
                let form = access::user_form(store, config, request, body).await?;
                change_password(store, config, request, form).await
            }
            Profile::EndOtherSessions => {
                let (viewer, _) = access::user_form(store, config, request, body).await?;
                store
                    .end_other_sessions(viewer.user.id, &viewer.token.hash())
                    .await
                    .map_err(|err| render::store_failure(err, Some(&viewer)))?;
                Ok(saved("sessions"))
            }
            Profile::ConfirmEmailForm => Ok(confirm_form(request, token)),
            Profile::ConfirmEmail => confirm(store, config, request, token, body).await,
        }
    }
    .await;
    answer.unwrap_or_else(|response| response)
}

type Answer = Result<Response, Response>;

/// What the forms hold after a failed or half-done submission.
#[derive(Default)]
struct Outcome {
    new_email: String,
    link: Option<String>,
    problems: Problems,
}

/// The profile page.
async fn profile_page<S: Accounts>(
    store: &S,
    viewer: &Viewer,
    status: StatusCode,
    notice: Option<&'static str>,
    outcome: Outcome,
) -> Answer {
    let now = Utc::now();
    let current = viewer.token.hash();
    let sessions = store
        .sessions(viewer.user.id, now)
        .await
        .map_err(|err| render::store_failure(err, Some(viewer)))?
        .iter()
        .map(|info: &SessionInfo| SessionRow {
            device: device(&info.device.user_agent),
            address: info.device.address.clone(),
            signed_in: format::exact(&info.session.created_at),
            last_seen: format::relative(&info.session.last_seen_at, now),
            current: info.hash == current,
        })
        .collect();
    let alerts = store
        .memberships(viewer.user.id)
        .await
        .map_err(|err| render::store_failure(err, Some(viewer)))?
        .into_iter()
        .map(|membership| AlertsRow {
            public_id: membership.project.public_id,
            name: membership.project.name,
            new_leads: membership.alerts.new_leads,
            assigned: membership.alerts.assigned,
            failures: membership.alerts.failures,
            next_steps: membership.alerts.next_steps,
            owner: membership.role == Role::Owner,
        })
        .collect();
    let mut response = render::page(
        status,
        &ProfilePage {
            layout: Layout::new("Your profile", Some(viewer)),
            csrf: viewer.csrf(),
            user_name: viewer.user.name.clone(),
            email: viewer.user.email.clone(),
            new_email: outcome.new_email,
            sessions,
            alerts,
            notice,
            link: outcome.link,
            problems: outcome.problems,
        },
    );
    render::no_store(&mut response);
    Ok(response)
}

/// `POST /profile/alerts`: what the viewer is alerted of in the form's project. Choosing
/// the hourly digest starts it with the current hour.
async fn alerts<S: Accounts>(store: &S, (viewer, form): (Viewer, Form)) -> Answer {
    let failure = |err| render::store_failure(err, Some(&viewer));
    let membership = match store.membership(viewer.user.id, form.get("project")).await {
        Ok(membership) => membership,
        Err(StoreError::NotFound(_)) => return Err(render::not_found(Some(&viewer))),
        Err(err) => return Err(failure(err)),
    };
    let Ok(new_leads) = form.get("new_leads").parse::<NewLeads>() else {
        return Err(render::not_found(Some(&viewer)));
    };
    let before = &membership.alerts;
    let digest_until = match (new_leads, before.new_leads) {
        (NewLeads::Hourly, NewLeads::Hourly) => before.digest_until,
        (NewLeads::Hourly, _) => Utc::now().duration_trunc(TimeDelta::hours(1)).ok(),
        _ => None,
    };
    let alerts = AlertPreferences {
        new_leads,
        assigned: !form.get("assigned").is_empty(),
        failures: !form.get("failures").is_empty(),
        next_steps: !form.get("next_steps").is_empty(),
        digest_until,
    };
    store
        .set_alerts(membership.project.id, viewer.user.id, &alerts)
        .await
        .map_err(failure)?;
    Ok(render::redirect(&format!(
        "{}#alerts",
        saved_path("alerts")
    )))
}

/// A browser and system named from a `User-Agent`, as people say them ("Firefox on
/// Linux"); `Unknown browser` when it names neither.
fn device(user_agent: &str) -> String {
    // Order matters: Edge and Chrome also say "Safari", Edge also says "Chrome".
    let browser = [
        ("Edg/", "Edge"),
        ("Firefox/", "Firefox"),
        ("Chrome/", "Chrome"),
        ("Safari/", "Safari"),
    ]
    .into_iter()
    .find(|(mark, _)| user_agent.contains(mark))
    .map(|(_, name)| name);
    let system = [
        ("Android", "Android"),
        ("iPhone", "iOS"),
        ("iPad", "iPadOS"),
        ("Windows", "Windows"),
        ("Mac OS X", "macOS"),
        ("CrOS", "ChromeOS"),
        ("Linux", "Linux"),
    ]
    .into_iter()
    .find(|(mark, _)| user_agent.contains(mark))
    .map(|(_, name)| name);
    match (browser, system) {
        (Some(browser), Some(system)) => format!("{browser} on {system}"),
        (Some(one), None) | (None, Some(one)) => one.to_owned(),
        (None, None) => "Unknown browser".to_owned(),
    }
}

/// `POST /profile/name`.
async fn rename<S: Accounts>(store: &S, (viewer, form): (Viewer, Form)) -> Answer {
    match store.set_name(viewer.user.id, form.get("name")).await {
        Ok(_) => Ok(saved("name")),
        Err(StoreError::Invalid(problem)) => {
            let outcome = Outcome {
                problems: Problems::one("name", sentence(&problem)),
                ..Outcome::default()
            };
            profile_page(store, &viewer, StatusCode::BAD_REQUEST, None, outcome).await
        }
        Err(err) => Err(render::store_failure(err, Some(&viewer))),
    }
}

/// Whether `password` is the viewer's, through the sign-in throttle: `Err` with the page's
/// problem when it is not, or when too many guesses were made.
async fn current_password<S: Accounts>(
    store: &S,
    config: &Config,
    request: &Request,
    viewer: &Viewer,
    password: &str,
) -> Result<Result<(), String>, StoreError> {
    let (email, address, now) = (
        &viewer.user.email,
        crate::viewer::client_address(request, config),
        Utc::now(),
    );
    let failures = store
        .throttled_attempts(
            Throttled::FailedSignIn,
            email,
            &address,
            now - config.throttle.window,
        )
        .await?;
    if config.throttle.retry_after(&failures, now).is_some() {
        return Ok(Err(
            "Too many wrong passwords. Try again in a few minutes.".to_owned()
        ));
    }
    if login::verify(store, &viewer.user, password).await? {
        return Ok(Ok(()));
    }
    store
        .record_throttled(Throttled::FailedSignIn, email, &address, now)
        .await?;
    Ok(Err("That is not your current password.".to_owned()))
}

/// `POST /profile/email`: sends a confirmation link to the new email, or shows it when it
/// could not be sent.
async fn change_email<S: Accounts>(
    store: &S,
    config: &Config,
    request: &Request,
    (viewer, form): (Viewer, Form),
) -> Answer {
    let fail = |status| store_failure_for(&viewer, status);
    let new_email = form.get("email").trim().to_owned();
    let mut outcome = Outcome {
        new_email: new_email.clone(),
        ..Outcome::default()
    };
    let link = match AccountLink::email_change(&new_email) {
        Ok(link) => link,
        Err(_) => {
            outcome.problems.add("email", "Enter an email address.");
            return profile_page(store, &viewer, StatusCode::BAD_REQUEST, None, outcome).await;
        }
    };
    let checked = current_password(store, config, request, &viewer, form.get("password"))
        .await
        .map_err(fail)?;
    if let Err(problem) = checked {
        outcome.problems.add("email-password", problem);
        return profile_page(store, &viewer, StatusCode::BAD_REQUEST, None, outcome).await;
    }
    match store.user_by_email(&new_email).await {
        Ok(other) if other.id != viewer.user.id => {
            outcome
                .problems
                .add("email", "Another account has this email.");
            return profile_page(store, &viewer, StatusCode::CONFLICT, None, outcome).await;
        }
        Ok(_) | Err(StoreError::NotFound(Entity::User)) => {}
        Err(err) => return Err(fail(err)),
    }
    let token = LinkToken::generate();
    store
        .issue_link(viewer.user.id, &link, &token.hash(), Utc::now())
        .await
        .map_err(fail)?;
    let url = mail::link(config, request, LinkKind::EmailChange, &token);
    let message = mail::email_change(&new_email, &viewer.user.name, &url);
    match mail::deliver(config, &message).await {
        mail::Delivery::Sent => Ok(saved("email-sent")),
        // The user proved who they are with their password; with no way to send, the link
        // is theirs to follow.
        mail::Delivery::NoMailer | mail::Delivery::Failed => {
            outcome.link = Some(url);
            profile_page(store, &viewer, StatusCode::CREATED, None, outcome).await
        }
    }
}

/// A store failure, answered for `viewer`.
fn store_failure_for(viewer: &Viewer, err: StoreError) -> Response {
    render::store_failure(err, Some(viewer))
}

/// `POST /profile/password`: the new password; every other session ends, this one goes on
/// (as a new session).
async fn change_password<S: Accounts>(
    store: &S,
    config: &Config,
    request: &Request,
    (viewer, form): (Viewer, Form),
) -> Answer {
    let fail = |err| store_failure_for(&viewer, err);
    let mut outcome = Outcome::default();
    let checked = current_password(store, config, request, &viewer, form.get("current"))
        .await
        .map_err(fail)?;
    let new = leadtrack_core::account::Password::new(form.get("password"));
    match (checked, new) {
        (Err(problem), _) => outcome.problems.add("current", problem),
        (Ok(()), Err(problem)) => outcome.problems.add("password", sentence(&problem)),
        (Ok(()), Ok(password)) => {
            let hash = tokio::task::spawn_blocking(move || password.hash())
                .await
                .map_err(|_| fail(StoreError::Unavailable("hashing".into())))?;
            store
                .set_password(viewer.user.id, &hash)
                .await
                .map_err(fail)?;
            let cookie = session::start(store, config, request, viewer.user.id)
                .await
                .map_err(fail)?;
            tracing::info!(user = %viewer.user.id, "password changed");
            let mut response = saved("password");
            response.headers_mut().insert(header::SET_COOKIE, cookie);
            return Ok(response);
        }
    }
    profile_page(store, &viewer, StatusCode::BAD_REQUEST, None, outcome).await
}

#[derive(Template)]
#[template(path = "confirm_email.html")]
struct ConfirmPage {
    layout: Layout,
    action: String,
}

/// The answer to a confirmation link that does not work.
fn gone() -> Response {
    render::error(
        StatusCode::GONE,
        None,
        "This confirmation link no longer works",
        "It was used already, replaced by a newer one, or it expired after 24 hours. Ask for \
         a new one from your profile.",
    )
}

/// `GET /profile/email/{token}`: a button, so that a mail scanner fetching the link
/// confirms nothing.
fn confirm_form(request: &Request, token: &str) -> Response {
    if LinkToken::parse(token).is_none() {
        return gone();
    }
    let mut response = render::page(
        StatusCode::OK,
        &ConfirmPage {
            layout: Layout::new("Confirm your new email", None),
            action: request.path.clone(),
        },
    );
    render::no_store(&mut response);
    response
}

/// `POST /profile/email/{token}`.
async fn confirm<S: Accounts>(
    store: &S,
    config: &Config,
    request: &Request,
    token: &str,
    body: Body,
) -> Answer {
    let token = LinkToken::parse(token).ok_or_else(gone)?;
    session::anonymous_form(request, config, body).await?;
    match store.confirm_email(&token.hash(), Utc::now()).await {
        Ok(user) => {
            tracing::info!(user = %user.id, "email changed");
            Ok(saved("email"))
        }
        Err(StoreError::NotFound(Entity::Link)) => Err(gone()),
        Err(StoreError::Conflict(Conflict::UserExists(_))) => Err(render::error(
            StatusCode::CONFLICT,
            None,
            "This email is taken",
            "Another account has signed up with this email since you asked for it. Your \
             email stays as it was.",
        )),
        Err(err) => Err(render::store_failure(err, None)),
    }
}

/// The profile, confirming what `saved` names.
fn saved_path(saved: &str) -> String {
    format!("{}?saved={saved}", Route::Profile(Profile::Page).href(&[]))
}

/// `303` to the profile, confirming what `saved` names.
fn saved(saved: &str) -> Response {
    render::redirect(&saved_path(saved))
}

#[cfg(test)]
mod tests {
    use super::device;

    #[test]
    fn devices_are_named_as_people_say_them() {
        for (agent, named) in [
            (
                "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
                "Firefox on Linux",
            ),
            (
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36 Edg/131.0",
                "Edge on Windows",
            ),
            (
                "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Version/17.0 Mobile/15E148 Safari/604.1",
                "Safari on iOS",
            ),
            ("curl/8.5.0", "Unknown browser"),
        ] {
            assert_eq!(device(agent), named, "{agent}");
        }
    }
}
