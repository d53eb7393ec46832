//! Storage faults through the compiled server: a disk that fills up answers 503 with
//! `Retry-After`, loses nothing acknowledged, and the server goes on once there is room.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::process::{create_acme, start_serve_limited};

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
            let page: Value = http
                .get(url)
                .header("x-api-key", key)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
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
