//! Settings > CRM with mocks of HubSpot's and Pipedrive's APIs: a CRM is connected with its
//! token (checked by the CRM first), its pipeline and each label's stage are picked from
//! lists read from the CRM, a new pipeline asks for its stages, and it is disconnected.

use crate::common::{App, OWNER_PASSWORD, app_with};
use leadtrack_core::webhook::{Webhook, WebhookKind};
use leadtrack_platforms::testkit::crm::{
    HUBSPOT_TOKEN, MockHubspot, MockPipedrive, PIPEDRIVE_TOKEN,
};
use warp::http::StatusCode;

const PAGE: &str = "/projects/alpha/settings/crm";

async fn sync(app: &App, kind: WebhookKind) -> Option<Webhook> {
    let hooks = app.store.webhooks(app.alpha.id).await.unwrap();
    hooks
        .into_iter()
        .map(|s| s.webhook)
        .find(|w| w.kind == kind)
}

async fn crm_app() -> App {
    let targets = leadtrack_core::testkit::mock_targets();
    app_with(leadtrack_dashboard::Config {
        outbound: leadtrack_platforms::check::client(targets),
        ..leadtrack_dashboard::Config::default()
    })
    .await
}

#[tokio::test]
async fn hubspot_is_connected_and_its_stages_picked_from_its_own_lists() {
    let app = crm_app().await;
    app.label(&app.alpha, "Qualified").await;
    let hubspot = MockHubspot::start().await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let page = app.get(PAGE, &owner).await;
    page.assert_shows(StatusCode::OK, &["Connect HubSpot", "Connect Pipedrive"]);

    let save = format!("{PAGE}/hubspot");
    let wrong = app
        .post_form(
            &owner,
            &save,
            &[("token", "pat-wrong"), ("base_url", hubspot.url())],
        )
        .await;
    wrong.assert_shows(StatusCode::BAD_REQUEST, &["HubSpot refused: HTTP 401"]);
    assert!(
        sync(&app, WebhookKind::Hubspot).await.is_none(),
        "nothing kept"
    );

    let connected = app
        .post_form(
            &owner,
            &save,
            &[("token", HUBSPOT_TOKEN), ("base_url", hubspot.url())],
        )
        .await;
    assert_eq!(
        connected.status,
        StatusCode::SEE_OTHER,
        "{}",
        connected.text
    );
    assert_eq!(hubspot.custom_properties().len(), 4);
    let page = app.get(&format!("{PAGE}?saved=connected"), &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "Connected: new leads are synced.",
            r#"<option value="default" selected>Sales Pipeline</option>"#,
            r#"<option value="77001">Partners</option>"#,
            r#"<label for="hubspot-stage-qualified">Qualified</label>"#,
            r#"<option value="qualified=" selected>No deal</option>"#,
            r#"<option value="qualified=appointmentscheduled">Appointment scheduled</option>"#,
            r#"<option value="lost=" selected>Closed lost (closedlost)</option>"#,
            "Save HubSpot",
        ],
    );

    // The token is kept when left blank; the stages picked are checked and kept.
    let picked = [
        ("token", ""),
        ("pipeline", "default"),
        ("stage", "qualified=appointmentscheduled"),
        ("stage", "lost=closedlost"),
    ];
    let saved = app.post_form(&owner, &save, &picked).await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.text);
    let kept = sync(&app, WebhookKind::Hubspot).await.unwrap();
    let options = kept.crm.unwrap();
    assert_eq!(kept.secret.expose(), HUBSPOT_TOKEN);
    let stages: Vec<(&str, &str)> = options
        .stages
        .iter()
        .map(|(l, s)| (l.as_str(), s.as_str()))
        .collect();
    assert_eq!(
        stages,
        [
            ("lost", "closedlost"),
            ("qualified", "appointmentscheduled")
        ]
    );
    let page = app.get(PAGE, &owner).await;
    assert!(
        page.text
            .contains(r#"<option value="qualified=appointmentscheduled" selected>"#)
    );

    // Another pipeline: its stages are asked for, the old ones dropped.
    let moved = app
        .post_form(
            &owner,
            &save,
            &[
                ("pipeline", "77001"),
                ("stage", "qualified=appointmentscheduled"),
            ],
        )
        .await;
    assert_eq!(moved.status, StatusCode::SEE_OTHER, "{}", moved.text);
    let options = sync(&app, WebhookKind::Hubspot).await.unwrap().crm.unwrap();
    assert_eq!(options.pipeline.as_deref(), Some("77001"));
    assert!(options.stages.is_empty());
    let page = app.get(&format!("{PAGE}?saved=pipeline"), &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "Pipeline changed: choose each label",
            r#"<option value="qualified=77010">Intro</option>"#,
        ],
    );

    // A lead's page says how it stands in the CRM: what it is called there, and its sync.
    let body = serde_json::json!({"userData": {"email": "ada@example.com"}});
    let lead = app.lead_at(&app.alpha, body, chrono::Utc::now()).await;
    let hook = sync(&app, WebhookKind::Hubspot).await.unwrap();
    let record = leadtrack_core::crm::CrmRecord {
        contact_id: Some("101".into()),
        crm_lead_id: None,
        deal_id: Some("9001".into()),
    };
    app.store
        .save_crm_record(hook.id, lead, &record)
        .await
        .unwrap();
    let page = app
        .get(&format!("/projects/alpha/leads/{lead}"), &owner)
        .await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "<caption>In your CRM</caption>",
            r#"<td data-label="CRM">HubSpot</td>"#,
            r#"<td data-label="Its records">contact 101 · deal 9001</td>"#,
            r#"<td data-label="State">1 waiting</td>"#,
        ],
    );

    let gone = app
        .post_form(&owner, &format!("{save}/disconnect"), &[])
        .await;
    assert_eq!(gone.status, StatusCode::SEE_OTHER);
    assert!(sync(&app, WebhookKind::Hubspot).await.is_none());
}

#[tokio::test]
async fn pipedrive_offers_its_first_pipelines_stages_and_a_stage_it_lacks_is_refused() {
    let app = crm_app().await;
    app.label(&app.alpha, "Qualified").await;
    let pipedrive = MockPipedrive::start().await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let save = format!("{PAGE}/pipedrive");
    let connect = [("token", PIPEDRIVE_TOKEN), ("base_url", pipedrive.url())];
    let connected = app.post_form(&owner, &save, &connect).await;
    assert_eq!(
        connected.status,
        StatusCode::SEE_OTHER,
        "{}",
        connected.text
    );
    let options = sync(&app, WebhookKind::Pipedrive)
        .await
        .unwrap()
        .crm
        .unwrap();
    assert_eq!(
        options.pipeline.as_deref(),
        Some("1"),
        "the account's first"
    );
    let page = app.get(PAGE, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            r#"<option value="1" selected>Sales</option>"#,
            r#"<option value="qualified=2">Proposal made</option>"#,
            r#"<option value="lost=" selected>Keep its stage, marked lost</option>"#,
        ],
    );
    let refused = app
        .post_form(&owner, &save, &[("stage", "qualified=6")])
        .await;
    refused.assert_shows(
        StatusCode::BAD_REQUEST,
        &["Pipeline 1 has no stage &#34;6&#34;; its stages: 1, 2, 3."],
    );
    let saved = app
        .post_form(&owner, &save, &[("stage", "qualified=2")])
        .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.text);
    let options = sync(&app, WebhookKind::Pipedrive)
        .await
        .unwrap()
        .crm
        .unwrap();
    assert_eq!(options.stage(Some("Qualified")), Some("2"));
}
