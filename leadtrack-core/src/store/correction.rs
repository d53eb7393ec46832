//! A member's correction of a lead's contact details (first and last name, email, phone,
//! company): planned here, written by each backend. The lead's row is made again from its
//! corrected data, so its email and phone are normalised and searched as a new lead's are;
//! then the backend matches it again with the project's earlier leads of the same person
//! ([`crate::store::sql::rematch_lookup`]), records who changed which fields (never the
//! values, which are personal data), and announces `lead.updated` unless it is spam.

use serde_json::Value;

use crate::account::Actor;
use crate::activity::Activity;
use crate::lead::LeadData;
use crate::store::LeadRow;
use crate::store::arrival::Step;
use crate::types::{LeadId, LeadStatus};
use crate::webhook::WebhookEvent;

/// The contact fields a member may correct: the `userData` property and its name for
/// people.
pub const CONTACT_FIELDS: [(&str, &str); 5] = [
    ("firstName", "first name"),
    ("lastName", "last name"),
    ("email", "email"),
    ("phone", "phone"),
    ("companyName", "company"),
];

/// The most characters a corrected field may have.
const MOST_CHARS: usize = 320;

/// What a member typed for each of [`CONTACT_FIELDS`], in that order: trimmed, and empty
/// for a field to remove.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContactCorrection([String; 5]);

impl ContactCorrection {
    /// The correction of `values`, one for each of [`CONTACT_FIELDS`], trimmed.
    pub fn new(values: [&str; 5]) -> Self {
        Self(values.map(|value| value.trim().to_owned()))
    }

    /// The correction a form holds, read with `get` by each field's `userData` name.
    pub fn read<'a>(get: impl Fn(&str) -> &'a str) -> Self {
        Self::new(CONTACT_FIELDS.map(|(field, _)| get(field)))
    }

    /// The value typed for the field at `at` in [`CONTACT_FIELDS`].
    pub fn value(&self, at: usize) -> &str {
        self.0.get(at).map_or("", String::as_str)
    }

    /// Its problem, said for people, if it has one: a field too long, or an email
    /// without an `@` between two parts.
    pub fn problem(&self) -> Option<String> {
        for ((_, name), value) in CONTACT_FIELDS.iter().zip(&self.0) {
            if value.chars().count() > MOST_CHARS {
                return Some(format!(
                    "The {name} must be at most {MOST_CHARS} characters."
                ));
            }
        }
        let email = &self.0[2];
        let well_formed = email
            .split_once('@')
            .is_some_and(|(local, domain)| !local.is_empty() && domain.contains('.'));
        (!email.is_empty() && !well_formed)
            .then(|| format!("“{email}” is no email address: it needs a name, an @ and a domain."))
    }

    /// The correction of the lead `lead`, whose stored data is `stored` (its JSON) and
    /// status `status`, by `by`; `None` when it changes nothing.
    pub fn plan(
        &self,
        lead: LeadId,
        (stored, status): (&str, LeadStatus),
        by: &Actor,
    ) -> Result<Option<Correction>, serde_json::Error> {
        let mut data: LeadData = serde_json::from_str(stored)?;
        let mut changed = Vec::new();
        for ((field, name), value) in CONTACT_FIELDS.iter().zip(&self.0) {
            if data.user(field).unwrap_or_default() == value {
                continue;
            }
            match value.is_empty() {
                true => data.user_data.remove(*field),
                false => data
                    .user_data
                    .insert((*field).to_owned(), Value::from(value.as_str())),
            };
            changed.push((*name).to_owned());
        }
        if changed.is_empty() {
            return Ok(None);
        }
        Ok(Some(Correction {
            lead,
            row: LeadRow::of(data)?,
            changed,
            spam: status == LeadStatus::Spam,
            by: by.clone(),
        }))
    }
}

/// A correction planned: the lead's row after it, and what it changed.
#[derive(Clone, Debug)]
pub struct Correction {
    /// The lead corrected.
    pub lead: LeadId,
    /// Its row after the correction.
    pub row: LeadRow,
    /// The fields changed, by their names for people.
    pub changed: Vec<String>,
    spam: bool,
    by: Actor,
}

impl Correction {
    /// Whether the lead is matched again with the person's earlier leads: not while it is
    /// held as spam, as a spam lead that arrives is not.
    pub fn rematches(&self) -> bool {
        !self.spam
    }

    /// The writes after the lead's row and its matching: the correction in its history,
    /// by the member, and `lead.updated` unless the lead is held as spam.
    pub fn steps(&self) -> Vec<Step> {
        let mut steps = vec![Step::Record {
            activity: Activity::ContactCorrected {
                fields: self.changed.clone(),
            },
            by: Some(self.by.clone()),
        }];
        if !self.spam {
            steps.push(Step::Announce(WebhookEvent::LeadUpdated));
        }
        steps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::UserId;

    fn by() -> Actor {
        Actor::User {
            id: UserId(1),
            name: "Mo".into(),
        }
    }

    fn typed(fields: [&str; 5]) -> ContactCorrection {
        ContactCorrection::read(|name| {
            let at = CONTACT_FIELDS.iter().position(|(field, _)| *field == name);
            at.map_or("", |at| fields[at])
        })
    }

    #[test]
    fn a_correction_changes_the_fields_typed_and_says_which() {
        let stored = r#"{"userData":{"firstName":"Ada","email":"ADA@x.io","phone":"0151 1"},"formData":{"message":"Hi"}}"#;
        let correction = typed(["Ada", " King ", "ada@example.com", "", ""]);
        assert_eq!(correction.problem(), None);
        let planned = correction
            .plan(LeadId(7), (stored, LeadStatus::Open), &by())
            .unwrap()
            .unwrap();
        assert_eq!(planned.changed, ["last name", "email", "phone"]);
        let data = &planned.row.data;
        assert_eq!(
            (
                data.user("lastName"),
                data.user("email"),
                data.user("phone")
            ),
            (Some("King"), Some("ada@example.com"), None)
        );
        assert_eq!(planned.row.keys.email.as_deref(), Some("ada@example.com"));
        assert_eq!(planned.row.keys.phone, None);
        assert_eq!(data.form_data.get("message"), Some(&Value::from("Hi")));
        assert_eq!(planned.steps().len(), 2, "its history, and lead.updated");
        let same = typed(["Ada", "", "ADA@x.io", "0151 1", ""]);
        let planned = same.plan(LeadId(7), (stored, LeadStatus::Open), &by());
        assert!(planned.unwrap().is_none(), "nothing changed");
    }

    #[test]
    fn a_bad_email_or_a_field_too_long_is_refused_in_words() {
        let bad = typed(["", "", "ada.example.com", "", ""]);
        assert_eq!(
            bad.problem().as_deref(),
            Some("“ada.example.com” is no email address: it needs a name, an @ and a domain.")
        );
        let long = "x".repeat(MOST_CHARS + 1);
        let long = typed(["", "", "", "", &long]);
        assert_eq!(
            long.problem().as_deref(),
            Some("The company must be at most 320 characters.")
        );
    }
}
