//! Erasing a person (GDPR article 17, CCPA's deletion requests), decided once for every
//! backend. A backend finds the person's leads ([`crate::store::sql::person_leads`]: by the
//! email or phone keys the duplicates match by, a lead id or a `uniqueIdentifier`; leads
//! erased before are left out), and for each lead:
//!
//! 1. asks [`blocked`] whether a delivery of it is under way this moment;
//! 2. counts what was delivered of it ([`SentTo`]): that stays with the platforms;
//! 3. settles it if it is pending ([`crate::store::sql::settle_pending`]: it takes the
//!    status its cancelled job would have left it in), and removes everything of it but
//!    its row: history, comments, drafts, next steps, queued alerts, jobs with their
//!    deliveries and attempts (a conversion not yet sent never leaves), its webhook events,
//!    and the fetch of it from a platform's lead form ([`Erasure::fetched`]);
//! 4. writes its row again as the [`Erasure`] plans it: the anonymous record, and
//!    `erased_at`;
//! 5. writes the plan's steps: `erased` in its history, by the person who erased it, and
//!    `lead.erased` announced (unless it is spam, which was never announced).
//!
//! Then it records in the project's history who erased how many leads (their ids, never a
//! value). What stays of a lead is its id, project, creation time, status, rating and
//! value, its form's name, and the touch and campaign columns reports count it by
//! ([`KEPT_ATTRIBUTION`]), so reports and ROAS keep their counts.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use crate::account::Actor;
use crate::activity::Activity;
use crate::lead::{LeadData, StoredLead};
use crate::spend::CAMPAIGN_ID_FIELDS;
use crate::store::arrival::Step;
use crate::store::{Conflict, LeadRow, StoreError, StoreResult};
use crate::types::{JsonObject, LeadId, LeadIdentifier, LeadStatus};
use crate::webhook::WebhookEvent;

/// The `attributionData` an erased lead keeps: where it came from, which names no person.
/// Click ids, referrers, landing pages and device data go.
pub const KEPT_ATTRIBUTION: [&str; 4] = ["utm_source", "utm_medium", "utm_campaign", "utm_id"];

/// The `formData` an erased lead keeps: its form's name.
pub const KEPT_FORM: [&str; 1] = ["formName"];

/// Who a lead's person is, as an erasure started from the lead names them: by its email
/// when it has one, else by its phone, else the lead alone.
pub fn person_of(lead: &StoredLead) -> LeadIdentifier {
    let keys = lead.data.keys();
    let (email, phone) = (lead.data.user("email"), lead.data.user("phone"));
    match (
        email.filter(|_| keys.email.is_some()),
        phone.filter(|_| keys.phone.is_some()),
    ) {
        (Some(email), _) => LeadIdentifier::Email(email.to_owned()),
        (None, Some(phone)) => LeadIdentifier::Phone(phone.to_owned()),
        (None, None) => LeadIdentifier::LeadId(lead.id),
    }
}

/// The conflict that stops erasing `lead` while a delivery of it is under way this moment
/// (a worker holds its job): its answer must not lose its lead. Queued and retrying jobs
/// are no obstacle: they are cancelled with the rest.
pub fn blocked(lead: LeadId, delivering: bool) -> StoreResult<()> {
    match delivering {
        true => Err(StoreError::Conflict(Conflict::JobPending { lead_id: lead })),
        false => Ok(()),
    }
}

/// The erasure of one lead, planned: its row after it, and the writes after that.
#[derive(Clone, Debug)]
pub struct Erasure {
    /// The lead's row as the anonymous record: the kept data, no contact columns, no search
    /// text; its touch and click-id columns as they were, so reports count it as before.
    pub row: LeadRow,
    /// The lead's id at the platform it was fetched from (its `uniqueEventId`), whose fetch
    /// record goes with it ([`crate::store::sql::forget_fetch`]).
    pub fetched: Option<String>,
    spam: bool,
    by: Option<Actor>,
}

impl Erasure {
    /// The erasure of a lead whose stored data is `stored` (its JSON) and status `status`,
    /// by `by` (`None`: by the service, as its retention rule erases).
    pub fn plan(
        stored: &str,
        status: LeadStatus,
        by: Option<&Actor>,
    ) -> Result<Self, serde_json::Error> {
        let data: LeadData = serde_json::from_str(stored)?;
        let before = LeadRow::of(data.clone())?;
        let kept = LeadData {
            form_data: kept(&data.form_data, &KEPT_FORM),
            attribution_data: kept(&data.attribution_data, &KEPT_ATTRIBUTION),
            ..LeadData::default()
        };
        let mut row = LeadRow::of(kept)?;
        row.touches = before.touches;
        let flags = before.keys;
        row.keys = crate::lead::LeadKeys {
            email: None,
            phone: None,
            searchable: Vec::new(),
            ..flags
        };
        Ok(Self {
            row,
            fetched: data.unique_event_id().map(str::to_owned),
            spam: status == LeadStatus::Spam,
            by: by.cloned(),
        })
    }

    /// The writes after the lead's row: its history told as `erased` alone, and
    /// `lead.erased` unless the lead is held as spam.
    pub fn steps(&self) -> Vec<Step> {
        let mut steps = vec![
            Step::ForgetCreation,
            Step::Record {
                activity: Activity::Erased,
                by: self.by.clone(),
            },
        ];
        if !self.spam {
            steps.push(Step::Announce(WebhookEvent::LeadErased));
        }
        steps
    }
}

