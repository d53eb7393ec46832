//! Secrets at rest in the SQLite file: sealed with the key (never in the file in plain
//! text), refused with another key, sealed on first open when an older build kept them
//! plain, and sealed again under a new key.

use std::path::{Path, PathBuf};

use leadtrack_core::StoreError;
use leadtrack_core::testkit::{SECRETS, keep_secrets, secrets_of};
use leadtrack_core::vault::SecretKey;
use leadtrack_sqlite::{SqliteOptions, SqliteStore, key_file, rotate_secret_key};

const TOKEN: &str = SECRETS[0];
const HOOK_SECRET: &str = SECRETS[1];
const CHAT_URL: &str = SECRETS[2];
const FORM_KEY: &str = SECRETS[3];
const INBOUND_SECRET: &str = SECRETS[4];
const SPEND_TOKEN: &str = SECRETS[5];

fn with_key(key: &SecretKey) -> SqliteOptions {
    SqliteOptions {
        secret_key: Some(key.clone()),
        ..SqliteOptions::default()
    }
}

async fn open(path: &Path, key: &SecretKey) -> Result<SqliteStore, StoreError> {
    SqliteStore::open_with(path, with_key(key)).await
}

/// Every file of the database (the file, and its WAL and shared memory if any), as bytes.
fn files_of(path: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    for suffix in ["", "-wal", "-shm"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        bytes.extend(std::fs::read(PathBuf::from(name)).unwrap_or_default());
    }
    bytes
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle.as_bytes())
}

fn assert_no_plain_secret(path: &Path) {
    let bytes = files_of(path);
    assert!(!bytes.is_empty());
    for secret in [
        TOKEN,
        HOOK_SECRET,
        "known-chat-token",
        FORM_KEY,
        SPEND_TOKEN,
    ] {
        assert!(!contains(&bytes, secret), "{secret} is in the file");
    }
}

#[tokio::test]
async fn secrets_are_sealed_in_the_file_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("leads.db");
    let key = SecretKey::generate();
    let store = open(&path, &key).await.unwrap();
    let project = keep_secrets(&store).await;
    // While it runs (the WAL holds the writes), and once closed.
    assert_no_plain_secret(&path);
    assert_eq!(secrets_of(&store, &project).await, SECRETS);
    // A backup holds the ciphertext only.
    let backup = dir.path().join("backup.db");
    leadtrack_sqlite::backup(&path, &backup).unwrap();
    assert_no_plain_secret(&backup);
    store.close().await;
    assert_no_plain_secret(&path);
    assert!(contains(&files_of(&path), "https://crm.example.com/leads"));

    let store = open(&path, &key).await.unwrap();
    assert_eq!(secrets_of(&store, &project).await, SECRETS);
    store.close().await;
}

#[tokio::test]
async fn another_key_is_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("leads.db");
    let store = open(&path, &SecretKey::generate()).await.unwrap();
    keep_secrets(&store).await;
    store.close().await;

    let err = open(&path, &SecretKey::generate()).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Invalid(reason) if reason.contains("not the one this database's secrets are sealed with")),
        "{err:?}"
    );
}

#[tokio::test]
async fn without_a_key_the_database_makes_its_key_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("leads.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let project = keep_secrets(&store).await;
    store.close().await;
    let written = std::fs::read_to_string(key_file(&path)).unwrap();
    let key = SecretKey::from_base64(&written).unwrap();

    // The same key opens it, with or without naming the file.
    let store = open(&path, &key).await.unwrap();
    assert_eq!(secrets_of(&store, &project).await[0], TOKEN);
    store.close().await;
    let store = SqliteStore::open(&path).await.unwrap();
    store.close().await;
    assert_eq!(std::fs::read_to_string(key_file(&path)).unwrap(), written);
}

#[tokio::test]
async fn plain_secrets_of_an_older_build_are_sealed_on_first_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("leads.db");
    let key = SecretKey::generate();
    let store = open(&path, &key).await.unwrap();
    let project = keep_secrets(&store).await;
    store.close().await;
    // What a build before sealing left: the same rows in plain text, and no check value.
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        let settings = serde_json::json!({
            "kind": "webhook", "url": "https://crm.example.com/hook", "secret": TOKEN,
        });
        let source = serde_json::json!({"kind": "google-lead-forms", "key": FORM_KEY});
        let inbound = serde_json::json!({
            "name": "Typeform", "preset": "typeform", "secret": INBOUND_SECRET, "mapping": [],
        });
        conn.execute_batch(&format!(
            "UPDATE integrations SET settings = '{settings}';
             UPDATE webhooks SET secret = '{HOOK_SECRET}';
             UPDATE chat_channels SET url = '{CHAT_URL}';
             UPDATE lead_sources SET settings = '{source}';
             UPDATE inbound_hooks SET settings = '{inbound}';
             UPDATE spend_tokens SET token = '{SPEND_TOKEN}';
             DELETE FROM secret_key_check;"
        ))
        .unwrap();
    }
    assert!(contains(&files_of(&path), TOKEN));

    let store = open(&path, &key).await.unwrap();
    assert_eq!(secrets_of(&store, &project).await, SECRETS);
    store.close().await;
    assert_no_plain_secret(&path);
}

#[tokio::test]
async fn a_new_key_seals_every_secret_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("leads.db");
    let (old, new) = (SecretKey::generate(), SecretKey::generate());
    let store = open(&path, &old).await.unwrap();
    let project = keep_secrets(&store).await;
    // Not while the database is open.
    let err = rotate_secret_key(&path, &old, &new).unwrap_err();
    assert!(
        err.to_string().contains("is open in a running leadtrack"),
        "{err}"
    );
    store.close().await;
    drop(store);
    // Not from a key that is not the database's.
    assert!(rotate_secret_key(&path, &new, &old).is_err());
    assert_eq!(rotate_secret_key(&path, &old, &new).unwrap(), 6);

    assert!(open(&path, &old).await.is_err());
    let store = open(&path, &new).await.unwrap();
    assert_eq!(secrets_of(&store, &project).await, SECRETS);
    store.close().await;
    assert_no_plain_secret(&path);
}
