//! The alert worker against an SMTP server on loopback and mock Slack, Microsoft Teams and
//! Google Chat webhooks, each checking its platform's documented message format and that no
//! email or phone reaches it: the instant alert, the hourly digest with a clock the test
//! controls, spam that never alerts, assignment, failed conversions and next steps due.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, TimeZone, Utc};
use leadtrack_alerts::Alerter;
use leadtrack_core::account::{Actor, NewUser, Password, User};
use leadtrack_core::alert::{AlertPreferences, ChatKind, NewLeads};
use leadtrack_core::integration::{IntegrationSettings, Secret, WebhookSettings};
use leadtrack_core::job::Attempt;
use leadtrack_core::label::{LabelMapping, NewLabel};
use leadtrack_core::next_step::NextStep;
use leadtrack_core::project::{NewProject, Project};
use leadtrack_core::request::StatusUpdate;
use leadtrack_core::request::{CreateRoute, NewLead};
use leadtrack_core::spam::SpamReason;
use leadtrack_core::target::Targets;
use leadtrack_core::testkit::capture_logs;
use leadtrack_core::types::{AttemptOutcome, ConversionId, IntegrationKind, LeadIdentifier};
use leadtrack_core::types::{LeadId, Role};
use leadtrack_core::{Accounts, Admin, JobQueue, LeadStore};
use leadtrack_mail::Mailer;
use leadtrack_mail::testkit::{Received, SmtpReceiver};
use leadtrack_sqlite::SqliteStore;
use serde_json::{Value, json};
use tracing::Level;
use warp::Filter;
use warp::http::StatusCode;

const PUBLIC_URL: &str = "https://leads.example.com";
const EMAIL: &str = "ada.lovelace@example.org";
const PHONE: &str = "+44 20 7946 0958";

/// What a mock chat received: the path it was posted to, and the body.
type Posts = Arc<Mutex<Vec<(String, Value)>>>;

/// Why a message breaks its chat's rules, if it does.
fn check(chat: &str, body: &Value) -> Result<(), String> {
    let text = body.to_string();
    if text.contains(EMAIL) || text.contains("7946") {
        return Err("personal data beyond name, form and source".into());
    }
    match chat {
        "slack" => slack_rules(body),
        "teams" => teams_rules(body),
        _ => google_chat_rules(body),
    }
}

/// Slack's incoming webhooks: `text` (the notification's fallback when `blocks` are given),
/// at most 50 blocks of known types; a header's plain text within 150 characters; a
/// section's fields at most 10, each within 2,000; a button's URL within 3,000
/// (<https://api.slack.com/messaging/webhooks>,
/// <https://api.slack.com/reference/block-kit/blocks>,
/// <https://api.slack.com/reference/block-kit/block-elements#button>).
fn slack_rules(body: &Value) -> Result<(), String> {
    body["text"]
        .as_str()
        .filter(|t| !t.is_empty())
        .ok_or("no text")?;
    let blocks = body["blocks"].as_array().ok_or("no blocks")?;
    if blocks.is_empty() || blocks.len() > 50 {
        return Err("1 to 50 blocks".into());
    }
    for block in blocks {
        match block["type"].as_str() {
            Some("header") => {
                let text = &block["text"];
                if text["type"] != "plain_text"
                    || text["text"]
                        .as_str()
                        .is_none_or(|t| t.chars().count() > 150)
                {
                    return Err("a header is plain text within 150 characters".into());
                }
            }
            Some("section") => {
                let fields = block["fields"]
                    .as_array()
                    .ok_or("a section without fields")?;
                let fine = fields.len() <= 10
                    && fields.iter().all(|f| {
                        f["type"] == "mrkdwn" && f["text"].as_str().is_some_and(|t| t.len() <= 2000)
                    });
                if !fine {
                    return Err("a section's fields".into());
                }
            }
            Some("actions") => {
                for element in block["elements"]
                    .as_array()
                    .ok_or("actions without elements")?
                {
                    let url = element["url"].as_str().ok_or("a button without url")?;
                    if element["type"] != "button"
                        || url.len() > 3000
                        || element["text"]["type"] != "plain_text"
                    {
                        return Err("a button".into());
                    }
                }
            }
            other => return Err(format!("a block of type {other:?}")),
        }
    }
    Ok(())
}

