//! Setting up a lead source as an operator does: `integration google-lead-forms` and
//! `integration meta-lead-ads` keep their key or token sealed (absent from the database
//! file), never print it, and print the webhook's absolute URL as their last line;
//! `--remove` stops them.

use crate::process::operations::server_with_env;

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

#[tokio::test]
async fn a_facebook_page_is_set_up_with_its_token_sealed_and_the_webhook_url_printed_last() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leads.db");
    let db = db.to_str().unwrap();
    let run = |args: &'static [&'static str]| async move {
        server_with_env(&[args, &["--db", db]].concat(), &[]).await
    };
    run(&["project", "create", "--name", "Acme", "--id", "acme"]).await;
    const TOKEN: &str = "page-token-known-to-the-test-81c3";
    let (code, out, err) = run(&[
        "integration",
        "meta-lead-ads",
        "--project",
        "acme",
        "--page-id",
        "1234567890",
        "--page-access-token",
        TOKEN,
        "--public-url",
        "https://leads.example.com",
    ])
    .await;
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        out.lines().last(),
        Some("https://leads.example.com/webhooks/meta/leadgen"),
        "{out}"
    );
    assert!(!out.contains(TOKEN) && !err.contains(TOKEN));
    let mut bytes = std::fs::read(db).unwrap();
    bytes.extend(std::fs::read(format!("{db}-wal")).unwrap_or_default());
    assert!(
        !bytes
            .windows(TOKEN.len())
            .any(|window| window == TOKEN.as_bytes())
    );

    // A page id is digits; a verify token is no use without the app secret that signs.
    let (code, _, err) = run(&[
        "integration",
        "meta-lead-ads",
        "--project",
        "acme",
        "--page-id",
        "my-page",
        "--page-access-token",
        "t",
    ])
    .await;
    assert_ne!(code, 0);
    assert!(err.contains("numeric"), "{err}");
    let (code, _, err) = run(&["serve", "--meta-verify-token", "v", "--addr", "127.0.0.1:0"]).await;
    assert_ne!(code, 0);
    assert!(err.contains("--meta-app-secret"), "{err}");
    let (code, out, _) = run(&[
        "integration",
        "meta-lead-ads",
        "--project",
        "acme",
        "--remove",
    ])
    .await;
    assert_eq!(code, 0);
    assert!(out.contains("no longer takes Meta Lead Ads leads"), "{out}");
}
