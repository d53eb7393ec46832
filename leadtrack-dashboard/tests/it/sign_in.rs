//! Sign-in, sessions and access rules over HTTP: what a browser (or an attacker) sees.

use crate::common::*;
use leadtrack_dashboard::Config;
use warp::http::StatusCode;

#[tokio::test]
async fn signing_in_sets_a_session_cookie_and_lands_on_the_projects() {
    let app = app().await;
    let page = app.send(browser("GET", "/login")).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "<label for=\"email\">Email</label>",
            "<label for=\"password\">Password</label>",
            "name=\"email\"",
            "name=\"password\"",
        ],
    );

    let reply = app.sign_in(" Owner@Example.com ", OWNER_PASSWORD).await;
    assert_eq!(reply.status, StatusCode::SEE_OTHER);
    assert_eq!(reply.header("location"), Some("/"));
    let cookie = reply.session_cookie();
    let home = app.get("/", &cookie).await;
    assert_eq!(home.status, StatusCode::OK);
    assert!(home.text.contains("Olive Owner"));
    assert!(home.text.contains(">Alpha</a>") && home.text.contains(">Beta</a>"));
    assert_eq!(home.header("cache-control"), Some("no-store"));
    assert_eq!(home.header("x-frame-options"), Some("DENY"));

    // Signed in, the sign-in page sends the user on.
    let again = app.get("/login?next=/projects/alpha", &cookie).await;
    assert_eq!(
        (again.status, again.header("location")),
        (StatusCode::SEE_OTHER, Some("/projects/alpha"))
    );
}

#[tokio::test]
async fn a_failed_sign_in_says_the_same_whether_or_not_the_email_exists() {
    let app = app().await;
    let wrong_password = app.sign_in("owner@example.com", "not the password").await;
    let unknown_email = app.sign_in("nobody@example.com", "not the password").await;
    for reply in [&wrong_password, &unknown_email] {
        assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
        assert_eq!(reply.header("set-cookie"), None);
        assert!(
            reply
                .text
                .contains("That email and password do not match an account."),
            "{}",
            reply.text
        );
    }
    // The pages differ only in the email echoed back into the form.
    assert_eq!(
        wrong_password.text.replace("owner@example.com", "EMAIL"),
        unknown_email.text.replace("nobody@example.com", "EMAIL")
    );
    let disabled = {
        app.store
            .set_user_disabled(app.member.id, true)
            .await
            .unwrap();
        app.sign_in("member@example.com", MEMBER_PASSWORD).await
    };
    assert_eq!(disabled.status, StatusCode::UNAUTHORIZED, "a disabled user");
}

#[tokio::test]
async fn next_must_be_a_path_on_this_site() {
    let app = app().await;
    for (next, lands) in [
        ("/projects/alpha", "/projects/alpha"),
        ("https://evil.example", "/"),
        ("//evil.example/x", "/"),
        ("/\\evil.example", "/"),
    ] {
        let body = encode(&[
            ("email", "owner@example.com"),
            ("password", OWNER_PASSWORD),
            ("next", next),
        ]);
        let reply = app.send(form("/login", &body)).await;
        assert_eq!(reply.status, StatusCode::SEE_OTHER, "{next}");
        assert_eq!(reply.header("location"), Some(lands), "{next}");
    }
    // A visitor sent to sign in comes back to where they were going.
    let visitor = app.send(browser("GET", "/projects/alpha")).await;
    assert_eq!(
        (visitor.status, visitor.header("location")),
        (
            StatusCode::SEE_OTHER,
            Some("/login?next=%2Fprojects%2Falpha")
        )
    );
    let page = app
        .send(browser("GET", "/login?next=https%3A%2F%2Fevil.example"))
        .await;
    assert!(
        page.text.contains("name=\"next\" value=\"/\""),
        "{}",
        page.text
    );
}

