//! The team without a shell, through the pages and an SMTP server on loopback: invitations
//! and password resets arrive by email and their links are followed once; the profile
//! changes a name, an email (confirmed by a link) and a password, and signs out the other
//! sessions; the audit log records who exported.

use std::time::Duration;

use crate::common::{
    App, MEMBER_PASSWORD, ORIGIN, OWNER_PASSWORD, Reply, app_with, browser, encode, form,
    mocks_allowed,
};
use leadtrack_core::types::Role;
use leadtrack_dashboard::Config;
use leadtrack_mail::Mailer;
use leadtrack_mail::testkit::{Received, SmtpReceiver};
use warp::http::StatusCode;

/// The app, sending mail to a receiver on loopback that refuses `refused@example.com`.
async fn app_with_mail() -> (App, SmtpReceiver) {
    let smtp = SmtpReceiver::start(&["refused@example.com"]).await;
    let config = Config {
        public_url: Some(ORIGIN.to_owned()),
        mailer: Some(Mailer::new(&smtp.url(), "leadtrack <leads@leads.test>").unwrap()),
        ..mocks_allowed()
    };
    (app_with(config).await, smtp)
}

/// The messages received, once there are `count` (sending may happen after the answer).
async fn messages(smtp: &SmtpReceiver, count: usize) -> Vec<Received> {
    for _ in 0..100 {
        let received = smtp.messages();
        if received.len() >= count {
            return received;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{count} messages never arrived: {:?}", smtp.messages());
}

/// The path of the link with `prefix` in a message (`/invitations/` …), checking that it
/// points to the public URL.
fn link_in(message: &Received, prefix: &str) -> String {
    let body = message.body();
    let at = body
        .find(&format!("{ORIGIN}{prefix}"))
        .unwrap_or_else(|| panic!("no {prefix} link in {body}"));
    let path = &body[at + ORIGIN.len()..];
    path[..prefix.len() + 64].to_owned()
}

/// A signed-in browser: its cookie and its forms' token.
struct Browser {
    cookie: String,
    csrf: String,
}

impl App {
    async fn signed_in(&self, email: &str, password: &str) -> Browser {
        let cookie = self.session(email, password).await;
        let csrf = self.get("/", &cookie).await.csrf();
        Browser { cookie, csrf }
    }

    async fn post_as(&self, browser: &Browser, path: &str, pairs: &[(&str, &str)]) -> Reply {
        let mut all = vec![("csrf", browser.csrf.as_str())];
        all.extend_from_slice(pairs);
        self.send(form(path, &encode(&all)).header("cookie", &browser.cookie))
            .await
    }

    /// A form posted by someone with no session.
    async fn post_anonymous(&self, path: &str, pairs: &[(&str, &str)]) -> Reply {
        self.send(form(path, &encode(pairs))).await
    }
}

#[tokio::test]
async fn an_invitation_by_email_sets_up_an_account_once() {
    let (app, smtp) = app_with_mail().await;
    let owner = app.signed_in("owner@example.com", OWNER_PASSWORD).await;
    let members = "/projects/alpha/settings/members";
    let invited = app
        .post_as(
            &owner,
            members,
            &[("email", "Newbie@Example.com"), ("role", "viewer")],
        )
        .await;
    assert_eq!(invited.status, StatusCode::SEE_OTHER, "{}", invited.text);
    let page = app
        .get(invited.header("location").unwrap(), &owner.cookie)
        .await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "Invitation sent. Its link works once, for 72 hours.",
            "Newbie@Example.com",
        ],
    );
    let sent = messages(&smtp, 1).await;
    assert_eq!(sent[0].to, vec!["Newbie@Example.com".to_owned()]);
    assert!(
        sent[0]
            .data
            .contains("Subject: Olive Owner invited you to Alpha on leadtrack")
    );
    let link = link_in(&sent[0], "/invitations/");

    let shown = app.send(browser("GET", &link)).await;
    shown.assert_shows(
        StatusCode::OK,
        &["Olive Owner invited <strong>Newbie@Example.com</strong> to join <strong>Alpha</strong> as a viewer.", "Set up my account and join"],
    );
    assert_eq!(shown.header("cache-control"), Some("no-store"));
    let short = app
        .post_anonymous(&link, &[("name", "Nia"), ("password", "short")])
        .await;
    short.assert_shows(
        StatusCode::BAD_REQUEST,
        &["A password must be 10 to 256 characters."],
    );
    let forged = app
        .send(
            browser("POST", &link)
                .header("origin", "http://evil.example")
                .header("content-type", "application/x-www-form-urlencoded")
                .body(encode(&[("password", "nia password 1")])),
        )
        .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);

    let joined = app
        .post_anonymous(
            &link,
            &[("name", "Nia New"), ("password", "nia password 1")],
        )
        .await;
    assert_eq!(joined.status, StatusCode::SEE_OTHER, "{}", joined.text);
    assert_eq!(joined.header("location"), Some("/projects/alpha/leads"));
    let cookie = joined.session_cookie();
    let inbox = app.get("/projects/alpha/leads", &cookie).await;
    inbox.assert_shows(StatusCode::OK, &["Signed in as <strong>Nia New</strong>"]);
    let nia = app.store.user_by_email("newbie@example.com").await.unwrap();
    let membership = app.store.membership(nia.id, "alpha").await.unwrap();
    assert_eq!(membership.role, Role::Viewer);

    // Once only: the link is gone, and so is the pending invitation.
    let again = app
        .post_anonymous(
            &link,
            &[("name", "Mallory"), ("password", "mallory password")],
        )
        .await;
    again.assert_shows(StatusCode::GONE, &["This invitation link no longer works"]);
    assert_eq!(
        app.send(browser("GET", &link)).await.status,
        StatusCode::GONE
    );
    assert!(
        app.store
            .invitations(app.alpha.id)
            .await
            .unwrap()
            .is_empty()
    );
    let audit = app
        .get("/projects/alpha/settings/audit", &owner.cookie)
        .await;
    audit.assert_shows(
        StatusCode::OK,
        &[
            "<th scope=\"row\" data-label=\"Who\">Nia New</th>\n      <td data-label=\"What\">Newbie@Example.com joined as viewer, invited</td>",
            "<td data-label=\"What\">Invited Newbie@Example.com as viewer</td>",
        ],
    );
}

