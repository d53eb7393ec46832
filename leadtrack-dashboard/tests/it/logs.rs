//! No password, session token or hash reaches a log line.

use crate::common::*;
use leadtrack_core::testkit::capture_logs;
use tracing::Level;
use warp::http::StatusCode;

#[tokio::test(flavor = "current_thread")]
async fn sign_in_logs_hold_no_secret_and_no_email() {
    let captured = capture_logs(Level::TRACE);

    let app = app().await;
    let failed = app.sign_in("owner@example.com", "a wrong password").await;
    assert_eq!(failed.status, StatusCode::UNAUTHORIZED);
    let cookie = app.session("owner@example.com", OWNER_PASSWORD).await;
    let page = app.get("/projects/alpha/settings/keys", &cookie).await;
    let forged = app
        .send(form("/projects/alpha/settings/keys", "csrf=nope").header("cookie", &cookie))
        .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    let csrf = page.csrf();
    let signed_out = app
        .send(form("/logout", &encode(&[("csrf", &csrf)])).header("cookie", &cookie))
        .await;
    assert_eq!(signed_out.status, StatusCode::SEE_OTHER);

    let logs = captured.text();
    for expected in ["sign-in failed", "signed in", "anti-forgery", "signed out"] {
        assert!(logs.contains(expected), "{expected:?} logged: {logs}");
    }
    let token = cookie.trim_start_matches("lt_session=");
    for secret in [token, OWNER_PASSWORD, "a wrong password", "$argon2", &csrf] {
        assert!(!logs.contains(secret), "{secret:?} in the logs: {logs}");
    }
    assert!(
        !logs.contains("owner@example.com"),
        "no email in the logs: {logs}"
    );
}