/// Teams' Workflows webhooks ("When a Teams webhook request is received"): a `message`
/// whose attachments are Adaptive Cards (`application/vnd.microsoft.card.adaptive`), each
/// an `AdaptiveCard` with a `version` and a `body`; `Action.OpenUrl` with a `url`
/// (<https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/connectors-using>,
/// <https://adaptivecards.io/explorer/Action.OpenUrl.html>).
fn teams_rules(body: &Value) -> Result<(), String> {
    if body["type"] != "message" {
        return Err("type is message".into());
    }
    let attachments = body["attachments"].as_array().ok_or("no attachments")?;
    for attachment in attachments {
        let card = &attachment["content"];
        let fine = attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
            && card["type"] == "AdaptiveCard"
            && card["version"].is_string()
            && card["body"].is_array();
        if !fine {
            return Err("an attachment that is no Adaptive Card".into());
        }
        for action in card["actions"].as_array().into_iter().flatten() {
            if action["type"] != "Action.OpenUrl" || !action["url"].is_string() {
                return Err("an action".into());
            }
        }
    }
    if attachments.is_empty() {
        return Err("no card".into());
    }
    Ok(())
}

/// Google Chat's incoming webhooks: `text`, `cardsV2`, or both; each card a `cardId` and a
/// `card` with sections of widgets; a button's `onClick.openLink.url`
/// (<https://developers.google.com/workspace/chat/quickstart/webhooks>,
/// <https://developers.google.com/workspace/chat/api/reference/rest/v1/cards>).
fn google_chat_rules(body: &Value) -> Result<(), String> {
    let cards = body["cardsV2"].as_array().ok_or("no cardsV2")?;
    for card in cards {
        card["cardId"].as_str().ok_or("a card without cardId")?;
        let sections = card["card"]["sections"].as_array().ok_or("no sections")?;
        for widget in sections
            .iter()
            .flat_map(|s| s["widgets"].as_array().into_iter().flatten())
        {
            for button in widget["buttonList"]["buttons"]
                .as_array()
                .into_iter()
                .flatten()
            {
                button["onClick"]["openLink"]["url"]
                    .as_str()
                    .ok_or("a button without a link")?;
            }
        }
    }
    Ok(())
}

/// The three mock chats on one loopback server (`/slack`, `/teams`, `/chat`): each answers
/// as its platform does when the message follows the rules (Slack `ok`, Teams `202`, Chat
/// the message), `400` when it does not, and keeps what it took.
async fn mock_chats() -> (SocketAddr, Posts) {
    let posts: Posts = Arc::default();
    let kept = Arc::clone(&posts);
    let route = warp::post()
        .and(warp::path::param::<String>())
        .and(warp::body::json())
        .map(move |chat: String, body: Value| match check(&chat, &body) {
            Ok(()) => {
                kept.lock().unwrap().push((chat.clone(), body.clone()));
                match chat.as_str() {
                    "slack" => warp::reply::with_status("ok".to_owned(), StatusCode::OK),
                    "teams" => warp::reply::with_status(String::new(), StatusCode::ACCEPTED),
                    _ => warp::reply::with_status(body.to_string(), StatusCode::OK),
                }
            }
            Err(why) => warp::reply::with_status(why, StatusCode::BAD_REQUEST),
        });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(warp::serve(route).incoming(listener).run());
    (addr, posts)
}

/// 2026-03-02 at `h:m` UTC.
fn at(h: u32, m: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 2, h, m, 0).unwrap()
}

struct World {
    store: SqliteStore,
    project: Project,
    smtp: SmtpReceiver,
    posts: Posts,
    alerter: Alerter<SqliteStore>,
}

impl World {
    async fn new() -> Self {
        let store = SqliteStore::open_temporary().await.unwrap();
        let project = store
            .create_project(
                NewProject {
                    public_id: Some("acme".into()),
                    name: "Acme".into(),
                    currency: None,
                },
                at(0, 0),
            )
            .await
            .unwrap();
        let smtp = SmtpReceiver::start(&[]).await;
        let mailer = Mailer::new(&smtp.url(), "leadtrack <alerts@leads.example.com>").unwrap();
        let (addr, posts) = mock_chats().await;
        for (kind, path) in [
            (ChatKind::Slack, "slack"),
            (ChatKind::Teams, "teams"),
            (ChatKind::GoogleChat, "chat"),
        ] {
            let url = format!("http://{addr}/{path}");
            store
                .set_chat_channel(project.id, kind, Some(&url))
                .await
                .unwrap();
        }
        let alerter = Alerter::new(
            store.clone(),
            Some(mailer),
            PUBLIC_URL,
            leadtrack_core::testkit::mock_targets(),
        );
        Self {
            store,
            project,
            smtp,
            posts,
            alerter,
        }
    }