#[tokio::test]
async fn invitations_are_sent_again_with_a_new_link_or_revoked() {
    let (app, smtp) = app_with_mail().await;
    let owner = app.signed_in("owner@example.com", OWNER_PASSWORD).await;
    let members = "/projects/alpha/settings/members";
    app.post_as(
        &owner,
        members,
        &[("email", "cy@example.com"), ("role", "member")],
    )
    .await;
    let first = link_in(&messages(&smtp, 1).await[0], "/invitations/");
    let pending = app.store.invitations(app.alpha.id).await.unwrap();
    let resend = format!("{members}/invitations/{}/resend", pending[0].id);
    let resent = app.post_as(&owner, &resend, &[]).await;
    assert_eq!(
        resent.header("location"),
        Some(&*format!("{members}?saved=resent"))
    );
    let second = link_in(&messages(&smtp, 2).await[1], "/invitations/");
    assert_ne!(first, second);
    assert_eq!(
        app.send(browser("GET", &first)).await.status,
        StatusCode::GONE
    );
    assert_eq!(
        app.send(browser("GET", &second)).await.status,
        StatusCode::OK
    );

    let revoke = format!("{members}/invitations/{}/revoke", pending[0].id);
    let revoked = app.post_as(&owner, &revoke, &[]).await;
    assert_eq!(
        revoked.header("location"),
        Some(&*format!("{members}?saved=revoked"))
    );
    assert_eq!(
        app.send(browser("GET", &second)).await.status,
        StatusCode::GONE
    );
    assert_eq!(
        app.post_as(&owner, &revoke, &[]).await.status,
        StatusCode::NOT_FOUND
    );

    // A member cannot invite; a refused message leaves the owner the link to pass on.
    let member = app.signed_in("member@example.com", MEMBER_PASSWORD).await;
    let refused = app
        .post_as(
            &member,
            members,
            &[("email", "x@example.com"), ("role", "owner")],
        )
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    let failed = app
        .post_as(
            &owner,
            members,
            &[("email", "refused@example.com"), ("role", "member")],
        )
        .await;
    failed.assert_shows(
        StatusCode::CREATED,
        &[
            "Invitation made, but the email could not be sent.",
            "http://leads.test/invitations/",
        ],
    );
}

