//! HubSpot connected with the admin command and synced by the server's worker, against a
//! mock of HubSpot's CRM API: the token, pipeline and stages are checked before anything is
//! kept, a lead becomes a contact and its rating a deal, and `integration list` says how
//! the sync stands.

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use leadtrack_client::Client;
use leadtrack_core::api::{
    ConversionId, CreateLeadRequest, LeadIdentifier, UpdateLeadStatusRequest, UserData,
};
use leadtrack_platforms::testkit::crm::{
    HUBSPOT_TOKEN, MockHubspot, MockPipedrive, PIPEDRIVE_TOKEN,
};

use crate::process::binary::{admin, admin_ok, create_acme, create_label, start};

/// `integration CRM --project acme TOKEN_FLAG TOKEN --stage STAGE --base-url BASE`.
async fn connect(
    db: &Path,
    (crm, flag, token): (&str, &str, &str),
    stage: &str,
    base: &str,
) -> Output {
    let args = [
        "integration",
        crm,
        "--project",
        "acme",
        flag,
        token,
        "--stage",
        stage,
        "--base-url",
        base,
    ];
    admin(db, &args).await
}

#[tokio::test]
async fn hubspot_is_connected_checked_and_kept_in_sync_by_the_worker() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::process::binary::fresh_db(&dir).await;
    let key = create_acme(&db).await;
    let label = create_label(&db, "Qualified", &["--mark-as-done"]).await;
    let hubspot = MockHubspot::start().await;
    let connect = |token, stage| {
        connect(
            &db,
            ("hubspot", "--access-token", token),
            stage,
            hubspot.url(),
        )
    };
    let wrong = connect("pat-wrong", "Qualified=appointmentscheduled").await;
    let said = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        !wrong.status.success() && said.contains("HubSpot refused: HTTP 401"),
        "{said}"
    );
    let unknown = connect(HUBSPOT_TOKEN, "Qualified=won").await;
    let said = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        said.contains(r#"pipeline default has no stage "won"; its stages: appointmentscheduled, closedwon, closedlost"#),
        "{said}"
    );
    let listed = admin_ok(&db, &["integration", "list", "--project", "acme"]).await;
    assert!(String::from_utf8_lossy(&listed.stdout).contains("hubspot     not connected"));
    assert!(
        hubspot.custom_properties().is_empty(),
        "nothing made before the checks pass"
    );

    let connected = connect(HUBSPOT_TOKEN, "Qualified=appointmentscheduled").await;
    assert!(
        connected.status.success(),
        "{}",
        String::from_utf8_lossy(&connected.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&connected.stdout).trim(),
        "Connected project acme to HubSpot: deals in pipeline default; qualified → appointmentscheduled, lost → closedlost"
    );
    assert_eq!(hubspot.custom_properties().len(), 4);

    let server = start(&db).await;
    let client = Client::new(&server.base_url).with_api_key(&key);
    let lead = CreateLeadRequest {
        project_id: Some("acme".into()),
        user_data: Some(UserData {
            email: Some("ada@example.com".into()),
            first_name: Some("Ada".into()),
            ..UserData::default()
        }),
        ..CreateLeadRequest::default()
    };
    let created = client.create_server_side_lead(&lead).await.unwrap();
    let rating = UpdateLeadStatusRequest {
        identifier: LeadIdentifier::LeadId(created.lead_id),
        conversion_id: ConversionId::Label(label),
        price: Some(250_000),
        note: None,
    };
    client.update_lead_status(&rating).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while hubspot.deals().is_empty() {
        assert!(Instant::now() < deadline, "no deal: {:?}", hubspot.calls());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    server.queues_drained().await;
    let deal = hubspot.deals().into_values().next().unwrap();
    assert_eq!(
        (
            deal.properties["dealstage"].as_str(),
            deal.properties["amount"].as_str()
        ),
        (Some("appointmentscheduled"), Some("2500.00"))
    );
    assert_eq!(
        hubspot.contacts()[&deal.contact]["email"],
        "ada@example.com"
    );

    let listed = admin_ok(&db, &["integration", "list", "--project", "acme"]).await;
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.contains("hubspot     connected   deals in pipeline default; qualified → appointmentscheduled, lost → closedlost; 2 synced, 0 waiting, 0 failed"), "{listed}");
    // Connected again with other stages: the sync keeps its records, so lost moves the
    // deal made before.
    let again = connect(HUBSPOT_TOKEN, "Qualified=closedwon").await;
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let lost = UpdateLeadStatusRequest {
        conversion_id: ConversionId::Lost,
        price: None,
        ..rating
    };
    client.update_lead_status(&lost).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while hubspot
        .deals()
        .values()
        .all(|d| d.properties["dealstage"] != "closedlost")
    {
        assert!(Instant::now() < deadline, "not lost: {:?}", hubspot.deals());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(hubspot.deals().len(), 1, "the same deal, moved");
    let disconnected = admin_ok(
        &db,
        &[
            "integration",
            "hubspot",
            "--project",
            "acme",
            "--disconnect",
        ],
    )
    .await;
    assert_eq!(
        String::from_utf8_lossy(&disconnected.stdout).trim(),
        "Disconnected project acme from HubSpot."
    );
    server.terminate().await;
}