    /// A member named `name` with `role` and `alerts`.
    async fn member(&self, name: &str, role: Role, alerts: AlertPreferences) -> User {
        let email = format!("{}@acme.example", name.to_lowercase());
        let new = NewUser::new(
            &email,
            Some(name),
            &Password::new("a long password").unwrap(),
        );
        let user = self
            .store
            .create_user(new.unwrap(), at(0, 0))
            .await
            .unwrap();
        self.store
            .add_member(self.project.id, user.id, role, at(0, 0))
            .await
            .unwrap();
        self.store
            .set_alerts(self.project.id, user.id, &alerts)
            .await
            .unwrap();
        user
    }

    /// A lead of Ada's, with her email and phone, from Google, at `at`; spam when `spam`.
    async fn lead(&self, first: &str, at: DateTime<Utc>, spam: Option<SpamReason>) -> LeadId {
        let body = json!({
            "projectId": "acme",
            "userData": {"firstName": first, "lastName": "Lovelace", "email": EMAIL, "phone": PHONE},
            "attributionData": {"utm_source": "google", "utm_medium": "cpc", "gclid": "G-1"},
            "formData": {"formName": "Contact"}
        });
        let new = NewLead::parse(body.to_string().as_bytes(), CreateRoute::Browser).unwrap();
        self.store
            .create_screened_lead(self.project.id, CreateRoute::Browser, new.data, spam, at)
            .await
            .unwrap()
            .lead_id
    }

    /// The messages sent to `email`.
    fn mail_to(&self, email: &str) -> Vec<Received> {
        self.smtp
            .messages()
            .into_iter()
            .filter(|m| m.to.iter().any(|to| to == email))
            .collect()
    }
}

fn subject(message: &Received) -> &str {
    message
        .data
        .lines()
        .find_map(|line| line.strip_prefix("Subject: "))
        .unwrap_or_default()
}

fn instant() -> AlertPreferences {
    AlertPreferences {
        new_leads: NewLeads::Instant,
        ..AlertPreferences::default()
    }
}

#[tokio::test]
async fn a_new_lead_is_told_at_once_by_email_and_in_each_chat_with_no_more_than_its_name_form_and_source()
 {
    let world = World::new().await;
    let ada = world.member("Ada", Role::Member, instant()).await;
    let off = world
        .member("Otto", Role::Owner, AlertPreferences::default())
        .await;
    let lead = world.lead("Grace", at(10, 5), None).await;
    world
        .lead("Spammy", at(10, 6), Some(SpamReason::TooFast))
        .await;

    let sent = world.alerter.tick(at(10, 6)).await.unwrap();
    assert_eq!(sent, 4, "one email and three chats");
    let mail = world.mail_to(&ada.email);
    assert_eq!(mail.len(), 1);
    assert_eq!(subject(&mail[0]), "New lead in Acme: Grace Lovelace");
    let link = format!("{PUBLIC_URL}/projects/acme/leads/{lead}");
    let body = mail[0].body();
    assert!(
        body.contains("Grace Lovelace, form Contact, from google"),
        "{body}"
    );
    assert!(body.contains(&link), "{body}");
    assert!(!body.contains(EMAIL) && !body.contains("7946"), "{body}");
    assert!(world.mail_to(&off.email).is_empty(), "alerts off");

    let posts = world.posts.lock().unwrap().clone();
    let chats: Vec<&str> = posts.iter().map(|(chat, _)| chat.as_str()).collect();
    assert_eq!(chats, ["slack", "teams", "chat"], "spam never alerts");
    assert_eq!(posts[0].1["blocks"][2]["elements"][0]["url"], link.as_str());
    let card = &posts[1].1["attachments"][0]["content"];
    assert_eq!(card["actions"][0]["url"], link.as_str());
    let header = &posts[2].1["cardsV2"][0]["card"]["header"];
    assert_eq!(header["title"], "New lead in Acme");

    // Taken once: the next round has nothing to tell.
    assert_eq!(world.alerter.tick(at(10, 7)).await.unwrap(), 0);
}