#[tokio::test]
async fn a_password_reset_answers_the_same_for_anyone_and_works_once() {
    let (app, smtp) = app_with_mail().await;
    let laptop = app.session("member@example.com", MEMBER_PASSWORD).await;
    let phone = app.session("member@example.com", MEMBER_PASSWORD).await;
    app.get("/login", "").await.assert_shows(
        StatusCode::OK,
        &["<a href=\"/password/forgot\">Forgot your password?</a>"],
    );
    app.send(browser("GET", "/password/forgot"))
        .await
        .assert_shows(StatusCode::OK, &["Send me a link"]);

    let known = app
        .post_anonymous("/password/forgot", &[("email", "member@example.com")])
        .await;
    let unknown = app
        .post_anonymous("/password/forgot", &[("email", "nobody@example.com")])
        .await;
    assert_eq!(
        (known.status, unknown.status),
        (StatusCode::OK, StatusCode::OK)
    );
    assert_eq!(
        known.text.replace("member@example.com", "EMAIL"),
        unknown.text.replace("nobody@example.com", "EMAIL"),
        "the same answer"
    );
    known.assert_shows(
        StatusCode::OK,
        &["a link to reset its password is on its way"],
    );
    let sent = messages(&smtp, 1).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(smtp.messages().len(), 1, "nothing for an unknown email");
    assert_eq!(sent[0].to, vec!["member@example.com".to_owned()]);
    let link = link_in(&sent[0], "/password/reset/");

    app.send(browser("GET", &link))
        .await
        .assert_shows(StatusCode::OK, &["Choose a new password"]);
    let short = app.post_anonymous(&link, &[("password", "short")]).await;
    assert_eq!(short.status, StatusCode::BAD_REQUEST);
    let reset = app
        .post_anonymous(&link, &[("password", "a brand new password")])
        .await;
    assert_eq!(reset.status, StatusCode::SEE_OTHER, "{}", reset.text);
    let fresh = reset.session_cookie();
    app.get("/", &fresh)
        .await
        .assert_shows(StatusCode::OK, &["Signed in as <strong>Mo Member</strong>"]);
    for old in [&laptop, &phone] {
        let ended = app.get("/projects/alpha/leads", old).await;
        assert_eq!(ended.status, StatusCode::SEE_OTHER);
        assert!(ended.header("location").unwrap().starts_with("/login"));
    }
    let again = app
        .post_anonymous(&link, &[("password", "another new password")])
        .await;
    again.assert_shows(StatusCode::GONE, &["This reset link no longer works"]);
    app.session("member@example.com", "a brand new password")
        .await;
    assert_eq!(
        app.sign_in("member@example.com", "another new password")
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );
    let not_a_token = app.send(browser("GET", "/password/reset/nothing")).await;
    assert_eq!(not_a_token.status, StatusCode::GONE);
}

#[tokio::test]
async fn reset_requests_are_limited_and_the_link_sent_stays_the_one_that_works() {
    let (app, smtp) = app_with_mail().await;
    let ask = |email: String, from: u8| {
        let body = encode(&[("email", &email)]);
        app.send(form("/password/forgot", &body).sent_from(from))
    };
    let member = || "member@example.com".to_owned();
    let owner = || "owner@example.com".to_owned();
    // Six requests in a row, as a stranger might send them: one message, and its link is
    // not voided by the five after it.
    let mut answers = Vec::new();
    for _ in 0..6 {
        answers.push(ask(member(), 1).await);
    }
    for answer in &answers {
        answer.assert_shows(
            StatusCode::OK,
            &["a link to reset its password is on its way"],
        );
        assert_eq!(answer.text, answers[0].text, "the same answer each time");
    }
    let sent = messages(&smtp, 1).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(smtp.messages().len(), 1, "one message for six requests");
    let link = link_in(&sent[0], "/password/reset/");
    let reset = app
        .post_anonymous(&link, &[("password", "a brand new password")])
        .await;
    assert_eq!(reset.status, StatusCode::SEE_OTHER, "{}", reset.text);
    // Three requests an hour for one email: a seventh sends nothing either.
    ask(member(), 1).await.assert_shows(
        StatusCode::OK,
        &["a link to reset its password is on its way"],
    );

    // Twenty an hour from one address, whatever the emails.
    for n in 0..20 {
        ask(format!("nobody{n}@example.com"), 2).await;
    }
    ask(owner(), 2).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(smtp.messages().len(), 1, "the address is past its limit");
    ask(owner(), 3).await;
    let sent = messages(&smtp, 2).await;
    assert_eq!(sent[1].to, vec!["owner@example.com".to_owned()]);
}

