//! Protection of the lead routes through `warp::test`: rate limits, a project's allowed
//! browser origins, and browser creates that cannot overwrite server-side leads.

use std::net::SocketAddr;

use chrono::Utc;
use leadtrack_core::project::{Project, ProjectSettings};
use leadtrack_core::testkit::project;
use leadtrack_core::types::{LeadId, LeadIdentifier};
use leadtrack_core::{Admin, LeadStore};
use leadtrack_sqlite::SqliteStore;
use leadtrack_warp::{Config, RateLimit, RateLimits, routes};
use serde_json::{Value, json};
use warp::Filter;
use warp::filters::BoxedFilter;
use warp::http::StatusCode;
use warp::reply::Response;

struct App {
    store: SqliteStore,
    project: Project,
    key: String,
    filter: BoxedFilter<(Response,)>,
}

/// An app with `limits` and one project, `prj_a`, whose key is `key`.
async fn app(limits: RateLimits) -> App {
    let store = SqliteStore::open_temporary().await.unwrap();
    let project = project(&store, "prj_a").await;
    let key = store
        .issue_api_key(project.id, Utc::now())
        .await
        .unwrap()
        .key;
    let config = Config {
        rate_limits: limits,
        ..Config::default()
    };
    let filter = routes(store.clone(), config).boxed();
    App {
        store,
        project,
        key,
        filter,
    }
}

/// Every bucket off but the one `set` sets.
fn only(set: impl FnOnce(&mut RateLimits)) -> RateLimits {
    let mut limits = RateLimits {
        per_ip: RateLimit::OFF,
        per_project: RateLimit::OFF,
        per_key: RateLimit::OFF,
    };
    set(&mut limits);
    limits
}

struct Reply {
    status: StatusCode,
    retry_after: Option<String>,
    allow_origin: Option<String>,
    body: Value,
}

fn from(ip: [u8; 4]) -> warp::test::RequestBuilder {
    warp::test::request().remote_addr(SocketAddr::from((ip, 40000)))
}

const CLIENT: [u8; 4] = [198, 51, 100, 7];

impl App {
    async fn send(&self, request: warp::test::RequestBuilder) -> Reply {
        let response = request.reply(&self.filter).await;
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .map(|v| v.to_str().unwrap().to_owned())
        };
        Reply {
            status: response.status(),
            retry_after: header("retry-after"),
            allow_origin: header("access-control-allow-origin"),
            body: serde_json::from_slice(response.body()).unwrap(),
        }
    }

    /// createLead for `project`, from `ip`, with an `Origin` header when given.
    async fn browser(&self, ip: [u8; 4], origin: Option<&str>, body: Value) -> Reply {
        let mut request = from(ip)
            .method("POST")
            .path("/api/leads/createLead")
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        self.send(request).await
    }

    async fn browser_lead(&self, ip: [u8; 4], project: &str) -> Reply {
        let body = json!({"projectId": project, "userData": {"email": "a@x.io"}});
        self.browser(ip, None, body).await
    }

    async fn server(&self, body: Value) -> Reply {
        self.send(
            from(CLIENT)
                .method("POST")
                .path("/api/leads/createServerSideLead")
                .header("x-api-key", &self.key)
                .body(body.to_string()),
        )
        .await
    }

    async fn get_leads(&self, key: &str) -> Reply {
        self.send(
            from(CLIENT)
                .method("GET")
                .path("/api/leads/getLeads")
                .header("x-api-key", key),
        )
        .await
    }
}

fn assert_limited(reply: &Reply) {
    assert_eq!(
        reply.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        reply.body
    );
    assert_eq!(reply.body["code"], "rate_limited");
    let seconds: u64 = reply
        .retry_after
        .as_deref()
        .expect("Retry-After")
        .parse()
        .expect("whole seconds");
    assert!(seconds >= 1, "{seconds}");
    assert_eq!(reply.allow_origin.as_deref(), Some("*"), "CORS on a 429");
}

mod rate_limits {
    use super::*;

