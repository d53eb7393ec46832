//! The secret key as an operator meets it: a SQLite database's own key file made on first
//! start (its path printed, never the key), secrets absent from the database file, another
//! key refused at start, PostgreSQL refused without a key, and `secrets rotate`.

use std::path::Path;

use crate::process::operations::server_with_env;

const SECRET: &str = "whsec_known-to-the-test-4711";

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle.as_bytes())
}

/// `server ARGS --db DB` with no `LEADTRACK_*` variable but `env`; it must succeed.
async fn ok(db: &Path, args: &[&str], env: &[(&str, &str)]) -> (String, String) {
    let db = db.to_str().unwrap();
    let (code, out, err) = server_with_env(&[args, &["--db", db]].concat(), env).await;
    assert_eq!(code, 0, "{args:?}: {out}{err}");
    (out, err)
}

/// Project acme with a webhook integration signed with [`SECRET`].
async fn acme_with_a_secret(db: &Path, env: &[(&str, &str)]) -> (String, String) {
    let made = ok(
        db,
        &["project", "create", "--name", "Acme", "--id", "acme"],
        env,
    )
    .await;
    let url = "https://crm.example.com/hook";
    let connect = ["integration", "webhook", "--project", "acme", "--url", url];
    ok(db, &[&connect[..], &["--secret", SECRET]].concat(), env).await;
    made
}

#[tokio::test]
async fn a_sqlite_database_makes_its_key_file_once_and_keeps_no_secret_in_plain_text() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leads.db");
    let (out, err) = acme_with_a_secret(&db, &[]).await;
    let key_file = dir.path().join("leads.db.key");
    let key = std::fs::read_to_string(&key_file).unwrap();
    assert!(err.contains(&format!("{}", key_file.display())), "{err}");
    assert!(!out.contains(key.trim()) && !err.contains(key.trim()));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&key_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // Said once: the next command finds the file.
    let (_, err) = ok(&db, &["integration", "list", "--project", "acme"], &[]).await;
    assert!(!err.contains("Made the key"), "{err}");
    assert!(!contains(&std::fs::read(&db).unwrap(), SECRET));
}

#[tokio::test]
async fn another_key_is_refused_at_start_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leads.db");
    acme_with_a_secret(&db, &[]).await;
    let other = leadtrack_core::vault::SecretKey::generate().to_base64();
    let db_arg = db.to_str().unwrap();
    let (code, _, err) = server_with_env(
        &["serve", "--addr", "127.0.0.1:0", "--db", db_arg],
        &[("LEADTRACK_SECRET_KEY", &other)],
    )
    .await;
    assert_eq!(code, 1);
    assert!(
        err.contains("the secret key is not the one this database's secrets are sealed with"),
        "{err}"
    );
    let (code, _, err) = server_with_env(
        &["project", "list", "--db", db_arg],
        &[("LEADTRACK_SECRET_KEY", "not-a-key")],
    )
    .await;
    assert_eq!(code, 1);
    assert!(
        err.contains("LEADTRACK_SECRET_KEY: the secret key is not base64"),
        "{err}"
    );
}

#[tokio::test]
async fn postgres_without_a_key_refuses_to_start_saying_how_to_make_one() {
    let (code, _, err) = server_with_env(
        &[
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--db",
            "postgres://leadtrack@127.0.0.1:1/leadtrack",
        ],
        &[],
    )
    .await;
    assert_eq!(code, 1);
    assert!(
        err.contains("PostgreSQL needs a secret key") && err.contains("openssl rand -base64 32"),
        "{err}"
    );
}

#[tokio::test]
async fn rotation_seals_every_secret_with_the_new_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leads.db");
    acme_with_a_secret(&db, &[]).await;
    let key_file = dir.path().join("leads.db.key");
    let old = std::fs::read_to_string(&key_file).unwrap();
    let new_file = dir.path().join("new.key");
    let new = leadtrack_core::vault::SecretKey::generate().to_base64();
    std::fs::write(&new_file, &new).unwrap();

    let new_path = new_file.to_str().unwrap();
    let (out, _) = ok(&db, &["secrets", "rotate", "--new-key-file", new_path], &[]).await;
    assert!(out.contains("Sealed 1 secrets with the key in"), "{out}");
    // The database's own key file holds the new key, so the defaults go on working.
    assert_eq!(std::fs::read_to_string(&key_file).unwrap().trim(), new);
    let (listed, _) = ok(&db, &["integration", "list", "--project", "acme"], &[]).await;
    assert!(listed.contains("webhook"), "{listed}");
    ok(
        &db,
        &["integration", "list", "--project", "acme"],
        &[("LEADTRACK_SECRET_KEY", &new)],
    )
    .await;
    let db_arg = db.to_str().unwrap();
    let (code, _, err) = server_with_env(
        &["project", "list", "--db", db_arg],
        &[("LEADTRACK_SECRET_KEY", old.trim())],
    )
    .await;
    assert_eq!(code, 1, "{err}");
    assert!(!contains(&std::fs::read(&db).unwrap(), SECRET));
}

#[tokio::test]
async fn a_platform_application_needs_its_id_and_its_secret() {
    let (code, _, err) = server_with_env(
        &[
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--google-client-id",
            "id.apps",
        ],
        &[],
    )
    .await;
    assert_eq!(code, 1);
    assert!(
        err.contains("--google-client-id and --google-client-secret go together"),
        "{err}"
    );
}
