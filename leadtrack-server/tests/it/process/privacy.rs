//! `privacy erase` as an operator runs it beside a running server: the person's leads are
//! erased, the server no longer finds them, and the command says what receivers kept.

use serde_json::json;

use crate::process::binary::{admin, admin_json, create_acme, fresh_db, get_json, start};

#[tokio::test]
async fn privacy_erase_erases_a_person_that_the_running_server_then_cannot_find() {
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

    let erase = ["privacy", "erase", "--project", "acme", "--email"];
    let erased = admin_json(&db, &[&erase[..], &["ADA@example.com", "--json"]].concat()).await;
    assert_eq!(erased, json!({"erased": 1, "leadIds": [1], "sentTo": []}));
    let again = admin(&db, &[&erase[..], &["ada@example.com"]].concat()).await;
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
