//! leadtrack's web pages for the team, as one warp filter to mount beside the lead API:
//! sign-in and sign-out, the user's projects, and each project's page.
//!
//! | path | what |
//! |---|---|
//! | `GET /login`, `POST /login` | the sign-in form; on success a session cookie and a redirect to `/` (or a local `next`) |
//! | `POST /logout` | ends the session |
//! | `GET /invitations/{token}`, `POST` | an invitation: set up an account (or sign in) and join |
//! | `GET /password/forgot`, `POST` | asks for a password-reset link by email |
//! | `GET /password/reset/{token}`, `POST` | sets a new password with a reset link |
//! | `GET /profile`, `POST /profile/...` | the user's name, email, password and sessions |
//! | `GET /profile/email/{token}`, `POST` | confirms a new email |
//! | `GET /` | the projects the user is a member of |
//! | `GET /projects/{projectId}` | `303` to the project's inbox |
//! | `GET /projects/{projectId}/reports` | leads by first or last touch, their ratings and value, over a range of days |
//! | `GET /projects/{projectId}/leads.csv` | an inbox view's leads as CSV, streamed |
//! | `/projects/{projectId}/settings/...` | owners: labels, integrations, API keys, members and invitations, the project, installing, the audit log |
//! | `GET /assets/app.css`, `/assets/app.js`, `/favicon.ico` | the stylesheet, the script and the icon, cached and revalidated by `ETag` |
//!
//! The rules every page follows, in one place each:
//! - who may see what: a project the user is not a member of is `404`, an
//!   owner's action by a member is `403`;
//! - sessions: an `HttpOnly`, `SameSite=Lax` cookie holding a random token
//!   that the store keeps only as a hash, `Secure` over HTTPS;
//! - forgery: every state-changing request of a session must come from this site's own
//!   origin (`Origin`, else `Referer`) and carry the session's anti-forgery token, or it is
//!   refused with `403` and changes nothing;
//! - brute force: failed sign-ins are counted in the store per email and per address
//!   ([`leadtrack_core::account::Throttle`]): past the limit, `429` with `Retry-After`.
//!
//! Pages are rendered on the server from compile-time-checked templates (askama); the
//! stylesheet is compiled into the binary. Every page works without JavaScript.
//!
//! Served on its own (the standalone server mounts it beside the lead API, with
//! `leadtrack_server::app_with`):
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let store = leadtrack_sqlite::SqliteStore::open("leadtrack.db").await?;
//! let pages = leadtrack_dashboard::routes(store, leadtrack_dashboard::Config::default());
//! warp::serve(pages).run(([127, 0, 0, 1], 8080)).await;
//! # Ok(())
//! # }
//! ```

#![forbid(unsafe_code)]

mod access;
mod assign;
mod assignees;
mod attention;
mod bulk;
mod chart;
mod columns;
mod comments;
mod delete;
mod drafts;
mod export;
mod format;
mod inbox;
mod invitations;
mod lead;
mod list;
mod login;
mod mail;
mod next_step;
mod pages;
mod password;
mod preferences;
mod privacy;
mod profile;
mod rating;
mod render;
mod reports;
mod routes;
mod row;
mod saved_views;
mod session;
mod settings;
mod spam;
mod view;
mod viewer;

use routes::Route;
pub use routes::{label, redacted};

use std::sync::Arc;

use leadtrack_core::Store;
use leadtrack_core::account::Throttle;
use leadtrack_core::target::Targets;
use leadtrack_http::{Body, Found, Params};
pub(crate) use leadtrack_http::{Request, query_param};
use leadtrack_outbound::Outbound;
use warp::http::Method;
use warp::reply::Response;
use warp::{Filter, Rejection};

