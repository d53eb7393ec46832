//! The fixture the worker tests share: a store whose project has all four integrations
//! connected to local mock platforms.

#![allow(dead_code)]

use std::time::{Duration, Instant};

use chrono::Utc;
use leadtrack_core::account::Actor;
use leadtrack_core::integration::{
    Ga4Settings, GoogleAdsSettings, IntegrationSettings, MetaActionSource, MetaSettings, Secret,
    WebhookSettings,
};
use leadtrack_core::job::{Attempt, Delivery, JobRecord};
use leadtrack_core::label::{LabelMapping, NewLabel};
use leadtrack_core::project::{NewProject, Project, ProjectSettings};
use leadtrack_core::request::StatusUpdate;
use leadtrack_core::testkit::data;
use leadtrack_core::types::{
    AttemptOutcome, ConversionId, DeliveryAction, DeliveryState, IntegrationKind, JobState, LeadId,
    LeadIdentifier, LeadStatus,
};
use leadtrack_core::{Admin, LeadStore, LeadWebhooks as _};
use leadtrack_forward::{RetryPolicy, Worker, WorkerConfig};
use leadtrack_platforms::testkit::{MockPlatform, MockResponse};
use leadtrack_sqlite::SqliteStore;
use serde_json::{Value, json};
use uuid::Uuid;

pub(crate) const GA4_SECRET: &str = "ga4-api-secret-value";
pub(crate) const META_TOKEN: &str = "EAAB-meta-access-token";
pub(crate) const ADS_CLIENT_SECRET: &str = "ads-client-secret-value";
pub(crate) const ADS_REFRESH_TOKEN: &str = "ads-refresh-token-value";
pub(crate) const WEBHOOK_SECRET: &str = "whsec_test_secret";
pub(crate) const SECRETS: [&str; 5] = [
    GA4_SECRET,
    META_TOKEN,
    ADS_CLIENT_SECRET,
    ADS_REFRESH_TOKEN,
    WEBHOOK_SECRET,
];

pub(crate) struct Platforms {
    pub(crate) ga4: MockPlatform,
    pub(crate) meta: MockPlatform,
    pub(crate) token: MockPlatform,
    pub(crate) ads: MockPlatform,
    pub(crate) hook: MockPlatform,
}

impl Platforms {
    pub(crate) async fn start() -> Self {
        Self {
            ga4: MockPlatform::start(MockResponse::took_one(IntegrationKind::Ga4)).await,
            meta: MockPlatform::start(MockResponse::took_one(IntegrationKind::Meta)).await,
            token: MockPlatform::start(MockResponse::json(
                200,
                json!({"access_token": "ya29.first", "expires_in": 3599, "token_type": "Bearer"}),
            ))
            .await,
            ads: MockPlatform::start(MockResponse::took_one(IntegrationKind::GoogleAds)).await,
            hook: MockPlatform::start(MockResponse::took_one(IntegrationKind::Webhook)).await,
        }
    }
}

pub(crate) struct Fixture {
    pub(crate) store: SqliteStore,
    pub(crate) project: Project,
    pub(crate) label: Uuid,
    pub(crate) platforms: Platforms,
}

/// A store whose project has all four integrations connected to mocks, and a label mapped
/// to all of them.
pub(crate) async fn fixture() -> Fixture {
    fixture_with(false).await
}

/// A store of its own with the project `acme`, in euros.
pub(crate) async fn acme() -> (SqliteStore, leadtrack_core::project::Project) {
    let store = SqliteStore::open_temporary().await.unwrap();
    let project = store
        .create_project(
            NewProject {
                public_id: Some("acme".into()),
                name: "Acme".into(),
                currency: Some("EUR".into()),
            },
            Utc::now(),
        )
        .await
        .unwrap();
    (store, project)
}

