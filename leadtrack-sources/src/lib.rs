//! leadtrack's lead sources: the webhooks the ad platforms' own lead forms post their
//! leads to, as one mountable warp filter, and the fetcher that reads the leads a platform
//! only announces.
//!
//! | Route | Answers |
//! |---|---|
//! | `POST /webhooks/google/lead-forms/{projectId}` | `200 {"leadId", "created"}`; `401 invalid_api_key` for a key that is not the project's; `404 project_not_found`; `400 invalid_json` for a body that is not a Google lead |
//! | `GET /webhooks/meta/leadgen` | Meta's subscription check: `hub.challenge` for the server's verify token, else `403` |
//! | `POST /webhooks/meta/leadgen` | `200` once each lead announced is queued for the [`Fetcher`]; `401` unsigned, `403` wrongly signed (nothing queued or fetched) |
//! | `POST /webhooks/inbound/{id}` | a form tool's submission ([`leadtrack_core::inbound`]): `200 {"leadId", "created"}`; `401 invalid_api_key` for a signature (or URL secret) that is not the webhook's; `404 not_found`; `400` for a body the tool could not have sent, or one that maps to no lead data |
//! | `POST /webhooks/inbound/{id}/test` | the same checks, nothing saved: `200 {"lead": createLead body}` |
//!
//! A project takes Google lead form leads once its key is set, and a Facebook page's
//! leads once the page is set up ([`leadtrack_core::source::LeadSource`]). The platforms
//! deliver again until they hear a `200`, so what is answered `200` is kept first, and a
//! lead delivered or announced twice is one lead.
//!
//! ```no_run
//! # async fn mount(store: leadtrack_sqlite::SqliteStore) {
//! use warp::Filter;
//! let sources = leadtrack_sources::routes(store.clone(), leadtrack_sources::Config::default());
//! let app = sources.or(leadtrack_warp::routes(store, leadtrack_warp::Config::default()));
//! # }
//! ```

#![forbid(unsafe_code)]

mod fetcher;
mod google;
mod inbound;
mod linkedin;
mod meta;

use std::sync::{Arc, LazyLock};

use leadtrack_core::integration::Secret;
use leadtrack_core::source::META_LEADGEN_PATH;
use leadtrack_core::store::Entity;
use leadtrack_core::{Admin, ErrorCode, JobQueue, LeadStore, StoreError};
use leadtrack_http::{Body, Found, Request, Router};
use warp::http::Method;
use warp::reply::Response;
use warp::{Filter, Rejection};

pub use fetcher::{Fetcher, FetcherConfig};

/// The largest body taken: a lead form has a few dozen short answers, and Meta batches a
/// few announcements.
const BODY_LIMIT: usize = 256 * 1024;

/// The server's Meta app, for its Lead Ads webhook: the app secret that signs Meta's
/// posts, and the verify token its subscription check presents.
#[derive(Clone, Debug)]
pub struct MetaApp {
    /// The app secret (App settings > Basic).
    pub app_secret: Secret,
    /// The token typed into the webhook's subscription in the app's dashboard.
    pub verify_token: Secret,
}

/// The sources' settings.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Meta's app; without it, `/webhooks/meta/leadgen` is not served.
    pub meta: Option<MetaApp>,
}

/// A route of the lead sources.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    /// A Google lead form's lead.
    GoogleLead,
    /// Meta's subscription check.
    MetaCheck,
    /// Meta's announcement of leads.
    MetaAnnouncement,
    /// A form tool's submission.
    Inbound,
    /// A form tool's submission, checked and mapped but not kept.
    InboundTest,
}

impl Route {
    /// Why a request with a method the route's path does not take is refused.
    fn wrong_method(self) -> &'static str {
        match self {
            Self::GoogleLead => "Google posts its leads: use POST",
            Self::MetaCheck | Self::MetaAnnouncement => {
                "Meta checks this webhook with GET and posts to it"
            }
            Self::Inbound | Self::InboundTest => "Form tools post: use POST",
        }
    }
}

