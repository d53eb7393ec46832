//! The compiled `server` example, run as a process the way a user runs it.

use leadtrack_client::Client;
use leadtrack_core::api::{
    ConversionId, CreateLeadRequest, FormData, LeadIdentifier, UpdateLeadStatusRequest, UserData,
};
use leadtrack_core::request::LeadQuery;
use leadtrack_core::{Admin, ErrorCode};

use crate::process::binary::{
    Server, admin, admin_json, admin_ok, create_acme, create_label, start,
    start_serve_with_open_files,
};

#[tokio::test]
async fn admin_commands_serve_and_restart_keep_every_lead() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leadtrack.db");
    let key = create_acme(&db).await;
    let label_id = create_label(&db, "Customer", &["--mark-as-done"]).await;

    let server = start(&db).await;
    assert!(
        server.stdout.iter().all(|line| !line.contains("API key")),
        "no new project or key when a project exists: {:?}",
        server.stdout
    );
    assert!(
        server.stdout.iter().any(|line| line.contains("password:")),
        "but an owner, since there was no user: {:?}",
        server.stdout
    );
    let client = Client::new(&server.base_url).with_api_key(&key);
    let mut ids = Vec::new();
    for i in 0..5 {
        let lead = CreateLeadRequest {
            project_id: Some("acme".into()),
            user_data: Some(UserData {
                email: Some(format!("lead{i}@example.com")),
                ..UserData::default()
            }),
            form_data: Some(FormData {
                unique_event_id: Some(format!("evt-{i}")),
                ..FormData::default()
            }),
            ..CreateLeadRequest::default()
        };
        ids.push(
            Client::new(&server.base_url)
                .create_lead(&lead)
                .await
                .unwrap()
                .lead_id,
        );
    }
    let rated = client
        .update_lead_status(&UpdateLeadStatusRequest {
            identifier: LeadIdentifier::LeadId(ids[0]),
            conversion_id: ConversionId::Label(label_id),
            price: Some(9900),
            note: None,
        })
        .await
        .unwrap();
    assert!(rated.queued);

    // Admin commands act on the running server's database at once.
    let second = admin_json(&db, &["key", "create", "--project", "acme", "--json"]).await;
    let second_key = second["apiKey"].as_str().unwrap();
    let second_client = Client::new(&server.base_url).with_api_key(second_key);
    assert_eq!(
        second_client
            .get_leads(&LeadQuery::default())
            .await
            .unwrap()
            .total,
        5
    );
    let revoke = admin(
        &db,
        &["key", "revoke", "--project", "acme", "--key", &key[..11]],
    )
    .await;
    assert!(
        revoke.status.success(),
        "{}",
        String::from_utf8_lossy(&revoke.stderr)
    );
    assert_eq!(
        client
            .get_leads(&LeadQuery::default())
            .await
            .unwrap_err()
            .code(),
        Some(ErrorCode::InvalidApiKey)
    );
    let new_label_id = create_label(&db, "Lost deal", &[]).await;
    let rated = second_client
        .update_lead_status(&UpdateLeadStatusRequest {
            identifier: LeadIdentifier::LeadId(ids[1]),
            conversion_id: ConversionId::Label(new_label_id),
            price: None,
            note: None,
        })
        .await
        .unwrap();
    assert!(
        rated.queued,
        "a label created by the admin command is usable at once"
    );
    let listed = admin_json(&db, &["label", "list", "--project", "acme", "--json"]).await;
    assert_eq!(listed.as_array().unwrap().len(), 2);

    let status = server.terminate().await;
    assert!(status.success(), "graceful shutdown exits 0: {status}");

    // A restart on the same file serves every lead, and a crash loses nothing acknowledged.
    let server = start(&db).await;
    let page = second_client_for(&server, second_key)
        .get_leads(&LeadQuery::default())
        .await
        .unwrap();
    assert_eq!(page.total, 5);
    let lead = second_client_for(&server, second_key)
        .get_lead(&LeadIdentifier::LeadId(ids[0]))
        .await
        .unwrap();
    assert_eq!(
        (lead.price, lead.conversion_id),
        (Some(9900), Some(ConversionId::Label(label_id)))
    );
    let extra = CreateLeadRequest {
        user_data: Some(UserData {
            email: Some("late@example.com".into()),
            ..UserData::default()
        }),
        ..CreateLeadRequest::default()
    };
    let late = second_client_for(&server, second_key)
        .create_server_side_lead(&extra)
        .await
        .unwrap();
    server.crash().await;
    let server = start(&db).await;
    let found = second_client_for(&server, second_key)
        .get_lead(&LeadIdentifier::LeadId(late.lead_id))
        .await
        .unwrap();
    assert_eq!(found.email.as_deref(), Some("late@example.com"));

    let deactivate = admin(&db, &["project", "deactivate", "--project", "acme"]).await;
    assert!(deactivate.status.success());
    let err = second_client_for(&server, second_key)
        .get_leads(&LeadQuery::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::ProjectInactive));
    assert!(server.terminate().await.success());
}