pub(crate) async fn fixture_with(ga4_validate: bool) -> Fixture {
    let (store, project) = acme().await;
    let project = store
        .update_project(
            project.id,
            ProjectSettings {
                region: Some(Some("DE".into())),
                ..ProjectSettings::default()
            },
        )
        .await
        .unwrap();
    let platforms = Platforms::start().await;
    for settings in [
        IntegrationSettings::Ga4(Ga4Settings {
            measurement_id: "G-TEST123".into(),
            api_secret: Secret::new(GA4_SECRET),
            validate: ga4_validate,
            base_url: Some(platforms.ga4.url().to_owned()),
        }),
        IntegrationSettings::Meta(MetaSettings {
            pixel_id: "1234567890".into(),
            access_token: Secret::new(META_TOKEN),
            api_version: "v23.0".into(),
            test_event_code: Some("TEST123".into()),
            action_source: MetaActionSource::default(),
            base_url: Some(platforms.meta.url().to_owned()),
        }),
        IntegrationSettings::GoogleAds(GoogleAdsSettings {
            customer_id: "123-456-7890".into(),
            login_customer_id: None,
            client_id: "ads-client".into(),
            client_secret: Secret::new(ADS_CLIENT_SECRET),
            refresh_token: Secret::new(ADS_REFRESH_TOKEN),
            token_url: Some(format!("{}/token", platforms.token.url())),
            base_url: Some(platforms.ads.url().to_owned()),
        }),
        IntegrationSettings::Webhook(WebhookSettings {
            url: format!("{}/hooks/leadtrack", platforms.hook.url()),
            secret: Secret::new(WEBHOOK_SECRET),
        }),
    ] {
        store
            .set_integration(project.id, settings, Utc::now())
            .await
            .unwrap();
    }
    let label = store
        .create_label(
            project.id,
            NewLabel {
                name: "Qualified".into(),
                mark_as_done: true,
                mapping: LabelMapping {
                    ga4_event: Some("qualify_lead".into()),
                    meta_event: Some("QualifiedLead".into()),
                    google_ads_action: Some("customers/1234567890/conversionActions/987654".into()),
                    webhook: true,
                    ..LabelMapping::default()
                },
            },
            Utc::now(),
        )
        .await
        .unwrap()
        .id;
    Fixture {
        store,
        project,
        label,
        platforms,
    }
}

/// One more platform, connected by `connect` to its mock (started with `answer`), and a
/// label `Customer` mapped by `mapping` alone.
pub(crate) struct OnePlatform {
    pub(crate) f: Fixture,
    pub(crate) mock: MockPlatform,
    pub(crate) label: Uuid,
}

impl OnePlatform {
    pub(crate) async fn start(
        answer: MockResponse,
        connect: impl FnOnce(&MockPlatform) -> IntegrationSettings,
        mapping: LabelMapping,
    ) -> Self {
        let f = fixture().await;
        let mock = MockPlatform::start(answer).await;
        f.store
            .set_integration(f.project.id, connect(&mock), Utc::now())
            .await
            .unwrap();
        let label = NewLabel {
            name: "Customer".into(),
            mark_as_done: true,
            mapping,
        };
        let label = f
            .store
            .create_label(f.project.id, label, Utc::now())
            .await
            .unwrap()
            .id;
        Self { f, mock, label }
    }

    /// Rates `lead` again at another price, for a platform (`kind`) that keeps the first
    /// value: its delivery is a restatement skipped with the reason, and a worker's run sends
    /// its mock nothing more than the one conversion.
    pub(crate) async fn rated_again_at_another_price(&self, lead: LeadId, kind: IntegrationKind) {
        self.f
            .rate(lead, (ConversionId::Label(self.label), 7_000), Utc::now())
            .await;
        let jobs = self
            .f
            .store
            .lead_jobs(self.f.project.id, lead)
            .await
            .unwrap();
        let again = jobs.iter().find(|r| r.job.price == Some(7_000)).unwrap();
        let (restate, _) = delivery_of(again, kind);
        assert_eq!(
            (restate.action, restate.state),
            (DeliveryAction::Restate, DeliveryState::Skipped)
        );
        let title = leadtrack_core::integration::Platform::of(kind).title;
        let reason = format!("{title} cannot restate a conversion's value");
        assert!(
            restate
                .detail
                .as_deref()
                .is_some_and(|d| d.starts_with(&reason)),
            "{restate:?}"
        );
        worker(&self.f.store, fast()).run_once().await.unwrap();
        assert_eq!(self.mock.requests().len(), 1, "one conversion, sent once");
    }

    /// A lead of `body`, rated with the label.
    pub(crate) async fn rated(&self, body: Value) -> LeadId {
        self.f
            .rated_lead(body, Some(ConversionId::Label(self.label)))
            .await
    }
}

/// Who the tests' status updates are made by: an API key.
pub(crate) fn rater() -> Actor {
    Actor::api_key("lt_forward0123")
}

pub(crate) fn policy() -> RetryPolicy {
    RetryPolicy {
        base_delay: Duration::from_millis(100),
        jitter: false,
        ..RetryPolicy::default()
    }
}

pub(crate) fn worker(store: &SqliteStore, config: WorkerConfig) -> Worker<SqliteStore> {
    Worker::new(store.clone(), config)
}

pub(crate) fn fast() -> WorkerConfig {
    WorkerConfig {
        retry: policy(),
        request_timeout: Duration::from_secs(5),
        poll_interval: Duration::from_millis(20),
        targets: leadtrack_core::testkit::mock_targets(),
        ..WorkerConfig::default()
    }
}

pub(crate) fn full_lead() -> Value {
    json!({
        "userData": {"email": "Ada.Lovelace@Gmail.com", "phone": "030 1234567", "firstName": "Ada", "lastName": "Lovelace"},
        "attributionData": {"gclid": "TESTGCLID", "cid": "123456789.1700000000", "sid": "1700000123",
                            "fbp": "fb.1.1700000000000.987654321", "fbc": "fb.1.1700000001000.TESTFBCLID"},
        "deviceData": {"ipAddress": "203.0.113.9", "userAgent": "Mozilla/5.0 (Test)"},
        "formData": {"formName": "Contact"}
    })
}

