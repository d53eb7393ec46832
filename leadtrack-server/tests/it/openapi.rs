//! The standalone app serves the OpenAPI document of the lead routes.

use leadtrack_server::app;
use leadtrack_sqlite::SqliteStore;
use leadtrack_warp::{Config, OPENAPI};
use serde_json::Value;
use warp::http::StatusCode;
use warp::http::header::{CONTENT_TYPE, ETAG, IF_NONE_MATCH};

#[tokio::test]
async fn get_api_openapi_json_answers_the_document_as_json() {
    let store = SqliteStore::open_temporary().await.unwrap();
    let app = app(store, Config::default());
    let response = warp::test::request()
        .path("/api/openapi.json")
        .reply(&app)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()[CONTENT_TYPE], "application/json");
    assert_eq!(response.body(), OPENAPI.as_bytes());
    let document: Value = serde_json::from_slice(response.body()).unwrap();
    assert_eq!(document["openapi"], "3.1.0");

    let etag = response.headers()[ETAG].clone();
    let again = warp::test::request()
        .path("/api/openapi.json")
        .header(IF_NONE_MATCH, etag)
        .reply(&app)
        .await;
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
}

#[tokio::test]
async fn other_methods_on_the_document_get_the_json_404() {
    let store = SqliteStore::open_temporary().await.unwrap();
    let app = app(store, Config::default());
    let response = warp::test::request()
        .method("POST")
        .path("/api/openapi.json")
        .reply(&app)
        .await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let body: Value = serde_json::from_slice(response.body()).unwrap();
    assert_eq!(body["code"], "not_found");
}
