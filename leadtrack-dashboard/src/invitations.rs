//! Taking an invitation: `GET /invitations/{token}` shows who invites whom to which project,
//! and `POST` joins it.
//!
//! - Someone without an account sets a name and a password, and lands in the project,
//!   signed in.
//! - Someone with an account signs in first (through the sign-in page and its throttle, which
//!   brings them back here), then joins with one button. Only the invitee's own account can
//!   take the invitation.
//! - A link that no longer works (taken, revoked, sent again, expired, or never made) gets
//!   `410` and one sentence for all of these.

use askama::Template;
use chrono::Utc;
use leadtrack_core::account::{Actor, NewUser, Password, User};
use leadtrack_core::activity::{Attribution, ProjectActivity};
use leadtrack_core::link::{Acceptance, Invitation, LinkHash, LinkToken};
use leadtrack_core::project::Project;
use leadtrack_core::store::{Conflict, Entity};
use leadtrack_core::types::Role;
use leadtrack_core::{Store, StoreError};
use leadtrack_http::Body;
use warp::http::StatusCode;
use warp::http::header;
use warp::reply::Response;

use crate::render::{self, Layout};
use crate::routes::{Links, Route};
use crate::session::{self, Form};
use crate::viewer::Viewer;
use crate::{Config, Request};

/// How the invitee takes the invitation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// No account has the email: set one up.
    SetUp,
    /// An account has it, and its user is not signed in here: sign in first.
    SignIn,
    /// Its user is signed in: join.
    Join,
}

#[derive(Template)]
#[template(path = "invitation.html")]
struct InvitationPage {
    layout: Layout,
    invitation: Invitation,
    project: String,
    mode: Mode,
    action: String,
    sign_in: String,
    csrf: String,
    name: String,
    problem: Option<String>,
}

/// The invitation a link names, its project, and the user who has its email.
struct Found {
    hash: LinkHash,
    invitation: Invitation,
    project: Project,
    account: Option<User>,
}

/// The answer to a link that does not work.
fn gone(viewer: Option<&Viewer>) -> Response {
    render::error(
        StatusCode::GONE,
        viewer,
        "This invitation link no longer works",
        "It was used already, revoked, replaced by a newer one, or it expired after 72 hours. \
         Ask the person who invited you to send it again.",
    )
}

/// The live invitation `token` names, or the answer for a dead link.
async fn find<S: Store>(
    store: &S,
    token: &str,
    viewer: Option<&Viewer>,
) -> Result<Found, Response> {
    let hash = LinkToken::parse(token).ok_or_else(|| gone(viewer))?.hash();
    find_hash(store, hash, viewer).await
}

/// The live invitation whose link has this hash, or the answer for a dead link.
async fn find_hash<S: Store>(
    store: &S,
    hash: LinkHash,
    viewer: Option<&Viewer>,
) -> Result<Found, Response> {
    let (invitation, project) = match store.invitation(&hash, Utc::now()).await {
        Ok(found) => found,
        Err(StoreError::NotFound(Entity::Invitation)) => return Err(gone(viewer)),
        Err(err) => return Err(render::store_failure(err, viewer)),
    };
    let account = match store.user_by_email(&invitation.email).await {
        Ok(user) => Some(user),
        Err(StoreError::NotFound(Entity::User)) => None,
        Err(err) => return Err(render::store_failure(err, viewer)),
    };
    Ok(Found {
        hash,
        invitation,
        project,
        account,
    })
}

/// How `viewer` takes what was found.
fn mode(found: &Found, viewer: Option<&Viewer>) -> Mode {
    match (&found.account, viewer) {
        (None, _) => Mode::SetUp,
        (Some(account), Some(viewer)) if account.id == viewer.user.id => Mode::Join,
        (Some(_), _) => Mode::SignIn,
    }
}

/// The invitation's page.
fn invitation_page(
    status: StatusCode,
    request: &Request,
    found: Found,
    viewer: Option<&Viewer>,
    name: &str,
    problem: Option<String>,
) -> Response {
    let mode = mode(&found, viewer);
    let next: String = form_urlencoded::byte_serialize(request.path.as_bytes()).collect();
    let mut response = render::page(
        status,
        &InvitationPage {
            layout: Layout::new(format!("Join {}", found.project.name), viewer),
            project: found.project.name,
            invitation: found.invitation,
            mode,
            action: request.path.clone(),
            sign_in: format!("{}?next={next}", Route::SignInForm.href(&[])),
            csrf: viewer.map(Viewer::csrf).unwrap_or_default(),
            name: name.to_owned(),
            problem,
        },
    );
    render::no_store(&mut response);
    response
}

/// `GET /invitations/{token}`.
pub(crate) async fn page<S: Store>(
    store: &S,
    _config: &Config,
    request: &Request,
    token: &str,
) -> Response {
    let viewer = match session::viewer(store, request).await {
        Ok(viewer) => viewer,
        Err(err) => return render::store_failure(err, None),
    };
    match find(store, token, viewer.as_ref()).await {
        Ok(found) => invitation_page(StatusCode::OK, request, found, viewer.as_ref(), "", None),
        Err(response) => response,
    }
}

