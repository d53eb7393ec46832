//! The site the dashboard's browser tests use: project Acme with its team, five leads and a
//! webhook at a local mock, and the steps every test takes (signing in, pressing keys,
//! waiting for a page). Shared by `tests/dashboard.rs` and `tests/inbox.rs`.

#![allow(dead_code)]

use std::time::{Duration, Instant};

use chrono::Utc;
use fantoccini::Locator;
use fantoccini::key::Key;
use leadtrack::core::Store;
use leadtrack::core::account::{NewUser, Password};
use leadtrack::core::integration::{IntegrationSettings, Secret, WebhookSettings};
use leadtrack::core::label::{LabelMapping, NewLabel};
use leadtrack::core::project::{NewProject, Project, ProjectSettings};
use leadtrack::core::request::{CreateRoute, NewLead};
use leadtrack::core::types::{LeadId, Role};
use leadtrack::platforms::testkit::{MockPlatform, MockResponse};
use leadtrack_server::testkit::{Parts, TestApp, spawn_app};
use serde_json::{Value, json};

use super::browser::Browser;

pub(crate) const OWNER: (&str, &str) = ("olive@example.com", "olive's password");
pub(crate) const MEMBER: (&str, &str) = ("mo@example.com", "mo's password!");
pub(crate) const VIEWER: (&str, &str) = ("vi@example.com", "vi's password!!");

/// The app (lead API and dashboard) for project Acme, and what the tests arranged in it.
pub(crate) struct Site {
    pub(crate) app: TestApp,
    pub(crate) hook: MockPlatform,
    pub(crate) customer: String,
}

impl Site {
    pub(crate) fn base(&self) -> &str {
        &self.app.base_url
    }

    pub(crate) fn store(&self) -> &dyn Store {
        &*self.app.store
    }

    pub(crate) fn acme(&self) -> &Project {
        &self.app.project
    }
}

pub(crate) async fn lead(store: &dyn Store, project: &Project, body: Value) -> LeadId {
    let mut body = body;
    body["projectId"] = json!(project.public_id);
    let new = NewLead::parse(body.to_string().as_bytes(), CreateRoute::Browser).unwrap();
    store
        .create_lead(project.id, new.data, Utc::now())
        .await
        .unwrap()
        .lead_id
}

/// Acme (Olive owns it, Mo is a member) with five leads, a webhook at a local mock, and
/// `Other`, which neither of them belongs to; on the backend under test (a temporary SQLite
/// file, or PostgreSQL with `LEADTRACK_TEST_BACKEND=postgres`).
pub(crate) async fn site() -> Site {
    site_with(leadtrack_dashboard::Config {
        outbound: leadtrack::platforms::check::client(leadtrack::core::testkit::mock_targets()),
        ..leadtrack_dashboard::Config::default()
    })
    .await
}

/// [`site`], with the dashboard configured as `config` says (a mailer, say).
pub(crate) async fn site_with(config: leadtrack_dashboard::Config) -> Site {
    let parts = Parts {
        project: "acme",
        dashboard: Some(config),
        ..Parts::default()
    };
    let app = spawn_app(parts).await;
    let store = &*app.store;
    let acme = app.project.clone();
    let new = NewProject {
        public_id: Some("other".into()),
        name: "Other".into(),
        currency: Some("EUR".into()),
    };
    let other = store.create_project(new, Utc::now()).await.unwrap();
    for (email, password, role) in [
        (OWNER.0, OWNER.1, Role::Owner),
        (MEMBER.0, MEMBER.1, Role::Member),
        (VIEWER.0, VIEWER.1, Role::Viewer),
    ] {
        let new = NewUser::new(email, None, &Password::new(password).unwrap()).unwrap();
        let user = store.create_user(new, Utc::now()).await.unwrap();
        store
            .add_member(acme.id, user.id, role, Utc::now())
            .await
            .unwrap();
    }
    let hook = MockPlatform::start(MockResponse::empty(200)).await;
    let webhook = IntegrationSettings::Webhook(WebhookSettings {
        url: format!("{}/hook", hook.url()),
        secret: Secret::new("whsec_browser"),
    });
    store
        .set_integration(acme.id, webhook, Utc::now())
        .await
        .unwrap();
    let customer = store
        .create_label(
            acme.id,
            NewLabel::done("Customer", LabelMapping::webhook_only()),
            Utc::now(),
        )
        .await
        .unwrap()
        .id
        .to_string();
    for (first, email, gclid) in [
        ("Ada", "ada@example.com", true),
        ("Grace", "grace@example.com", false),
        ("Alan", "alan@example.com", true),
        ("Katherine", "katherine@example.com", false),
        ("Linus", "linus@example.com", false),
    ] {
        let mut attribution = json!({"utm_source": "newsletter"});
        if gclid {
            attribution["gclid"] = json!(format!("Cj0-{first}"));
        }
        lead(
            store,
            &acme,
            json!({"userData": {"firstName": first, "email": email}, "attributionData": attribution, "formData": {"formName": "Contact"}}),
        )
        .await;
    }
    lead(
        store,
        &other,
        json!({"userData": {"email": "secret@other.example"}}),
    )
    .await;
    // A short undo window, so that the tests wait little for deliveries.
    site_window(store, &acme, 2).await;
    Site {
        app,
        hook,
        customer,
    }
}

/// Sets the project's undo window to `seconds`.
pub(crate) async fn site_window(store: &dyn Store, project: &Project, seconds: u32) {
    let window = ProjectSettings {
        undo_window_seconds: Some(seconds),
        ..ProjectSettings::default()
    };
    store.update_project(project.id, window).await.unwrap();
}

impl Site {
    pub(crate) async fn sign_in(&self, browser: &Browser, (email, password): (&str, &str)) {
        let c = &browser.client;
        c.goto(&format!("{}/login", self.base())).await.unwrap();
        c.find(Locator::Css("input[name=email]"))
            .await
            .unwrap()
            .send_keys(email)
            .await
            .unwrap();
        let field = c.find(Locator::Css("input[name=password]")).await.unwrap();
        field.send_keys(password).await.unwrap();
        field.send_keys(&Key::Enter.to_string()).await.unwrap();
        browser.wait_for("main").await;
        wait_until(browser, "signed in", |url, _| !url.contains("/login")).await;
        let landed = browser.client.current_url().await.unwrap().to_string();
        assert!(
            landed.ends_with("/projects/acme/leads"),
            "one project, so straight to its inbox: {landed}"
        );
    }
}

/// The page's visible text.
pub(crate) async fn text(browser: &Browser) -> String {
    browser
        .client
        .find(Locator::Css("main"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// Waits until `ready(url, text)` holds for the current page, reloading never.
pub(crate) async fn wait_until(browser: &Browser, what: &str, ready: impl Fn(&str, &str) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let url = browser.client.current_url().await.unwrap().to_string();
        let main = browser.client.find(Locator::Css("main")).await;
        let shown = match main {
            Ok(main) => main.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        };
        if ready(&url, &shown) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "never reached {what}: {url}\n{shown}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Clicks the element `css` finds.
pub(crate) async fn click(c: &fantoccini::Client, css: &str) {
    c.find(Locator::Css(css))
        .await
        .unwrap_or_else(|err| panic!("{css}: {err}"))
        .click()
        .await
        .unwrap();
}

/// Presses `key` on the page (outside any field).
pub(crate) async fn press(browser: &Browser, key: &str) {
    browser
        .client
        .find(Locator::Css("body"))
        .await
        .unwrap()
        .send_keys(key)
        .await
        .unwrap();
}
