//! The probes of the standalone app: `/healthz` (liveness) and `/readyz` (readiness).

use leadtrack_server::{Readiness, app, app_with};
use leadtrack_sqlite::SqliteStore;
use leadtrack_warp::Config;
use serde_json::{Value, json};
use warp::Filter;
use warp::http::StatusCode;

/// `GET path` from `app`: its status, `Retry-After` and JSON body.
async fn probe(
    app: &(
         impl warp::Filter<Extract = (impl warp::Reply,), Error = std::convert::Infallible>
         + Clone
         + 'static
     ),
    path: &str,
) -> (StatusCode, Option<String>, Value) {
    let response = warp::test::request().path(path).reply(app).await;
    let retry_after = response
        .headers()
        .get("retry-after")
        .map(|value| value.to_str().unwrap().to_owned());
    let body = serde_json::from_slice(response.body()).unwrap();
    (response.status(), retry_after, body)
}

#[tokio::test]
async fn readyz_turns_503_once_draining_while_healthz_stays_200() {
    let store = SqliteStore::open_temporary().await.unwrap();
    let readiness = Readiness::new();
    let app = app_with(
        store,
        Config::default(),
        readiness.clone(),
        warp::any().and_then(|| async { Err(warp::reject::not_found()) }),
    );
    let alive = (StatusCode::OK, None, json!({"message": "ok"}));
    assert_eq!(probe(&app, "/healthz").await, alive);
    assert_eq!(
        probe(&app, "/readyz").await,
        (StatusCode::OK, None, json!({"message": "ready"}))
    );

    readiness.drain();
    assert!(readiness.is_draining());
    assert_eq!(
        probe(&app, "/readyz").await,
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Some("1".to_owned()),
            json!({"message": "The server is shutting down", "code": "unavailable"})
        )
    );
    assert_eq!(probe(&app, "/healthz").await, alive, "still alive");
}

#[tokio::test]
async fn readyz_is_503_when_the_store_is_closed() {
    let store = SqliteStore::open_temporary().await.unwrap();
    let app = app(store.clone(), Config::default());
    assert_eq!(probe(&app, "/readyz").await.0, StatusCode::OK);
    store.close().await;
    assert_eq!(
        probe(&app, "/readyz").await,
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Some("1".to_owned()),
            json!({"message": "The store is not ready", "code": "unavailable"})
        )
    );
    assert_eq!(probe(&app, "/healthz").await.0, StatusCode::OK);
}
