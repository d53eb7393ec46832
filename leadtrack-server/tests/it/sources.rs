//! Leads from the ad platforms' own forms, over real sockets, on SQLite (or PostgreSQL
//! with `LEADTRACK_TEST_BACKEND=postgres`).
//!
//! Google Ads lead forms: Google's documented sample body kept as a lead, deliveries
//! Google retries (one after another, or at once) kept once, and a post with a wrong key,
//! to a project that set none, or that is not a lead refused with nothing kept.
//!
//! Meta Lead Ads: the subscription check, unsigned and forged posts refused with nothing
//! fetched, an announced lead fetched from a mock Graph API (down at first: the lead
//! arrives once it is back), once however often Meta announces it, and its funnel stages
//! sent to a mock Conversions API as CRM events for conversion leads: the initial stage
//! once at capture, a rating as its label's stage.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use chrono::{DateTime, TimeDelta, Utc};
use futures_util::future::join_all;
use hmac::{Hmac, KeyInit, Mac};
use leadtrack_core::integration::Secret;
use leadtrack_core::request::LeadQuery;
use leadtrack_core::source::{LeadSource, SourceKind};
use leadtrack_server::testkit::{Parts, TestApp, spawn_app};
use serde_json::{Value, json};
use sha2::Sha256;
use warp::Filter;

const KEY: &str = "lead-form-key-7c2d";

/// The sample lead of Google's implementation guide
/// (<https://developers.google.com/google-ads/webhook/docs/implementation>), with the
/// project's key and `lead_id`, and one question of the advertiser's own.
fn google_lead(lead_id: &str, key: &str) -> Value {
    json!({
        "lead_id": lead_id,
        "user_column_data": [
            {"column_name": "Full Name", "string_value": "FirstName LastName", "column_id": "FULL_NAME"},
            {"column_name": "User Phone", "string_value": "+16505550123", "column_id": "PHONE_NUMBER"},
            {"column_name": "User Email", "string_value": "test@example.com", "column_id": "EMAIL"},
            {"column_name": "Which product?", "string_value": "Analytical engine", "column_id": "which_product"}
        ],
        "api_version": "1.0",
        "form_id": 123_456_789,
        "campaign_id": 123_456_789,
        "google_key": key,
        "is_test": true,
        "gcl_id": "TeSter-123-ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "adgroup_id": 20_000_000_000_i64,
        "creative_id": 30_000_000_000_i64
    })
}

/// An app whose project `site` takes lead form leads sent with [`KEY`].
async fn app() -> TestApp {
    let app = spawn_app(Parts {
        project: "site",
        ..Parts::default()
    })
    .await;
    let source = LeadSource::GoogleLeadForms {
        key: Secret::new(KEY),
    };
    app.store
        .set_lead_source(app.project.id, source.kind(), Some(&source))
        .await
        .unwrap();
    app
}

/// Posts `body` to project `project`'s webhook; its status and body.
async fn post(app: &TestApp, project: &str, body: &Value) -> (u16, Value) {
    let url = format!("{}/webhooks/google/lead-forms/{project}", app.base_url);
    let answer = reqwest::Client::new()
        .post(url)
        .json(body)
        .send()
        .await
        .unwrap();
    let status = answer.status().as_u16();
    (status, answer.json().await.unwrap_or(Value::Null))
}

/// The project's leads, newest first.
async fn leads(app: &TestApp) -> Vec<leadtrack_core::lead::StoredLead> {
    let page = app
        .store
        .list_leads(app.project.id, &LeadQuery::default())
        .await
        .unwrap();
    page.leads
}