#[tokio::test]
async fn the_profile_changes_a_name_an_email_and_a_password() {
    let (app, smtp) = app_with_mail().await;
    let other = app.session("member@example.com", MEMBER_PASSWORD).await;
    let me = app.signed_in("member@example.com", MEMBER_PASSWORD).await;
    let profile = app.get("/profile", &me.cookie).await;
    profile.assert_shows(
        StatusCode::OK,
        &[
            "value=\"Mo Member\"",
            "this browser",
            "Sign out every other session",
        ],
    );
    let renamed = app
        .post_as(&me, "/profile/name", &[("name", "Mo M.")])
        .await;
    assert_eq!(renamed.header("location"), Some("/profile?saved=name"));
    assert_eq!(
        app.store
            .user_by_email("member@example.com")
            .await
            .unwrap()
            .name,
        "Mo M."
    );

    let wrong = app
        .post_as(
            &me,
            "/profile/email",
            &[("email", "mo@new.example"), ("password", "not it")],
        )
        .await;
    wrong.assert_shows(
        StatusCode::BAD_REQUEST,
        &["That is not your current password."],
    );
    let asked = app
        .post_as(
            &me,
            "/profile/email",
            &[("email", "mo@new.example"), ("password", MEMBER_PASSWORD)],
        )
        .await;
    assert_eq!(asked.header("location"), Some("/profile?saved=email-sent"));
    let link = link_in(&messages(&smtp, 1).await[0], "/profile/email/");
    assert_eq!(smtp.messages()[0].to, vec!["mo@new.example".to_owned()]);
    app.send(browser("GET", &link))
        .await
        .assert_shows(StatusCode::OK, &["Confirm my new email"]);
    let confirmed = app.post_anonymous(&link, &[]).await;
    assert_eq!(confirmed.header("location"), Some("/profile?saved=email"));
    assert_eq!(
        app.post_anonymous(&link, &[]).await.status,
        StatusCode::GONE
    );
    app.session("mo@new.example", MEMBER_PASSWORD).await;

    let changed = app
        .post_as(
            &me,
            "/profile/password",
            &[
                ("current", MEMBER_PASSWORD),
                ("password", "a new password for mo"),
            ],
        )
        .await;
    assert_eq!(changed.header("location"), Some("/profile?saved=password"));
    let kept = changed.session_cookie();
    app.get("/profile?saved=password", &kept)
        .await
        .assert_shows(
            StatusCode::OK,
            &["Password changed. Your other sessions were signed out."],
        );
    assert_eq!(
        app.get("/profile", &other).await.status,
        StatusCode::SEE_OTHER
    );
    assert_eq!(
        app.get("/profile", &me.cookie).await.status,
        StatusCode::SEE_OTHER
    );

    // Another sign-in, then everything but this browser signed out.
    let elsewhere = app.session("mo@new.example", "a new password for mo").await;
    let here = Browser {
        csrf: app.get("/", &kept).await.csrf(),
        cookie: kept,
    };
    let ended = app
        .post_as(&here, "/profile/sessions/end-others", &[])
        .await;
    assert_eq!(ended.header("location"), Some("/profile?saved=sessions"));
    assert_eq!(
        app.get("/profile", &elsewhere).await.status,
        StatusCode::SEE_OTHER
    );
    assert_eq!(
        app.get("/profile", &here.cookie).await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn the_audit_log_records_an_export_and_is_for_owners() {
    let (app, _smtp) = app_with_mail().await;
    let owner = app.signed_in("owner@example.com", OWNER_PASSWORD).await;
    let export = app
        .send(
            browser("GET", "/projects/alpha/leads.csv?status=open")
                .header("cookie", &owner.cookie)
                .sent_from(9),
        )
        .await;
    assert_eq!(export.status, StatusCode::OK);
    let audit = app
        .get("/projects/alpha/settings/audit", &owner.cookie)
        .await;
    audit.assert_shows(
        StatusCode::OK,
        &["<th scope=\"row\" data-label=\"Who\">Olive Owner</th>\n      <td data-label=\"What\">Exported the inbox as CSV (status open)</td>\n      <td class=\"mono\" data-label=\"From\">127.0.0.9</td>"],
    );
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    assert_eq!(
        app.get("/projects/alpha/settings/audit", &member)
            .await
            .status,
        StatusCode::FORBIDDEN
    );
}

#[tokio::test]
async fn comments_are_the_teams_and_a_mention_emails_the_member_named() {
    let (app, smtp) = app_with_mail().await;
    let lead = app
        .lead_at(
            &app.alpha,
            serde_json::json!({"userData": {"firstName": "Hedy", "email": "hedy@lamarr.example", "phone": "+1 555 0100"},
                "formData": {"formName": "Contact"}, "attributionData": {"utm_source": "newsletter"}}),
            chrono::Utc::now() - chrono::Duration::minutes(90),
        )
        .await;
    let page = format!("/projects/alpha/leads/{lead}");
    let owner = app.signed_in("owner@example.com", OWNER_PASSWORD).await;
    app.get(&page, &owner.cookie).await.assert_shows(
        StatusCode::OK,
        &[
            "no one has touched it yet: waiting 1 h 30 min",
            "No comments yet.",
        ],
    );

    let comments = format!("{page}/comments");
    let added = app
        .post_as(
            &owner,
            &comments,
            &[(
                "text",
                "Called, no answer. @Mo Member can you try tomorrow?",
            )],
        )
        .await;
    assert_eq!(added.header("location"), Some(&*format!("{page}#comments")));
    let shown = app.get(&page, &owner.cookie).await;
    shown.assert_shows(
        StatusCode::OK,
        &[
            "<p class=\"comment-text\">Called, no answer. @Mo Member can you try tomorrow?</p>",
            "first touched 1 h 30 min after it arrived, by Olive Owner",
            "Commented</span> <span class=\"by\">by Olive Owner</span>",
        ],
    );

    // The reports count the first touch: per source, and per person.
    app.get("/projects/alpha/reports", &owner.cookie)
        .await
        .assert_shows(
            StatusCode::OK,
            &[
                "<tr><th scope=\"row\">newsletter / (not set)</th><td class=\"num\" data-label=\"Median\">1 h 30 min</td>",
                "<tr><th scope=\"row\">Olive Owner</th><td class=\"num\" data-label=\"Median\">1 h 30 min</td>",
            ],
        );

    // Mo is told by email: the lead's name, form and source, and the link; no email or phone.
    let sent = messages(&smtp, 1).await;
    assert_eq!(sent[0].to, vec!["member@example.com".to_owned()]);
    assert!(
        sent[0]
            .data
            .contains("Subject: Olive Owner mentioned you on a lead in Alpha")
    );
    let body = sent[0].body();
    assert!(
        body.contains("(Hedy, form Contact, from newsletter)")
            && body.contains(&format!("{ORIGIN}{page}")),
        "{body}"
    );
    assert!(!body.contains("lamarr") && !body.contains("555"), "{body}");
    assert!(
        !body.contains("tomorrow"),
        "the comment stays on the page: {body}"
    );

    // Only its author changes a comment; a comment never becomes a conversion.
    let id = app.store.comments(app.alpha.id, lead).await.unwrap()[0].id;
    let member = app.signed_in("member@example.com", MEMBER_PASSWORD).await;
    let theirs = format!("{comments}/{id}");
    let refused = app.post_as(&member, &theirs, &[("text", "Mine now")]).await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND);
    let refused = app.post_as(&member, &format!("{theirs}/delete"), &[]).await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND);
    let edited = app
        .post_as(&owner, &theirs, &[("text", "Called twice.")])
        .await;
    assert_eq!(edited.status, StatusCode::SEE_OTHER);
    app.get(&page, &owner.cookie).await.assert_shows(
        StatusCode::OK,
        &["Called twice.</p>", " · edited</p>", "Edited a comment"],
    );
    let empty = app.post_as(&owner, &comments, &[("text", "   ")]).await;
    empty.assert_shows(StatusCode::BAD_REQUEST, &["A comment cannot be empty."]);
    let deleted = app.post_as(&owner, &format!("{theirs}/delete"), &[]).await;
    assert_eq!(deleted.status, StatusCode::SEE_OTHER);
    let after = app.get(&page, &owner.cookie).await;
    after.assert_shows(StatusCode::OK, &["Deleted a comment", "No comments yet."]);
    assert!(!after.text.contains("Called twice."));
    let jobs = app.store.lead_jobs(app.alpha.id, lead).await.unwrap();
    assert!(jobs.is_empty(), "no conversion: {jobs:?}");
    assert_eq!(smtp.messages().len(), 1, "an edit mentions no one again");
}

