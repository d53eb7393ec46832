//! A lead's history: what happened to it, when, and by whom. Stores record an event in the
//! same transaction as the change it describes, so the history never misses one.
//!
//! A project's own history, its audit log ([`ProjectEvent`]), records what people did to it
//! beyond rating leads: exports, team and integration changes, deleted leads.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::account::Actor;
use crate::alert::ChatKind;
use crate::assignment::Assignee;
use crate::source::SourceKind;
use crate::spam::SpamReason;
use crate::time::to_millis;
use crate::types::{AttemptOutcome, ConversionId, IntegrationKind, JobId, LeadId, ProjectId, Role};

/// One event of a lead's history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeadEvent {
    /// When it happened.
    pub at: DateTime<Utc>,
    /// Who did it; `None` for what the service did by itself (a form submission, a
    /// delivery).
    pub by: Option<Actor>,
    /// What happened.
    pub activity: Activity,
}

/// An event as a backend writes it: built before the write, its actor and activity as
/// the JSON their columns hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventRow {
    /// The lead's project.
    pub project: ProjectId,
    /// The lead.
    pub lead: LeadId,
    /// When it happened, in milliseconds since the epoch.
    pub at: i64,
    /// Who did it, as JSON; `None` for the service itself.
    pub actor: Option<String>,
    /// What happened, as JSON.
    pub activity: String,
    /// The person's name, when this event touches the lead ([`first_touch`]): a store keeps
    /// the first such event's time and name with the lead, for reports.
    pub touch: Option<String>,
}

impl EventRow {
    /// The row of `activity`, done to `lead` at `at` by `by`.
    pub fn of(
        (project, lead): (ProjectId, LeadId),
        at: DateTime<Utc>,
        by: Option<&Actor>,
        activity: &Activity,
    ) -> Result<Self, serde_json::Error> {
        Ok(Self {
            project,
            lead,
            at: to_millis(&at),
            actor: by.map(serde_json::to_string).transpose()?,
            activity: serde_json::to_string(activity)?,
            touch: match by {
                Some(Actor::User { name, .. }) if activity.touches() => Some(name.clone()),
                _ => None,
            },
        })
    }
}

/// What happened to a lead.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum Activity {
    /// The lead was created.
    Created,
    /// A submission with the lead's `uniqueEventId` was merged into it.
    Merged,
    /// The lead was rated with a label or `lost`, queueing a conversion job.
    Rated {
        /// The label's id or `lost`.
        conversion_id: ConversionId,
        /// The label's name at the time; `None` for `lost`.
        label: Option<String>,
        /// The price reported, in cents.
        price: Option<i64>,
        /// The note given with the rating.
        note: Option<String>,
        /// The job queued.
        job_id: JobId,
    },
    /// The lead was reset to `open`.
    Reopened {
        /// The price given with the reset, in cents.
        price: Option<i64>,
        /// The note given with the reset.
        note: Option<String>,
    },
    /// The note typed with a rating: it belongs to that rating's job.
    Note {
        /// The note.
        note: String,
        /// The rating's job.
        job_id: JobId,
    },
    /// A rating was undone inside its undo window: its job was cancelled before anything
    /// left, and the lead is back as it was.
    Undone {
        /// The cancelled job.
        job_id: JobId,
    },
    /// The deliveries of a conversion that had failed for good were queued again, as the
    /// job named.
    Retried {
        /// The job that sends them again.
        job_id: JobId,
    },
    /// The lead was held as spam by a person (a lead held on arrival says why itself).
    Spam {
        /// Why.
        reason: SpamReason,
    },
    /// A person took the lead out of spam: it is a real lead after all.
    NotSpam,
    /// A person commented on the lead ([`crate::comment`]; the text is the comment's).
    Commented {
        /// The comment.
        comment_id: i64,
    },
    /// Its author edited a comment.
    CommentEdited {
        /// The comment.
        comment_id: i64,
    },
    /// Its author deleted a comment.
    CommentDeleted {
        /// The comment.
        comment_id: i64,
    },
    /// The lead was assigned to a member, or unassigned: by a person, or by the project's
    /// round-robin rule as it arrived (no actor).
    Assigned {
        /// Who it is assigned to now; `None`: nobody.
        assignee: Option<Assignee>,
    },
    /// The lead was erased at its person's request ([`crate::store::erasure`]): what
    /// stays is its anonymous record.
    Erased,
    /// A member corrected the lead's contact details ([`crate::store::correction`]).
    ContactCorrected {
        /// The fields changed, by their names for people ("email"); never their values.
        fields: Vec<String>,
    },
    /// A member set the lead's next step ([`crate::next_step`]), or changed it.
    NextStep {
        /// When it is due.
        #[serde(with = "crate::time::rfc3339_millis")]
        due_at: DateTime<Utc>,
        /// What to do, as noted.
        note: String,
    },
    /// A member marked the lead's next step done, or cleared it.
    NextStepDone,
    /// A delivery attempt of a conversion job ended.
    Delivery {
        /// The job.
        job_id: JobId,
        /// The platform.
        integration: IntegrationKind,
        /// How the attempt ended.
        outcome: AttemptOutcome,
        /// The platform's HTTP status, when it answered.
        http_status: Option<u16>,
        /// What went wrong, briefly.
        error: Option<String>,
    },
}

