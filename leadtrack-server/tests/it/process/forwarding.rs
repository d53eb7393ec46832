//! Conversions forwarded end to end through the standalone server: integrations connected
//! with the admin commands, pointed at local mock platforms.

use std::path::Path;
use std::time::{Duration, Instant};

use leadtrack_client::Client;
use leadtrack_core::api::{
    AttributionData, ConversionId, CreateLeadRequest, LeadIdentifier, LeadStatus,
    UpdateLeadStatusRequest, UserData,
};
use leadtrack_core::types::{AttemptOutcome, DeliveryState, IntegrationKind, JobState, LeadId};
use leadtrack_platforms::normalize::sha256_hex;
use leadtrack_platforms::testkit::{MockPlatform, MockResponse, rules};
use serde_json::json;

use crate::process::binary::{
    admin, admin_ok, connect_webhook, create_acme, create_label, start, start_serve, start_worker,
};

struct Mocks {
    ga4: MockPlatform,
    meta: MockPlatform,
    token: MockPlatform,
    ads: MockPlatform,
    hook: MockPlatform,
}

async fn mocks() -> Mocks {
    Mocks {
        ga4: MockPlatform::start(MockResponse::empty(204)).await,
        meta: MockPlatform::start(MockResponse::json(
            200,
            json!({"events_received": 1, "messages": [], "fbtrace_id": "t"}),
        ))
        .await,
        token: MockPlatform::start(MockResponse::json(
            200,
            json!({"access_token": "ya29.e2e", "expires_in": 3599}),
        ))
        .await,
        ads: MockPlatform::start(MockResponse::json(200, json!({"requestId": "r"}))).await,
        hook: MockPlatform::start(MockResponse::json(200, json!({}))).await,
    }
}

/// A project `acme` with all four integrations on the mocks and a label mapped to all;
/// returns its API key and the label.
async fn configure(db: &Path, mocks: &Mocks) -> (String, uuid::Uuid) {
    let key = create_acme(db).await;
    admin_ok(
        db,
        &[
            "integration",
            "ga4",
            "--project",
            "acme",
            "--measurement-id",
            "G-E2E",
            "--api-secret",
            "ga4-secret",
            "--base-url",
            mocks.ga4.url(),
        ],
    )
    .await;
    admin_ok(
        db,
        &[
            "integration",
            "meta",
            "--project",
            "acme",
            "--pixel-id",
            "777",
            "--access-token",
            "meta-token",
            "--action-source",
            "phone_call",
            "--base-url",
            mocks.meta.url(),
        ],
    )
    .await;
    let token_url = format!("{}/token", mocks.token.url());
    admin_ok(
        db,
        &[
            "integration",
            "google-ads",
            "--project",
            "acme",
            "--customer-id",
            "111-222-3333",
            "--client-id",
            "cid",
            "--client-secret",
            "client-secret",
            "--refresh-token",
            "refresh-token",
            "--token-url",
            &token_url,
            "--base-url",
            mocks.ads.url(),
        ],
    )
    .await;
    connect_webhook(db, &mocks.hook, "whsec_e2e").await;
    let label = create_label(
        db,
        "Customer",
        &[
            "--mark-as-done",
            "--ga4-event",
            "purchase",
            "--meta-event",
            "Purchase",
            "--google-ads-action",
            "customers/1112223333/conversionActions/555",
            "--webhook",
        ],
    )
    .await;
    (key, label)
}

async fn create_and_rate(base_url: &str, key: &str, label: uuid::Uuid) -> LeadId {
    let lead = CreateLeadRequest {
        project_id: Some("acme".into()),
        user_data: Some(UserData {
            email: Some("Buyer@Example.com".into()),
            ..UserData::default()
        }),
        attribution_data: Some(AttributionData {
            gclid: Some("GCLID-E2E".into()),
            cid: Some("555.666".into()),
            fbp: Some("fb.1.1700000000000.42".into()),
            ..AttributionData::default()
        }),
        ..CreateLeadRequest::default()
    };
    let created = Client::new(base_url).create_lead(&lead).await.unwrap();
    let rated = Client::new(base_url)
        .with_api_key(key)
        .update_lead_status(&UpdateLeadStatusRequest {
            identifier: LeadIdentifier::LeadId(created.lead_id),
            conversion_id: ConversionId::Label(label),
            price: Some(125_000),
            note: None,
        })
        .await
        .unwrap();
    assert_eq!((rated.queued, rated.status), (true, LeadStatus::Pending));
    assert_eq!(
        rated.warnings,
        Some(vec![]),
        "every connected integration can be served"
    );
    created.lead_id
}