#[tokio::test]
async fn a_post_without_its_origin_or_its_token_is_refused_and_changes_nothing() {
    let app = app().await;
    let cookie = app.session("owner@example.com", OWNER_PASSWORD).await;
    let csrf = app
        .get("/projects/alpha/settings/keys", &cookie)
        .await
        .csrf();
    let keys_before = app.key_count(&app.alpha).await;
    let body = encode(&[("csrf", &csrf)]);

    let refused = [
        // No Origin and no Referer.
        browser("POST", "/projects/alpha/settings/keys")
            .header("cookie", &cookie)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body.clone()),
        // Another site.
        browser("POST", "/projects/alpha/settings/keys")
            .header("cookie", &cookie)
            .header("origin", "http://evil.example")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body.clone()),
        // This site, without the token.
        form("/projects/alpha/settings/keys", "").header("cookie", &cookie),
        // This site, with another session's token.
        form(
            "/projects/alpha/settings/keys",
            &encode(&[("csrf", "0".repeat(32).as_str())]),
        )
        .header("cookie", &cookie),
    ];
    for request in refused {
        let reply = app.send(request).await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN, "{}", reply.text);
        assert!(reply.text.contains("nothing was changed"));
    }
    assert_eq!(app.key_count(&app.alpha).await, keys_before);
    let logout = app
        .send(browser("POST", "/logout").header("cookie", &cookie))
        .await;
    assert_eq!(logout.status, StatusCode::FORBIDDEN);
    assert_eq!(
        app.get("/", &cookie).await.status,
        StatusCode::OK,
        "still signed in"
    );

    // With both, the owner's action goes through, and the key is shown once.
    let made = app
        .send(form("/projects/alpha/settings/keys", &body).header("cookie", &cookie))
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text);
    assert_eq!(app.key_count(&app.alpha).await, keys_before + 1);
    assert!(made.text.contains("Copy it now"));
    // A Referer of this site stands in for a missing Origin.
    let by_referer = browser("POST", "/projects/alpha/settings/keys")
        .header("cookie", &cookie)
        .header("referer", "http://leads.test/projects/alpha/settings/keys")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body.clone());
    assert_eq!(app.send(by_referer).await.status, StatusCode::CREATED);
}

