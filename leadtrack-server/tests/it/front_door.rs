//! No lead lost at the front door, with the service's default settings, over real sockets
//! from several loopback addresses: a site's own server relaying a busy form keeps every
//! lead in Open, a flood from one address stays out of Open without refusing anything,
//! another visitor is untouched by it, and an address the project trusts is never held.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use futures_util::future::join_all;
use leadtrack_core::ProjectId;
use leadtrack_core::project::ProjectSettings;
use leadtrack_core::request::LeadQuery;
use leadtrack_core::spam::SpamRulesInput;
use leadtrack_core::types::LeadStatus;
use leadtrack_server::testkit::{Parts, TestApp, spawn_app};
use serde_json::{Value, json};
use tokio::time::{Instant, MissedTickBehavior, interval};
use uuid::Uuid;

/// A client sending from `127.0.0.{host}`.
fn client_at(host: u8) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, host)))
        .build()
        .expect("a client")
}

/// A lead as the WordPress plugin posts it from the site's server: no `Origin`, the
/// company as `company`, the form's name and its own event id.
fn wordpress_lead(project: &str, n: usize) -> Value {
    json!({
        "projectId": project,
        "userData": {
            "firstName": format!("Ada{n}"),
            "lastName": "Lovelace",
            "email": format!("ada{n}@example.com"),
            "phone": format!("+44 20 7946 {n:04}"),
            "company": "Analytical Engines"
        },
        "formData": {
            "formName": "Contact",
            "formMessage": "Please call me back",
            "uniqueEventId": Uuid::new_v4().to_string()
        },
        "attributionData": {"gclid": format!("G-{n}")}
    })
}

/// Starts posting `lead` to the createLead of the app at `base` from `client`, now; its
/// status, once answered.
fn post(base: &str, client: &reqwest::Client, lead: Value) -> tokio::task::JoinHandle<u16> {
    let url = format!("{base}/api/leads/createLead");
    let sent = client.post(url).json(&lead).send();
    tokio::spawn(async move { sent.await.expect("an answer").status().as_u16() })
}

/// The statuses of the posts `sent`.
async fn answered(sent: Vec<tokio::task::JoinHandle<u16>>) -> Vec<u16> {
    let answers = join_all(sent).await;
    answers
        .into_iter()
        .map(|answer| answer.expect("a post"))
        .collect()
}

/// How many of the project's leads are in `status`.
async fn count(app: &TestApp, project: ProjectId, status: LeadStatus) -> u64 {
    let query = LeadQuery {
        status: Some(vec![status]),
        ..LeadQuery::default()
    };
    let page = app
        .store
        .list_leads(project, &query)
        .await
        .expect("a listing");
    page.total
}

