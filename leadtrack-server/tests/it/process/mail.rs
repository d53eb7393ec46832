//! Outgoing email through the compiled server: `mail test` against an SMTP server on
//! loopback, with the settings given as flags, environment variables or a file, and what
//! it says when the server refuses or none is set.

use leadtrack_mail::testkit::SmtpReceiver;

use crate::process::operations::server_with_env;

#[tokio::test]
async fn mail_test_sends_through_the_smtp_server_the_settings_name() {
    let smtp = SmtpReceiver::start(&["nobody@example.com"]).await;
    let url = smtp.url();
    let (code, out, err) = server_with_env(
        &[
            "mail",
            "test",
            "--to",
            "ada@example.com",
            "--smtp-url",
            &url,
            "--mail-from",
            "leadtrack <leads@example.com>",
            "--public-url",
            "https://leads.example.com/",
        ],
        &[],
    )
    .await;
    assert_eq!(
        (code, out.as_str()),
        (0, "sent a test message to ada@example.com\n"),
        "{err}"
    );
    let received = smtp.messages();
    assert_eq!(received.len(), 1);
    assert_eq!(
        (received[0].from.as_str(), received[0].to.as_slice()),
        ("leads@example.com", &["ada@example.com".to_owned()][..])
    );
    assert!(
        received[0]
            .data
            .contains("Subject: leadtrack: a test message")
    );
    assert!(
        received[0]
            .body()
            .ends_with("Links in its messages point to https://leads.example.com."),
        "{}",
        received[0].body()
    );

    // The same settings from the environment, and from a configuration file.
    let env = [
        ("LEADTRACK_SMTP_URL", url.as_str()),
        ("LEADTRACK_MAIL_FROM", "leads@example.com"),
    ];
    let (code, _, err) = server_with_env(&["mail", "test", "--to", "bob@example.com"], &env).await;
    assert_eq!(code, 0, "{err}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("leadtrack.toml");
    std::fs::write(
        &file,
        format!(
            "smtp-url = \"{url}\"\nmail-from = \"leads@example.com\"\naddr = \"10.0.0.1:80\"\n"
        ),
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let (code, _, err) = server_with_env(
        &["--config", file, "mail", "test", "--to", "cy@example.com"],
        &[],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let received = smtp.messages();
    let to: Vec<&str> = received.iter().map(|m| m.to[0].as_str()).collect();
    assert_eq!(to, ["ada@example.com", "bob@example.com", "cy@example.com"]);
    assert!(
        received[2].body().ends_with("point to http://10.0.0.1:80."),
        "without --public-url, serve's address"
    );

    // A refusal is one line and exit code 1; nothing was kept.
    let (code, out, err) = server_with_env(
        &[
            "--config",
            file,
            "mail",
            "test",
            "--to",
            "nobody@example.com",
        ],
        &[],
    )
    .await;
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(
        err.starts_with("error: the SMTP server refused the message: "),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(smtp.messages().len(), 3);
}

#[tokio::test]
async fn without_an_smtp_server_mail_test_says_what_to_set_and_secrets_stay_hidden() {
    let (code, _, err) = server_with_env(&["mail", "test", "--to", "ada@example.com"], &[]).await;
    assert_eq!(code, 1);
    assert_eq!(
        err,
        "error: no SMTP server: set --smtp-url (LEADTRACK_SMTP_URL) and --mail-from\n"
    );
    let (code, _, err) = server_with_env(
        &[
            "mail",
            "test",
            "--to",
            "ada@example.com",
            "--smtp-url",
            "smtp://127.0.0.1:1",
        ],
        &[],
    )
    .await;
    assert_eq!(code, 1);
    assert!(err.contains("needs --mail-from"), "{err}");
    // `config check` shows the SMTP URL without its password.
    let secret = "smtps://leads:hunter2@smtp.example.com:465";
    let (code, out, err) =
        server_with_env(&["config", "check"], &[("LEADTRACK_SMTP_URL", secret)]).await;
    assert_eq!(code, 0, "{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("smtp-url"))
        .expect("the smtp-url line");
    assert!(
        !line.contains("hunter2") && line.contains("smtp.example.com"),
        "{line}"
    );
}

/// `serve` runs the alert worker: a member who chose instant alerts gets an email for a
/// new lead, with its name, form and source and a link under `--public-url`, and spam
/// alerts nobody.
#[tokio::test]
async fn serve_emails_new_leads_to_the_members_who_asked() {
    use leadtrack_core::alert::{AlertPreferences, NewLeads};
    use leadtrack_core::{Accounts, Admin};

    let smtp = SmtpReceiver::start(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leads.db");
    {
        let store = crate::process::binary::open_store(&db).await;
        let now = chrono::Utc::now();
        let new = leadtrack_core::project::NewProject {
            public_id: Some("acme".into()),
            name: "Acme".into(),
            currency: None,
        };
        let acme = store.create_project(new, now).await.unwrap();
        let password = leadtrack_core::account::Password::new("a long password").unwrap();
        let new = leadtrack_core::account::NewUser::new("ada@example.com", Some("Ada"), &password);
        let ada = store.create_user(new.unwrap(), now).await.unwrap();
        let role = leadtrack_core::types::Role::Member;
        store.add_member(acme.id, ada.id, role, now).await.unwrap();
        let instant = AlertPreferences {
            new_leads: NewLeads::Instant,
            ..AlertPreferences::default()
        };
        store.set_alerts(acme.id, ada.id, &instant).await.unwrap();
        store.close().await;
    }
    let url = smtp.url();
    let options = [
        "--smtp-url",
        &url,
        "--mail-from",
        "leads@example.com",
        "--public-url",
        "https://leads.example.com",
    ];
    let server = crate::process::binary::start_serve(&db, &options).await;
    let lead = serde_json::json!({
        "projectId": "acme",
        "userData": {"firstName": "Grace", "email": "grace@example.org", "phone": "+1 555 0100"},
        "attributionData": {"utm_source": "google", "utm_medium": "cpc"},
        "formData": {"formName": "Contact"}
    });
    let created = reqwest::Client::new()
        .post(format!("{}/api/leads/createLead", server.base_url))
        .json(&lead)
        .send()
        .await
        .unwrap();
    assert_eq!(created.status().as_u16(), 201);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while smtp.messages().is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let received = smtp.messages();
    assert_eq!(received.len(), 1, "one alert");
    assert_eq!(received[0].to, ["ada@example.com"]);
    assert!(
        received[0]
            .data
            .contains("Subject: New lead in Acme: Grace")
    );
    let body = received[0].body();
    assert!(body.contains("Grace, form Contact, from google"), "{body}");
    assert!(
        body.contains("https://leads.example.com/projects/acme/leads/1"),
        "{body}"
    );
    assert!(
        !body.contains("grace@example.org") && !body.contains("0100"),
        "{body}"
    );
    assert!(server.terminate().await.success());
}
