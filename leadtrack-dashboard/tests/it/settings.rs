//! The Settings area over HTTP: who may see and change it, and what each form really
//! changes, read back from the store.

use crate::common::*;
use chrono::{Duration, Utc};
use leadtrack_core::StoreError;
use leadtrack_core::account::{NewUser, Password};
use leadtrack_core::integration::{Secret, WebhookSettings};
use leadtrack_core::key::KeyHash;
use leadtrack_core::label::{ConversionLabel, LabelMapping, NewLabel};
use leadtrack_core::store::Entity;
use leadtrack_core::types::{
    Consent, ConsentStatus, ConversionId, IntegrationKind, LeadIdentifier, Role,
};
use leadtrack_platforms::testkit::{MockPlatform, MockResponse};
use serde_json::json;
use warp::http::StatusCode;

/// Every page of the area.
const PAGES: [&str; 7] = [
    "/projects/alpha/settings/labels",
    "/projects/alpha/settings/integrations",
    "/projects/alpha/settings/webhooks",
    "/projects/alpha/settings/keys",
    "/projects/alpha/settings/members",
    "/projects/alpha/settings/project",
    "/projects/alpha/settings/install",
];

/// A signed-in browser: its cookie and the session's anti-forgery token.
struct Browser {
    cookie: String,
    csrf: String,
}

impl App {
    async fn browser(&self, email: &str, password: &str) -> Browser {
        let cookie = self.session(email, password).await;
        let csrf = self.get("/", &cookie).await.csrf();
        Browser { cookie, csrf }
    }

    async fn owner(&self) -> Browser {
        self.browser("owner@example.com", OWNER_PASSWORD).await
    }

    async fn member_browser(&self) -> Browser {
        self.browser("member@example.com", MEMBER_PASSWORD).await
    }

    /// Posts a form from this site with the browser's token and `pairs`.
    async fn post(&self, browser: &Browser, path: &str, pairs: &[(&str, &str)]) -> Reply {
        let mut all = vec![("csrf", browser.csrf.as_str())];
        all.extend_from_slice(pairs);
        self.send(form(path, &encode(&all)).header("cookie", &browser.cookie))
            .await
    }

    /// Follows a `303` to its page, which must be found.
    async fn follow(&self, browser: &Browser, reply: &Reply) -> Reply {
        assert_eq!(reply.status, StatusCode::SEE_OTHER, "{}", reply.text);
        let page = self
            .get(reply.header("location").unwrap(), &browser.cookie)
            .await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        page
    }
}

/// The text of the paragraph with `id`.
fn paragraph(text: &str, id: &str) -> String {
    let at = text
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id} in {text}"));
    let rest = &text[at..];
    rest[..rest.find("</p>").unwrap()].to_owned()
}

#[tokio::test]
async fn settings_are_for_owners_only() {
    let app = app().await;
    let owner = app.owner().await;
    let member = app.member_browser().await;

    let root = app.get("/projects/alpha/settings", &owner.cookie).await;
    assert_eq!(
        (root.status, root.header("location")),
        (
            StatusCode::SEE_OTHER,
            Some("/projects/alpha/settings/labels")
        )
    );
    let home = app.get("/projects/alpha", &owner.cookie).await;
    assert_eq!(home.header("location"), Some("/projects/alpha/leads"));

    for path in PAGES {
        let page = app.get(path, &owner.cookie).await;
        assert_eq!(page.status, StatusCode::OK, "{path}: {}", page.text);
        assert!(page.text.contains("aria-label=\"Settings\""), "{path}");
        assert!(page.text.contains("aria-current=\"page\""), "{path}");

        let refused = app.get(path, &member.cookie).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{path}");
        assert!(refused.text.contains("Owners only"), "{path}");

        let elsewhere = path.replace("alpha", "beta");
        let stranger = app.get(&elsewhere, &member.cookie).await;
        assert_eq!(stranger.status, StatusCode::NOT_FOUND, "{elsewhere}");

        let visitor = app.send(browser("GET", path)).await;
        assert_eq!(visitor.status, StatusCode::SEE_OTHER, "{path}");
        assert!(
            visitor
                .header("location")
                .unwrap()
                .starts_with("/login?next="),
            "{path}"
        );
    }
    let titled = app
        .get("/projects/alpha/settings/integrations", &owner.cookie)
        .await;
    assert!(
        titled
            .text
            .contains("<title>Integrations · Alpha settings · leadtrack</title>")
    );
    let unknown = app
        .get("/projects/alpha/settings/nothing", &owner.cookie)
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
}