/// These checks are loads of their own: run together on two cores, each would starve the
/// others' reads into `503`s and measure the machine instead of the service. Each holds
/// this while it runs.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn app() -> TestApp {
    let parts = Parts {
        project: "site",
        ..Parts::default()
    };
    spawn_app(parts).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sites_server_relaying_240_leads_at_12_a_second_keeps_all_in_open() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let app = app().await;
    let wordpress = client_at(2);
    let mut tick = interval(Duration::from_millis(1_000 / 12));
    tick.set_missed_tick_behavior(MissedTickBehavior::Burst);
    let started = Instant::now();
    let mut sent = Vec::new();
    for n in 0..240 {
        tick.tick().await;
        sent.push(post(&app.base_url, &wordpress, wordpress_lead("site", n)));
    }
    let statuses = answered(sent).await;
    let took = started.elapsed();
    assert!(statuses.iter().all(|status| *status == 201), "{statuses:?}");
    let project = app.project.id;
    assert_eq!(count(&app, project, LeadStatus::Open).await, 240);
    assert_eq!(count(&app, project, LeadStatus::Spam).await, 0);
    eprintln!("240 leads in {took:?}: 240 open, 0 spam");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_from_one_address_stays_out_of_open_and_other_visitors_are_untouched() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let app = app().await;
    let (flooder, visitor) = (client_at(3), client_at(4));
    let junk = |n: usize| json!({"projectId": "site", "userData": {"email": format!("junk{n}@spam.test")}});
    let started = Instant::now();
    // 3,000 in 15 seconds: 20 every 100 ms, each batch at once.
    let mut tick = interval(Duration::from_millis(100));
    let mut sent = Vec::new();
    for batch in 0..150 {
        tick.tick().await;
        for i in 0..20 {
            sent.push(post(&app.base_url, &flooder, junk(batch * 20 + i)));
        }
        if batch % 15 == 0 {
            // Meanwhile, another visitor of the same project sends a lead now and then.
            sent.push(post(&app.base_url, &visitor, wordpress_lead("site", batch)));
        }
    }
    let statuses = answered(sent).await;
    let took = started.elapsed();
    assert_eq!(statuses.len(), 3_010);
    assert!(
        statuses.iter().all(|status| *status == 201),
        "nothing refused"
    );
    let project = app.project.id;
    let (open, spam) = (
        count(&app, project, LeadStatus::Open).await,
        count(&app, project, LeadStatus::Spam).await,
    );
    assert_eq!(open + spam, 3_010, "every lead stored");
    assert!(open <= 600 + 10, "{open} in Open");
    let visitors = LeadQuery {
        search: Some("Lovelace".into()),
        status: Some(vec![LeadStatus::Open]),
        ..LeadQuery::default()
    };
    let page = app.store.list_leads(project, &visitors).await.unwrap();
    assert_eq!(page.total, 10, "the other visitor's leads are all in Open");
    eprintln!(
        "3,000 junk leads in {took:?}: {} in Open, {spam} held as spam",
        open - 10
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_address_is_never_held_for_its_rate() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let app = app().await;
    let trusted = SpamRulesInput {
        trusted_addresses: Some("127.0.0.5".to_owned()),
        ..SpamRulesInput::default()
    };
    let settings = ProjectSettings {
        spam_rules: trusted.apply(&app.project.spam_rules).unwrap(),
        ..ProjectSettings::default()
    };
    app.store
        .update_project(app.project.id, settings)
        .await
        .unwrap();
    let (cdn, other) = (client_at(5), client_at(6));
    // 300 as fast as one address's share of connections (64) lets them go: waves of 50.
    let at_once = |client: &reqwest::Client, from: usize| {
        let (base, client) = (app.base_url.clone(), client.clone());
        async move {
            let mut statuses = Vec::new();
            for wave in (from..from + 300).step_by(50) {
                let sent =
                    (wave..wave + 50).map(|n| post(&base, &client, wordpress_lead("site", n)));
                statuses.extend(answered(sent.collect()).await);
            }
            statuses
        }
    };
    let statuses = at_once(&cdn, 0).await;
    assert!(statuses.iter().all(|status| *status == 201));
    let project = app.project.id;
    assert_eq!(count(&app, project, LeadStatus::Open).await, 300);
    let statuses = at_once(&other, 300).await;
    assert!(statuses.iter().all(|status| *status == 201));
    let held = count(&app, project, LeadStatus::Spam).await;
    assert!(
        held >= 150,
        "an untrusted address past its burst is held: {held}"
    );
}