/// Polls until the lead leaves `pending`.
async fn settled(client: &Client, lead: LeadId) -> LeadStatus {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status = client
            .get_lead(&LeadIdentifier::LeadId(lead))
            .await
            .unwrap()
            .status;
        if status != LeadStatus::Pending || Instant::now() > deadline {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_rated_lead_reaches_every_platform_once_and_ends_rated() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::process::binary::fresh_db(&dir).await;
    let mocks = mocks().await;
    let (key, label) = configure(&db, &mocks).await;
    let unknown = admin(
        &db,
        &[
            "integration",
            "meta",
            "--project",
            "acme",
            "--action-source",
            "crm",
        ],
    )
    .await;
    assert!(!unknown.status.success());
    let said = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        said.contains("not one of Meta's: other, website, phone_call"),
        "{said}"
    );
    let server = start(&db).await;
    let client = Client::new(&server.base_url).with_api_key(&key);
    let lead = create_and_rate(&server.base_url, &key, label).await;

    assert_eq!(settled(&client, lead).await, LeadStatus::Rated);
    let jobs = client
        .get_lead_jobs(&LeadIdentifier::LeadId(lead))
        .await
        .unwrap();
    assert_eq!(
        (jobs.message.as_str(), jobs.lead_id, jobs.jobs.len()),
        ("Lead jobs retrieved", lead, 1)
    );
    let job = &jobs.jobs[0];
    assert_eq!(
        (job.status, job.price, job.conversion_id),
        (JobState::Done, Some(125_000), ConversionId::Label(label))
    );
    assert_eq!(job.deliveries.len(), 4);
    for delivery in &job.deliveries {
        assert_eq!(
            delivery.status,
            DeliveryState::Delivered,
            "{:?}",
            delivery.integration
        );
        assert_eq!(delivery.attempts.len(), 1);
        assert_eq!(delivery.attempts[0].outcome, AttemptOutcome::Delivered);
    }
    let event_id = job.event_id.to_string();

    let ga4 = mocks.ga4.requests();
    assert_eq!(ga4.len(), 1);
    let body = ga4[0].json();
    assert_eq!(
        (
            body["client_id"].as_str(),
            body["events"][0]["name"].as_str()
        ),
        (Some("555.666"), Some("purchase"))
    );
    assert_eq!(
        body["events"][0]["params"],
        json!({"value": 1250.0, "currency": "EUR", "transaction_id": event_id})
    );
    assert_eq!(
        body["user_data"]["sha256_email_address"],
        json!([sha256_hex("buyer@example.com")])
    );
    assert_eq!(ga4[0].query("api_secret"), Some("ga4-secret"));

    let meta = mocks.meta.requests();
    assert_eq!(meta.len(), 1);
    let event = &meta[0].json()["data"][0];
    assert_eq!(
        (event["event_name"].as_str(), event["event_id"].as_str()),
        (Some("Purchase"), Some(event_id.as_str()))
    );
    assert_eq!(
        event["user_data"]["em"],
        json!([sha256_hex("buyer@example.com")])
    );
    assert_eq!(event["user_data"]["fbp"], "fb.1.1700000000000.42");
    assert_eq!(
        event["user_data"]["client_ip_address"], "127.0.0.1",
        "filled by the server from the request"
    );
    assert_eq!(meta[0].path, "/v23.0/777/events");
    assert_eq!(event["action_source"], "phone_call");

    let ads = mocks.ads.requests();
    assert_eq!(ads.len(), 1);
    let ingest = ads[0].json();
    assert_eq!(ingest["destinations"][0]["productDestinationId"], "555");
    assert_eq!(
        ingest["destinations"][0]["operatingAccount"]["accountId"],
        "1112223333"
    );
    assert_eq!(
        ingest["events"][0]["adIdentifiers"],
        json!({"gclid": "GCLID-E2E"})
    );
    assert_eq!(ingest["events"][0]["transactionId"], event_id);
    assert_eq!(ads[0].header("authorization"), Some("Bearer ya29.e2e"));
    assert_eq!(mocks.token.requests().len(), 1);

    let hook = mocks.hook.requests();
    assert_eq!(hook.len(), 1);
    assert_eq!(
        (
            hook[0].json()["type"].as_str(),
            hook[0].json()["id"].as_str()
        ),
        (Some("lead.converted"), Some(event_id.as_str()))
    );
    hook[0].assert_signed("whsec_e2e");

    assert!(server.terminate().await.success());
}

