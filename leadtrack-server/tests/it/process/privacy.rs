//! `privacy export` and `privacy erase` as an operator runs them beside a running server:
//! the person's data as one document, then their leads erased, which the server no longer
//! finds; the command says what receivers kept.

use serde_json::json;

use crate::process::binary::{admin, admin_json, admin_ok, create_acme, fresh_db, get_json, start};

#[tokio::test]
async fn privacy_export_shows_a_person_and_privacy_erase_erases_them_from_the_running_server() {
    let dir = tempfile::tempdir().unwrap();
    let db = fresh_db(&dir).await;
    let key = create_acme(&db).await;
    let server = start(&db).await;
    let http = reqwest::Client::new();
    let create = format!("{}/api/leads/createServerSideLead", server.base_url);
    for email in ["ada@example.com", "bob@example.com"] {
        let lead = json!({"userData": {"email": email, "firstName": "Someone"}});
        let sent = http.post(&create).header("x-api-key", &key).json(&lead);
        assert_eq!(sent.send().await.unwrap().status(), 201);
    }

    let export = [
        "privacy",
        "export",
        "--project",
        "acme",
        "--email",
        "ada@example.com",
    ];
    let exported = admin_json(&db, &export).await;
    assert_eq!(exported["person"], json!({"email": "ada@example.com"}));
    assert_eq!(exported["leads"][0]["lead"]["email"], "ada@example.com");
    assert_eq!(exported["leads"][0]["activity"][0]["type"], "created");
    assert_eq!(exported["leads"].as_array().map(Vec::len), Some(1));

    let erase = ["privacy", "erase", "--project", "acme", "--email"];
    let erased = admin_json(&db, &[&erase[..], &["ADA@example.com", "--json"]].concat()).await;
    assert_eq!(erased, json!({"erased": 1, "leadIds": [1], "sentTo": []}));
    let again = admin(&db, &[&erase[..], &["ada@example.com"]].concat()).await;
    let emptied = admin_json(&db, &export).await;
    assert_eq!(emptied["leads"], json!([]));
    assert!(again.status.success());
    assert_eq!(
        String::from_utf8_lossy(&again.stdout).trim(),
        "Nothing to erase: no lead of this project holds the person's data."
    );
    let url = |email: &str| format!("{}/api/leads/getLead?email={email}", server.base_url);
    let gone = get_json(&http, &url("ada@example.com"), &key).await;
    assert_eq!(gone["code"], "lead_not_found");
    let kept = get_json(&http, &url("bob@example.com"), &key).await;
    assert_eq!(kept["lead"]["email"], "bob@example.com");

    // Exactly one person per request.
    let both = admin(
        &db,
        &[&erase[..], &["ada@example.com", "--phone", "0151"]].concat(),
    )
    .await;
    assert_eq!(both.status.code(), Some(2), "clap refuses two");
    let none = admin(&db, &["privacy", "erase", "--project", "acme"]).await;
    assert_eq!(none.status.code(), Some(2));
}

/// `project set --retention-days`, then a server with its worker: the lead older than the
/// retention is erased by the rule's daily run as the worker starts; the recent one stays.
#[tokio::test]
async fn the_worker_erases_leads_older_than_the_projects_retention() {
    let dir = tempfile::tempdir().unwrap();
    let db = fresh_db(&dir).await;
    let key = create_acme(&db).await;
    let file = dir.path().join("past.csv");
    std::fs::write(
        &file,
        "email,createdAt\nold@example.com,2020-01-15T10:00:00Z\n",
    )
    .unwrap();
    let import = [
        "lead",
        "import",
        "--project",
        "acme",
        file.to_str().unwrap(),
    ];
    admin_ok(&db, &import).await;
    let set = [
        "project",
        "set",
        "--project",
        "acme",
        "--retention-days",
        "30",
    ];
    let said = admin_ok(&db, &[&set[..], &["--spam-retention-days", "7"]].concat()).await;
    let said = String::from_utf8_lossy(&said.stdout);
    assert!(
        said.contains("leads kept 30 days, spam kept 7 days"),
        "{said}"
    );
    let listed = admin_json(&db, &["project", "list", "--json"]).await;
    assert_eq!(
        (&listed[0]["retentionDays"], &listed[0]["spamRetentionDays"]),
        (&json!(30), &json!(7))
    );
    let bad = admin(
        &db,
        &[
            "project",
            "set",
            "--project",
            "acme",
            "--retention-days",
            "0",
        ],
    )
    .await;
    assert!(!bad.status.success());

    let server = start(&db).await;
    let http = reqwest::Client::new();
    let create = format!("{}/api/leads/createServerSideLead", server.base_url);
    let lead = json!({"userData": {"email": "new@example.com"}});
    let sent = http.post(&create).header("x-api-key", &key).json(&lead);
    assert_eq!(sent.send().await.unwrap().status(), 201);
    let url = |email: &str| format!("{}/api/leads/getLead?email={email}", server.base_url);
    let mut gone = false;
    for _ in 0..100 {
        let found = get_json(&http, &url("old@example.com"), &key).await;
        if found["code"] == "lead_not_found" {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(gone, "the old lead was erased");
    let kept = get_json(&http, &url("new@example.com"), &key).await;
    assert_eq!(kept["lead"]["email"], "new@example.com");
    let history = format!("{}/api/leads/getLeadActivity?leadId=1", server.base_url);
    let history = get_json(&http, &history, &key).await;
    assert_eq!(history["events"][0]["type"], "erased");
    assert_eq!(history["events"][0]["by"], json!(null), "by the service");
}
