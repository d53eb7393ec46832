//! The lead as the service keeps it: its submitted data, the dedup merge rule, and the keys
//! stores index it by.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::assignment::Assignee;
use crate::matching;
use crate::spam::{SpamReason, Submitted};
use crate::types::{Consent, ConversionId, DeviceData, JsonObject, LeadId, LeadStatus, ProjectId};

/// How far back a new lead's email or phone finds the lead it duplicates, in days.
pub const DUPLICATE_WINDOW_DAYS: i64 = 30;

/// Where the window of [`DUPLICATE_WINDOW_DAYS`] before `now` starts.
pub fn duplicate_window_start(now: DateTime<Utc>) -> DateTime<Utc> {
    now - chrono::Duration::days(DUPLICATE_WINDOW_DAYS)
}

/// What a create request submits about a lead, after the input rules of CONTRACT.md section 3.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct LeadData {
    /// `formData`, stored exactly as given.
    pub form_data: JsonObject,
    /// `userData`: aliases applied, strings trimmed, empty and `null` values dropped.
    pub user_data: JsonObject,
    /// `attributionData`: strings trimmed, empty and `null` values dropped.
    pub attribution_data: JsonObject,
    /// `deviceData`: never returned by reads, feeds the integrations.
    pub device_data: DeviceData,
    /// The channel path as text.
    pub channel_flow: Option<String>,
    /// The caller's identifier.
    pub unique_identifier: Option<String>,
    /// `consent`: never returned by reads, decides what Google receives.
    #[serde(skip_serializing_if = "Consent::is_empty")]
    pub consent: Consent,
}