#[tokio::test]
async fn the_hourly_digest_lists_the_hours_leads_once_the_hour_has_ended() {
    let world = World::new().await;
    let hourly = AlertPreferences {
        new_leads: NewLeads::Hourly,
        digest_until: Some(at(10, 0)),
        ..AlertPreferences::default()
    };
    let bea = world.member("Bea", Role::Member, hourly).await;
    world.lead("Grace", at(10, 5), None).await;
    world.lead("Alan", at(10, 40), None).await;
    world
        .lead("Spammy", at(10, 41), Some(SpamReason::TooFast))
        .await;
    world.lead("Later", at(11, 2), None).await;

    world.alerter.tick(at(10, 45)).await.unwrap();
    assert!(
        world.mail_to(&bea.email).is_empty(),
        "the hour has not ended"
    );
    world.alerter.tick(at(11, 3)).await.unwrap();
    let mail = world.mail_to(&bea.email);
    assert_eq!(mail.len(), 1);
    assert_eq!(subject(&mail[0]), "2 new leads in Acme this past hour");
    let body = mail[0].body();
    for shown in [
        "2 new leads in Acme since 2026-03-02 10:00 UTC",
        "Grace Lovelace, form Contact, from google",
        "Alan Lovelace",
        "https://leads.example.com/projects/acme/leads\r\n",
    ] {
        assert!(body.contains(shown), "{shown} in {body}");
    }
    assert!(!body.contains("Spammy") && !body.contains("Later") && !body.contains(EMAIL));
    world.alerter.tick(at(11, 59)).await.unwrap();
    assert_eq!(world.mail_to(&bea.email).len(), 1, "each hour once");
    world.alerter.tick(at(12, 0)).await.unwrap();
    let mail = world.mail_to(&bea.email);
    assert_eq!(mail.len(), 2);
    assert_eq!(subject(&mail[1]), "1 new lead in Acme this past hour");
    assert!(mail[1].body().contains("Later Lovelace"));
}

#[tokio::test]
async fn the_assignee_and_the_owners_hear_of_assignments_and_failures() {
    let world = World::new().await;
    let cy = world
        .member("Cy", Role::Member, AlertPreferences::default())
        .await;
    let olive = world
        .member("Olive", Role::Owner, AlertPreferences::default())
        .await;
    let lead = world.lead("Grace", at(10, 5), None).await;
    let by = Actor::User {
        id: olive.id,
        name: olive.name.clone(),
    };
    world
        .store
        .assign(world.project.id, &[lead], Some(cy.id), &by, at(10, 6))
        .await
        .unwrap();
    world.alerter.tick(at(10, 7)).await.unwrap();
    let mail = world.mail_to(&cy.email);
    assert_eq!(mail.len(), 1);
    assert_eq!(subject(&mail[0]), "Assigned to you in Acme: Grace Lovelace");
    assert!(mail[0].body().contains("it is in your Mine tab"));
    assert!(world.mail_to(&olive.email).is_empty());

    // With assignment alerts off, nothing; a failed conversion tells the owners.
    let quiet = AlertPreferences {
        assigned: false,
        ..AlertPreferences::default()
    };
    world
        .store
        .set_alerts(world.project.id, cy.id, &quiet)
        .await
        .unwrap();
    world
        .store
        .assign(world.project.id, &[lead], None, &by, at(10, 8))
        .await
        .unwrap();
    world
        .store
        .assign(world.project.id, &[lead], Some(cy.id), &by, at(10, 9))
        .await
        .unwrap();
    world.alerter.tick(at(10, 10)).await.unwrap();
    assert_eq!(world.mail_to(&cy.email).len(), 1);
    fail_a_conversion(&world, lead).await;
    world.alerter.tick(at(10, 20)).await.unwrap();
    let mail = world.mail_to(&olive.email);
    assert_eq!(mail.len(), 1, "the owner");
    assert_eq!(
        subject(&mail[0]),
        "A conversion failed in Acme: Grace Lovelace"
    );
    assert_eq!(world.mail_to(&cy.email).len(), 1, "members are not told");
}

