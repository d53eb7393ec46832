//! Who a lead is given to: its assignee, and a project's round-robin rule, which gives new
//! leads to chosen members in turn.
//!
//! A person assigns a lead on its page, in its inbox row or in bulk; the rule assigns a
//! lead as it is created, in the write that stores it, so two leads arriving together
//! never take the same turn. The rule's turn is [`RoundRobin::next`], stated here once
//! for both backends.

use serde::{Deserialize, Serialize};

use crate::matching::form_key;
use crate::types::{Role, UserId};

/// The member a lead is assigned to: `assignee` in getLead and getLeads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assignee {
    /// The user.
    pub id: UserId,
    /// Their name now.
    pub name: String,
}

impl Assignee {
    /// The assignee of a lead row's assigned user id and that user's name (both `None`
    /// when it is assigned to nobody).
    pub fn of_row(id: Option<i64>, name: Option<String>) -> Option<Self> {
        Some(Self {
            id: UserId(id?),
            name: name.unwrap_or_default(),
        })
    }
}

/// Whether a member with `role`, disabled or not, can be given leads: someone who can rate
/// them (not a viewer), and who can sign in.
pub fn may_take(role: Role, disabled: bool) -> bool {
    role.allows(Role::Member) && !disabled
}

/// A project's round-robin rule: new leads (of `forms`, or all when empty) go to
/// `members` in turn.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundRobin {
    /// The forms whose leads it assigns, by [`form_key`]; empty: every form, and leads
    /// without one.
    pub forms: Vec<String>,
    /// The members who take turns, in turn order.
    pub members: Vec<UserId>,
}

impl RoundRobin {
    /// The rule for `forms` (any case; blanks dropped, each once) and `members` (each once,
    /// in the order given).
    pub fn new<'a>(forms: impl IntoIterator<Item = &'a str>, members: &[UserId]) -> Self {
        let mut rule = Self::default();
        for form in forms.into_iter().map(str::trim).filter(|f| !f.is_empty()) {
            let key = form_key(form);
            if !rule.forms.contains(&key) {
                rule.forms.push(key);
            }
        }
        for member in members {
            if !rule.members.contains(member) {
                rule.members.push(*member);
            }
        }
        rule
    }

    /// Whether a lead of `form_name` is the rule's to assign.
    pub fn covers(&self, form_name: Option<&str>) -> bool {
        self.forms.is_empty() || form_name.is_some_and(|name| self.forms.contains(&form_key(name)))
    }

    /// Whose turn it is after `last` (the member the rule gave its previous lead to):
    /// the next member in turn order for whom `can_take` holds (a disabled user, or one no
    /// longer a member, is skipped), wrapping around; `None` when nobody can take it.
    pub fn next(&self, last: Option<UserId>, can_take: impl Fn(UserId) -> bool) -> Option<UserId> {
        let start = last
            .and_then(|last| self.members.iter().position(|m| *m == last))
            .map_or(0, |at| at + 1);
        let count = self.members.len();
        (0..count)
            .map(|step| self.members[(start + step) % count])
            .find(|member| can_take(*member))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADA: UserId = UserId(1);
    const BEA: UserId = UserId(2);
    const CY: UserId = UserId(3);

    #[test]
    fn turns_go_round_skipping_who_cannot_take_one() {
        let rule = RoundRobin::new([], &[ADA, BEA, CY]);
        let everyone = |_| true;
        assert_eq!(rule.next(None, everyone), Some(ADA));
        assert_eq!(rule.next(Some(ADA), everyone), Some(BEA));
        assert_eq!(rule.next(Some(CY), everyone), Some(ADA));
        let not_bea = |member| member != BEA;
        assert_eq!(rule.next(Some(ADA), not_bea), Some(CY));
        // A last assignee who left the rule: the turn starts again from the first.
        assert_eq!(rule.next(Some(UserId(9)), everyone), Some(ADA));
        assert_eq!(rule.next(Some(ADA), |_| false), None);
        assert_eq!(RoundRobin::default().next(None, everyone), None);
    }

    #[test]
    fn only_members_who_can_rate_and_sign_in_take_leads() {
        assert!(may_take(Role::Member, false) && may_take(Role::Owner, false));
        assert!(!may_take(Role::Viewer, false) && !may_take(Role::Member, true));
    }

    #[test]
    fn a_rule_covers_its_forms_whatever_their_case_or_every_form() {
        let rule = RoundRobin::new([" Contact ", "contact", "", "Demo"], &[ADA, ADA, BEA]);
        assert_eq!(rule.forms, ["contact", "demo"]);
        assert_eq!(rule.members, [ADA, BEA]);
        assert!(rule.covers(Some("CONTACT")));
        assert!(!rule.covers(Some("Newsletter")));
        assert!(!rule.covers(None));
        let every = RoundRobin::new([], &[ADA]);
        assert!(every.covers(None) && every.covers(Some("Newsletter")));
    }
}
