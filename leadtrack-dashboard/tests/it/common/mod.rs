//! The dashboard over a fresh store with two projects and two users, served by the whole
//! service (`spawn_app`) on a port of its own and driven over real sockets as a browser
//! would: forms, cookies, `Origin`. The store is a temporary SQLite file, or a PostgreSQL
//! database with `LEADTRACK_TEST_BACKEND=postgres`.

#![allow(dead_code)]

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use leadtrack_core::Store;
use leadtrack_core::account::{Actor, NewUser, Password, User};
use leadtrack_core::job::{Attempt, Batch};
use leadtrack_core::label::{ConversionLabel, LabelMapping, NewLabel};
use leadtrack_core::project::{NewProject, Project};
use leadtrack_core::request::{CreateRoute, NewLead, StatusUpdate};
use leadtrack_core::types::{
    AttemptOutcome, ConversionId, DeliveryState, LeadId, LeadIdentifier, Role,
};
use leadtrack_dashboard::Config;
use leadtrack_server::testkit::{Parts, TestApp, spawn_app};
use reqwest::redirect::Policy;
use warp::http::{HeaderMap, Method, StatusCode};

/// The host every request names, and so this site's origin.
pub(crate) const HOST: &str = "leads.test";
pub(crate) const ORIGIN: &str = "http://leads.test";
pub(crate) const OWNER_PASSWORD: &str = "owner password 1";
pub(crate) const MEMBER_PASSWORD: &str = "member password 1";

pub(crate) struct App {
    pub(crate) store: Arc<dyn Store>,
    /// The running service; it stops when the `App` is dropped.
    pub(crate) service: TestApp,
    /// Owned by `owner`; `member` is a member.
    pub(crate) alpha: Project,
    /// Owned by `owner` alone.
    pub(crate) beta: Project,
    pub(crate) owner: User,
    pub(crate) member: User,
}

/// A request to send with [`App::send`].
pub(crate) struct Request {
    method: Method,
    path: String,
    headers: Vec<(String, String)>,
    body: String,
    from: Ipv4Addr,
}

impl Request {
    pub(crate) fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub(crate) fn body(mut self, body: impl Into<String>) -> Self {
        self.body = body.into();
        self
    }

    /// Sent from another loopback address, as another client: `127.0.0.{host}`.
    pub(crate) fn sent_from(mut self, host: u8) -> Self {
        self.from = Ipv4Addr::new(127, 0, 0, host);
        self
    }
}

/// A response, read.
pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) text: String,
}

impl Reply {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().unwrap())
    }

    /// Asserts the answer's status and that its page shows each of `shown`.
    #[track_caller]
    pub(crate) fn assert_shows(&self, status: StatusCode, shown: &[&str]) {
        assert_eq!(self.status, status, "{}", self.text);
        for expected in shown {
            assert!(self.text.contains(expected), "{expected} in {}", self.text);
        }
    }

    /// The session cookie a sign-in set: `lt_session=TOKEN`.
    pub(crate) fn session_cookie(&self) -> String {
        let set = self.header("set-cookie").expect("a Set-Cookie header");
        set.split(';').next().unwrap().to_owned()
    }

    /// The value of the hidden `csrf` field on the page.
    pub(crate) fn csrf(&self) -> String {
        self.hidden("csrf")
    }

    /// The value of the page's first field `name`, as a browser reads it (the template's
    /// character references decoded).
    pub(crate) fn hidden(&self, name: &str) -> String {
        let attribute = format!("name=\"{name}\" value=\"");
        let at = self
            .text
            .find(&attribute)
            .unwrap_or_else(|| panic!("a {name} field"));
        let rest = &self.text[at + attribute.len()..];
        let mut value = rest[..rest.find('"').unwrap()].to_owned();
        for (reference, character) in [
            ("&#34;", "\""),
            ("&#39;", "'"),
            ("&#60;", "<"),
            ("&#62;", ">"),
            ("&#38;", "&"),
        ] {
            value = value.replace(reference, character);
        }
        value
    }
}

pub(crate) async fn app() -> App {
    app_with(mocks_allowed()).await
}

/// The dashboard's defaults, with the operator's exceptions for the tests' mock platforms
/// (loopback, `http://`).
pub(crate) fn mocks_allowed() -> Config {
    Config {
        outbound: leadtrack_platforms::check::client(leadtrack_core::testkit::mock_targets()),
        ..Config::default()
    }
}

async fn user(store: &dyn Store, email: &str, name: &str, password: &str) -> User {
    let new = NewUser::new(email, Some(name), &Password::new(password).unwrap()).unwrap();
    store.create_user(new, Utc::now()).await.unwrap()
}

async fn project(store: &dyn Store, id: &str, name: &str) -> Project {
    store
        .create_project(
            NewProject {
                public_id: Some(id.into()),
                name: name.into(),
                currency: None,
            },
            Utc::now(),
        )
        .await
        .unwrap()
}

pub(crate) async fn app_with(config: Config) -> App {
    let parts = Parts {
        dashboard: Some(config),
        ..Parts::default()
    };
    let service = spawn_app(parts).await;
    let store = &*service.store;
    let alpha = project(store, "alpha", "Alpha").await;
    let beta = project(store, "beta", "Beta").await;
    let owner = user(store, "owner@example.com", "Olive Owner", OWNER_PASSWORD).await;
    let member = user(store, "member@example.com", "Mo Member", MEMBER_PASSWORD).await;
    for (project, user, role) in [
        (&alpha, &owner, Role::Owner),
        (&beta, &owner, Role::Owner),
        (&alpha, &member, Role::Member),
    ] {
        store
            .add_member(project.id, user.id, role, Utc::now())
            .await
            .unwrap();
    }
    App {
        store: service.store.clone(),
        service,
        alpha,
        beta,
        owner,
        member,
    }
}