    #[tokio::test]
    async fn create_lead_past_the_client_bucket_is_429_with_retry_after_and_cors() {
        let app = app(only(|l| l.per_ip = RateLimit::new(1, 2))).await;
        for _ in 0..2 {
            let reply = app.browser_lead(CLIENT, "prj_a").await;
            assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
        }
        let reply = app.browser_lead(CLIENT, "prj_a").await;
        assert_limited(&reply);
        // A minute refills one token: the client is told to wait most of it.
        let seconds: u64 = reply.retry_after.unwrap().parse().unwrap();
        assert!((2..=60).contains(&seconds), "{seconds}");
    }

    #[tokio::test]
    async fn client_and_project_buckets_are_independent() {
        let app = app(only(|l| l.per_ip = RateLimit::new(1, 1))).await;
        project(&app.store, "prj_b").await;
        assert_eq!(
            app.browser_lead(CLIENT, "prj_a").await.status,
            StatusCode::CREATED
        );
        // The client's bucket is empty for every project; other clients are not affected.
        assert_limited(&app.browser_lead(CLIENT, "prj_b").await);
        assert_eq!(
            app.browser_lead([203, 0, 113, 9], "prj_a").await.status,
            StatusCode::CREATED
        );

        let app = app_with_project_limit().await;
        project(&app.store, "prj_b").await;
        assert_eq!(
            app.browser_lead(CLIENT, "prj_a").await.status,
            StatusCode::CREATED
        );
        // The project's bucket is empty whichever client calls; other projects are not
        // affected, and neither are the keyed routes.
        assert_limited(&app.browser_lead([203, 0, 113, 9], "prj_a").await);
        assert_eq!(
            app.browser_lead(CLIENT, "prj_b").await.status,
            StatusCode::CREATED
        );
        let server = app.server(json!({"userData": {"email": "s@x.io"}})).await;
        assert_eq!(server.status, StatusCode::CREATED, "{}", server.body);
    }

    async fn app_with_project_limit() -> App {
        app(only(|l| l.per_project = RateLimit::new(1, 1))).await
    }

    #[tokio::test]
    async fn keyed_routes_are_limited_per_key() {
        let app = app(only(|l| l.per_key = RateLimit::new(1, 2))).await;
        let other = app
            .store
            .issue_api_key(app.project.id, Utc::now())
            .await
            .unwrap()
            .key;
        let server = app.server(json!({"userData": {"email": "s@x.io"}})).await;
        assert_eq!(server.status, StatusCode::CREATED, "{}", server.body);
        assert_eq!(app.get_leads(&app.key).await.status, StatusCode::OK);
        // One bucket for all routes of a key.
        assert_limited(&app.get_leads(&app.key).await);
        assert_limited(&app.server(json!({"userData": {"email": "t@x.io"}})).await);
        // Another key has its own; unknown keys are still 401, never 429.
        assert_eq!(app.get_leads(&other).await.status, StatusCode::OK);
        let unknown = app.get_leads("lt_unknown").await;
        assert_eq!(unknown.status, StatusCode::UNAUTHORIZED);
        // The browser route does not spend the key's tokens.
        assert_eq!(
            app.browser_lead(CLIENT, "prj_a").await.status,
            StatusCode::CREATED
        );
    }
}

mod allowed_origins {
    use super::*;

    async fn app_allowing(origins: &[&str]) -> App {
        let app = app(RateLimits::default()).await;
        app.store
            .update_project(
                app.project.id,
                ProjectSettings {
                    allowed_origins: Some(origins.iter().map(|o| (*o).to_owned()).collect()),
                    ..ProjectSettings::default()
                },
            )
            .await
            .unwrap();
        app
    }

    fn lead() -> Value {
        json!({"projectId": "prj_a", "userData": {"email": "a@x.io"}})
    }

