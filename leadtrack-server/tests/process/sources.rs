//! Setting up a lead source as an operator does: `integration google-lead-forms` keeps the
//! key sealed (absent from the database file), never prints it, and prints the webhook's
//! absolute URL as its last line; `--remove` stops it.

use crate::operations::server_with_env;

#[tokio::test]
async fn google_lead_forms_keep_their_key_sealed_and_print_the_webhook_url_last() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leads.db");
    let db = db.to_str().unwrap();
    let run = |args: &'static [&'static str]| async move {
        let (code, out, err) = server_with_env(&[args, &["--db", db]].concat(), &[]).await;
        assert_eq!(code, 0, "{args:?}: {out}{err}");
        out
    };
    run(&["project", "create", "--name", "Acme", "--id", "acme"]).await;
    const KEY: &str = "lead-form-key-known-to-the-test-5e9a";
    let out = run(&[
        "integration",
        "google-lead-forms",
        "--project",
        "acme",
        "--key",
        KEY,
        "--public-url",
        "https://leads.example.com/",
    ])
    .await;
    assert_eq!(
        out.lines().last(),
        Some("https://leads.example.com/webhooks/google/lead-forms/acme"),
        "{out}"
    );
    assert!(!out.contains(KEY));
    let mut bytes = std::fs::read(db).unwrap();
    bytes.extend(std::fs::read(format!("{db}-wal")).unwrap_or_default());
    assert!(
        !bytes
            .windows(KEY.len())
            .any(|window| window == KEY.as_bytes()),
        "the key is in the database file"
    );

    let out = run(&[
        "integration",
        "google-lead-forms",
        "--project",
        "acme",
        "--remove",
    ])
    .await;
    assert!(
        out.contains("no longer takes Google lead form leads"),
        "{out}"
    );
    let (code, _, err) = server_with_env(
        &[
            "integration",
            "google-lead-forms",
            "--project",
            "acme",
            "--db",
            db,
        ],
        &[],
    )
    .await;
    assert_ne!(code, 0);
    assert!(err.contains("--key"), "{err}");
}