/// [`full_lead`] of another person, number `n`: another email and phone, so that it is no
/// duplicate of the first (whose ratings are the same person's one conversion).
pub(crate) fn another_person(n: u32) -> Value {
    let mut lead = full_lead();
    lead["userData"]["email"] = json!(format!("ada{n}.lovelace@gmail.com"));
    lead["userData"]["phone"] = json!(format!("030 76543{n:02}"));
    lead
}

impl Fixture {
    /// Creates a lead and rates it with the label at `price` cents.
    pub(crate) async fn rated_lead(&self, body: Value, conversion: Option<ConversionId>) -> LeadId {
        let lead = self
            .store
            .create_lead(self.project.id, data(body), Utc::now())
            .await
            .unwrap()
            .lead_id;
        let update = StatusUpdate {
            identifier: LeadIdentifier::LeadId(lead),
            conversion_id: conversion.unwrap_or(ConversionId::Label(self.label)),
            price: Some(4999),
            note: None,
        };
        let change = self
            .store
            .update_status(self.project.id, &update, &rater(), Utc::now())
            .await
            .unwrap();
        assert!(change.job.is_some());
        lead
    }

    /// Rates `lead` with `conversion` at `price` cents, as of `at`.
    pub(crate) async fn rate(
        &self,
        lead: LeadId,
        (conversion_id, price): (ConversionId, i64),
        at: chrono::DateTime<Utc>,
    ) {
        let update = StatusUpdate {
            identifier: LeadIdentifier::LeadId(lead),
            conversion_id,
            price: Some(price),
            note: None,
        };
        self.store
            .update_status(self.project.id, &update, &rater(), at)
            .await
            .unwrap();
    }

    pub(crate) async fn job(&self, lead: LeadId) -> JobRecord {
        self.store
            .lead_jobs(self.project.id, lead)
            .await
            .unwrap()
            .remove(0)
    }

    /// Runs `worker` until the lead's job is done (retries included), or fails after 20 s.
    pub(crate) async fn run_until_done(
        &self,
        worker: &Worker<SqliteStore>,
        lead: LeadId,
    ) -> JobRecord {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            worker.run_once().await.unwrap();
            let job = self.job(lead).await;
            if job.job.state == JobState::Done {
                return job;
            }
            assert!(Instant::now() < deadline, "the job did not finish: {job:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub(crate) async fn status(&self, lead: LeadId) -> LeadStatus {
        self.store
            .find_lead(self.project.id, &LeadIdentifier::LeadId(lead))
            .await
            .unwrap()
            .status
    }
}

/// A job's delivery to `kind`, with its attempts.
pub(crate) fn delivery_of(record: &JobRecord, kind: IntegrationKind) -> &(Delivery, Vec<Attempt>) {
    record
        .deliveries
        .iter()
        .find(|(d, _)| d.integration == kind)
        .expect("a delivery")
}

/// The attempts of a job's delivery to `kind`.
pub(crate) fn attempts_of(record: &JobRecord, kind: IntegrationKind) -> &[Attempt] {
    &delivery_of(record, kind).1
}

pub(crate) fn delivery(
    record: &JobRecord,
    kind: IntegrationKind,
) -> (DeliveryState, Vec<(AttemptOutcome, Option<u16>)>) {
    let (delivery, attempts) = delivery_of(record, kind);
    (
        delivery.state,
        attempts
            .iter()
            .map(|a| (a.outcome, a.http_status))
            .collect(),
    )
}

/// A form as [`leadtrack_platforms::testkit::Recorded::form`] reads one: its fields sorted.
pub(crate) fn form(text: &str) -> Vec<(String, String)> {
    let mut fields: Vec<_> = form_urlencoded::parse(text.as_bytes())
        .into_owned()
        .collect();
    fields.sort();
    fields
}

/// A lead of `body` in the fixture's project, created now.
pub(crate) async fn create_lead(f: &Fixture, body: Value) -> LeadId {
    f.store
        .create_lead(f.project.id, data(body), Utc::now())
        .await
        .unwrap()
        .lead_id
}

/// Runs the worker until no webhook event is pending and every conversion job is done.
pub(crate) async fn settle_events(f: &Fixture, worker: &leadtrack_forward::Worker<SqliteStore>) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let busy = worker.run_once().await.unwrap();
        let statuses = f.store.webhooks(f.project.id).await.unwrap();
        let pending: u64 = statuses.iter().map(|s| s.pending).sum();
        if !busy && pending == 0 {
            return;
        }
        assert!(Instant::now() < deadline, "events still pending: {pending}");
        if !busy {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
