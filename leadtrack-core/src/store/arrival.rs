//! What a lead's arrival does, decided once for every backend: a create that merges into a
//! lead ([`Merge`]), one that inserts a new lead ([`Arrival`]), an import's leads, a person
//! holding leads as spam or freeing one. A backend looks up what the plan asks for (the
//! lead to merge into, then the lead a new one duplicates), writes the lead's row with its
//! own SQL, and then each [`Step`] in the order given here, in the same transaction. The
//! rules of the order live here: a merge never alerts or assigns, a lead held as spam is
//! never assigned, alerted or announced, and a duplicate's original keeps its identity.

use crate::account::Actor;
use crate::activity::Activity;
use crate::alert::AlertKind;
use crate::lead::{CreatedLead, LeadData};
use crate::request::CreateRoute;
use crate::spam::SpamReason;
use crate::store::LeadRow;
use crate::types::{LeadId, LeadStatus};
use crate::webhook::WebhookEvent;

/// One write besides the lead's row, in the order a plan lists them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// The lead a new one duplicates learns it has a duplicate (its `duplicated` flag), so
    /// that rating it reads the person's jobs. Its own row is otherwise left as it is.
    MarkDuplicated(LeadId),
    /// An entry in the lead's history, by `by` (`None`: the lead's sender).
    Record {
        /// What happened.
        activity: Activity,
        /// Who did it, when a person did.
        by: Option<Actor>,
    },
    /// The lead's history becomes its recorded events alone: the `created` event its row
    /// implies ([`crate::activity::history`]) is told no more, as when an erasure removes
    /// everything it had recorded.
    ForgetCreation,
    /// An alert queued for the project's members.
    Alert(AlertKind),
    /// The lead given to the next member in turn, when the project's round-robin rule takes
    /// its form.
    AssignInTurn,
    /// An event queued for each webhook that hears of it, with a fresh event id.
    Announce(WebhookEvent),
}

/// What a lead's sender did, recorded without a person.
fn sent(activity: Activity) -> Step {
    Step::Record { activity, by: None }
}

/// What makes a lead known to the team: an alert, its turn in the round-robin, and
/// `lead.created`. A lead held as spam has none of them until a person frees it.
fn announced() -> [Step; 3] {
    [
        Step::Alert(AlertKind::NewLead),
        Step::AssignInTurn,
        Step::Announce(WebhookEvent::LeadCreated),
    ]
}

/// A create that inserts a new lead: its route, why it is spam (if it is), and the lead it
/// duplicates (if any).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// The route it came by.
    pub route: CreateRoute,
    /// Why it is held as spam, if it is.
    pub spam: Option<SpamReason>,
    /// The lead of the same person it duplicates, if any.
    pub duplicate_of: Option<LeadId>,
}

impl Arrival {
    /// Whether a backend looks up the lead a new lead duplicates before inserting it: a
    /// lead held as spam is nobody's duplicate (its sender may have typed anyone's email).
    pub fn looks_for_original(spam: Option<SpamReason>) -> bool {
        spam.is_none()
    }

    /// An import's lead: through the keyed route, neither spam nor anyone's duplicate.
    pub fn imported() -> Self {
        Self {
            route: CreateRoute::Server,
            spam: None,
            duplicate_of: None,
        }
    }

    /// The status the new lead is stored with.
    pub fn status(&self) -> LeadStatus {
        match self.spam {
            Some(_) => LeadStatus::Spam,
            None => LeadStatus::Open,
        }
    }

    /// The `created_via` a backend stores: `browser` or `server`.
    pub fn created_via(&self) -> &'static str {
        route_name(self.route)
    }

    /// The writes after the lead's row: its original learns of it, and, unless it is spam,
    /// the team hears of it. Its history's `created` is implied by the row
    /// ([`crate::activity::history`]), not written.
    pub fn steps(&self) -> Vec<Step> {
        let mut steps: Vec<Step> = self
            .duplicate_of
            .map(Step::MarkDuplicated)
            .into_iter()
            .collect();
        if self.spam.is_none() {
            steps.extend(announced());
        }
        steps
    }

    /// What the create answers for the lead inserted as `id`.
    pub fn outcome(&self, id: LeadId, row: &LeadRow) -> CreatedLead {
        CreatedLead {
            lead_id: id,
            unique_identifier: row.data.unique_identifier.clone(),
            created: true,
        }
    }
}