/// A request as a browser on this site sends it.
pub(crate) fn browser(method: &str, path: &str) -> Request {
    Request {
        method: method.parse().expect("an HTTP method"),
        path: path.to_owned(),
        headers: vec![("host".to_owned(), HOST.to_owned())],
        body: String::new(),
        from: Ipv4Addr::LOCALHOST,
    }
}

/// A form post from this site's pages.
pub(crate) fn form(path: &str, body: &str) -> Request {
    browser("POST", path)
        .header("origin", ORIGIN)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
}

/// `application/x-www-form-urlencoded` of the pairs.
pub(crate) fn encode(pairs: &[(&str, &str)]) -> String {
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

impl App {
    /// Sends `request` from its own connection, without following redirects.
    pub(crate) async fn send(&self, request: Request) -> Reply {
        let client = reqwest::Client::builder()
            .redirect(Policy::none())
            .local_address(IpAddr::V4(request.from))
            .build()
            .unwrap();
        let url = format!("{}{}", self.service.base_url, request.path);
        let mut builder = client.request(request.method, url).body(request.body);
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        let response = builder.send().await.unwrap();
        Reply {
            status: response.status(),
            headers: response.headers().clone(),
            text: response.text().await.unwrap(),
        }
    }

    /// Signs in and returns the reply (a redirect with the cookie, when it worked).
    pub(crate) async fn sign_in(&self, email: &str, password: &str) -> Reply {
        let body = encode(&[("email", email), ("password", password)]);
        self.send(form("/login", &body)).await
    }

    /// Signs in, which must work, and returns the session cookie.
    pub(crate) async fn session(&self, email: &str, password: &str) -> String {
        let reply = self.sign_in(email, password).await;
        assert_eq!(reply.status, StatusCode::SEE_OTHER, "{}", reply.text);
        reply.session_cookie()
    }

    /// Posts `pairs` and the page's anti-forgery token to `path` as `cookie`'s user.
    pub(crate) async fn post_form(
        &self,
        cookie: &str,
        path: &str,
        pairs: &[(&str, &str)],
    ) -> Reply {
        let csrf = self.get("/", cookie).await.csrf();
        let mut all = vec![("csrf", csrf.as_str())];
        all.extend_from_slice(pairs);
        self.send(form(path, &encode(&all)).header("cookie", cookie))
            .await
    }

    /// A page as the holder of `cookie` sees it.
    pub(crate) async fn get(&self, path: &str, cookie: &str) -> Reply {
        self.send(browser("GET", path).header("cookie", cookie))
            .await
    }

    /// Creates a lead of `project` from a createLead body (without `projectId`) at `at`.
    pub(crate) async fn lead_at(
        &self,
        project: &Project,
        mut body: serde_json::Value,
        at: DateTime<Utc>,
    ) -> LeadId {
        body["projectId"] = serde_json::json!(project.public_id);
        let new = NewLead::parse(body.to_string().as_bytes(), CreateRoute::Browser).unwrap();
        self.store
            .create_lead(project.id, new.data, at)
            .await
            .unwrap()
            .lead_id
    }

    /// Creates a conversion label of `project` that marks leads done.
    pub(crate) async fn label(&self, project: &Project, name: &str) -> ConversionLabel {
        let new = NewLabel::done(name, LabelMapping::default());
        self.store
            .create_label(project.id, new, Utc::now())
            .await
            .unwrap()
    }

    /// Rates a lead of `project` as updateLeadStatus does, with a price in cents.
    pub(crate) async fn rate(
        &self,
        project: &Project,
        lead: LeadId,
        conversion_id: ConversionId,
        price: Option<i64>,
    ) {
        let update = StatusUpdate {
            identifier: LeadIdentifier::LeadId(lead),
            conversion_id,
            price,
            note: None,
        };
        self.store
            .update_status(
                project.id,
                &update,
                &Actor::api_key("lt_test0000"),
                Utc::now(),
            )
            .await
            .unwrap();
    }

    /// Claims the next job, records one attempt at each of its pending deliveries (refused
    /// for good: `410`, with `error` as the reason; or, with `None`, delivered; in a request
    /// of `batch` conversions, when given) and finishes the job, as a worker does.
    pub(crate) async fn settle_next_job(&self, error: Option<&str>, batch: Option<u32>) {
        let claimed = self
            .store
            .claim_job(Utc::now(), chrono::Duration::minutes(5))
            .await
            .unwrap()
            .expect("a job to claim");
        let pending = claimed
            .deliveries
            .iter()
            .filter(|delivery| delivery.state == DeliveryState::Pending);
        for delivery in pending {
            let attempt = Attempt {
                integration: delivery.integration,
                at: Utc::now(),
                outcome: match error {
                    Some(_) => AttemptOutcome::Failed,
                    None => AttemptOutcome::Delivered,
                },
                http_status: Some(if error.is_some() { 410 } else { 200 }),
                error: error.map(str::to_owned),
                retry_at: None,
                batch: batch.map(|size| Batch {
                    id: uuid::Uuid::from_u128(0xba7c),
                    size,
                }),
            };
            self.store
                .record_attempt(claimed.job.id, claimed.lease.token, &attempt)
                .await
                .unwrap();
        }
        let (job, token) = (claimed.job.id, claimed.lease.token);
        self.store.finish_job(job, token, Utc::now()).await.unwrap();
    }

    /// How many API keys a project has.
    pub(crate) async fn key_count(&self, project: &Project) -> usize {
        self.store.api_keys(project.id).await.unwrap().len()
    }
}