#[tokio::test]
async fn a_google_lead_form_lead_is_kept_once_however_often_google_delivers_it() {
    let app = app().await;
    let lead = google_lead("TeSter-123-lead-1", KEY);
    let (status, body) = post(&app, "site", &lead).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["created"], json!(true));
    let kept = leads(&app).await;
    assert_eq!(kept.len(), 1);
    let data = &kept[0].data;
    assert_eq!(body["leadId"], json!(kept[0].id.0));
    assert_eq!(data.user("email"), Some("test@example.com"));
    assert_eq!(data.user("firstName"), Some("FirstName"));
    assert_eq!(data.user("lastName"), Some("LastName"));
    assert_eq!(data.user("phone"), Some("+16505550123"));
    assert_eq!(
        data.attribution("gclid"),
        Some("TeSter-123-ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    );
    assert_eq!(data.attribution("googleCampaignId"), Some("123456789"));
    assert_eq!(data.form_data["Which product?"], json!("Analytical engine"));
    assert_eq!(
        data.form_data["formName"],
        json!("Google Ads lead form 123456789")
    );
    assert_eq!(data.form_data["isTest"], json!(true));

    // Google delivers again until it hears 200: once after another, then five at once.
    let (status, again) = post(&app, "site", &lead).await;
    assert_eq!((status, &again["created"]), (200, &json!(false)));
    assert_eq!(again["leadId"], body["leadId"]);
    let retried = google_lead("TeSter-123-lead-2", KEY);
    let answers = join_all((0..5).map(|_| post(&app, "site", &retried))).await;
    assert!(
        answers.iter().all(|(status, _)| *status == 200),
        "{answers:?}"
    );
    let created = answers
        .iter()
        .filter(|(_, body)| body["created"] == json!(true))
        .count();
    assert_eq!(created, 1, "{answers:?}");
    assert_eq!(leads(&app).await.len(), 2);
}

#[tokio::test]
async fn a_post_with_a_wrong_key_or_to_a_project_without_lead_forms_keeps_nothing() {
    let app = app().await;
    let (status, body) = post(&app, "site", &google_lead("forged-1", "guessed")).await;
    assert_eq!(status, 401);
    assert_eq!(body["code"], json!("invalid_api_key"));
    assert!(!body.to_string().contains(KEY));
    let (status, not_a_lead) = post(&app, "site", &json!({"hello": "world"})).await;
    assert_eq!((status, &not_a_lead["code"]), (400, &json!("invalid_json")));

    // No key set: the same answer, which tells nothing of whether one is.
    app.store
        .set_lead_source(app.project.id, SourceKind::GoogleLeadForms, None)
        .await
        .unwrap();
    let (status, unset) = post(&app, "site", &google_lead("forged-2", KEY)).await;
    assert_eq!((status, &unset), (401, &body));

    let (status, body) = post(&app, "nowhere", &google_lead("forged-3", KEY)).await;
    assert_eq!((status, &body["code"]), (404, &json!("project_not_found")));
    let get = reqwest::get(format!("{}/webhooks/google/lead-forms/site", app.base_url))
        .await
        .unwrap();
    assert_eq!(get.status(), 405);
    assert_eq!(get.headers()["allow"], "POST");
    let get: Value = get.json().await.unwrap();
    assert_eq!(get["message"], json!("Google posts its leads: use POST"));
    // A path below a project's is none of the sources' (its id is one segment): the host's
    // 404, and nothing kept.
    let (status, below) = post(&app, "site/extra", &google_lead("forged-4", KEY)).await;
    assert_eq!((status, &below["code"]), (404, &json!("not_found")));
    assert!(leads(&app).await.is_empty());
}

const APP_SECRET: &str = "meta-app-secret-test";
const VERIFY_TOKEN: &str = "meta-verify-token-test";
const PAGE: &str = "1234567890";
const PAGE_TOKEN: &str = "page-token-test";
const LEADGEN_ID: &str = "444444444444";

/// When the Graph API says the lead was submitted: a day before the tests run, whole
/// seconds, so that it is always within the 7 days Meta takes events for (a fixed date
/// would pass one week and fail the next).
static SUBMITTED: LazyLock<DateTime<Utc>> = LazyLock::new(|| {
    let day_ago = Utc::now() - TimeDelta::days(1);
    DateTime::from_timestamp(day_ago.timestamp(), 0).expect("a time")
});
const FORM_ID: &str = "666666666";

/// A stand-in for the Graph API's lead and form reads
/// (<https://developers.facebook.com/docs/marketing-api/guides/lead-ads/retrieving/>): the
/// page's token in the `Authorization` header, else Meta's `OAuthException` (code 190);
/// `503` while down. It records every read.
struct Graph {
    url: String,
    down: Arc<AtomicBool>,
    reads: Arc<Mutex<Vec<String>>>,
}

impl Graph {
    async fn start() -> Self {
        let (down, reads) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(Mutex::new(Vec::new())),
        );
        let (is_down, read) = (Arc::clone(&down), Arc::clone(&reads));
        let route = warp::get()
            .and(warp::path!("v23.0" / String))
            .and(warp::query::<std::collections::HashMap<String, String>>())
            .and(warp::header::optional::<String>("authorization"))
            .map(
                move |id: String,
                      query: std::collections::HashMap<String, String>,
                      auth: Option<String>| {
                    read.lock().unwrap().push(id.clone());
                    let reply = |status: u16, body: Value| {
                        warp::reply::with_status(
                            warp::reply::json(&body),
                            warp::http::StatusCode::from_u16(status).unwrap(),
                        )
                    };
                    if is_down.load(Ordering::SeqCst) {
                        return reply(
                            503,
                            json!({"error": {"message": "Service unavailable", "code": 2}}),
                        );
                    }
                    if auth.as_deref() != Some(&format!("Bearer {PAGE_TOKEN}")) {
                        return reply(
                            400,
                            json!({"error": {"type": "OAuthException", "code": 190}}),
                        );
                    }
                    let fields = query.get("fields").map(String::as_str).unwrap_or_default();
                    match id.as_str() {
                        LEADGEN_ID if fields.contains("field_data") => reply(
                            200,
                            json!({
                                "created_time": SUBMITTED.format("%Y-%m-%dT%H:%M:%S%z").to_string(),
                                "id": LEADGEN_ID,
                                "ad_id": "555555555",
                                "form_id": FORM_ID,
                                "campaign_id": "777777777",
                                "field_data": [
                                    {"name": "car_make", "values": ["Honda"]},
                                    {"name": "full_name", "values": ["Joe Example"]},
                                    {"name": "email", "values": ["joe@example.com"]},
                                    {"name": "phone_number", "values": ["+15555550100"]}
                                ]
                            }),
                        ),
                        FORM_ID => reply(200, json!({"id": FORM_ID, "name": "Test drive"})),
                        _ => reply(
                            404,
                            json!({"error": {"type": "GraphMethodException", "code": 100}}),
                        ),
                    }
                },
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(warp::serve(route).incoming(listener).run());
        Self { url, down, reads }
    }

    fn reads(&self) -> Vec<String> {
        self.reads.lock().unwrap().clone()
    }
}

/// An app whose project `site` takes the leads of [`PAGE`], read from `graph`, with the
/// fetcher running.
async fn meta_app(graph: &Graph) -> TestApp {
    meta_app_calling(graph, leadtrack_core::testkit::mock_targets()).await
}

/// [`meta_app`], whose fetcher calls the addresses `targets` allows.
async fn meta_app_calling(graph: &Graph, targets: leadtrack_core::target::Targets) -> TestApp {
    let app = spawn_app(Parts {
        project: "site",
        sources: leadtrack_sources::Config {
            meta: Some(leadtrack_sources::MetaApp {
                app_secret: Secret::new(APP_SECRET),
                verify_token: Secret::new(VERIFY_TOKEN),
            }),
        },
        targets,
        ..Parts::default()
    })
    .await;
    let source = LeadSource::MetaLeadAds {
        page_id: PAGE.to_owned(),
        page_access_token: Secret::new(PAGE_TOKEN),
        base_url: Some(graph.url.clone()),
    };
    app.store
        .set_lead_source(app.project.id, source.kind(), Some(&source))
        .await
        .unwrap();
    app.start_worker();
    app
}

/// The announcement of Meta's leadgen webhook guide
/// (<https://developers.facebook.com/docs/graph-api/webhooks/getting-started/webhooks-for-leadgen/>),
/// for [`PAGE`] and [`LEADGEN_ID`].
fn announcement() -> String {
    json!({
        "object": "page",
        "entry": [{
            "id": PAGE,
            "time": 1_763_628_554,
            "changes": [{
                "field": "leadgen",
                "value": {
                    "ad_id": "555555555",
                    "form_id": FORM_ID,
                    "leadgen_id": LEADGEN_ID,
                    "created_time": 1_763_628_554,
                    "page_id": PAGE,
                    "adgroup_id": "44444444444"
                }
            }]
        }]
    })
    .to_string()
}

/// `X-Hub-Signature-256` of `body` with `secret`.
fn signature(secret: &str, body: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body.as_bytes());
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// Posts `body` to the Meta webhook with `signature`, if any; the status.
async fn announce(app: &TestApp, body: &str, signature: Option<&str>) -> u16 {
    let post = reqwest::Client::new()
        .post(format!("{}/webhooks/meta/leadgen", app.base_url))
        .header("content-type", "application/json")
        .body(body.to_owned());
    let post = match signature {
        Some(signature) => post.header("x-hub-signature-256", signature),
        None => post,
    };
    post.send().await.unwrap().status().as_u16()
}

/// The project's leads once there are `count` (10 s at most).
async fn leads_once(app: &TestApp, count: usize) -> Vec<leadtrack_core::lead::StoredLead> {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let kept = leads(app).await;
        if kept.len() >= count || tokio::time::Instant::now() > deadline {
            return kept;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn meta_checks_the_subscription_with_the_verify_token() {
    let graph = Graph::start().await;
    let app = meta_app(&graph).await;
    let check = |token: &str| {
        format!(
            "{}/webhooks/meta/leadgen?hub.mode=subscribe&hub.verify_token={token}&hub.challenge=1158201444",
            app.base_url
        )
    };
    let answer = reqwest::get(check(VERIFY_TOKEN)).await.unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.text().await.unwrap(), "1158201444");
    let refused = reqwest::get(check("guessed")).await.unwrap();
    assert_eq!(refused.status(), 401);
    assert!(!refused.text().await.unwrap().contains("1158201444"));
}

#[tokio::test]
async fn unsigned_or_forged_announcements_are_refused_and_nothing_is_fetched() {
    let graph = Graph::start().await;
    let app = meta_app(&graph).await;
    let body = announcement();
    assert_eq!(announce(&app, &body, None).await, 401);
    let forged = signature("not-the-app-secret", &body);
    assert_eq!(announce(&app, &body, Some(&forged)).await, 401);
    assert_eq!(announce(&app, &body, Some("sha256=zz")).await, 401);
    // Signed, but for another body.
    let other = signature(APP_SECRET, "{}");
    assert_eq!(announce(&app, &body, Some(&other)).await, 401);
    app.queues_drained().await;
    assert!(graph.reads().is_empty(), "{:?}", graph.reads());
    assert!(leads(&app).await.is_empty());
}

#[tokio::test]
async fn an_announced_lead_arrives_once_meta_is_back_and_once_however_often_announced() {
    let graph = Graph::start().await;
    graph.down.store(true, Ordering::SeqCst);
    let app = meta_app(&graph).await;
    let body = announcement();
    let signed = signature(APP_SECRET, &body);
    assert_eq!(announce(&app, &body, Some(&signed)).await, 200);
    // Meta is down: the fetch fails, and is tried again.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while graph.reads().is_empty() {
        assert!(std::time::Instant::now() < deadline, "no fetch was tried");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(leads(&app).await.is_empty());
    graph.down.store(false, Ordering::SeqCst);
    let kept = leads_once(&app, 1).await;
    assert_eq!(kept.len(), 1);
    let data = &kept[0].data;
    assert_eq!(data.user("email"), Some("joe@example.com"));
    assert_eq!(data.user("firstName"), Some("Joe"));
    assert_eq!(data.user("phone"), Some("+15555550100"));
    assert_eq!(data.form_data["formName"], json!("Test drive"));
    assert_eq!(data.form_data["car_make"], json!("Honda"));
    assert_eq!(data.form_data["metaLeadId"], json!(LEADGEN_ID));
    assert_eq!(data.attribution("metaAdId"), Some("555555555"));
    assert_eq!(data.attribution("metaCampaignId"), Some("777777777"));
    assert_eq!(kept[0].created_at, *SUBMITTED, "its original created_time");

    // Meta announces again (it retries, and may announce twice), also several at once.
    let again = join_all((0..4).map(|_| announce(&app, &body, Some(&signed)))).await;
    assert_eq!(again, [200; 4]);
    let reads = graph.reads().len();
    app.queues_drained().await;
    assert_eq!(graph.reads().len(), reads, "nothing fetched again");
    assert_eq!(leads(&app).await.len(), 1);
}

#[tokio::test]
async fn a_graph_address_the_rule_refuses_is_never_read() {
    let graph = Graph::start().await;
    // The source was saved while loopback was allowed; the fetcher allows `http://` only.
    let app = meta_app_calling(
        &graph,
        leadtrack_core::target::Targets::new("", true).unwrap(),
    )
    .await;
    let warnings = leadtrack_core::testkit::capture_logs(tracing::Level::WARN);
    let body = announcement();
    let signed = signature(APP_SECRET, &body);
    assert_eq!(announce(&app, &body, Some(&signed)).await, 200);
    // The fetch is tried, and refused with the reason before anything is sent; twice, so
    // that a retry is refused too.
    let refused = "the address is loopback (127.0.0.1)";
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while warnings.text().matches(refused).count() < 2 {
        assert!(std::time::Instant::now() < deadline, "{}", warnings.text());
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(graph.reads().is_empty(), "a refused address was read");
    assert!(leads(&app).await.is_empty());
}

#[tokio::test]
async fn a_lead_ads_leads_stages_go_to_meta_as_crm_events_for_conversion_leads() {
    use leadtrack_core::integration::{IntegrationSettings, MetaSettings};
    use leadtrack_core::label::{LabelMapping, NewLabel};
    use leadtrack_platforms::testkit::{MockPlatform, MockResponse};

    let graph = Graph::start().await;
    let pixel = MockPlatform::start(MockResponse::json(
        200,
        json!({"events_received": 1, "messages": [], "fbtrace_id": "t"}),
    ))
    .await;
    let app = meta_app(&graph).await;
    let settings = IntegrationSettings::Meta(MetaSettings {
        pixel_id: "987".into(),
        access_token: Secret::new("dataset-token"),
        api_version: "v23.0".into(),
        test_event_code: None,
        action_source: Default::default(),
        base_url: Some(pixel.url().to_owned()),
    });
    app.store
        .set_integration(app.project.id, settings, chrono::Utc::now())
        .await
        .unwrap();
    let body = announcement();
    let signed = signature(APP_SECRET, &body);
    assert_eq!(announce(&app, &body, Some(&signed)).await, 200);
    let kept = leads_once(&app, 1).await;
    assert_eq!(kept.len(), 1);

    // The initial stage, at capture, outside the job model.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while pixel.requests().is_empty() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let initial = pixel.requests()[0].json();
    let event = &initial["data"][0];
    assert_eq!(event["event_name"], json!("Lead"));
    assert_eq!(event["action_source"], json!("system_generated"));
    assert_eq!(event["event_time"], json!(kept[0].created_at.timestamp()));
    assert_eq!(event["user_data"]["lead_id"], json!(444_444_444_444_u64));
    assert_eq!(event["user_data"]["em"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        event["custom_data"],
        json!({"event_source": "crm", "lead_event_source": "leadtrack"})
    );
    let status = app
        .store
        .find_lead(
            app.project.id,
            &leadtrack_core::api::LeadIdentifier::LeadId(kept[0].id),
        )
        .await
        .unwrap()
        .status;
    assert_eq!(
        status,
        leadtrack_core::types::LeadStatus::Open,
        "no job, nothing pending"
    );

    // A rating: its label's stage, with the same lead id and its value.
    let mapping = LabelMapping {
        meta_event: Some("Qualified".into()),
        ..LabelMapping::default()
    };
    let label = app
        .store
        .create_label(
            app.project.id,
            NewLabel::done("Qualified", mapping),
            chrono::Utc::now(),
        )
        .await
        .unwrap();
    let rated = reqwest::Client::new()
        .post(format!("{}/api/leads/updateLeadStatus", app.base_url))
        .header("x-api-key", &app.api_key)
        .json(&json!({"leadId": kept[0].id.0, "conversionId": label.id.to_string(), "price": 1500}))
        .send()
        .await
        .unwrap();
    assert_eq!(rated.status(), 201, "{}", rated.text().await.unwrap());
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while pixel.requests().len() < 2 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let stage = pixel.requests()[1].json();
    let event = &stage["data"][0];
    assert_eq!(event["event_name"], json!("Qualified"));
    assert_eq!(event["action_source"], json!("system_generated"));
    assert_eq!(event["user_data"]["lead_id"], json!(444_444_444_444_u64));
    assert_eq!(
        event["custom_data"],
        json!({"value": 15.0, "currency": app.project.currency, "event_source": "crm", "lead_event_source": "leadtrack"})
    );
    assert!(event["event_id"].is_string());

    // Announced again: nothing more reaches Meta.
    assert_eq!(announce(&app, &body, Some(&signed)).await, 200);
    app.queues_drained().await;
    assert_eq!(pixel.requests().len(), 2);
}

/// A stand-in for LinkedIn's token endpoint and lead sync API
/// (<https://learn.microsoft.com/en-us/linkedin/marketing/lead-sync/leadsync>): listing
/// the account's responses by owner (with the versioned headers and a token it issued),
/// and the form's questions. It records every listing's query.
struct LinkedIn {
    url: String,
    listings: Arc<Mutex<Vec<String>>>,
}

const LINKEDIN_ACCOUNT: &str = "507404993";
const LINKEDIN_FORM: &str = "5664";
const LINKEDIN_LEAD: &str = "2a6b6f3e-1c71-4d2a-9a1e-0f5a8f2b1c3d";

impl LinkedIn {
    async fn start() -> Self {
        let listings = Arc::new(Mutex::new(Vec::new()));
        let listed = Arc::clone(&listings);
        let token = warp::post()
            .and(warp::path!("token"))
            .map(|| warp::reply::json(&json!({"access_token": "li-access", "expires_in": 3600})));
        let api = warp::get()
            .and(warp::path("rest"))
            .and(warp::path::tail())
            .and(warp::query::raw().or(warp::any().map(String::new)).unify())
            .and(warp::header::optional::<String>("authorization"))
            .and(warp::header::optional::<String>("linkedin-version"))
            .and(warp::header::optional::<String>("x-restli-protocol-version"))
            .map(
                move |tail: warp::path::Tail,
                      query: String,
                      auth: Option<String>,
                      version: Option<String>,
                      restli: Option<String>| {
                    let reply = |status: u16, body: Value| {
                        warp::reply::with_status(
                            warp::reply::json(&body),
                            warp::http::StatusCode::from_u16(status).unwrap(),
                        )
                    };
                    if auth.as_deref() != Some("Bearer li-access")
                        || version.is_none()
                        || restli.as_deref() != Some("2.0.0")
                    {
                        return reply(401, json!({"serviceErrorCode": 65600, "status": 401}));
                    }
                    match tail.as_str() {
                        "leadFormResponses"
                            if query.contains("q=owner")
                                && query.contains(&format!(
                                    "owner=(sponsoredAccount:urn%3Ali%3AsponsoredAccount%3A{LINKEDIN_ACCOUNT})"
                                ))
                                && query.contains("leadType=(leadType:SPONSORED)") =>
                        {
                            listed.lock().unwrap().push(query);
                            reply(200, json!({
                                "paging": {"start": 0, "count": 100, "total": 1},
                                "elements": [{
                                    "owner": {"sponsoredAccount": format!("urn:li:sponsoredAccount:{LINKEDIN_ACCOUNT}")},
                                    "leadType": "SPONSORED",
                                    "leadMetadata": {"sponsoredLeadMetadata": {"campaign": "urn:li:sponsoredCampaign:123"}},
                                    "versionedLeadGenFormUrn": format!("urn:li:versionedLeadGenForm:(urn:li:leadGenForm:{LINKEDIN_FORM},1)"),
                                    "id": LINKEDIN_LEAD,
                                    "submittedAt": 1_763_628_554_000_i64,
                                    "testLead": false,
                                    "formResponse": {
                                        "answers": [
                                            {"answerDetails": {"textQuestionAnswer": {"answer": "Grace"}}, "questionId": 1},
                                            {"answerDetails": {"textQuestionAnswer": {"answer": "Hopper"}}, "questionId": 2},
                                            {"answerDetails": {"textQuestionAnswer": {"answer": "grace@example.com"}}, "questionId": 3},
                                            {"answerDetails": {"textQuestionAnswer": {"answer": "50 seats"}}, "questionId": 4}
                                        ],
                                        "consentResponses": []
                                    }
                                }]
                            }))
                        }
                        tail if tail == format!("leadForms/{LINKEDIN_FORM}") => reply(200, json!({
                            "id": 5664,
                            "name": "Demo request",
                            "content": {"questions": [
                                {"questionId": 1, "name": "firstName", "predefinedField": "FIRST_NAME"},
                                {"questionId": 2, "name": "lastName", "predefinedField": "LAST_NAME"},
                                {"questionId": 3, "name": "email", "predefinedField": "EMAIL"},
                                {"questionId": 4, "name": "teamSize"}
                            ]}
                        })),
                        _ => reply(400, json!({"serviceErrorCode": 100, "status": 400})),
                    }
                },
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(warp::serve(token.or(api)).incoming(listener).run());
        Self { url, listings }
    }
}

#[tokio::test]
async fn lead_gen_form_responses_of_the_chosen_accounts_are_synced_once_each() {
    use leadtrack_core::integration::{IntegrationSettings, LinkedinSettings};

    let linkedin = LinkedIn::start().await;
    let app = spawn_app(Parts {
        project: "site",
        ..Parts::default()
    })
    .await;
    let settings = IntegrationSettings::Linkedin(LinkedinSettings {
        client_id: "li-client".into(),
        client_secret: Secret::new("li-secret"),
        refresh_token: Secret::new("li-refresh"),
        api_version: "202510".into(),
        token_url: Some(format!("{}/token", linkedin.url)),
        base_url: Some(linkedin.url.clone()),
    });
    app.store
        .set_integration(app.project.id, settings, chrono::Utc::now())
        .await
        .unwrap();
    let source = LeadSource::LinkedinLeadGen {
        accounts: vec![LINKEDIN_ACCOUNT.to_owned()],
    };
    app.store
        .set_lead_source(app.project.id, source.kind(), Some(&source))
        .await
        .unwrap();
    app.start_worker();

    let kept = leads_once(&app, 1).await;
    assert_eq!(kept.len(), 1);
    let data = &kept[0].data;
    assert_eq!(data.user("email"), Some("grace@example.com"));
    assert_eq!(data.user("firstName"), Some("Grace"));
    assert_eq!(data.user("lastName"), Some("Hopper"));
    assert_eq!(data.form_data["teamSize"], json!("50 seats"));
    assert_eq!(data.form_data["formName"], json!("Demo request"));
    assert_eq!(data.form_data["linkedinLeadId"], json!(LINKEDIN_LEAD));
    assert_eq!(
        data.attribution("linkedinCampaign"),
        Some("urn:li:sponsoredCampaign:123")
    );
    assert_eq!(
        kept[0].created_at.timestamp_millis(),
        1_763_628_554_000,
        "its submission time"
    );

    // Synced again and again (five times a second here): still one lead.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while linkedin.listings.lock().unwrap().len() < 3 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let listings = linkedin.listings.lock().unwrap().clone();
    assert!(listings.len() >= 3, "{listings:?}");
    assert!(
        listings[0].contains("submittedAtTimeRange=(start:"),
        "{}",
        listings[0]
    );
    assert_eq!(leads(&app).await.len(), 1);
}