/// The sources' routes, declared once: the paths the filter claims, the dispatch and the
/// `405` answers (with their `Allow`) read this table.
static ROUTES: LazyLock<Router<Route>> = LazyLock::new(|| {
    Router::new(
        [
            (Method::POST, google::PATH, Route::GoogleLead),
            (Method::GET, META_LEADGEN_PATH, Route::MetaCheck),
            (Method::POST, META_LEADGEN_PATH, Route::MetaAnnouncement),
            (Method::POST, INBOUND_ROUTE, Route::Inbound),
            (Method::POST, INBOUND_TEST_ROUTE, Route::InboundTest),
        ],
        false,
    )
});

/// Where form tools post: core's [`leadtrack_core::inbound::INBOUND_PATH`] and the webhook's id.
const INBOUND_ROUTE: &str = "/webhooks/inbound/{id}";
/// Where a form tool's post is tried without keeping it.
const INBOUND_TEST_ROUTE: &str = "/webhooks/inbound/{id}/test";

/// The lead sources' routes, answered from `store`. Requests to other paths are rejected
/// with warp's "not found", for the host's own routes; so are Meta's while the server has
/// no Meta app.
pub fn routes<S: LeadStore + Admin + JobQueue>(
    store: S,
    config: Config,
) -> impl Filter<Extract = (Response,), Error = Rejection> + Clone + Send + Sync + 'static {
    let shared = Arc::new((store, config));
    leadtrack_http::claimed(|path| ROUTES.has_path(path)).and_then(
        move |request: Request, body: Body| {
            let shared = Arc::clone(&shared);
            async move {
                let (store, config) = &*shared;
                let meta = ROUTES.route_at(&request.path).is_some_and(|route| {
                    matches!(route, Route::MetaCheck | Route::MetaAnnouncement)
                });
                match (ROUTES.find(&request.method, &request.path), &config.meta) {
                    (_, None) if meta => Err(warp::reject::not_found()),
                    (Found::Route(Route::GoogleLead, params), _) => {
                        Ok(google::post(store, &request, params.get("project"), body).await)
                    }
                    (Found::Route(Route::Inbound, params), _) => {
                        Ok(inbound::post(store, &request, (params.get("id"), false), body).await)
                    }
                    (Found::Route(Route::InboundTest, params), _) => {
                        Ok(inbound::post(store, &request, (params.get("id"), true), body).await)
                    }
                    (Found::Route(Route::MetaCheck, _), Some(app)) => {
                        Ok(meta::subscription(app, &request))
                    }
                    (Found::Route(Route::MetaAnnouncement, _), Some(app)) => {
                        Ok(meta::announcement(store, app, &request, body).await)
                    }
                    (Found::MethodNotAllowed(allowed), _) => {
                        let route = ROUTES.route_at(&request.path);
                        let why = route.map_or("Not allowed", Route::wrong_method);
                        Ok(method_not_allowed(&allowed, why))
                    }
                    (Found::Route(..) | Found::NotFound, _) => Err(warp::reject::not_found()),
                }
            }
        },
    )
}

/// The refusal of a request whose method a webhook does not take (`405`, with the methods
/// it does in `Allow`), saying `why`.
fn method_not_allowed(allowed: &[Method], why: &str) -> Response {
    let mut refused = leadtrack_http::error(ErrorCode::MethodNotAllowed, why);
    let allow: Vec<&str> = allowed.iter().map(Method::as_str).collect();
    if let Ok(allow) = warp::http::HeaderValue::from_str(&allow.join(", ")) {
        refused.headers_mut().insert("allow", allow);
    }
    refused
}

/// A store's failure as an answer: an unknown project is `404`; anything else is a `503`
/// (the platform delivers again later), with no internals.
fn store_error(err: &StoreError) -> Response {
    match err {
        StoreError::NotFound(Entity::Project) => {
            leadtrack_http::error(ErrorCode::ProjectNotFound, "No such project")
        }
        err => {
            tracing::error!(error = %err, "a lead source's post could not be kept");
            leadtrack_http::error(
                ErrorCode::Unavailable,
                "The lead could not be kept now; deliver it again later",
            )
        }
    }
}
