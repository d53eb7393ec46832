//! The lead routes through `warp::test` (no socket): every endpoint, every error row of the
//! contract that concerns them, the real clients' payloads, and the 409 race.

use std::net::SocketAddr;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use futures_util::future::join_all;
use leadtrack_core::account::Actor;
use leadtrack_core::activity::{Attribution, LeadEvent, ProjectActivity, ProjectEvent};
use leadtrack_core::comment::Comment;
use leadtrack_core::draft::Draft;
use leadtrack_core::integration::{Ga4Settings, IntegrationSettings, Secret};
use leadtrack_core::job::{FormRating, JobRecord, RetryTarget, StatusChange, Trouble, UndoTarget};
use leadtrack_core::key::{KeyHash, KeyRef};
use leadtrack_core::label::{LabelMapping, NewLabel};
use leadtrack_core::lead::{CreatedLead, LeadData, LeadPage, StoredLead};
use leadtrack_core::next_step::{Coverage, DueStep, NextStep};
use leadtrack_core::project::{NewProject, Project};
use leadtrack_core::report::{Report, ReportQuery};
use leadtrack_core::request::{CreateRoute, Cursor, LeadQuery, StatusUpdate};
use leadtrack_core::roas::{RoasQuery, RoasReport};
use leadtrack_core::spam::SpamReason;
use leadtrack_core::spend::{FxRates, SpendPlatform, SpendRow, SpendSource};
use leadtrack_core::store::Listed;
use leadtrack_core::store::correction::ContactCorrection;
use leadtrack_core::types::{
    Consent, ConsentStatus, LeadId, LeadIdentifier, LeadStatus, ProjectId,
};
use leadtrack_core::webhook::{NewWebhook, Webhook, WebhookStatus};
use leadtrack_core::{LeadStore, Store, StoreError, StoreResult};
use leadtrack_sqlite::SqliteStore;
use leadtrack_warp::{Config, CorsOrigins, routes};
use serde_json::{Value, json};
use warp::Filter;
use warp::filters::BoxedFilter;
use warp::http::{HeaderMap, StatusCode};
use warp::reply::Response;

struct App {
    /// The store behind the routes, for arranging state the tests do not go through HTTP
    /// for: SQLite's, or PostgreSQL's with `LEADTRACK_TEST_BACKEND=postgres`.
    store: Arc<dyn Store>,
    /// Closes the store.
    close: Closer,
    project: Project,
    key: String,
    filter: BoxedFilter<(Response,)>,
}

async fn app() -> App {
    app_with(Config::default()).await
}

async fn app_with(config: Config) -> App {
    match leadtrack_postgres::testkit::contract_database().await {
        Some(url) => {
            let store = leadtrack_postgres::PgStore::connect(
                &url,
                &leadtrack_postgres::testkit::test_key(),
            )
            .await
            .unwrap();
            let closed = store.clone();
            let close: Closer = Box::new(move || {
                closed.close();
                Box::pin(async {})
            });
            app_on(store, close, config).await
        }
        None => {
            let store = SqliteStore::open_temporary().await.unwrap();
            let closed = store.clone();
            let close: Closer = Box::new(move || {
                let closed = closed.clone();
                Box::pin(async move { closed.close().await })
            });
            app_on(store, close, config).await
        }
    }
}

/// Closes a store.
type Closer = Box<dyn Fn() -> futures_util::future::BoxFuture<'static, ()> + Send + Sync>;

async fn app_on<S: Store + Clone>(store: S, close: Closer, config: Config) -> App {
    let project = store
        .create_project(
            NewProject {
                public_id: Some("prj_test".into()),
                name: "Test".into(),
                currency: Some("EUR".into()),
            },
            Utc::now(),
        )
        .await
        .unwrap();
    let key = store
        .issue_api_key(project.id, Utc::now())
        .await
        .unwrap()
        .key;
    let filter = routes(store.clone(), config).boxed();
    App {
        store: Arc::new(store),
        close,
        project,
        key,
        filter,
    }
}

/// A response, decoded.
struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    text: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.text)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.text))
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().unwrap())
    }
}

fn request(method: &str, path: &str) -> warp::test::RequestBuilder {
    warp::test::request()
        .method(method)
        .path(path)
        .remote_addr(SocketAddr::from(([198, 51, 100, 7], 52000)))
}

impl App {
    async fn send(&self, request: warp::test::RequestBuilder) -> Reply {
        let response = request.reply(&self.filter).await;
        Reply {
            status: response.status(),
            headers: response.headers().clone(),
            text: String::from_utf8(response.body().to_vec()).unwrap(),
        }
    }

    async fn post(&self, path: &str, key: Option<&str>, body: Value) -> Reply {
        let mut req = request("POST", path)
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(key) = key {
            req = req.header("x-api-key", key);
        }
        self.send(req).await
    }

    async fn delete(&self, path: &str, key: &str) -> Reply {
        self.send(request("DELETE", path).header("x-api-key", key))
            .await
    }

    async fn get(&self, path_and_query: &str) -> Reply {
        self.send(request("GET", path_and_query).header("x-api-key", &self.key))
            .await
    }

    async fn create(&self, body: Value) -> i64 {
        let reply = self
            .post("/api/leads/createServerSideLead", Some(&self.key), body)
            .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
        reply.json()["leadId"].as_i64().unwrap()
    }

    async fn label(&self, mapping: LabelMapping) -> String {
        self.store
            .create_label(
                self.project.id,
                NewLabel {
                    name: "Qualified".into(),
                    mark_as_done: true,
                    mapping,
                },
                Utc::now(),
            )
            .await
            .unwrap()
            .id
            .to_string()
    }

    /// The lead as stored, device data included.
    async fn stored(&self, id: i64) -> StoredLead {
        self.store
            .find_lead(self.project.id, &LeadIdentifier::LeadId(LeadId(id)))
            .await
            .expect("the lead")
    }

    /// `API key <prefix>`: how the lead's history and jobs name this app's key.
    async fn rated_by(&self) -> String {
        let keys = self.store.api_keys(self.project.id).await.unwrap();
        format!("API key {}", keys[0].prefix)
    }

    /// A lead of another project, `z@x.io`, that this app's key must not reach.
    async fn foreign_lead(&self) -> CreatedLead {
        let other = self
            .store
            .create_project(
                NewProject {
                    public_id: Some("other".into()),
                    name: "O".into(),
                    currency: None,
                },
                Utc::now(),
            )
            .await
            .unwrap();
        self.store
            .create_lead(
                other.id,
                leadtrack_core::testkit::data(json!({"userData": {"email": "z@x.io"}})),
                Utc::now(),
            )
            .await
            .unwrap()
    }

    async fn lead_count(&self) -> u64 {
        self.store
            .list_leads(self.project.id, &Default::default())
            .await
            .unwrap()
            .total
    }
}

