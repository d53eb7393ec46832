//! Worker throughput to local receivers: `cargo bench -p leadtrack-forward --bench worker`.
//!
//! Three runs on a temporary SQLite store with its default durability (`synchronous=FULL`):
//! conversion jobs rated with a label mapped to the conversion webhook; lead webhook
//! events (`lead.created` of as many new leads); and ratings mapped to Meta and Google Ads,
//! whose mocks check the platforms' rules (`leadtrack_platforms::testkit::rules`), sent in
//! batches. Each queues everything first, then starts a worker with its default
//! configuration and times until the receivers have every event; the batched run also
//! counts the requests and checks that each event arrived once. Run without `--bench` (as
//! `cargo test --all-targets` would), it does nothing.
//! `LEADTRACK_BENCH_DELIVERIES` sets the number of posts per webhook run (20,000 by
//! default), `LEADTRACK_BENCH_RATINGS` the ratings of the batched run (10,000),
//! `LEADTRACK_BENCH_CONCURRENCY` the worker's concurrency (its default, 4, by default), and
//! `LEADTRACK_BENCH_BATCH_JOBS=1` sends each conversion alone, as before batches.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use chrono::Utc;
use futures_util::future::join_all;
use leadtrack_core::LeadWebhooks as _;
use leadtrack_core::account::Actor;
use leadtrack_core::integration::{
    GoogleAdsSettings, IntegrationSettings, MetaActionSource, MetaSettings, Secret, WebhookSettings,
};
use leadtrack_core::label::{LabelMapping, NewLabel};
use leadtrack_core::lead::LeadData;
use leadtrack_core::project::{NewProject, Project};
use leadtrack_core::request::StatusUpdate;
use leadtrack_core::types::{ConversionId, LeadIdentifier};
use leadtrack_core::webhook::{NewWebhook, WebhookEvent};
use leadtrack_core::{Admin, LeadStore};
use leadtrack_forward::{Worker, WorkerConfig};
use leadtrack_platforms::testkit::{MockPlatform, MockResponse, rules};
use leadtrack_sqlite::SqliteStore;
use serde_json::json;
use tokio::sync::oneshot;

const WRITES_AT_ONCE: usize = 1_000;

fn lead(n: usize) -> LeadData {
    serde_json::from_value(json!({
        "userData": {"firstName": format!("Lead{n}"), "email": format!("lead{n}@example.com")},
        "formData": {"formName": "Contact", "message": "Hello"},
        "attributionData": {"gclid": format!("bench-gclid-{n}")}
    }))
    .expect("lead data")
}

async fn project(store: &SqliteStore, id: &str) -> Project {
    let new = NewProject {
        public_id: Some(id.into()),
        name: id.into(),
        currency: Some("EUR".into()),
    };
    store
        .create_project(new, Utc::now())
        .await
        .expect("project")
}

/// Creates `count` leads of `project`, and rates each with `label` when there is one.
async fn fill(store: &SqliteStore, project: &Project, count: usize, label: Option<uuid::Uuid>) {
    for first in (0..count).step_by(WRITES_AT_ONCE) {
        let batch = first..(first + WRITES_AT_ONCE).min(count);
        let created =
            join_all(batch.map(|n| store.create_lead(project.id, lead(n), Utc::now()))).await;
        let Some(label) = label else { continue };
        join_all(created.into_iter().map(|created| async move {
            let update = StatusUpdate {
                identifier: LeadIdentifier::LeadId(created.expect("lead").lead_id),
                conversion_id: ConversionId::Label(label),
                price: Some(1_000),
                note: None,
            };
            store
                .update_status(
                    project.id,
                    &update,
                    &Actor::api_key("lt_bench000"),
                    Utc::now(),
                )
                .await
                .expect("rating")
        }))
        .await;
    }
}

/// The worker's configuration: its default, with the environment's changes, allowed to
/// call the local receivers.
fn config() -> WorkerConfig {
    let mut config = WorkerConfig {
        targets: leadtrack_core::testkit::mock_targets(),
        ..WorkerConfig::default()
    };
    if let Some(concurrency) = env("LEADTRACK_BENCH_CONCURRENCY") {
        config.concurrency = concurrency;
    }
    if let Some(jobs) = env("LEADTRACK_BENCH_BATCH_JOBS") {
        config.batch_jobs = jobs;
    }
    config
}

/// Runs a worker until `receiver` has `count` posts; the posts per second.
async fn deliver(store: &SqliteStore, receiver: &MockPlatform, count: usize) -> f64 {
    let worker = Worker::new(store.clone(), config());
    let (stop, stopped) = oneshot::channel::<()>();
    let started = Instant::now();
    let running = tokio::spawn(worker.run(async {
        let _ = stopped.await;
    }));
    let posts = receiver.wait_for(count, Duration::from_secs(600)).await;
    let elapsed = started.elapsed();
    assert_eq!(posts.len(), count, "every post arrived");
    let _ = stop.send(());
    running.await.expect("the worker stops");
    count as f64 / elapsed.as_secs_f64()
}