fn second_client_for(server: &Server, key: &str) -> Client {
    Client::new(&server.base_url).with_api_key(key)
}

#[tokio::test]
async fn the_first_run_creates_a_project_and_prints_a_working_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("fresh.db");
    let server = start(&db).await;
    let banner = server.stdout.join("\n");
    let key = server
        .stdout
        .iter()
        .find_map(|line| line.trim().strip_prefix("API key:"))
        .map(|key| key.trim().to_owned())
        .unwrap_or_else(|| panic!("no API key in {banner}"));
    assert!(banner.contains("project id: prj_"), "{banner}");
    let curl = server
        .stdout
        .iter()
        .find(|line| line.trim_start().starts_with("curl "))
        .expect("a curl line");
    assert!(
        curl.contains(&format!("X-API-Key: {key}")) && curl.contains(&server.base_url),
        "{curl}"
    );
    let client = Client::new(&server.base_url).with_api_key(&key);
    assert_eq!(
        client.get_leads(&LeadQuery::default()).await.unwrap().total,
        0
    );
    assert!(server.terminate().await.success());
    let listed = admin_json(&db, &["project", "list", "--json"]).await;
    assert_eq!(
        listed.as_array().unwrap().len(),
        1,
        "one project, created once"
    );
    // It starts with the two starter labels; `project create` makes an empty one.
    let made = admin(&db, &["project", "create", "--name", "Two", "--id", "two"]).await;
    assert!(made.status.success());
    let store = crate::process::binary::open_store(&db).await;
    let projects = store.projects().await.unwrap();
    let labels = async |name: &str| {
        let project = projects.iter().find(|p| p.name == name).unwrap();
        let labels = store.labels(project.id).await.unwrap();
        labels
            .into_iter()
            .map(|label| (label.name, label.mark_as_done))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        labels("My project").await,
        [
            ("Qualified".to_owned(), false),
            ("Customer".to_owned(), true)
        ]
    );
    assert!(labels("Two").await.is_empty());
}

#[tokio::test]
async fn a_port_in_use_is_one_clear_line_and_no_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("never.db");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let output = admin(&db, &["serve", "--addr", &addr]).await;
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: cannot listen on {addr}")) && stderr.contains("--addr"),
        "{stderr}"
    );
    assert!(!db.exists(), "nothing was written");
}

#[tokio::test]
async fn bad_databases_and_arguments_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.db");
    std::fs::write(&garbage, vec![0x42; 4096]).unwrap();
    for args in [
        &["project", "list"][..],
        &["serve", "--addr", "127.0.0.1:0"],
    ] {
        let output = admin(&garbage, args).await;
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains("is not a leadtrack database") && stderr.contains("--db"),
            "{stderr}"
        );
    }
    assert_eq!(
        std::fs::read(&garbage).unwrap(),
        vec![0x42; 4096],
        "the file is untouched"
    );

    let missing = dir.path().join("typo.db");
    let output = admin(&missing, &["key", "create", "--project", "acme"]).await;
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).starts_with("error: no database at"));
    assert!(!missing.exists(), "a mistyped path is not created");

    let db = dir.path().join("ok.db");
    admin_json(
        &db,
        &[
            "project", "create", "--name", "Acme", "--id", "acme", "--json",
        ],
    )
    .await;
    for (args, message) in [
        (
            &["project", "create", "--name", "Again", "--id", "acme"][..],
            "already exists",
        ),
        (
            &["project", "create", "--name", "X", "--currency", "euro"],
            "ISO 4217",
        ),
        (
            &["key", "revoke", "--project", "acme", "--key", "lt_nothere"],
            "API key not found",
        ),
        (
            &["label", "list", "--project", "nope"],
            "no project with id \"nope\"",
        ),
    ] {
        let output = admin(&db, args).await;
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.starts_with("error: ") && stderr.contains(message),
            "{args:?}: {stderr}"
        );
    }
    let output = admin(&db, &["label", "create", "--project", "acme"]).await;
    assert_eq!(output.status.code(), Some(2), "usage errors exit 2");
    assert!(String::from_utf8_lossy(&output.stderr).contains("--name"));
    let listed = admin_json(&db, &["project", "list", "--json"]).await;
    assert_eq!(
        listed.as_array().unwrap().len(),
        1,
        "failed commands created nothing"
    );
}