#[tokio::test]
async fn ingestion_and_delivery_run_apart() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::process::binary::fresh_db(&dir).await;
    let mocks = mocks().await;
    let (key, label) = configure(&db, &mocks).await;
    let api = start_serve(&db, &["--no-worker"]).await;
    let client = Client::new(&api.base_url).with_api_key(&key);
    let lead = create_and_rate(&api.base_url, &key, label).await;
    // No worker in this process: it never looks for work, and nothing is delivered.
    assert_eq!(api.worker_polls().await, 0, "--no-worker runs no worker");
    assert!(
        mocks.hook.requests().is_empty(),
        "--no-worker delivers nothing"
    );
    assert_eq!(
        client
            .get_lead(&LeadIdentifier::LeadId(lead))
            .await
            .unwrap()
            .status,
        LeadStatus::Pending
    );

    let worker = start_worker(&db).await;
    assert_eq!(settled(&client, lead).await, LeadStatus::Rated);
    for mock in [&mocks.ga4, &mocks.meta, &mocks.ads, &mocks.hook] {
        assert_eq!(mock.requests().len(), 1);
    }
    assert!(
        worker.terminate().await.success(),
        "the worker stops gracefully"
    );
    assert!(api.terminate().await.success());
}

#[tokio::test]
async fn the_worker_flags_set_the_whole_retry_schedule() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::process::binary::fresh_db(&dir).await;
    let key = create_acme(&db).await;
    let hook = MockPlatform::start(MockResponse::empty(503)).await;
    // The first refusal asks for a second (Retry-After in seconds), the second for a moment
    // 5 s from now (an HTTP date); the rest say nothing.
    let asked_at = Instant::now();
    let date = (chrono::Utc::now() + chrono::Duration::seconds(5))
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    hook.push(MockResponse::empty(503).with_header("retry-after", "1"));
    hook.push(MockResponse::empty(503).with_header("retry-after", &date));
    connect_webhook(&db, &hook, "whsec_r").await;
    let label = create_label(&db, "Customer", &["--webhook"]).await;
    let server = start_serve(
        &db,
        &[
            "--retry-first-delay",
            "100ms",
            "--retry-factor",
            "1",
            "--retry-attempts",
            "8",
            "--retry-window",
            "10m",
        ],
    )
    .await;
    let client = Client::new(&server.base_url).with_api_key(&key);
    let lead = Client::new(&server.base_url)
        .create_lead(&CreateLeadRequest {
            project_id: Some("acme".into()),
            user_data: Some(UserData {
                email: Some("retry@example.com".into()),
                ..UserData::default()
            }),
            ..CreateLeadRequest::default()
        })
        .await
        .unwrap()
        .lead_id;
    client
        .update_lead_status(&UpdateLeadStatusRequest {
            identifier: LeadIdentifier::LeadId(lead),
            conversion_id: ConversionId::Label(label),
            price: None,
            note: None,
        })
        .await
        .unwrap();
    assert_ne!(settled(&client, lead).await, LeadStatus::Pending);

    let jobs = client
        .get_lead_jobs(&LeadIdentifier::LeadId(lead))
        .await
        .unwrap();
    let delivery = &jobs.jobs[0].deliveries[0];
    assert_eq!(delivery.status, DeliveryState::Failed);
    let outcomes: Vec<_> = delivery.attempts.iter().map(|a| a.outcome).collect();
    let mut expected = vec![AttemptOutcome::Retry; 7];
    expected.push(AttemptOutcome::Failed);
    assert_eq!(outcomes, expected, "eight attempts, then it gave up");
    let received: Vec<Instant> = hook.requests().iter().map(|r| r.received).collect();
    assert_eq!(received.len(), 8);
    let gaps: Vec<Duration> = received.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        gaps[0] >= Duration::from_secs(1),
        "Retry-After: 1 ({gaps:?})"
    );
    // The date is 5 s after `asked_at`, in whole seconds: at least 4 s after it.
    assert!(
        received[2] >= asked_at + Duration::from_secs(4),
        "Retry-After as an HTTP date ({:?} after it was set)",
        received[2] - asked_at
    );
    assert!(
        gaps[2..].iter().all(|gap| *gap < Duration::from_secs(5)),
        "the rest wait about 100 ms and a poll ({gaps:?})"
    );
    assert!(server.terminate().await.success());
}

