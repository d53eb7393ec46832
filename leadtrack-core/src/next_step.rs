//! A lead's next step: when someone acts on it next (a call back, a demo) and a short note.
//! A member sets it on the lead's page or from its inbox row; the Due list shows the steps
//! due by the end of the day, soonest first; and once a step falls due the alert worker
//! reminds the lead's assignee (else whoever set it) once, as their alert settings say.
//!
//! The steps live beside the leads, never in them: storing a lead does no more work for
//! them.

use chrono::{DateTime, Days, NaiveTime, Utc};

use crate::types::{LeadId, ProjectId, UserId};

/// The most characters a next step's note may have.
pub const MAX_NOTE_CHARS: usize = 200;

/// The most steps the Due list shows (and counts) at once.
pub const DUE_LISTED: u32 = 200;

/// A lead's next step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NextStep {
    /// When it is due.
    pub at: DateTime<Utc>,
    /// What to do, briefly; may be empty.
    pub note: String,
}

impl NextStep {
    /// A step due `at`, noting `note` (trimmed, at most [`MAX_NOTE_CHARS`] characters);
    /// else why not, in words.
    pub fn new(at: DateTime<Utc>, note: &str) -> Result<Self, String> {
        let note = note.trim();
        if note.chars().count() > MAX_NOTE_CHARS {
            return Err(format!(
                "a next step's note must be at most {MAX_NOTE_CHARS} characters"
            ));
        }
        Ok(Self {
            at,
            note: note.to_owned(),
        })
    }

    /// Whether it is due at `now`.
    pub fn is_due(&self, now: DateTime<Utc>) -> bool {
        self.at <= now
    }
}

/// A step as the Due list shows it: its lead, and who the lead is assigned to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DueStep {
    /// The lead.
    pub lead: LeadId,
    /// The step.
    pub step: NextStep,
    /// The lead's assignee.
    pub assignee: Option<UserId>,
}

/// A step that has fallen due, taken by the alert worker to remind someone of it once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reminder {
    /// The lead's project.
    pub project: ProjectId,
    /// The lead.
    pub lead: LeadId,
    /// The step.
    pub step: NextStep,
    /// The lead's assignee.
    pub assignee: Option<UserId>,
    /// Who set the step (none when an API key or the admin commands did).
    pub set_by: Option<UserId>,
}

impl Reminder {
    /// Who hears of it: the lead's assignee, else whoever set the step.
    pub fn recipient(&self) -> Option<UserId> {
        self.assignee.or(self.set_by)
    }
}

/// How many of a project's open leads have a next step (the reports' follow-up figure).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Open leads.
    pub open: u64,
    /// Open leads with a next step.
    pub planned: u64,
}

impl Coverage {
    /// Open leads without a next step.
    pub fn unplanned(&self) -> u64 {
        self.open.saturating_sub(self.planned)
    }
}

/// The end of `now`'s day (UTC, as the dashboard's times are): the Due list holds the steps
/// due before it, overdue ones included.
pub fn due_by(now: DateTime<Utc>) -> DateTime<Utc> {
    let midnight = now.date_naive().and_time(NaiveTime::MIN).and_utc();
    midnight.checked_add_days(Days::new(1)).unwrap_or(now)
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn a_note_is_trimmed_and_bounded() {
        let at = Utc.with_ymd_and_hms(2026, 12, 1, 9, 30, 0).unwrap();
        let step = NextStep::new(at, "  Call back about pricing ").unwrap();
        assert_eq!(step.note, "Call back about pricing");
        assert_eq!(NextStep::new(at, "").unwrap().note, "");
        let long = "é".repeat(MAX_NOTE_CHARS + 1);
        assert_eq!(
            NextStep::new(at, &long).unwrap_err(),
            "a next step's note must be at most 200 characters"
        );
        assert!(NextStep::new(at, &long[2..]).is_ok());
    }

    #[test]
    fn the_due_list_ends_with_the_day() {
        let now = Utc.with_ymd_and_hms(2026, 12, 31, 23, 59, 0).unwrap();
        assert_eq!(
            due_by(now),
            Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap()
        );
        let step = NextStep::new(now, "").unwrap();
        assert!(step.is_due(now) && !step.is_due(now - chrono::Duration::seconds(1)));
    }

    #[test]
    fn the_assignee_hears_first() {
        let reminder = Reminder {
            project: ProjectId(1),
            lead: LeadId(2),
            step: NextStep::new(Utc::now(), "").unwrap(),
            assignee: Some(UserId(7)),
            set_by: Some(UserId(3)),
        };
        assert_eq!(reminder.recipient(), Some(UserId(7)));
        let unassigned = Reminder {
            assignee: None,
            ..reminder
        };
        assert_eq!(unassigned.recipient(), Some(UserId(3)));
        let coverage = Coverage {
            open: 5,
            planned: 2,
        };
        assert_eq!(coverage.unplanned(), 3);
    }
}