/// The properties of `object` named in `names`, the campaign id fields among them.
fn kept(object: &JsonObject, names: &[&str]) -> JsonObject {
    let campaign_ids = CAMPAIGN_ID_FIELDS.iter().map(|(field, _)| *field);
    let mut kept = JsonObject::new();
    for name in names.iter().copied().chain(campaign_ids) {
        if let Some(value) = object.get(name).filter(|value| !value.is_null()) {
            kept.insert(name.to_owned(), Value::clone(value));
        }
    }
    kept
}

/// Where a retention run leaves off: at its cutoff when it erased every old lead before
/// it (`complete`), else after the newest lead it erased (`reached`, its creation time),
/// never earlier than where the last run left off (`previous`: a longer retention set
/// since finds nothing new before it).
pub fn retention_done_to(
    previous: Option<DateTime<Utc>>,
    reached: Option<DateTime<Utc>>,
    (complete, cutoff): (bool, DateTime<Utc>),
) -> Option<DateTime<Utc>> {
    let now_at = match complete {
        true => Some(cutoff),
        false => reached,
    };
    now_at.max(previous)
}

/// Conversions of erased leads a destination received before: they stay with it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SentTo {
    /// The integration (`google_ads`, `ga4`, `meta`, `webhook`, ...), or `lead_webhooks`
    /// for the events the project's lead webhooks received.
    pub destination: String,
    /// How many were delivered.
    pub delivered: u64,
}

/// What erasing a person did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Erased {
    /// How many leads were erased.
    pub erased: u64,
    /// Their ids, oldest first.
    pub lead_ids: Vec<LeadId>,
    /// What was delivered of them before, per destination, in name order: the platforms
    /// keep what they received.
    pub sent_to: Vec<SentTo>,
}

impl Erased {
    /// Adds `delivered` conversions of an erased lead to `destination`.
    pub fn add_sent(&mut self, destination: &str, delivered: u64) {
        if delivered == 0 {
            return;
        }
        match self
            .sent_to
            .binary_search_by(|sent| sent.destination.as_str().cmp(destination))
        {
            Ok(at) => self.sent_to[at].delivered += delivered,
            Err(at) => self.sent_to.insert(
                at,
                SentTo {
                    destination: destination.to_owned(),
                    delivered,
                },
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_anonymous_record_keeps_where_the_lead_came_from_and_nothing_of_the_person() {
        let stored = r#"{"userData":{"firstName":"Ada","email":"ada@example.com","phone":"+44 20 1234"},
            "formData":{"formName":"Contact","message":"Call me, Ada"},
            "attributionData":{"utm_source":"google","utm_medium":"cpc","utm_campaign":"Brand",
                "utm_id":"555","gclid":"Cj0-click","landing_page":"https://x.io/?email=ada%40example.com"},
            "uniqueIdentifier":"crm-7","channelFlow":"google / cpc"}"#;
        let by = Actor::api_key("lt_test");
        let erasure = Erasure::plan(stored, LeadStatus::Rated, Some(&by)).unwrap();
        let row = &erasure.row;
        assert_eq!(
            serde_json::to_value(&row.data).unwrap(),
            serde_json::json!({"formData": {"formName": "Contact"}, "userData": {},
                "attributionData": {"utm_source": "google", "utm_medium": "cpc",
                    "utm_campaign": "Brand", "utm_id": "555"},
                "deviceData": {}, "channelFlow": null, "uniqueIdentifier": null})
        );
        assert!(!row.json.contains("ada") && !row.json.contains("1234"));
        assert_eq!(
            (row.search_text.as_str(), row.keys.email.as_deref()),
            ("", None)
        );
        assert!(!row.q_text.contains("ada"), "{}", row.q_text);
        assert!(row.keys.has_gclid, "reports still count it as Google's");
        assert_eq!(row.touches[0].as_deref(), Some("google"));
        assert_eq!(
            erasure.steps(),
            [
                Step::ForgetCreation,
                Step::Record {
                    activity: Activity::Erased,
                    by: Some(by.clone())
                },
                Step::Announce(WebhookEvent::LeadErased)
            ]
        );
        let spam = Erasure::plan(stored, LeadStatus::Spam, None).unwrap();
        assert_eq!(spam.steps().len(), 2, "spam was never announced");
    }

    #[test]
    fn what_was_sent_adds_up_per_destination_in_name_order() {
        let mut erased = Erased::default();
        for (destination, delivered) in [("meta", 1), ("google_ads", 2), ("meta", 1), ("ga4", 0)] {
            erased.add_sent(destination, delivered);
        }
        let sent: Vec<_> = erased
            .sent_to
            .iter()
            .map(|s| (s.destination.as_str(), s.delivered))
            .collect();
        assert_eq!(sent, [("google_ads", 2), ("meta", 2)]);
        assert!(blocked(LeadId(1), true).is_err() && blocked(LeadId(1), false).is_ok());
    }

    #[test]
    fn a_retention_run_leaves_off_at_its_cutoff_or_its_last_lead_never_earlier() {
        let day = |d: u32| {
            chrono::NaiveDate::from_ymd_opt(2026, 3, d)
                .unwrap()
                .and_hms_opt(0, 0, 0)
                .unwrap()
                .and_utc()
        };
        assert_eq!(
            retention_done_to(None, Some(day(2)), (true, day(9))),
            Some(day(9))
        );
        assert_eq!(
            retention_done_to(None, Some(day(2)), (false, day(9))),
            Some(day(2))
        );
        assert_eq!(
            retention_done_to(Some(day(9)), None, (true, day(5))),
            Some(day(9))
        );
        assert_eq!(retention_done_to(None, None, (false, day(5))), None);
    }
}