#[tokio::test]
async fn integration_test_sends_one_event_in_each_platforms_test_mode() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::process::binary::fresh_db(&dir).await;
    let mocks = mocks().await;
    configure(&db, &mocks).await;
    mocks
        .ga4
        .push(MockResponse::json(200, json!({"validationMessages": []})));
    let test = |args: &'static [&'static str]| {
        let db = db.clone();
        async move {
            let mut line = vec!["integration", "test", "--project", "acme"];
            line.extend_from_slice(args);
            admin(&db, &line).await
        }
    };
    let said = |output: &std::process::Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    };

    let ga4 = test(&["--kind", "ga4", "--event", "qualify_lead"]).await;
    assert!(ga4.status.success(), "{}", said(&ga4));
    assert!(said(&ga4).contains("ga4 accepted the test event (HTTP 200)"));
    let sent = mocks.ga4.requests();
    assert_eq!(sent[0].path, "/debug/mp/collect");
    assert_eq!(sent[0].json()["events"][0]["name"], "qualify_lead");

    // Meta counts an event without a test event code: none is sent without one.
    let uncoded = test(&["--kind", "meta"]).await;
    assert!(!uncoded.status.success());
    assert!(
        said(&uncoded).contains("test event code"),
        "{}",
        said(&uncoded)
    );
    assert!(mocks.meta.requests().is_empty());
    let meta = test(&["--kind", "meta", "--test-event-code", "TEST4242"]).await;
    assert!(meta.status.success(), "{}", said(&meta));
    assert!(said(&meta).contains("events_received"));
    let body = mocks.meta.requests()[0].json();
    assert_eq!(body["test_event_code"], "TEST4242");
    assert_eq!(body["data"][0]["event_name"], "Lead");

    let ads = test(&["--kind", "google-ads", "--conversion-action", "555"]).await;
    assert!(ads.status.success(), "{}", said(&ads));
    let body = mocks.ads.requests()[0].json();
    assert_eq!(body["validateOnly"], true);
    assert_eq!(body["destinations"][0]["productDestinationId"], "555");

    let hook = test(&["--kind", "webhook"]).await;
    assert!(hook.status.success(), "{}", said(&hook));
    let ping = &mocks.hook.requests()[0];
    assert_eq!(ping.json()["type"], "ping");
    ping.assert_signed("whsec_e2e");

    // A refusal is a failure, with the platform's words and none of the credentials.
    mocks
        .hook
        .push(MockResponse::json(410, json!({"error": "gone"})));
    let refused = test(&["--kind", "webhook"]).await;
    assert!(!refused.status.success());
    assert!(said(&refused).contains("did not accept the test event (HTTP 410)"));
    assert!(!said(&refused).contains("whsec_e2e"));
    admin_ok(
        &db,
        &["integration", "ga4", "--project", "acme", "--disconnect"],
    )
    .await;
    let gone = test(&["--kind", "ga4"]).await;
    assert!(!gone.status.success());
    assert!(said(&gone).contains("ga4 is not connected; nothing was sent"));
    for mock in [&mocks.ga4, &mocks.meta, &mocks.ads, &mocks.hook] {
        assert!(
            mock.requests().iter().all(|r| r.path != "/mp/collect"),
            "no test counts as a conversion"
        );
    }
}

#[tokio::test]
async fn microsoft_advertising_and_linkedin_are_connected_and_served_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::process::binary::fresh_db(&dir).await;
    let key = create_acme(&db).await;
    let microsoft =
        MockPlatform::start(MockResponse::took_one(IntegrationKind::MicrosoftAds)).await;
    let linkedin = MockPlatform::start(MockResponse::json(
        200,
        json!({"elements": [{"status": 201}]}),
    ))
    .await;
    let tokens = MockPlatform::start(MockResponse::json(
        200,
        json!({"access_token": "token-e2e", "expires_in": 3600}),
    ))
    .await;
    let ms_token = format!("{}/ms", tokens.url());
    let li_token = format!("{}/li", tokens.url());
    let connect_microsoft = [
        "integration",
        "microsoft-ads",
        "--project",
        "acme",
        "--customer-id",
        "1111",
        "--account-id",
        "2222",
        "--developer-token",
        "dev-token-e2e",
        "--client-id",
        "ms-app",
        "--refresh-token",
        "ms-refresh-e2e",
        "--token-url",
        &ms_token,
        "--base-url",
        microsoft.url(),
    ];
    admin_ok(&db, &connect_microsoft).await;
    let connect_linkedin = [
        "integration",
        "linkedin",
        "--project",
        "acme",
        "--client-id",
        "li-app",
        "--client-secret",
        "li-secret-e2e",
        "--refresh-token",
        "li-refresh-e2e",
        "--token-url",
        &li_token,
        "--base-url",
        linkedin.url(),
    ];
    admin_ok(&db, &connect_linkedin).await;
    let listed = admin(&db, &["integration", "list", "--project", "acme", "--json"]).await;
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    let described: serde_json::Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(described["microsoftAds"]["accountId"], "2222");
    assert_eq!(described["linkedin"]["apiVersion"], "202510");
    for secret in [
        "dev-token-e2e",
        "ms-refresh-e2e",
        "li-secret-e2e",
        "li-refresh-e2e",
    ] {
        assert!(!listed.contains(secret), "{secret} is never shown");
    }
    let check = admin(
        &db,
        &[
            "integration",
            "test",
            "--project",
            "acme",
            "--kind",
            "microsoft-ads",
        ],
    )
    .await;
    assert!(check.status.success());
    assert!(String::from_utf8_lossy(&check.stdout).contains("got an access token"));
    let label = create_label(
        &db,
        "Customer",
        &[
            "--mark-as-done",
            "--microsoft-ads-conversion",
            "Offline purchase",
            "--linkedin-conversion",
            "4242",
        ],
    )
    .await;

    let server = start(&db).await;
    let client = Client::new(&server.base_url).with_api_key(&key);
    let created = Client::new(&server.base_url)
        .create_lead(&CreateLeadRequest {
            project_id: Some("acme".into()),
            user_data: Some(UserData {
                email: Some("buyer@example.com".into()),
                ..UserData::default()
            }),
            attribution_data: Some(AttributionData {
                msclkid: Some("0123456789abcdef0123456789abcdef".into()),
                li_fat_id: Some("li-fat-e2e".into()),
                ..AttributionData::default()
            }),
            ..CreateLeadRequest::default()
        })
        .await
        .unwrap();
    let found = client
        .get_leads(&leadtrack_core::request::LeadQuery {
            msclkid_exists: Some(true),
            li_fat_id_exists: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(found.leads.len(), 1, "the [exists] filters find the lead");
    let rated = client
        .update_lead_status(&UpdateLeadStatusRequest {
            identifier: LeadIdentifier::LeadId(created.lead_id),
            conversion_id: ConversionId::Label(label),
            price: Some(10_000),
            note: None,
        })
        .await
        .unwrap();
    assert_eq!(rated.warnings, Some(vec![]));
    assert_eq!(settled(&client, created.lead_id).await, LeadStatus::Rated);
    let applied = microsoft.requests();
    assert_eq!(applied.len(), 1);
    assert_eq!(
        applied[0].json()["OfflineConversions"][0]["MicrosoftClickId"],
        "0123456789abcdef0123456789abcdef"
    );
    assert_eq!(applied[0].header("developertoken"), Some("dev-token-e2e"));
    let events = linkedin.requests();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].header("x-restli-method"), Some("BATCH_CREATE"));
    assert_eq!(
        events[0].json()["elements"][0]["conversion"],
        "urn:lla:llaPartnerConversion:4242"
    );
    assert_eq!(
        events[0].json()["elements"][0]["conversionValue"],
        json!({"currencyCode": "EUR", "amount": "100.00"})
    );
    assert!(server.terminate().await.success());
}