/// `POST /invitations/{token}`: joins, setting up the account first when there is none.
pub(crate) async fn accept<S: Store>(
    store: &S,
    config: &Config,
    request: &Request,
    token: &str,
    body: Body,
) -> Response {
    let viewer = match session::viewer(store, request).await {
        Ok(viewer) => viewer,
        Err(err) => return render::store_failure(err, None),
    };
    let form = match session::anonymous_form(request, config, body).await {
        Ok(form) => form,
        Err(response) => return response,
    };
    let found = match find(store, token, viewer.as_ref()).await {
        Ok(found) => found,
        Err(response) => return response,
    };
    let answer = match mode(&found, viewer.as_ref()) {
        Mode::Join => join(store, config, request, found, viewer, &form).await,
        Mode::SetUp => set_up(store, config, request, found, &form).await,
        // The page asks them to sign in first; a form posted anyway is shown that page.
        Mode::SignIn => Err(invitation_page(
            StatusCode::CONFLICT,
            request,
            found,
            viewer.as_ref(),
            "",
            None,
        )),
    };
    answer.unwrap_or_else(|response| response)
}

/// A signed-in invitee joins.
async fn join<S: Store>(
    store: &S,
    config: &Config,
    request: &Request,
    found: Found,
    viewer: Option<Viewer>,
    form: &Form,
) -> Result<Response, Response> {
    let viewer = viewer.ok_or_else(|| render::redirect(&request.path))?;
    if !session::genuine_form(request, config, &viewer, form) {
        return Err(render::forged(Some(&viewer)));
    }
    let taken = store
        .accept_invitation(
            &found.hash,
            Acceptance::Existing(viewer.user.id),
            Utc::now(),
        )
        .await;
    joined(store, config, request, taken, None).await
}

/// Someone new sets up their account and joins.
async fn set_up<S: Store>(
    store: &S,
    config: &Config,
    request: &Request,
    found: Found,
    form: &Form,
) -> Result<Response, Response> {
    let name = form.get("name").trim().to_owned();
    let (email, named) = (
        found.invitation.email.clone(),
        (!name.is_empty()).then_some(name.clone()),
    );
    let new =
        match Password::new(form.get("password")) {
            // Hashing takes tens of milliseconds of CPU: off the async threads.
            Ok(password) => tokio::task::spawn_blocking(move || {
                NewUser::new(&email, named.as_deref(), &password)
            })
            .await
            .map_err(|_| render::store_failure(StoreError::Unavailable("hashing".into()), None))?,
            Err(problem) => Err(problem),
        };
    let new = match new {
        Ok(new) => new,
        Err(problem) => {
            let problem = crate::settings::sentence(&problem);
            let page = invitation_page(
                StatusCode::BAD_REQUEST,
                request,
                found,
                None,
                &name,
                Some(problem),
            );
            return Err(page);
        }
    };
    let taken = store
        .accept_invitation(&found.hash, Acceptance::NewAccount(new), Utc::now())
        .await;
    joined(store, config, request, taken, Some(found.hash)).await
}

/// After taking an invitation: records it in the project's history, starts a session for
/// someone new (`new_account`: the link's hash), and goes to the project's inbox.
async fn joined<S: Store>(
    store: &S,
    config: &Config,
    request: &Request,
    taken: Result<(User, Project), StoreError>,
    new_account: Option<LinkHash>,
) -> Result<Response, Response> {
    let (user, project) = match (taken, new_account) {
        (Ok(taken), _) => taken,
        (Err(StoreError::NotFound(Entity::Invitation)), _) => return Err(gone(None)),
        // Someone set up an account with this email since the page was shown: the
        // invitation is as it was, and its page now asks them to sign in.
        (Err(StoreError::Conflict(Conflict::UserExists(_))), Some(hash)) => {
            let found = find_hash(store, hash, None).await?;
            let problem = "An account with this email was just set up. Sign in to join.";
            return Err(invitation_page(
                StatusCode::CONFLICT,
                request,
                found,
                None,
                "",
                Some(problem.to_owned()),
            ));
        }
        (Err(err), _) => return Err(render::store_failure(err, None)),
    };
    let membership = store
        .membership(user.id, &project.public_id)
        .await
        .map_err(|err| render::store_failure(err, None))?;
    let by = Attribution {
        actor: Actor::User {
            id: user.id,
            name: user.name.clone(),
        },
        address: Some(crate::viewer::client_address(request, config)),
    };
    let event = ProjectActivity::InvitationAccepted {
        email: user.email.clone(),
        role: membership.role,
    };
    store
        .record_project_event(project.id, &by, &event, Utc::now())
        .await
        .map_err(|err| render::store_failure(err, None))?;
    tracing::info!(user = %user.id, project = %project.public_id, "invitation taken");
    let mut response = render::redirect(&Links::new(&project.public_id).inbox());
    if new_account.is_some() {
        let cookie = session::start(store, config, request, user.id)
            .await
            .map_err(|err| render::store_failure(err, None))?;
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    Ok(response)
}
