//! The capture script in real headless browsers, Chromium (through chromedriver) and Firefox
//! ESR (through geckodriver): every check runs in both (`support/browser.rs`).

#![cfg(leadtrack_browser)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use chrono::Utc;
use fantoccini::Locator;
use leadtrack::client::Client as ApiClient;
use leadtrack::core::api::{Lead, LeadId, LeadIdentifier};
use leadtrack::core::project::{NewProject, Project};
use leadtrack::core::request::LeadQuery;
use leadtrack::core::types::{Consent, ConsentStatus};
use leadtrack::core::{Admin, LeadStore};
use leadtrack::sqlite::SqliteStore;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use warp::Filter;

use crate::support::browser::{Browser, Engine, in_both_browsers, serve};

// Each check, once in Chromium and once in Firefox.
in_both_browsers!(
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    a_visit_and_a_double_submit_make_one_fully_attributed_lead,
    a_page_on_another_origin_passes_the_preflight,
    a_lead_sent_while_the_api_is_down_arrives_once_after_it_is_back,
    route_changes_late_forms_and_every_platforms_click_id_reach_the_lead,
    consent_comes_from_consent_mode_or_init_and_wait_for_consent_sets_no_cookie,
    bots_are_held_as_spam_and_people_are_not,
);

/// The API (the standalone app, in this process) over a fresh store, counting the CORS
/// preflights of createLead it answers.
struct Api {
    base_url: String,
    store: SqliteStore,
    project: Project,
    key: String,
    preflights: Arc<AtomicUsize>,
}

/// A fresh store with the project `prj_browser`, and a key of it.
async fn store_with_project() -> (SqliteStore, Project, String) {
    let store = SqliteStore::open_temporary().await.expect("a store");
    let project = store
        .create_project(
            NewProject {
                public_id: Some("prj_browser".into()),
                name: "Browser".into(),
                currency: None,
            },
            Utc::now(),
        )
        .await
        .expect("a project");
    let key = store
        .issue_api_key(project.id, Utc::now())
        .await
        .expect("a key")
        .key;
    (store, project, key)
}

async fn api() -> Api {
    let (store, project, key) = store_with_project().await;
    let preflights = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&preflights);
    let count = warp::method()
        .and(warp::path::full())
        .map(
            move |method: warp::http::Method, path: warp::path::FullPath| {
                if method == warp::http::Method::OPTIONS && path.as_str() == "/api/leads/createLead"
                {
                    counter.fetch_add(1, Ordering::SeqCst);
                }
            },
        )
        .untuple_one();
    let addr = serve(count.and(leadtrack_server::app(store.clone(), Default::default()))).await;
    Api {
        base_url: format!("http://{addr}"),
        store,
        project,
        key,
        preflights,
    }
}

impl Api {
    fn client(&self) -> ApiClient {
        ApiClient::new(&self.base_url).with_api_key(&self.key)
    }