/// TikTok, Reddit, Pinterest and Snapchat from the command line: connected, their tokens
/// never shown,
/// a test event in each one's test mode (and none without it), a label's events, and a
/// rating delivered as each one's documentation describes
/// (<https://ads.tiktok.com/help/article/how-to-postback-signals-through-events-api>,
/// <https://ads-api.reddit.com/docs/v3/capi-migration>,
/// <https://developers.pinterest.com/docs/api/v5/events-create>,
/// <https://developers.snap.com/api/marketing-api/Conversions-API/Parameters>).
#[tokio::test]
async fn the_newer_platforms_are_connected_tested_and_served_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::process::binary::fresh_db(&dir).await;
    let key = create_acme(&db).await;
    let tiktok = MockPlatform::start(MockResponse::took_one(IntegrationKind::Tiktok)).await;
    let reddit = MockPlatform::start(MockResponse::took_one(IntegrationKind::Reddit)).await;
    let connect_tiktok = [
        "integration",
        "tiktok",
        "--project",
        "acme",
        "--event-set-id",
        "7300000000000000001",
        "--access-token",
        "tt-token-e2e",
        "--base-url",
        tiktok.url(),
    ];
    admin_ok(&db, &connect_tiktok).await;
    let connect_reddit = [
        "integration",
        "reddit",
        "--project",
        "acme",
        "--pixel-id",
        "a2_e2e",
        "--access-token",
        "rd-token-e2e",
        "--base-url",
        reddit.url(),
    ];
    admin_ok(&db, &connect_reddit).await;
    let pinterest = MockPlatform::start(MockResponse::took_one(IntegrationKind::Pinterest)).await;
    let connect_pinterest = [
        "integration",
        "pinterest",
        "--project",
        "acme",
        "--ad-account-id",
        "549755885175",
        "--access-token",
        "pin-token-e2e",
        "--base-url",
        pinterest.url(),
    ];
    admin_ok(&db, &connect_pinterest).await;
    let snapchat = MockPlatform::start(MockResponse::took_one(IntegrationKind::Snapchat)).await;
    let connect_snapchat = [
        "integration",
        "snapchat",
        "--project",
        "acme",
        "--pixel-id",
        "snap-pixel-e2e",
        "--access-token",
        "snap-token-e2e",
        "--base-url",
        snapchat.url(),
    ];
    admin_ok(&db, &connect_snapchat).await;
    let listed = admin(&db, &["integration", "list", "--project", "acme", "--json"]).await;
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    let described: serde_json::Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(described["tiktok"]["eventSetId"], "7300000000000000001");
    assert_eq!(described["reddit"]["pixelId"], "a2_e2e");
    assert_eq!(described["pinterest"]["adAccountId"], "549755885175");
    assert_eq!(described["snapchat"]["pixelId"], "snap-pixel-e2e");
    for token in [
        "tt-token-e2e",
        "rd-token-e2e",
        "pin-token-e2e",
        "snap-token-e2e",
    ] {
        assert!(!listed.contains(token), "{token} is never shown");
    }

    // A test event goes in the platform's test mode, or not at all: else it would count.
    let test = |kind: &'static str, code: Option<&'static str>| {
        let db = db.clone();
        async move {
            let mut line = vec!["integration", "test", "--project", "acme", "--kind", kind];
            if let Some(code) = code {
                line.extend(["--test-event-code", code]);
            }
            admin(&db, &line).await
        }
    };
    for kind in ["tiktok", "reddit"] {
        let uncoded = test(kind, None).await;
        assert!(!uncoded.status.success(), "{kind}");
        let said = String::from_utf8_lossy(&uncoded.stderr).into_owned();
        assert!(said.contains("test"), "{kind}: {said}");
    }
    assert!(tiktok.requests().is_empty() && reddit.requests().is_empty());
    assert!(test("tiktok", Some("TEST77")).await.status.success());
    let sent = tiktok.requests();
    assert_eq!(sent[0].header("access-token"), Some("tt-token-e2e"));
    assert_eq!(
        (
            &sent[0].json()["test_event_code"],
            &sent[0].json()["event_source"],
            &sent[0].json()["data"][0]["event"]
        ),
        (&json!("TEST77"), &json!("crm"), &json!("Lead"))
    );
    assert!(test("reddit", Some("t2_test")).await.status.success());
    let sent = reddit.requests();
    assert_eq!(sent[0].header("authorization"), Some("Bearer rd-token-e2e"));
    assert_eq!(sent[0].json()["data"]["test_id"], "t2_test");
    // Pinterest's test mode is a flag of the request: a test event always has it.
    assert!(test("pinterest", None).await.status.success());
    let sent = pinterest.requests();
    assert_eq!(sent[0].query("test"), Some("true"));
    assert_eq!(sent[0].json()["data"][0]["event_name"], "lead");
    // Snapchat's test goes to its validation endpoint.
    assert!(test("snapchat", None).await.status.success());
    let sent = snapchat.requests();
    assert_eq!(sent[0].path, "/v3/snap-pixel-e2e/events/validate");
    assert_eq!(sent[0].query("access_token"), Some("snap-token-e2e"));

    let label = create_label(
        &db,
        "Customer",
        &[
            "--mark-as-done",
            "--tiktok-event",
            "Won deal",
            "--reddit-event",
            "Purchase",
            "--pinterest-event",
            "checkout",
            "--snapchat-event",
            "PURCHASE",
        ],
    )
    .await;
    let server = start(&db).await;
    let client = Client::new(&server.base_url).with_api_key(&key);
    let ids = json!({"ttclid": "tt-click-e2e", "_ttp": "ttp-e2e", "rdt_cid": "rdt-click-e2e",
                     "epik": "epik-e2e"});
    let created = Client::new(&server.base_url)
        .create_lead(&CreateLeadRequest {
            project_id: Some("acme".into()),
            user_data: Some(UserData {
                email: Some("Buyer@Example.com".into()),
                ..UserData::default()
            }),
            attribution_data: Some(AttributionData {
                extra: serde_json::from_value(ids).unwrap(),
                ..AttributionData::default()
            }),
            ..CreateLeadRequest::default()
        })
        .await
        .unwrap();
    let rated = client
        .update_lead_status(&UpdateLeadStatusRequest {
            identifier: LeadIdentifier::LeadId(created.lead_id),
            conversion_id: ConversionId::Label(label),
            price: Some(10_000),
            note: None,
        })
        .await
        .unwrap();
    assert_eq!(rated.warnings, Some(vec![]));
    assert_eq!(settled(&client, created.lead_id).await, LeadStatus::Rated);
    let jobs = client
        .get_lead_jobs(&LeadIdentifier::LeadId(created.lead_id))
        .await
        .unwrap();
    let event_id = jobs.jobs[0].event_id.to_string();

    let sent = tiktok.requests();
    assert_eq!(sent.len(), 2, "the test event, then the conversion");
    let body = sent[1].json();
    assert_eq!(sent[1].path, "/open_api/v1.3/event/track/");
    assert_eq!(body["event_source_id"], "7300000000000000001");
    assert!(body.get("test_event_code").is_none(), "a real conversion");
    let event = &body["data"][0];
    assert_eq!(
        (&event["event"], &event["event_id"], &event["properties"]),
        (
            &json!("Won deal"),
            &json!(event_id),
            &json!({"value": 100.0, "currency": "EUR"})
        )
    );
    assert_eq!(event["user"]["email"], sha256_hex("buyer@example.com"));
    assert_eq!(
        (
            &event["user"]["ttclid"],
            &event["user"]["ttp"],
            &event["user"]["ip"]
        ),
        (
            &json!("tt-click-e2e"),
            &json!("ttp-e2e"),
            &json!("127.0.0.1")
        )
    );

    let sent = reddit.requests();
    assert_eq!(sent.len(), 2, "the test event, then the conversion");
    assert_eq!(sent[1].path, "/api/v3/pixels/a2_e2e/conversion_events");
    let body = sent[1].json();
    assert!(body["data"].get("test_id").is_none(), "a real conversion");
    let event = &body["data"]["events"][0];
    assert_eq!(
        (&event["type"], &event["click_id"], &event["metadata"]),
        (
            &json!({"tracking_type": "PURCHASE"}),
            &json!("rdt-click-e2e"),
            &json!({"conversion_id": event_id, "value": 100.0, "currency": "EUR"})
        )
    );
    assert_eq!(event["user"]["email"], sha256_hex("buyer@example.com"));

    let sent = pinterest.requests();
    assert_eq!(sent.len(), 2, "the test event, then the conversion");
    assert_eq!(sent[1].path, "/v5/ad_accounts/549755885175/events");
    assert_eq!(sent[1].query("test"), None, "a real conversion");
    let event = &sent[1].json()["data"][0];
    assert_eq!(
        (
            &event["event_name"],
            &event["event_id"],
            &event["custom_data"]
        ),
        (
            &json!("checkout"),
            &json!(event_id),
            &json!({"value": "100.00", "currency": "EUR"})
        )
    );
    assert_eq!(event["user_data"]["click_id"], "epik-e2e");

    let sent = snapchat.requests();
    assert_eq!(sent.len(), 2, "the test event, then the conversion");
    assert_eq!(sent[1].path, "/v3/snap-pixel-e2e/events");
    let event = &sent[1].json()["data"][0];
    assert_eq!(
        (
            &event["event_name"],
            &event["event_id"],
            &event["action_source"]
        ),
        (&json!("PURCHASE"), &json!(event_id), &json!("OFFLINE"))
    );
    assert_eq!(
        event["user_data"]["em"],
        json!([sha256_hex("buyer@example.com")])
    );
    assert!(server.terminate().await.success());
}

