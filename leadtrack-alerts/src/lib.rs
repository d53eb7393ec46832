//! The alert worker: tells the team of leads while they are fresh.
//!
//! Stores queue an alert in the write that makes it due ([`leadtrack_core::alert`]); the
//! worker takes each once ([`leadtrack_core::JobQueue::take_alerts`]) and tells:
//!
//! - of a **new lead** (not spam; or freed from spam): each member who chose *instantly*, by
//!   email, and the project's chat channels (Slack, Microsoft Teams, Google Chat);
//! - of a lead **assigned** to someone (by someone else, or in turn): them, by email, unless
//!   they turned it off;
//! - of a conversion that **failed** for good at a platform: the project's owners, by email,
//!   unless they turned it off.
//!
//! - of a lead's **next step** once it falls due ([`leadtrack_core::next_step`]): the lead's
//!   assignee (else whoever set the step), by email, unless they turned it off; and the
//!   project's chat channels, naming whose it is.
//!
//! Members who chose the *hourly digest* get, once an hour has ended, one email listing its
//! new leads ([`leadtrack_core::alert::digest_window`]), when there were any.
//!
//! Messages carry a lead's name, form and first source and a link to it, never more of its
//! personal data ([`LeadSummary`]). An alert is taken before it is sent: a message that
//! cannot be sent (the SMTP server or a chat is down) is logged and not tried again, so
//! nobody is told twice; leads themselves are never touched.
//!
//! ```no_run
//! # async fn run(store: leadtrack_sqlite::SqliteStore) {
//! use leadtrack_alerts::Alerter;
//! use leadtrack_core::target::Targets;
//! let alerter = Alerter::new(store, None, "https://leads.example.com", Targets::default());
//! alerter.run(std::future::pending()).await;
//! # }
//! ```

mod email;

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::future::Future;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use leadtrack_core::account::Member;
use leadtrack_core::alert::{
    AlertKind, ChatChannel, LeadSummary, NewLeads, QueuedAlert, digest_window,
};
use leadtrack_core::lead::StoredLead;
use leadtrack_core::next_step::Reminder;
use leadtrack_core::project::Project;
use leadtrack_core::request::LeadQuery;
use leadtrack_core::target::Targets;
use leadtrack_core::types::{LeadId, LeadIdentifier, LeadStatus, ProjectId, Role};
use leadtrack_core::{Store, StoreError, StoreResult};
use leadtrack_mail::Mailer;
use leadtrack_outbound::{Outbound, failure};

use crate::email::Email;

/// Alerts taken from the queue at once.
const BATCH: u32 = 500;

/// How long the worker waits between rounds.
const PAUSE: Duration = Duration::from_secs(5);

/// The leads a digest lists by name; the rest it counts.
const DIGEST_LISTED: u32 = 20;

/// The alert worker of one store.
pub struct Alerter<S> {
    store: S,
    mailer: Option<Mailer>,
    http: Outbound,
    public_url: String,
}

impl<S: Store> Alerter<S> {
    /// A worker telling by `mailer` (none: chat channels only) with links under
    /// `public_url` (the dashboard's address as people reach it), posting only to the chat
    /// addresses `targets` allows.
    pub fn new(store: S, mailer: Option<Mailer>, public_url: &str, targets: Targets) -> Self {
        Self {
            store,
            mailer,
            http: Outbound::new(targets, Duration::from_secs(10)),
            public_url: public_url.trim_end_matches('/').to_owned(),
        }
    }

    /// Runs rounds ([`Alerter::tick`]) until `stop` completes.
    pub async fn run(self, stop: impl Future<Output = ()>) {
        tokio::pin!(stop);
        loop {
            if let Err(err) = self.tick(Utc::now()).await {
                tracing::warn!(error = %err, "alerts: a round failed; trying again");
            }
            tokio::select! {
                () = &mut stop => return,
                () = tokio::time::sleep(PAUSE) => {}
            }
        }
    }