    #[tokio::test]
    async fn an_origin_outside_the_list_is_403() {
        let app = app_allowing(&["https://shop.example", "https://www.shop.example"]).await;
        let reply = app
            .browser(CLIENT, Some("https://evil.example"), lead())
            .await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN);
        assert_eq!(reply.body["code"], "origin_not_allowed");
        assert_eq!(reply.allow_origin.as_deref(), Some("*"));
        let leads = app
            .store
            .list_leads(app.project.id, &Default::default())
            .await
            .unwrap();
        assert_eq!(leads.total, 0);
    }

    #[tokio::test]
    async fn listed_origins_and_requests_without_origin_are_accepted() {
        let app = app_allowing(&["https://shop.example"]).await;
        let listed = app
            .browser(CLIENT, Some("https://Shop.Example"), lead())
            .await;
        assert_eq!(listed.status, StatusCode::CREATED, "{}", listed.body);
        let no_origin = app.browser(CLIENT, None, lead()).await;
        assert_eq!(no_origin.status, StatusCode::CREATED, "{}", no_origin.body);
    }

    #[tokio::test]
    async fn an_empty_list_accepts_any_origin() {
        let app = app_allowing(&[]).await;
        let reply = app
            .browser(CLIENT, Some("https://anywhere.example"), lead())
            .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    }
}

mod overwrite {
    use super::*;

    #[tokio::test]
    async fn a_browser_create_cannot_merge_into_a_server_lead() {
        let app = app(RateLimits::default()).await;
        let server = app
            .server(json!({
                "userData": {"email": "owner@example.com"},
                "formData": {"uniqueEventId": "evt-1"},
                "uniqueIdentifier": "crm-secret-1",
            }))
            .await;
        assert_eq!(server.status, StatusCode::CREATED, "{}", server.body);
        let server_id = server.body["leadId"].as_i64().unwrap();

        let body = json!({
            "projectId": "prj_a",
            "userData": {"email": "attacker@evil.example"},
            "formData": {"uniqueEventId": "evt-1"},
        });
        let browser = app.browser(CLIENT, None, body.clone()).await;
        assert_eq!(browser.status, StatusCode::CREATED, "{}", browser.body);
        let browser_id = browser.body["leadId"].as_i64().unwrap();
        assert_ne!(browser_id, server_id);
        assert_eq!(browser.body["uniqueIdentifier"], Value::Null);

        let kept = app
            .store
            .find_lead(app.project.id, &LeadIdentifier::LeadId(LeadId(server_id)))
            .await
            .unwrap();
        assert_eq!(kept.data.user("email"), Some("owner@example.com"));
        assert_eq!(kept.data.unique_identifier.as_deref(), Some("crm-secret-1"));

        // Browser submissions still deduplicate among themselves.
        let again = app.browser(CLIENT, None, body).await;
        assert_eq!(again.status, StatusCode::OK, "{}", again.body);
        assert_eq!(again.body["leadId"], browser_id);
    }

    #[tokio::test]
    async fn the_browser_route_answers_only_the_identifier_it_sent() {
        let app = app(RateLimits::default()).await;
        let first = json!({
            "projectId": "prj_a",
            "userData": {"email": "a@x.io"},
            "formData": {"uniqueEventId": "evt-2"},
            "uniqueIdentifier": "visitor-1",
        });
        let created = app.browser(CLIENT, None, first).await;
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
        assert_eq!(created.body["uniqueIdentifier"], "visitor-1");

        let without = json!({
            "projectId": "prj_a",
            "userData": {"phone": "123"},
            "formData": {"uniqueEventId": "evt-2"},
        });
        let merged = app.browser(CLIENT, None, without).await;
        assert_eq!(merged.status, StatusCode::OK, "{}", merged.body);
        assert_eq!(merged.body["leadId"], created.body["leadId"]);
        assert_eq!(merged.body["uniqueIdentifier"], Value::Null);

        // The keyed route still answers the lead's value.
        let server = app
            .server(json!({"userData": {"firstName": "A"}, "formData": {"uniqueEventId": "evt-2"}}))
            .await;
        assert_eq!(server.status, StatusCode::OK, "{}", server.body);
        assert_eq!(server.body["uniqueIdentifier"], "visitor-1");
    }
}
