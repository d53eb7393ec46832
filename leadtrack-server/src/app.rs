//! The standalone HTTP app: the lead routes plus what a server on its own needs (health
//! probes, the demo, request logs, a JSON 404), served on an already-bound listener until
//! a shutdown signal.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use leadtrack_core::{ErrorCode, LeadStore, LeadWebhooks, Spending};
use leadtrack_warp::Config;
use tokio::net::TcpListener;
use warp::reply::Response;
use warp::{Filter, Rejection, Reply};

use crate::{Readiness, ServeOptions, access, demo, health, serve_app_with};

/// The lead routes, their OpenAPI document (`/api/openapi.json`), the capture script
/// (`/leadtrack.js`), the demo pages (`/demo`, and `/demo/lead`, where the demo's contact
/// page reads back the lead it sent), `GET /health`, the probes `GET /healthz`
/// (liveness) and `GET /readyz` (readiness, always ready here: see [`app_with`]), and a
/// JSON `404 not_found` for every other path; one log line per request (method, path
/// without the query, route, status, latency) and its metrics.
pub fn app<S: LeadStore + LeadWebhooks + Spending + Clone>(
    store: S,
    config: Config,
) -> impl Filter<Extract = (impl Reply,), Error = Infallible> + Clone + Send + Sync + 'static {
    app_with(
        store,
        config,
        Readiness::new(),
        warp::any().and_then(|| async { Err(warp::reject::not_found()) }),
    )
}

/// [`app`] with `pages` (say, a dashboard) answering the paths it claims before the 404,
/// and `/readyz` also saying what `readiness` says (mark it draining when a graceful
/// shutdown begins).
pub fn app_with<S, P>(
    store: S,
    config: Config,
    readiness: Readiness,
    pages: P,
) -> impl Filter<Extract = (impl Reply,), Error = Infallible> + Clone + Send + Sync + 'static
where
    S: LeadStore + LeadWebhooks + Spending + Clone,
    P: Filter<Extract = (Response,), Error = Rejection> + Clone + Send + Sync + 'static,
{
    let not_found = warp::any().map(|| leadtrack_http::error(ErrorCode::NotFound, "Not found"));
    let shared = Arc::new(store.clone());
    let probes = health::routes(Arc::clone(&shared), readiness);
    let demo_lead = demo::demo_lead(shared);
    leadtrack_warp::routes(store, config)
        .or(probes)
        .unify()
        .or(demo_lead)
        .unify()
        .or(leadtrack_warp::openapi())
        .unify()
        .or(leadtrack_warp::script())
        .unify()
        .or(demo::demo())
        .unify()
        .or(pages)
        .unify()
        .or(not_found)
        .unify()
        .with(access::log())
}

/// Serves [`app`] on `listener` until `shutdown` resolves, then lets requests in flight
/// finish before returning. Slow and idle connections are closed and open connections are
/// capped as [`ServeOptions::default`] says.
///
/// Binding is left to the caller, so tests bind port 0 and know the address before the
/// server starts, and a port in use is reported before anything else happens.
pub async fn serve<S: LeadStore + LeadWebhooks + Spending + Clone>(
    listener: TcpListener,
    store: S,
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    serve_app(listener, app(store, config), shutdown).await;
}

/// Serves `app` (say, [`app_with`]) on `listener` until `shutdown` resolves, as [`serve`]
/// does, with the default [`ServeOptions`].
pub async fn serve_app(
    listener: TcpListener,
    app: impl App,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    serve_app_with(listener, app, ServeOptions::default(), shutdown).await;
}

/// A warp filter the server can serve: one that answers every request.
pub trait App: Filter<Extract: Reply, Error = Infallible> + Clone + Send + Sync + 'static {}

impl<T> App for T where T: Filter<Extract: Reply, Error = Infallible> + Clone + Send + Sync + 'static
{}