    /// One round at `now`: sends every alert queued, then the reminders of the next steps
    /// that have fallen due, then the digests whose hour has ended. Returns how many
    /// messages went out.
    pub async fn tick(&self, now: DateTime<Utc>) -> StoreResult<usize> {
        let projects: HashMap<ProjectId, Project> = self
            .store
            .projects()
            .await?
            .into_iter()
            .map(|project| (project.id, project))
            .collect();
        // Each project's audience is read once a round, however many alerts it has.
        let mut audiences: HashMap<ProjectId, Audience> = HashMap::new();
        let mut sent = 0;
        loop {
            let taken = self.store.take_alerts(BATCH).await?;
            if taken.is_empty() {
                break;
            }
            for alert in &taken {
                let Some(project) = projects.get(&alert.project) else {
                    continue;
                };
                let audience = self.audience(&mut audiences, project).await?;
                sent += self.tell(audience, alert).await?;
            }
        }
        loop {
            let taken = self.store.take_reminders(now, BATCH).await?;
            if taken.is_empty() {
                break;
            }
            for reminder in &taken {
                let Some(project) = projects.get(&reminder.project) else {
                    continue;
                };
                let audience = self.audience(&mut audiences, project).await?;
                sent += self.remind(audience, reminder).await?;
            }
        }
        let Some(mailer) = &self.mailer else {
            return Ok(sent);
        };
        for project in projects.values().filter(|project| project.active) {
            // The members the round read already, or once now.
            let read;
            let members = match audiences.get(&project.id) {
                Some(audience) => &audience.members,
                None => {
                    read = self.store.members(project.id).await?;
                    &read
                }
            };
            sent += self.digests(mailer, (project, members), now).await?;
        }
        Ok(sent)
    }

