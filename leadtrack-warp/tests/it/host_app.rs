//! leadtrack mounted inside a host app: the host's routes and its own 404 keep working, and
//! leadtrack answers its paths without any `.recover()` from the host.

use leadtrack_sqlite::SqliteStore;
use leadtrack_warp::{Config, routes};
use serde_json::{Value, json};
use warp::Filter;
use warp::http::StatusCode;

#[tokio::test]
async fn host_routes_and_lead_routes_answer_side_by_side() {
    let store = SqliteStore::open_temporary().await.unwrap();
    let health = warp::path!("health").and(warp::get()).map(|| "ok");
    let host_404 =
        warp::any().map(|| warp::reply::with_status("host: no such page", StatusCode::NOT_FOUND));
    let app = health.or(routes(store, Config::default())).or(host_404);

    let response = warp::test::request().path("/health").reply(&app).await;
    assert_eq!(
        (response.status(), response.body().as_ref()),
        (StatusCode::OK, &b"ok"[..])
    );

    let response = warp::test::request()
        .path("/api/leads/getLeads")
        .reply(&app)
        .await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let body: Value = serde_json::from_slice(response.body()).unwrap();
    assert_eq!(
        body,
        json!({"message": "Missing X-API-Key header", "code": "missing_api_key"})
    );

    let response = warp::test::request()
        .method("POST")
        .path("/api/leads/createLead")
        .body(r#"{"projectId":"nope","userData":{"email":"a@x.io"}}"#)
        .reply(&app)
        .await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let body: Value = serde_json::from_slice(response.body()).unwrap();
    assert_eq!(
        body["code"], "project_not_found",
        "leadtrack's 404, not the host's"
    );

    let response = warp::test::request()
        .method("DELETE")
        .path("/api/leads/getLead")
        .reply(&app)
        .await;
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);

    for path in [
        "/api/leads/unknown",
        "/api/leads/getLead/1",
        "/elsewhere",
        "/",
    ] {
        let response = warp::test::request().path(path).reply(&app).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
        assert_eq!(
            response.body().as_ref(),
            b"host: no such page",
            "{path} reaches the host"
        );
    }
}

#[tokio::test]
async fn without_a_host_catch_all_other_paths_get_warps_404() {
    let store = SqliteStore::open_temporary().await.unwrap();
    let health = warp::path!("health").map(|| "ok");
    let app = routes(store, Config::default()).or(health);
    let response = warp::test::request().path("/health").reply(&app).await;
    assert_eq!(
        response.status(),
        StatusCode::OK,
        "a host route after leadtrack still matches"
    );
    let response = warp::test::request()
        .path("/api/leads/nothing")
        .reply(&app)
        .await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert!(response.body().is_empty());
}