/// Every form of the area, with a body that would change something.
fn forms(label: &str, webhook: &str) -> Vec<(String, Vec<(&'static str, String)>)> {
    let owned = |pairs: &[(&'static str, &str)]| -> Vec<(&'static str, String)> {
        pairs.iter().map(|(k, v)| (*k, (*v).to_owned())).collect()
    };
    let base = "/projects/alpha/settings";
    vec![
        (format!("{base}/labels"), owned(&[("name", "Customer")])),
        (
            format!("{base}/labels/{label}"),
            owned(&[("name", "Renamed")]),
        ),
        (
            format!("{base}/integrations/webhook"),
            owned(&[("url", "https://hooks.example.com/x")]),
        ),
        (format!("{base}/integrations/webhook/disconnect"), vec![]),
        (
            format!("{base}/webhooks"),
            owned(&[
                ("url", "https://crm.example/new"),
                ("event", "lead.created"),
            ]),
        ),
        (format!("{base}/webhooks/{webhook}/remove"), vec![]),
        (
            format!("{base}/crm/hubspot"),
            owned(&[("token", "pat-na1-x")]),
        ),
        (format!("{base}/crm/pipedrive/disconnect"), vec![]),
        (format!("{base}/keys"), vec![]),
        (
            format!("{base}/keys/revoke"),
            owned(&[("prefix", "lt_00000000")]),
        ),
        (
            format!("{base}/members"),
            owned(&[("email", "carol@example.com"), ("role", "member")]),
        ),
        (format!("{base}/members/2"), owned(&[("role", "owner")])),
        (format!("{base}/members/2/remove"), vec![]),
        (
            format!("{base}/project"),
            owned(&[("name", "Renamed"), ("currency", "EUR")]),
        ),
        (format!("{base}/install/test-lead"), vec![]),
    ]
}

#[tokio::test]
async fn forged_or_foreign_forms_change_nothing() {
    let app = app().await;
    let owner = app.owner().await;
    let member = app.member_browser().await;
    add_user(&app, "carol@example.com").await;
    let label = app.label(&app.alpha, "Qualified").await;
    let hook = WebhookSettings {
        url: "https://hooks.example.com/old".into(),
        secret: Secret::new("whsec_old"),
    };
    app.store
        .set_integration(
            app.alpha.id,
            leadtrack_core::integration::IntegrationSettings::Webhook(hook.clone()),
            Utc::now(),
        )
        .await
        .unwrap();
    let events = leadtrack_core::webhook::WebhookEvents::all();
    let webhook = leadtrack_core::webhook::NewWebhook::new(
        "https://crm.example/x",
        &leadtrack_core::target::Targets::default(),
        None,
        events,
    );
    let webhook = app
        .store
        .create_webhook(app.alpha.id, webhook.unwrap(), Utc::now())
        .await
        .unwrap();
    let before = snapshot(&app).await;

    for (path, pairs) in forms(&label.id.to_string(), &webhook.id.to_string()) {
        let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let body = encode(&pairs);
        let forged = app
            .send(form(&path, &body).header("cookie", &owner.cookie))
            .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN, "{path}");
        assert!(forged.text.contains("nothing was changed"), "{path}");

        let from_elsewhere = browser("POST", &path)
            .header("cookie", &owner.cookie)
            .header("origin", "http://evil.example")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(encode(
                &[&[("csrf", owner.csrf.as_str())], &pairs[..]].concat(),
            ));
        assert_eq!(
            app.send(from_elsewhere).await.status,
            StatusCode::FORBIDDEN,
            "{path}"
        );

        let by_member = app.post(&member, &path, &pairs).await;
        assert_eq!(by_member.status, StatusCode::FORBIDDEN, "{path}");
        assert!(by_member.text.contains("Owners only"), "{path}");

        let beta = path.replace("alpha", "beta");
        let stranger = app.post(&member, &beta, &pairs).await;
        assert_eq!(stranger.status, StatusCode::NOT_FOUND, "{beta}");

        let visitor = app.send(form(&path, &body)).await;
        assert_eq!(
            (visitor.status, visitor.header("location")),
            (StatusCode::SEE_OTHER, Some("/login")),
            "{path}"
        );
    }
    assert_eq!(snapshot(&app).await, before, "nothing changed");
}

/// What the forms could change, for comparing before and after.
async fn snapshot(app: &App) -> String {
    let store = &app.store;
    let id = app.alpha.id;
    let project = store.project("alpha").await.unwrap();
    let labels = store.labels(id).await.unwrap();
    let integrations = store.integrations(id).await.unwrap();
    let keys = store.api_keys(id).await.unwrap();
    let webhooks = store.webhooks(id).await.unwrap();
    let members: Vec<_> = store
        .members(id)
        .await
        .unwrap()
        .into_iter()
        .map(|m| (m.user.email, m.role))
        .collect();
    let leads = store
        .list_leads(id, &Default::default())
        .await
        .unwrap()
        .total;
    format!("{project:?} {labels:?} {integrations:?} {webhooks:?} {keys:?} {members:?} {leads}")
}

async fn add_user(app: &App, email: &str) {
    let new = NewUser::new(
        email,
        Some("Carol"),
        &Password::new("carol password 1").unwrap(),
    )
    .unwrap();
    app.store.create_user(new, Utc::now()).await.unwrap();
}

#[tokio::test]
async fn labels_are_created_and_edited() {
    let app = app().await;
    let owner = app.owner().await;
    let path = "/projects/alpha/settings/labels";

    let blank = app
        .post(
            &owner,
            path,
            &[("name", "  "), ("ga4_event", "qualify_lead")],
        )
        .await;
    assert_eq!(blank.status, StatusCode::BAD_REQUEST);
    assert!(
        blank.text.contains("A conversion label needs a name."),
        "{}",
        blank.text
    );
    assert!(
        blank.text.contains("value=\"qualify_lead\""),
        "what was typed stays"
    );
    assert!(app.store.labels(app.alpha.id).await.unwrap().is_empty());
    let bad_rule = app
        .post(
            &owner,
            path,
            &[("name", "Customer"), ("linkedin_conversion", "rule-7")],
        )
        .await;
    assert_eq!(bad_rule.status, StatusCode::BAD_REQUEST);
    let problem = paragraph(&bad_rule.text, "linkedin_conversion-problem");
    assert!(
        problem.contains("urn:lla:llaPartnerConversion"),
        "{problem}"
    );
    assert!(app.store.labels(app.alpha.id).await.unwrap().is_empty());
    for (event, says) in [
        (
            "session_start",
            "session_start&#34; is one of GA4&#39;s own events",
        ),
        (
            "qualify-lead",
            "holds &#39;-&#39;; use only letters, digits and _",
        ),
    ] {
        let bad_event = app
            .post(&owner, path, &[("name", "Customer"), ("ga4_event", event)])
            .await;
        assert_eq!(bad_event.status, StatusCode::BAD_REQUEST);
        let problem = paragraph(&bad_event.text, "ga4_event-problem");
        assert!(problem.contains(says), "{problem}");
        assert!(bad_event.text.contains(&format!("value=\"{event}\"")));
    }
    assert!(app.store.labels(app.alpha.id).await.unwrap().is_empty());
    let long = "x".repeat(65);
    let bad_reddit = app
        .post(
            &owner,
            path,
            &[("name", "Customer"), ("reddit_event", &long)],
        )
        .await;
    assert_eq!(bad_reddit.status, StatusCode::BAD_REQUEST);
    let problem = paragraph(&bad_reddit.text, "reddit_event-problem");
    assert!(problem.contains("at most 64"), "{problem}");
    let bad_pinterest = app
        .post(
            &owner,
            path,
            &[("name", "Customer"), ("pinterest_event", "purchase")],
        )
        .await;
    assert_eq!(bad_pinterest.status, StatusCode::BAD_REQUEST);
    let problem = paragraph(&bad_pinterest.text, "pinterest_event-problem");
    assert!(problem.contains("is not one of Pinterest"), "{problem}");
    assert!(app.store.labels(app.alpha.id).await.unwrap().is_empty());
    // Meta's standard events are offered by name.
    let page = app.get(path, &owner.cookie).await;
    assert!(page.text.contains("list=\"meta-standard-events\""));
    assert!(
        page.text
            .contains("<option value=\"CompleteRegistration\"></option>")
    );

    let created = app
        .post(
            &owner,
            path,
            &[
                ("name", " Customer "),
                ("mark_as_done", "on"),
                ("ga4_event", "purchase"),
                ("meta_event", "Purchase"),
                ("google_ads_action", " 555 "),
                ("microsoft_ads_conversion", "Offline purchase"),
                ("linkedin_conversion", "777"),
                ("tiktok_event", " Won deal "),
                ("reddit_event", "Purchase"),
                ("pinterest_event", "checkout"),
                ("snapchat_event", "PURCHASE"),
                ("webhook", "on"),
            ],
        )
        .await;
    let page = app.follow(&owner, &created).await;
    assert!(page.text.contains("Label created."));
    assert!(page.text.contains(">Customer</a>"));
    // Where it goes, one platform a line, each saying whether it is connected.
    assert!(
        page.text.contains(
            "<ul class=\"goes\"><li><span class=\"platform\">Google Ads</span> <code>555</code> <span class=\"muted\">not connected</span></li><li><span class=\"platform\">GA4</span> <code>purchase</code>"
        ),
        "{}",
        page.text
    );
    let labels = app.store.labels(app.alpha.id).await.unwrap();
    let label = &labels[0];
    assert_eq!(
        (label.name.as_str(), label.mark_as_done),
        ("Customer", true)
    );
    assert_eq!(
        label.mapping,
        LabelMapping {
            ga4_event: Some("purchase".into()),
            meta_event: Some("Purchase".into()),
            google_ads_action: Some("555".into()),
            microsoft_ads_conversion: Some("Offline purchase".into()),
            linkedin_conversion: Some("urn:lla:llaPartnerConversion:777".into()),
            tiktok_event: Some("Won deal".into()),
            reddit_event: Some("Purchase".into()),
            pinterest_event: Some("checkout".into()),
            snapchat_event: Some("PURCHASE".into()),
            webhook: true,
        }
    );
    assert!(
        page.text.contains(
            "<li><span class=\"platform\">TikTok</span> <code>Won deal</code> <span class=\"muted\">not connected</span></li>"
        ),
        "{}",
        page.text
    );
    assert!(
        page.text.contains("<code>777</code>"),
        "the list shows the LinkedIn rule's id"
    );

    let one = format!("{path}/{}", label.id);
    let form = app.get(&one, &owner.cookie).await;
    assert_eq!(form.status, StatusCode::OK);
    assert!(form.text.contains("value=\"Purchase\""));
    let saved = app
        .post(
            &owner,
            &one,
            &[
                ("name", "Qualified"),
                ("ga4_event", "qualify_lead"),
                ("meta_event", ""),
            ],
        )
        .await;
    assert!(
        app.follow(&owner, &saved)
            .await
            .text
            .contains("Label saved.")
    );
    let changed = app.store.label(app.alpha.id, label.id).await.unwrap();
    assert_eq!(
        (changed.name.as_str(), changed.mark_as_done),
        ("Qualified", false)
    );
    assert_eq!(
        changed.mapping,
        LabelMapping {
            ga4_event: Some("qualify_lead".into()),
            ..LabelMapping::default()
        }
    );
    let refused = app.post(&owner, &one, &[("name", "")]).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        app.store.label(app.alpha.id, label.id).await.unwrap(),
        changed
    );

    // Another project's label, or no label at all, is not found.
    let beta = app.label(&app.beta, "Theirs").await;
    let theirs = format!("{path}/{}", beta.id);
    assert_eq!(
        app.get(&theirs, &owner.cookie).await.status,
        StatusCode::NOT_FOUND
    );
    let renamed = app.post(&owner, &theirs, &[("name", "Mine")]).await;
    assert_eq!(renamed.status, StatusCode::NOT_FOUND);
    assert_eq!(
        app.store.label(app.beta.id, beta.id).await.unwrap().name,
        "Theirs"
    );
    for bad in ["lost", "not-a-uuid"] {
        let page = app.get(&format!("{path}/{bad}"), &owner.cookie).await;
        assert_eq!(page.status, StatusCode::NOT_FOUND, "{bad}");
    }
}