#[tokio::test]
async fn lead_webhooks_are_managed_from_the_command_line_and_hear_every_event_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::process::binary::fresh_db(&dir).await;
    let mocks = mocks().await;
    let (key, label) = configure(&db, &mocks).await;
    let crm = MockPlatform::start(MockResponse::empty(204)).await;
    let chat = MockPlatform::start(MockResponse::empty(200)).await;
    let crm_url = format!("{}/crm", crm.url());
    let added = admin(
        &db,
        &[
            "webhook",
            "add",
            "--project",
            "acme",
            "--url",
            &crm_url,
            "--events",
            "lead.created,lead.converted",
            "--json",
        ],
    )
    .await;
    assert!(added.status.success());
    let added: serde_json::Value = serde_json::from_slice(&added.stdout).unwrap();
    assert_eq!(added["events"], json!(["lead.created", "lead.converted"]));
    let crm_secret = added["secret"].as_str().unwrap().to_owned();
    assert!(
        crm_secret.starts_with("whsec_"),
        "a generated secret, shown once"
    );
    let chat_url = format!("{}/chat", chat.url());
    admin_ok(
        &db,
        &[
            "webhook",
            "add",
            "--project",
            "acme",
            "--url",
            &chat_url,
            "--events",
            "lead.created lead.lost",
            "--secret",
            "whsec_chat",
        ],
    )
    .await;
    // Refusals name what is wrong and add nothing.
    for (args, said) in [
        (
            vec!["--url", "ftp://x", "--events", "lead.created"],
            "webhook URL: ftp: addresses are not called; give an https:// address",
        ),
        (
            vec!["--url", &chat_url, "--events", "lead.deleted"],
            "\"lead.deleted\" is not an event",
        ),
    ] {
        let mut command = vec!["webhook", "add", "--project", "acme"];
        command.extend(args);
        let refused = admin(&db, &command).await;
        assert!(!refused.status.success());
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(stderr.contains(said), "{stderr}");
    }
    // A temporary webhook, removed again.
    let spare = admin(
        &db,
        &[
            "webhook",
            "add",
            "--project",
            "acme",
            "--url",
            "https://spare.example",
            "--events",
            "lead.lost",
            "--json",
        ],
    )
    .await;
    let spare: serde_json::Value = serde_json::from_slice(&spare.stdout).unwrap();
    let spare_id = spare["id"].as_str().unwrap().to_owned();
    admin_ok(&db, &["webhook", "remove", "--project", "acme", &spare_id]).await;
    let again = admin(&db, &["webhook", "remove", "--project", "acme", &spare_id]).await;
    assert!(!again.status.success());

    let server = start(&db).await;
    let client = Client::new(&server.base_url).with_api_key(&key);
    let lead = create_and_rate(&server.base_url, &key, label).await;
    assert_eq!(settled(&client, lead).await, LeadStatus::Rated);
    crm.wait_for(2, Duration::from_secs(20)).await;
    chat.wait_for(1, Duration::from_secs(20)).await;
    // The queues drained: whatever else was due has been sent, and nothing else came.
    server.queues_drained().await;

    let mut crm_types: Vec<String> = crm
        .requests()
        .iter()
        .map(|request| {
            request.assert_signed(&crm_secret);
            assert_eq!(request.json()["lead"]["id"], json!(lead.0));
            request.json()["type"].as_str().unwrap().to_owned()
        })
        .collect();
    crm_types.sort();
    assert_eq!(crm_types, ["lead.converted", "lead.created"]);
    let chat_requests = chat.requests();
    assert_eq!(chat_requests.len(), 1);
    assert_eq!(chat_requests[0].json()["type"], "lead.created");

    let listed = admin(&db, &["webhook", "list", "--project", "acme", "--json"]).await;
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let summary: Vec<(&str, u64, u64)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["url"].as_str().unwrap(),
                h["delivered"].as_u64().unwrap(),
                h["pending"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [(crm_url.as_str(), 2, 0), (chat_url.as_str(), 1, 0)]
    );
    assert_eq!(listed[0]["lastAttempt"]["httpStatus"], json!(204));
    assert!(
        !listed.to_string().contains("whsec_"),
        "list shows no secret"
    );
    let text = admin(&db, &["webhook", "list", "--project", "acme"]).await;
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(
            "[lead.created, lead.lost]  pending=0 delivered=1 failed=0  last delivered (HTTP 200)"
        ),
        "{text}"
    );
    assert!(server.terminate().await.success());
}