#[tokio::test]
async fn idle_connections_past_the_open_file_limit_do_not_lock_out_a_new_client() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leadtrack.db");
    create_acme(&db).await;
    let server = start_serve_with_open_files(&db, 1024).await;
    let addr = server.base_url.trim_start_matches("http://").to_owned();
    let mut idle = Vec::new();
    for _ in 0..1100 {
        // Past its backlog a server that stopped accepting leaves connects hanging.
        match tokio::time::timeout(
            std::time::Duration::from_secs(2),
            tokio::net::TcpStream::connect(&addr),
        )
        .await
        {
            Ok(Ok(stream)) => idle.push(stream),
            _ => break,
        }
    }
    let health = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        reqwest::get(format!("{}/health", server.base_url)),
    )
    .await
    .expect("served within 10 s despite the idle flood")
    .expect("a response");
    assert_eq!(health.status(), 200);
    drop(idle);
    assert!(server.terminate().await.success());
}

#[tokio::test]
async fn labels_are_renamed_archived_reordered_and_deleted_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leadtrack.db");
    let key = create_acme(&db).await;
    let customer = create_label(&db, "Customer", &["--mark-as-done"]).await;
    let meeting = create_label(&db, "Meeting", &[]).await;
    let spare = create_label(&db, "Spare", &[]).await;
    let label = |id: uuid::Uuid| id.to_string();
    let (acme, customer_id) = (["--project", "acme"], label(customer));

    let archive = [
        &["label", "archive", "--label", &customer_id][..],
        &acme[..],
    ]
    .concat();
    admin_ok(&db, &archive).await;
    let order = format!("{meeting},{spare},{customer}");
    let reorder = [&["label", "reorder", "--labels", &order][..], &acme[..]].concat();
    let said = String::from_utf8(admin_ok(&db, &reorder).await.stdout).unwrap();
    assert_eq!(said, "New order saved. Keys: 1 Meeting, 2 Spare.\n");
    let meeting_id = label(meeting);
    let rename = [
        "label",
        "rename",
        "--label",
        &meeting_id,
        "--name",
        "First call",
    ];
    admin_ok(&db, &[&rename[..], &acme[..]].concat()).await;
    let listed = admin_json(&db, &["label", "list", "--project", "acme", "--json"]).await;
    let names: Vec<_> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["First call", "Spare", "Customer"]);

    // The API still takes an archived label's id.
    let server = start(&db).await;
    let client = Client::new(&server.base_url).with_api_key(&key);
    let lead = CreateLeadRequest {
        project_id: Some("acme".into()),
        user_data: Some(UserData {
            email: Some("ada@example.com".into()),
            ..UserData::default()
        }),
        ..CreateLeadRequest::default()
    };
    let id = Client::new(&server.base_url)
        .create_lead(&lead)
        .await
        .unwrap()
        .lead_id;
    let rated = client
        .update_lead_status(&UpdateLeadStatusRequest {
            identifier: LeadIdentifier::LeadId(id),
            conversion_id: ConversionId::Label(customer),
            price: None,
            note: None,
        })
        .await
        .unwrap();
    assert!(rated.queued);

    let delete = |id: String| {
        let db = db.clone();
        async move {
            admin(
                &db,
                &["label", "delete", "--project", "acme", "--label", &id],
            )
            .await
        }
    };
    let used = delete(customer_id.clone()).await;
    assert_eq!(used.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&used.stderr).contains("archive it instead"));
    assert!(delete(label(spare)).await.status.success());
    let listed = admin_json(&db, &["label", "list", "--project", "acme", "--json"]).await;
    assert_eq!(listed.as_array().unwrap().len(), 2);
    assert!(server.terminate().await.success());
}