impl LeadData {
    /// What spam rules read of it.
    pub fn submitted(&self) -> Submitted<'_> {
        Submitted {
            user: &self.user_data,
            form: &self.form_data,
        }
    }

    /// Applies a deduplicated create to this lead: objects merge key by key (new values win,
    /// absent keys keep their old value); `channelFlow` and `uniqueIdentifier` are replaced
    /// when given.
    pub fn merge(&mut self, update: LeadData) {
        merge_object(&mut self.form_data, update.form_data);
        merge_object(&mut self.user_data, update.user_data);
        merge_object(&mut self.attribution_data, update.attribution_data);
        if update.device_data.ip_address.is_some() {
            self.device_data.ip_address = update.device_data.ip_address;
        }
        if update.device_data.user_agent.is_some() {
            self.device_data.user_agent = update.device_data.user_agent;
        }
        if update.channel_flow.is_some() {
            self.channel_flow = update.channel_flow;
        }
        if update.unique_identifier.is_some() {
            self.unique_identifier = update.unique_identifier;
        }
        self.consent = update.consent.or(self.consent);
    }

    /// The deduplication key: `formData.uniqueEventId`, unless it is blank.
    pub fn unique_event_id(&self) -> Option<&str> {
        non_blank(self.form_data.get("uniqueEventId"))
    }

    /// `formData.formName`, unless it is blank.
    pub fn form_name(&self) -> Option<&str> {
        non_blank(self.form_data.get("formName"))
    }

    /// A string property of `userData` (`firstName`, `email`, ...).
    pub fn user(&self, name: &str) -> Option<&str> {
        non_blank(self.user_data.get(name))
    }

    /// A string property of `attributionData` (`gclid`, `cid`, ...).
    pub fn attribution(&self, name: &str) -> Option<&str> {
        non_blank(self.attribution_data.get(name))
    }

    /// Pinterest's click id: `epik` from the landing URL, else the `_epik` cookie that
    /// Pinterest's tag keeps it in.
    pub fn epik(&self) -> Option<&str> {
        self.attribution("epik")
            .or_else(|| self.attribution("_epik"))
    }

    /// A Google click id (`gclid`, `gbraid` or `wbraid`) as Google takes it. Older tags send
    /// the raw value of Google's `_gcl_aw` / `_gcl_gb` cookie, `GCL.<seconds>.<click id>`
    /// (the layout Google documents for its older `_gac` cookie: "version number.timestamp.gclid
    /// value"); that gives its click id.
    pub fn google_click_id(&self, name: &str) -> Option<&str> {
        let value = self.attribution(name)?;
        let cookie = value
            .strip_prefix("GCL.")
            .and_then(|rest| rest.split_once('.'));
        Some(match cookie {
            Some((seconds, id)) if is_digits(seconds) && !id.is_empty() => id,
            _ => value,
        })
    }

    /// The Google Analytics client id (`cid`) as the Measurement Protocol takes it,
    /// `<random>.<seconds>`. Older tags send the raw `_ga` cookie, `GA1.1.<random>.<seconds>`
    /// (the version and the domain depth first), which gives its last two parts.
    pub fn ga_client_id(&self) -> Option<&str> {
        let value = self.attribution("cid")?;
        let mut parts = value.splitn(3, '.');
        let cookie = match (parts.next(), parts.next(), parts.next()) {
            (Some(version), Some(depth), Some(id))
                if version.strip_prefix("GA").is_some_and(is_digits) && is_digits(depth) =>
            {
                id.split_once('.')
                    .filter(|(random, seconds)| is_digits(random) && is_digits(seconds))
                    .map(|_| id)
            }
            _ => None,
        };
        Some(cookie.unwrap_or(value))
    }

    /// Meta's click id, `fbc`, in the form Meta documents, `fb.1.<milliseconds>.<fbclid>`:
    /// as sent, or built from a bare `fbclid` sent as `fbc` or as `fbclid` (Meta: "If you
    /// don't save the _fbc cookie, use the timestamp when you first observed or received
    /// this fbclid value", with the subdomain index 1 for a value made on a server), here
    /// the lead's creation. The fbclid is kept exactly as sent: it is case sensitive.
    /// <https://developers.facebook.com/docs/marketing-api/conversions-api/parameters/fbp-and-fbc/>
    pub fn meta_click_id(&self, first_seen: DateTime<Utc>) -> Option<String> {
        let formatted = |fbclid: &str| format!("fb.1.{}.{fbclid}", first_seen.timestamp_millis());
        match self.attribution("fbc") {
            Some(fbc) if fbc.starts_with("fb.") && fbc.split('.').count() >= 4 => {
                Some(fbc.to_owned())
            }
            Some(fbclid) => Some(formatted(fbclid)),
            None => self.attribution("fbclid").map(formatted),
        }
    }

    /// The normalised values stores index and match this lead by.
    pub fn keys(&self) -> LeadKeys {
        LeadKeys {
            email: self.user("email").and_then(matching::email_key),
            phone: self.user("phone").and_then(matching::phone_key),
            searchable: ["firstName", "lastName", "email", "phone", "companyName"]
                .into_iter()
                .filter_map(|field| self.user(field))
                .map(str::to_lowercase)
                .collect(),
            has_gclid: self.attribution("gclid").is_some(),
            has_cid: self.attribution("cid").is_some(),
            has_fbp: self.attribution("fbp").is_some(),
            has_fbc: self.attribution("fbc").is_some() || self.attribution("fbclid").is_some(),
            has_msclkid: self.attribution("msclkid").is_some(),
            has_li_fat_id: self.attribution("li_fat_id").is_some(),
            has_gbraid: self.attribution("gbraid").is_some()
                || self.attribution("wbraid").is_some(),
            has_ttclid: self.attribution("ttclid").is_some(),
            has_rdt_cid: self.attribution("rdt_cid").is_some(),
            has_sccid: self.attribution("ScCid").is_some(),
            has_epik: self.epik().is_some(),
            has_twclid: self.attribution("twclid").is_some(),
        }
    }
}

/// Whether `text` is one or more ASCII digits.
fn is_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

fn non_blank(value: Option<&Value>) -> Option<&str> {
    value
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

fn merge_object(target: &mut JsonObject, update: JsonObject) {
    for (key, value) in update {
        // A `null` in an update is "absent": it never erases what an earlier submission said.
        if value.is_null() && target.contains_key(&key) {
            continue;
        }
        target.insert(key, value);
    }
}

/// The normalised values a lead is matched and filtered by (CONTRACT.md section 4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeadKeys {
    /// [`matching::email_key`] of `userData.email`.
    pub email: Option<String>,
    /// [`matching::phone_key`] of `userData.phone`.
    pub phone: Option<String>,
    /// The fields a `search` term is looked for in (firstName, lastName, email, phone,
    /// companyName, those present), lowercased: a lead matches when the
    /// [`matching::search_term`] is a substring of one of them.
    pub searchable: Vec<String>,
    /// `attributionData.gclid` is non-empty.
    pub has_gclid: bool,
    /// `attributionData.cid` is non-empty.
    pub has_cid: bool,
    /// `attributionData.fbp` is non-empty.
    pub has_fbp: bool,
    /// `attributionData.fbc` or `attributionData.fbclid` is non-empty: the lead has Meta's
    /// click id, as the cookie or as the raw id it is made from ([`LeadData::meta_click_id`]).
    pub has_fbc: bool,
    /// `attributionData.msclkid` is non-empty.
    pub has_msclkid: bool,
    /// `attributionData.li_fat_id` is non-empty.
    pub has_li_fat_id: bool,
    /// `attributionData.gbraid` or `attributionData.wbraid` is non-empty: Google's click
    /// ids of iOS campaigns, app and web.
    pub has_gbraid: bool,
    /// `attributionData.ttclid` is non-empty.
    pub has_ttclid: bool,
    /// `attributionData.rdt_cid` (Reddit) is non-empty.
    pub has_rdt_cid: bool,
    /// `attributionData.ScCid` (Snapchat) is non-empty.
    pub has_sccid: bool,
    /// `attributionData.epik` or `attributionData._epik` is non-empty: Pinterest's click
    /// id, as the URL gave it or as its tag's cookie keeps it.
    pub has_epik: bool,
    /// `attributionData.twclid` (X) is non-empty.
    pub has_twclid: bool,
}

