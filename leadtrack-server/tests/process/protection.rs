//! The CLI's protection settings on a real server: rate-limit flags and a project's allowed
//! browser origins.

use reqwest::StatusCode;
use serde_json::json;

use crate::process::{admin, admin_json, create_acme, start_serve};

#[tokio::test]
async fn rate_limit_flags_and_allowed_origins_reach_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::process::fresh_db(&dir).await;
    create_acme(&db).await;
    let set_origins = async |origins| {
        let set = ["project", "set", "--project", "acme", "--allowed-origins"];
        admin(&db, &[&set[..], &[origins]].concat()).await
    };
    let set = set_origins("https://Shop.example, https://www.shop.example").await;
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
    let bad = set_origins("shop.example").await;
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

/// 32 concurrent searches of one project, on a server started with `readers`; how many of
/// them were refused `503 unavailable`.
async fn refused_searches(readers: &[&str]) -> usize {
    let dir = tempfile::tempdir().unwrap();
    // The reader pools are SQLite's.
    let db = dir.path().join("leadtrack.db");
    let key = create_acme(&db).await;
    let mut options = vec!["--rate-limit-key", "off", "--no-worker"];
    options.extend_from_slice(readers);
    let server = start_serve(&db, &options).await;
    let http = reqwest::Client::new();
    let create = format!("{}/api/leads/createServerSideLead", server.base_url);
    let created = futures_util::future::join_all((0..400).map(|i| {
        let lead = json!({"projectId": "acme", "userData": {"email": format!("lead{i}@x.io")}});
        http.post(&create)
            .header("x-api-key", &key)
            .json(&lead)
            .send()
    }))
    .await;
    assert!(created.iter().all(|r| r.as_ref().unwrap().status() == 201));
    let search = format!(
        "{}/api/leads/getLeads?search=lead&limit=100",
        server.base_url
    );
    let answers = futures_util::future::join_all(
        (0..32).map(|_| http.get(&search).header("x-api-key", &key).send()),
    )
    .await;
    let mut refused = 0;
    for answer in answers {
        let answer = answer.unwrap();
        match answer.status() {
            StatusCode::OK => {}
            StatusCode::SERVICE_UNAVAILABLE => {
                assert_eq!(answer.headers()["retry-after"], "1");
                let body: serde_json::Value = answer.json().await.unwrap();
                assert_eq!(body["code"], "unavailable");
                refused += 1;
            }
            other => panic!("a search answered {other}"),
        }
    }
    assert!(server.terminate().await.success());
    refused
}

#[tokio::test]
async fn reader_pool_flags_reach_the_store() {
    assert_eq!(
        refused_searches(&[]).await,
        0,
        "the defaults serve them all"
    );
    // One thread and one place in the queue: one project holds one of the two places, so
    // searches that arrive while another runs are refused at once.
    let refused = refused_searches(&["--read-threads", "1", "--read-queue", "1"]).await;
    assert!(refused > 0, "{refused} of 32 refused");
}

#[tokio::test]
async fn the_phone_region_and_the_default_consent_are_set_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::process::fresh_db(&dir).await;
    create_acme(&db).await;
    let set = |flags: &'static [&'static str]| {
        let db = db.clone();
        async move {
            let mut args = vec!["project", "set", "--project", "acme"];
            args.extend_from_slice(flags);
            admin(&db, &args).await
        }
    };
    let region =
        || async { admin_json(&db, &["project", "list", "--json"]).await[0]["region"].clone() };
    assert!(set(&["--region", "it"]).await.status.success());
    assert_eq!(region().await, json!("IT"));
    assert!(set(&["--country-code", "49"]).await.status.success());
    assert_eq!(region().await, json!("DE"));
    assert!(set(&["--country-code", "+1"]).await.status.success());
    assert_eq!(region().await, json!("US"));
    let unknown = set(&["--region", "UK"]).await;
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("such as DE, GB or US"));
    let no_code = set(&["--country-code", "999"]).await;
    assert!(!no_code.status.success());
    assert!(String::from_utf8_lossy(&no_code.stderr).contains("not a country calling code"));
    assert_eq!(region().await, json!("US"), "refusals change nothing");
    assert!(set(&["--region", ""]).await.status.success());
    assert_eq!(region().await, json!(null));

    let consent = || async {
        admin_json(&db, &["project", "list", "--json"]).await[0]["defaultConsent"].clone()
    };
    assert_eq!(consent().await, json!({}));
    assert!(
        set(&["--consent-ad-user-data", "Denied"])
            .await
            .status
            .success()
    );
    assert!(
        set(&["--consent-ad-personalization", "granted"])
            .await
            .status
            .success()
    );
    assert_eq!(
        consent().await,
        json!({"adUserData": "denied", "adPersonalization": "granted"})
    );
    let bad = set(&["--consent-ad-user-data", "maybe"]).await;
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not granted, denied"));
    assert!(set(&["--consent-ad-user-data", ""]).await.status.success());
    assert_eq!(consent().await, json!({"adPersonalization": "granted"}));
}
