//! The PostgreSQL backend through the compiled server: several API servers and delivery
//! workers on one database lose and duplicate nothing, and a change made through one
//! process holds on every other at once. Each test has a fresh database on the cluster
//! `LEADTRACK_POSTGRES_URL` names (`scripts/postgres-cluster`, started by `.ci/run`).

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use leadtrack_client::{Client, Error as ClientError};
use leadtrack_core::api::{
    ConversionId, CreateLeadRequest, FormData, LeadIdentifier, UpdateLeadStatusRequest, UserData,
};
use leadtrack_core::request::{CreateRoute, LeadQuery, NewLead};
use leadtrack_core::types::{LeadId, LeadStatus};
use leadtrack_platforms::testkit::{MockPlatform, MockResponse};
use leadtrack_postgres::testkit::{cluster_url, fresh_database};
use uuid::Uuid;

use crate::process::binary::{
    Server, admin, admin_ok, connect_webhook, create_acme, create_label, start_serve,
};

/// A fresh database's URL on the cluster the run was given (this module is built only with
/// one, `cfg(leadtrack_postgres)`).
async fn database(test: &str) -> String {
    let cluster = cluster_url(test).expect("LEADTRACK_POSTGRES_TESTS=required names a cluster");
    fresh_database(&cluster).await
}

/// A local receiver answering 200, connected to project acme as its conversion webhook
/// (signed with `secret`); and its URL.
async fn connect_hook(db: &Path, secret: &str) -> (MockPlatform, String) {
    let hook = MockPlatform::start(MockResponse::json(200, serde_json::json!({}))).await;
    let url = connect_webhook(db, &hook, secret).await;
    (hook, url)
}

/// Lead `n`, as a backend submits it: a stable event id, so that a retry (on another
/// server) is the same lead.
fn lead(n: usize) -> CreateLeadRequest {
    CreateLeadRequest {
        user_data: Some(UserData {
            email: Some(format!("buyer{n}@example.com")),
            ..UserData::default()
        }),
        form_data: Some(FormData {
            unique_event_id: Some(format!("evt-{n}")),
            ..FormData::default()
        }),
        ..CreateLeadRequest::default()
    }
}

#[tokio::test]
async fn servers_and_workers_on_one_database_lose_and_duplicate_nothing() {
    const LEADS: usize = 2000;
    const LEASE: &str = "3s";
    let url = database("servers_and_workers_on_one_database").await;
    let db = Path::new(&url);
    let key = create_acme(db).await;
    let (hook, _) = connect_hook(db, "whsec_pg").await;
    // Each delivery takes a moment, so that the worker killed below has some in flight.
    for _ in 0..LEADS * 2 {
        hook.push(
            MockResponse::json(200, serde_json::json!({})).delayed(Duration::from_millis(20)),
        );
    }
    let label = create_label(db, "Customer", &["--webhook", "--mark-as-done"]).await;

    // 1. Two API servers and two workers on the database.
    // Rate limits are each server's own; these clients send thousands of requests, a
    // hundred at once from one address, standing for many clients.
    let serve = [
        "--no-worker",
        "--pool-size",
        "8",
        "--rate-limit-key",
        "off",
        "--max-connections-per-address",
        "512",
    ];
    let servers = [start_serve(db, &serve).await, start_serve(db, &serve).await];
    let worker = ["worker", "--worker-lease", LEASE];
    let ready = "worker delivering conversions";
    let doomed = crate::process::binary::spawn(db, &worker, ready).await;
    let survivor = crate::process::binary::spawn(db, &worker, ready).await;
    let clients: Vec<Client> = servers
        .iter()
        .map(|server| Client::new(&server.base_url).with_api_key(&key))
        .collect();

    // 2. Every lead is sent to both servers at once, as a retry that crossed servers: each
    // event id is one lead, whichever server answered.
    let ids = create_on_both(&clients, LEADS).await;
    // 3. Every lead is rated through both servers at once. 4. One worker is killed
    // (SIGKILL) midway.
    let queued = rate_on_both_killing_midway(&clients, &ids, label, &hook, doomed).await;
    assert!(queued >= ids.len());
    // 5. The surviving worker delivers every lead's conversion once: those the killed one
    // held too, once their lease ran out. A second rating accepted after the first was
    // delivered (the same label and price) is the same conversion, and sends nothing.
    assert_delivered_once(&hook, ids.len(), &servers[0]).await;
    for &id in &ids {
        let status = clients[0]
            .get_lead(&LeadIdentifier::LeadId(id))
            .await
            .unwrap()
            .status;
        assert_eq!(status, LeadStatus::Rated, "lead {id:?}");
    }

    admin_changes_reach_every_server(db, &servers, &clients, &key).await;
    for process in servers.into_iter().chain([survivor]) {
        assert!(process.terminate().await.success());
    }
}