impl Activity {
    /// Whether a person doing this touches the lead, for the time to first touch: a
    /// comment, a rating, a reset, or sorting it out of or into spam.
    pub fn touches(&self) -> bool {
        matches!(
            self,
            Self::Rated { .. }
                | Self::Reopened { .. }
                | Self::Commented { .. }
                | Self::Spam { .. }
                | Self::NotSpam
        )
    }
}

/// A lead's history as told: the `events` recorded (oldest first, ties in the order
/// recorded) and, when `created` is given, the `created` event the lead implies, by nobody
/// at its creation time, before the first event at or after that time (creating the lead
/// comes first among events at the same time). Stores keep no row for it: it is most of
/// their history's rows, and the lead already holds all it says. `created` is `None` for a
/// lead whose history is its recorded events alone: one captured before lead histories
/// existed, one whose `created` row said another time and so was kept, and an erased one
/// ([`crate::store::arrival::Step::ForgetCreation`]).
pub fn history(created: Option<DateTime<Utc>>, mut events: Vec<LeadEvent>) -> Vec<LeadEvent> {
    if let Some(at) = created {
        let before = events.partition_point(|event| event.at < at);
        let event = LeadEvent {
            at,
            by: None,
            activity: Activity::Created,
        };
        events.insert(before, event);
    }
    events
}

/// The lead's first touch: the first event of its history (`events`, oldest first) in which
/// a person ([`Actor::User`]) commented on it, rated it or changed its status. What an API
/// key or the service did is no touch.
pub fn first_touch(events: &[LeadEvent]) -> Option<&LeadEvent> {
    events
        .iter()
        .find(|event| matches!(event.by, Some(Actor::User { .. })) && event.activity.touches())
}

/// One event of a project's own history, its audit log: who exported its leads, changed its
/// team or its integrations, deleted a lead; when, and from which address. Kept a year
/// ([`audit_retention`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectEvent {
    /// Its id: later events have larger ids.
    pub id: i64,
    /// When it happened.
    pub at: DateTime<Utc>,
    /// Who did it.
    pub by: Option<Actor>,
    /// The client address of the request that did it; `None` from the command line.
    pub address: Option<String>,
    /// What happened.
    pub activity: ProjectActivity,
}

/// How long a project's history keeps an event: a year, after which stores delete it.
pub fn audit_retention() -> chrono::Duration {
    chrono::Duration::days(365)
}

/// Who did something to a project, and from where, as its history records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attribution {
    /// Who.
    pub actor: Actor,
    /// The client address of their request; `None` from the command line.
    pub address: Option<String>,
}

impl Attribution {
    /// The server's own commands, run from a shell.
    pub fn admin() -> Self {
        Self {
            actor: Actor::Admin,
            address: None,
        }
    }
}