/// A number from the environment.
fn env(name: &str) -> Option<usize> {
    std::env::var(name).ok()?.parse().ok()
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    if !std::env::args().any(|arg| arg == "--bench") {
        return;
    }
    let count = env("LEADTRACK_BENCH_DELIVERIES").unwrap_or(20_000);
    let dir = tempfile::tempdir().expect("temporary directory");
    let store = SqliteStore::open(dir.path().join("bench.db"))
        .await
        .expect("store");

    // Conversion jobs, each delivered to the conversion webhook.
    let conversions = MockPlatform::start(MockResponse::empty(200)).await;
    let jobs = project(&store, "jobs").await;
    let webhook = WebhookSettings {
        url: format!("{}/conversions", conversions.url()),
        secret: Secret::new("whsec_bench"),
    };
    store
        .set_integration(jobs.id, IntegrationSettings::Webhook(webhook), Utc::now())
        .await
        .expect("webhook");
    let mapping = LabelMapping {
        webhook: true,
        ..LabelMapping::default()
    };
    let label = NewLabel {
        name: "Customer".into(),
        mark_as_done: true,
        mapping,
    };
    let label = store
        .create_label(jobs.id, label, Utc::now())
        .await
        .expect("label");
    let started = Instant::now();
    fill(&store, &jobs, count, Some(label.id)).await;
    println!(
        "queued {count} conversion jobs in {:.1?}",
        started.elapsed()
    );
    let rate = deliver(&store, &conversions, count).await;
    println!("conversion webhook: {rate:.0} deliveries/s");

    // Lead webhook events.
    let events = MockPlatform::start(MockResponse::empty(200)).await;
    let hooks = project(&store, "hooks").await;
    let hook = NewWebhook::new(
        &format!("{}/events", events.url()),
        &leadtrack_core::testkit::mock_targets(),
        Some(Secret::new("whsec_bench")),
        [WebhookEvent::LeadCreated].into_iter().collect(),
    )
    .expect("webhook");
    store
        .create_webhook(hooks.id, hook, Utc::now())
        .await
        .expect("webhook");
    let started = Instant::now();
    fill(&store, &hooks, count, None).await;
    println!(
        "queued {count} lead.created events in {:.1?}",
        started.elapsed()
    );
    let rate = deliver(&store, &events, count).await;
    println!("lead webhook: {rate:.0} events/s");

    batched(&store, env("LEADTRACK_BENCH_RATINGS").unwrap_or(10_000)).await;
}

/// `count` ratings mapped to Meta and Google Ads, delivered: the requests each platform
/// had, the time to drain the queue, and each event received once.
async fn batched(store: &SqliteStore, count: usize) {
    let meta = MockPlatform::start(MockResponse::empty(500)).await;
    let ads = MockPlatform::start(MockResponse::empty(500)).await;
    let token = MockPlatform::start(MockResponse::json(
        200,
        json!({"access_token": "ya29.bench", "expires_in": 3599, "token_type": "Bearer"}),
    ))
    .await;
    let (to_meta, to_ads) = (rules::meta(&meta), rules::data_manager(&ads, usize::MAX));
    let project = project(store, "batched").await;
    for settings in platforms(&meta, &ads, &token) {
        store
            .set_integration(project.id, settings, Utc::now())
            .await
            .expect("integration");
    }
    let mapping = LabelMapping {
        meta_event: Some("Purchase".into()),
        google_ads_action: Some("987654".into()),
        ..LabelMapping::default()
    };
    let label = NewLabel::done("Customer", mapping);
    let label = store
        .create_label(project.id, label, Utc::now())
        .await
        .expect("label");
    let started = Instant::now();
    fill(store, &project, count, Some(label.id)).await;
    println!(
        "queued {count} ratings to Meta and Google Ads in {:.1?}",
        started.elapsed()
    );

    let worker = Worker::new(store.clone(), config());
    let (stop, stopped) = oneshot::channel::<()>();
    let started = Instant::now();
    let running = tokio::spawn(worker.run(async {
        let _ = stopped.await;
    }));
    let received = |accepted: &rules::Accepted| accepted.lock().expect("ids").len();
    while received(&to_meta) < count || received(&to_ads) < count {
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "the queue drained"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let drained = started.elapsed();
    let _ = stop.send(());
    running.await.expect("the worker stops");
    for (name, mock, accepted) in [("Meta", &meta, &to_meta), ("Google Ads", &ads, &to_ads)] {
        let ids = accepted.lock().expect("ids");
        let once: HashSet<&String> = ids.iter().collect();
        assert_eq!(
            (ids.len(), once.len()),
            (count, count),
            "{name}: each event once"
        );
        println!(
            "{name}: {count} conversions in {} requests, each once",
            mock.requests().len()
        );
    }
    println!(
        "batched: drained in {drained:.1?} ({:.0} conversions/s per platform)",
        count as f64 / drained.as_secs_f64()
    );
}

/// Meta and Google Ads (with its token endpoint) connected to the local mocks.
fn platforms(
    meta: &MockPlatform,
    ads: &MockPlatform,
    token: &MockPlatform,
) -> [IntegrationSettings; 2] {
    [
        IntegrationSettings::Meta(MetaSettings {
            pixel_id: "1234567890".into(),
            access_token: Secret::new("EAAB-bench"),
            api_version: "v23.0".into(),
            test_event_code: None,
            action_source: MetaActionSource::default(),
            base_url: Some(meta.url().to_owned()),
        }),
        IntegrationSettings::GoogleAds(GoogleAdsSettings {
            customer_id: "123-456-7890".into(),
            login_customer_id: None,
            client_id: "bench-client".into(),
            client_secret: Secret::new("bench-client-secret"),
            refresh_token: Secret::new("bench-refresh-token"),
            token_url: Some(format!("{}/token", token.url())),
            base_url: Some(ads.url().to_owned()),
        }),
    ]
}