/// How the pages behave.
#[derive(Clone, Debug)]
pub struct Config {
    /// Trust `X-Forwarded-Proto` (for the `Secure` cookie flag and this site's origin) and
    /// `X-Forwarded-For` (for the client address the sign-in throttle counts), as set by a
    /// reverse proxy in front of the server. Off by default: without a proxy, clients could
    /// forge them.
    pub trust_proxy: bool,
    /// The sign-in throttle.
    pub throttle: Throttle,
    /// The limits of password-reset requests ([`Throttle::reset_requests`] by default).
    pub reset_throttle: Throttle,
    /// The largest form body accepted, in bytes.
    pub body_limit: usize,
    /// The site's address as its users reach it (`https://leads.example.com`), which links
    /// in messages point to. Without it, a link shown on a page uses the request's own
    /// origin, and no password-reset message is sent: an anonymous request's `Host` could
    /// point its link elsewhere.
    pub public_url: Option<String>,
    /// Sends invitations, password resets and email confirmations. Without one, owners
    /// are shown the links to pass on themselves.
    pub mailer: Option<leadtrack_mail::Mailer>,
    /// The applications the operator registered with the ad platforms, which owners
    /// connect a project by signing in with (one per platform at most). Their redirect URI
    /// is `public_url` (else the request's origin) and `/oauth/callback`.
    pub oauth: Vec<leadtrack_core::oauth::OAuthApp>,
    /// The client of every request the dashboard makes to an address it was given (the
    /// Test buttons, the connection pages' pickers, signing in), under the operator's rule
    /// for outbound addresses, which also checks the addresses owners save. The rule's
    /// defaults when not set: `https://` to the public internet only.
    pub outbound: Outbound,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            trust_proxy: false,
            throttle: Throttle::default(),
            reset_throttle: Throttle::reset_requests(),
            body_limit: 16 * 1024,
            public_url: None,
            mailer: None,
            oauth: Vec::new(),
            outbound: leadtrack_platforms::check::client(Targets::default()),
        }
    }
}

/// The store and the configuration, shared by every request.
struct Context<S> {
    store: S,
    config: Config,
}

/// The dashboard, answered from `store`. Combine it with the lead API and a host's own
/// routes by `.or(...)`: it claims only its own paths and answers every outcome on them.
pub fn routes<S: Store + Clone>(
    store: S,
    config: Config,
) -> impl Filter<Extract = (Response,), Error = Rejection> + Clone + Send + Sync + 'static {
    let context = Arc::new(Context { store, config });
    leadtrack_http::claimed(routes::claims).then(move |request, body| {
        let context = Arc::clone(&context);
        async move { handle(&context, request, body).await }
    })
}

/// Answers a claimed request: its route's page, or the `405` or `404` page.
async fn handle<S: Store + Clone>(context: &Context<S>, request: Request, body: Body) -> Response {
    let mut response = match routes::ROUTES.find(&request.method, &request.path) {
        Found::Route(route, params) => page(context, &request, route, &params, body).await,
        // A form's address asked for as a page (a reload, a bookmark): its page.
        Found::MethodNotAllowed(_) if matches!(request.method, Method::GET | Method::HEAD) => {
            routes::page_of(&request.path)
                .map_or_else(render::method_not_allowed, |page| render::redirect(&page))
        }
        Found::MethodNotAllowed(_) => render::method_not_allowed(),
        Found::NotFound => render::not_found(None),
    };
    render::secure_headers(response.headers_mut());
    response
}

/// The page or form `route` answers.
async fn page<S: Store + Clone>(
    context: &Context<S>,
    request: &Request,
    route: Route,
    params: &Params<'_>,
    body: Body,
) -> Response {
    let Context { store, config } = context;
    let project = params.get("project");
    match route {
        Route::Stylesheet => render::stylesheet(request),
        Route::Script => render::script(request),
        Route::Favicon => render::favicon(request),
        Route::SignInForm => login::form(store, config, request).await,
        Route::SignIn => login::sign_in(store, config, request, body).await,
        Route::SignOut => login::sign_out(store, config, request, body).await,
        Route::Invitation => invitations::page(store, config, request, params.get("token")).await,
        Route::AcceptInvitation => {
            invitations::accept(store, config, request, params.get("token"), body).await
        }
        Route::ForgotForm => password::forgot_form(store, request).await,
        Route::Forgot => password::forgot(store, config, request, body).await,
        Route::ResetForm => password::reset_form(store, request, params.get("token")).await,
        Route::Reset => password::reset(store, config, request, params.get("token"), body).await,
        Route::Profile(page) => profile::handle(store, config, request, page, params, body).await,
        Route::Projects => pages::projects(store, config, request).await,
        Route::Project => pages::project(store, request, project).await,
        Route::Leads(page) => inbox::handle(store, config, request, page, params, body).await,
        Route::Export => export::handle(store, config, request, project).await,
        Route::Reports => reports::page(store, request, project).await,
        Route::Settings(page) => settings::handle(store, config, request, page, params, body).await,
        Route::OAuthCallback => settings::sign_in::callback(store, config, request).await,
        Route::SaveView => saved_views::save(store, config, request, project, body).await,
        Route::DeleteView => {
            saved_views::delete(store, config, request, (project, params.get("id")), body).await
        }
        Route::SaveColumns | Route::SaveTheme => {
            preferences::save(store, config, request, route, body).await
        }
    }
}