/// The `created_via` value of `route`, as both backends store it. A server create looking
/// for a lead to merge into prefers its own route's (`server` sorts after `browser`).
pub fn route_name(route: CreateRoute) -> &'static str {
    match route {
        CreateRoute::Browser => "browser",
        CreateRoute::Server => "server",
    }
}

/// A create that merges into the lead with its event id: the lead keeps its id, status,
/// rating and assignee; its data becomes the merge of both.
#[derive(Clone, Debug)]
pub struct Merge {
    /// The lead merged into.
    pub lead: LeadId,
    /// Its row after the merge.
    pub row: LeadRow,
    /// Whether the lead is held as spam: then nobody hears of the merge either.
    spam: bool,
}

impl Merge {
    /// The merge of `incoming` into the lead `lead`, whose stored data is `stored` (its
    /// JSON) and status `status`.
    pub fn plan(
        lead: LeadId,
        (stored, status): (&str, LeadStatus),
        incoming: LeadData,
    ) -> Result<Self, serde_json::Error> {
        let mut merged: LeadData = serde_json::from_str(stored)?;
        merged.merge(incoming);
        Ok(Self {
            lead,
            row: LeadRow::of(merged)?,
            spam: status == LeadStatus::Spam,
        })
    }

    /// The writes after the lead's row: `merged` in its history, and `lead.updated` unless
    /// the lead is held as spam. A merge never alerts or assigns: the lead already arrived.
    pub fn steps(&self) -> Vec<Step> {
        let mut steps = vec![sent(Activity::Merged)];
        if !self.spam {
            steps.push(Step::Announce(WebhookEvent::LeadUpdated));
        }
        steps
    }

    /// What the create answers.
    pub fn outcome(&self) -> CreatedLead {
        CreatedLead {
            lead_id: self.lead,
            unique_identifier: self.row.data.unique_identifier.clone(),
            created: false,
        }
    }
}

/// The steps of each lead a person holds as spam: `spam` in its history, by them.
pub fn held_steps(by: &Actor) -> Vec<Step> {
    vec![Step::Record {
        activity: Activity::Spam {
            reason: SpamReason::Marked,
        },
        by: Some(by.clone()),
    }]
}

/// The steps of freeing a lead from spam (before a person's status change): `not_spam` in
/// its history, by them, and then what a new lead's arrival announces, at last.
pub fn released_steps(by: &Actor) -> Vec<Step> {
    let mut steps = vec![Step::Record {
        activity: Activity::NotSpam,
        by: Some(by.clone()),
    }];
    steps.extend(announced());
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrival(spam: Option<SpamReason>, duplicate_of: Option<LeadId>) -> Arrival {
        Arrival {
            route: CreateRoute::Browser,
            spam,
            duplicate_of,
        }
    }

    #[test]
    fn a_new_lead_is_announced_and_a_duplicate_tells_its_original_first() {
        let steps = arrival(None, Some(LeadId(7))).steps();
        assert_eq!(steps[0], Step::MarkDuplicated(LeadId(7)));
        assert_eq!(steps[1..], announced());
    }

    #[test]
    fn a_lead_held_as_spam_is_only_stored() {
        let steps = arrival(Some(SpamReason::TooFast), None).steps();
        assert_eq!(steps, []);
        assert!(!Arrival::looks_for_original(Some(SpamReason::Honeypot)));
        assert_eq!(
            arrival(Some(SpamReason::TooFast), None).status(),
            LeadStatus::Spam
        );
    }

    #[test]
    fn a_merge_never_alerts_or_assigns_and_into_spam_announces_nothing() {
        let data = LeadData::default();
        let open = Merge::plan(LeadId(1), ("{}", LeadStatus::Open), data.clone()).unwrap();
        assert_eq!(
            open.steps(),
            [
                sent(Activity::Merged),
                Step::Announce(WebhookEvent::LeadUpdated)
            ]
        );
        let spam = Merge::plan(LeadId(1), ("{}", LeadStatus::Spam), data).unwrap();
        assert_eq!(spam.steps(), [sent(Activity::Merged)]);
        assert!(!open.outcome().created);
    }
}