#[tokio::test]
async fn pipedrive_is_connected_to_its_first_pipeline_and_kept_in_sync() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::process::binary::fresh_db(&dir).await;
    let key = create_acme(&db).await;
    let label = create_label(&db, "Qualified", &["--mark-as-done"]).await;
    let pipedrive = MockPipedrive::start().await;
    let connect = |token, stage| {
        connect(
            &db,
            ("pipedrive", "--api-token", token),
            stage,
            pipedrive.url(),
        )
    };
    let wrong = connect("wrong", "Qualified=1").await;
    let said = String::from_utf8_lossy(&wrong.stderr);
    assert!(said.contains("Pipedrive refused: HTTP 401"), "{said}");
    let unknown = connect(PIPEDRIVE_TOKEN, "Qualified=5").await;
    let said = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        said.contains(r#"pipeline 1 has no stage "5"; its stages: 1, 2, 3"#),
        "{said}"
    );
    let connected = connect(PIPEDRIVE_TOKEN, "Qualified=2").await;
    assert_eq!(
        String::from_utf8_lossy(&connected.stdout).trim(),
        "Connected project acme to Pipedrive: deals in pipeline 1; qualified → 2, lost → marked lost"
    );

    let server = start(&db).await;
    let client = Client::new(&server.base_url).with_api_key(&key);
    let lead = CreateLeadRequest {
        project_id: Some("acme".into()),
        user_data: Some(UserData {
            email: Some("grace@example.com".into()),
            ..UserData::default()
        }),
        ..CreateLeadRequest::default()
    };
    let created = client.create_server_side_lead(&lead).await.unwrap();
    let rating = UpdateLeadStatusRequest {
        identifier: LeadIdentifier::LeadId(created.lead_id),
        conversion_id: ConversionId::Label(label),
        price: Some(99_950),
        note: None,
    };
    client.update_lead_status(&rating).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while pipedrive.deals().is_empty() {
        assert!(
            Instant::now() < deadline,
            "no deal: {:?}",
            pipedrive.calls()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    server.queues_drained().await;
    let deal = pipedrive.deals().into_values().next().unwrap();
    assert_eq!(
        (
            deal.fields["stage_id"].as_i64(),
            deal.fields["value"].as_f64()
        ),
        (Some(2), Some(999.5))
    );
    assert_eq!(
        (
            pipedrive.persons().len(),
            pipedrive.leads().len(),
            pipedrive.notes().len()
        ),
        (1, 1, 1)
    );
    let listed = admin_ok(&db, &["integration", "list", "--project", "acme", "--json"]).await;
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(
        listed["pipedrive"],
        serde_json::json!({"pipeline": "1", "stages": {"qualified": "2"}})
    );
    assert_eq!(listed["hubspot"], serde_json::Value::Null);
    server.terminate().await;
}