#[tokio::test]
async fn integrations_connect_update_and_disconnect_without_showing_secrets() {
    let app = app().await;
    let owner = app.owner().await;
    let path = "/projects/alpha/settings/integrations";
    let mut seen = Vec::new();

    let missing = app
        .post(
            &owner,
            &format!("{path}/meta"),
            &[("pixel_id", ""), ("access_token", "EAAB-meta-token")],
        )
        .await;
    assert_eq!(missing.status, StatusCode::BAD_REQUEST);
    let problem = paragraph(&missing.text, "meta-pixel_id-problem");
    assert!(
        problem.contains("Pixel (dataset) id is needed to connect Meta."),
        "{problem}"
    );
    seen.push(missing.text);
    assert!(
        app.store
            .integrations(app.alpha.id)
            .await
            .unwrap()
            .meta
            .is_none()
    );

    let connected = app
        .post(
            &owner,
            &format!("{path}/ga4"),
            &[
                ("measurement_id", " G-FIRST "),
                ("api_secret", "ga4-api-secret"),
                ("base_url", ""),
            ],
        )
        .await;
    let page = app.follow(&owner, &connected).await;
    assert!(page.text.contains("GA4 connected"), "{}", page.text);
    seen.push(page.text);
    let ga4 = app
        .store
        .integrations(app.alpha.id)
        .await
        .unwrap()
        .ga4
        .unwrap();
    assert_eq!(
        (
            ga4.measurement_id.as_str(),
            ga4.api_secret.expose(),
            ga4.validate
        ),
        ("G-FIRST", "ga4-api-secret", false)
    );

    // A blank secret keeps the stored one.
    let updated = app
        .post(
            &owner,
            &format!("{path}/ga4"),
            &[
                ("measurement_id", "G-SECOND"),
                ("api_secret", ""),
                ("validate", "on"),
            ],
        )
        .await;
    let page = app.follow(&owner, &updated).await;
    assert!(page.text.contains("GA4 settings saved"));
    seen.push(page.text);
    let ga4 = app
        .store
        .integrations(app.alpha.id)
        .await
        .unwrap()
        .ga4
        .unwrap();
    assert_eq!(
        (
            ga4.measurement_id.as_str(),
            ga4.api_secret.expose(),
            ga4.validate
        ),
        ("G-SECOND", "ga4-api-secret", true)
    );

    let bad_url = app
        .post(
            &owner,
            &format!("{path}/webhook"),
            &[("url", "ftp://example.com"), ("secret", "whsec_typed")],
        )
        .await;
    assert_eq!(bad_url.status, StatusCode::BAD_REQUEST);
    assert!(
        paragraph(&bad_url.text, "webhook-url-problem")
            .contains("ftp: addresses are not called; give an https:// address")
    );
    assert!(
        bad_url.text.contains("value=\"ftp://example.com\""),
        "the URL typed stays"
    );
    assert!(
        !bad_url.text.contains("whsec_typed"),
        "a typed secret is not shown back"
    );

    // A webhook connected without a secret gets one, shown this once.
    let hook = app
        .post(
            &owner,
            &format!("{path}/webhook"),
            &[("url", "https://hooks.example.com/in"), ("secret", "")],
        )
        .await;
    assert_eq!(hook.status, StatusCode::CREATED, "{}", hook.text);
    let secret = app
        .store
        .integrations(app.alpha.id)
        .await
        .unwrap()
        .webhook
        .unwrap()
        .secret;
    assert!(secret.expose().starts_with("whsec_"));
    assert!(hook.text.contains(secret.expose()) && hook.text.contains("Copy it now"));

    let gone = app
        .post(&owner, &format!("{path}/ga4/disconnect"), &[])
        .await;
    let page = app.follow(&owner, &gone).await;
    assert!(page.text.contains("GA4 disconnected"));
    seen.push(page.text);
    let left = app.store.integrations(app.alpha.id).await.unwrap();
    assert_eq!(left.connected(), [IntegrationKind::Webhook]);
    let unknown = app.post(&owner, &format!("{path}/myspace"), &[]).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);

    seen.push(app.get(path, &owner.cookie).await.text);
    for text in &seen {
        for secret in ["ga4-api-secret", "EAAB-meta-token", secret.expose()] {
            assert!(!text.contains(secret), "{secret} shown again");
        }
    }
}

#[tokio::test]
async fn each_integration_shows_its_last_delivery() {
    let app = app().await;
    let owner = app.owner().await;
    let hook = WebhookSettings {
        url: "https://hooks.example.com/in".into(),
        secret: Secret::new("whsec_x"),
    };
    app.store
        .set_integration(
            app.alpha.id,
            leadtrack_core::integration::IntegrationSettings::Webhook(hook),
            Utc::now(),
        )
        .await
        .unwrap();
    let lead = app
        .lead_at(
            &app.alpha,
            json!({"userData": {"email": "ada@example.com"}}),
            Utc::now(),
        )
        .await;
    app.rate(&app.alpha, lead, ConversionId::Lost, None).await;
    app.settle_next_job(Some("HTTP 410: the hook is gone"), None)
        .await;
    let page = app
        .get("/projects/alpha/settings/integrations", &owner.cookie)
        .await;
    let webhook = &page.text[page.text.find("id=\"webhook\"").unwrap()..];
    for shown in ["Connected", "Failed", "HTTP 410", "the hook is gone"] {
        assert!(webhook.contains(shown), "{shown} in {webhook}");
    }
    let ga4 =
        &page.text[page.text.find("id=\"ga4\"").unwrap()..page.text.find("id=\"meta\"").unwrap()];
    assert!(ga4.contains("Not connected") && ga4.contains("No delivery yet."));

    // The failed delivery goes again, as the same conversion; then nothing is left to retry.
    let retry = "/projects/alpha/settings/integrations/webhook/retry";
    let again = app.post(&owner, retry, &[]).await;
    let page = app.follow(&owner, &again).await;
    assert!(
        page.text
            .contains("Webhook deliveries that failed in the last 30 days are being sent again."),
        "{}",
        page.text
    );
    let jobs = app.store.lead_jobs(app.alpha.id, lead).await.unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!(
        jobs[0].job.conversion_event_id,
        jobs[1].job.conversion_event_id
    );
    let nothing = app.post(&owner, retry, &[]).await;
    let page = app.follow(&owner, &nothing).await;
    assert!(
        page.text
            .contains("Webhook deliveries: none failed in the last 30 days")
    );
}

#[tokio::test]
async fn a_ga4_test_event_shows_what_the_validator_says_and_queues_nothing() {
    let app = app().await;
    let owner = app.owner().await;
    let validator = MockPlatform::start(MockResponse::json(
        200,
        json!({"validationMessages": [{
            "fieldPath": "events",
            "description": "Event at index: [0] has invalid name [_bad].",
            "validationCode": "NAME_INVALID"
        }]}),
    ))
    .await;
    let path = "/projects/alpha/settings/integrations";
    let unconnected = app
        .post(&owner, &format!("{path}/ga4/test"), &[("event_name", "x")])
        .await;
    assert_eq!(unconnected.status, StatusCode::CONFLICT);
    assert!(unconnected.text.contains("GA4 is not connected"));
    let connected = app
        .post(
            &owner,
            &format!("{path}/ga4"),
            &[
                ("measurement_id", "G-TEST"),
                ("api_secret", "s3cret-ga4"),
                ("base_url", validator.url()),
            ],
        )
        .await;
    assert_eq!(connected.status, StatusCode::SEE_OTHER);

    let tested = app
        .post(
            &owner,
            &format!("{path}/ga4/test"),
            &[("event_name", "_bad")],
        )
        .await;
    assert_eq!(tested.status, StatusCode::OK);
    assert!(tested.text.contains("NAME_INVALID"), "{}", tested.text);
    assert!(tested.text.contains("has invalid name [_bad]"));
    assert!(!tested.text.contains("s3cret-ga4"));
    let requests = validator.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/debug/mp/collect");
    assert_eq!(requests[0].query("measurement_id"), Some("G-TEST"));
    assert_eq!(requests[0].json()["events"][0]["name"], "_bad");

    validator.set_default(MockResponse::json(200, json!({"validationMessages": []})));
    let valid = app
        .post(
            &owner,
            &format!("{path}/ga4/test"),
            &[("event_name", "qualify_lead")],
        )
        .await;
    assert!(valid.text.contains("found nothing wrong"), "{}", valid.text);

    let jobs = app
        .store
        .claim_job(Utc::now(), Duration::minutes(1))
        .await
        .unwrap();
    assert!(jobs.is_none(), "nothing was queued");
    assert_eq!(
        app.store
            .list_leads(app.alpha.id, &Default::default())
            .await
            .unwrap()
            .total,
        0
    );
}