/// Leads `0..count`, each sent to every client's server at once: each event id is one
/// lead, whichever server answered, and each server counts every lead once. Their ids.
async fn create_on_both(clients: &[Client], count: usize) -> Vec<LeadId> {
    let mut ids = vec![None; count];
    for batch in (0..count).collect::<Vec<_>>().chunks(100) {
        let creates = batch.iter().flat_map(|&n| {
            clients.iter().map(move |client| async move {
                let created = client.create_server_side_lead(&lead(n)).await.unwrap();
                (n, created.lead_id)
            })
        });
        for (n, id) in join_all(creates).await {
            match ids[n] {
                None => ids[n] = Some(id),
                Some(first) => assert_eq!(first, id, "lead {n} is one lead on both servers"),
            }
        }
    }
    let ids: Vec<_> = ids.into_iter().map(Option::unwrap).collect();
    for client in clients {
        let page = client.get_leads(&LeadQuery::default()).await.unwrap();
        assert_eq!(
            page.total, count as u64,
            "both servers count every lead once"
        );
    }

    ids
}

/// Rates every lead through both clients' servers at once: one rating queues a
/// conversion, the other is refused 409 while it waits (or, if the workers delivered it in
/// between, queues a second one). `doomed` is killed (SIGKILL) midway, while it delivers.
/// The conversions queued.
async fn rate_on_both_killing_midway(
    clients: &[Client],
    ids: &[LeadId],
    label: Uuid,
    hook: &MockPlatform,
    doomed: Server,
) -> usize {
    let mut queued = 0;
    let mut doomed = Some(doomed);
    for (at, batch) in ids.chunks(100).enumerate() {
        let ratings = batch.iter().map(|&id| {
            let clients = &clients;
            async move {
                let update = UpdateLeadStatusRequest {
                    identifier: LeadIdentifier::LeadId(id),
                    conversion_id: ConversionId::Label(label),
                    price: Some(10_000),
                    note: None,
                };
                let (first, second) = tokio::join!(
                    clients[0].update_lead_status(&update),
                    clients[1].update_lead_status(&update)
                );
                [first, second]
                    .into_iter()
                    .map(|rated| match rated {
                        Ok(_) => 1,
                        Err(ClientError::Api { status: 409, .. }) => 0,
                        Err(err) => panic!("rating lead {id:?}: {err}"),
                    })
                    .sum::<usize>()
            }
        });
        let accepted: Vec<usize> = join_all(ratings).await;
        assert!(accepted.iter().all(|&n| n >= 1), "every lead is rated");
        queued += accepted.iter().sum::<usize>();
        if at == ids.len() / 200 {
            // Wait for the doomed worker to be mid-delivery, then kill it.
            while hook.requests().len() < 50 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            doomed.take().unwrap().crash().await;
        }
    }
    assert!(doomed.is_none(), "the worker was killed midway");

    queued
}

