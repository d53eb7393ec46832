//! Alerts: telling the team of a lead while it is fresh. A store queues an alert in the
//! write that makes it due (a new lead that is not spam, a lead freed from spam, a lead
//! assigned to someone, a conversion whose delivery failed for good); the alert worker
//! takes them and tells each member as their preferences say, by email, and the project's
//! chat channels (Slack, Microsoft Teams, Google Chat) of new leads.
//!
//! A message carries no more of a lead's personal data than its name, form and first
//! source ([`LeadSummary`]), and a link to the lead, which opens after sign-in.

use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use strum::{AsRefStr, Display, EnumString, IntoStaticStr, VariantArray};

use crate::channel;
use crate::lead::StoredLead;
use crate::target::Targets;
use crate::types::{LeadId, ProjectId, UserId};

/// How a member hears of new leads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(AsRefStr, Display, EnumString, VariantArray)]
#[strum(serialize_all = "lowercase")]
pub enum NewLeads {
    /// An email per lead, as it arrives.
    Instant,
    /// One email an hour listing the hour's leads, when there were any.
    Hourly,
    /// Not at all.
    #[default]
    Off,
}

/// A member's alerts in one project.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AlertPreferences {
    /// New leads: instantly, in an hourly digest, or not.
    pub new_leads: NewLeads,
    /// Leads assigned to them (by someone else, or in turn).
    pub assigned: bool,
    /// Conversions whose delivery to a platform failed for good (owners only).
    pub failures: bool,
    /// Their leads' next steps, once due ([`crate::next_step`]).
    pub next_steps: bool,
    /// The end of the last hour their digest covered: the next one starts there.
    pub digest_until: Option<DateTime<Utc>>,
}

impl Default for AlertPreferences {
    fn default() -> Self {
        Self {
            new_leads: NewLeads::Off,
            assigned: true,
            failures: true,
            next_steps: true,
            digest_until: None,
        }
    }
}

/// The hour a digest due at `now` covers, `[from, to)`: from where the last one ended
/// (`until`; the hour before when none did) to the start of the current hour; `None`
/// while that hour has not ended yet.
pub fn digest_window(
    until: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
    let hour = now.duration_trunc(TimeDelta::hours(1)).ok()?;
    let from = until.unwrap_or(hour - TimeDelta::hours(1));
    (from < hour).then_some((from, hour))
}

/// Why an alert is due, as a store queues it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AlertKind {
    /// A lead arrived, not spam, or a person took one out of spam.
    NewLead,
    /// The lead was assigned to this user by someone else, or in turn.
    Assigned {
        /// The assignee.
        user: UserId,
    },
    /// A conversion of the lead failed for good at a platform.
    Failed,
}

/// An alert taken from a store's queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueuedAlert {
    /// Its id in the queue.
    pub id: i64,
    /// The lead's project.
    pub project: ProjectId,
    /// The lead.
    pub lead: LeadId,
    /// Why.
    pub kind: AlertKind,
    /// When it was queued.
    pub at: DateTime<Utc>,
}

/// A project's chat channel for new leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[derive(AsRefStr, Display, EnumString, IntoStaticStr, VariantArray)]
#[strum(serialize_all = "kebab-case")]
pub enum ChatKind {
    /// A Slack incoming webhook, sent Block Kit.
    Slack,
    /// A Microsoft Teams Workflows webhook ("When a Teams webhook request is received"),
    /// sent an Adaptive Card (Office 365 connectors are being retired).
    Teams,
    /// A Google Chat space's incoming webhook, sent a card.
    GoogleChat,
}

impl ChatKind {
    /// What people call it.
    pub fn title(self) -> &'static str {
        match self {
            Self::Slack => "Slack",
            Self::Teams => "Microsoft Teams",
            Self::GoogleChat => "Google Chat",
        }
    }
}

/// A project's chat channel: where new leads are posted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatChannel {
    /// The chat.
    pub kind: ChatKind,
    /// The webhook's URL (a secret: whoever has it can post).
    pub url: String,
}

/// A webhook URL as a channel takes it: one `targets` allows ([`crate::target`]), in the
/// URL standard's form; else why not, in words.
pub fn webhook_url(url: &str, targets: &Targets) -> Result<String, String> {
    targets
        .check(url)
        .map(String::from)
        .map_err(|refusal| refusal.to_string())
}

