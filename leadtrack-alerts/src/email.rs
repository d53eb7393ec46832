//! The alerts' emails, in plain text: a lead's name, form and first source, the link to
//! it, and where to change one's alerts.

use chrono::{DateTime, Utc};
use leadtrack_core::alert::LeadSummary;
use leadtrack_core::next_step::NextStep;

/// An email to send.
pub(crate) struct Message {
    pub(crate) subject: String,
    pub(crate) body: String,
}

/// The emails of one project.
pub(crate) struct Email<'a> {
    project: &'a str,
    public_url: &'a str,
}

impl<'a> Email<'a> {
    /// The emails of the project named `project`, whose dashboard is at `public_url`.
    pub(crate) fn new(project: &'a str, public_url: &'a str) -> Self {
        Self {
            project,
            public_url,
        }
    }

    /// The body's closing lines: where the reader changes what they get.
    fn footer(&self) -> String {
        format!(
            "\n--\nYou get this as your alerts in {} are set. Change them in your profile: {}/profile\n",
            self.project, self.public_url
        )
    }

    fn message(&self, subject: String, text: String, lead: &LeadSummary) -> Message {
        Message {
            subject,
            body: format!(
                "{text}\n\n{}\n\nOpen it (after signing in):\n{}\n{}",
                lead.line(),
                lead.url,
                self.footer()
            ),
        }
    }

    /// A new lead, as it arrived.
    pub(crate) fn new_lead(&self, lead: &LeadSummary) -> Message {
        self.message(
            format!("New lead in {}: {}", self.project, lead.name),
            format!("A new lead arrived in {}.", self.project),
            lead,
        )
    }

    /// A lead assigned to the reader.
    pub(crate) fn assigned(&self, lead: &LeadSummary) -> Message {
        self.message(
            format!("Assigned to you in {}: {}", self.project, lead.name),
            format!(
                "A lead in {} was assigned to you: it is in your Mine tab.",
                self.project
            ),
            lead,
        )
    }

    /// A conversion of the lead that failed for good.
    pub(crate) fn failed(&self, lead: &LeadSummary) -> Message {
        self.message(
            format!("A conversion failed in {}: {}", self.project, lead.name),
            format!(
                "A platform refused a conversion of this lead in {} for good. Its page says which \
                 and why, under Conversions; after fixing the cause, send it again from there.",
                self.project
            ),
            lead,
        )
    }

    /// A next step of the lead that has fallen due.
    pub(crate) fn next_step(&self, lead: &LeadSummary, step: &NextStep) -> Message {
        let mut text = format!(
            "A next step of this lead in {} is due: {}.",
            self.project,
            step.at.format("%Y-%m-%d %H:%M UTC")
        );
        if !step.note.is_empty() {
            text.push_str(&format!("\n\nWhat to do: {}", step.note));
        }
        text.push_str("\n\nOnce it is done, mark it done on the lead's page or in the Due list.");
        self.message(
            format!("Next step due in {}: {}", self.project, lead.name),
            text,
            lead,
        )
    }

    /// The digest of the hour from `from`: `total` new leads, `listed` among them.
    pub(crate) fn digest(
        &self,
        listed: &[LeadSummary],
        total: u64,
        (from, inbox): (DateTime<Utc>, &str),
    ) -> Message {
        let leads = match total {
            1 => "1 new lead".to_owned(),
            n => format!("{n} new leads"),
        };
        let mut body = format!(
            "{leads} in {} since {} UTC:\n",
            self.project,
            from.format("%Y-%m-%d %H:%M")
        );
        for lead in listed {
            body.push_str(&format!("\n- {}\n  {}\n", lead.line(), lead.url));
        }
        let unlisted = total.saturating_sub(listed.len() as u64);
        if unlisted > 0 {
            body.push_str(&format!("\nand {unlisted} more.\n"));
        }
        body.push_str(&format!("\nThe inbox (after signing in):\n{inbox}\n"));
        body.push_str(&self.footer());
        Message {
            subject: format!("{leads} in {} this past hour", self.project),
            body,
        }
    }
}