/// Two worker processes on one database (SQLite, or PostgreSQL when the suite runs on it)
/// share a queue of ratings to Meta and Google Ads: they send them in batches, each
/// conversion in one batch only, and `getLeadJobs` names the request each went in.
#[tokio::test]
async fn two_workers_send_each_conversion_once_in_batches() {
    const LEADS: usize = 200;
    let dir = tempfile::tempdir().unwrap();
    let db = crate::process::binary::fresh_db(&dir).await;
    let mocks = mocks().await;
    let to_meta = rules::meta(&mocks.meta);
    let to_ads = rules::data_manager(&mocks.ads, usize::MAX);
    let (key, _) = configure(&db, &mocks).await;
    let flags = [
        "--mark-as-done",
        "--meta-event",
        "Purchase",
        "--google-ads-action",
        "customers/1112223333/conversionActions/555",
    ];
    let label = create_label(&db, "Batched", &flags).await;
    let api = start_serve(&db, &["--no-worker"]).await;
    let mut leads = Vec::new();
    for _ in 0..LEADS / 20 {
        let twenty = (0..20).map(|_| create_and_rate(&api.base_url, &key, label));
        leads.extend(futures_util::future::join_all(twenty).await);
    }

    let workers = [start_worker(&db).await, start_worker(&db).await];
    let deadline = Instant::now() + Duration::from_secs(60);
    let count = |ids: &rules::Accepted| ids.lock().unwrap().len();
    while count(&to_meta) < LEADS || count(&to_ads) < LEADS {
        assert!(Instant::now() < deadline, "every conversion is delivered");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    api.queues_drained().await;
    let client = Client::new(&api.base_url).with_api_key(&key);
    let mut event_ids = Vec::new();
    let mut batches = std::collections::HashMap::new();
    for &lead in &leads {
        let jobs = client
            .get_lead_jobs(&LeadIdentifier::LeadId(lead))
            .await
            .unwrap();
        let job = &jobs.jobs[0];
        event_ids.push(job.conversion_event_id.to_string());
        for delivery in &job.deliveries {
            let attempts = &delivery.attempts;
            assert_eq!(attempts.len(), 1, "{:?} once", delivery.integration);
            let batch = attempts[0].batch.expect("a batch");
            *batches.entry(batch).or_insert(0) += 1;
        }
    }
    event_ids.sort();
    for accepted in [&to_meta, &to_ads] {
        let mut ids = accepted.lock().unwrap().clone();
        ids.sort();
        assert_eq!(ids, event_ids, "each conversion once");
    }
    // Each request's attempts say how many it carried, and they all went in it.
    for (batch, attempts) in &batches {
        assert_eq!(batch.size as usize, *attempts);
    }
    let requests = mocks.meta.requests().len() + mocks.ads.requests().len();
    assert_eq!(requests, batches.len());
    assert!(
        requests <= 2 * LEADS / 10,
        "{requests} requests for {LEADS} conversions"
    );
    for process in workers.into_iter().chain([api]) {
        assert!(process.terminate().await.success());
    }
}