/// What happened to a project (stored as JSON tagged by `type`). Team members are named by
/// their email at the time; leads only by their id, which outlives their deletion.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ProjectActivity {
    /// A lead was deleted, with its history, jobs and events: only its id remains.
    LeadDeleted {
        /// The lead's id.
        #[serde(rename = "leadId")]
        lead_id: LeadId,
    },
    /// A person's leads were erased at their request ([`crate::store::erasure`]): their
    /// ids, never what they held.
    PersonErased {
        /// The leads erased.
        #[serde(rename = "leadIds")]
        lead_ids: Vec<LeadId>,
    },
    /// Leads were exported as CSV.
    Exported {
        /// The inbox view exported, as the query of its address (`status=open&form=…`).
        view: String,
    },
    /// Someone was invited, or invited again with a new link.
    Invited {
        /// Their email.
        email: String,
        /// The role offered.
        role: Role,
    },
    /// A pending invitation was revoked.
    InvitationRevoked {
        /// The invitee's email.
        email: String,
    },
    /// An invitation was taken: the invitee is a member.
    InvitationAccepted {
        /// Their email.
        email: String,
        /// Their role.
        role: Role,
    },
    /// A user was made a member, or their role changed.
    RoleSet {
        /// Their email.
        email: String,
        /// The role before; `None` for a new member.
        from: Option<Role>,
        /// The role now.
        to: Role,
    },
    /// A member was removed.
    MemberRemoved {
        /// Their email.
        email: String,
    },
    /// A member was allowed to export, or no longer.
    ExportsAllowed {
        /// Their email.
        email: String,
        /// Whether they may now.
        allowed: bool,
    },
    /// The round-robin rule was set, or turned off (no members).
    RoundRobinSet {
        /// How many members take turns; 0: it is off.
        members: usize,
        /// The forms it covers (by their key); empty: every form.
        forms: Vec<String>,
    },
    /// A chat channel for new leads was set.
    ChatChannelSaved {
        /// The chat.
        chat: ChatKind,
    },
    /// A chat channel was removed.
    ChatChannelRemoved {
        /// The chat.
        chat: ChatKind,
    },
    /// An integration was connected, or its settings changed.
    IntegrationSaved {
        /// The platform.
        integration: IntegrationKind,
    },
    /// An integration was disconnected.
    IntegrationRemoved {
        /// The platform.
        integration: IntegrationKind,
    },
    /// A lead source was set up, or its settings changed.
    LeadSourceSaved {
        /// The source.
        source: SourceKind,
    },
    /// A lead source was removed.
    LeadSourceRemoved {
        /// The source.
        source: SourceKind,
    },
    /// An inbound webhook was made, or its settings changed.
    InboundHookSaved {
        /// Its name.
        name: String,
    },
    /// An inbound webhook was removed.
    InboundHookRemoved {
        /// Its name.
        name: String,
    },
    /// Past leads were imported from a file.
    LeadsImported {
        /// The file's name.
        file: String,
        /// Leads created.
        imported: u64,
        /// Rows skipped as leads already there.
        duplicates: u64,
        /// Rows that could not be leads.
        bad: u64,
    },
    /// Ad spend was imported from a file.
    SpendImported {
        /// The file's name.
        file: String,
        /// Rows kept (each replacing the same day and campaign's).
        rows: u64,
        /// Rows that could not be spend.
        bad: u64,
    },
    /// The currency rates spend is converted with were set.
    FxRatesSet {
        /// The rates, as written (`EUR=1.08 GBP=1.25`); empty when none are left.
        rates: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_touch_is_a_persons_comment_rating_or_status_change() {
        let at = |minute| DateTime::UNIX_EPOCH + chrono::Duration::minutes(minute);
        let event = |minute, by: Option<Actor>, activity| LeadEvent {
            at: at(minute),
            by,
            activity,
        };
        let ada = Actor::User {
            id: crate::types::UserId(1),
            name: "Ada".into(),
        };
        let mut events = vec![
            event(0, None, Activity::Created),
            event(1, Some(Actor::api_key("lt_0123abcd")), Activity::NotSpam),
            event(2, Some(ada.clone()), Activity::Undone { job_id: JobId(1) }),
        ];
        assert_eq!(first_touch(&events), None);
        events.push(event(
            3,
            Some(ada.clone()),
            Activity::Commented { comment_id: 1 },
        ));
        events.push(event(4, Some(ada), Activity::NotSpam));
        assert_eq!(first_touch(&events).map(|e| e.at), Some(at(3)));
    }

    /// The implied `created` goes before every event at or after its time, and after any
    /// recorded earlier; a history recorded whole gains nothing.
    #[test]
    fn a_history_tells_its_implied_creation_in_its_place() {
        let at = |minute| DateTime::UNIX_EPOCH + chrono::Duration::minutes(minute);
        let event = |minute, activity| LeadEvent {
            at: at(minute),
            by: None,
            activity,
        };
        let recorded = vec![
            event(1, Activity::NotSpam),
            event(3, Activity::Merged),
            event(3, Activity::NotSpam),
        ];
        let types = |events: Vec<LeadEvent>| -> Vec<(i64, Activity)> {
            events
                .into_iter()
                .map(|e| (e.at.timestamp() / 60, e.activity))
                .collect()
        };
        assert_eq!(
            types(history(Some(at(3)), recorded.clone())),
            [
                (1, Activity::NotSpam),
                (3, Activity::Created),
                (3, Activity::Merged),
                (3, Activity::NotSpam),
            ]
        );
        assert_eq!(
            types(history(Some(at(0)), recorded.clone()))[0],
            (0, Activity::Created)
        );
        assert_eq!(
            types(history(Some(at(9)), recorded.clone())).last(),
            Some(&(9, Activity::Created))
        );
        assert_eq!(history(None, recorded.clone()), recorded);
        assert_eq!(
            history(Some(at(2)), Vec::new()),
            [event(2, Activity::Created)]
        );
    }

    #[test]
    fn activities_are_tagged_by_type_with_camel_case_fields() {
        let rated = Activity::Rated {
            conversion_id: ConversionId::Lost,
            label: None,
            price: Some(500),
            note: None,
            job_id: JobId(7),
        };
        assert_eq!(
            serde_json::to_value(&rated).unwrap(),
            json!({"type": "rated", "conversionId": "lost", "label": null, "price": 500, "note": null, "jobId": 7})
        );
        assert_eq!(
            serde_json::to_value(Activity::Merged).unwrap(),
            json!({"type": "merged"})
        );
    }
}