impl LeadKeys {
    /// The keys a new lead's person is found by, with their columns, in the order they are
    /// tried: its email's, then its phone's.
    pub fn person_keys(&self) -> impl Iterator<Item = (&'static str, &str)> {
        [("email_key", &self.email), ("phone_key", &self.phone)]
            .into_iter()
            .filter_map(|(column, key)| Some((column, key.as_deref()?)))
    }
}

/// A lead as stored: its data plus what the service manages.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredLead {
    /// The lead's id.
    pub id: LeadId,
    /// The project it belongs to.
    pub project_id: ProjectId,
    /// Where it stands.
    pub status: LeadStatus,
    /// Value in cents.
    pub price: Option<i64>,
    /// Free text set by status updates.
    pub note: Option<String>,
    /// The last label or `lost` applied.
    pub conversion_id: Option<ConversionId>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// What was submitted.
    pub data: LeadData,
    /// Why it is spam, while its status is [`LeadStatus::Spam`].
    pub spam_reason: Option<SpamReason>,
    /// The earlier lead of the same person that this one duplicates: the first of the
    /// project's leads with its email or phone in the [`DUPLICATE_WINDOW_DAYS`] before it.
    pub duplicate_of: Option<LeadId>,
    /// Whether later leads duplicate this one (it is their original).
    pub duplicated: bool,
    /// The member it is assigned to ([`crate::assignment`]).
    pub assignee: Option<Assignee>,
}

/// The outcome of a create: a new lead, or a deduplicated one updated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreatedLead {
    /// The lead written.
    pub lead_id: LeadId,
    /// Its `uniqueIdentifier` after the write.
    pub unique_identifier: Option<String>,
    /// `true` for a new lead, `false` when an existing one was updated.
    pub created: bool,
}

/// One page of a lead listing.
#[derive(Clone, Debug, PartialEq)]
pub struct LeadPage {
    /// The page's leads, in the query's order.
    pub leads: Vec<StoredLead>,
    /// Leads matching the filters on all pages; a lower bound when
    /// `total_is_lower_bound`.
    pub total: u64,
    /// Whether more leads match than `total`: a `q` search stopped counting at
    /// [`crate::request::LeadQuery::counted`].
    pub total_is_lower_bound: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ConsentStatus;
    use serde_json::json;

    fn object(value: Value) -> JsonObject {
        serde_json::from_value(value).unwrap()
    }

    fn attributed(attribution: Value) -> LeadData {
        LeadData {
            attribution_data: object(attribution),
            ..LeadData::default()
        }
    }

    #[test]
    fn raw_cookie_values_give_the_click_ids_platforms_take() {
        let gcl = attributed(json!({"gclid": "GCL.1731000000.Cj0KCQiA", "gbraid": "0AAAAA-x"}));
        assert_eq!(gcl.google_click_id("gclid"), Some("Cj0KCQiA"));
        assert_eq!(gcl.google_click_id("gbraid"), Some("0AAAAA-x"));
        assert_eq!(gcl.google_click_id("wbraid"), None);
        let odd = attributed(json!({"gclid": "GCL.soon.x"}));
        assert_eq!(odd.google_click_id("gclid"), Some("GCL.soon.x"));

        for (cid, expected) in [
            ("GA1.1.123.456", "123.456"),
            ("GA1.2.1234567890.1731000000", "1234567890.1731000000"),
            ("123.456", "123.456"),
            ("GA1.1.abc", "GA1.1.abc"),
        ] {
            assert_eq!(
                attributed(json!({"cid": cid})).ga_client_id(),
                Some(expected)
            );
        }

        let at = DateTime::from_timestamp_millis(1_731_000_000_123).unwrap();
        for (attribution, expected) in [
            (
                json!({"fbc": "fb.1.1554763741205.IwAR2F4-dbP0l7Mn"}),
                "fb.1.1554763741205.IwAR2F4-dbP0l7Mn",
            ),
            (
                json!({"fbc": "IwAR2F4-dbP0l7Mn"}),
                "fb.1.1731000000123.IwAR2F4-dbP0l7Mn",
            ),
            (
                json!({"fbclid": "IwAR2F4-dbP0l7Mn"}),
                "fb.1.1731000000123.IwAR2F4-dbP0l7Mn",
            ),
        ] {
            let lead = attributed(attribution);
            assert_eq!(lead.meta_click_id(at).as_deref(), Some(expected));
        }
        assert_eq!(attributed(json!({})).meta_click_id(at), None);
    }