/// Every one of the `queued` conversions reaches the hook, signed; only those in flight
/// when the worker died (at most 16: its 4 loops send 4 webhooks at once each) go out a
/// second time, with the same event id.
async fn assert_delivered_once(hook: &MockPlatform, queued: usize, server: &Server) {
    let deadline = Instant::now() + Duration::from_secs(120);
    let delivered_ids = || -> HashSet<String> {
        hook.requests()
            .iter()
            .map(|request| request.json()["id"].as_str().unwrap().to_owned())
            .collect()
    };
    while delivered_ids().len() < queued {
        assert!(
            Instant::now() < deadline,
            "{} of {queued} conversions delivered",
            delivered_ids().len()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The queue drained (every job finished, the killed worker's too): a duplicate would
    // have come by now.
    server.queues_drained().await;
    let delivered = hook.requests();
    let events = delivered_ids();
    assert_eq!(events.len(), queued, "every queued conversion is delivered");
    // Only the deliveries in flight when the worker died (at most its 4 loops' 4 at once)
    // go out a second time, with the same event id.
    let twice = delivered.len() - events.len();
    assert!(twice <= 16, "{twice} deliveries were repeated");
    eprintln!("{queued} conversions delivered, {twice} of them twice after the kill");
    for request in &delivered {
        request.assert_signed("whsec_pg");
    }
}

/// A project deactivated, then activated, and a key revoked through admin commands take
/// effect on every server at once.
async fn admin_changes_reach_every_server(
    db: &Path,
    servers: &[Server],
    clients: &[Client],
    key: &str,
) {
    // A project deactivated through an admin command is refused by every server at once,
    // and served again once activated.
    let browser_create = |server: usize, n: usize| {
        let client = Client::new(&servers[server].base_url);
        async move {
            client
                .create_lead(&CreateLeadRequest {
                    project_id: Some("acme".into()),
                    ..lead(n)
                })
                .await
        }
    };
    admin_ok(db, &["project", "deactivate", "--project", "acme"]).await;
    for server in 0..2 {
        let refused = browser_create(server, 100_000 + server).await.unwrap_err();
        assert!(
            matches!(refused, ClientError::Api { status: 403, .. }),
            "{refused:?}"
        );
    }
    admin_ok(db, &["project", "activate", "--project", "acme"]).await;
    for server in 0..2 {
        browser_create(server, 100_000 + server).await.unwrap();
    }

    // A key revoked through an admin command is refused by every server from then on.
    admin_ok(
        db,
        &["key", "revoke", "--project", "acme", "--key", &key[..11]],
    )
    .await;
    for client in clients {
        let refused = client.get_leads(&LeadQuery::default()).await.unwrap_err();
        assert!(
            matches!(refused, ClientError::Api { status: 401, .. }),
            "{refused:?}"
        );
    }
}

#[tokio::test]
async fn admin_commands_and_a_restart_work_on_postgres() {
    let url = database("admin_commands_and_a_restart_work_on_postgres").await;
    let db = Path::new(&url);
    let key = create_acme(db).await;
    let listed = admin_ok(db, &["project", "list"]).await;
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("acme"),
        "{listed:?}"
    );
    let server = start_serve(db, &[]).await;
    let client = Client::new(&server.base_url).with_api_key(&key);
    let created = client.create_server_side_lead(&lead(1)).await.unwrap();
    assert!(server.terminate().await.success());

    // Another process finds the lead: it was in the database, not in the server.
    let server = start_serve(db, &[]).await;
    let client = Client::new(&server.base_url).with_api_key(&key);
    let found = client
        .get_lead(&LeadIdentifier::LeadId(created.lead_id))
        .await
        .unwrap();
    assert_eq!(
        found.user_data.unwrap()["email"].as_str(),
        Some("buyer1@example.com")
    );
    assert!(server.terminate().await.success());

    // Backups are PostgreSQL's own business: one clear line.
    let backup = admin(db, &["backup", "--to", "/tmp/never-written.db"]).await;
    assert_eq!(backup.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&backup.stderr).contains("pg_dump"),
        "{backup:?}"
    );
}

#[tokio::test]
async fn an_unreachable_postgres_is_one_clear_line_without_the_password() {
    // Nothing listens on port 1; the test needs no cluster.
    let url = "postgres://leadtrack:hunter2@127.0.0.1:1/leadtrack";
    let output = admin(Path::new(url), &["project", "list"]).await;
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(
            "error: cannot use the PostgreSQL database postgres://leadtrack@127.0.0.1:1/leadtrack:"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[tokio::test]
async fn migrate_to_copies_a_whole_database_resumes_after_a_kill_and_checks_the_copy() {
    let url = database("migrate_to_copies_a_whole_database").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leadtrack.db");
    let key = create_acme(&db).await;
    admin_ok(&db, &["user", "create", "--email", "ada@example.com"]).await;
    admin_ok(
        &db,
        &[
            "member",
            "add",
            "--project",
            "acme",
            "--email",
            "ada@example.com",
            "--role",
            "owner",
        ],
    )
    .await;
    // A pending invitation, and its line in the audit log, are copied too.
    let invite = [
        "member",
        "invite",
        "--project",
        "acme",
        "--email",
        "bo@example.com",
    ];
    admin_ok(&db, &invite).await;
    let (hook, hook_url) = connect_hook(&db, "whsec_m").await;
    let events = [
        "webhook",
        "add",
        "--project",
        "acme",
        "--url",
        &hook_url,
        "--events",
        "lead.created",
    ];
    admin_ok(&db, &events).await;
    let label = create_label(&db, "Customer", &["--webhook"]).await;

    let rated = rate_and_deliver(&db, &key, label, &hook).await;
    write_in_bulk(&db).await;
    const TOTAL: u64 = 2012;

    kill_a_copy_midway(&db, &url).await;
    // Another database's copy is refused where one stopped half-way.
    let other = dir.path().join("other.db");
    create_acme(&other).await;
    let refused = admin(
        &other,
        &[
            "migrate-to",
            "--from",
            other.to_str().unwrap(),
            "--to",
            &url,
        ],
    )
    .await;
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("holds an unfinished copy of"),
        "{refused:?}"
    );

    // Run again: it resumes, finishes and checks.
    let resumed = admin_ok(
        &db,
        &[
            "migrate-to",
            "--from",
            db.to_str().unwrap(),
            "--to",
            &url,
            "--batch",
            "500",
        ],
    )
    .await;
    let said = String::from_utf8_lossy(&resumed.stdout);
    assert!(said.starts_with("resuming the copy of"), "{said}");
    assert!(said.contains(&format!("leads: {TOTAL} rows")), "{said}");
    assert!(
        said.contains("checked: every table has the original's rows"),
        "{said}"
    );
    let again = admin(
        &db,
        &["migrate-to", "--from", db.to_str().unwrap(), "--to", &url],
    )
    .await;
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("already holds a finished copy"),
        "{again:?}"
    );

    let [on_sqlite, on_postgres] = [
        start_serve(&db, &["--no-worker"]).await,
        start_serve(Path::new(&url), &["--no-worker"]).await,
    ];
    let postgres = Client::new(&on_postgres.base_url).with_api_key(&key);
    assert_both_answer_the_same(&on_sqlite, &on_postgres, &key, &rated).await;
    let page = postgres.get_leads(&LeadQuery::default()).await.unwrap();
    assert_eq!(page.total, TOTAL);
    // New leads get new ids, after the copied ones.
    let newest = page.leads.iter().map(|lead| lead.id.0).max().unwrap();
    let created = postgres.create_server_side_lead(&lead(9999)).await.unwrap();
    assert!(created.lead_id.0 > newest);
    for server in [on_sqlite, on_postgres] {
        assert!(server.terminate().await.success());
    }
}

/// Twelve leads through the API, every third rated with `label` and delivered to `hook`:
/// jobs, deliveries, attempts, history and webhook events to copy. The rated leads.
async fn rate_and_deliver(db: &Path, key: &str, label: Uuid, hook: &MockPlatform) -> Vec<LeadId> {
    let server = start_serve(db, &[]).await;
    let client = Client::new(&server.base_url).with_api_key(key);
    let mut rated = Vec::new();
    for n in 0..12 {
        let created = client.create_server_side_lead(&lead(n)).await.unwrap();
        if n % 3 == 0 {
            client
                .update_lead_status(&UpdateLeadStatusRequest {
                    identifier: LeadIdentifier::LeadId(created.lead_id),
                    conversion_id: ConversionId::Label(label),
                    price: Some(990),
                    note: Some("called back".into()),
                })
                .await
                .unwrap();
            rated.push(created.lead_id);
        }
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while hook.requests().len() < 12 + rated.len() {
        assert!(
            Instant::now() < deadline,
            "{} deliveries",
            hook.requests().len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(server.terminate().await.success());
    rated
}

/// 2,000 more leads, written in-process, so that a copy takes many batches.
async fn write_in_bulk(db: &Path) {
    let store = crate::process::binary::open_store(db).await;
    let acme = leadtrack_core::Admin::project(&store, "acme")
        .await
        .unwrap();
    for chunk in (100..2100).collect::<Vec<usize>>().chunks(250) {
        join_all(chunk.iter().map(|&n| {
            let body = serde_json::json!({
                "userData": {"email": format!("bulk{n}@example.com"), "firstName": "Bülk", "phone": "+49 170 555 0101"},
                "attributionData": {"gclid": format!("G-{n}")},
                "formData": {"uniqueEventId": format!("bulk-{n}"), "formMessage": "hello\nworld"}
            });
            let body = body.as_object().unwrap().clone();
            let data = NewLead::from_object(body, CreateRoute::Server).unwrap().data;
            leadtrack_core::LeadStore::create_lead(&store, acme.id, data, chrono::Utc::now())
        }))
        .await
        .into_iter()
        .for_each(|created| assert!(created.unwrap().created));
    }
    store.close().await;
    drop(store);
}

/// Starts a copy of `db` to `url` and kills it while it copies leads.
async fn kill_a_copy_midway(db: &Path, url: &str) {
    let mut first = tokio::process::Command::new(crate::process::binary::server_binary())
        .envs([crate::process::binary::test_key()])
        .args(["migrate-to", "--from"])
        .arg(db)
        .args(["--to", url, "--batch", "100"])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines =
        tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(first.stdout.take().unwrap()));
    loop {
        let line = lines
            .next_line()
            .await
            .unwrap()
            .expect("progress until killed");
        if line.starts_with("leads: ") && line.ends_with("rows written") {
            break;
        }
    }
    first.kill().await.unwrap();
}

/// The two servers answer listings and jobs alike.
async fn assert_both_answer_the_same(
    on_sqlite: &Server,
    on_postgres: &Server,
    key: &str,
    rated: &[LeadId],
) {
    let [sqlite, postgres] =
        [on_sqlite, on_postgres].map(|server| Client::new(&server.base_url).with_api_key(key));
    let http = reqwest::Client::new();
    for query in [
        "limit=50",
        "status=rated",
        "search=bülk1",
        "sort=price:desc&limit=5",
        "sort=firstName:asc&limit=20",
    ] {
        let mut bodies = Vec::new();
        for server in [on_sqlite, on_postgres] {
            let body = http
                .get(format!("{}/api/leads/getLeads?{query}", server.base_url))
                .header("x-api-key", key)
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            bodies.push(body);
        }
        assert_eq!(bodies[0], bodies[1], "getLeads?{query}");
    }
    for &id in rated {
        let identifier = LeadIdentifier::LeadId(id);
        assert_eq!(
            sqlite.get_lead_jobs(&identifier).await.unwrap(),
            postgres.get_lead_jobs(&identifier).await.unwrap()
        );
    }
}

/// `text` with what differs between two runs of the same commands masked as `*`: API keys
/// and their prefixes (`lt_…`), UUIDs, and times (`2026-03-01T00:00:00.000Z`).
fn masked(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let key = rest
            .strip_prefix("lt_")
            .map(|after| 3 + after.bytes().take_while(u8::is_ascii_alphanumeric).count());
        let uuid = rest
            .get(..36)
            .filter(|candidate| uuid::Uuid::parse_str(candidate).is_ok())
            .map(|_| 36);
        let time = rest
            .get(..10)
            .filter(|date| chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").is_ok())
            .and_then(|_| rest.find('Z').filter(|&z| z <= 30))
            .filter(|&z| chrono::DateTime::parse_from_rfc3339(&rest[..=z]).is_ok())
            .map(|z| z + 1);
        match key.or(uuid).or(time) {
            Some(length) => {
                out.push('*');
                rest = &rest[length..];
            }
            None => {
                out.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    out
}

#[tokio::test]
async fn every_admin_command_says_the_same_on_postgres_as_on_sqlite() {
    let url = database("every_admin_command_says_the_same_on_postgres").await;
    let dir = tempfile::tempdir().unwrap();
    let sqlite = dir.path().join("leadtrack.db");
    let hook = "https://hooks.example.com/leads";
    let script = ADMIN_SCRIPT.iter().map(|line| {
        line.split(' ')
            .map(|word| match word {
                "\"\"" => String::new(),
                "{hook}" => hook.to_owned(),
                word => word.to_owned(),
            })
            .collect::<Vec<String>>()
    });
    let password = "a long enough password\n";
    for args in script {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut said = Vec::new();
        for db in [sqlite.as_path(), Path::new(&url)] {
            let output = crate::process::binary::admin_with_input(db, &args, password).await;
            said.push((
                output.status.code(),
                masked(&String::from_utf8_lossy(&output.stdout)),
                masked(&String::from_utf8_lossy(&output.stderr)),
            ));
        }
        assert_eq!(said[0], said[1], "{args:?}: SQLite, then PostgreSQL");
    }
}

/// Every kind of admin command, once each, some of them refused: one command line each,
/// split on spaces (`""` is an empty argument, `{hook}` a webhook's address).
const ADMIN_SCRIPT: &[&str] = &[
    "project create --name Acme --id acme --json",
    "project create --name Beta --id beta --currency USD",
    "project create --name Dup --id acme",
    "project set --project acme --region DE --lost-webhook true",
    "project deactivate --project beta",
    "project list --json",
    "project activate --project beta",
    "key create --project acme --json",
    "key list --project acme --json",
    "key revoke --project acme --key lt_",
    "label create --project acme --name Customer --mark-as-done --ga4-event purchase --webhook",
    r#"label create --project acme --name """#,
    "label list --project acme --json",
    "integration ga4 --project acme --measurement-id G-TEST --api-secret s3cret",
    "integration webhook --project acme --url {hook} --secret whsec_x",
    "integration list --project acme --json",
    "integration ga4 --project acme --disconnect",
    "integration list --project acme",
    "webhook add --project acme --url {hook} --events lead.created,lead.lost --secret whsec_y",
    "webhook list --project acme --json",
    "webhook remove --project acme 00000000-0000-4000-8000-000000000000",
    "user create --email ada@example.com --name Ada --password-stdin --json",
    "user create --email ADA@example.com --password-stdin",
    "user list --json",
    "member add --project acme --email ada@example.com --role owner --json",
    "member add --project acme --email ada@example.com --role member",
    "member list --project acme --json",
    "user set-password --email ada@example.com --password-stdin",
    "user disable --email ada@example.com --json",
    "user enable --email ada@example.com",
    "member remove --project acme --email ada@example.com",
    "project list",
];

#[test]
fn masking_hides_what_differs_between_runs() {
    assert_eq!(
        masked(
            "key lt_abc123 made at 2026-03-01T00:00:00Z for {\"id\":\"6f1c1b9e-1b8e-4a8e-9c55-3f1b2a7f0d11\",\"n\":5}\n"
        ),
        "key * made at * for {\"id\":\"*\",\"n\":5}\n"
    );
}
