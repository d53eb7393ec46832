//! The CLI's protection settings on a real server: rate-limit flags and a project's allowed
//! browser origins.

use reqwest::StatusCode;
use serde_json::json;

use crate::process::{admin, admin_json, create_acme, start_serve};

#[tokio::test]
async fn rate_limit_flags_and_allowed_origins_reach_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leadtrack.db");
    create_acme(&db).await;
    let set = admin(
        &db,
        &[
            "project",
            "set",
            "--project",
            "acme",
            "--allowed-origins",
            "https://Shop.example, https://www.shop.example",
        ],
    )
    .await;
    assert!(
        set.status.success(),
        "{}",
        String::from_utf8_lossy(&set.stderr)
    );
    let listed = admin_json(&db, &["project", "list", "--json"]).await;
    assert_eq!(
        listed[0]["allowedOrigins"],
        json!(["https://shop.example", "https://www.shop.example"])
    );
    let bad = admin(
        &db,
        &[
            "project",
            "set",
            "--project",
            "acme",
            "--allowed-origins",
            "shop.example",
        ],
    )
    .await;
    assert!(
        !bad.status.success(),
        "an origin without a scheme is refused"
    );

    let server = start_serve(
        &db,
        &["--rate-limit-ip", "60:2", "--rate-limit-project", "off"],
    )
    .await;
    let http = reqwest::Client::new();
    let url = format!("{}/api/leads/createLead", server.base_url);
    let lead = json!({"projectId": "acme", "userData": {"email": "a@x.io"}});
    let post = |origin: Option<&str>| {
        let mut request = http.post(&url).json(&lead);
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        request.send()
    };
    let refused = post(Some("https://evil.example")).await.unwrap();
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    let body: serde_json::Value = refused.json().await.unwrap();
    assert_eq!(body["code"], "origin_not_allowed");
    let accepted = post(Some("https://www.shop.example")).await.unwrap();
    assert_eq!(accepted.status(), StatusCode::CREATED);
    // The third request from this address empties the bucket of two.
    let limited = post(None).await.unwrap();
    assert_eq!(limited.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(limited.headers().contains_key("retry-after"));

    let cleared = admin(
        &db,
        &[
            "project",
            "set",
            "--project",
            "acme",
            "--allowed-origins",
            "",
        ],
    )
    .await;
    assert!(cleared.status.success());
    let listed = admin_json(&db, &["project", "list", "--json"]).await;
    assert_eq!(listed[0]["allowedOrigins"], json!([]));
    assert!(server.terminate().await.success());
}