#[tokio::test]
async fn every_other_platform_has_its_test_and_secrets_stay_hidden() {
    let app = app().await;
    let owner = app.owner().await;
    let meta = MockPlatform::start(MockResponse::json(
        200,
        json!({"events_received": 1, "messages": [], "fbtrace_id": "trace-7"}),
    ))
    .await;
    let hook = MockPlatform::start(MockResponse::json(200, json!({"ok": true}))).await;
    let tokens = MockPlatform::start(MockResponse::json(
        400,
        json!({"error": "invalid_grant", "error_description": "AADSTS70000"}),
    ))
    .await;
    let path = "/projects/alpha/settings/integrations";
    let token_url = format!("{}/token", tokens.url());
    for (slug, fields) in [
        (
            "meta",
            vec![
                ("pixel_id", "777"),
                ("access_token", "meta-token-s3cret"),
                ("base_url", meta.url()),
            ],
        ),
        (
            "webhook",
            vec![("url", hook.url()), ("secret", "whsec_dash")],
        ),
        (
            "microsoft-ads",
            vec![
                ("customer_id", "1"),
                ("account_id", "2"),
                ("developer_token", "dev-s3cret"),
                ("client_id", "app"),
                ("refresh_token", "refresh-s3cret"),
                ("token_url", &token_url),
            ],
        ),
    ] {
        let saved = app.post(&owner, &format!("{path}/{slug}"), &fields).await;
        assert_eq!(
            saved.status,
            StatusCode::SEE_OTHER,
            "{slug}: {}",
            saved.text
        );
    }
    let page = app.get(path, &owner.cookie).await;
    for button in [
        "Send a signed ping",
        "Check the credentials",
        "Send test event",
    ] {
        assert!(page.text.contains(button), "{button}");
    }

    // Meta counts events without a test event code: none is sent without one.
    let uncoded = app
        .post(&owner, &format!("{path}/meta/test"), &[("value", "Lead")])
        .await;
    assert_eq!(uncoded.status, StatusCode::BAD_REQUEST);
    assert!(uncoded.text.contains("test event code"));
    assert!(meta.requests().is_empty());
    let coded = app
        .post(
            &owner,
            &format!("{path}/meta/test"),
            &[("value", "Lead"), ("test_event_code", "TEST77")],
        )
        .await;
    assert!(
        coded.text.contains("Meta accepted the test"),
        "{}",
        coded.text
    );
    assert_eq!(meta.requests()[0].json()["test_event_code"], "TEST77");

    let pinged = app.post(&owner, &format!("{path}/webhook/test"), &[]).await;
    assert!(pinged.text.contains("Webhook accepted the test"));
    assert_eq!(hook.requests()[0].json()["type"], "ping");

    let refused = app
        .post(&owner, &format!("{path}/microsoft-ads/test"), &[])
        .await;
    assert!(refused.text.contains("invalid_grant"), "{}", refused.text);
    for text in [&uncoded.text, &coded.text, &pinged.text, &refused.text] {
        for secret in [
            "meta-token-s3cret",
            "whsec_dash",
            "dev-s3cret",
            "refresh-s3cret",
        ] {
            assert!(!text.contains(secret), "{secret} shown");
        }
    }
    let unknown = app.post(&owner, &format!("{path}/myspace/test"), &[]).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);

    // A label's page tests what the label sends, to each connected platform it names.
    let label = app
        .store
        .create_label(
            app.alpha.id,
            NewLabel::done(
                "Qualified",
                LabelMapping {
                    meta_event: Some("Lead".into()),
                    ga4_event: Some("qualify".into()),
                    webhook: true,
                    ..LabelMapping::default()
                },
            ),
            Utc::now(),
        )
        .await
        .unwrap();
    let page = app
        .get(
            &format!("/projects/alpha/settings/labels/{}", label.id),
            &owner.cookie,
        )
        .await;
    let tests = format!("/projects/alpha/settings/labels/{}/test", label.id);
    let meta_test = format!("action=\"{tests}/meta#test-label\"");
    assert!(page.text.contains(&meta_test), "{}", page.text);
    assert!(
        page.text
            .contains(r#"<input type="hidden" name="value" value="Lead">"#)
    );
    assert!(page.text.contains("Test the webhook"));
    // GA4 is named but not connected; Microsoft Advertising is connected but not named.
    assert!(!page.text.contains("Test GA4") && !page.text.contains("Test Microsoft"));
    // The platforms' answers show on the label's page.
    let pinged = app.post(&owner, &format!("{tests}/webhook"), &[]).await;
    assert_eq!(pinged.status, StatusCode::OK);
    assert!(pinged.text.contains("Label “Qualified”"), "{}", pinged.text);
    assert!(pinged.text.contains("Webhook accepted the test"));
    assert_eq!(hook.requests().len(), 2);
    let coded = app
        .post(
            &owner,
            &format!("{tests}/meta"),
            &[("value", "Lead"), ("test_event_code", "TEST78")],
        )
        .await;
    assert!(coded.text.contains("Label “Qualified”"));
    assert!(
        coded.text.contains("Meta accepted the test"),
        "{}",
        coded.text
    );
    assert_eq!(meta.requests()[1].json()["test_event_code"], "TEST78");
    assert_eq!(meta.requests()[1].json()["data"][0]["event_name"], "Lead");
    let refused = app
        .post(
            &owner,
            &format!("{tests}/ga4"),
            &[("event_name", "qualify")],
        )
        .await;
    assert_eq!(refused.status, StatusCode::CONFLICT);
    assert!(refused.text.contains("GA4 is not connected"));
    let elsewhere = app
        .post(
            &owner,
            "/projects/alpha/settings/labels/9999/test/meta",
            &[],
        )
        .await;
    assert_eq!(elsewhere.status, StatusCode::NOT_FOUND);
    assert!(
        app.store
            .claim_job(Utc::now(), Duration::minutes(1))
            .await
            .unwrap()
            .is_none(),
        "nothing was queued"
    );
}

/// TikTok, Reddit, Pinterest and Snapchat each have a test event in their own test mode
/// (TikTok's and Reddit's need a code, or the event would count), and no page shows their
/// tokens.
#[tokio::test]
async fn the_newer_platforms_test_in_their_test_modes() {
    let app = app().await;
    let owner = app.owner().await;
    let tiktok = MockPlatform::start(MockResponse::took_one(IntegrationKind::Tiktok)).await;
    let reddit = MockPlatform::start(MockResponse::took_one(IntegrationKind::Reddit)).await;
    let pinterest = MockPlatform::start(MockResponse::took_one(IntegrationKind::Pinterest)).await;
    let snapchat = MockPlatform::start(MockResponse::json(200, json!({"status": "VALID"}))).await;
    let path = "/projects/alpha/settings/integrations";
    for (slug, fields) in [
        (
            "tiktok",
            vec![
                ("event_set_id", "7300000000000000009"),
                ("access_token", "tt-token-s3cret"),
                ("test_event_code", ""),
                ("base_url", tiktok.url()),
            ],
        ),
        (
            "reddit",
            vec![
                ("pixel_id", "a2_dash"),
                ("access_token", "rd-token-s3cret"),
                ("base_url", reddit.url()),
            ],
        ),
        (
            "pinterest",
            vec![
                ("ad_account_id", "549755885175"),
                ("access_token", "pin-token-s3cret"),
                ("base_url", pinterest.url()),
            ],
        ),
        (
            "snapchat",
            vec![
                ("pixel_id", "snap-dash"),
                ("access_token", "snap-token-s3cret"),
                ("base_url", snapchat.url()),
            ],
        ),
    ] {
        let saved = app.post(&owner, &format!("{path}/{slug}"), &fields).await;
        assert_eq!(
            saved.status,
            StatusCode::SEE_OTHER,
            "{slug}: {}",
            saved.text
        );
    }
    // TikTok's test event goes to Events Manager's Test events tab alone.
    let tiktok_page = app.get(path, &owner.cookie).await;
    assert!(tiktok_page.text.contains("id=\"tiktok-test-value\""));
    let uncoded_tiktok = app
        .post(&owner, &format!("{path}/tiktok/test"), &[("value", "Lead")])
        .await;
    assert_eq!(uncoded_tiktok.status, StatusCode::BAD_REQUEST);
    assert!(tiktok.requests().is_empty());
    let coded_tiktok = app
        .post(
            &owner,
            &format!("{path}/tiktok/test"),
            &[("value", "Qualified lead"), ("test_event_code", "TEST79")],
        )
        .await;
    assert!(
        coded_tiktok.text.contains("TikTok accepted the test"),
        "{}",
        coded_tiktok.text
    );
    let sent = tiktok.requests();
    assert_eq!(sent[0].header("access-token"), Some("tt-token-s3cret"));
    assert_eq!(sent[0].json()["test_event_code"], "TEST79");
    assert_eq!(sent[0].json()["event_source_id"], "7300000000000000009");
    assert_eq!(sent[0].json()["data"][0]["event"], "Qualified lead");
    // And Reddit, whose test mode is Event Testing's test id.
    assert!(tiktok_page.text.contains("id=\"reddit-test-value\""));
    let tested_reddit = app
        .post(
            &owner,
            &format!("{path}/reddit/test"),
            &[("value", "SignUp"), ("test_event_code", "t2_dash")],
        )
        .await;
    assert!(
        tested_reddit.text.contains("Reddit accepted the test"),
        "{}",
        tested_reddit.text
    );
    let sent = reddit.requests();
    assert_eq!(sent[0].path, "/api/v3/pixels/a2_dash/conversion_events");
    assert_eq!(sent[0].json()["data"]["test_id"], "t2_dash");
    assert_eq!(
        sent[0].json()["data"]["events"][0]["type"],
        json!({"tracking_type": "SIGN_UP"})
    );
    // And Pinterest, whose test mode is a flag of the request.
    assert!(tiktok_page.text.contains("id=\"pinterest-test-value\""));
    let tested_pinterest = app
        .post(
            &owner,
            &format!("{path}/pinterest/test"),
            &[("value", "signup")],
        )
        .await;
    assert!(
        tested_pinterest
            .text
            .contains("Pinterest accepted the test"),
        "{}",
        tested_pinterest.text
    );
    let sent = pinterest.requests();
    assert_eq!(sent[0].query("test"), Some("true"));
    assert_eq!(sent[0].json()["data"][0]["event_name"], "signup");
    // And Snapchat, whose test goes to its validation endpoint.
    assert!(tiktok_page.text.contains("id=\"snapchat-test-value\""));
    let tested_snapchat = app
        .post(
            &owner,
            &format!("{path}/snapchat/test"),
            &[("value", "SIGN_UP")],
        )
        .await;
    assert!(
        tested_snapchat.text.contains("Snapchat accepted the test"),
        "{}",
        tested_snapchat.text
    );
    let sent = snapchat.requests();
    assert_eq!(sent[0].path, "/v3/snap-dash/events/validate");
    assert_eq!(sent[0].json()["data"][0]["event_name"], "SIGN_UP");

    for text in [
        &tiktok_page.text,
        &coded_tiktok.text,
        &tested_reddit.text,
        &tested_pinterest.text,
        &tested_snapchat.text,
    ] {
        for secret in [
            "tt-token-s3cret",
            "rd-token-s3cret",
            "pin-token-s3cret",
            "snap-token-s3cret",
        ] {
            assert!(!text.contains(secret), "{secret} shown");
        }
    }
}