    /// The audience of `project`, read once a round however many alerts it has.
    async fn audience<'a>(
        &self,
        audiences: &'a mut HashMap<ProjectId, Audience>,
        project: &Project,
    ) -> StoreResult<&'a Audience> {
        Ok(match audiences.entry(project.id) {
            Entry::Occupied(known) => known.into_mut(),
            Entry::Vacant(unknown) => unknown.insert(Audience {
                project: project.clone(),
                members: self.store.members(project.id).await?,
                channels: self.store.chat_channels(project.id).await?,
            }),
        })
    }

    /// The project's lead `id` as a message names it: `None` when it is gone, or sent to
    /// spam (no longer news).
    async fn summary(&self, project: &Project, id: LeadId) -> StoreResult<Option<LeadSummary>> {
        let found = self
            .store
            .find_lead(project.id, &LeadIdentifier::LeadId(id))
            .await;
        match found {
            Ok(lead) if lead.status == LeadStatus::Spam => Ok(None),
            Ok(lead) => Ok(Some(LeadSummary::of(&lead, self.lead_url(project, &lead)))),
            Err(StoreError::NotFound(_)) => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// Reminds `audience` of a next step that has fallen due: its recipient by email (if
    /// they want it), and the chat channels; how many messages went out.
    async fn remind(&self, audience: &Audience, reminder: &Reminder) -> StoreResult<usize> {
        let recipient = reminder
            .recipient()
            .and_then(|user| audience.members.iter().find(|m| m.user.id == user));
        let emailed: Vec<&Member> = recipient
            .filter(|m| self.mailer.is_some() && m.alerts.next_steps && !m.user.disabled)
            .into_iter()
            .collect();
        if emailed.is_empty() && audience.channels.is_empty() {
            return Ok(0);
        }
        let project = &audience.project;
        let Some(summary) = self.summary(project, reminder.lead).await? else {
            return Ok(0);
        };
        let email = Email::new(&project.name, &self.public_url);
        let message = email.next_step(&summary, &reminder.step);
        let title = match recipient {
            Some(member) => format!(
                "Next step due in {}, for {}",
                project.name, member.user.name
            ),
            None => format!("Next step due in {}", project.name),
        };
        let told = self
            .post_to_chats(&audience.channels, &summary, &title)
            .await;
        Ok(told + self.send(emailed, &message).await)
    }

    /// The link to a lead's page.
    fn lead_url(&self, project: &Project, lead: &StoredLead) -> String {
        format!(
            "{}/projects/{}/leads/{}",
            self.public_url, project.public_id, lead.id
        )
    }

    /// Sends what `alert` is due to `audience`; how many messages went out. An alert
    /// nobody asked for costs nothing more: its lead is not even read.
    async fn tell(&self, audience: &Audience, alert: &QueuedAlert) -> StoreResult<usize> {
        let emailed = match self.mailer {
            Some(_) => audience.told(alert.kind),
            None => Vec::new(),
        };
        let chats = match alert.kind {
            AlertKind::NewLead => audience.channels.as_slice(),
            _ => &[],
        };
        if emailed.is_empty() && chats.is_empty() {
            return Ok(0);
        }
        let project = &audience.project;
        // Sent back to spam before its alert went, or deleted since: nothing to tell.
        let Some(summary) = self.summary(project, alert.lead).await? else {
            return Ok(0);
        };
        let email = Email::new(&project.name, &self.public_url);
        let message = match alert.kind {
            AlertKind::NewLead => email.new_lead(&summary),
            AlertKind::Assigned { .. } => email.assigned(&summary),
            AlertKind::Failed => email.failed(&summary),
        };
        let title = format!("New lead in {}", project.name);
        let told = self.post_to_chats(chats, &summary, &title).await;
        Ok(told + self.send(emailed, &message).await)
    }

    /// Emails `message` to each of `members` who can sign in; how many went out.
    async fn send(&self, members: Vec<&Member>, message: &email::Message) -> usize {
        let Some(mailer) = &self.mailer else {
            return 0;
        };
        let mut sent = 0;
        for member in members {
            match mailer
                .send(&member.user.email, &message.subject, &message.body)
                .await
            {
                Ok(()) => sent += 1,
                // The error names no address: it is personal data.
                Err(err) => tracing::warn!(error = %err, "alerts: an email was not sent"),
            }
        }
        sent
    }

    /// Posts a lead to each of `chats`, headed `title`; how many took it.
    async fn post_to_chats(
        &self,
        chats: &[ChatChannel],
        summary: &LeadSummary,
        title: &str,
    ) -> usize {
        let mut told = 0;
        for ChatChannel { kind, url } in chats {
            let message = summary.chat_message(*kind, title);
            let answer = match self.http.post(url) {
                Ok(request) => request.json(&message).send().await.map_err(failure),
                Err(refusal) => Err(refusal.to_string()),
            };
            match answer.map(|answer| answer.status()) {
                Ok(status) if status.is_success() => told += 1,
                // Never the URL: whoever has it can post to the channel.
                Ok(status) => {
                    tracing::warn!(chat = %kind, %status, "alerts: a chat refused a message")
                }
                Err(error) => {
                    tracing::warn!(chat = %kind, %error, "alerts: a chat could not be reached");
                }
            }
        }
        told
    }

    /// Sends the project's members who chose the hourly digest the digest of each hour that
    /// has ended since their last; how many went out.
    async fn digests(
        &self,
        mailer: &Mailer,
        (project, members): (&Project, &[Member]),
        now: DateTime<Utc>,
    ) -> StoreResult<usize> {
        let mut sent = 0;
        let hourly = members
            .iter()
            .filter(|m| m.alerts.new_leads == NewLeads::Hourly && !m.user.disabled);
        for member in hourly {
            let Some((from, to)) = digest_window(member.alerts.digest_until, now) else {
                continue;
            };
            let query = LeadQuery {
                created_from: Some(from),
                created_to: Some(to - TimeDelta::milliseconds(1)),
                status: Some(not_spam()),
                limit: DIGEST_LISTED,
                ..LeadQuery::default()
            };
            let page = self.store.list_leads(project.id, &query).await?;
            if page.total > 0 {
                let leads: Vec<LeadSummary> = page
                    .leads
                    .iter()
                    .map(|lead| LeadSummary::of(lead, self.lead_url(project, lead)))
                    .collect();
                let inbox = format!("{}/projects/{}/leads", self.public_url, project.public_id);
                let email = Email::new(&project.name, &self.public_url);
                let message = email.digest(&leads, page.total, (from, &inbox));
                if let Err(err) = mailer
                    .send(&member.user.email, &message.subject, &message.body)
                    .await
                {
                    // Kept for the next round: the digest covers its hour once it goes.
                    tracing::warn!(error = %err, "alerts: a digest was not sent");
                    continue;
                }
                sent += 1;
            }
            let mut alerts = member.alerts.clone();
            alerts.digest_until = Some(to);
            self.store
                .set_alerts(project.id, member.user.id, &alerts)
                .await?;
        }
        Ok(sent)
    }
}

/// A project as a round of alerts sees it: its members and its chat channels.
struct Audience {
    project: Project,
    members: Vec<Member>,
    channels: Vec<ChatChannel>,
}

impl Audience {
    /// The members an alert of `kind` is emailed to: those who can sign in and asked for it
    /// (the assignee, for an assignment; owners, for a failed conversion).
    fn told(&self, kind: AlertKind) -> Vec<&Member> {
        self.members
            .iter()
            .filter(|m| !m.user.disabled)
            .filter(|m| match kind {
                AlertKind::NewLead => m.alerts.new_leads == NewLeads::Instant,
                AlertKind::Assigned { user } => m.user.id == user && m.alerts.assigned,
                AlertKind::Failed => m.role == Role::Owner && m.alerts.failures,
            })
            .collect()
    }
}

/// Every status but spam: what a digest lists.
fn not_spam() -> Vec<LeadStatus> {
    [
        LeadStatus::Open,
        LeadStatus::Pending,
        LeadStatus::Rated,
        LeadStatus::Lost,
    ]
    .to_vec()
}
