//! Team accounts through the compiled server: the first run's owner signs in, and the
//! `user` and `member` commands change who can sign in to what while the server runs.

use std::path::Path;

use reqwest::StatusCode;
use serde_json::Value;

use crate::process::binary::{
    Server, admin, admin_json, admin_with_input, browser, create_acme, page, post_form, sign_in,
    start,
};

/// The value after `label` in the banner, e.g. `password:`.
fn banner_value(server: &Server, label: &str) -> String {
    server
        .stdout
        .iter()
        .find_map(|line| line.trim().strip_prefix(label))
        .map(|value| value.trim().to_owned())
        .unwrap_or_else(|| panic!("no {label:?} in {:?}", server.stdout))
}

#[tokio::test]
async fn the_first_run_prints_an_owner_who_can_sign_in() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("fresh.db");
    let server = start(&db).await;
    let email = banner_value(&server, "email:");
    let password = banner_value(&server, "password:");
    assert_eq!(email, "owner@localhost");
    assert_eq!(password.len(), 24, "{password}");
    assert!(
        server
            .stdout
            .iter()
            .any(|line| line.trim() == format!("Sign in to the dashboard at {}/", server.base_url)),
        "{:?}",
        server.stdout
    );
    assert!(
        server
            .stdout
            .iter()
            .all(|line| line.len() <= 100 || line.contains("curl"))
    );

    let (status, cookie) = sign_in(&server, &email, &password).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let cookie = cookie.expect("a session cookie");
    let (status, _, home) = page(&server, "/", &cookie).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        home.contains("My project") && home.contains("owner"),
        "{home}"
    );
    assert!(server.terminate().await.success());

    // The owner is created once: a restart prints no new password.
    let again = start(&db).await;
    assert!(again.stdout.iter().all(|line| !line.contains("password:")));
    let (status, _) = sign_in(&again, &email, &password).await;
    assert_eq!(
        status,
        StatusCode::SEE_OTHER,
        "the printed password still works"
    );
    assert!(again.terminate().await.success());
}

/// `user create` with a password on standard input.
async fn create_user(db: &Path, email: &str, name: &str, password: &str) -> Value {
    let output = admin_with_input(
        db,
        &[
            "user",
            "create",
            "--email",
            email,
            "--name",
            name,
            "--password-stdin",
            "--json",
        ],
        &format!("{password}\n"),
    )
    .await;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// A server on acme, whose first run made `owner@localhost`, and its database.
async fn acme_served(dir: &tempfile::TempDir) -> (std::path::PathBuf, Server) {
    let db = crate::process::binary::fresh_db(dir).await;
    create_acme(&db).await;
    let server = start(&db).await;
    (db, server)
}

/// `member add --project acme --email EMAIL --role ROLE --json`.
async fn add_member(db: &Path, email: &str, role: &str) -> Value {
    let args = ["member", "add", "--project", "acme", "--email", email];
    let args = [&args[..], &["--role", role, "--json"]].concat();
    admin_json(db, &args).await
}

/// Ada, with her own password: what `user create --json` said.
async fn ada(db: &Path) -> Value {
    create_user(db, "ada@example.com", "Ada", "ada's long password").await
}

/// Bob, with a generated password, a member of acme; his password.
async fn bob(db: &Path) -> String {
    let bob = admin_json(
        db,
        &["user", "create", "--email", "bob@example.com", "--json"],
    )
    .await;
    let bobs_password = bob["password"]
        .as_str()
        .expect("a generated password")
        .to_owned();
    add_member(db, "bob@example.com", "member").await;
    bobs_password
}

#[tokio::test]
async fn users_are_created_once_per_email_with_a_long_enough_password() {
    let dir = tempfile::tempdir().unwrap();
    let (db, server) = acme_served(&dir).await;
    let ada = ada(&db).await;
    assert_eq!(
        (ada["email"].as_str(), ada["name"].as_str()),
        (Some("ada@example.com"), Some("Ada"))
    );
    assert_eq!(
        ada["password"],
        Value::Null,
        "a chosen password is not printed"
    );
    bob(&db).await;
    let taken = admin(&db, &["user", "create", "--email", "ADA@example.com"]).await;
    assert_eq!(taken.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&taken.stderr),
        "error: a user with email \"ADA@example.com\" already exists\n"
    );
    let short = admin_with_input(
        &db,
        &[
            "user",
            "create",
            "--email",
            "c@example.com",
            "--password-stdin",
        ],
        "short\n",
    )
    .await;
    assert_eq!(
        String::from_utf8_lossy(&short.stderr),
        "error: a password must be 10 to 256 characters\n"
    );

    let users = admin_json(&db, &["user", "list", "--json"]).await;
    let emails: Vec<_> = users
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["email"].clone())
        .collect();
    assert_eq!(
        emails,
        ["owner@localhost", "ada@example.com", "bob@example.com"]
    );
    let listed = String::from_utf8_lossy(&admin(&db, &["user", "list"]).await.stdout).into_owned();
    assert!(
        listed.contains("ada@example.com") && !listed.contains("argon2"),
        "{listed}"
    );
    assert!(server.terminate().await.success());
}