/// What a message may say of a lead: its name (never its email or phone), its form and
/// its first source, with the link to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeadSummary {
    /// First and last name, else `Lead #id`.
    pub name: String,
    /// The form's name.
    pub form: Option<String>,
    /// The first touch's source (`google`, `(direct)`).
    pub source: Option<String>,
    /// The lead's page.
    pub url: String,
}

impl LeadSummary {
    /// The summary of `lead`, whose page is at `url`.
    pub fn of(lead: &StoredLead, url: String) -> Self {
        let data = &lead.data;
        let name: Vec<&str> = [data.user("firstName"), data.user("lastName")]
            .into_iter()
            .flatten()
            .collect();
        Self {
            name: match name.is_empty() {
                true => format!("Lead #{}", lead.id),
                false => name.join(" "),
            },
            form: data.form_name().map(str::to_owned),
            source: channel::touches(data)
                .into_iter()
                .next()
                .map(|touch| touch.source),
            url,
        }
    }

    /// "Ada Lovelace, form Contact, from google".
    pub fn line(&self) -> String {
        let mut line = self.name.clone();
        if let Some(form) = &self.form {
            line.push_str(&format!(", form {form}"));
        }
        if let Some(source) = &self.source {
            line.push_str(&format!(", from {source}"));
        }
        line
    }

    /// Its facts: `(name, value)` for the form and the source it has.
    fn facts(&self) -> Vec<(&'static str, &str)> {
        [("Form", &self.form), ("Source", &self.source)]
            .into_iter()
            .filter_map(|(name, value)| Some((name, value.as_deref()?)))
            .collect()
    }

    /// The message announcing it in `kind`'s format, headed `title` ("New lead in Acme").
    pub fn chat_message(&self, kind: ChatKind, title: &str) -> Value {
        match kind {
            ChatKind::Slack => self.slack(title),
            ChatKind::Teams => self.teams(title),
            ChatKind::GoogleChat => self.google_chat(title),
        }
    }

    /// Block Kit for an incoming webhook: `text` is the notification's fallback, `blocks`
    /// a header, a section with fields, and a button linking to the lead
    /// (<https://api.slack.com/messaging/webhooks>,
    /// <https://api.slack.com/reference/block-kit/blocks>).
    fn slack(&self, title: &str) -> Value {
        let mut fields = vec![
            json!({"type": "mrkdwn", "text": format!("*Name*\n{}", slack_escape(&self.name))}),
        ];
        for (name, value) in self.facts() {
            fields.push(
                json!({"type": "mrkdwn", "text": format!("*{name}*\n{}", slack_escape(value))}),
            );
        }
        json!({
            "text": format!("{title}: {}", self.line()),
            "blocks": [
                {"type": "header", "text": {"type": "plain_text", "text": title}},
                {"type": "section", "fields": fields},
                {"type": "actions", "elements": [{
                    "type": "button",
                    "text": {"type": "plain_text", "text": "Open the lead"},
                    "url": self.url,
                }]},
            ],
        })
    }

    /// A Workflows webhook's message: one attachment, an Adaptive Card 1.4 with the title,
    /// a fact set and an `Action.OpenUrl`
    /// (<https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/connectors-using>,
    /// <https://adaptivecards.io/explorer/AdaptiveCard.html>).
    fn teams(&self, title: &str) -> Value {
        let mut facts = vec![json!({"title": "Name", "value": self.name})];
        for (name, value) in self.facts() {
            facts.push(json!({"title": name, "value": value}));
        }
        json!({
            "type": "message",
            "attachments": [{
                "contentType": "application/vnd.microsoft.card.adaptive",
                "contentUrl": null,
                "content": {
                    "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                    "type": "AdaptiveCard",
                    "version": "1.4",
                    "body": [
                        {"type": "TextBlock", "text": title, "weight": "Bolder", "size": "Medium", "wrap": true},
                        {"type": "FactSet", "facts": facts},
                    ],
                    "actions": [{"type": "Action.OpenUrl", "title": "Open the lead", "url": self.url}],
                },
            }],
        })
    }