#[tokio::test]
async fn the_sixth_wrong_password_is_throttled_and_so_is_the_right_one() {
    let app = app().await;
    for attempt in 1..=5 {
        let reply = app.sign_in("owner@example.com", "wrong password!").await;
        assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "attempt {attempt}");
    }
    let sixth = app.sign_in("owner@example.com", "wrong password!").await;
    assert_eq!(sixth.status, StatusCode::TOO_MANY_REQUESTS);
    let wait: i64 = sixth.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=900).contains(&wait), "{wait}");
    assert!(sixth.text.contains("Too many failed sign-ins"));
    let right = app.sign_in("OWNER@example.com", OWNER_PASSWORD).await;
    assert_eq!(right.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(right.header("retry-after").is_some());
    assert_eq!(right.header("set-cookie"), None);
    // Another email from another address is not held up.
    let other = app
        .send(
            form(
                "/login",
                &encode(&[
                    ("email", "member@example.com"),
                    ("password", MEMBER_PASSWORD),
                ]),
            )
            .sent_from(9),
        )
        .await;
    assert_eq!(other.status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn twenty_failures_from_one_address_close_it_for_every_email() {
    let app = app_with(mocks_allowed()).await;
    for n in 0..20 {
        let email = format!("guess{n}@example.com");
        let reply = app.sign_in(&email, "wrong password!").await;
        assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    }
    let reply = app.sign_in("owner@example.com", OWNER_PASSWORD).await;
    assert_eq!(reply.status, StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn cookies_are_http_only_lax_and_secure_only_over_https() {
    let plain = app().await;
    let reply = plain.sign_in("owner@example.com", OWNER_PASSWORD).await;
    let cookie = reply.header("set-cookie").unwrap().to_owned();
    assert!(cookie.starts_with("lt_session="), "{cookie}");
    for flag in ["HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(cookie.contains(flag), "{flag} in {cookie}");
    }
    assert!(!cookie.contains("Secure"), "{cookie}");

    // A forged X-Forwarded-Proto is ignored unless the proxy is trusted.
    let untrusted = plain
        .send(
            browser("POST", "/login")
                .header("x-forwarded-proto", "https")
                .header("content-type", "application/x-www-form-urlencoded")
                .body(encode(&[
                    ("email", "owner@example.com"),
                    ("password", OWNER_PASSWORD),
                ])),
        )
        .await;
    assert!(!untrusted.header("set-cookie").unwrap().contains("Secure"));

    let proxied = app_with(Config {
        trust_proxy: true,
        ..mocks_allowed()
    })
    .await;
    let reply = proxied
        .send(
            browser("POST", "/login")
                .header("origin", "https://leads.test")
                .header("x-forwarded-proto", "https")
                .header("content-type", "application/x-www-form-urlencoded")
                .body(encode(&[
                    ("email", "owner@example.com"),
                    ("password", OWNER_PASSWORD),
                ])),
        )
        .await;
    assert_eq!(reply.status, StatusCode::SEE_OTHER, "{}", reply.text);
    let cookie = reply.header("set-cookie").unwrap();
    assert!(cookie.split("; ").any(|part| part == "Secure"), "{cookie}");
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"));
}

#[tokio::test]
async fn a_member_sees_only_their_projects_and_no_owner_action() {
    let app = app().await;
    let cookie = app.session("member@example.com", MEMBER_PASSWORD).await;
    let home = app.get("/", &cookie).await;
    assert!(home.text.contains(">Alpha</a>") && !home.text.contains("Beta"));
    let alpha = app.get("/projects/alpha", &cookie).await;
    assert_eq!(
        (alpha.status, alpha.header("location")),
        (StatusCode::SEE_OTHER, Some("/projects/alpha/leads")),
        "a member goes into the project"
    );
    let keys_page = app.get("/projects/alpha/settings/keys", &cookie).await;
    assert_eq!(keys_page.status, StatusCode::FORBIDDEN);
    assert!(keys_page.text.contains("Owners only"));

    let beta = app.get("/projects/beta", &cookie).await;
    let nowhere = app.get("/projects/nowhere", &cookie).await;
    for reply in [&beta, &nowhere] {
        assert_eq!(reply.status, StatusCode::NOT_FOUND);
        assert!(reply.text.contains("Page not found"));
    }
    assert_eq!(
        beta.text, nowhere.text,
        "another project's page is indistinguishable from none"
    );

    let csrf = keys_page.csrf();
    let keys = app.key_count(&app.alpha).await;
    let owner_action = app
        .send(
            form("/projects/alpha/settings/keys", &encode(&[("csrf", &csrf)]))
                .header("cookie", &cookie),
        )
        .await;
    assert_eq!(owner_action.status, StatusCode::FORBIDDEN);
    assert!(owner_action.text.contains("Owners only"));
    assert_eq!(app.key_count(&app.alpha).await, keys, "nothing was created");
    let on_beta = app
        .send(
            form("/projects/beta/settings/keys", &encode(&[("csrf", &csrf)]))
                .header("cookie", &cookie),
        )
        .await;
    assert_eq!(on_beta.status, StatusCode::NOT_FOUND);
    assert_eq!(app.key_count(&app.beta).await, 0);
}

#[tokio::test]
async fn signing_out_ends_the_session_on_every_device() {
    let app = app().await;
    let cookie = app.session("owner@example.com", OWNER_PASSWORD).await;
    let phone = app.session("owner@example.com", OWNER_PASSWORD).await;
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let csrf = app.get("/", &cookie).await.csrf();
    let reply = app
        .send(form("/logout", &encode(&[("csrf", &csrf)])).header("cookie", &cookie))
        .await;
    assert_eq!(
        (reply.status, reply.header("location")),
        (StatusCode::SEE_OTHER, Some("/login"))
    );
    assert!(reply.header("set-cookie").unwrap().contains("Max-Age=0"));
    let after = app.get("/", &cookie).await;
    assert_eq!(
        (after.status, after.header("location")),
        (StatusCode::SEE_OTHER, Some("/login?next=%2F")),
        "the old cookie no longer signs anyone in"
    );
    assert_eq!(app.get("/", &phone).await.status, StatusCode::SEE_OTHER);
    assert_eq!(
        app.get("/", &member).await.status,
        StatusCode::OK,
        "only hers"
    );
}

#[tokio::test]
async fn no_response_carries_a_session_token_or_a_password_hash() {
    let app = app().await;
    let reply = app.sign_in("owner@example.com", OWNER_PASSWORD).await;
    let cookie = reply.session_cookie();
    let token = cookie.trim_start_matches("lt_session=").to_owned();
    let mut seen = vec![reply.text.clone()];
    for path in [
        "/",
        "/projects/alpha",
        "/projects/beta",
        "/projects/alpha/settings/keys",
        "/projects/alpha/settings/members",
        "/login",
    ] {
        seen.push(app.get(path, &cookie).await.text);
    }
    seen.push(
        app.sign_in("owner@example.com", "wrong password!")
            .await
            .text,
    );
    for text in &seen {
        assert!(!text.contains(&token), "the session token leaked");
        assert!(!text.contains("$argon2"), "a password hash leaked");
        assert!(!text.contains(OWNER_PASSWORD), "the password leaked");
    }
}

#[tokio::test]
async fn the_stylesheet_is_served_and_revalidated() {
    let app = app().await;
    let css = app.send(browser("GET", "/assets/app.css")).await;
    assert_eq!(css.status, StatusCode::OK);
    assert_eq!(css.header("content-type"), Some("text/css; charset=utf-8"));
    assert!(css.text.contains("--accent"));
    let etag = css.header("etag").unwrap().to_owned();
    let again = app
        .send(browser("GET", "/assets/app.css").header("if-none-match", &etag))
        .await;
    assert_eq!(again.status, StatusCode::NOT_MODIFIED);
    // The icon browsers ask for, which every page links to.
    let icon = reqwest::get(format!("{}/favicon.ico", app.service.base_url))
        .await
        .unwrap();
    assert_eq!(icon.status(), StatusCode::OK);
    assert_eq!(icon.headers()["content-type"], "image/vnd.microsoft.icon");
    let served = icon.bytes().await.unwrap();
    let drawn = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/favicon.ico"));
    assert_eq!(served.as_ref(), drawn.unwrap().as_slice());
    let page = app.send(browser("GET", "/login")).await;
    assert!(
        page.text
            .contains(r#"<link rel="icon" href="/favicon.ico" sizes="32x32">"#)
    );
    // Other paths fall through to the routes mounted beside the dashboard's.
    let elsewhere = app.send(browser("GET", "/api/leads/getLeads")).await;
    assert_eq!(
        elsewhere.status,
        StatusCode::UNAUTHORIZED,
        "{}",
        elsewhere.text
    );
    assert_eq!(elsewhere.header("content-type"), Some("application/json"));
}

#[tokio::test]
async fn a_user_of_one_project_lands_in_its_inbox() {
    let app = app().await;
    let reply = app.sign_in("member@example.com", MEMBER_PASSWORD).await;
    assert_eq!(reply.status, StatusCode::SEE_OTHER);
    assert_eq!(reply.header("location"), Some("/projects/alpha/leads"));
    let asked = encode(&[
        ("email", "member@example.com"),
        ("password", MEMBER_PASSWORD),
        ("next", "/projects/alpha/leads/1"),
    ]);
    let reply = app.send(form("/login", &asked)).await;
    assert_eq!(
        reply.header("location"),
        Some("/projects/alpha/leads/1"),
        "next wins"
    );
}