#[tokio::test]
async fn members_added_while_the_server_runs_see_the_project_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (db, server) = acme_served(&dir).await;
    ada(&db).await;
    // Not yet a member of anything: signed in, but no project.
    let (_, cookie) = sign_in(&server, "ada@example.com", "ada's long password").await;
    let cookie = cookie.expect("ada signs in");
    assert!(
        page(&server, "/", &cookie)
            .await
            .2
            .contains("not a member of any project")
    );
    let added = add_member(&db, "ada@example.com", "owner").await;
    bob(&db).await;
    assert_eq!(added["role"], "owner");
    create_user(&db, "cy@example.com", "Cy", "cy's long password").await;
    let viewer = add_member(&db, "cy@example.com", "viewer").await;
    assert_eq!(viewer["role"], "viewer");
    let members = admin_json(&db, &["member", "list", "--project", "acme", "--json"]).await;
    let roles: Vec<_> = members
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["email"].as_str().unwrap().to_owned(),
                m["role"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        roles,
        [
            ("owner@localhost".to_owned(), "owner".to_owned()),
            ("ada@example.com".to_owned(), "owner".to_owned()),
            ("bob@example.com".to_owned(), "member".to_owned()),
            ("cy@example.com".to_owned(), "viewer".to_owned())
        ],
        "the first run made its owner an owner of the project that was there"
    );
    assert_eq!(
        page(&server, "/projects/acme/settings/members", &cookie)
            .await
            .0,
        StatusCode::OK,
        "an owner sees the project's settings"
    );

    assert!(server.terminate().await.success());
}

#[tokio::test]
async fn a_new_password_or_disabling_ends_a_users_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let (db, server) = acme_served(&dir).await;
    ada(&db).await;
    add_member(&db, "ada@example.com", "owner").await;
    let bobs_password = bob(&db).await;
    let (_, cookie) = sign_in(&server, "ada@example.com", "ada's long password").await;
    let cookie = cookie.expect("ada signs in");
    // A new password ends Ada's session at once.
    let changed = admin_with_input(
        &db,
        &[
            "user",
            "set-password",
            "--email",
            "ada@example.com",
            "--password-stdin",
        ],
        "ada's newer password\n",
    )
    .await;
    assert!(
        changed.status.success(),
        "{}",
        String::from_utf8_lossy(&changed.stderr)
    );
    let (status, location, _) = page(&server, "/projects/acme", &cookie).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(location.as_deref(), Some("/login?next=%2Fprojects%2Facme"));
    assert_eq!(
        sign_in(&server, "ada@example.com", "ada's long password")
            .await
            .0,
        StatusCode::UNAUTHORIZED
    );

    // Disabled, Bob cannot sign in, even with the right password; enabled, he can.
    admin_json(
        &db,
        &["user", "disable", "--email", "bob@example.com", "--json"],
    )
    .await;
    assert_eq!(
        sign_in(&server, "bob@example.com", &bobs_password).await.0,
        StatusCode::UNAUTHORIZED
    );
    let enabled = admin_json(
        &db,
        &["user", "enable", "--email", "bob@example.com", "--json"],
    )
    .await;
    assert_eq!(enabled["disabled"], false);
    let (status, bobs) = sign_in(&server, "bob@example.com", &bobs_password).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let bobs = bobs.unwrap();

    // Removed from the project, its pages are not found for him.
    admin_json(
        &db,
        &[
            "member",
            "remove",
            "--project",
            "acme",
            "--email",
            "bob@example.com",
            "--json",
        ],
    )
    .await;
    assert_eq!(
        page(&server, "/projects/acme", &bobs).await.0,
        StatusCode::NOT_FOUND
    );
    let again = admin(
        &db,
        &[
            "member",
            "remove",
            "--project",
            "acme",
            "--email",
            "bob@example.com",
        ],
    )
    .await;
    assert_eq!(
        String::from_utf8_lossy(&again.stderr),
        "error: bob@example.com is not a member of project acme\n"
    );

    assert!(server.terminate().await.success());
}