    #[test]
    fn merge_is_key_by_key_and_replaces_scalars_when_given() {
        let mut lead = LeadData {
            form_data: object(json!({"formName": "A", "uniqueEventId": "e1", "x": 1})),
            user_data: object(json!({"email": "a@x.io", "firstName": "Ada"})),
            attribution_data: object(json!({"gclid": "G1"})),
            device_data: DeviceData {
                ip_address: Some("192.0.2.1".into()),
                user_agent: Some("UA1".into()),
            },
            channel_flow: Some("cf1".into()),
            unique_identifier: Some("u1".into()),
            consent: Consent {
                ad_user_data: Some(ConsentStatus::Granted),
                ad_personalization: Some(ConsentStatus::Granted),
            },
        };
        lead.merge(LeadData {
            form_data: object(json!({"x": 2, "y": null, "formName": null})),
            user_data: object(json!({"firstName": "Augusta", "phone": "+1"})),
            attribution_data: object(json!({"fbp": "F"})),
            device_data: DeviceData {
                ip_address: None,
                user_agent: Some("UA2".into()),
            },
            channel_flow: None,
            unique_identifier: Some("u2".into()),
            consent: Consent {
                ad_user_data: Some(ConsentStatus::Denied),
                ad_personalization: None,
            },
        });
        assert_eq!(
            Value::Object(lead.form_data),
            json!({"formName": "A", "uniqueEventId": "e1", "x": 2, "y": null})
        );
        assert_eq!(
            Value::Object(lead.user_data),
            json!({"email": "a@x.io", "firstName": "Augusta", "phone": "+1"})
        );
        assert_eq!(
            Value::Object(lead.attribution_data),
            json!({"gclid": "G1", "fbp": "F"})
        );
        assert_eq!(lead.device_data.ip_address.as_deref(), Some("192.0.2.1"));
        assert_eq!(lead.device_data.user_agent.as_deref(), Some("UA2"));
        assert_eq!(lead.channel_flow.as_deref(), Some("cf1"));
        assert_eq!(lead.unique_identifier.as_deref(), Some("u2"));
        assert_eq!(
            lead.consent,
            Consent {
                ad_user_data: Some(ConsentStatus::Denied),
                ad_personalization: Some(ConsentStatus::Granted),
            },
            "a signal given replaces, one not given stays"
        );
    }

    #[test]
    fn keys_are_normalised() {
        let lead = LeadData {
            user_data: object(
                json!({"email": " Ada@X.io", "phone": "+1 (555) 010-0000", "firstName": "Ada"}),
            ),
            attribution_data: object(json!({"gclid": "G", "cid": "  ", "fbc": "fb.1.2.3"})),
            ..LeadData::default()
        };
        let keys = lead.keys();
        assert_eq!(keys.email.as_deref(), Some("ada@x.io"));
        assert_eq!(keys.phone.as_deref(), Some("+15550100000"));
        assert_eq!(keys.searchable, ["ada", "ada@x.io", "+1 (555) 010-0000"]);
        assert!(keys.has_gclid && keys.has_fbc);
        assert!(!keys.has_cid && !keys.has_fbp);
        // Meta's raw click id counts as its cookie.
        let raw = LeadData {
            attribution_data: object(json!({"fbclid": "IwAR2F4"})),
            ..LeadData::default()
        };
        assert!(raw.keys().has_fbc);
    }

    #[test]
    fn blank_event_ids_do_not_deduplicate() {
        let lead = LeadData {
            form_data: object(json!({"uniqueEventId": "  "})),
            ..LeadData::default()
        };
        assert_eq!(lead.unique_event_id(), None);
    }
}
