//! Protection of the lead routes through `warp::test`: rates and holds, a project's allowed
//! browser origins, and browser creates that cannot overwrite server-side leads.

use std::net::SocketAddr;

use chrono::Utc;
use leadtrack_core::project::{Project, ProjectSettings};
use leadtrack_core::request::LeadQuery;
use leadtrack_core::spam::SpamRulesInput;
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

    /// The status and spam reason of the lead a reply created.
    async fn held(app: &App, reply: &Reply) -> (String, Option<String>) {
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
        let id = LeadId(reply.body["leadId"].as_i64().unwrap());
        let lead = app
            .store
            .find_lead(app.project.id, &LeadIdentifier::LeadId(id))
            .await
            .unwrap();
        let reason = lead.spam_reason.map(|reason| reason.to_string());
        (lead.status.to_string(), reason)
    }

    fn open() -> (String, Option<String>) {
        ("open".to_owned(), None)
    }

    fn burst() -> (String, Option<String>) {
        ("spam".to_owned(), Some("burst from one address".to_owned()))
    }

    #[tokio::test]
    async fn past_its_rate_a_client_s_leads_are_stored_and_held_not_refused() {
        let app = app(only(|l| l.per_ip = RateLimit::new(1, 2))).await;
        project(&app.store, "prj_b").await;
        for _ in 0..2 {
            assert_eq!(
                held(&app, &app.browser_lead(CLIENT, "prj_a").await).await,
                open()
            );
        }
        for project in ["prj_a", "prj_b"] {
            let reply = app.browser_lead(CLIENT, project).await;
            assert_eq!(reply.retry_after, None);
            if project == "prj_a" {
                assert_eq!(held(&app, &reply).await, burst());
            }
        }
        // Another client of the project is not held for this one's burst.
        let other = app.browser_lead([203, 0, 113, 9], "prj_a").await;
        assert_eq!(held(&app, &other).await, open());
    }

    #[tokio::test]
    async fn past_the_held_budget_what_would_be_held_is_refused_and_nothing_else() {
        let app = app(only(|l| l.per_ip = RateLimit::new(1, 1))).await;
        let rules = SpamRulesInput {
            held_budget: Some(1),
            ..SpamRulesInput::default()
        };
        set_rules(&app, rules).await;
        assert_eq!(
            held(&app, &app.browser_lead(CLIENT, "prj_a").await).await,
            open()
        );
        assert_eq!(
            held(&app, &app.browser_lead(CLIENT, "prj_a").await).await,
            burst()
        );
        assert_limited(&app.browser_lead(CLIENT, "prj_a").await);
        let others = app.browser_lead([203, 0, 113, 9], "prj_a").await;
        assert_eq!(held(&app, &others).await, open());
        let server = app.server(json!({"userData": {"email": "s@x.io"}})).await;
        assert_eq!(server.status, StatusCode::CREATED, "{}", server.body);
        let every = LeadQuery::default().any_status();
        let page = app.store.list_leads(app.project.id, &every).await.unwrap();
        assert_eq!(page.total, 4, "the refused lead was not stored");
    }

    #[tokio::test]
    async fn a_trusted_address_is_never_held_for_its_rate() {
        let app = app(only(|l| l.per_ip = RateLimit::new(1, 1))).await;
        let rules = SpamRulesInput {
            trusted_addresses: Some("198.51.100.0/24".to_owned()),
            ..SpamRulesInput::default()
        };
        set_rules(&app, rules).await;
        for _ in 0..5 {
            assert_eq!(
                held(&app, &app.browser_lead(CLIENT, "prj_a").await).await,
                open()
            );
        }
        let untrusted = [203, 0, 113, 9];
        assert_eq!(
            held(&app, &app.browser_lead(untrusted, "prj_a").await).await,
            open()
        );
        assert_eq!(
            held(&app, &app.browser_lead(untrusted, "prj_a").await).await,
            burst()
        );
    }

    async fn set_rules(app: &App, input: SpamRulesInput) {
        let settings = ProjectSettings {
            spam_rules: input.apply(&app.project.spam_rules).unwrap(),
            ..ProjectSettings::default()
        };
        app.store
            .update_project(app.project.id, settings)
            .await
            .unwrap();
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

mod spam {
    use super::*;

    async fn leads(app: &App, query: &str) -> Value {
        let reply = app
            .send(
                from(CLIENT)
                    .method("GET")
                    .path(&format!("/api/leads/getLeads{query}"))
                    .header("x-api-key", &app.key),
            )
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        reply.body
    }

    /// `(id, status, spamReason)` of each lead a getLeads body lists.
    fn listed(body: &Value) -> Vec<(i64, String, Value)> {
        let leads = body["leads"].as_array().unwrap();
        let row = |lead: &Value| {
            let status = lead["status"].as_str().unwrap().to_owned();
            (
                lead["id"].as_i64().unwrap(),
                status,
                lead["spamReason"].clone(),
            )
        };
        leads.iter().map(row).collect()
    }

    #[tokio::test]
    async fn bots_are_held_with_their_reason_and_listed_only_when_asked_for() {
        let app = app(RateLimits::default()).await;
        let created = |body: Value| {
            let app = &app;
            async move {
                let reply = app.browser(CLIENT, None, body).await;
                assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
                reply.body["leadId"].as_i64().unwrap()
            }
        };
        let person = created(
            json!({"projectId": "prj_a", "userData": {"email": "ada@x.io"},
            "botCheck": {"honeypot": "", "elapsedMs": 8000}}),
        )
        .await;
        let honeypot = created(
            json!({"projectId": "prj_a", "userData": {"email": "b@x.io"},
            "botCheck": {"honeypot": "http://spam.example", "elapsedMs": 8000}}),
        )
        .await;
        let hasty = created(
            json!({"projectId": "prj_a", "userData": {"email": "c@x.io"},
            "botCheck": {"elapsedMs": 300}}),
        )
        .await;
        let disposable =
            created(json!({"projectId": "prj_a", "userData": {"email": "d@mailinator.com"}})).await;
        // A malformed botCheck is ignored, as any unknown property is.
        let odd = created(
            json!({"projectId": "prj_a", "userData": {"email": "e@x.io"},
            "botCheck": "yes"}),
        )
        .await;
        let trusted = app
            .server(json!({"userData": {"email": "f@mailinator.com"}}))
            .await;
        assert_eq!(trusted.status, StatusCode::CREATED, "{}", trusted.body);
        let server = trusted.body["leadId"].as_i64().unwrap();

        let open = |id| (id, "open".to_owned(), Value::Null);
        let default = leads(&app, "").await;
        assert_eq!(listed(&default), [open(server), open(odd), open(person)]);
        assert_eq!(default["total"], 3);
        let spam = |id, reason: &str| (id, "spam".to_owned(), json!(reason));
        assert_eq!(
            listed(&leads(&app, "?status=spam").await),
            [
                spam(disposable, "disposable email domain"),
                spam(hasty, "sent within 2 seconds of the form showing"),
                spam(honeypot, "honeypot field filled"),
            ]
        );
        assert_eq!(listed(&leads(&app, "?status=open").await).len(), 3);
    }
}