#[tokio::test]
async fn invitations_and_reset_links_come_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let (db, server) = acme_served(&dir).await;
    let public = ["--public-url", server.base_url.as_str()];

    // Without SMTP, the link is the last line printed (and `url` with --json).
    let args = [
        "member",
        "invite",
        "--project",
        "acme",
        "--email",
        "dee@example.com",
    ];
    let printed = admin(
        &db,
        &[&args[..], &["--role", "viewer"], &public[..]].concat(),
    )
    .await;
    assert!(
        printed.status.success(),
        "{}",
        String::from_utf8_lossy(&printed.stderr)
    );
    let out = String::from_utf8(printed.stdout).unwrap();
    let first = out.lines().last().unwrap().to_owned();
    assert!(
        first.starts_with(&format!("{}/invitations/", server.base_url)),
        "{out}"
    );
    let json = admin_json(
        &db,
        &[&args[..], &["--role", "viewer", "--json"], &public[..]].concat(),
    )
    .await;
    let url = json["url"].as_str().unwrap().to_owned();
    assert_eq!(json["emailed"], false);
    assert_ne!(url, first, "inviting again replaces the link");
    assert_eq!(
        browser().get(&first).send().await.unwrap().status(),
        StatusCode::GONE
    );

    let (status, cookie) = post_form(
        &server,
        &url,
        &[("name", "Dee"), ("password", "dee's long password")],
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (status, _, text) = page(&server, "/projects/acme/leads", &cookie.unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert!(text.contains("Signed in as <strong>Dee</strong>"));
    let members = admin_json(&db, &["member", "list", "--project", "acme", "--json"]).await;
    assert!(
        members
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["email"] == "dee@example.com" && m["role"] == "viewer"),
        "{members}"
    );

    // A reset link, emailed through SMTP on loopback and printed all the same.
    let smtp = leadtrack_mail::testkit::SmtpReceiver::start(&[]).await;
    let smtp_url = smtp.url();
    let mail = [
        "--smtp-url",
        smtp_url.as_str(),
        "--mail-from",
        "leads@example.com",
    ];
    let reset = admin_json(
        &db,
        &[
            &["user", "reset-link", "--email", "dee@example.com", "--json"][..],
            &public[..],
            &mail[..],
        ]
        .concat(),
    )
    .await;
    assert_eq!(reset["emailed"], true);
    let url = reset["url"].as_str().unwrap();
    let received = smtp.messages();
    assert_eq!(received.len(), 1);
    assert!(received[0].body().contains(url), "{}", received[0].body());
    let (status, _) = post_form(&server, url, &[("password", "dee's new password")]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(
        post_form(&server, url, &[("password", "and another one")])
            .await
            .0,
        StatusCode::GONE
    );
    let (status, cookie) = sign_in(&server, "dee@example.com", "dee's new password").await;
    assert_eq!((status, cookie.is_some()), (StatusCode::SEE_OTHER, true));

    // What the commands did is in the audit log, by the admin commands, from no address.
    add_member(&db, "dee@example.com", "owner").await;
    let (status, _, audit) = page(&server, "/projects/acme/settings/audit", &cookie.unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    for done in [
        "Changed the role of dee@example.com from viewer to owner",
        "dee@example.com joined as viewer, invited",
        "Invited dee@example.com as viewer",
    ] {
        let line = format!(
            "<th scope=\"row\" data-label=\"Who\">{}</th>\n      <td data-label=\"What\">{done}</td>",
            if done.contains("joined") {
                "Dee"
            } else {
                "the admin commands"
            }
        );
        assert!(audit.contains(&line), "{line} in {audit}");
    }
    assert!(audit.contains("data-label=\"From\">command line</td>"));

    let unknown = admin(
        &db,
        &["user", "reset-link", "--email", "nobody@example.com"],
    )
    .await;
    assert!(!unknown.status.success());
    assert!(server.terminate().await.success());
}