    /// A Google Chat webhook's message: `text` for notifications, and a `cardsV2` card with
    /// a header, the facts as decorated text and a button opening the lead
    /// (<https://developers.google.com/workspace/chat/quickstart/webhooks>,
    /// <https://developers.google.com/workspace/chat/api/reference/rest/v1/cards>).
    fn google_chat(&self, title: &str) -> Value {
        let mut widgets = Vec::new();
        for (name, value) in self.facts() {
            widgets.push(json!({"decoratedText": {"topLabel": name, "text": value}}));
        }
        widgets.push(json!({"buttonList": {"buttons": [{
            "text": "Open the lead",
            "onClick": {"openLink": {"url": self.url}},
        }]}}));
        json!({
            "text": format!("{title}: {}", self.line()),
            "cardsV2": [{
                "cardId": "lead",
                "card": {
                    "header": {"title": title, "subtitle": self.name},
                    "sections": [{"widgets": widgets}],
                },
            }],
        })
    }
}

/// Text for Slack's `mrkdwn`: its three control characters escaped, so a name cannot
/// format the message or mention a channel.
fn slack_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn summary() -> LeadSummary {
        LeadSummary {
            name: "Ada <!channel>".into(),
            form: Some("Contact".into()),
            source: None,
            url: "https://leads.example/projects/acme/leads/7".into(),
        }
    }

    #[test]
    fn a_digest_covers_each_ended_hour_once() {
        let at = |h, m| Utc.with_ymd_and_hms(2026, 3, 1, h, m, 0).unwrap();
        assert_eq!(digest_window(Some(at(10, 0)), at(10, 59)), None);
        assert_eq!(
            digest_window(Some(at(10, 0)), at(11, 0)),
            Some((at(10, 0), at(11, 0)))
        );
        // Hours missed (the server was down) are covered in one.
        assert_eq!(
            digest_window(Some(at(8, 0)), at(11, 5)),
            Some((at(8, 0), at(11, 0)))
        );
        assert_eq!(digest_window(None, at(11, 5)), Some((at(10, 0), at(11, 0))));
    }

    #[test]
    fn each_chat_gets_its_format_with_the_link_and_no_more() {
        let lead = summary();
        let slack = lead.chat_message(ChatKind::Slack, "New lead in Acme");
        assert_eq!(
            slack["text"],
            "New lead in Acme: Ada <!channel>, form Contact"
        );
        assert_eq!(
            slack["blocks"][1]["fields"][0]["text"],
            "*Name*\nAda &lt;!channel&gt;"
        );
        assert_eq!(slack["blocks"][2]["elements"][0]["url"], lead.url);
        let teams = lead.chat_message(ChatKind::Teams, "New lead in Acme");
        let card = &teams["attachments"][0]["content"];
        assert_eq!(card["type"], "AdaptiveCard");
        assert_eq!(card["actions"][0]["url"], lead.url);
        assert_eq!(
            card["body"][1]["facts"][1],
            json!({"title": "Form", "value": "Contact"})
        );
        let chat = lead.chat_message(ChatKind::GoogleChat, "New lead in Acme");
        assert_eq!(
            chat["cardsV2"][0]["card"]["header"]["subtitle"],
            "Ada <!channel>"
        );
        let button = &chat["cardsV2"][0]["card"]["sections"][0]["widgets"][1];
        assert_eq!(
            button["buttonList"]["buttons"][0]["onClick"]["openLink"]["url"],
            lead.url
        );
    }

    #[test]
    fn webhook_urls_are_addresses_the_server_may_call() {
        let strict = Targets::default();
        assert_eq!(
            webhook_url(" https://hooks.slack.com/services/T/B/x ", &strict).unwrap(),
            "https://hooks.slack.com/services/T/B/x"
        );
        assert!(webhook_url("http://hooks.slack.com/services", &strict).is_err());
        assert!(webhook_url("https://", &strict).is_err());
        assert!(webhook_url("javascript:alert(1)", &strict).is_err());
        // Once prefix tests, each of these saved; a remote host is not this machine.
        for url in [
            "http://localhost.evil.invalid/hook",
            "http://127.0.0.1.evil.invalid/hook",
            "http://127.0.0.1@evil.invalid/hook",
            "http://127.0.0.1:9/hook",
        ] {
            assert!(webhook_url(url, &strict).is_err(), "{url}");
        }
        assert_eq!(
            webhook_url("http://127.0.0.1@evil.invalid/hook", &Targets::any()).unwrap_err(),
            "an address with a user name or password before its host is not called"
        );
        let local = Targets::new("127.0.0.0/8", true).unwrap();
        assert!(webhook_url("http://127.0.0.1:9/hook", &local).is_ok());
    }
}
