//! Storage faults through the compiled server: a disk that fills up answers 503 with
//! `Retry-After`, loses nothing acknowledged, and the server goes on once there is room.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::process::binary::{create_acme, start_serve_limited};

#[tokio::test]
async fn a_full_disk_answers_503_and_the_server_recovers_without_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leadtrack.db");
    let key = create_acme(&db).await;
    // The server may write files of a few MiB at most: past that its writes fail as they
    // do on a full disk (the signal a process gets for it is ignored, as servers do).
    let server = start_serve_limited(&db, "trap '' XFSZ && ulimit -S -f 8192").await;
    let http = reqwest::Client::new();
    let create = |n: usize| {
        let body = json!({
            "userData": {"email": format!("lead{n}@example.com")},
            "formData": {"formName": "Big", "notes": "x".repeat(50_000)}
        });
        http.post(format!(
            "{}/api/leads/createServerSideLead",
            server.base_url
        ))
        .header("x-api-key", &key)
        .json(&body)
        .send()
    };

    let mut acknowledged = 0;
    let mut full = None;
    for n in 0..1_000 {
        let reply = create(n).await.unwrap();
        match reply.status() {
            StatusCode::CREATED => acknowledged += 1,
            StatusCode::SERVICE_UNAVAILABLE => {
                full = Some(reply);
                break;
            }
            other => panic!("lead {n}: {other} {}", reply.text().await.unwrap()),
        }
    }
    let full = full.expect("the storage filled up within 1,000 leads of 50 KB");
    assert!(acknowledged > 0, "the first leads fitted");
    assert_eq!(full.headers()["retry-after"], "1");
    let body: Value = full.json().await.unwrap();
    assert_eq!(body["code"], "unavailable", "{body}");
    assert!(!body.to_string().contains("disk") && !body.to_string().contains("I/O"));

    // Reads go on, and every acknowledged lead is there.
    let count = |http: reqwest::Client| {
        let url = format!("{}/api/leads/getLeads?limit=1", server.base_url);
        let key = key.clone();
        async move {
            let page = crate::process::binary::get_json(&http, &url, &key).await;
            page["total"].as_u64().unwrap()
        }
    };
    assert_eq!(count(http.clone()).await, acknowledged);

    // Room again (the limit lifted on the running process): writes work, no restart.
    let lifted = std::process::Command::new("prlimit")
        .args(["--pid", &server.pid().to_string(), "--fsize=unlimited"])
        .status()
        .expect("run prlimit (util-linux)");
    assert!(lifted.success());
    let mut recovered = false;
    for n in 0..20 {
        let reply = create(10_000 + n).await.unwrap();
        if reply.status() == StatusCode::CREATED {
            recovered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(recovered, "writes work again once there is room");
    assert_eq!(count(http).await, acknowledged + 1);
    assert!(server.terminate().await.success());
}

#[tokio::test]
async fn read_only_storage_is_refused_at_start_with_a_clear_error() {
    // A read-only file system of the test's own: a tmpfs mounted and then remounted
    // read-only in a private user and mount namespace (no privileges needed).
    let dir = tempfile::tempdir().unwrap();
    let mount = dir.path().join("mnt");
    std::fs::create_dir(&mount).unwrap();
    let db = mount.join("leadtrack.db");
    let (server, mount, db) = (
        crate::process::binary::server_binary()
            .display()
            .to_string(),
        mount.display().to_string(),
        db.display().to_string(),
    );
    let script = format!(
        "mount -t tmpfs none '{mount}' && '{server}' project create --name A --db '{db}' >/dev/null \
         && mount -o remount,ro '{mount}' && exec '{server}' serve --addr 127.0.0.1:0 --db '{db}'"
    );
    let run = tokio::process::Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-c", &script])
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the server refused to start instead of serving")
        .expect("run unshare (util-linux)");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("error: "))
        .collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains("cannot be written") && errors[0].contains("Read-only file system"),
        "{stderr}"
    );
}