fn assert_error(reply: &Reply, status: u16, code: &str) -> Value {
    assert_eq!(reply.status.as_u16(), status, "{}", reply.text);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert_eq!(
        reply.header("access-control-allow-origin"),
        Some("*"),
        "CORS on errors too"
    );
    let body = reply.json();
    assert_eq!(body["code"], code, "{body}");
    assert!(
        body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    body
}

const PATHS: [(&str, &str); 7] = [
    ("/api/leads/createLead", "POST"),
    ("/api/leads/createServerSideLead", "POST"),
    ("/api/leads/updateLeadStatus", "POST"),
    ("/api/leads/getLeads", "GET"),
    ("/api/leads/getLead", "GET"),
    ("/api/leads/getLeadJobs", "GET"),
    ("/api/leads/getLeadActivity", "GET"),
];

mod general {
    use super::*;

    #[tokio::test]
    async fn preflight_is_answered_on_every_path() {
        let app = app().await;
        for (path, _) in PATHS {
            let reply = app
                .send(
                    request("OPTIONS", path)
                        .header("origin", "https://shop.example")
                        .header("access-control-request-method", "POST")
                        .header("access-control-request-headers", "content-type"),
                )
                .await;
            assert_eq!(reply.status, StatusCode::NO_CONTENT, "{path}");
            assert_eq!(reply.header("access-control-allow-origin"), Some("*"));
            assert_eq!(
                reply.header("access-control-allow-methods"),
                Some("GET, POST, DELETE, OPTIONS")
            );
            assert_eq!(
                reply.header("access-control-allow-headers"),
                Some("Content-Type, X-API-Key")
            );
            assert_eq!(reply.header("access-control-max-age"), Some("86400"));
            assert!(reply.text.is_empty());
        }
    }

    #[tokio::test]
    async fn wrong_methods_get_405_with_allow() {
        let app = app().await;
        for (path, method) in PATHS {
            for wrong in ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"] {
                if wrong == method {
                    continue;
                }
                let reply = app
                    .send(request(wrong, path).header("x-api-key", &app.key))
                    .await;
                assert_eq!(
                    reply.status,
                    StatusCode::METHOD_NOT_ALLOWED,
                    "{wrong} {path}"
                );
                let expected = if method == "GET" {
                    "GET, OPTIONS"
                } else {
                    "POST, OPTIONS"
                };
                assert_eq!(reply.header("allow"), Some(expected));
                if wrong != "HEAD" {
                    assert_eq!(
                        reply.json(),
                        json!({"message": "Method not allowed", "code": "method_not_allowed"})
                    );
                }
            }
        }
    }

    #[tokio::test]
    async fn other_paths_are_not_claimed() {
        let app = app().await;
        for path in [
            "/api/leads",
            "/api/leads/",
            "/api/leads/deleteLead",
            "/api/leads/createLead/extra",
            "/api/lead/createLead",
            "/api/leads/createlead",
            "/createLead",
        ] {
            let matched = warp::test::request()
                .method("POST")
                .path(path)
                .matches(&app.filter)
                .await;
            assert!(!matched, "{path} must be left to the host");
        }
    }

    #[tokio::test]
    async fn configured_origins_are_echoed_others_get_no_grant() {
        let config = Config {
            cors_origins: CorsOrigins::List(vec!["https://shop.example".into()]),
            ..Config::default()
        };
        let app = app_with(config).await;
        let reply = app
            .send(request("GET", "/api/leads/getLeads").header("origin", "https://shop.example"))
            .await;
        assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
        assert_eq!(
            reply.header("access-control-allow-origin"),
            Some("https://shop.example")
        );
        assert_eq!(reply.header("vary"), Some("Origin"));
        let reply = app
            .send(
                request("OPTIONS", "/api/leads/createLead")
                    .header("origin", "https://evil.example"),
            )
            .await;
        assert_eq!(reply.status, StatusCode::NO_CONTENT);
        assert_eq!(reply.header("access-control-allow-origin"), None);
    }

    /// A [`LeadStore`] whose key authenticates and whose every other operation fails with
    /// the error `fail` makes, as a broken or overloaded backend would.
    struct FailingStore {
        project: Project,
        fail: fn() -> StoreError,
    }

    #[async_trait]
    impl LeadStore for FailingStore {
        async fn ready(&self) -> StoreResult<()> {
            Err((self.fail)())
        }
        async fn authenticate(&self, _: &KeyHash) -> StoreResult<Project> {
            Ok(self.project.clone())
        }
        async fn project_by_public_id(&self, _: &str) -> StoreResult<Project> {
            Ok(self.project.clone())
        }
        async fn create_screened_lead(
            &self,
            _: ProjectId,
            _: CreateRoute,
            _: LeadData,
            _: Option<SpamReason>,
            _: DateTime<Utc>,
        ) -> StoreResult<CreatedLead> {
            Err((self.fail)())
        }
        async fn import_leads(
            &self,
            _: ProjectId,
            _: &[leadtrack_core::import::ImportedLead],
        ) -> StoreResult<leadtrack_core::import::ImportCounts> {
            Err((self.fail)())
        }
        async fn mark_spam(
            &self,
            _: ProjectId,
            _: &[LeadId],
            _: &Actor,
            _: DateTime<Utc>,
        ) -> StoreResult<Vec<LeadId>> {
            Err((self.fail)())
        }
        async fn delete_lead(
            &self,
            _: ProjectId,
            _: LeadId,
            _: &Attribution,
            _: DateTime<Utc>,
        ) -> StoreResult<()> {
            Err((self.fail)())
        }
        async fn erase_expired(&self, _: ProjectId, _: DateTime<Utc>, _: u32) -> StoreResult<u64> {
            Err((self.fail)())
        }
        async fn person_leads(&self, _: ProjectId, _: &LeadIdentifier) -> StoreResult<Vec<LeadId>> {
            Err((self.fail)())
        }
        async fn erase_person(
            &self,
            _: ProjectId,
            _: &LeadIdentifier,
            _: &Attribution,
            _: DateTime<Utc>,
        ) -> StoreResult<leadtrack_core::store::erasure::Erased> {
            Err((self.fail)())
        }
        async fn assign(
            &self,
            _: ProjectId,
            _: &[LeadId],
            _: Option<leadtrack_core::types::UserId>,
            _: &Actor,
            _: DateTime<Utc>,
        ) -> StoreResult<Vec<LeadId>> {
            Err((self.fail)())
        }
        async fn add_comment(
            &self,
            _: ProjectId,
            _: LeadId,
            _: &Actor,
            _: &str,
            _: DateTime<Utc>,
        ) -> StoreResult<Comment> {
            Err((self.fail)())
        }
        async fn comments(&self, _: ProjectId, _: LeadId) -> StoreResult<Vec<Comment>> {
            Err((self.fail)())
        }
        async fn edit_comment(
            &self,
            _: ProjectId,
            _: (LeadId, i64),
            _: &Actor,
            _: &str,
            _: DateTime<Utc>,
        ) -> StoreResult<Comment> {
            Err((self.fail)())
        }
        async fn delete_comment(
            &self,
            _: ProjectId,
            _: (LeadId, i64),
            _: &Actor,
            _: DateTime<Utc>,
        ) -> StoreResult<()> {
            Err((self.fail)())
        }
        async fn record_project_event(
            &self,
            _: ProjectId,
            _: &Attribution,
            _: &ProjectActivity,
            _: DateTime<Utc>,
        ) -> StoreResult<()> {
            Err((self.fail)())
        }
        async fn project_history(
            &self,
            _: ProjectId,
            _: Option<i64>,
            _: u32,
            _: DateTime<Utc>,
        ) -> StoreResult<Vec<ProjectEvent>> {
            Err((self.fail)())
        }
        async fn last_ratings(
            &self,
            _: ProjectId,
            _: &[LeadId],
        ) -> StoreResult<Vec<(LeadId, LeadEvent)>> {
            Err((self.fail)())
        }
        async fn listed_values(&self, _: ProjectId, _: Listed) -> StoreResult<Vec<String>> {
            Err((self.fail)())
        }
        async fn set_next_step(
            &self,
            _: ProjectId,
            _: LeadId,
            _: Option<&NextStep>,
            _: &Actor,
            _: DateTime<Utc>,
        ) -> StoreResult<()> {
            Err((self.fail)())
        }
        async fn next_steps(
            &self,
            _: ProjectId,
            _: &[LeadId],
        ) -> StoreResult<Vec<(LeadId, NextStep)>> {
            Err((self.fail)())
        }
        async fn due_steps(
            &self,
            _: ProjectId,
            _: DateTime<Utc>,
            _: Option<leadtrack_core::UserId>,
        ) -> StoreResult<Vec<DueStep>> {
            Err((self.fail)())
        }
        async fn next_step_coverage(&self, _: ProjectId) -> StoreResult<Coverage> {
            Err((self.fail)())
        }
        async fn save_draft(&self, _: ProjectId, _: &Draft) -> StoreResult<()> {
            Err((self.fail)())
        }
        async fn discard_draft(&self, _: ProjectId, _: LeadId) -> StoreResult<bool> {
            Err((self.fail)())
        }
        async fn drafts(&self, _: ProjectId) -> StoreResult<Vec<Draft>> {
            Err((self.fail)())
        }
        async fn find_lead(&self, _: ProjectId, _: &LeadIdentifier) -> StoreResult<StoredLead> {
            Err((self.fail)())
        }
        async fn list_leads(&self, _: ProjectId, _: &LeadQuery) -> StoreResult<LeadPage> {
            Err((self.fail)())
        }
        async fn status_counts(
            &self,
            _: ProjectId,
            _: &LeadQuery,
        ) -> StoreResult<Vec<(LeadStatus, u64)>> {
            Err((self.fail)())
        }
        async fn export_leads(
            &self,
            _: ProjectId,
            _: &LeadQuery,
            _: Option<&Cursor>,
            _: u32,
        ) -> StoreResult<Vec<StoredLead>> {
            Err((self.fail)())
        }
        async fn report(&self, _: ProjectId, _: &ReportQuery) -> StoreResult<Report> {
            Err((self.fail)())
        }
        async fn update_status_from(
            &self,
            _: ProjectId,
            _: &StatusUpdate,
            _: &Actor,
            _: DateTime<Utc>,
            _: Option<FormRating>,
        ) -> StoreResult<StatusChange> {
            Err((self.fail)())
        }
        async fn retry_failed(
            &self,
            _: ProjectId,
            _: RetryTarget,
            _: &Actor,
            _: DateTime<Utc>,
        ) -> StoreResult<Vec<leadtrack_core::JobId>> {
            Err((self.fail)())
        }
        async fn undo(
            &self,
            _: ProjectId,
            _: UndoTarget,
            _: &Actor,
            _: DateTime<Utc>,
        ) -> StoreResult<Vec<LeadId>> {
            Err((self.fail)())
        }
        async fn lead_jobs(&self, _: ProjectId, _: LeadId) -> StoreResult<Vec<JobRecord>> {
            Err((self.fail)())
        }
        async fn lead_troubles(&self, _: ProjectId, _: &[LeadId]) -> StoreResult<Vec<Trouble>> {
            Err((self.fail)())
        }
        async fn troubles(&self, _: ProjectId) -> StoreResult<Vec<Trouble>> {
            Err((self.fail)())
        }
        async fn troubled_leads(&self, _: ProjectId) -> StoreResult<u64> {
            Err((self.fail)())
        }
        async fn correct_contact(
            &self,
            _: ProjectId,
            _: LeadId,
            _: &ContactCorrection,
            _: &Actor,
            _: DateTime<Utc>,
        ) -> StoreResult<bool> {
            Err((self.fail)())
        }
        async fn lead_activity(&self, _: ProjectId, _: LeadId) -> StoreResult<Vec<LeadEvent>> {
            Err((self.fail)())
        }
    }

    #[async_trait]
    impl leadtrack_core::Spending for FailingStore {
        async fn save_spend(&self, _: ProjectId, _: &[SpendRow]) -> StoreResult<u64> {
            Err((self.fail)())
        }
        async fn spend(
            &self,
            _: ProjectId,
            _: NaiveDate,
            _: NaiveDate,
        ) -> StoreResult<Vec<SpendRow>> {
            Err((self.fail)())
        }
        async fn replace_spend(
            &self,
            _: ProjectId,
            _: &str,
            _: &str,
            _: (NaiveDate, NaiveDate),
            _: &[SpendRow],
        ) -> StoreResult<u64> {
            Err((self.fail)())
        }
        async fn spend_sources(&self, _: ProjectId) -> StoreResult<Vec<SpendSource>> {
            Err((self.fail)())
        }
        async fn set_spend_source(&self, _: ProjectId, _: &SpendSource) -> StoreResult<()> {
            Err((self.fail)())
        }
        async fn remove_spend_source(&self, _: ProjectId, _: SpendPlatform) -> StoreResult<()> {
            Err((self.fail)())
        }
        async fn record_spend_sync(
            &self,
            _: ProjectId,
            _: SpendPlatform,
            _: DateTime<Utc>,
            _: Option<&str>,
        ) -> StoreResult<()> {
            Err((self.fail)())
        }
        async fn fx_rates(&self, _: ProjectId) -> StoreResult<FxRates> {
            Err((self.fail)())
        }
        async fn set_fx_rates(&self, _: ProjectId, _: &FxRates) -> StoreResult<()> {
            Err((self.fail)())
        }
        async fn roas(&self, _: ProjectId, _: &RoasQuery) -> StoreResult<RoasReport> {
            Err((self.fail)())
        }
    }

    #[async_trait]
    impl leadtrack_core::LeadWebhooks for FailingStore {
        async fn create_webhook(
            &self,
            _: ProjectId,
            _: NewWebhook,
            _: DateTime<Utc>,
        ) -> StoreResult<Webhook> {
            Err((self.fail)())
        }
        async fn webhooks(&self, _: ProjectId) -> StoreResult<Vec<WebhookStatus>> {
            Err((self.fail)())
        }
        async fn remove_webhook(&self, _: ProjectId, _: uuid::Uuid) -> StoreResult<bool> {
            Err((self.fail)())
        }
        async fn update_webhook(
            &self,
            _: ProjectId,
            _: uuid::Uuid,
            _: NewWebhook,
        ) -> StoreResult<Webhook> {
            Err((self.fail)())
        }
        async fn lead_syncs(
            &self,
            _: ProjectId,
            _: LeadId,
        ) -> StoreResult<Vec<leadtrack_core::webhook::LeadSync>> {
            Err((self.fail)())
        }
        async fn crm_record(
            &self,
            _: uuid::Uuid,
            _: LeadId,
        ) -> StoreResult<leadtrack_core::crm::CrmRecord> {
            Err((self.fail)())
        }
        async fn save_crm_record(
            &self,
            _: uuid::Uuid,
            _: LeadId,
            _: &leadtrack_core::crm::CrmRecord,
        ) -> StoreResult<()> {
            Err((self.fail)())
        }
    }

    /// Every route, answered by a store that fails with `fail`.
    async fn replies_of_a_failing_store(fail: fn() -> StoreError) -> Vec<Reply> {
        let base = app().await;
        let store = FailingStore {
            project: base.project.clone(),
            fail,
        };
        let failing = App {
            filter: routes(store, Config::default()).boxed(),
            ..base
        };
        let lead = json!({"projectId": "prj_test", "userData": {"email": "a@x.io"}});
        let status = json!({"leadId": 1, "conversionId": "lost"});
        vec![
            failing
                .post("/api/leads/createLead", None, lead.clone())
                .await,
            failing
                .post("/api/leads/createServerSideLead", Some(&failing.key), lead)
                .await,
            failing
                .post("/api/leads/updateLeadStatus", Some(&failing.key), status)
                .await,
            failing.get("/api/leads/getLeads?status=open").await,
            failing.get("/api/leads/getLead?leadId=1").await,
            failing.get("/api/leads/getLeadJobs?leadId=1").await,
            failing.get("/api/leads/getLeadActivity?leadId=1").await,
            failing.get("/api/reports/roas").await,
            failing
                .post(
                    "/api/hooks",
                    Some(&failing.key),
                    json!({"targetUrl": "https://hooks.example/1", "event": "lead.created"}),
                )
                .await,
            failing.get("/api/hooks").await,
            failing
                .delete(
                    &format!("/api/hooks/{}", uuid::Uuid::new_v4()),
                    &failing.key,
                )
                .await,
        ]
    }

    #[tokio::test]
    async fn store_failures_are_500_with_nothing_of_the_cause() {
        let cause = || {
            StoreError::backend(std::io::Error::other(
                "no such table: leads (/var/lib/leadtrack/leadtrack.db)",
            ))
        };
        for reply in replies_of_a_failing_store(cause).await {
            assert_error(&reply, 500, "internal");
            assert_eq!(
                reply.json(),
                json!({"message": "Internal server error", "code": "internal"})
            );
            assert!(
                !reply.text.contains("leads") && !reply.text.contains("table"),
                "{}",
                reply.text
            );
        }
    }

    #[tokio::test]
    async fn an_overloaded_store_answers_503_with_retry_after_on_every_route() {
        let overloaded = || StoreError::Unavailable("the writer queue is full".into());
        for reply in replies_of_a_failing_store(overloaded).await {
            assert_error(&reply, 503, "unavailable");
            assert_eq!(reply.header("retry-after"), Some("1"));
            assert!(!reply.text.contains("writer"), "{}", reply.text);
        }
    }

    #[tokio::test]
    async fn a_closed_store_answers_503_with_retry_after() {
        let app = app().await;
        (app.close)().await;
        let reply = app
            .post(
                "/api/leads/createLead",
                None,
                json!({"projectId": "prj_test", "userData": {"email": "a@x.io"}}),
            )
            .await;
        assert_error(&reply, 503, "unavailable");
        assert_eq!(reply.header("retry-after"), Some("1"));
    }

    #[tokio::test]
    async fn bodies_over_the_limit_get_413_and_change_nothing() {
        let app = app().await;
        let big = json!({"projectId": "prj_test", "userData": {"email": "a@x.io"}, "formData": {"pad": "x".repeat(70_000)}});
        let reply = app.post("/api/leads/createLead", None, big).await;
        assert_error(&reply, 413, "payload_too_large");
        let at_limit = {
            let mut body = json!({"projectId": "prj_test", "userData": {"email": "a@x.io"}, "formData": {"pad": ""}}).to_string();
            let pad = 64 * 1024 - body.len();
            body = body.replace(r#""pad":"""#, &format!(r#""pad":"{}""#, "x".repeat(pad)));
            assert_eq!(body.len(), 64 * 1024);
            body
        };
        let reply = app
            .send(request("POST", "/api/leads/createLead").body(at_limit))
            .await;
        assert_eq!(
            reply.status,
            StatusCode::CREATED,
            "exactly 64 KiB is accepted: {}",
            reply.text
        );
        assert_eq!(app.lead_count().await, 1);
    }

    #[tokio::test]
    async fn a_smaller_configured_limit_applies() {
        let app = app_with(Config {
            body_limit: 100,
            ..Config::default()
        })
        .await;
        let body = json!({"userData": {"email": "a@x.io"}, "formData": {"pad": "x".repeat(100)}});
        let reply = app
            .post("/api/leads/createServerSideLead", Some(&app.key), body)
            .await;
        let error = assert_error(&reply, 413, "payload_too_large");
        assert_eq!(error["message"], "Request body is larger than 100 bytes");
    }

    #[tokio::test]
    async fn other_content_types_get_415() {
        let app = app().await;
        for content_type in [
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/xml",
        ] {
            for (path, key) in [
                ("/api/leads/createLead", None),
                ("/api/leads/createServerSideLead", Some(&app.key)),
                ("/api/leads/updateLeadStatus", Some(&app.key)),
            ] {
                let mut req = request("POST", path)
                    .header("content-type", content_type)
                    .body(
                        json!({"projectId": "prj_test", "userData": {"email": "a@x.io"}})
                            .to_string(),
                    );
                if let Some(key) = key {
                    req = req.header("x-api-key", key.as_str());
                }
                let reply = app.send(req).await;
                assert_error(&reply, 415, "unsupported_media_type");
            }
        }
        assert_eq!(app.lead_count().await, 0);
    }

    #[tokio::test]
    async fn json_text_plain_and_untyped_bodies_are_accepted() {
        let app = app().await;
        for content_type in [
            Some("application/json; charset=utf-8"),
            Some("text/plain;charset=UTF-8"),
            None,
        ] {
            let mut req = request("POST", "/api/leads/createLead").body(
                json!({"projectId": "prj_test", "userData": {"email": "a@x.io"}}).to_string(),
            );
            if let Some(content_type) = content_type {
                req = req.header("content-type", content_type);
            }
            let reply = app.send(req).await;
            assert_eq!(
                reply.status,
                StatusCode::CREATED,
                "{content_type:?}: {}",
                reply.text
            );
        }
    }

    #[tokio::test]
    async fn bodies_that_are_not_json_objects_get_invalid_json() {
        let app = app().await;
        for body in [
            "",
            "{",
            "[]",
            "\"lead\"",
            "42",
            "null",
            "{\"projectId\": \"prj_test\",}",
        ] {
            let reply = app
                .send(request("POST", "/api/leads/createLead").body(body))
                .await;
            assert_error(&reply, 400, "invalid_json");
            let reply = app
                .send(
                    request("POST", "/api/leads/updateLeadStatus")
                        .header("x-api-key", &app.key)
                        .body(body),
                )
                .await;
            assert_error(&reply, 400, "invalid_json");
        }
        assert_eq!(app.lead_count().await, 0);
    }
}

mod authentication {
    use super::*;

    const KEYED: [(&str, &str); 6] = [
        ("/api/leads/createServerSideLead", "POST"),
        ("/api/leads/updateLeadStatus", "POST"),
        ("/api/leads/getLeads", "GET"),
        ("/api/leads/getLead", "GET"),
        ("/api/leads/getLeadJobs", "GET"),
        ("/api/leads/getLeadActivity", "GET"),
    ];

    #[tokio::test]
    async fn missing_or_empty_keys_get_401_missing_api_key() {
        let app = app().await;
        for (path, method) in KEYED {
            for key in [None, Some(""), Some("   ")] {
                let mut req = request(method, path).body("not json at all");
                if let Some(key) = key {
                    req = req.header("x-api-key", key);
                }
                let reply = app.send(req).await;
                assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{path}");
                assert_eq!(
                    reply.json(),
                    json!({"message": "Missing X-API-Key header", "code": "missing_api_key"})
                );
            }
        }
    }

    #[tokio::test]
    async fn unknown_and_revoked_keys_get_401_invalid_api_key_before_the_body_is_read() {
        let app = app().await;
        let revoked = app
            .store
            .issue_api_key(app.project.id, Utc::now())
            .await
            .unwrap();
        app.store
            .revoke_api_key(app.project.id, &KeyRef::parse(&revoked.key), Utc::now())
            .await
            .unwrap();
        for (path, method) in KEYED {
            for key in [
                "lt_0000000000000000000000000000000000000000000000000",
                revoked.key.as_str(),
                "x",
            ] {
                // An oversized, invalid body: authentication answers first.
                let reply = app
                    .send(
                        request(method, path)
                            .header("x-api-key", key)
                            .header("content-type", "application/xml")
                            .body("x".repeat(100_000)),
                    )
                    .await;
                assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{path}");
                assert_eq!(
                    reply.json(),
                    json!({"message": "Invalid API key", "code": "invalid_api_key"})
                );
            }
        }
    }

    #[tokio::test]
    async fn a_deactivated_project_gets_403_on_every_route() {
        let app = app().await;
        app.store
            .set_project_active(app.project.id, false)
            .await
            .unwrap();
        for (path, method) in KEYED {
            let reply = app
                .send(
                    request(method, path)
                        .header("x-api-key", &app.key)
                        .body(json!({"userData": {"email": "a@x.io"}}).to_string()),
                )
                .await;
            assert_error(&reply, 403, "project_inactive");
        }
        let reply = app
            .post(
                "/api/leads/createLead",
                None,
                json!({"projectId": "prj_test", "userData": {"email": "a@x.io"}}),
            )
            .await;
        assert_error(&reply, 403, "project_inactive");
        assert_eq!(app.lead_count().await, 0);
    }
}

mod create_lead {
    use super::*;

    #[tokio::test]
    async fn creates_then_deduplicates() {
        let app = app().await;
        let body = json!({
            "projectId": "prj_test",
            "userData": {"email": "ada@example.com"},
            "formData": {"uniqueEventId": "evt-1", "formName": "Contact"},
        });
        let first = app.post("/api/leads/createLead", None, body.clone()).await;
        assert_eq!(first.status, StatusCode::CREATED);
        assert_eq!(first.header("content-type"), Some("application/json"));
        assert_eq!(first.header("access-control-allow-origin"), Some("*"));
        let id = first.json()["leadId"].as_i64().unwrap();
        assert_eq!(
            first.text,
            format!(
                r#"{{"message":"Lead created successfully","leadId":{id},"uniqueIdentifier":null}}"#
            )
        );
        let mut again = body;
        again["uniqueIdentifier"] = json!("crm-9");
        again["userData"] = json!({"phone": "+1 555 0100"});
        let second = app.post("/api/leads/createLead", None, again).await;
        assert_eq!(second.status, StatusCode::OK);
        assert_eq!(
            second.json(),
            json!({"message": "Lead updated successfully", "leadId": id, "uniqueIdentifier": "crm-9"})
        );
        let read = app
            .get(&format!("/api/leads/getLead?leadId={id}"))
            .await
            .json();
        assert_eq!(read["lead"]["email"], "ada@example.com");
        assert_eq!(read["lead"]["phone"], "+1 555 0100");
        assert_eq!(app.lead_count().await, 1);
    }

    #[tokio::test]
    async fn device_data_is_filled_from_the_request() {
        let app = app().await;
        let reply = app
            .send(
                request("POST", "/api/leads/createLead")
                    .header("user-agent", "Mozilla/5.0 (Test)")
                    .header("x-forwarded-for", "203.0.113.50")
                    .body(
                        json!({"projectId": "prj_test", "userData": {"email": "a@x.io"}})
                            .to_string(),
                    ),
            )
            .await;
        let id = reply.json()["leadId"].as_i64().unwrap();
        let lead = app.stored(id).await;
        assert_eq!(
            lead.data.device_data.ip_address.as_deref(),
            Some("198.51.100.7"),
            "proxy not trusted"
        );
        assert_eq!(
            lead.data.device_data.user_agent.as_deref(),
            Some("Mozilla/5.0 (Test)")
        );

        let given = json!({"projectId": "prj_test", "userData": {"email": "b@x.io"}, "deviceData": {"ipAddress": "192.0.2.1", "userAgent": "Given"}});
        let id = app.post("/api/leads/createLead", None, given).await.json()["leadId"]
            .as_i64()
            .unwrap();
        let lead = app.stored(id).await;
        assert_eq!(
            lead.data.device_data.ip_address.as_deref(),
            Some("192.0.2.1")
        );
        assert_eq!(lead.data.device_data.user_agent.as_deref(), Some("Given"));
        let read = app
            .get(&format!("/api/leads/getLead?leadId={id}"))
            .await
            .json();
        assert!(
            read["lead"].get("deviceData").is_none(),
            "deviceData is never returned"
        );
    }

    #[tokio::test]
    async fn a_trusted_proxy_supplies_the_client_address() {
        let app = app_with(Config {
            trust_forwarded_for: true,
            ..Config::default()
        })
        .await;
        let reply = app
            .send(
                request("POST", "/api/leads/createLead")
                    .header("x-forwarded-for", "203.0.113.50, 10.0.0.1")
                    .body(
                        json!({"projectId": "prj_test", "userData": {"email": "a@x.io"}})
                            .to_string(),
                    ),
            )
            .await;
        let id = reply.json()["leadId"].as_i64().unwrap();
        let lead = app.stored(id).await;
        assert_eq!(
            lead.data.device_data.ip_address.as_deref(),
            Some("203.0.113.50")
        );
    }

    #[tokio::test]
    async fn validation_errors_name_the_field_and_change_nothing() {
        let app = app().await;
        let reply = app
            .post(
                "/api/leads/createLead",
                None,
                json!({"userData": {"email": "a@x.io"}}),
            )
            .await;
        let body = assert_error(&reply, 400, "missing_field");
        assert_eq!(body["message"], "Missing required field: projectId");
        let reply = app
            .post(
                "/api/leads/createLead",
                None,
                json!({"projectId": "prj_test", "userData": {"email": 5}}),
            )
            .await;
        let body = assert_error(&reply, 400, "invalid_field");
        assert_eq!(
            body["errors"],
            json!([{"field": "userData.email", "message": "must be a string, not a number"}])
        );
        let reply = app
            .post(
                "/api/leads/createLead",
                None,
                json!({"projectId": "prj_test", "userData": {"email": " "}}),
            )
            .await;
        let body = assert_error(&reply, 400, "no_lead_data");
        assert_eq!(
            body,
            json!({"message": "At least one of userData or attributionData must contain data", "code": "no_lead_data"})
        );
        let reply = app
            .post("/api/leads/createLead", None, json!({"projectId": "prj_test", "userData": {"email": "a"}, "uniqueIdentifier": "x".repeat(256)}))
            .await;
        assert_error(&reply, 400, "invalid_field");
        assert_eq!(app.lead_count().await, 0);
    }

    #[tokio::test]
    async fn unknown_projects_get_404() {
        let app = app().await;
        let reply = app
            .post(
                "/api/leads/createLead",
                None,
                json!({"projectId": "prj_nope", "userData": {"email": "a@x.io"}}),
            )
            .await;
        assert_eq!(
            reply.json(),
            json!({"message": "Project not found", "code": "project_not_found"})
        );
        assert_eq!(reply.status, StatusCode::NOT_FOUND);
    }

    /// CONTRACT.md section 9: the tag-manager tag, posting JSON from another site after a
    /// CORS preflight.
    #[tokio::test]
    async fn tag_manager_tag_after_a_preflight() {
        let app = app().await;
        let preflight = app
            .send(
                request("OPTIONS", "/api/leads/createLead")
                    .header("origin", "https://www.shop.example")
                    .header("access-control-request-method", "POST")
                    .header("access-control-request-headers", "content-type"),
            )
            .await;
        assert_eq!(preflight.status, StatusCode::NO_CONTENT);
        assert_eq!(preflight.header("access-control-allow-origin"), Some("*"));
        let body = json!({
            "projectId": "prj_test",
            "formData": {"formName": "undefined form name", "uniqueEventId": "gtm-1-abc", "formFields": {"message": "Hi"}},
            "userData": {"email": "ada@example.com", "phone": "+44 20 7946 0958", "firstName": "Ada", "lastName": "Lovelace", "consent": "yes"},
            "channelFlow": [{"t": 1_773_570_600_000_u64, "ch": {"s": "google", "m": "cpc", "cm": "spring", "ct": "", "tm": ""}, "lp": "https://www.shop.example/?gclid=G"}],
            "attributionData": {"fbc": "", "fbp": "fb.1.1773570600000.42", "gclid": "G-1", "wbraid": "", "cid": "111.222"}
        });
        let reply = app
            .send(
                request("POST", "/api/leads/createLead")
                    .header("origin", "https://www.shop.example")
                    .header("content-type", "application/json")
                    .body(body.to_string()),
            )
            .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
        assert_eq!(reply.header("access-control-allow-origin"), Some("*"));
        let id = reply.json()["leadId"].as_i64().unwrap();
        let lead = app
            .get(&format!("/api/leads/getLead?leadId={id}"))
            .await
            .json()["lead"]
            .clone();
        assert_eq!(lead["formName"], "undefined form name");
        assert_eq!(lead["firstName"], "Ada");
        assert_eq!(
            lead["attributionData"],
            json!({"fbp": "fb.1.1773570600000.42", "gclid": "G-1", "cid": "111.222"})
        );
        assert_eq!(
            lead["channelFlow"],
            r#"[{"t":1773570600000,"ch":{"s":"google","m":"cpc","cm":"spring","ct":"","tm":""},"lp":"https://www.shop.example/?gclid=G"}]"#
        );
        assert_eq!(lead["userData"]["consent"], "yes");
        assert_eq!(lead["formData"]["formFields"], json!({"message": "Hi"}));
    }

    /// CONTRACT.md section 9: the WordPress plugin, server to server.
    #[tokio::test]
    async fn wordpress_plugin() {
        let app = app().await;
        let body = json!({
            "projectId": "prj_test",
            "formData": {"formId": 7, "formName": "Contact", "customFormName": "Kontakt", "formFields": [{"your-name": "Ada"}, {"your-message": "Hi"}]},
            "userData": {"email": "ada@example.com", "company": "Engines Ltd"},
            "deviceData": {"ipAddress": "203.0.113.9", "userAgent": "Mozilla/5.0 (WP)"},
            "attributionData": [],
            "lt_channelflow": "%5B%7B%22t%22%3A1%7D%5D"
        });
        let reply = app.post("/api/leads/createLead", None, body).await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
        let id = reply.json()["leadId"].as_i64().unwrap();
        let lead = app
            .get(&format!("/api/leads/getLead?leadId={id}"))
            .await
            .json()["lead"]
            .clone();
        assert_eq!(lead["companyName"], "Engines Ltd");
        assert_eq!(
            lead["userData"],
            json!({"email": "ada@example.com", "companyName": "Engines Ltd"})
        );
        assert_eq!(lead["attributionData"], Value::Null);
        assert_eq!(lead["channelFlow"], "%5B%7B%22t%22%3A1%7D%5D");
        let stored = app.stored(id).await;
        assert_eq!(
            stored.data.device_data.ip_address.as_deref(),
            Some("203.0.113.9")
        );

        let with_attribution = json!({
            "projectId": "prj_test", "userData": [], "formData": {"formName": "Quote", "formFields": []},
            "attributionData": {"gclid": "G-WP", "cid": "1.2"}, "deviceData": {"ipAddress": "203.0.113.9", "userAgent": "UA"}
        });
        let reply = app
            .post("/api/leads/createLead", None, with_attribution)
            .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
    }
}

mod create_server_side_lead {
    use super::*;

    #[tokio::test]
    async fn creates_with_or_without_the_matching_project_id() {
        let app = app().await;
        let reply = app
            .post(
                "/api/leads/createServerSideLead",
                Some(&app.key),
                json!({"userData": {"email": "a@x.io"}, "uniqueIdentifier": "crm-1"}),
            )
            .await;
        assert_eq!(reply.status, StatusCode::CREATED);
        let id = reply.json()["leadId"].as_i64().unwrap();
        assert_eq!(
            reply.json(),
            json!({"message": "Lead created successfully", "leadId": id, "uniqueIdentifier": "crm-1"})
        );
        let reply = app
            .post(
                "/api/leads/createServerSideLead",
                Some(&app.key),
                json!({"projectId": "prj_test", "userData": {"email": "b@x.io"}}),
            )
            .await;
        assert_eq!(reply.status, StatusCode::CREATED);
    }

    #[tokio::test]
    async fn another_project_id_gets_403_project_mismatch() {
        let app = app().await;
        let reply = app
            .post(
                "/api/leads/createServerSideLead",
                Some(&app.key),
                json!({"projectId": "prj_other", "userData": {"email": "a@x.io"}}),
            )
            .await;
        assert_error(&reply, 403, "project_mismatch");
        assert_eq!(app.lead_count().await, 0);
    }

    #[tokio::test]
    async fn user_data_is_required() {
        let app = app().await;
        let reply = app
            .post(
                "/api/leads/createServerSideLead",
                Some(&app.key),
                json!({"attributionData": {"gclid": "G"}}),
            )
            .await;
        let body = assert_error(&reply, 400, "missing_field");
        assert_eq!(body["message"], "Missing required field: userData");
    }

    #[tokio::test]
    async fn consent_is_stored_merged_and_never_returned() {
        let app = app().await;
        let path = "/api/leads/createServerSideLead";
        let body = |consent: Value| {
            json!({"userData": {"email": "a@x.io"}, "formData": {"uniqueEventId": "evt-1"},
                   "consent": consent})
        };
        let bad = app
            .post(path, Some(&app.key), body(json!({"adUserData": "maybe"})))
            .await;
        let error = assert_error(&bad, 400, "invalid_field");
        assert_eq!(error["errors"][0]["field"], "consent.adUserData");
        assert_eq!(app.lead_count().await, 0);

        let id = app
            .create(body(
                json!({"adUserData": "DENIED", "adPersonalization": "granted"}),
            ))
            .await;
        let reply = app
            .post(
                path,
                Some(&app.key),
                body(json!({"adPersonalization": "denied"})),
            )
            .await;
        assert_eq!(reply.status, StatusCode::OK, "a merge by the event id");
        assert_eq!(
            app.stored(id).await.data.consent,
            Consent {
                ad_user_data: Some(ConsentStatus::Denied),
                ad_personalization: Some(ConsentStatus::Denied),
            }
        );
        let read = app.get(&format!("/api/leads/getLead?leadId={id}")).await;
        assert_eq!(read.json()["lead"].get("consent"), None);
    }
}

mod update_lead_status {
    use super::*;

    #[tokio::test]
    async fn open_label_and_conflict() {
        let app = app().await;
        let label = app.label(LabelMapping::default()).await;
        let id = app.create(json!({"userData": {"email": "a@x.io"}})).await;

        let reply = app
            .post(
                "/api/leads/updateLeadStatus",
                Some(&app.key),
                json!({"leadId": id, "conversionId": "open", "price": 5000}),
            )
            .await;
        assert_eq!(reply.status, StatusCode::OK);
        assert_eq!(
            reply.text,
            format!(
                r#"{{"message":"Lead status updated to open","leadId":{id},"uniqueIdentifier":null,"status":"open","queued":false}}"#
            )
        );

        let reply = app
            .post(
                "/api/leads/updateLeadStatus",
                Some(&app.key),
                json!({"leadId": id.to_string(), "conversionId": label, "note": "Won"}),
            )
            .await;
        assert_eq!(reply.status, StatusCode::CREATED);
        assert_eq!(
            reply.text,
            format!(
                r#"{{"message":"Lead queued for processing","leadId":{id},"uniqueIdentifier":null,"status":"pending","queued":true,"warnings":[]}}"#
            )
        );

        let reply = app
            .post(
                "/api/leads/updateLeadStatus",
                Some(&app.key),
                json!({"leadId": id, "conversionId": "lost", "price": 1}),
            )
            .await;
        assert_eq!(reply.status, StatusCode::CONFLICT);
        assert_eq!(
            reply.text,
            format!(
                r#"{{"message":"Lead already has a pending job","code":"job_pending","leadId":{id}}}"#
            )
        );

        let lead = app
            .get(&format!("/api/leads/getLead?leadId={id}"))
            .await
            .json()["lead"]
            .clone();
        assert_eq!(lead["status"], "pending");
        assert_eq!(lead["price"], 5000, "the 409 changed nothing");
        assert_eq!(lead["note"], "Won");
        assert_eq!(lead["conversionId"], Value::String(label));
    }

    #[tokio::test]
    async fn concurrent_ratings_one_wins_the_rest_get_409() {
        let app = app().await;
        let label = app.label(LabelMapping::default()).await;
        let id = app.create(json!({"userData": {"email": "a@x.io"}})).await;
        let replies = join_all((0..24).map(|i| {
            let conversion = if i % 3 == 0 {
                "lost".to_owned()
            } else {
                label.clone()
            };
            app.post(
                "/api/leads/updateLeadStatus",
                Some(&app.key),
                json!({"leadId": id, "conversionId": conversion}),
            )
        }))
        .await;
        let created = replies
            .iter()
            .filter(|r| r.status == StatusCode::CREATED)
            .count();
        let conflicts = replies
            .iter()
            .filter(|r| r.status == StatusCode::CONFLICT)
            .count();
        assert_eq!((created, conflicts), (1, 23));
        for reply in replies.iter().filter(|r| r.status == StatusCode::CONFLICT) {
            assert_eq!(
                reply.json(),
                json!({"message": "Lead already has a pending job", "code": "job_pending", "leadId": id})
            );
        }
        let jobs = app
            .store
            .lead_jobs(app.project.id, LeadId(id))
            .await
            .unwrap();
        assert_eq!(jobs.len(), 1);
    }

    #[tokio::test]
    async fn warnings_name_what_each_connected_integration_will_skip() {
        let app = app().await;
        app.store
            .set_integration(
                app.project.id,
                IntegrationSettings::Ga4(Ga4Settings {
                    measurement_id: "G-1".into(),
                    api_secret: Secret::new("s"),
                    validate: false,
                    base_url: None,
                }),
                Utc::now(),
            )
            .await
            .unwrap();
        let label = app
            .label(LabelMapping {
                ga4_event: Some("qualify".into()),
                meta_event: Some("Lead".into()),
                ..LabelMapping::default()
            })
            .await;
        let id = app.create(json!({"userData": {"email": "a@x.io"}})).await;
        let reply = app
            .post(
                "/api/leads/updateLeadStatus",
                Some(&app.key),
                json!({"email": "A@x.io", "conversionId": label}),
            )
            .await;
        assert_eq!(reply.status, StatusCode::CREATED);
        let body = reply.json();
        assert_eq!(body["leadId"], id);
        let warnings = body["warnings"].as_array().unwrap();
        assert_eq!(
            warnings.len(),
            1,
            "meta is mapped but not connected: {body}"
        );
        let warning = &warnings[0];
        assert_eq!(warning["integration"], "ga4");
        assert_eq!(warning["field"], "cid");
        assert!(warning["reason"].as_str().unwrap().contains("client id"));
        let timestamp = warning["timestamp"].as_str().unwrap();
        assert_eq!(
            timestamp.len(),
            "2026-03-15T10:30:00.000Z".len(),
            "{timestamp}"
        );
        assert!(timestamp.ends_with('Z') && timestamp.as_bytes()[19] == b'.');
        assert_eq!(
            warning.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["integration", "reason", "field", "timestamp"]
        );
    }

    #[tokio::test]
    async fn errors() {
        let app = app().await;
        let id = app
            .create(json!({"userData": {"email": "a@x.io"}, "uniqueIdentifier": "crm-1"}))
            .await;
        let cases = [
            (json!({"conversionId": "open"}), 400, "missing_identifier"),
            (json!({"leadId": id}), 400, "missing_field"),
            (
                json!({"leadId": id, "conversionId": "done"}),
                400,
                "invalid_field",
            ),
            (
                json!({"leadId": id, "conversionId": "open", "price": 10.5}),
                400,
                "invalid_field",
            ),
            (
                json!({"leadId": id, "conversionId": "open", "price": -1}),
                400,
                "invalid_field",
            ),
            (
                json!({"leadId": id, "conversionId": "open", "price": "100"}),
                400,
                "invalid_field",
            ),
            (
                json!({"leadId": "abc", "conversionId": "open"}),
                400,
                "invalid_field",
            ),
            (
                json!({"leadId": id + 100, "conversionId": "open"}),
                404,
                "lead_not_found",
            ),
            (
                json!({"uniqueIdentifier": "crm-2", "conversionId": "lost"}),
                404,
                "lead_not_found",
            ),
            (
                json!({"leadId": id, "conversionId": "0b8f6f0c-5d5c-4f4e-9a0e-5f2b8a7d9c11"}),
                404,
                "conversion_label_not_found",
            ),
        ];
        for (body, status, code) in cases {
            let reply = app
                .post("/api/leads/updateLeadStatus", Some(&app.key), body.clone())
                .await;
            assert_error(&reply, status, code);
        }
        let reply = app
            .post(
                "/api/leads/updateLeadStatus",
                Some(&app.key),
                json!({"leadId": id}),
            )
            .await;
        assert_eq!(
            reply.json()["message"],
            "Missing required field: conversionId"
        );
        let reply = app
            .post(
                "/api/leads/updateLeadStatus",
                Some(&app.key),
                json!({"leadId": id, "conversionId": "open", "price": 10.5}),
            )
            .await;
        assert_eq!(
            reply.json()["message"],
            "Invalid field: price must be a non-negative whole number of cents"
        );
        let lead = app
            .get(&format!("/api/leads/getLead?leadId={id}"))
            .await
            .json()["lead"]
            .clone();
        assert_eq!(
            (lead["status"].as_str(), lead["price"].as_i64()),
            (Some("open"), None),
            "nothing changed"
        );
    }
}

mod get_leads {
    use super::*;

    #[tokio::test]
    async fn lists_a_page_with_its_counts() {
        let app = app().await;
        let mut ids = Vec::new();
        for i in 0..3 {
            ids.push(app.create(json!({"userData": {"email": format!("u{i}@x.io"), "firstName": format!("U{i}")}})).await);
        }
        let reply = app
            .get("/api/leads/getLeads?limit=2&sort=firstName:asc")
            .await;
        assert_eq!(reply.status, StatusCode::OK);
        let body = reply.json();
        assert_eq!(body["message"], "Leads retrieved");
        assert_eq!(
            (
                body["total"].as_u64(),
                body["page"].as_u64(),
                body["limit"].as_u64()
            ),
            (Some(3), Some(1), Some(2))
        );
        assert_eq!(
            (body["totalPages"].as_u64(), body["hasMore"].as_bool()),
            (Some(2), Some(true))
        );
        let listed: Vec<i64> = body["leads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["id"].as_i64().unwrap())
            .collect();
        assert_eq!(listed, ids[..2]);
        let lead = &body["leads"][0];
        assert_eq!(
            lead.as_object().unwrap().keys().collect::<Vec<_>>(),
            [
                "id",
                "status",
                "formName",
                "firstName",
                "lastName",
                "phone",
                "email",
                "companyName",
                "price",
                "note",
                "formData",
                "userData",
                "attributionData",
                "channelFlow",
                "uniqueIdentifier",
                "createdAt",
                "conversionId",
                "spamReason",
                "duplicateOf",
                "assignee",
                "nextStepAt"
            ]
        );
        assert_eq!(
            lead["userData"],
            json!({"email": "u0@x.io", "firstName": "U0"}),
            "lists carry objects"
        );
        let past = app.get("/api/leads/getLeads?limit=2&page=5").await.json();
        assert_eq!(
            (
                past["leads"].as_array().unwrap().len(),
                past["total"].as_u64(),
                past["hasMore"].as_bool()
            ),
            (0, Some(3), Some(false))
        );
    }

    #[tokio::test]
    async fn bracketed_parameters_work_literal_and_percent_encoded() {
        let app = app().await;
        let with = app
            .create(json!({"userData": {"email": "a@x.io"}, "attributionData": {"gclid": "G"}}))
            .await;
        let without = app.create(json!({"userData": {"email": "b@x.io"}})).await;
        for query in [
            "gclid[exists]=true",
            "gclid%5Bexists%5D=true",
            "gclid%5bexists%5d=1",
        ] {
            let body = app
                .get(&format!("/api/leads/getLeads?{query}"))
                .await
                .json();
            assert_eq!(body["total"], 1, "{query}");
            assert_eq!(body["leads"][0]["id"], with);
        }
        let body = app
            .get("/api/leads/getLeads?gclid%5Bexists%5D=false")
            .await
            .json();
        assert_eq!(body["leads"][0]["id"], without);
        let today = Utc::now().format("%Y-%m-%d");
        for query in [
            format!("createdAt[gte]={today}&createdAt[lte]={today}"),
            format!("createdAt%5Bgte%5D={today}"),
        ] {
            let body = app
                .get(&format!("/api/leads/getLeads?{query}"))
                .await
                .json();
            assert_eq!(body["total"], 2, "{query}");
        }
        let body = app
            .get("/api/leads/getLeads?createdAt%5Blte%5D=2000-01-01T00:00:00Z")
            .await
            .json();
        assert_eq!(body["total"], 0);
    }

    #[tokio::test]
    async fn invalid_parameters_get_400_invalid_query() {
        let app = app().await;
        for (query, field) in [
            ("limit=0", "limit"),
            ("limit=101", "limit"),
            ("page=0", "page"),
            ("page=x", "page"),
            ("sort=id:asc", "sort"),
            ("sort=price:up", "sort"),
            ("search=a", "search"),
            ("createdAt%5Bgte%5D=yesterday", "createdAt[gte]"),
            ("createdAt[lte]=2026-02-30", "createdAt[lte]"),
            ("fbc%5Bexists%5D=yes", "fbc[exists]"),
            ("conversionId=open", "conversionId"),
            ("conversionId=%20lost", "conversionId"),
        ] {
            let reply = app.get(&format!("/api/leads/getLeads?{query}")).await;
            let body = assert_error(&reply, 400, "invalid_query");
            assert_eq!(body["errors"][0]["field"], field, "{query}");
            assert!(body["message"].as_str().unwrap().contains(field), "{body}");
        }
    }

    #[tokio::test]
    async fn filters_search_and_other_projects() {
        let app = app().await;
        let other = app
            .store
            .create_project(
                NewProject {
                    public_id: Some("other".into()),
                    name: "O".into(),
                    currency: None,
                },
                Utc::now(),
            )
            .await
            .unwrap();
        app.store
            .create_lead(
                other.id,
                leadtrack_core::testkit::data(json!({"userData": {"email": "ada@example.com"}})),
                Utc::now(),
            )
            .await
            .unwrap();
        let ada = app
            .create(json!({"userData": {"email": "ada@example.com", "lastName": "Lovelace"}}))
            .await;
        app.create(json!({"userData": {"email": "bob@example.com"}}))
            .await;
        for query in [
            "search=LOVE",
            "email=ADA%40example.com",
            "search=ada&status=open,pending",
        ] {
            let body = app
                .get(&format!("/api/leads/getLeads?{query}"))
                .await
                .json();
            assert_eq!(body["total"], 1, "{query}: {body}");
            assert_eq!(body["leads"][0]["id"], ada);
        }
        let body = app.get("/api/leads/getLeads?status=rated").await.json();
        assert_eq!(body["total"], 0);
        let body = app.get("/api/leads/getLeads?unknown=1").await.json();
        assert_eq!(
            body["total"], 2,
            "unknown parameters are ignored; other projects never listed"
        );
    }

    /// `q` (an addition): every word, in any order, whatever the case and accents, in
    /// more fields than `search`; bad ones are `400 invalid_query`.
    #[tokio::test]
    async fn q_finds_every_word_in_any_order_case_and_accents() {
        let app = app().await;
        let anna = app
            .create(json!({"userData": {"firstName": "Anna", "lastName": "Müller", "email": "am@example.com"}, "uniqueIdentifier": "CRM-9"}))
            .await;
        app.create(json!({"userData": {"firstName": "Anna", "lastName": "Kaya"}}))
            .await;
        for query in ["q=muller", "q=MULLER%20anna", "q=crm-9", "q=m%C3%BCller"] {
            let body = app
                .get(&format!("/api/leads/getLeads?{query}"))
                .await
                .json();
            assert_eq!(body["total"], 1, "{query}: {body}");
            assert_eq!(body["leads"][0]["id"], anna);
        }
        let body = app.get("/api/leads/getLeads?q=anna").await.json();
        assert_eq!(body["total"], 2);
        let body = app.get("/api/leads/getLeads?search=muller").await.json();
        assert_eq!(body["total"], 0, "search folds no accents");
        for query in ["q=a", "q=+b+"] {
            let reply = app.get(&format!("/api/leads/getLeads?{query}")).await;
            let body = assert_error(&reply, 400, "invalid_query");
            assert_eq!(body["errors"][0]["field"], "q", "{query}");
        }
    }

    /// A `q` search of more leads than it counts says its total is a lower bound; the
    /// same listing without `q`, or a narrower `q`, has no such property.
    #[tokio::test]
    async fn q_says_when_its_total_is_a_lower_bound() {
        use leadtrack_core::request::query::Q_COUNTED;
        let app = app().await;
        for n in 0..=Q_COUNTED {
            app.create(json!({"userData": {"firstName": format!("Bulk{n}")}}))
                .await;
        }
        let keys = |body: &Value| {
            let mut keys: Vec<String> = body.as_object().unwrap().keys().cloned().collect();
            keys.sort();
            keys.join(",")
        };
        let body = app.get("/api/leads/getLeads?q=bulk").await.json();
        assert_eq!(
            (&body["total"], &body["totalPages"], &body["hasMore"]),
            (&json!(1_001), &json!(21), &json!(true))
        );
        assert_eq!(body["totalIsLowerBound"], true);
        assert_eq!(
            keys(&body),
            "hasMore,leads,limit,message,page,total,totalIsLowerBound,totalPages"
        );
        // Page 21 reaches past the bound, so it is counted to its end: every lead.
        let body = app.get("/api/leads/getLeads?q=bulk&page=21").await.json();
        assert_eq!(
            (&body["total"], &body["hasMore"]),
            (&json!(1_001), &json!(false))
        );
        assert_eq!(body["leads"].as_array().unwrap().len(), 1);
        for exact in ["search=bulk", "q=bulk100", "limit=1"] {
            let body = app
                .get(&format!("/api/leads/getLeads?{exact}"))
                .await
                .json();
            assert_eq!(
                keys(&body),
                "hasMore,leads,limit,message,page,total,totalPages",
                "{exact}"
            );
        }
    }

    #[tokio::test]
    async fn form_touch_and_rating_filters_are_additions() {
        let app = app().await;
        let ada = app
            .create(json!({"userData": {"email": "ada@example.com"}, "formData": {"formName": "Contact"},
                "attributionData": {"utm_source": "google", "utm_medium": "cpc", "utm_campaign": "spring"}}))
            .await;
        app.create(
            json!({"userData": {"email": "bob@example.com"}, "formData": {"formName": "Quote"}}),
        )
        .await;
        for query in [
            "form=CONTACT",
            "source=google",
            "medium=cpc",
            "campaign=spring",
            "form=contact&source=google&formName=Contact",
        ] {
            let body = app
                .get(&format!("/api/leads/getLeads?{query}"))
                .await
                .json();
            assert_eq!(body["total"], 1, "{query}: {body}");
            assert_eq!(body["leads"][0]["id"], ada);
        }
        for query in ["formName=contact", "source=Google", "conversionId=lost"] {
            let body = app
                .get(&format!("/api/leads/getLeads?{query}"))
                .await
                .json();
            assert_eq!(body["total"], 0, "{query}: {body}");
        }
    }
}

mod get_lead {
    use super::*;

    #[tokio::test]
    async fn finds_by_each_identifier_in_priority_order() {
        let app = app().await;
        let a = app.create(json!({"userData": {"email": "Ada@Example.com", "phone": "+1 (555) 010-0000"}, "uniqueIdentifier": "crm-a"})).await;
        let b = app.create(json!({"userData": {"email": "bob@example.com", "phone": "+1 555 0200"}, "uniqueIdentifier": "crm-b"})).await;
        for (query, expected) in [
            (format!("leadId={a}"), a),
            ("uniqueIdentifier=crm-b".to_owned(), b),
            ("email=%20ada%40example.COM".to_owned(), a),
            ("phone=%2B15550100000".to_owned(), a),
            (
                format!(
                    "phone=%2B15550200&email=ada%40example.com&uniqueIdentifier=crm-b&leadId={a}"
                ),
                a,
            ),
            ("phone=%2B15550200&email=ada%40example.com".to_owned(), a),
            ("phone=%2B1-555-0200&uniqueIdentifier=crm-b".to_owned(), b),
        ] {
            let reply = app.get(&format!("/api/leads/getLead?{query}")).await;
            assert_eq!(reply.status, StatusCode::OK, "{query}");
            let body = reply.json();
            assert_eq!(body["message"], "Lead retrieved");
            assert_eq!(body["lead"]["id"], expected, "{query}");
        }
        let lead = app
            .get(&format!("/api/leads/getLead?leadId={a}"))
            .await
            .json()["lead"]
            .clone();
        let created_at = lead["createdAt"].as_str().unwrap();
        assert!(
            created_at.ends_with('Z') && created_at.len() == 24,
            "{created_at}"
        );
    }

    #[tokio::test]
    async fn errors() {
        let app = app().await;
        let foreign = app.foreign_lead().await;
        for (query, status, code) in [
            (String::new(), 400, "missing_identifier"),
            ("foo=bar".to_owned(), 400, "missing_identifier"),
            ("leadId=0".to_owned(), 400, "invalid_query"),
            ("leadId=abc&email=z%40x.io".to_owned(), 400, "invalid_query"),
            ("leadId=999999".to_owned(), 404, "lead_not_found"),
            (format!("leadId={}", foreign.lead_id), 404, "lead_not_found"),
            ("email=z%40x.io".to_owned(), 404, "lead_not_found"),
        ] {
            let reply = app.get(&format!("/api/leads/getLead?{query}")).await;
            assert_error(&reply, status, code);
        }
        let reply = app.get("/api/leads/getLead?leadId=999999").await;
        assert_eq!(
            reply.json(),
            json!({"message": "Lead not found", "code": "lead_not_found"})
        );
    }
}

mod get_lead_jobs {
    use super::*;

    #[tokio::test]
    async fn shows_each_job_with_its_deliveries_by_the_get_lead_rules() {
        let app = app().await;
        app.store
            .set_integration(
                app.project.id,
                IntegrationSettings::Ga4(Ga4Settings {
                    measurement_id: "G-1".into(),
                    api_secret: Secret::new("ga4-secret"),
                    validate: false,
                    base_url: None,
                }),
                Utc::now(),
            )
            .await
            .unwrap();
        let label = app
            .label(LabelMapping {
                ga4_event: Some("qualify".into()),
                webhook: true,
                ..LabelMapping::default()
            })
            .await;
        let id = app
            .create(json!({"userData": {"email": "jobs@x.io"}, "uniqueIdentifier": "crm-j"}))
            .await;
        let empty = app
            .get(&format!("/api/leads/getLeadJobs?leadId={id}"))
            .await;
        assert_eq!(empty.status, StatusCode::OK);
        assert_eq!(
            empty.json(),
            json!({"message": "Lead jobs retrieved", "leadId": id, "jobs": []})
        );

        let reply = app
            .post(
                "/api/leads/updateLeadStatus",
                Some(&app.key),
                json!({"leadId": id, "conversionId": label, "price": 1500}),
            )
            .await;
        assert_eq!(reply.status, StatusCode::CREATED);
        for query in [
            "email=JOBS%40x.io",
            "uniqueIdentifier=crm-j",
            "leadId=999999&email=jobs%40x.io",
        ] {
            let reply = app.get(&format!("/api/leads/getLeadJobs?{query}")).await;
            if query.starts_with("leadId") {
                assert_error(&reply, 404, "lead_not_found");
                continue;
            }
            let body = reply.json();
            assert_eq!(body["leadId"], id, "{query}");
            let job = &body["jobs"][0];
            assert_eq!(
                job.as_object().unwrap().keys().collect::<Vec<_>>(),
                [
                    "id",
                    "eventId",
                    "conversionEventId",
                    "conversionId",
                    "status",
                    "price",
                    "ratedBy",
                    "createdAt",
                    "startedAt",
                    "finishedAt",
                    "deliveries"
                ]
            );
            assert_eq!(
                (
                    job["conversionId"].as_str(),
                    job["status"].as_str(),
                    job["price"].as_i64()
                ),
                (Some(label.as_str()), Some("queued"), Some(1500))
            );
            assert_eq!(
                job["ratedBy"],
                app.rated_by().await,
                "who rated, by the key's prefix"
            );
            assert_eq!(
                (job["startedAt"].clone(), job["finishedAt"].clone()),
                (Value::Null, Value::Null)
            );
            // GA4 is connected and mapped but the lead has no cid: skipped, with the reason.
            let ga4 = &job["deliveries"][0];
            assert_eq!(
                (
                    ga4["integration"].as_str(),
                    ga4["action"].as_str(),
                    ga4["status"].as_str()
                ),
                (Some("ga4"), Some("send"), Some("skipped"))
            );
            assert_eq!(
                job["conversionEventId"], job["eventId"],
                "a conversion's first job gives it its id"
            );
            assert!(ga4["detail"].as_str().unwrap().contains("client id"));
            assert_eq!(ga4["attempts"], json!([]));
            assert_eq!(
                job["deliveries"].as_array().unwrap().len(),
                1,
                "the webhook is mapped but not connected"
            );
            assert!(
                !reply.text.contains("ga4-secret"),
                "no credential in the answer"
            );
        }
        let reply = app.send(request("GET", "/api/leads/getLeadJobs")).await;
        assert_error(&reply, 401, "missing_api_key");
        let reply = app.get("/api/leads/getLeadJobs").await;
        assert_error(&reply, 400, "missing_identifier");
    }
}

mod get_lead_activity {
    use super::*;

    /// Replaces each event's `at` (a timestamp of the contract's format, never earlier than
    /// the one before) with `"<at>"`, so that the rest can be compared exactly.
    fn without_times(mut body: Value) -> Value {
        let mut previous = String::new();
        for event in body["events"].as_array_mut().unwrap() {
            let at = event["at"].as_str().unwrap().to_owned();
            assert!(at.ends_with('Z') && at.len() == 24, "{at}");
            assert!(at >= previous, "oldest first: {previous} then {at}");
            event["at"] = json!("<at>");
            previous = at;
        }
        body
    }

    #[tokio::test]
    async fn an_assigned_lead_names_its_assignee_in_reads_and_history() {
        use leadtrack_core::account::{NewUser, Password};
        let app = app().await;
        let id = app.create(json!({"userData": {"email": "a@x.io"}})).await;
        let new = NewUser::new(
            "grace@x.io",
            Some("Grace"),
            &Password::new("long password 1").unwrap(),
        );
        let grace = app
            .store
            .create_user(new.unwrap(), Utc::now())
            .await
            .unwrap();
        app.store
            .add_member(
                app.project.id,
                grace.id,
                leadtrack_core::types::Role::Member,
                Utc::now(),
            )
            .await
            .unwrap();
        let by = Actor::User {
            id: grace.id,
            name: "Grace".into(),
        };
        app.store
            .assign(
                app.project.id,
                &[LeadId(id)],
                Some(grace.id),
                &by,
                Utc::now(),
            )
            .await
            .unwrap();
        let assignee = json!({"id": grace.id.0, "name": "Grace"});
        let one = app
            .get(&format!("/api/leads/getLead?leadId={id}"))
            .await
            .json();
        assert_eq!(one["lead"]["assignee"], assignee, "{one}");
        let listed = app.get("/api/leads/getLeads").await.json();
        assert_eq!(listed["leads"][0]["assignee"], assignee);
        let history = app
            .get(&format!("/api/leads/getLeadActivity?leadId={id}"))
            .await
            .json();
        let events = without_times(history)["events"].clone();
        assert_eq!(
            events[1],
            json!({"at": "<at>", "by": "Grace", "type": "assigned", "assignee": assignee})
        );
    }

    #[tokio::test]
    async fn a_next_step_shows_in_reads_and_history() {
        use chrono::TimeZone;
        use leadtrack_core::next_step::NextStep;
        let app = app().await;
        let planned = app.create(json!({"userData": {"email": "a@x.io"}})).await;
        let other = app.create(json!({"userData": {"email": "b@x.io"}})).await;
        let at = Utc.with_ymd_and_hms(2026, 12, 1, 9, 30, 0).unwrap();
        let step = NextStep::new(at, "Call back about pricing").unwrap();
        let by = Actor::User {
            id: leadtrack_core::types::UserId(1),
            name: "Grace".into(),
        };
        app.store
            .set_next_step(
                app.project.id,
                LeadId(planned),
                Some(&step),
                &by,
                Utc::now(),
            )
            .await
            .unwrap();
        let one = app
            .get(&format!("/api/leads/getLead?leadId={planned}"))
            .await
            .json();
        assert_eq!(
            one["lead"]["nextStepAt"], "2026-12-01T09:30:00.000Z",
            "{one}"
        );
        let listed = app.get("/api/leads/getLeads").await.json();
        let steps: Vec<(i64, Value)> = listed["leads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|lead| (lead["id"].as_i64().unwrap(), lead["nextStepAt"].clone()))
            .collect();
        let expected = [
            (other, Value::Null),
            (planned, json!("2026-12-01T09:30:00.000Z")),
        ];
        assert_eq!(steps, expected);

        app.store
            .set_next_step(app.project.id, LeadId(planned), None, &by, Utc::now())
            .await
            .unwrap();
        let one = app
            .get(&format!("/api/leads/getLead?leadId={planned}"))
            .await
            .json();
        assert_eq!(one["lead"]["nextStepAt"], Value::Null);
        let history = app
            .get(&format!("/api/leads/getLeadActivity?leadId={planned}"))
            .await
            .json();
        let events = without_times(history)["events"].clone();
        assert_eq!(
            events[1],
            json!({"at": "<at>", "by": "Grace", "type": "next_step",
                   "dueAt": "2026-12-01T09:30:00.000Z", "note": "Call back about pricing"})
        );
        assert_eq!(
            events[2],
            json!({"at": "<at>", "by": "Grace", "type": "next_step_done"})
        );
    }

    #[tokio::test]
    async fn shows_creation_merge_and_rating_with_who_rated() {
        let app = app().await;
        let label = app
            .label(LabelMapping {
                webhook: true,
                ..LabelMapping::default()
            })
            .await;
        let body =
            json!({"userData": {"email": "history@x.io"}, "formData": {"uniqueEventId": "ev-1"}});
        let id = app.create(body.clone()).await;
        let merged = app
            .post("/api/leads/createServerSideLead", Some(&app.key), body)
            .await;
        assert_eq!(merged.status, StatusCode::OK, "{}", merged.text);
        let rated = app
            .post(
                "/api/leads/updateLeadStatus",
                Some(&app.key),
                json!({"email": "HISTORY@x.io", "conversionId": label, "price": 1500, "note": "signed"}),
            )
            .await;
        assert_eq!(rated.status, StatusCode::CREATED, "{}", rated.text);
        let job = app
            .store
            .lead_jobs(app.project.id, LeadId(id))
            .await
            .unwrap()[0]
            .job
            .id;

        let reply = app
            .get(&format!("/api/leads/getLeadActivity?leadId={id}"))
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
        assert_eq!(reply.header("content-type"), Some("application/json"));
        let by = app.rated_by().await;
        assert!(by.starts_with("API key lt_") && by.len() == "API key lt_xxxxxxxx".len());
        assert_eq!(
            without_times(reply.json()),
            json!({
                "message": "Lead activity retrieved",
                "leadId": id,
                "events": [
                    {"at": "<at>", "by": null, "type": "created"},
                    {"at": "<at>", "by": null, "type": "merged"},
                    {
                        "at": "<at>",
                        "by": by,
                        "type": "rated",
                        "conversionId": label,
                        "label": "Qualified",
                        "price": 1500,
                        "note": "signed",
                        "jobId": job.0
                    },
                    {"at": "<at>", "by": by, "type": "note", "note": "signed", "jobId": job.0}
                ]
            })
        );
        assert!(
            !reply.text.contains(&app.key),
            "only the key's display prefix is shown"
        );
        // The same identifiers as getLead.
        for query in [
            "email=%20History%40X.io",
            "leadId=999999&email=history%40x.io",
        ] {
            let reply = app
                .get(&format!("/api/leads/getLeadActivity?{query}"))
                .await;
            if query.starts_with("leadId") {
                assert_error(&reply, 404, "lead_not_found");
            } else {
                assert_eq!(reply.json()["events"].as_array().unwrap().len(), 4);
            }
        }
    }

    #[tokio::test]
    async fn errors() {
        let app = app().await;
        let foreign = app.foreign_lead().await;
        for (query, status, code) in [
            (String::new(), 400, "missing_identifier"),
            ("leadId=0".to_owned(), 400, "invalid_query"),
            ("leadId=999999".to_owned(), 404, "lead_not_found"),
            (format!("leadId={}", foreign.lead_id), 404, "lead_not_found"),
            ("email=z%40x.io".to_owned(), 404, "lead_not_found"),
        ] {
            let reply = app
                .get(&format!("/api/leads/getLeadActivity?{query}"))
                .await;
            assert_error(&reply, status, code);
        }
        let reply = app
            .send(request("GET", "/api/leads/getLeadActivity?leadId=1"))
            .await;
        assert_error(&reply, 401, "missing_api_key");
    }
}

mod get_roas {
    use super::*;

    /// A label of the app's project; `done` marks its leads done (customers).
    async fn label(app: &App, name: &str, done: bool) -> String {
        let label = NewLabel {
            name: name.into(),
            mark_as_done: done,
            mapping: LabelMapping::default(),
        };
        let created = app.store.create_label(app.project.id, label, Utc::now());
        created.await.unwrap().id.to_string()
    }

    #[tokio::test]
    async fn the_report_answers_each_campaigns_costs_and_roas_exactly() {
        let app = app().await;
        let (qualified, customer) = (
            label(&app, "Qualified", false).await,
            label(&app, "Customer", true).await,
        );
        let spring =
            json!({"utm_source": "fb", "utm_medium": "paid_social", "utm_campaign": "Spring Sale"});
        let mut leads = Vec::new();
        for n in 0..4 {
            let body =
                json!({"userData": {"email": format!("p{n}@x.io")}, "attributionData": spring});
            leads.push(app.create(body).await);
        }
        app.create(json!({"userData": {"email": "direct@x.io"}}))
            .await;
        for (lead, label, price) in [(leads[0], &customer, 30_000), (leads[1], &qualified, 0)] {
            let rating = json!({"leadId": lead, "conversionId": label, "price": price});
            let reply = app
                .post("/api/leads/updateLeadStatus", Some(&app.key), rating)
                .await;
            assert!(reply.status.is_success(), "{}", reply.text);
        }
        let today = Utc::now().date_naive();
        let spent = SpendRow {
            date: today,
            source: "meta".into(),
            medium: "paid social".into(),
            account: "act_1".into(),
            campaign_id: Some("2385".into()),
            campaign: "Spring Sale".into(),
            currency: "EUR".into(),
            cost_micros: 200_000_000,
            clicks: Some(80),
            impressions: Some(4_000),
        };
        app.store
            .save_spend(app.project.id, &[spent])
            .await
            .unwrap();

        let reply = app.get("/api/reports/roas").await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
        let row = |source: Value, campaign: Value, id: Value, spend: Value, clicks: Value| {
            json!({"source": source, "campaign": campaign, "campaignId": id, "label": null,
                   "spend": spend, "currency": "EUR", "clicks": clicks})
        };
        let mut spring = row(
            json!("meta"),
            json!("Spring Sale"),
            json!("2385"),
            json!(200.0),
            json!(80),
        );
        let figures = json!({"leads": 4, "qualified": 2, "customers": 1, "value": 300.0,
            "costPerLead": 50.0, "costPerQualified": 100.0, "costPerCustomer": 200.0, "roas": 1.5});
        spring
            .as_object_mut()
            .unwrap()
            .extend(figures.as_object().unwrap().clone());
        let mut direct = row(
            json!("(not set)"),
            json!("(not set)"),
            json!(null),
            json!(null),
            json!(null),
        );
        let none = json!({"leads": 1, "qualified": 0, "customers": 0, "value": 0.0,
            "costPerLead": null, "costPerQualified": null, "costPerCustomer": null, "roas": null});
        direct
            .as_object_mut()
            .unwrap()
            .extend(none.as_object().unwrap().clone());
        let mut totals = row(
            json!(null),
            json!(null),
            json!(null),
            json!(200.0),
            json!(80),
        );
        let all = json!({"leads": 5, "qualified": 2, "customers": 1, "value": 300.0,
            "costPerLead": 40.0, "costPerQualified": 100.0, "costPerCustomer": 200.0, "roas": 1.5});
        totals
            .as_object_mut()
            .unwrap()
            .extend(all.as_object().unwrap().clone());
        let from = (today - chrono::Days::new(29)).to_string();
        assert_eq!(
            reply.json(),
            json!({"from": from, "to": today.to_string(), "groupBy": "campaign", "touch": "first",
                   "currency": "EUR", "rows": [spring, direct], "totals": totals,
                   "rates": {}, "unconverted": {}})
        );

        // Spend belongs to no label: by label, only the totals have it.
        let reply = app.get("/api/reports/roas?groupBy=label").await;
        let body = reply.json();
        let labels: Vec<(Value, Value, Value)> = body["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["label"].clone(), r["leads"].clone(), r["spend"].clone()))
            .collect();
        assert_eq!(
            labels,
            [
                (json!(null), json!(3), json!(null)),
                (json!("Customer"), json!(1), json!(null)),
                (json!("Qualified"), json!(1), json!(null)),
            ]
        );
        assert_eq!(body["totals"]["roas"], 1.5);
    }

    #[tokio::test]
    async fn a_bad_date_or_grouping_is_400_a_long_range_is_cut_and_a_report_needs_a_key() {
        let app = app().await;
        let bad = app.get("/api/reports/roas?from=2026-13-01").await;
        assert_eq!(
            assert_error(&bad, 400, "invalid_query")["message"],
            "Invalid query parameter: from must be a date, YYYY-MM-DD"
        );
        // A range over 366 days is cut to the days that end at `to`; ends in either order.
        let long = app
            .get("/api/reports/roas?from=2026-03-01&to=2020-01-01")
            .await;
        let body = long.json();
        assert_eq!(
            (body["from"].clone(), body["to"].clone()),
            (json!("2025-03-01"), json!("2026-03-01"))
        );
        let bad = app.get("/api/reports/roas?groupBy=medium").await;
        assert_error(&bad, 400, "invalid_query");
        let keyless = app.send(request("GET", "/api/reports/roas")).await;
        assert_error(&keyless, 401, "missing_api_key");
    }
}

mod hardening {
    use super::*;

    #[tokio::test]
    async fn a_nul_byte_in_search_is_only_a_character_to_look_for() {
        let app = app().await;
        app.create(json!({"userData": {"email": "ada@x.io", "firstName": "Ada"}}))
            .await;
        for search in ["a%00b", "ad%00", "%00%00%00", "ada%00"] {
            let reply = app
                .get(&format!("/api/leads/getLeads?search={search}"))
                .await;
            assert_eq!(reply.status, StatusCode::OK, "{search}: {}", reply.text);
            assert_eq!(reply.json()["total"], 0, "{search}");
        }
        let reply = app.get("/api/leads/getLeads?search=ada").await;
        assert_eq!(reply.json()["total"], 1);
    }

    #[tokio::test]
    async fn a_lead_id_with_spaces_is_not_a_lead_id() {
        let app = app().await;
        let id = app.create(json!({"userData": {"email": "ada@x.io"}})).await;
        for lead_id in [format!(" {id}"), format!("{id} ")] {
            let reply = app
                .post(
                    "/api/leads/updateLeadStatus",
                    Some(&app.key),
                    json!({"leadId": lead_id, "conversionId": "open"}),
                )
                .await;
            let body = assert_error(&reply, 400, "invalid_field");
            assert_eq!(body["errors"][0]["field"], "leadId", "{lead_id:?}");
        }
        for query in [format!("leadId=%20{id}"), format!("leadId=+{id}")] {
            let reply = app.get(&format!("/api/leads/getLead?{query}")).await;
            let body = assert_error(&reply, 400, "invalid_query");
            assert_eq!(body["errors"][0]["field"], "leadId", "{query}");
        }
        let reply = app.get(&format!("/api/leads/getLead?leadId={id}")).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    }
}

mod erase_person {
    use super::*;

    #[tokio::test]
    async fn a_person_is_erased_once_with_each_of_their_leads_and_nothing_else() {
        let app = app().await;
        let ada = json!({"userData": {"email": "ada@example.com", "firstName": "Ada"},
            "attributionData": {"utm_source": "google", "utm_campaign": "Brand", "gclid": "Cj0"}});
        let first = app.create(ada.clone()).await;
        let second = app
            .create(json!({"userData": {"email": " ADA@example.com", "phone": "0151 1"}}))
            .await;
        let bob = app
            .create(json!({"userData": {"email": "bob@example.com"}}))
            .await;
        let foreign = app.foreign_lead().await;
        let erase = |body: Value| app.post("/api/privacy/erase", Some(&app.key), body);

        let reply = erase(json!({"email": "ada@example.com"})).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
        assert_eq!(
            reply.json(),
            json!({"erased": 2, "leadIds": [first, second], "sentTo": []})
        );
        let again = erase(json!({"leadId": first})).await;
        assert_eq!(
            again.json(),
            json!({"erased": 0, "leadIds": [], "sentTo": []})
        );
        // Another project's lead of the same email is not this key's to erase.
        let other = erase(json!({"email": "z@x.io"})).await;
        assert_eq!(other.json()["erased"], 0);
        let other = app.store.project_by_public_id("other").await.unwrap();
        let foreign = LeadIdentifier::LeadId(foreign.lead_id);
        let kept = app.store.find_lead(other.id, &foreign).await.unwrap();
        assert_eq!(kept.data.user("email"), Some("z@x.io"));

        let gone = app.get("/api/leads/getLead?email=ada@example.com").await;
        assert_eq!(gone.status, StatusCode::NOT_FOUND, "{}", gone.text);
        let record = app.get(&format!("/api/leads/getLead?leadId={first}")).await;
        let lead = &record.json()["lead"];
        assert_eq!(
            (&lead["userData"], &lead["email"]),
            (&json!(null), &json!(null))
        );
        assert_eq!(
            lead["attributionData"],
            json!({"utm_source": "google", "utm_campaign": "Brand"})
        );
        let history = app
            .get(&format!("/api/leads/getLeadActivity?leadId={first}"))
            .await;
        let events = history.json()["events"].clone();
        assert_eq!(events.as_array().map(Vec::len), Some(1));
        assert_eq!(
            (events[0]["type"].as_str(), events[0]["by"].as_str()),
            (Some("erased"), Some(app.rated_by().await.as_str()))
        );
        let kept = app.get(&format!("/api/leads/getLead?leadId={bob}")).await;
        assert_eq!(kept.json()["lead"]["userData"]["email"], "bob@example.com");
    }

    #[tokio::test]
    async fn a_request_without_a_person_or_a_key_is_refused_and_erases_nothing() {
        let app = app().await;
        let lead = app
            .create(json!({"userData": {"email": "ada@example.com"}}))
            .await;
        for (body, code) in [
            (json!({}), "missing_identifier"),
            (json!({"email": "  "}), "missing_identifier"),
            (json!({"leadId": "x"}), "invalid_field"),
        ] {
            let reply = app
                .post("/api/privacy/erase", Some(&app.key), body.clone())
                .await;
            assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{body}");
            assert_eq!(reply.json()["code"], code, "{body}");
        }
        let keyless = app
            .post("/api/privacy/erase", None, json!({"leadId": lead}))
            .await;
        assert_eq!(keyless.status, StatusCode::UNAUTHORIZED);
        let read = app.get(&format!("/api/leads/getLead?leadId={lead}")).await;
        assert_eq!(read.json()["lead"]["userData"]["email"], "ada@example.com");
    }
}

mod export_person {
    use super::*;

    #[tokio::test]
    async fn a_persons_leads_come_with_their_history_and_conversions_until_erased() {
        let app = app().await;
        let label = app.label(LabelMapping::default()).await;
        let first = app
            .create(json!({"userData": {"email": "ada@example.com", "firstName": "Ada"}}))
            .await;
        let second = app
            .create(
                json!({"userData": {"email": "ADA@example.com"}, "formData": {"message": "hi"}}),
            )
            .await;
        app.create(json!({"userData": {"email": "bob@example.com"}}))
            .await;
        let rating = json!({"leadId": second, "conversionId": label, "price": 5000});
        let rated = app
            .post("/api/leads/updateLeadStatus", Some(&app.key), rating)
            .await;
        assert_eq!(rated.status, StatusCode::CREATED, "{}", rated.text);

        let reply = app.get("/api/privacy/export?email=ada%40example.com").await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
        let export = reply.json();
        assert_eq!(export["projectId"], "prj_test");
        assert_eq!(export["person"], json!({"email": "ada@example.com"}));
        let leads = export["leads"].as_array().unwrap();
        let ids: Vec<_> = leads.iter().map(|l| l["lead"]["id"].as_i64()).collect();
        assert_eq!(ids, [Some(first), Some(second)]);
        assert_eq!(leads[0]["lead"]["firstName"], "Ada");
        assert_eq!(leads[1]["lead"]["formData"], json!({"message": "hi"}));
        let types: Vec<_> = leads[1]["activity"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["type"].as_str().unwrap_or_default().to_owned())
            .collect();
        assert_eq!(types, ["created", "rated"]);
        assert_eq!(leads[1]["conversions"][0]["price"], 5000);
        assert_eq!(leads[1]["comments"], json!([]));
        assert_eq!(leads[0]["conversions"], json!([]));

        app.post(
            "/api/privacy/erase",
            Some(&app.key),
            json!({"email": "ada@example.com"}),
        )
        .await;
        let after = app.get("/api/privacy/export?email=ada%40example.com").await;
        assert_eq!(after.json()["leads"], json!([]), "nothing is kept");
        let missing = app.get("/api/privacy/export").await;
        assert_eq!(missing.status, StatusCode::BAD_REQUEST);
        assert_eq!(missing.json()["code"], "missing_identifier");
    }
}

mod hooks {
    use super::*;
    use leadtrack_core::target::Targets;
    use leadtrack_core::webhook::{MAX_WEBHOOKS, WebhookEvents};

    fn subscription(url: &str, event: &str) -> Value {
        json!({"targetUrl": url, "event": event})
    }

    /// A second project of the app's store, with its own key.
    async fn other_project(app: &App) -> String {
        let new = NewProject {
            public_id: Some("prj_other".into()),
            name: "Other".into(),
            currency: None,
        };
        let project = app.store.create_project(new, Utc::now()).await.unwrap();
        let issued = app.store.issue_api_key(project.id, Utc::now()).await;
        issued.unwrap().key
    }

    #[tokio::test]
    async fn a_hook_is_subscribed_listed_and_unsubscribed() {
        let app = app().await;
        let url = "https://hooks.zapier.com/hooks/standard/1/abc/";
        let created = app
            .post(
                "/api/hooks",
                Some(&app.key),
                subscription(url, "lead.created"),
            )
            .await;
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.text);
        let hook = created.json();
        assert_eq!(
            (&hook["event"], &hook["targetUrl"]),
            (&json!("lead.created"), &json!(url))
        );
        assert!(hook["secret"].as_str().unwrap().starts_with("whsec_"));
        let id = hook["id"].as_str().unwrap().to_owned();
        // A webhook added in the dashboard is no REST hook: the list leaves it out.
        let plain = NewWebhook::new(
            "https://crm.example/hook",
            &Targets::default(),
            None,
            WebhookEvents::all(),
        )
        .unwrap();
        let plain = app
            .store
            .create_webhook(app.project.id, plain, Utc::now())
            .await
            .unwrap();

        let listed = app.get("/api/hooks").await;
        assert_eq!(listed.status, StatusCode::OK);
        let expected = json!({"hooks": [{
            "id": id, "event": "lead.created", "targetUrl": url,
            "createdAt": hook["createdAt"],
        }]});
        assert_eq!(listed.json(), expected, "no secret in the list");

        let plain_path = format!("/api/hooks/{}", plain.id);
        let refused = app.delete(&plain_path, &app.key).await;
        assert_error(&refused, 404, "hook_not_found");
        let deleted = app.delete(&format!("/api/hooks/{id}"), &app.key).await;
        assert_eq!(
            (deleted.status, deleted.text.as_str()),
            (StatusCode::NO_CONTENT, "")
        );
        assert_eq!(app.get("/api/hooks").await.json(), json!({"hooks": []}));
        let again = app.delete(&format!("/api/hooks/{id}"), &app.key).await;
        assert_error(&again, 404, "hook_not_found");
        assert_error(
            &app.delete("/api/hooks/zap-1", &app.key).await,
            404,
            "hook_not_found",
        );
        let statuses = app.store.webhooks(app.project.id).await.unwrap();
        assert_eq!(statuses.len(), 1, "the dashboard's webhook stays");
        let wrong = app.delete("/api/hooks/sample", &app.key).await;
        assert_error(&wrong, 405, "method_not_allowed");
        assert_eq!(wrong.header("allow"), Some("GET, OPTIONS"));
    }

    #[tokio::test]
    async fn another_projects_key_can_neither_list_nor_delete_a_hook() {
        let app = app().await;
        let other = other_project(&app).await;
        let created = app
            .post(
                "/api/hooks",
                Some(&app.key),
                subscription("https://a.example/h", "lead.lost"),
            )
            .await;
        let id = created.json()["id"].as_str().unwrap().to_owned();
        let listed = app
            .send(request("GET", "/api/hooks").header("x-api-key", &other))
            .await;
        assert_eq!(listed.json(), json!({"hooks": []}));
        let refused = app.delete(&format!("/api/hooks/{id}"), &other).await;
        assert_error(&refused, 404, "hook_not_found");
        assert_eq!(
            app.get("/api/hooks").await.json()["hooks"][0]["id"],
            id.as_str()
        );
        let no_key = app.send(request("GET", "/api/hooks")).await;
        assert_error(&no_key, 401, "missing_api_key");
    }

    #[tokio::test]
    async fn bad_subscriptions_are_refused_and_change_nothing() {
        let app = app().await;
        let cases = [
            (
                json!({"event": "lead.created"}),
                "missing_field",
                "Missing required field: targetUrl",
            ),
            (
                subscription("https://a.example/h", "lead.deleted"),
                "invalid_field",
                "Invalid field: event must be one of lead.created, lead.updated, lead.converted, lead.lost, lead.erased",
            ),
            (
                subscription("https://10.1.2.3/h", "lead.created"),
                "invalid_field",
                "Invalid field: targetUrl cannot be called: the address is private (10.1.2.3); the server's operator can allow it",
            ),
        ];
        for (body, code, message) in cases {
            let reply = app.post("/api/hooks", Some(&app.key), body).await;
            assert_eq!(assert_error(&reply, 400, code)["message"], message);
        }
        assert_eq!(app.get("/api/hooks").await.json(), json!({"hooks": []}));

        for n in 0..MAX_WEBHOOKS {
            let url = format!("https://a.example/{n}");
            let reply = app
                .post(
                    "/api/hooks",
                    Some(&app.key),
                    subscription(&url, "lead.created"),
                )
                .await;
            assert_eq!(reply.status, StatusCode::CREATED);
        }
        let over = app
            .post(
                "/api/hooks",
                Some(&app.key),
                subscription("https://a.example/x", "lead.created"),
            )
            .await;
        let body = assert_error(&over, 409, "too_many_hooks");
        assert_eq!(body["message"], "A project has at most 20 REST hooks");
    }

    #[tokio::test]
    async fn the_sample_is_a_list_of_one_payload_of_the_event() {
        let app = app().await;
        let reply = app.get("/api/hooks/sample?event=lead.converted").await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
        let samples = reply.json();
        let sample = &samples.as_array().unwrap()[..];
        assert_eq!(sample.len(), 1);
        assert_eq!(sample[0]["type"], "lead.converted");
        assert_eq!(sample[0]["projectId"], "prj_test");
        assert_eq!(
            (&sample[0]["currency"], &sample[0]["price"]),
            (&json!("EUR"), &json!(120_000))
        );
        assert_eq!(sample[0]["lead"]["email"], "ada@example.com");
        let missing = app.get("/api/hooks/sample").await;
        assert_error(&missing, 400, "invalid_query");
        let unknown = app.get("/api/hooks/sample?event=lead.deleted").await;
        assert_error(&unknown, 400, "invalid_query");
    }
}