/// Rates `lead` with a label sent to a webhook, whose delivery then fails for good.
async fn fail_a_conversion(world: &World, lead: LeadId) {
    let project = world.project.id;
    let hook = WebhookSettings {
        url: "https://hooks.example.com/leads".into(),
        secret: Secret::new("whsec_test"),
    };
    world
        .store
        .set_integration(project, IntegrationSettings::Webhook(hook), at(10, 11))
        .await
        .unwrap();
    let mapping = LabelMapping {
        webhook: true,
        ..LabelMapping::default()
    };
    let new = NewLabel {
        name: "Customer".into(),
        mark_as_done: true,
        mapping,
    };
    let label = world
        .store
        .create_label(project, new, at(10, 11))
        .await
        .unwrap();
    let rated = StatusUpdate {
        identifier: LeadIdentifier::LeadId(lead),
        conversion_id: ConversionId::Label(label.id),
        price: None,
        note: None,
    };
    let by = Actor::api_key("lt_alerts00");
    world
        .store
        .update_status(project, &rated, &by, at(10, 12))
        .await
        .unwrap();
    let claimed = world
        .store
        .claim_job(at(10, 15), chrono::Duration::minutes(5))
        .await
        .unwrap()
        .expect("the rating's job");
    let failed = Attempt {
        integration: IntegrationKind::Webhook,
        at: at(10, 15),
        outcome: AttemptOutcome::Failed,
        http_status: Some(410),
        error: Some("HTTP 410: gone".into()),
        retry_at: None,
        batch: None,
    };
    let (job, token) = (claimed.job.id, claimed.lease.token);
    world
        .store
        .record_attempt(job, token, &failed)
        .await
        .unwrap();
    world
        .store
        .finish_job(job, token, at(10, 15))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_chat_at_an_address_the_rule_refuses_is_not_posted_to() {
    let world = World::new().await;
    world.lead("Grace", at(10, 5), None).await;
    // The channels were saved when loopback was allowed; this process allows `http://`,
    // but no range.
    let http_only = Targets::new("", true).unwrap();
    let strict = Alerter::new(world.store.clone(), None, PUBLIC_URL, http_only);
    let logs = capture_logs(Level::WARN);
    let sent = strict.tick(at(10, 6)).await.unwrap();
    assert_eq!(sent, 0);
    assert!(world.posts.lock().unwrap().is_empty());
    let text = logs.text();
    assert_eq!(
        text.matches("the address is loopback (127.0.0.1); the server's operator can allow it")
            .count(),
        3,
        "{text}"
    );
    assert!(!text.contains("/slack"), "never the URL: {text}");
}

#[tokio::test]
async fn a_due_next_step_reminds_whose_it_is_once_by_email_and_in_each_chat() {
    let world = World::new().await;
    let cy = world
        .member("Cy", Role::Member, AlertPreferences::default())
        .await;
    let quiet = AlertPreferences {
        next_steps: false,
        ..AlertPreferences::default()
    };
    let olive = world.member("Olive", Role::Owner, quiet).await;
    let grace = world.lead("Grace", at(10, 5), None).await;
    let alan = world.lead("Alan", at(10, 5), None).await;
    let by = Actor::User {
        id: olive.id,
        name: olive.name.clone(),
    };
    world
        .store
        .assign(world.project.id, &[grace], Some(cy.id), &by, at(10, 6))
        .await
        .unwrap();
    // The new leads' chats and Cy's assignment go first.
    world.alerter.tick(at(10, 7)).await.unwrap();
    world.posts.lock().unwrap().clear();
    assert_eq!(world.mail_to(&cy.email).len(), 1);
    let due = at(14, 0);
    for (lead, note) in [(grace, "Call back about pricing"), (alan, "")] {
        let step = NextStep::new(due, note).unwrap();
        world
            .store
            .set_next_step(world.project.id, lead, Some(&step), &by, at(10, 8))
            .await
            .unwrap();
    }

    assert_eq!(world.alerter.tick(at(13, 59)).await.unwrap(), 0, "not due");
    let sent = world.alerter.tick(at(14, 1)).await.unwrap();
    assert_eq!(sent, 7, "Cy's email, and three chats for each lead");
    let mail = world.mail_to(&cy.email);
    assert_eq!(mail.len(), 2);
    assert_eq!(subject(&mail[1]), "Next step due in Acme: Grace Lovelace");
    let body = mail[1].body();
    for shown in [
        "A next step of this lead in Acme is due: 2026-03-02 14:00 UTC.",
        "What to do: Call back about pricing",
        &format!("{PUBLIC_URL}/projects/acme/leads/{grace}"),
    ] {
        assert!(body.contains(shown), "{shown} in {body}");
    }
    assert!(!body.contains(EMAIL) && !body.contains("7946"), "{body}");
    // Alan's step is Olive's (she set it, nobody has the lead), and she turned it off.
    assert!(world.mail_to(&olive.email).is_empty());
    let posts = world.posts.lock().unwrap().clone();
    let titles: Vec<&str> = posts
        .iter()
        .filter(|(chat, _)| chat == "chat")
        .map(|(_, body)| {
            body["cardsV2"][0]["card"]["header"]["title"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(
        titles,
        [
            "Next step due in Acme, for Cy",
            "Next step due in Acme, for Olive"
        ]
    );
    assert!(
        !posts
            .iter()
            .any(|(_, body)| body.to_string().contains("pricing"))
    );

    // Once: the next round has nothing to remind of.
    assert_eq!(world.alerter.tick(at(14, 5)).await.unwrap(), 0);
}
