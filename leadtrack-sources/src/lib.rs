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

use std::sync::Arc;

use leadtrack_core::inbound::INBOUND_PATH;
use leadtrack_core::integration::Secret;
use leadtrack_core::source::META_LEADGEN_PATH;
use leadtrack_core::store::Entity;
use leadtrack_core::{Admin, ErrorCode, JobQueue, LeadStore, StoreError};
use leadtrack_http::{Body, Request};
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

/// The lead sources' routes, answered from `store`. Requests to other paths are rejected
/// with warp's "not found", for the host's own routes.
pub fn routes<S: LeadStore + Admin + JobQueue>(
    store: S,
    config: Config,
) -> impl Filter<Extract = (Response,), Error = Rejection> + Clone + Send + Sync + 'static {
    let shared = Arc::new((store, config));
    leadtrack_http::claimed(|path| {
        path.starts_with(google::PATH)
            || path.starts_with(INBOUND_PATH)
            || path == META_LEADGEN_PATH
    })
    .and_then(move |request: Request, body: Body| {
        let shared = Arc::clone(&shared);
        async move {
            let (store, config) = &*shared;
            if request.path.starts_with(google::PATH) {
                return Ok(google::post(store, &request, body).await);
            }
            if request.path.starts_with(INBOUND_PATH) {
                return Ok(inbound::post(store, &request, body).await);
            }
            match &config.meta {
                Some(app) => Ok(meta::webhook(store, app, &request, body).await),
                None => Err(warp::reject::not_found()),
            }
        }
    })
}

/// The refusal of a request whose method a webhook does not take (`405`, with the methods
/// it does in `Allow`), saying `why`.
fn method_not_allowed(allow: &'static str, why: &str) -> Response {
    let mut refused = leadtrack_http::error(ErrorCode::MethodNotAllowed, why);
    refused
        .headers_mut()
        .insert("allow", warp::http::HeaderValue::from_static(allow));
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