    /// Waits until `count` more writes than `before` reached the store: each create is one.
    async fn wait_for_writes(&self, before: u64, count: u64) {
        let deadline = Instant::now() + Duration::from_secs(15);
        while self.store.write_stats().writes < before + count {
            assert!(
                Instant::now() < deadline,
                "expected {count} writes, saw {}",
                self.store.write_stats().writes - before
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

/// Waits as a person does before sending a form: past the 2 seconds within which the
/// capture script's time to fill marks a bot.
async fn as_a_person() {
    tokio::time::sleep(Duration::from_millis(2_100)).await;
}

/// Fills the demo contact form, as a person types it.
async fn fill_form(browser: &Browser) {
    for (name, value) in [
        ("first_name", "Ada"),
        ("last_name", "Lovelace"),
        ("email", "ada@example.com"),
        ("phone", "+44 20 7946 0958"),
        ("company", "Analytical Engines"),
        ("budget", "10k"),
        ("message", "Please call me back"),
    ] {
        browser
            .client
            .find(Locator::Css(&format!("[name={name}]")))
            .await
            .expect("a form field")
            .send_keys(value)
            .await
            .expect("typing");
    }
    as_a_person().await;
}

const LANDING_QUERY: &str =
    "gclid=TESTGCLID&fbclid=TESTFBCLID&utm_source=newsletter&utm_medium=email&utm_campaign=spring";

async fn a_visit_and_a_double_submit_make_one_fully_attributed_lead(engine: Engine) {
    let browser = Browser::start_in(engine).await;
    let api = api().await;
    let base = &api.base_url;

    // Cookies other tags set, before the landing page loads.
    let landing = format!("{base}/demo?projectId=prj_browser&{LANDING_QUERY}");
    let cookies = [
        ("_ga", "GA1.1.123456789.1700000000"),
        (
            "_ga_TEST123",
            "GS2.1.s1700000123$o5$g1$t1700000456$j0$l0$h0",
        ),
        ("_fbp", "fb.1.1700000000000.987654321"),
    ];
    visit(&browser, base, &cookies, &landing).await;
    browser.click_and_wait("contact", "contact-form").await;
    wait_for_script(&browser).await;
    assert!(
        !browser
            .client
            .current_url()
            .await
            .unwrap()
            .as_str()
            .contains("gclid"),
        "the form is on another page than the click"
    );
    // The contact page shows what the script captured, live. The panel re-renders every
    // half second, so an element handle could go stale between finding and reading it:
    // read the text in one script call.
    let shown = |id: &'static str| {
        let browser = &browser;
        async move {
            let text = browser
                .client
                .execute(
                    "const e = document.getElementById(arguments[0]); return e ? e.textContent : '';",
                    vec![id.into()],
                )
                .await
                .expect("read the panel");
            text.as_str().unwrap_or_default().to_owned()
        }
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while shown("cap-gclid").await != "TESTGCLID" {
        assert!(Instant::now() < deadline, "the panel shows the gclid");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(shown("cap-utm_source").await, "newsletter");
    assert_eq!(shown("cap-cid").await, "123456789.1700000000");
    assert!(shown("cap-fbc").await.ends_with(".TESTFBCLID"));
    assert!(
        shown("captured-flow")
            .await
            .starts_with("newsletter / email · spring"),
        "{}",
        shown("captured-flow").await
    );
    fill_form(&browser).await;

    // Two submit events in a row, as a double click sends them; the page reports the lead.
    // They run after the script call has answered: a submit that unloads the page while
    // the driver waits for its answer can lose it (Firefox's "Failed to decode response
    // from marionette").
    let before = api.store.write_stats().writes;
    browser
        .client
        .execute(
            "setTimeout(() => { const form = document.getElementById('contact-form'); \
             form.requestSubmit(); form.requestSubmit(); }, 0);",
            vec![],
        )
        .await
        .expect("submit twice");
    browser.wait_for("thanks").await;
    api.wait_for_writes(before, 2).await;
    // Read in one script call: an element handle would go stale if the panel re-rendered.
    let link = browser
        .client
        .execute(
            "const a = document.querySelector('#result a'); return a ? a.href : null;",
            vec![],
        )
        .await
        .expect("read the link");
    let link = link.as_str().expect("a link to the lead").to_owned();

    let page = api
        .client()
        .get_leads(&LeadQuery::default())
        .await
        .expect("list leads");
    assert_eq!(page.total, 1, "a double submit is one lead");
    let lead = &page.leads[0];
    assert_eq!(
        link,
        format!("{base}/projects/prj_browser/leads/{}", lead.id)
    );
    // The page reads the lead back, as the API stored it.
    let deadline = Instant::now() + Duration::from_secs(10);
    let stored: Value = loop {
        let text = shown("stored").await;
        if let Ok(stored) = serde_json::from_str(&text) {
            break stored;
        }
        assert!(
            Instant::now() < deadline,
            "the stored lead is shown: {text}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(stored["id"], json!(lead.id.0));
    assert_eq!(stored["email"], "ada@example.com");
    assert_eq!(stored["attributionData"]["gclid"], "TESTGCLID");
    assert_contact(lead);
    assert_attribution(lead);
    assert_channel_flow(lead, &landing);
    assert_device(&api, lead.id, engine).await;
    browser.close().await;
}

/// The contact form's fields, as the lead holds them.
fn assert_contact(lead: &Lead) {
    assert_eq!(lead.form_name.as_deref(), Some("Demo contact"));
    assert_eq!(
        (
            lead.first_name.as_deref(),
            lead.last_name.as_deref(),
            lead.email.as_deref(),
            lead.phone.as_deref(),
            lead.company_name.as_deref()
        ),
        (
            Some("Ada"),
            Some("Lovelace"),
            Some("ada@example.com"),
            Some("+44 20 7946 0958"),
            Some("Analytical Engines")
        )
    );
    let form = lead.form_data.as_ref().expect("form data");
    assert_eq!(form["formMessage"], "Please call me back");
    assert_eq!(form["formFields"]["budget"], "10k");
    assert!(
        form["uniqueEventId"]
            .as_str()
            .is_some_and(|id| id.len() >= 8),
        "{form:?}"
    );
}

/// Every click id and campaign of the visit, kept across the navigation, with `_fbc`
/// built from `fbclid`.
fn assert_attribution(lead: &Lead) {
    let attribution = lead.attribution_data.as_ref().expect("attribution");
    assert_eq!(
        attribution["gclid"], "TESTGCLID",
        "kept across the navigation"
    );
    assert_eq!(attribution["cid"], "123456789.1700000000");
    assert_eq!(attribution["sid"], "1700000123");
    assert_eq!(attribution["fbp"], "fb.1.1700000000000.987654321");
    let fbc = attribution["fbc"].as_str().expect("fbc built from fbclid");
    let parts: Vec<&str> = fbc.split('.').collect();
    assert_eq!(
        (parts.len(), parts[0], parts[1], parts[3]),
        (4, "fb", "1", "TESTFBCLID"),
        "{fbc}"
    );
    let built_at = parts[2].parse::<i64>().expect("a millisecond timestamp");
    assert!(
        (Utc::now().timestamp_millis() - built_at).abs() < 120_000,
        "{fbc}"
    );
    assert_eq!(
        (
            attribution["utm_source"].as_str(),
            attribution["utm_medium"].as_str(),
            attribution["utm_campaign"].as_str()
        ),
        (Some("newsletter"), Some("email"), Some("spring"))
    );
}

/// One session, one channel: the landing page's campaign.
fn assert_channel_flow(lead: &Lead, landing: &str) {
    let flow: Value =
        serde_json::from_str(lead.channel_flow.as_deref().expect("a channel flow")).expect("JSON");
    let entries = flow.as_array().expect("an array");
    assert_eq!(entries.len(), 1, "one session, one channel: {flow}");
    assert_eq!(
        entries[0]["ch"],
        json!({"s": "newsletter", "m": "email", "cm": "spring", "ct": "", "tm": ""})
    );
    assert_eq!(entries[0]["lp"], landing);
    assert!(
        (Utc::now().timestamp_millis() - entries[0]["t"].as_i64().expect("a timestamp")).abs()
            < 120_000
    );
}

/// The address and user agent the server filled in.
async fn assert_device(api: &Api, lead: LeadId, engine: Engine) {
    let stored = api
        .store
        .find_lead(api.project.id, &LeadIdentifier::LeadId(lead))
        .await
        .unwrap();
    assert_eq!(
        stored.data.device_data.ip_address.as_deref(),
        Some("127.0.0.1"),
        "filled by the server"
    );
    let agent = stored
        .data
        .device_data
        .user_agent
        .clone()
        .unwrap_or_default();
    let browser_name = match engine {
        Engine::Chromium => "Chrome",
        Engine::Firefox => "Firefox",
    };
    assert!(agent.contains(browser_name), "{agent}");
}

async fn a_page_on_another_origin_passes_the_preflight(engine: Engine) {
    let browser = Browser::start_in(engine).await;
    let api = api().await;
    let site = serve(
        leadtrack_server::demo_allowing([api.base_url.clone()]).recover(|_| async {
            Ok::<_, std::convert::Infallible>(warp::http::StatusCode::NOT_FOUND)
        }),
    )
    .await;
    let page_origin = format!("http://{site}");
    assert_ne!(page_origin, api.base_url, "two origins");

    let landing = format!(
        "{page_origin}/demo/contact?projectId=prj_browser&api={}&utm_source=partner&utm_medium=referral",
        api.base_url
    );
    browser.client.goto(&landing).await.expect("open the page");
    wait_for_script(&browser).await;

    // The script's own API, from the page's origin to the API's.
    let answer = browser
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1];
             leadtrack.trackLead({userData: {email: 'grace@example.com', firstName: 'Grace'}, formData: {formName: 'Callback'}})
               .then(id => done({id}), error => done({error: String(error)}));",
            vec![],
        )
        .await
        .expect("trackLead settles");
    let id = answer["id"]
        .as_i64()
        .map(LeadId)
        .unwrap_or_else(|| panic!("trackLead failed: {answer}"));
    assert!(
        api.preflights.load(Ordering::SeqCst) >= 1,
        "the JSON post was preflighted"
    );
    let lead = api
        .client()
        .get_lead(&LeadIdentifier::LeadId(id))
        .await
        .expect("the lead");
    assert_eq!(
        (lead.email.as_deref(), lead.form_name.as_deref()),
        (Some("grace@example.com"), Some("Callback"))
    );
    let attribution = lead.attribution_data.expect("attribution");
    assert_eq!(
        (
            attribution["utm_source"].as_str(),
            attribution["utm_medium"].as_str()
        ),
        (Some("partner"), Some("referral"))
    );

    // And the form on that page.
    fill_form(&browser).await;
    let before = api.store.write_stats().writes;
    browser.click_and_wait("send", "thanks").await;
    api.wait_for_writes(before, 1).await;
    let found = api
        .client()
        .get_lead(&LeadIdentifier::Email("ada@example.com".into()))
        .await
        .expect("the form's lead");
    assert_eq!(found.form_name.as_deref(), Some("Demo contact"));

    // The landing page's newsletter form navigates away as it submits: the request
    // outlives the page.
    let landing = format!(
        "{page_origin}/demo?projectId=prj_browser&api={}",
        api.base_url
    );
    browser
        .client
        .goto(&landing)
        .await
        .expect("open the landing page");
    wait_for_script(&browser).await;
    browser
        .client
        .find(Locator::Id("newsletter-email"))
        .await
        .expect("the newsletter form")
        .send_keys("reader@example.com")
        .await
        .expect("typing");
    as_a_person().await;
    let before = api.store.write_stats().writes;
    browser.click_and_wait("subscribe", "thanks-page").await;
    api.wait_for_writes(before, 1).await;
    let reader = api
        .client()
        .get_lead(&LeadIdentifier::Email("reader@example.com".into()))
        .await
        .expect("the newsletter's lead");
    assert_eq!(reader.form_name.as_deref(), Some("Newsletter"));
    assert_eq!(
        api.client()
            .get_leads(&LeadQuery::default())
            .await
            .unwrap()
            .total,
        3
    );

    browser.close().await;
}

/// Opens the site at `base`, sets `cookies` there (as other tags would), then opens `url`
/// and waits for its script.
async fn visit(browser: &Browser, base: &str, cookies: &[(&str, &str)], url: &str) {
    browser
        .client
        .goto(&format!("{base}/health"))
        .await
        .expect("open the site");
    for (name, value) in cookies {
        browser.cookie(name, value).await;
    }
    browser.client.goto(url).await.expect("open the page");
    wait_for_script(browser).await;
}

/// Waits until the page's script has loaded.
async fn wait_for_script(browser: &Browser) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let loaded = browser
            .client
            .execute("return typeof window.leadtrack === 'object';", vec![])
            .await
            .expect("run JavaScript");
        if loaded == json!(true) {
            return;
        }
        assert!(Instant::now() < deadline, "leadtrack.js did not load");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// The API of `store`, reached through an address the test holds for the whole test, and
/// the switch that takes it down: while down, each connection to the address (and each
/// already open) is closed at once, which to a browser is an API that is not there. The
/// address stays the test's, so no other socket can take its port meanwhile.
async fn api_with_a_switch(store: SqliteStore) -> (String, watch::Sender<bool>) {
    let api = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let api_addr = api.local_addr().unwrap();
    let app = leadtrack_server::app(store, Default::default());
    tokio::spawn(leadtrack_server::serve_app(
        api,
        app,
        std::future::pending(),
    ));
    let front = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", front.local_addr().unwrap());
    let (switch, up) = watch::channel(true);
    tokio::spawn(async move {
        while let Ok((mut client, _)) = front.accept().await {
            let mut up = up.clone();
            if !*up.borrow() {
                continue;
            }
            tokio::spawn(async move {
                let Ok(mut api) = TcpStream::connect(api_addr).await else {
                    return;
                };
                tokio::select! {
                    _ = tokio::io::copy_bidirectional(&mut client, &mut api) => {}
                    _ = up.wait_for(|up| !up) => {}
                }
            });
        }
    });
    (url, switch)
}

/// The leads of `store`'s project `prj_browser`, once there are `count` (15 s at most).
async fn wait_for_leads(
    store: &SqliteStore,
    project: &Project,
    count: u64,
) -> Vec<leadtrack::core::lead::StoredLead> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let page = store
            .list_leads(project.id, &LeadQuery::default())
            .await
            .expect("list leads");
        if page.total >= count {
            assert_eq!(page.total, count, "no more leads than expected");
            return page.leads;
        }
        assert!(
            Instant::now() < deadline,
            "expected {count} leads, saw {}",
            page.total
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// What `script` (a function body) returns in the page.
async fn run(browser: &Browser, script: &str) -> Value {
    browser
        .client
        .execute(script, vec![])
        .await
        .unwrap_or_else(|err| panic!("{script}: {err}"))
}

async fn a_lead_sent_while_the_api_is_down_arrives_once_after_it_is_back(engine: Engine) {
    let browser = Browser::start_in(engine).await;
    let (store, project, _) = store_with_project().await;
    let (api_url, switch) = api_with_a_switch(store.clone()).await;
    let site = serve(
        leadtrack_server::demo_allowing([api_url.clone()]).recover(|_| async {
            Ok::<_, std::convert::Infallible>(warp::http::StatusCode::NOT_FOUND)
        }),
    )
    .await;
    let contact = format!("http://{site}/demo/contact?projectId=prj_browser&api={api_url}");
    browser.client.goto(&contact).await.expect("open the form");
    wait_for_script(&browser).await;

    // The API goes away; the visitor sends the form, and the page says it waits.
    switch.send_replace(false);
    assert!(
        reqwest::get(format!("{api_url}/health")).await.is_err(),
        "the API is down"
    );
    fill_form(&browser).await;
    browser.click_and_wait("send", "queued").await;
    let kept = run(
        &browser,
        "return Object.keys(JSON.parse(localStorage.getItem('lt_outbox') || '{}')).length;",
    )
    .await;
    assert_eq!(kept, json!(1), "the lead waits in the outbox");

    // The API comes back on the same address; the next page the visitor opens sends it.
    switch.send_replace(true);
    browser
        .client
        .goto(&format!(
            "http://{site}/demo?projectId=prj_browser&api={api_url}"
        ))
        .await
        .expect("open another page");
    wait_for_script(&browser).await;
    let leads = wait_for_leads(&store, &project, 1).await;
    assert_eq!(leads[0].data.user("email"), Some("ada@example.com"));
    assert_eq!(leads[0].data.form_data["formName"], json!("Demo contact"));
    let deadline = Instant::now() + Duration::from_secs(10);
    while run(&browser, "return leadtrack.outbox().length;").await != json!(0) {
        assert!(
            Instant::now() < deadline,
            "the outbox empties once the lead is acknowledged"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Another page view sends nothing more: exactly one lead, written once.
    let writes = store.write_stats().writes;
    browser.client.refresh().await.expect("reload");
    wait_for_script(&browser).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(store.write_stats().writes, writes, "nothing sent again");
    wait_for_leads(&store, &project, 1).await;

    // A lead the API refuses for good (here: an unknown project) is not kept for later.
    let refused = browser
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1];
             leadtrack.init({projectId: 'prj_unknown'});
             leadtrack.trackLead({userData: {email: 'x@example.com'}})
               .then(() => done('sent'), e => done({queued: !!e.queued, outbox: leadtrack.outbox().length}));",
            vec![],
        )
        .await
        .expect("trackLead settles");
    assert_eq!(refused, json!({"queued": false, "outbox": 0}));
    browser.close().await;
}

async fn route_changes_late_forms_and_every_platforms_click_id_reach_the_lead(engine: Engine) {
    let browser = Browser::start_in(engine).await;
    let api = api().await;
    let base = &api.base_url;
    // Reddit's, Snapchat's (spelled as some links do), Pinterest's and X's click ids in the
    // URL, and the platforms' pixels' cookies.
    let landing = format!(
        "{base}/demo?projectId=prj_browser&ttclid=TTCLID1&li_fat_id=LIFAT1&rdt_cid=RDT1\
         &sccid=SNAP1&epik=EPIK1&twclid=TW1"
    );
    let pixels = [
        ("_uetmsclkid", "_uetUETCLICK1"),
        ("_ttp", "TTP1"),
        ("_rdt_uuid", "RDTUUID1"),
        ("_scid", "SCID1"),
        ("_epik", "EPIKCOOKIE1"),
    ];
    visit(&browser, base, &pixels, &landing).await;

    // Meta's pixel is not on the page: a browser id of its format is made.
    let fbp = run(
        &browser,
        "return document.cookie.match(/(?:^|; )_fbp=([^;]*)/)[1];",
    )
    .await;
    let fbp = fbp.as_str().expect("an _fbp cookie").to_owned();
    let parts: Vec<&str> = fbp.split('.').collect();
    assert_eq!((parts.len(), parts[0], parts[1]), (4, "fb", "1"), "{fbp}");
    let made_at: i64 = parts[2].parse().expect("milliseconds");
    assert!(
        (Utc::now().timestamp_millis() - made_at).abs() < 120_000,
        "{fbp}"
    );
    assert!(parts[3].parse::<u32>().is_ok(), "{fbp}");

    // A single-page app moves to a route with a new Google click.
    run(
        &browser,
        "history.pushState({}, '', '/demo/app?gclid=SPAGCLID1'); return 1;",
    )
    .await;
    let flow = run(&browser, "return leadtrack.channelFlow();").await;
    let channels: Vec<&Value> = flow.as_array().unwrap().iter().map(|e| &e["ch"]).collect();
    assert_eq!(
        channels,
        vec![
            &json!({"s": "tiktok", "m": "cpc", "cm": "", "ct": "", "tm": ""}),
            &json!({"s": "google", "m": "cpc", "cm": "", "ct": "", "tm": ""})
        ]
    );
    // Moving within the app, back included, adds no entry.
    run(
        &browser,
        "history.pushState({}, '', '/demo/app/pricing'); history.back(); return 1;",
    )
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let flow = run(&browser, "return leadtrack.channelFlow().length;").await;
    assert_eq!(flow, json!(2));

    // A form the app renders after load is captured too.
    let before = api.store.write_stats().writes;
    run(
        &browser,
        "const form = document.createElement('form');
         form.setAttribute('data-leadtrack', 'Late form');
         form.innerHTML = '<input type=email name=email value=late@example.com><button>Send</button>';
         form.addEventListener('submit', e => e.preventDefault());
         document.body.appendChild(form);
         form.requestSubmit();
         return 1;",
    )
    .await;
    api.wait_for_writes(before, 1).await;
    let lead = api
        .client()
        .get_lead(&LeadIdentifier::Email("late@example.com".into()))
        .await
        .expect("the late form's lead");
    assert_eq!(lead.form_name.as_deref(), Some("Late form"));
    let attribution = lead.attribution_data.expect("attribution");
    for (key, value) in [
        ("gclid", "SPAGCLID1"),
        ("msclkid", "UETCLICK1"),
        ("ttclid", "TTCLID1"),
        ("li_fat_id", "LIFAT1"),
        ("rdt_cid", "RDT1"),
        ("ScCid", "SNAP1"),
        ("epik", "EPIK1"),
        ("twclid", "TW1"),
        ("_ttp", "TTP1"),
        ("_rdt_uuid", "RDTUUID1"),
        ("_scid", "SCID1"),
        ("_epik", "EPIKCOOKIE1"),
        ("fbp", fbp.as_str()),
    ] {
        assert_eq!(attribution[key], json!(value), "{key}: {attribution:?}");
    }
    let stored_flow: Value =
        serde_json::from_str(lead.channel_flow.as_deref().expect("a flow")).unwrap();
    assert_eq!(stored_flow.as_array().map(Vec::len), Some(2));
    browser.close().await;
}

async fn consent_comes_from_consent_mode_or_init_and_wait_for_consent_sets_no_cookie(
    engine: Engine,
) {
    let browser = Browser::start_in(engine).await;
    let api = api().await;
    let base = &api.base_url;
    // A page without the tag: the site loads the script itself, waiting for consent.
    browser
        .client
        .goto(&format!("{base}/health?gclid=WAITGCLID&utm_source=wait"))
        .await
        .expect("open a page");
    browser
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1];
             const script = document.createElement('script');
             script.src = '/leadtrack.js';
             script.onload = () => { leadtrack.init({projectId: 'prj_browser', waitForConsent: true}); done(1); };
             document.head.appendChild(script);",
            vec![],
        )
        .await
        .expect("load the script");
    assert_eq!(
        run(&browser, "return document.cookie;").await,
        json!(""),
        "no cookie yet"
    );
    assert_eq!(
        run(&browser, "return leadtrack.attribution().gclid;").await,
        json!("WAITGCLID"),
        "kept in memory"
    );

    // Google Consent Mode says denied by default, then the visitor allows user data.
    run(
        &browser,
        "window.dataLayer = window.dataLayer || [];
         function gtag() { dataLayer.push(arguments); }
         gtag('consent', 'default', {ad_user_data: 'denied', ad_personalization: 'denied', ad_storage: 'denied'});
         gtag('consent', 'update', {ad_user_data: 'granted'});
         return 1;",
    )
    .await;
    let track = |email: &str| {
        format!(
            "const done = arguments[arguments.length - 1];
             leadtrack.trackLead({{userData: {{email: '{email}'}}}}).then(id => done(id), e => done(String(e)));"
        )
    };
    let first = browser
        .client
        .execute_async(&track("mode@example.com"), vec![])
        .await
        .expect("trackLead");
    let first = LeadId(first.as_i64().unwrap_or_else(|| panic!("{first}")));
    assert_eq!(
        run(&browser, "return document.cookie;").await,
        json!(""),
        "ad_storage is denied: still no cookie"
    );

    // A consent banner answers through init: its answer wins, and the cookies are set now.
    run(
        &browser,
        "leadtrack.init({consent: {adUserData: false, adPersonalization: true}}); return 1;",
    )
    .await;
    let cookies = run(&browser, "return document.cookie;").await;
    let cookies = cookies.as_str().unwrap();
    assert!(cookies.contains("lt_gclid=WAITGCLID"), "{cookies}");
    assert!(cookies.contains("lt_channelflow="), "{cookies}");
    assert!(cookies.contains("_fbp=fb.1."), "{cookies}");
    let second = browser
        .client
        .execute_async(&track("banner@example.com"), vec![])
        .await
        .expect("trackLead");
    let second = LeadId(second.as_i64().unwrap_or_else(|| panic!("{second}")));

    let consent_of = |id| {
        let store = api.store.clone();
        let project = api.project.id;
        async move {
            store
                .find_lead(project, &LeadIdentifier::LeadId(id))
                .await
                .unwrap()
                .data
        }
    };
    let data = consent_of(first).await;
    assert_eq!(
        data.consent,
        Consent {
            ad_user_data: Some(ConsentStatus::Granted),
            ad_personalization: Some(ConsentStatus::Denied),
        }
    );
    assert_eq!(data.attribution_data["gclid"], json!("WAITGCLID"));
    assert_eq!(
        consent_of(second).await.consent,
        Consent {
            ad_user_data: Some(ConsentStatus::Denied),
            ad_personalization: Some(ConsentStatus::Granted),
        }
    );
    browser.close().await;
}

/// The contact form's honeypot is off-screen, hidden from assistive tech, nameless and out
/// of the tab order; a bot that fills it, or sends the form at once, leaves a lead held as
/// spam with its reason, and a person typing leaves an open one.
async fn bots_are_held_as_spam_and_people_are_not(engine: Engine) {
    let browser = Browser::start_in(engine).await;
    let api = api().await;
    let base = &api.base_url;
    let contact = format!("{base}/demo/contact?projectId=prj_browser");
    visit(&browser, base, &[], &contact).await;
    wait_for_script(&browser).await;
    let honeypot = run(
        &browser,
        "const hp = document.querySelector('#contact-form [data-leadtrack-honeypot]');
         const box = hp.getBoundingClientRect();
         return {offscreen: box.right <= 0, hidden: !!hp.closest('[aria-hidden=true]'),
                 tabIndex: hp.tabIndex, named: hp.hasAttribute('name')};",
    )
    .await;
    assert_eq!(
        honeypot,
        json!({"offscreen": true, "hidden": true, "tabIndex": -1, "named": false})
    );
    // Tabbing from the first field through the whole form never reaches it.
    run(
        &browser,
        "document.querySelector('#contact-form [name=first_name]').focus(); return 1;",
    )
    .await;
    for _ in 0..12 {
        let active = browser.client.active_element().await.expect("the focus");
        active.send_keys("\u{E004}").await.expect("Tab");
        let on_it = run(
            &browser,
            "return document.activeElement.hasAttribute('data-leadtrack-honeypot');",
        )
        .await;
        assert_eq!(on_it, json!(false), "Tab reached the honeypot");
    }

    let send = |setup: String| {
        let browser = &browser;
        let contact = &contact;
        async move {
            browser
                .client
                .goto(contact)
                .await
                .expect("the contact page");
            wait_for_script(browser).await;
            run(browser, &setup).await;
        }
    };
    let fill = "const f = document.getElementById('contact-form');
        f.querySelector('[name=email]').value = 'bot' + Math.random() + '@example.com';
        f.querySelector('[name=first_name]').value = 'Bot';";
    let before = api.store.write_stats().writes;
    // A bot that fills every field, honeypot included, but takes its time.
    let filled = format!(
        "{fill} f.querySelector('[data-leadtrack-honeypot]').value = 'http://spam.example'; return 1;"
    );
    send(filled).await;
    as_a_person().await;
    run(
        &browser,
        "document.getElementById('contact-form').requestSubmit(); return 1;",
    )
    .await;
    api.wait_for_writes(before, 1).await;
    // A bot that sends at once.
    let hasty = format!("{fill} f.requestSubmit(); return 1;");
    send(hasty).await;
    api.wait_for_writes(before, 2).await;
    // A person.
    send("return 1;".to_owned()).await;
    fill_form(&browser).await;
    browser.click_and_wait("send", "thanks").await;
    api.wait_for_writes(before, 3).await;

    let spam = LeadQuery {
        status: Some(vec![leadtrack::core::types::LeadStatus::Spam]),
        ..LeadQuery::default()
    };
    let held = api.client().get_leads(&spam).await.expect("spam leads");
    let reasons: Vec<Option<String>> = held
        .leads
        .iter()
        .map(|lead| lead.spam_reason.clone())
        .collect();
    assert_eq!(
        reasons,
        [
            Some("sent within 2 seconds of the form showing".to_owned()),
            Some("honeypot field filled".to_owned()),
        ]
    );
    let open = api.client().get_leads(&LeadQuery::default()).await.unwrap();
    assert_eq!(open.total, 1);
    assert_eq!(open.leads[0].email.as_deref(), Some("ada@example.com"));
    browser.close().await;
}