#[tokio::test]
async fn lead_webhooks_are_added_with_their_secret_shown_once_and_removed() {
    let app = app().await;
    let owner = app.owner().await;
    let path = "/projects/alpha/settings/webhooks";
    let empty = app.get(path, &owner.cookie).await;
    assert!(empty.text.contains("No webhooks yet."));
    assert!(
        empty.text.contains(r#"value="lead.created" checked"#),
        "new leads are preselected"
    );

    // Refusals keep what was typed and name the field.
    let no_events = app
        .post(&owner, path, &[("url", "https://crm.example/in")])
        .await;
    assert_eq!(no_events.status, StatusCode::BAD_REQUEST);
    assert!(no_events.text.contains(r#"id="events-problem""#));
    assert!(no_events.text.contains("Choose at least one event"));
    assert!(no_events.text.contains(r#"value="https://crm.example/in""#));
    let bad_url = app
        .post(
            &owner,
            path,
            &[("url", "crm.example"), ("event", "lead.lost")],
        )
        .await;
    assert_eq!(bad_url.status, StatusCode::BAD_REQUEST);
    assert!(paragraph(&bad_url.text, "url-problem").contains("this is not a web address"));
    assert!(bad_url.text.contains(r#"value="lead.lost" checked"#));
    let unknown = app
        .post(
            &owner,
            path,
            &[("url", "https://crm.example"), ("event", "lead.deleted")],
        )
        .await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST);
    assert!(app.store.webhooks(app.alpha.id).await.unwrap().is_empty());

    let added = app
        .post(
            &owner,
            path,
            &[
                ("url", " https://crm.example/in "),
                ("event", "lead.created"),
                ("event", "lead.converted"),
            ],
        )
        .await;
    assert_eq!(added.status, StatusCode::CREATED, "{}", added.text);
    let hooks = app.store.webhooks(app.alpha.id).await.unwrap();
    assert_eq!(hooks.len(), 1);
    let hook = &hooks[0].webhook;
    assert_eq!(hook.url, "https://crm.example/in");
    assert_eq!(hook.events.to_string(), "lead.created, lead.converted");
    let secret = hook.secret.expose();
    assert!(secret.starts_with("whsec_"));
    assert!(added.text.contains(secret), "the generated secret, once");
    assert!(added.text.contains("Copy it now"));
    let page = app.get(path, &owner.cookie).await;
    assert!(!page.text.contains(secret), "never again");
    assert!(page.text.contains("https://crm.example/in"));
    assert!(page.text.contains("Nothing posted yet."));

    // A secret given is kept and not shown.
    let given = app
        .post(
            &owner,
            path,
            &[
                ("url", "https://chat.example"),
                ("event", "lead.lost"),
                ("secret", "whsec_mine"),
            ],
        )
        .await;
    assert_eq!(given.status, StatusCode::CREATED);
    assert!(!given.text.contains("whsec_mine"));
    let hooks = app.store.webhooks(app.alpha.id).await.unwrap();
    assert_eq!(hooks[1].webhook.secret, Secret::new("whsec_mine"));

    // A lead arrives: the page counts the event waiting for the first webhook only.
    app.lead_at(
        &app.alpha,
        json!({"userData": {"firstName": "Ada"}}),
        Utc::now(),
    )
    .await;
    let page = app.get(path, &owner.cookie).await;
    assert!(
        page.text
            .contains(r#"<span class="cell posts"><span>0 delivered</span><span>1 waiting</span>"#),
        "{}",
        page.text
    );

    let first = hooks[0].webhook.id;
    let removed = app
        .post(&owner, &format!("{path}/{first}/remove"), &[])
        .await;
    let page = app.follow(&owner, &removed).await;
    assert!(page.text.contains("Webhook removed"));
    assert!(!page.text.contains("https://crm.example/in"));
    let again = app
        .post(&owner, &format!("{path}/{first}/remove"), &[])
        .await;
    assert_eq!(again.status, StatusCode::NOT_FOUND);
    let garbage = app
        .post(&owner, &format!("{path}/not-an-id/remove"), &[])
        .await;
    assert_eq!(garbage.status, StatusCode::NOT_FOUND);
    assert_eq!(app.store.webhooks(app.alpha.id).await.unwrap().len(), 1);
}

/// A REST hook an automation tool subscribed is listed with the others, marked as such,
/// and an owner can remove it like any webhook.
#[tokio::test]
async fn rest_hooks_are_listed_marked_and_removable() {
    let app = app().await;
    let owner = app.owner().await;
    let path = "/projects/alpha/settings/webhooks";
    let targets = leadtrack_core::target::Targets::default();
    let event = leadtrack_core::webhook::WebhookEvent::LeadConverted;
    let zap = leadtrack_core::webhook::NewWebhook::rest_hook(
        "https://hooks.zapier.com/1",
        &targets,
        event,
    );
    let zap = app
        .store
        .create_webhook(app.alpha.id, zap.unwrap(), Utc::now())
        .await
        .unwrap();
    let page = app.get(path, &owner.cookie).await;
    let row = page
        .text
        .split("<tr>")
        .find(|row| row.contains("hooks.zapier.com"))
        .unwrap();
    assert!(row.contains(r#"<span class="badge muted" title="Added by an automation tool through the API; removed when its target answers 410 Gone">REST hook</span>"#), "{row}");
    assert!(row.contains(r#"<span class="badge">lead.converted</span>"#));

    let removed = app
        .post(&owner, &format!("{path}/{}/remove", zap.id), &[])
        .await;
    assert!(
        app.follow(&owner, &removed)
            .await
            .text
            .contains("Webhook removed")
    );
    assert!(app.store.webhooks(app.alpha.id).await.unwrap().is_empty());
}

#[tokio::test]
async fn keys_are_shown_once_and_refused_once_revoked() {
    let app = app().await;
    let owner = app.owner().await;
    let path = "/projects/alpha/settings/keys";
    let made = app.post(&owner, path, &[]).await;
    assert_eq!(made.status, StatusCode::CREATED);
    assert!(made.text.contains("Copy it now"));
    let keys = app.store.api_keys(app.alpha.id).await.unwrap();
    let prefix = keys[0].prefix.clone();
    let start = made.text.find(&format!(">{prefix}")).unwrap() + 1;
    let key: String = made.text[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    assert_eq!(key.len(), 51);
    assert!(app.store.authenticate(&KeyHash::of(&key)).await.is_ok());
    let page = app.get(path, &owner.cookie).await;
    assert!(!page.text.contains(&key), "shown once");
    assert!(page.text.contains(&format!("{prefix}…")));

    for (bad, status) in [
        ("lt_", StatusCode::BAD_REQUEST),
        ("lt_zzzzzzzz", StatusCode::BAD_REQUEST),
    ] {
        let refused = app
            .post(&owner, &format!("{path}/revoke"), &[("prefix", bad)])
            .await;
        assert_eq!(refused.status, status, "{bad}");
        assert!(refused.text.contains("role=\"alert\""), "{bad}");
    }
    assert!(app.store.authenticate(&KeyHash::of(&key)).await.is_ok());

    let revoked = app
        .post(&owner, &format!("{path}/revoke"), &[("prefix", &prefix)])
        .await;
    let page = app.follow(&owner, &revoked).await;
    assert!(page.text.contains("Key revoked"));
    assert!(page.text.contains("revoked 20"), "with its date");
    assert!(matches!(
        app.store.authenticate(&KeyHash::of(&key)).await,
        Err(StoreError::NotFound(Entity::ApiKey))
    ));
}

#[tokio::test]
async fn members_are_added_changed_and_removed_but_the_last_owner_stays() {
    let app = app().await;
    let owner = app.owner().await;
    add_user(&app, "carol@example.com").await;
    let path = "/projects/alpha/settings/members";
    let role_of = |email: &'static str| {
        let store = app.store.clone();
        let project = app.alpha.id;
        async move {
            store
                .members(project)
                .await
                .unwrap()
                .into_iter()
                .find(|m| m.user.email == email)
                .map(|m| m.role)
        }
    };

    let malformed = app
        .post(&owner, path, &[("email", "nobody"), ("role", "member")])
        .await;
    assert_eq!(malformed.status, StatusCode::BAD_REQUEST);
    assert!(
        paragraph(&malformed.text, "email-problem")
            .ends_with("</span>Enter the email of the person to invite.")
    );
    assert!(malformed.text.contains("value=\"nobody\""));
    let twice = app
        .post(
            &owner,
            path,
            &[("email", "Member@example.com"), ("role", "owner")],
        )
        .await;
    assert_eq!(twice.status, StatusCode::CONFLICT);
    assert_eq!(role_of("member@example.com").await, Some(Role::Member));
    assert!(
        app.store
            .invitations(app.alpha.id)
            .await
            .unwrap()
            .is_empty()
    );

    // Carol has an account: without a mailer, the owner is shown her link to pass on; she
    // signs in, follows it, and joins with one button.
    let invited = app
        .post(
            &owner,
            path,
            &[("email", " Carol@Example.com "), ("role", "member")],
        )
        .await;
    invited.assert_shows(
        StatusCode::CREATED,
        &[
            "This server sends no email: send this link to Carol@Example.com yourself.",
            "Pending invitations",
        ],
    );
    let link = invited
        .text
        .split("http://leads.test/invitations/")
        .nth(1)
        .unwrap();
    let link = format!("/invitations/{}", &link[..64]);
    let carols = app.browser("carol@example.com", "carol password 1").await;
    let join = app.get(&link, &carols.cookie).await;
    join.assert_shows(
        StatusCode::OK,
        &[
            "Olive Owner invited <strong>Carol@Example.com</strong>",
            "Join Alpha</button>",
        ],
    );
    let joined = app.post(&carols, &link, &[]).await;
    assert_eq!(joined.status, StatusCode::SEE_OTHER, "{}", joined.text);
    assert_eq!(joined.header("location"), Some("/projects/alpha/leads"));
    assert_eq!(role_of("carol@example.com").await, Some(Role::Member));
    assert_eq!(
        app.get(&link, &carols.cookie).await.status,
        StatusCode::GONE
    );
    let audit = app
        .get("/projects/alpha/settings/audit", &owner.cookie)
        .await;
    let invitation_at = audit
        .text
        .find("Invited Carol@Example.com as member")
        .unwrap();
    let joined_at = audit
        .text
        .find("carol@example.com joined as member, invited")
        .unwrap();
    assert!(joined_at < invitation_at, "newest first");
    let carol = app.store.user_by_email("carol@example.com").await.unwrap();

    let promoted = app
        .post(
            &owner,
            &format!("{path}/{}", carol.id),
            &[("role", "owner")],
        )
        .await;
    assert!(
        app.follow(&owner, &promoted)
            .await
            .text
            .contains("Role changed.")
    );
    assert_eq!(role_of("carol@example.com").await, Some(Role::Owner));
    let removed = app
        .post(&owner, &format!("{path}/{}/remove", carol.id), &[])
        .await;
    assert!(
        app.follow(&owner, &removed)
            .await
            .text
            .contains("Member removed")
    );
    assert_eq!(role_of("carol@example.com").await, None);

    // Olive is alpha's only owner: she can neither step down nor leave.
    let olive = app.owner.id;
    for (action, pairs) in [("", vec![("role", "member")]), ("/remove", vec![])] {
        let refused = app
            .post(&owner, &format!("{path}/{olive}{action}"), &pairs)
            .await;
        assert_eq!(refused.status, StatusCode::CONFLICT, "{action}");
        assert!(
            refused.text.contains("last owner: nothing was changed"),
            "{}",
            refused.text
        );
        assert_eq!(role_of("owner@example.com").await, Some(Role::Owner));
    }
    let not_a_member = app
        .post(
            &owner,
            &format!("{path}/{}", carol.id),
            &[("role", "owner")],
        )
        .await;
    assert_eq!(not_a_member.status, StatusCode::NOT_FOUND);

    // With a second owner she can, and lands where a member may go.
    let mo = app.member.id;
    app.follow(
        &owner,
        &app.post(&owner, &format!("{path}/{mo}"), &[("role", "owner")])
            .await,
    )
    .await;
    let stepped_down = app
        .post(&owner, &format!("{path}/{olive}"), &[("role", "member")])
        .await;
    assert_eq!(
        stepped_down.header("location"),
        Some("/projects/alpha/leads")
    );
    assert_eq!(role_of("owner@example.com").await, Some(Role::Member));
    assert_eq!(
        app.get(path, &owner.cookie).await.status,
        StatusCode::FORBIDDEN
    );
}

#[tokio::test]
async fn project_settings_are_saved_and_problems_shown_at_their_fields() {
    let app = app().await;
    let owner = app.owner().await;
    let path = "/projects/alpha/settings/project";
    let before = app.store.project("alpha").await.unwrap();

    let refused = app
        .post(
            &owner,
            path,
            &[
                ("name", "Alpha"),
                ("currency", "euro"),
                ("region", "UK"),
                (
                    "allowed_origins",
                    "https://shop.example, shop.example/contact",
                ),
                ("undo_window", "a minute"),
                ("retention_days", "a year"),
            ],
        )
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    let retention = paragraph(&refused.text, "retention_days-problem");
    assert!(
        retention.contains("whole days from 1 to 36500"),
        "{retention}"
    );
    let window = paragraph(&refused.text, "undo_window-problem");
    assert!(window.contains("whole seconds from 0 to 600"), "{window}");
    let currency = paragraph(&refused.text, "currency-problem");
    assert!(currency.contains("must be an ISO 4217 code"), "{currency}");
    let region = paragraph(&refused.text, "region-problem");
    assert!(region.contains("such as DE, GB or US"), "{region}");
    let origins = paragraph(&refused.text, "allowed_origins-problem");
    assert!(
        origins.contains("shop.example/contact") && origins.contains("without a path"),
        "{origins}"
    );
    assert!(
        refused.text.contains("value=\"euro\""),
        "what was typed stays"
    );
    assert_eq!(app.store.project("alpha").await.unwrap(), before);

    let saved = app
        .post(
            &owner,
            path,
            &[
                ("name", " Alpha GmbH "),
                ("currency", "EUR"),
                ("region", "de"),
                (
                    "allowed_origins",
                    "https://Shop.example,\r\nhttps://www.shop.example  https://shop.example",
                ),
                ("meta_event", "Lost"),
                ("consent_ad_user_data", "denied"),
                ("consent_ad_personalization", ""),
                ("undo_window", " 30 "),
                ("retention_days", "90"),
                ("spam_retention_days", "14"),
            ],
        )
        .await;
    let page = app.follow(&owner, &saved).await;
    let retention = app.store.project("alpha").await.unwrap().retention;
    assert_eq!((retention.days, retention.spam_days), (Some(90), 14));
    assert!(
        page.text
            .contains(r#"id="retention_days" name="retention_days" value="90""#)
    );
    assert!(page.text.contains("The rule has not run yet"));
    assert_eq!(
        app.store
            .project("alpha")
            .await
            .unwrap()
            .undo_window_seconds,
        30
    );
    assert!(
        page.text
            .contains(r#"id="undo_window" name="undo_window" value="30""#)
    );
    assert!(
        page.text
            .contains(r#"<option value="denied" selected>Denied</option>"#),
        "the form shows the default consent as kept"
    );
    assert!(page.text.contains("Project settings saved."));
    assert!(
        page.text
            .contains("value=\"https://shop.example, https://www.shop.example\""),
        "the form shows the origins as kept"
    );
    assert!(
        page.text.contains("Alpha GmbH"),
        "the header shows the new name"
    );
    let project = app.store.project("alpha").await.unwrap();
    assert_eq!(
        (
            project.name.as_str(),
            project.currency.as_str(),
            project.region.as_deref()
        ),
        ("Alpha GmbH", "EUR", Some("DE"))
    );
    assert_eq!(
        project.allowed_origins,
        ["https://shop.example", "https://www.shop.example"]
    );
    assert_eq!(
        project.default_consent,
        Consent {
            ad_user_data: Some(ConsentStatus::Denied),
            ad_personalization: None,
        }
    );
    assert_eq!(
        project.lost_mapping,
        LabelMapping {
            meta_event: Some("Lost".into()),
            ..LabelMapping::default()
        },
        "the webhook, unticked, no longer hears of lost leads"
    );
    let cleared = app
        .post(
            &owner,
            path,
            &[("name", "Alpha"), ("currency", "EUR"), ("region", " ")],
        )
        .await;
    assert_eq!(cleared.status, StatusCode::SEE_OTHER);
    let cleared = app.store.project("alpha").await.unwrap();
    assert_eq!(cleared.region, None);
    assert!(
        cleared.allowed_origins.is_empty(),
        "blank accepts any site again"
    );
}

#[tokio::test]
async fn the_install_page_shows_the_snippet_and_sends_a_test_lead() {
    let app = app().await;
    let owner = app.owner().await;
    let page = app
        .get("/projects/alpha/settings/install", &owner.cookie)
        .await;
    assert!(
        page.text.contains(
            "&#60;script src=&#34;http://leads.test/leadtrack.js&#34; data-project-id=&#34;alpha&#34; async&#62;&#60;/script&#62;"
        ),
        "{}",
        page.text
    );
    assert!(
        page.text
            .contains("&lt;form data-leadtrack=\"Contact\"&gt;")
    );
    assert!(page.text.contains("WordPress") && page.text.contains("Google Tag Manager"));

    let sent = app
        .post(&owner, "/projects/alpha/settings/install/test-lead", &[])
        .await;
    assert_eq!(sent.status, StatusCode::SEE_OTHER);
    let location = sent.header("location").unwrap();
    let id: i64 = location
        .strip_prefix("/projects/alpha/leads/")
        .unwrap()
        .parse()
        .unwrap();
    let lead = app
        .store
        .find_lead(
            app.alpha.id,
            &LeadIdentifier::LeadId(leadtrack_core::LeadId(id)),
        )
        .await
        .unwrap();
    assert_eq!(lead.data.form_name(), Some("leadtrack test lead"));
    assert_eq!(lead.data.user("email"), Some("test-lead@leadtrack.example"));
}

/// The number keys 1 to 9 a lead's page gives its labels: `(key, label id)`, in order.
fn keyed(page: &str) -> Vec<(String, String)> {
    page.split("name=\"conversionId\" value=\"")
        .skip(1)
        .filter_map(|rest| {
            let value = &rest[..rest.find('"')?];
            let key = rest[..rest.find('>')?].split("data-key=\"").nth(1)?;
            Some((key[..key.find('"')?].to_owned(), value.to_owned()))
        })
        .filter(|(key, _)| matches!(key.parse::<u8>(), Ok(1..=9)))
        .collect()
}

#[tokio::test]
async fn labels_are_reordered_archived_and_deleted_only_when_unused() {
    let app = app().await;
    let owner = app.owner().await;
    let [a, b, c] = [
        app.label(&app.alpha, "Qualified").await,
        app.label(&app.alpha, "Customer").await,
        app.label(&app.alpha, "Meeting").await,
    ];
    let lead = app
        .lead_at(
            &app.alpha,
            json!({"userData": {"email": "ada@x.io"}}),
            Utc::now(),
        )
        .await;
    let page = format!("/projects/alpha/leads/{lead}");
    let keys = |labels: &[&ConversionLabel]| {
        labels
            .iter()
            .zip(1..)
            .map(|(label, key)| (key.to_string(), label.id.to_string()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        keyed(&app.get(&page, &owner.cookie).await.text),
        keys(&[&a, &b, &c])
    );

    // Meeting moves up one place: its key follows.
    let labels = "/projects/alpha/settings/labels";
    let moved = app
        .post(
            &owner,
            &format!("{labels}/{}/move", c.id),
            &[("direction", "up")],
        )
        .await;
    app.follow(&owner, &moved)
        .await
        .assert_shows(StatusCode::OK, &["Order saved: the number keys follow it."]);
    assert_eq!(
        keyed(&app.get(&page, &owner.cookie).await.text),
        keys(&[&a, &c, &b])
    );

    // Archived, Qualified leaves the rating menus and the keys move up; a lead rated with
    // it keeps it shown, without a key.
    let rated = app
        .lead_at(
            &app.alpha,
            json!({"userData": {"email": "bo@x.io"}}),
            Utc::now(),
        )
        .await;
    app.rate(&app.alpha, rated, ConversionId::Label(a.id), None)
        .await;
    let archived = app
        .post(
            &owner,
            &format!("{labels}/{}/archive", a.id),
            &[("archived", "yes")],
        )
        .await;
    let list = app.follow(&owner, &archived).await;
    list.assert_shows(
        StatusCode::OK,
        &[
            "Label archived",
            "<span class=\"badge muted\">archived</span>",
        ],
    );
    let shown = app.get(&page, &owner.cookie).await.text;
    assert_eq!(keyed(&shown), keys(&[&c, &b]));
    assert!(!shown.contains("Qualified"), "{shown}");
    let rated_page = app
        .get(&format!("/projects/alpha/leads/{rated}"), &owner.cookie)
        .await;
    rated_page.assert_shows(StatusCode::OK, &["Qualified (archived)"]);

    // Used, Qualified cannot be deleted; Customer, never used, can.
    let refused = app
        .post(&owner, &format!("{labels}/{}/delete", a.id), &[])
        .await;
    refused.assert_shows(StatusCode::CONFLICT, &["archive it instead"]);
    let deleted = app
        .post(&owner, &format!("{labels}/{}/delete", b.id), &[])
        .await;
    app.follow(&owner, &deleted)
        .await
        .assert_shows(StatusCode::OK, &["Label deleted."]);
    let left: Vec<_> = app
        .store
        .labels(app.alpha.id)
        .await
        .unwrap()
        .into_iter()
        .map(|label| (label.name, label.archived))
        .collect();
    assert_eq!(
        left,
        [
            ("Qualified".to_owned(), true),
            ("Meeting".to_owned(), false)
        ]
    );
    let member = app.member_browser().await;
    let forbidden = app
        .post(
            &member,
            &format!("{labels}/{}/archive", c.id),
            &[("archived", "yes")],
        )
        .await;
    assert_eq!(forbidden.status, StatusCode::FORBIDDEN);
}

/// An operator who allows `http://` but no range: every address an owner gives is checked
/// by the server's rule when saved, and a Test button calls none the rule refuses, even one
/// saved while it was allowed.
#[tokio::test]
async fn every_address_an_owner_gives_is_checked_by_the_servers_rule() {
    let targets = leadtrack_core::target::Targets::new("", true).unwrap();
    let app = app_with(leadtrack_dashboard::Config {
        outbound: leadtrack_platforms::check::client(targets),
        ..leadtrack_dashboard::Config::default()
    })
    .await;
    let owner = app.owner().await;
    let integrations = "/projects/alpha/settings/integrations";
    let refusals = [
        (
            format!("{integrations}/webhook"),
            vec![("url", "https://169.254.169.254/latest/meta-data/")],
            "the address is link-local (169.254.169.254)",
        ),
        (
            format!("{integrations}/ga4"),
            vec![
                ("measurement_id", "G-1"),
                ("api_secret", "s3cret"),
                ("base_url", "file:///etc/passwd"),
            ],
            "file: addresses are not called",
        ),
        (
            format!("{integrations}/google-ads"),
            vec![
                ("customer_id", "1"),
                ("client_id", "app"),
                ("client_secret", "s3cret"),
                ("refresh_token", "r3fresh"),
                ("token_url", "http://[::ffff:10.0.0.1]/token"),
            ],
            "the address is private (10.0.0.1)",
        ),
        (
            "/projects/alpha/settings/webhooks".to_owned(),
            vec![
                ("url", "http://2130706433:8080/"),
                ("event", "lead.created"),
            ],
            "the address is loopback (127.0.0.1)",
        ),
        (
            "/projects/alpha/settings/alerts/slack".to_owned(),
            vec![("url", "http://127.0.0.1@evil.invalid/hook")],
            "an address with a user name or password before its host is not called",
        ),
    ];
    for (path, fields, why) in refusals {
        let refused = app.post(&owner, &path, &fields).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{path}");
        let shown = refused.text.to_lowercase();
        assert!(
            shown.contains(&why.to_lowercase()),
            "{path}: {}",
            refused.text
        );
    }
    assert_eq!(
        app.store.integrations(app.alpha.id).await.unwrap(),
        Default::default()
    );
    assert!(app.store.webhooks(app.alpha.id).await.unwrap().is_empty());
    assert!(
        app.store
            .chat_channels(app.alpha.id)
            .await
            .unwrap()
            .is_empty()
    );

    // Saved while loopback was allowed, and refused when its Test button is pressed.
    let hook = MockPlatform::start(MockResponse::json(200, json!({"ok": true}))).await;
    let settings = leadtrack_core::integration::IntegrationSettings::Webhook(WebhookSettings {
        url: format!("{}/hook", hook.url()),
        secret: Secret::new("whsec_dash"),
    });
    app.store
        .set_integration(app.alpha.id, settings, Utc::now())
        .await
        .unwrap();
    let tested = app
        .post(&owner, &format!("{integrations}/webhook/test"), &[])
        .await;
    assert!(
        tested.text.contains("the address is loopback (127.0.0.1)"),
        "{}",
        tested.text
    );
    assert!(
        hook.requests().is_empty(),
        "the Test button called a refused address"
    );
}

/// A project without labels offers the two starter labels, in the inbox and on the labels
/// page, to owners; adding them twice adds them once. The inbox offers no number keys for
/// labels it does not have.
#[tokio::test]
async fn a_project_without_labels_offers_qualified_and_customer() {
    let app = app().await;
    let ada = leadtrack_core::testkit::data(json!({"userData": {"firstName": "Ada"}}));
    app.store
        .create_lead(app.alpha.id, ada, Utc::now())
        .await
        .unwrap();
    let owner = app.owner().await;
    let inbox = app.get("/projects/alpha/leads", &owner.cookie).await;
    inbox.assert_shows(
        StatusCode::OK,
        &[
            "No labels yet",
            "action=\"/projects/alpha/settings/labels/starters\"",
        ],
    );
    assert!(!inbox.text.contains("1 to 9 pick a label"));
    let member = app.member_browser().await;
    let theirs = app.get("/projects/alpha/leads", &member.cookie).await;
    assert!(
        theirs
            .text
            .contains("An owner of the project adds them under Settings.")
    );
    assert!(!theirs.text.contains("/settings/labels/starters"));
    let labels_page = app
        .get("/projects/alpha/settings/labels", &owner.cookie)
        .await;
    assert!(labels_page.text.contains("Add Qualified and Customer"));

    let path = "/projects/alpha/settings/labels/starters";
    let added = app.post(&owner, path, &[]).await;
    assert_eq!(
        added.header("location"),
        Some("/projects/alpha/settings/labels?saved=starters")
    );
    let again = app.post(&owner, path, &[]).await;
    assert_eq!(again.status, StatusCode::SEE_OTHER);
    let labels = app.store.labels(app.alpha.id).await.unwrap();
    let made: Vec<_> = labels
        .iter()
        .map(|label| {
            let m = &label.mapping;
            (
                label.name.as_str(),
                label.mark_as_done,
                m.ga4_event.as_deref(),
                m.meta_event.as_deref(),
                m.webhook,
            )
        })
        .collect();
    assert_eq!(
        made,
        [
            ("Qualified", false, Some("qualify_lead"), Some("Lead"), true),
            (
                "Customer",
                true,
                Some("close_convert_lead"),
                Some("Purchase"),
                true
            ),
        ]
    );
    let inbox = app.get("/projects/alpha/leads", &owner.cookie).await;
    assert!(!inbox.text.contains("No labels yet"));
    assert!(inbox.text.contains("1 to 9 pick a label"));
    // A member cannot add them.
    let refused = app.post(&member, path, &[]).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_newly_connected_platform_receives_every_label_unless_unticked() {
    let app = app().await;
    let owner = app.owner().await;
    let path = "/projects/alpha/settings/integrations";
    for name in ["Customer", "Booked"] {
        let new = NewLabel::done(name, LabelMapping::default());
        app.store
            .create_label(app.alpha.id, new, chrono::Utc::now())
            .await
            .unwrap();
    }
    let page = app.get(path, &owner.cookie).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "<label for=\"ga4-send-labels-manual\">Send every label's ratings here (2 labels)</label>",
            "<input type=\"checkbox\" id=\"webhook-send-labels-manual\" name=\"send_labels\" value=\"on\" checked",
            // Without the server's OAuth app, the page says signing in can be turned on.
            "“Connect with Google” can be turned on for this server",
            "/blob/main/docs/platform-apps.md\">docs/platform-apps.md</a>",
        ],
    );
    let sends = async |app: &App| -> Vec<(Option<String>, bool)> {
        let labels = app.store.labels(app.alpha.id).await.unwrap();
        labels
            .into_iter()
            .map(|l| (l.mapping.ga4_event, l.mapping.webhook))
            .collect()
    };
    // Ticked (as the page has it): each label sends GA4's event for a customer.
    let ga4 = [
        ("measurement_id", "G-FIRST"),
        ("api_secret", "s"),
        ("send_labels", "on"),
    ];
    let connected = app.post(&owner, &format!("{path}/ga4"), &ga4).await;
    assert_eq!(connected.status, StatusCode::SEE_OTHER);
    let event = Some("close_convert_lead".to_owned());
    assert_eq!(
        sends(&app).await,
        [(event.clone(), false), (event.clone(), false)]
    );
    // Unticked: the labels stay as they are.
    let hook = [
        ("url", "https://hooks.example.com/leadtrack"),
        ("secret", "whsec_x"),
    ];
    let connected = app.post(&owner, &format!("{path}/webhook"), &hook).await;
    assert_eq!(connected.status, StatusCode::SEE_OTHER);
    assert_eq!(sends(&app).await, [(event.clone(), false), (event, false)]);
    let page = app.get(path, &owner.cookie).await;
    for connected in ["ga4-send-labels", "webhook-send-labels"] {
        assert!(!page.text.contains(connected), "{connected}: connected now");
    }
    assert!(page.text.contains("meta-send-labels-manual"), "Meta is not");

    // Google Ads needs an action of the owner's own account: the labels say so plainly.
    let google = leadtrack_core::testkit::all_integrations()
        .into_iter()
        .find(|settings| settings.kind() == leadtrack_core::types::IntegrationKind::GoogleAds);
    let now = chrono::Utc::now();
    app.store
        .set_integration(app.alpha.id, google.unwrap(), now)
        .await
        .unwrap();
    let labels = app
        .get("/projects/alpha/settings/labels", &owner.cookie)
        .await;
    labels.assert_shows(
        StatusCode::OK,
        &["<li><span class=\"platform\">Google Ads</span> <span class=\"muted\">sends nothing until a conversion action is picked on the label's page</span></li>"],
    );
}

/// Each platform whose token is made by hand (no sign-in) links to where it is made, under
/// the token's field.
#[tokio::test]
async fn a_token_made_by_hand_links_to_where_the_platform_makes_it() {
    let app = app().await;
    let owner = app.owner().await;
    let page = app
        .get("/projects/alpha/settings/integrations", &owner.cookie)
        .await;
    assert_eq!(page.status, StatusCode::OK);
    for (title, link) in [
        (
            "TikTok",
            "https://ads.tiktok.com/help/article/how-to-postback-signals-through-events-api",
        ),
        ("Reddit", "https://ads-api.reddit.com/docs/v3/"),
        (
            "Pinterest",
            "https://help.pinterest.com/en/business/article/conversions-api",
        ),
        (
            "Snapchat",
            "https://developers.snap.com/api/marketing-api/Conversions-API/GetStarted",
        ),
    ] {
        let anchor = format!("<a href=\"{link}\">How {title} makes this token</a>");
        assert_eq!(page.text.matches(&anchor).count(), 1, "{title}");
    }
    assert_eq!(page.text.matches("makes this token</a>").count(), 4);
}