#[tokio::test]
async fn a_first_name_mention_reaches_its_member_and_an_unclear_one_goes_back_first() {
    use leadtrack_core::account::{NewUser, Password};
    let (app, smtp) = app_with_mail().await;
    for (email, name) in [
        ("maria@example.com", "María García"),
        ("mario@example.com", "Mario Rossi"),
    ] {
        let new = NewUser::new(email, Some(name), &Password::new(MEMBER_PASSWORD).unwrap());
        let user = app
            .store
            .create_user(new.unwrap(), chrono::Utc::now())
            .await
            .unwrap();
        let now = chrono::Utc::now();
        app.store
            .add_member(app.alpha.id, user.id, Role::Member, now)
            .await
            .unwrap();
    }
    let body = serde_json::json!({"userData": {"firstName": "Hedy"}});
    let lead = app.lead_at(&app.alpha, body, chrono::Utc::now()).await;
    let page = format!("/projects/alpha/leads/{lead}");
    let comments = format!("{page}/comments");
    let owner = app.signed_in("owner@example.com", OWNER_PASSWORD).await;
    let shown = app.get(&page, &owner.cookie).await;
    for offered in [
        "data-handle=\"María García\">María García</li>",
        "data-handle=\"Mo Member\">Mo Member</li>",
    ] {
        assert!(shown.text.contains(offered), "@ offers {offered}");
    }

    // A first name without its accent, and the start of a surname, each name one member.
    let added = app
        .post_as(
            &owner,
            &comments,
            &[("text", "@maria and @ross: call her?")],
        )
        .await;
    assert_eq!(added.status, StatusCode::SEE_OTHER);
    let sent = messages(&smtp, 2).await;
    let mut told: Vec<&str> = sent.iter().map(|m| m.to[0].as_str()).collect();
    told.sort();
    assert_eq!(told, ["maria@example.com", "mario@example.com"]);

    // Nobody, or two people: the comment comes back unsaved, with what is unclear.
    let unclear = "Ask @bob, or @Mar?";
    let back = app.post_as(&owner, &comments, &[("text", unclear)]).await;
    back.assert_shows(
        StatusCode::BAD_REQUEST,
        &[
            "@bob is nobody in this project; @Mar could be María García or Mario Rossi. Write more of the name",
            ">Ask @bob, or @Mar?</textarea>",
            "name=\"anyway\" value=\"1\"",
        ],
    );
    assert_eq!(
        app.store.comments(app.alpha.id, lead).await.unwrap().len(),
        1
    );
    let kept = app
        .post_as(&owner, &comments, &[("text", unclear), ("anyway", "1")])
        .await;
    assert_eq!(kept.status, StatusCode::SEE_OTHER);
    let saved = app.store.comments(app.alpha.id, lead).await.unwrap();
    assert_eq!(saved.last().map(|c| c.text.as_str()), Some(unclear));
    // The next mention's email is the third: the unclear ones told nobody.
    let added = app.post_as(&owner, &comments, &[("text", "@mo?")]).await;
    assert_eq!(added.status, StatusCode::SEE_OTHER);
    let sent = messages(&smtp, 3).await;
    assert_eq!(sent[2].to, ["member@example.com"]);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(smtp.messages().len(), 3);
}
