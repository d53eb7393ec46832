//! The CLI's protection settings on a real server: rate flags, a project's spam settings
//! and its allowed browser origins.

use reqwest::StatusCode;
use serde_json::json;

use crate::process::binary::{admin, admin_json, create_acme, start_serve};

#[tokio::test]
async fn rate_flags_spam_settings_and_allowed_origins_reach_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::process::binary::fresh_db(&dir).await;
    let key = create_acme(&db).await;
    let set_project = async |flag: &str, value: &str| {
        let set = ["project", "set", "--project", "acme", flag, value];
        admin(&db, &set).await
    };
    let set = set_project(
        "--allowed-origins",
        "https://Shop.example, https://www.shop.example",
    )
    .await;
    assert!(
        set.status.success(),
        "{}",
        String::from_utf8_lossy(&set.stderr)
    );
    assert!(set_project("--held-budget", "1").await.status.success());
    let listed = admin_json(&db, &["project", "list", "--json"]).await;
    assert_eq!(
        listed[0]["allowedOrigins"],
        json!(["https://shop.example", "https://www.shop.example"])
    );
    assert_eq!(listed[0]["heldBudget"], 1);
    let bad = set_project("--allowed-origins", "shop.example").await;
    assert!(
        !bad.status.success(),
        "an origin without a scheme is refused"
    );
    let bad = set_project("--trusted-addresses", "10.0.0.300").await;
    assert!(!bad.status.success(), "nor is an address that is none");

    // The retired flag is still accepted.
    let options = ["--rate-limit-ip", "60:2", "--rate-limit-project", "off"];
    let server = start_serve(&db, &options).await;
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
    for _ in 0..2 {
        let accepted = post(Some("https://www.shop.example")).await.unwrap();
        assert_eq!(accepted.status(), StatusCode::CREATED);
    }
    // The third from this address is past the bucket of two: held, within the budget of
    // one; the fourth would be held past it, and is refused.
    assert_eq!(post(None).await.unwrap().status(), StatusCode::CREATED);
    let limited = post(None).await.unwrap();
    assert_eq!(limited.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(limited.headers().contains_key("retry-after"));
    let spam = format!("{}/api/leads/getLeads?status=spam", server.base_url);
    let held = crate::process::binary::get_json(&http, &spam, &key).await;
    assert_eq!(held["total"], 1);
    assert_eq!(held["leads"][0]["spamReason"], "burst from one address");

    // Trusted, this address is held no more.
    let trusted = set_project("--trusted-addresses", "127.0.0.1, 10.0.0.0/8").await;
    assert!(trusted.status.success());
    assert!(
        String::from_utf8_lossy(&trusted.stdout)
            .contains("trusted addresses 127.0.0.1, 10.0.0.0/8"),
        "{}",
        String::from_utf8_lossy(&trusted.stdout)
    );
    assert_eq!(post(None).await.unwrap().status(), StatusCode::CREATED);
    let cleared = set_project("--allowed-origins", "").await;
    assert!(cleared.status.success());
    let listed = admin_json(&db, &["project", "list", "--json"]).await;
    assert_eq!(listed[0]["allowedOrigins"], json!([]));
    assert_eq!(
        listed[0]["trustedAddresses"],
        json!(["127.0.0.1", "10.0.0.0/8"])
    );
    assert!(server.terminate().await.success());
}

/// 32 concurrent searches of one project, on a server started with `readers`; how many of
/// them were refused `503 unavailable`.
async fn refused_searches(readers: &[&str]) -> usize {
    let dir = tempfile::tempdir().unwrap();
    // The reader pools are SQLite's.
    let db = dir.path().join("leadtrack.db");
    let key = create_acme(&db).await;
    // The test's one client stands for many: 400 requests at once from one address.
    let mut options = vec![
        "--rate-limit-key",
        "off",
        "--no-worker",
        "--max-connections-per-address",
        "512",
    ];
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
    let db = crate::process::binary::fresh_db(&dir).await;
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
