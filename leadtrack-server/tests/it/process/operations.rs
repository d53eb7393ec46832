//! What an operator relies on, through the compiled server: the probes during a graceful
//! shutdown, the JSON log with its request ids, backups taken under load, and the
//! Prometheus metrics.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use leadtrack_client::Client;
use leadtrack_core::api::{
    ConversionId, CreateLeadRequest, LeadIdentifier, UpdateLeadStatusRequest, UserData,
};
use leadtrack_core::request::LeadQuery;
use leadtrack_platforms::testkit::{MockPlatform, MockResponse};
use serde_json::{Value, json};

use crate::process::binary::{
    admin, admin_json, admin_ok, connect_webhook, create_acme, start_serve,
};

#[tokio::test]
async fn shutdown_turns_readyz_503_before_the_listener_closes_and_the_json_log_names_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leadtrack.db");
    let key = create_acme(&db).await;
    let mut server = start_serve(&db, &["--shutdown-delay", "3s", "--log-format", "json"]).await;
    let http = reqwest::Client::new();
    let base_url = server.base_url.clone();
    let url = |path: &str| format!("{base_url}{path}");
    let status = |response: &reqwest::Response| response.status().as_u16();

    let ready = http.get(url("/readyz")).send().await.unwrap();
    assert_eq!(status(&ready), 200);
    let created = http
        .post(url("/api/leads/createServerSideLead"))
        .header("x-api-key", &key)
        .header("x-request-id", "trace-create-1")
        .json(&json!({
            "userData": {"email": "secret.person@example.com", "phone": "+49 170 1234567"},
            "formData": {"message": "call me"}
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(status(&created), 201);
    assert_eq!(created.headers()["x-request-id"], "trace-create-1");
    let looked_up = http
        .get(url("/api/leads/getLead?email=secret.person@example.com"))
        .header("x-api-key", &key)
        .send()
        .await
        .unwrap();
    assert_eq!(status(&looked_up), 200);
    let generated = looked_up.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(uuid::Uuid::parse_str(&generated).is_ok(), "{generated}");

    // SIGTERM: while the delay lasts, new connections are still accepted and answered, but
    // /readyz says 503 so a load balancer stops sending work.
    server.signal_terminate();
    let mut draining = None;
    for _ in 0..40 {
        let answer = reqwest::Client::new().get(url("/readyz")).send().await;
        let answer = answer.expect("the listener is still open during the delay");
        if status(&answer) == 503 {
            draining = Some(answer);
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let draining = draining.expect("/readyz turns 503 soon after SIGTERM");
    assert_eq!(draining.headers()["retry-after"], "1");
    let body: Value = draining.json().await.unwrap();
    assert_eq!(
        body,
        json!({"message": "The server is shutting down", "code": "unavailable"})
    );
    let alive = reqwest::Client::new()
        .get(url("/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(status(&alive), 200, "still live while draining");
    let still_served = reqwest::Client::new()
        .get(url("/api/leads/getLeads"))
        .header("x-api-key", &key)
        .send()
        .await
        .unwrap();
    assert_eq!(status(&still_served), 200, "requests are still served");

    assert!(server.wait().await.success(), "graceful exit");
    assert!(
        reqwest::Client::new()
            .get(url("/healthz"))
            .send()
            .await
            .is_err(),
        "the listener is closed after the delay"
    );

    // Every line of the log is a JSON object; the requests' lines carry their id, route,
    // status, latency and project, and nothing names the key, the email or the phone.
    let logs = server.logs();
    let lines: Vec<Value> = logs
        .iter()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    assert!(
        lines
            .iter()
            .all(|line| line["level"].is_string() && line["timestamp"].is_string())
    );
    let request_line = |id: &str| {
        lines
            .iter()
            .find(|line| line["span"]["id"] == id && line["fields"]["message"] == "request")
            .unwrap_or_else(|| panic!("no request line for {id}: {logs:#?}"))
    };
    let create = request_line("trace-create-1");
    assert_eq!(create["fields"]["path"], "/api/leads/createServerSideLead");
    assert_eq!(create["fields"]["route"], "createServerSideLead");
    assert_eq!(create["fields"]["status"], 201);
    assert!(create["fields"]["latency_ms"].as_f64().is_some());
    assert_eq!(create["span"]["project"], "acme");
    let lookup = request_line(&generated);
    assert_eq!(lookup["fields"]["path"], "/api/leads/getLead");
    assert_eq!(lookup["span"]["project"], "acme");
    let whole = logs.join("\n");
    for secret in [
        key.as_str(),
        "secret.person",
        "example.com",
        "170 1234567",
        "1701234567",
    ] {
        assert!(!whole.contains(secret), "the log names {secret:?}");
    }
}

#[tokio::test]
async fn a_backup_taken_under_load_restores_every_lead_acknowledged_before_it_began() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leadtrack.db");
    let copy = dir.path().join("backup.db");
    let copy_arg = copy.to_str().unwrap();
    let key = create_acme(&db).await;
    let unlimited = ["--rate-limit-key", "off"];
    let server = start_serve(&db, &unlimited).await;
    let client = Client::new(&server.base_url).with_api_key(&key);

    // Eight writers create leads until told to stop, noting when each was acknowledged.
    let stop = Arc::new(AtomicBool::new(false));
    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let writers: Vec<_> = (0..8)
        .map(|writer| {
            let (client, stop, acknowledged) =
                (client.clone(), Arc::clone(&stop), Arc::clone(&acknowledged));
            tokio::spawn(async move {
                for n in 0.. {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let lead = CreateLeadRequest {
                        user_data: Some(UserData {
                            email: Some(format!("w{writer}-{n}@example.com")),
                            ..UserData::default()
                        }),
                        ..CreateLeadRequest::default()
                    };
                    let created = client.create_server_side_lead(&lead).await.unwrap();
                    acknowledged
                        .lock()
                        .unwrap()
                        .push((Instant::now(), created.lead_id));
                }
            })
        })
        .collect();
    // The load is running once leads are acknowledged, and goes on after the backup.
    let acknowledged_past = |count: usize| {
        let acknowledged = Arc::clone(&acknowledged);
        async move {
            let deadline = Instant::now() + Duration::from_secs(30);
            while acknowledged.lock().unwrap().len() < count {
                assert!(Instant::now() < deadline, "the writers stalled");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    };
    acknowledged_past(40).await;
    let began = Instant::now();
    let backup = admin_json(&db, &["backup", "--to", copy_arg, "--json"]).await;
    let so_far = acknowledged.lock().unwrap().len();
    acknowledged_past(so_far + 20).await;
    stop.store(true, Ordering::Relaxed);
    for writer in writers {
        writer.await.unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    let before: Vec<_> = acknowledged
        .iter()
        .filter(|(at, _)| *at < began)
        .map(|(_, id)| *id)
        .collect();
    let in_backup = backup["leads"].as_u64().unwrap();
    assert_eq!(backup["integrity"], "ok");
    assert_eq!(
        backup["bytes"].as_u64(),
        Some(std::fs::metadata(&copy).unwrap().len())
    );
    assert!(
        before.len() >= 20,
        "the load ran before the backup: {}",
        before.len()
    );
    assert!(
        in_backup >= before.len() as u64,
        "{in_backup} < {}",
        before.len()
    );
    assert!(
        (acknowledged.len() as u64) > in_backup,
        "writes went on during and after the backup"
    );

    // The running server holds the database: a restore is refused and changes nothing.
    let refused = admin(&db, &["restore", "--from", copy_arg]).await;
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("stop it before restoring"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let total = client.get_leads(&LeadQuery::default()).await.unwrap().total;
    assert_eq!(
        total,
        acknowledged.len() as u64,
        "nothing lost to the refused restore"
    );
    assert!(server.terminate().await.success());

    let restored = admin_json(&db, &["restore", "--from", copy_arg, "--json"]).await;
    assert_eq!(restored["leads"].as_u64(), Some(in_backup));
    let server = start_serve(&db, &unlimited).await;
    let client = Client::new(&server.base_url).with_api_key(&key);
    let page = client.get_leads(&LeadQuery::default()).await.unwrap();
    assert_eq!(page.total, in_backup, "the database is the backup's");
    for id in before {
        let lead = client.get_lead(&LeadIdentifier::LeadId(id)).await;
        assert!(
            lead.is_ok(),
            "lead {id} acknowledged before the backup: {lead:?}"
        );
    }
    // A backup never overwrites a file.
    let again = admin(&db, &["backup", "--to", copy_arg]).await;
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
    assert!(server.terminate().await.success());
}

/// `/metrics`, parsed as Prometheus text.
async fn scrape(url: &str) -> prometheus_parse::Scrape {
    let response = reqwest::get(url).await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(
        response.headers()["content-type"],
        "text/plain; version=0.0.4; charset=utf-8"
    );
    let text = response.text().await.unwrap();
    for line in text
        .lines()
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
    {
        // name{label="value",...} value: the exposition format's sample line.
        let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("{line}"));
        assert!(value.parse::<f64>().is_ok(), "{line}");
        let name_end = series.find('{').unwrap_or(series.len());
        assert!(
            series[..name_end]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':'),
            "{line}"
        );
    }
    prometheus_parse::Scrape::parse(text.lines().map(|line| Ok(line.to_owned()))).unwrap()
}

/// The value of the sample `name` whose labels include `labels`; `None` when there is none.
fn sample(scrape: &prometheus_parse::Scrape, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    scrape
        .samples
        .iter()
        .find(|sample| {
            sample.metric == name
                && labels
                    .iter()
                    .all(|(label, value)| sample.labels.get(label) == Some(*value))
        })
        .map(|sample| match &sample.value {
            prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Untyped(v) => *v,
            prometheus_parse::Value::Histogram(buckets) => {
                buckets.last().map_or(0.0, |bucket| bucket.count)
            }
            prometheus_parse::Value::Summary(_) => f64::NAN,
        })
}

#[tokio::test]
async fn metrics_count_requests_leads_ratings_and_deliveries_as_they_happen() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leadtrack.db");
    let key = create_acme(&db).await;
    // The first conversion is accepted, every later one refused for good.
    let hook = MockPlatform::start(MockResponse::empty(410)).await;
    hook.push(MockResponse::json(200, json!({})));
    connect_webhook(&db, &hook, "whsec_metrics").await;
    let label = crate::process::binary::create_label(&db, "Customer", &["--webhook"]).await;
    let server = start_serve(&db, &[]).await;
    let metrics_url = format!("{}/metrics", server.base_url);
    let client = Client::new(&server.base_url).with_api_key(&key);

    let mut leads = Vec::new();
    for n in 0..2 {
        let lead = CreateLeadRequest {
            user_data: Some(UserData {
                email: Some(format!("m{n}@example.com")),
                ..UserData::default()
            }),
            ..CreateLeadRequest::default()
        };
        leads.push(client.create_server_side_lead(&lead).await.unwrap().lead_id);
    }
    let unkeyed = reqwest::get(format!("{}/api/leads/getLeads", server.base_url))
        .await
        .unwrap();
    assert_eq!(unkeyed.status().as_u16(), 401);
    for lead in &leads {
        client
            .update_lead_status(&UpdateLeadStatusRequest {
                identifier: LeadIdentifier::LeadId(*lead),
                conversion_id: ConversionId::Label(label),
                price: None,
                note: None,
            })
            .await
            .unwrap();
    }
    hook.wait_for(2, Duration::from_secs(20)).await;

    // The worker records each attempt just after the platform answers, in either order:
    // poll briefly for both.
    let mut scraped = scrape(&metrics_url).await;
    for _ in 0..100 {
        let recorded = |outcome| {
            sample(
                &scraped,
                "leadtrack_deliveries_total",
                &[("outcome", outcome)],
            )
        };
        if recorded("failed") == Some(1.0) && recorded("delivered") == Some(1.0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        scraped = scrape(&metrics_url).await;
    }
    let value = |name: &str, labels: &[(&str, &str)]| sample(&scraped, name, labels);
    assert_eq!(
        value(
            "leadtrack_leads_created_total",
            &[("route", "createServerSideLead"), ("project", "acme")]
        ),
        Some(2.0)
    );
    assert_eq!(
        value(
            "leadtrack_http_requests_total",
            &[("route", "createServerSideLead"), ("status", "201")]
        ),
        Some(2.0)
    );
    assert_eq!(
        value(
            "leadtrack_http_requests_total",
            &[("route", "getLeads"), ("status", "401")]
        ),
        Some(1.0)
    );
    assert_eq!(
        value(
            "leadtrack_http_request_duration_seconds_count",
            &[("route", "updateLeadStatus")]
        ),
        Some(2.0)
    );
    assert_eq!(
        value("leadtrack_ratings_queued_total", &[("project", "acme")]),
        Some(2.0)
    );
    for outcome in ["delivered", "failed"] {
        assert_eq!(
            value(
                "leadtrack_deliveries_total",
                &[("platform", "webhook"), ("outcome", outcome)]
            ),
            Some(1.0),
            "{outcome}"
        );
    }
    assert_eq!(
        value(
            "leadtrack_delivery_duration_seconds_count",
            &[("platform", "webhook")]
        ),
        Some(2.0)
    );
    assert_eq!(
        value("leadtrack_queue_queued", &[("queue", "jobs")]),
        Some(0.0)
    );
    assert!(value("leadtrack_sqlite_write_batch_size_count", &[]).unwrap() >= 4.0);
    assert!(value("leadtrack_sqlite_commit_duration_seconds_count", &[]).unwrap() >= 4.0);
    assert!(value("leadtrack_sqlite_fsync_duration_seconds_count", &[]).unwrap() >= 1.0);
    assert!(value("process_resident_memory_bytes", &[]).unwrap() > 1_000_000.0);
    assert!(value("process_open_fds", &[]).unwrap() > 3.0);

    // Not for clients that come through a proxy.
    let proxied = reqwest::Client::new()
        .get(&metrics_url)
        .header("x-forwarded-for", "203.0.113.9")
        .send()
        .await
        .unwrap();
    assert_eq!(proxied.status().as_u16(), 404);
    let body: Value = proxied.json().await.unwrap();
    assert_eq!(body, json!({"message": "Not found", "code": "not_found"}));
    assert!(server.terminate().await.success());
}

#[tokio::test]
async fn with_a_metrics_address_metrics_are_served_there_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leadtrack.db");
    create_acme(&db).await;
    let metrics_addr = format!("127.0.0.1:{}", crate::process::binary::free_port());
    let server = start_serve(
        &db,
        &[
            "--metrics-addr",
            &metrics_addr,
            "--metrics-no-project-label",
        ],
    )
    .await;
    let main = reqwest::get(format!("{}/metrics", server.base_url))
        .await
        .unwrap();
    assert_eq!(main.status().as_u16(), 404);
    let lead = json!({"projectId": "acme", "userData": {"email": "a@example.com"}});
    let created = reqwest::Client::new()
        .post(format!("{}/api/leads/createLead", server.base_url))
        .json(&lead)
        .send()
        .await
        .unwrap();
    assert_eq!(created.status().as_u16(), 201);
    let scraped = scrape(&format!("http://{metrics_addr}/metrics")).await;
    assert_eq!(
        sample(
            &scraped,
            "leadtrack_leads_created_total",
            &[("route", "createLead")]
        ),
        Some(1.0)
    );
    assert!(
        scraped
            .samples
            .iter()
            .all(|sample| sample.labels.get("project").is_none()),
        "no project label"
    );
    let elsewhere = reqwest::get(format!("http://{metrics_addr}/healthz"))
        .await
        .unwrap();
    assert_eq!(elsewhere.status().as_u16(), 404);
    assert!(server.terminate().await.success());
}

/// `server ARGS...` with the environment variables `env` (and no other `LEADTRACK_*`
/// setting): its exit code, stdout and stderr.
pub(crate) async fn server_with_env(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut command = tokio::process::Command::new(crate::process::binary::server_binary());
    for (name, _) in std::env::vars().filter(|(name, _)| name.starts_with("LEADTRACK_")) {
        command.env_remove(name);
    }
    let output = command
        .args(args)
        .envs(env.iter().copied())
        .output()
        .await
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn settings_come_from_flags_then_the_environment_then_the_file_then_the_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leadtrack.db");
    create_acme(&db).await;
    let addr = format!("127.0.0.1:{}", crate::process::binary::free_port());
    let file = dir.path().join("leadtrack.toml");
    std::fs::write(
        &file,
        format!(
            "db = {db:?}\naddr = \"{addr}\"\nlog-format = \"json\"\nheader-timeout = 9\n\
             shutdown-delay = \"4s\"\nrate-limit-ip = \"off\"\nno-worker = true\n"
        ),
    )
    .unwrap();
    let file = file.to_str().unwrap();

    let (code, out, err) = server_with_env(
        &[
            "--config",
            file,
            "--shutdown-delay",
            "2s",
            "config",
            "check",
        ],
        &[
            ("LEADTRACK_HEADER_TIMEOUT", "7"),
            ("LEADTRACK_SHUTDOWN_DELAY", "3s"),
        ],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    for line in [
        format!("addr = \"{addr}\"  # file"),
        "log-format = \"json\"  # file".to_owned(),
        "header-timeout = 7  # environment".to_owned(),
        "shutdown-delay = \"2s\"  # flag".to_owned(),
        "rate-limit-ip = \"off\"  # file".to_owned(),
        "no-worker = true  # file".to_owned(),
        "idle-timeout = 60  # default".to_owned(),
    ] {
        assert!(out.lines().any(|l| l == line), "{line:?} in\n{out}");
    }

    // The file alone makes the server: its address, its log format, its database.
    let mut server =
        crate::process::binary::spawn(&db, &["--config", file, "serve"], "leadtrack listening")
            .await;
    server.base_url = format!("http://{addr}");
    let alive = reqwest::get(format!("{}/healthz", server.base_url))
        .await
        .unwrap();
    assert_eq!(alive.status().as_u16(), 200);
    let logs = server.logs();
    assert!(
        logs.iter()
            .all(|line| serde_json::from_str::<Value>(line).is_ok()),
        "{logs:#?}"
    );
    assert!(server.terminate().await.success());

    // The example file of docs/deploy is valid.
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/deploy/leadtrack.toml");
    let (code, out, err) = server_with_env(&["--config", example, "config", "check"], &[]).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("metrics-addr = \"127.0.0.1:9464\"  # file"),
        "{out}"
    );

    // A key that names no setting is refused, naming it; so is a bad value.
    std::fs::write(dir.path().join("typo.toml"), "adr = \"127.0.0.1:1\"\n").unwrap();
    std::fs::write(
        dir.path().join("bad.toml"),
        "worker-concurrency = \"many\"\n",
    )
    .unwrap();
    for (name, expected) in [
        ("typo.toml", "unknown key `adr`"),
        ("bad.toml", "`worker-concurrency`: invalid value 'many'"),
    ] {
        let path = dir.path().join(name);
        let (code, out, err) = server_with_env(
            &["--config", path.to_str().unwrap(), "config", "check"],
            &[],
        )
        .await;
        assert_eq!(code, 1, "{out}");
        assert!(
            err.starts_with("error: ") && err.contains(expected),
            "{err}"
        );
    }
}

#[tokio::test]
async fn the_undo_window_is_set_from_the_command_line_and_listed() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::process::binary::fresh_db(&dir).await;
    create_acme(&db).await;
    let window = async || {
        let listed = admin_json(&db, &["project", "list", "--json"]).await;
        listed[0]["undoWindowSeconds"].clone()
    };
    assert_eq!(window().await, json!(10), "ten seconds for a new project");
    let set = ["project", "set", "--project", "acme", "--undo-window"];
    admin_ok(&db, &[&set[..], &["0"]].concat()).await;
    assert_eq!(window().await, json!(0));
    let refused = admin(&db, &[&set[..], &["601"]].concat()).await;
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("whole seconds from 0 to 600"), "{said}");
    assert_eq!(window().await, json!(0), "a refused window changes nothing");
}

#[tokio::test]
async fn a_failed_delivery_is_sent_again_from_the_command_line_as_the_same_conversion() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leadtrack.db");
    let key = create_acme(&db).await;
    // The receiver is gone at first (410, a failure for good), then back.
    let hook = MockPlatform::start(MockResponse::empty(200)).await;
    hook.push(MockResponse::empty(410));
    connect_webhook(&db, &hook, "whsec_retry").await;
    let label = crate::process::binary::create_label(&db, "Customer", &["--webhook"]).await;
    let server = start_serve(&db, &[]).await;
    let client = Client::new(&server.base_url).with_api_key(&key);
    let lead = CreateLeadRequest {
        user_data: Some(UserData {
            email: Some("retry@example.com".into()),
            ..UserData::default()
        }),
        ..CreateLeadRequest::default()
    };
    let lead = client.create_server_side_lead(&lead).await.unwrap().lead_id;
    let rating = UpdateLeadStatusRequest {
        identifier: LeadIdentifier::LeadId(lead),
        conversion_id: ConversionId::Label(label),
        price: Some(4200),
        note: None,
    };
    client.update_lead_status(&rating).await.unwrap();
    hook.wait_for(1, Duration::from_secs(20)).await;

    let retry = ["job", "retry", "--project", "acme", "--json"];
    let mut queued = Value::Null;
    for _ in 0..100 {
        // The worker records the failure just after the answer: until then, nothing to retry.
        queued = admin_json(&db, &[&retry[..], &["--lead", &lead.to_string()]].concat()).await;
        if queued["queued"] == json!(1) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(queued["queued"], json!(1), "{queued}");
    let posts = hook.wait_for(2, Duration::from_secs(20)).await;
    let (first, again) = (posts[0].json(), posts[1].json());
    assert_eq!(again["conversionEventId"], first["conversionEventId"]);
    assert_eq!(
        (&again["price"], &again["occurredAt"]),
        (&json!(4200), &first["occurredAt"])
    );
    assert_ne!(again["id"], first["id"], "a job of its own");
    let none = admin_json(
        &db,
        &[
            &retry[..],
            &["--integration", "webhook", "--since", "2026-01-01"],
        ]
        .concat(),
    )
    .await;
    assert_eq!(none["queued"], json!(0), "nothing failed any more");
    let unknown = admin(
        &db,
        &[
            &retry[..],
            &["--integration", "myspace", "--since", "2026-01-01"],
        ]
        .concat(),
    )
    .await;
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("unknown integration"));
    assert!(server.terminate().await.success());
}