/// Lets this process open as many files as its hard limit allows: the hog's thousand
/// sockets and the server's own live in it.
fn raise_open_file_limit() {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let hard = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .and_then(|line| line.split_whitespace().nth(4))
        .unwrap_or("4096")
        .to_owned();
    let nofile = format!("--nofile={hard}:{hard}");
    let raised = std::process::Command::new("prlimit")
        .args(["--pid", &std::process::id().to_string(), &nofile])
        .status()
        .expect("run prlimit (util-linux)");
    assert!(raised.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_holding_a_thousand_connections_resets_no_one_elses() {
    let _alone = ONE_AT_A_TIME.lock().await;
    raise_open_file_limit();
    let app = app().await;
    let address = app.base_url.trim_start_matches("http://").to_owned();
    // The hog: a thousand connections from one address, each a createLead whose body
    // never comes, so that every one of them is busy.
    let mut hog = Vec::new();
    for _ in 0..1_000 {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.20:0".parse().unwrap()).unwrap();
        let Ok(mut stream) = socket.connect(address.parse().unwrap()).await else {
            continue;
        };
        let head = format!(
            "POST /api/leads/createLead HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\ncontent-length: 200\r\n\r\n{{"
        );
        let _ = tokio::io::AsyncWriteExt::write_all(&mut stream, head.as_bytes()).await;
        hog.push(stream);
    }
    // Meanwhile, twenty visitors of the project, each from an address of its own, send a
    // lead and read it back with the project's key.
    let started = Instant::now();
    let visitors = (30..50).map(|host| {
        let (base, key) = (app.base_url.clone(), app.api_key.clone());
        tokio::spawn(async move {
            let client = client_at(host);
            let lead = wordpress_lead("site", usize::from(host));
            let created = client
                .post(format!("{base}/api/leads/createLead"))
                .json(&lead);
            let created: Value = created
                .send()
                .await
                .expect("no reset")
                .json()
                .await
                .unwrap();
            let id = created["leadId"].as_i64().expect("created");
            let read = client
                .get(format!("{base}/api/leads/getLead?leadId={id}"))
                .header("x-api-key", key);
            read.send().await.expect("no reset").status().as_u16()
        })
    });
    let read = answered(visitors.collect()).await;
    let took = started.elapsed();
    assert_eq!(read, [200; 20]);
    eprintln!(
        "20 visitors sent and read their leads in {took:?} beside {} hog connections",
        hog.len()
    );
}

/// Spam is never forwarded: with the worker running, a lead webhook hears of the person's
/// lead and never of the bot's, and a bot's lead cannot be rated into a conversion without
/// a person taking it out of spam first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spam_reaches_no_webhook_and_no_platform() {
    let _alone = ONE_AT_A_TIME.lock().await;
    use leadtrack_core::integration::{IntegrationSettings, Secret, WebhookSettings};
    use leadtrack_core::label::{LabelMapping, NewLabel};
    use leadtrack_core::webhook::{NewWebhook, WebhookEvents};
    use leadtrack_platforms::testkit::{MockPlatform, MockResponse};

    let parts = Parts {
        project: "site",
        worker: true,
        ..Parts::default()
    };
    let app = spawn_app(parts).await;
    let (store, project) = (&app.store, app.project.id);
    let crm = MockPlatform::start(MockResponse::empty(200)).await;
    let events = WebhookEvents::parse_list("lead.created,lead.converted").unwrap();
    let hook = NewWebhook::new(
        &format!("{}/crm", crm.url()),
        &leadtrack_core::testkit::mock_targets(),
        None,
        events,
    )
    .unwrap();
    store
        .create_webhook(project, hook, chrono::Utc::now())
        .await
        .unwrap();
    let platform = MockPlatform::start(MockResponse::empty(200)).await;
    let conversions = IntegrationSettings::Webhook(WebhookSettings {
        url: format!("{}/conversions", platform.url()),
        secret: Secret::new("whsec_front_door"),
    });
    store
        .set_integration(project, conversions, chrono::Utc::now())
        .await
        .unwrap();
    let label = NewLabel::done("Customer", LabelMapping::webhook_only());
    let customer = store
        .create_label(project, label, chrono::Utc::now())
        .await
        .unwrap();

    let bot = json!({"projectId": "site", "userData": {"email": "bot@example.com"},
        "botCheck": {"honeypot": "http://spam.example", "elapsedMs": 9000}});
    let person = wordpress_lead("site", 1);
    let web = client_at(7);
    let mut ids = Vec::new();
    for lead in [bot, person] {
        let sent = web
            .post(format!("{}/api/leads/createLead", app.base_url))
            .json(&lead);
        let created: Value = sent.send().await.unwrap().json().await.unwrap();
        ids.push(created["leadId"].as_i64().unwrap());
    }
    let heard = crm.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(
        heard[0].json()["lead"]["id"],
        json!(ids[1]),
        "the person's lead"
    );
    // The bot's lead rated through the API: it leaves spam first, so it is announced, then
    // converted, as a person judged it; but never before.
    app.queues_drained().await;
    assert_eq!(crm.requests().len(), 1, "nothing of the bot's");
    assert!(platform.requests().is_empty());
    let rated = app
        .client()
        .update_lead_status(&leadtrack_core::api::UpdateLeadStatusRequest {
            identifier: leadtrack_core::api::LeadIdentifier::LeadId(leadtrack_core::LeadId(ids[0])),
            conversion_id: leadtrack_core::types::ConversionId::Label(customer.id),
            price: None,
            note: None,
        })
        .await
        .unwrap();
    assert_eq!(rated.status, LeadStatus::Pending);
    let converted = platform.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(converted.len(), 1);
    let heard = crm.wait_for(3, Duration::from_secs(10)).await;
    // Events may arrive out of order (docs/integrations.md): receivers order them by
    // `occurredAt`, and the bot's lead is announced no later than it converted.
    let mut events: Vec<(i64, String, String)> = heard
        .iter()
        .map(|r| {
            let body = r.json();
            let kind = body["type"].as_str().unwrap_or("").to_owned();
            let at = body["occurredAt"].as_str().unwrap_or("").to_owned();
            (body["lead"]["id"].as_i64().unwrap_or(0), kind, at)
        })
        .collect();
    events.sort();
    let (bot, person) = (ids[0], ids[1]);
    let kinds: Vec<(i64, &str)> = events.iter().map(|(l, k, _)| (*l, k.as_str())).collect();
    let mut expected = vec![
        (bot, "lead.converted"),
        (bot, "lead.created"),
        (person, "lead.created"),
    ];
    expected.sort();
    assert_eq!(kinds, expected);
    let at = |kind: &str| {
        let event = events.iter().find(|(l, k, _)| *l == bot && k == kind);
        chrono::DateTime::parse_from_rfc3339(&event.unwrap().2).unwrap()
    };
    assert!(at("lead.created") <= at("lead.converted"));
}
