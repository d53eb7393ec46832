//! Secrets at rest in PostgreSQL: sealed in their columns, refused with another key,
//! sealed once (however many servers start together) when an older build kept them plain,
//! and sealed again under a new key.
#![cfg(leadtrack_postgres)]

use futures_util::future::join_all;
use leadtrack_core::StoreError;
use leadtrack_core::testkit::{SECRETS, keep_secrets, secrets_of};
use leadtrack_core::vault::{SEALED, SecretKey, WRONG_KEY};
use leadtrack_postgres::PgStore;
use leadtrack_postgres::testkit::test_key;

/// The raw values of every sealed column.
async fn raw_values(url: &str) -> Vec<String> {
    let client = crate::support::client(url).await;
    let mut values = Vec::new();
    for column in SEALED {
        let sql = format!("SELECT {} FROM {}", column.column, column.table);
        for row in client.query(&sql, &[]).await.unwrap() {
            values.push(row.get(0));
        }
    }
    values
}

fn assert_sealed(values: &[String]) {
    assert_eq!(values.len(), SECRETS.len());
    for value in values {
        assert!(value.starts_with("lt1:"), "{value}");
        for secret in SECRETS {
            assert!(!value.contains(secret), "{secret} is in {value}");
        }
    }
}

async fn connect(url: &str, key: &SecretKey) -> Result<PgStore, StoreError> {
    PgStore::connect_with(url, key, crate::support::options()).await
}

#[tokio::test]
async fn secrets_are_sealed_in_their_columns() {
    let (store, url) = crate::support::fresh_store().await;
    let project = keep_secrets(&store).await;
    assert_sealed(&raw_values(&url).await);
    assert_eq!(secrets_of(&store, &project).await, SECRETS);
}

#[tokio::test]
async fn another_key_is_refused_at_connect() {
    let (store, url) = crate::support::fresh_store().await;
    keep_secrets(&store).await;
    store.close();
    let err = connect(&url, &SecretKey::generate()).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Invalid(reason) if reason == WRONG_KEY),
        "{err:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn plain_secrets_of_an_older_build_are_sealed_once_by_servers_starting_together() {
    let (store, url) = crate::support::fresh_store().await;
    let project = keep_secrets(&store).await;
    store.close();
    // What a build before sealing left: the same rows in plain text, and no check value.
    let client = crate::support::client(&url).await;
    let settings = serde_json::json!({
        "kind": "webhook", "url": "https://crm.example.com/hook", "secret": SECRETS[0],
    });
    client
        .execute(
            "UPDATE integrations SET settings = $1",
            &[&settings.to_string()],
        )
        .await
        .unwrap();
    client
        .execute("UPDATE webhooks SET secret = $1", &[&SECRETS[1]])
        .await
        .unwrap();
    client
        .execute("UPDATE chat_channels SET url = $1", &[&SECRETS[2]])
        .await
        .unwrap();
    let source = serde_json::json!({"kind": "google-lead-forms", "key": SECRETS[3]});
    client
        .execute(
            "UPDATE lead_sources SET settings = $1",
            &[&source.to_string()],
        )
        .await
        .unwrap();
    let inbound = serde_json::json!({
        "name": "Typeform", "preset": "typeform", "secret": SECRETS[4], "mapping": [],
    });
    client
        .execute(
            "UPDATE inbound_hooks SET settings = $1",
            &[&inbound.to_string()],
        )
        .await
        .unwrap();
    client
        .execute("UPDATE spend_tokens SET token = $1", &[&SECRETS[5]])
        .await
        .unwrap();
    client
        .execute("DELETE FROM secret_key_check", &[])
        .await
        .unwrap();

    let key = test_key();
    let stores = join_all((0..8).map(|_| connect(&url, &key))).await;
    for store in &stores {
        let store = store.as_ref().expect("every server starts");
        // Sealed twice, a value would open to another sealed value, not the secret.
        assert_eq!(secrets_of(store, &project).await, SECRETS);
    }
    assert_sealed(&raw_values(&url).await);
}

#[tokio::test]
async fn a_new_key_seals_every_secret_again() {
    let (store, url) = crate::support::fresh_store().await;
    let project = keep_secrets(&store).await;
    let before = raw_values(&url).await;
    let new = SecretKey::generate();
    assert_eq!(store.rotate_secret_key(&new).await.unwrap(), 6);
    store.close();
    let after = raw_values(&url).await;
    assert_sealed(&after);
    assert!(before.iter().all(|value| !after.contains(value)));

    assert!(connect(&url, &test_key()).await.is_err());
    let store = connect(&url, &new).await.unwrap();
    assert_eq!(secrets_of(&store, &project).await, SECRETS);
    // Rotating from a key that is no longer the database's changes nothing.
    let stale = connect(&url, &new).await.unwrap();
    store.rotate_secret_key(&test_key()).await.unwrap();
    assert!(stale.rotate_secret_key(&new).await.is_err());
}
