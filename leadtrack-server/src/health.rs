//! Health checks for load balancers and orchestrators: `GET /healthz` (liveness: the process
//! answers) and `GET /readyz` (readiness: the store answers within a deadline, with every
//! migration applied, and the server is not shutting down).
//!
//! A graceful shutdown marks the server [`Readiness::drain`]ing first, so `/readyz` turns
//! `503` while the listener still accepts; a load balancer polling it stops sending new
//! requests before the server stops taking them.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use leadtrack_core::{ErrorCode, LeadStore};
use serde_json::json;
use warp::http::StatusCode;
use warp::http::header::{self, HeaderValue};
use warp::reply::Response;
use warp::{Filter, Rejection};

/// How long `/readyz` waits for the store before it says `503`.
const STORE_DEADLINE: Duration = Duration::from_secs(1);

/// Whether the server takes new work; cloned handles share one flag. Ready until
/// [`Readiness::drain`].
#[derive(Clone, Debug, Default)]
pub struct Readiness(Arc<AtomicBool>);

impl Readiness {
    /// A flag that says ready.
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks the server as shutting down: `/readyz` answers `503` from now on.
    pub fn drain(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Whether [`Readiness::drain`] was called.
    pub fn is_draining(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// `GET /healthz` (and `GET /health`, its older name) and `GET /readyz`.
pub(crate) fn routes<S: LeadStore>(
    store: Arc<S>,
    readiness: Readiness,
) -> impl Filter<Extract = (Response,), Error = Rejection> + Clone + Send + Sync + 'static {
    let healthz = warp::path!("healthz")
        .or(warp::path!("health"))
        .unify()
        .and(warp::get())
        .map(|| leadtrack_http::json(StatusCode::OK, &json!({"message": "ok"})));
    let readyz = warp::path!("readyz").and(warp::get()).then(move || {
        let (store, readiness) = (Arc::clone(&store), readiness.clone());
        async move { ready(&*store, &readiness).await }
    });
    healthz.or(readyz).unify()
}

/// `200` when the server is ready, else the contract's `503 unavailable` saying why.
async fn ready<S: LeadStore>(store: &S, readiness: &Readiness) -> Response {
    let unavailable = |message: &str| {
        let mut response = leadtrack_http::error(ErrorCode::Unavailable, message);
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(1));
        response
    };
    if readiness.is_draining() {
        return unavailable("The server is shutting down");
    }
    match tokio::time::timeout(STORE_DEADLINE, store.ready()).await {
        Ok(Ok(())) => leadtrack_http::json(StatusCode::OK, &json!({"message": "ready"})),
        Ok(Err(err)) => {
            tracing::warn!(error = %err, "not ready: the store did not answer");
            unavailable("The store is not ready")
        }
        Err(_) => {
            tracing::warn!("not ready: the store did not answer in time");
            unavailable("The store is not ready")
        }
    }
}
