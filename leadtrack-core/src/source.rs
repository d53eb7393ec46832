//! Lead sources: the ad platforms' own lead forms, whose leads reach leadtrack from the
//! platform instead of through the website. A project sets each up once; its settings
//! hold a credential, so stores keep them sealed ([`crate::vault::LEAD_SOURCE`]).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use uuid::Uuid;

use crate::integration::Secret;
use crate::types::ProjectId;

/// A kind of lead source.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::AsRefStr,
    strum::Display,
    strum::EnumString,
    strum::VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum SourceKind {
    /// Google Ads lead form assets, posting each lead to the project's webhook.
    GoogleLeadForms,
    /// Meta's Instant Forms (Lead Ads): Meta announces each lead on the server's webhook,
    /// and leadtrack fetches it from the Graph API with the page's token.
    MetaLeadAds,
    /// LinkedIn Lead Gen Forms: the responses of the chosen ad accounts' forms, read on a
    /// schedule through LinkedIn's lead sync API with the LinkedIn integration's
    /// credentials.
    LinkedinLeadGen,
}

impl SourceKind {
    /// Its name for people.
    pub fn title(self) -> &'static str {
        match self {
            Self::GoogleLeadForms => "Google Ads lead forms",
            Self::MetaLeadAds => "Meta Lead Ads",
            Self::LinkedinLeadGen => "LinkedIn Lead Gen Forms",
        }
    }
}

/// How a project receives one source's leads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum LeadSource {
    /// Google Ads lead form assets: Google posts each lead with the key the advertiser
    /// set on the form, which the webhook compares before it keeps anything.
    GoogleLeadForms {
        /// The `google_key` Google sends with each lead.
        key: Secret,
    },
    /// A Facebook page's Instant Forms: leads announced for the page are fetched with its
    /// token.
    MetaLeadAds {
        /// The page's id, which Meta's announcements name (`entry[].id`).
        page_id: String,
        /// A page access token with `leads_retrieval`.
        page_access_token: Secret,
        /// Another Graph API host (a test server); `None` for Meta's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        base_url: Option<String>,
    },
    /// The Lead Gen Forms of LinkedIn ad accounts, read with the project's LinkedIn
    /// integration (which holds the credentials).
    LinkedinLeadGen {
        /// The ad accounts' ids (digits).
        accounts: Vec<String>,
    },
}

impl LeadSource {
    /// Its kind.
    pub fn kind(&self) -> SourceKind {
        match self {
            Self::GoogleLeadForms { .. } => SourceKind::GoogleLeadForms,
            Self::MetaLeadAds { .. } => SourceKind::MetaLeadAds,
            Self::LinkedinLeadGen { .. } => SourceKind::LinkedinLeadGen,
        }
    }

    /// What the platform's announcements name it by, kept in the clear beside the sealed
    /// settings so that an announcement finds its project: a Meta page's id.
    pub fn routing(&self) -> Option<&str> {
        match self {
            Self::GoogleLeadForms { .. } | Self::LinkedinLeadGen { .. } => None,
            Self::MetaLeadAds { page_id, .. } => Some(page_id),
        }
    }
}

/// A lead a platform announced, to fetch from it: queued once per project and id, and
/// fetched (retried with backoff while the platform or the network is down) by the
/// sources' fetcher.
#[derive(Clone, Debug, PartialEq)]
pub struct NewLeadFetch {
    /// The source.
    pub kind: SourceKind,
    /// The lead's id on the platform (Meta's `leadgen_id`).
    pub external_id: String,
    /// What the announcement said (Meta's change `value`: form, ad, page, time).
    pub announced: Value,
}

/// A lead fetch claimed by a fetcher, with the lease every later call presents.
#[derive(Clone, Debug, PartialEq)]
pub struct ClaimedLeadFetch {
    /// Its id in the queue.
    pub id: i64,
    /// The lease.
    pub lease: Uuid,
    /// The project it is for.
    pub project: ProjectId,
    /// What to fetch.
    pub fetch: NewLeadFetch,
    /// Attempts before this one.
    pub attempts: u32,
}

/// How a claimed fetch ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FetchOutcome {
    /// The lead is kept: the fetch is done.
    Fetched,
    /// Not now: due again at `at`, with what went wrong.
    Retry {
        /// When to try again.
        at: DateTime<Utc>,
        /// What went wrong, naming no secret.
        error: String,
    },
}

/// The first wait before a failed fetch is tried again.
pub const FIRST_FETCH_RETRY: chrono::Duration = chrono::Duration::seconds(30);

/// The longest wait between two tries of a fetch.
pub const LAST_FETCH_RETRY: chrono::Duration = chrono::Duration::hours(1);

/// When a fetch that failed `attempts` times before is tried again: `first` after the
/// first failure, doubling, at most [`LAST_FETCH_RETRY`] apart, for as long as it takes
/// (a lead is never given up on).
pub fn fetch_retry_at(now: DateTime<Utc>, attempts: u32, first: chrono::Duration) -> DateTime<Utc> {
    let wait = first * (1_i32 << attempts.min(16));
    now + wait.min(LAST_FETCH_RETRY)
}

/// LinkedIn ad accounts' ids as typed (their digits, or `urn:li:sponsoredAccount:` URNs),
/// blanks left out, each once; the error names the first that is no id.
pub fn linkedin_account_ids<'a>(
    typed: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<String>, String> {
    let mut ids: Vec<String> = typed
        .into_iter()
        .map(|id| id.trim().trim_start_matches("urn:li:sponsoredAccount:"))
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
        .collect();
    if let Some(bad) = ids
        .iter()
        .find(|id| !id.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(format!(
            "{bad:?} is not an ad account's id (its digits, as Campaign Manager shows them)"
        ));
    }
    ids.sort();
    ids.dedup();
    Ok(ids)
}

/// The path of a project's Google lead form webhook, under the server's public URL.
pub fn google_lead_forms_path(project_public_id: &str) -> String {
    format!("/webhooks/google/lead-forms/{project_public_id}")
}

/// A lead Google's lead form webhook posted, as leadtrack keeps it.
#[derive(Clone, Debug, PartialEq)]
pub struct GoogleFormLead {
    /// The `google_key` it came with.
    pub key: String,
    /// Google's id of the lead, unique across forms, which Google says to deduplicate on.
    pub lead_id: String,
    /// Whether it is a test lead (sent from the form's setup in Google Ads).
    pub is_test: bool,
    /// The lead as a `createLead` body for the keyed route, so that the contract's own
    /// parser takes it: its fields in `userData`, the form and Google's ids in `formData`
    /// (`uniqueEventId` is the lead id, so that a delivery Google retries merges into the
    /// lead it made), the click id as `attributionData.gclid`.
    pub body: Value,
}

/// The user columns leadtrack knows, by Google's `column_id`, and the `userData` field
/// each fills (<https://developers.google.com/google-ads/api/reference/rpc/latest/LeadFormFieldUserInputTypeEnum.LeadFormFieldUserInputType>).
const USER_COLUMNS: [(&str, &str); 12] = [
    ("FULL_NAME", "fullName"),
    ("FIRST_NAME", "firstName"),
    ("LAST_NAME", "lastName"),
    ("EMAIL", "email"),
    ("WORK_EMAIL", "email"),
    ("PHONE_NUMBER", "phone"),
    ("WORK_PHONE", "phone"),
    ("COMPANY_NAME", "companyName"),
    ("JOB_TITLE", "jobTitle"),
    ("CITY", "city"),
    ("POSTAL_CODE", "postalCode"),
    ("COUNTRY", "country"),
];

/// Reads the body Google's lead form webhook posts
/// (<https://developers.google.com/google-ads/webhook/docs/implementation>): `lead_id`,
/// `user_column_data` (each a `column_id`, maybe a `column_name`, and a `string_value`),
/// `form_id`, `campaign_id`, `adgroup_id`, `creative_id`, `gcl_id`, `google_key` and
/// `is_test`. Known columns fill `userData`; the form's own questions go to `formData` by
/// their name. `None` when it is not such a body (no lead id or no key).
pub fn google_form_lead(posted: &Value) -> Option<GoogleFormLead> {
    let text = |name: &str| posted.get(name).and_then(Value::as_str).map(str::trim);
    let lead_id = text("lead_id").filter(|id| !id.is_empty())?.to_owned();
    let key = text("google_key")?.to_owned();
    let is_test = posted.get("is_test").and_then(Value::as_bool) == Some(true);
    let mut user = Map::new();
    let mut form = Map::new();
    let columns = posted.get("user_column_data").and_then(Value::as_array);
    for column in columns.into_iter().flatten() {
        let Some(value) = column.get("string_value").and_then(Value::as_str) else {
            continue;
        };
        let id = column
            .get("column_id")
            .and_then(Value::as_str)
            .unwrap_or("");
        match USER_COLUMNS.iter().find(|(known, _)| *known == id) {
            // The first of two columns for one field (an email and a work email) stays.
            Some((_, field)) => {
                user.entry(*field).or_insert_with(|| json!(value));
            }
            None => {
                let name = column.get("column_name").and_then(Value::as_str);
                let name = name.filter(|name| !name.trim().is_empty()).unwrap_or(id);
                if !name.is_empty() {
                    form.insert(name.to_owned(), json!(value));
                }
            }
        }
    }
    split_full_name(&mut user);
    // Ids are int64s: carried as text, whatever their size.
    let id = |name: &str| match posted.get(name) {
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        _ => None,
    };
    let form_id = id("form_id");
    form.insert(
        "formName".to_owned(),
        json!(match &form_id {
            Some(form_id) => format!("Google Ads lead form {form_id}"),
            None => "Google Ads lead form".to_owned(),
        }),
    );
    form.insert(
        "uniqueEventId".to_owned(),
        json!(format!("google-lead-form:{lead_id}")),
    );
    form.insert("googleLeadId".to_owned(), json!(lead_id));
    if is_test {
        form.insert("isTest".to_owned(), json!(true));
    }
    let mut attribution = Map::new();
    attribution.insert("leadSource".to_owned(), json!("google-lead-form"));
    if let Some(gclid) = text("gcl_id").filter(|gclid| !gclid.is_empty()) {
        attribution.insert("gclid".to_owned(), json!(gclid));
    }
    for (name, as_named) in [
        ("form_id", "googleFormId"),
        ("campaign_id", "googleCampaignId"),
        ("adgroup_id", "googleAdGroupId"),
        ("creative_id", "googleCreativeId"),
    ] {
        if let Some(value) = id(name) {
            attribution.insert(as_named.to_owned(), json!(value));
        }
    }
    Some(GoogleFormLead {
        key,
        lead_id,
        is_test,
        body: json!({"userData": user, "formData": form, "attributionData": attribution}),
    })
}

/// The path of the server's one Meta Lead Ads webhook.
pub const META_LEADGEN_PATH: &str = "/webhooks/meta/leadgen";

/// The `userData` field a Meta Instant Form's standard question fills, by the question's
/// key in `field_data`
/// (<https://developers.facebook.com/docs/marketing-api/guides/lead-ads/retrieving/>).
const META_FIELDS: [(&str, &str); 11] = [
    ("email", "email"),
    ("work_email", "email"),
    ("phone_number", "phone"),
    ("work_phone_number", "phone"),
    ("first_name", "firstName"),
    ("last_name", "lastName"),
    ("full_name", "fullName"),
    ("company_name", "companyName"),
    ("job_title", "jobTitle"),
    ("city", "city"),
    ("zip_code", "postalCode"),
];

/// A lead fetched from the Graph API (`/{leadgen_id}` with `field_data`, `form_id`,
/// `ad_id`, `campaign_id`, `created_time`) as a `createLead` body for the keyed route:
/// standard questions in `userData`, the form's own in `formData`, the form's name as
/// `formName`, Meta's lead id (also the `uniqueEventId`, so that a lead announced twice
/// is one lead), and the campaign and ad as its source. `None` without an id.
pub fn meta_lead(fetched: &Value, form_name: Option<&str>) -> Option<Value> {
    let lead_id = fetched.get("id").and_then(Value::as_str)?;
    let mut user = Map::new();
    let mut form = Map::new();
    let answers = fetched.get("field_data").and_then(Value::as_array);
    for answer in answers.into_iter().flatten() {
        let Some(name) = answer.get("name").and_then(Value::as_str) else {
            continue;
        };
        let values: Vec<&str> = answer
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if values.is_empty() {
            continue;
        }
        match META_FIELDS.iter().find(|(key, _)| *key == name) {
            Some((_, field)) => {
                user.entry(*field).or_insert_with(|| json!(values[0]));
            }
            None => {
                form.insert(name.to_owned(), json!(values.join(", ")));
            }
        }
    }
    split_full_name(&mut user);
    let text = |name: &str| fetched.get(name).and_then(Value::as_str);
    let form_id = text("form_id");
    let named = form_name
        .map(str::to_owned)
        .or_else(|| form_id.map(|id| format!("Meta lead form {id}")));
    form.insert(
        "formName".to_owned(),
        json!(named.unwrap_or_else(|| "Meta lead form".to_owned())),
    );
    form.insert(
        "uniqueEventId".to_owned(),
        json!(format!("meta-lead:{lead_id}")),
    );
    form.insert("metaLeadId".to_owned(), json!(lead_id));
    let mut attribution = Map::new();
    attribution.insert("leadSource".to_owned(), json!("meta-lead-ads"));
    for (name, as_named) in [
        ("form_id", "metaFormId"),
        ("campaign_id", "metaCampaignId"),
        ("ad_id", "metaAdId"),
    ] {
        if let Some(value) = text(name) {
            attribution.insert(as_named.to_owned(), json!(value));
        }
    }
    Some(json!({"userData": user, "formData": form, "attributionData": attribution}))
}

/// The time Meta says a lead was submitted (`created_time`, e.g.
/// `2015-02-28T08:49:14+0000`).
pub fn meta_created_time(fetched: &Value) -> Option<DateTime<Utc>> {
    let text = fetched.get("created_time").and_then(Value::as_str)?;
    DateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%z")
        .ok()
        .map(|at| at.with_timezone(&Utc))
}

/// The `userData` field a LinkedIn Lead Gen Form's predefined question fills, by its
/// `predefinedField`
/// (<https://learn.microsoft.com/en-us/linkedin/marketing/lead-sync/lead-sync-schema>).
const LINKEDIN_FIELDS: [(&str, &str); 11] = [
    ("FIRST_NAME", "firstName"),
    ("LAST_NAME", "lastName"),
    ("EMAIL", "email"),
    ("WORK_EMAIL", "email"),
    ("PHONE_NUMBER", "phone"),
    ("WORK_PHONE_NUMBER", "phone"),
    ("COMPANY_NAME", "companyName"),
    ("JOB_TITLE", "jobTitle"),
    ("CITY", "city"),
    ("POSTAL_CODE", "postalCode"),
    ("COUNTRY", "country"),
];

/// The form a LinkedIn lead form response answered: its id, from
/// `versionedLeadGenFormUrn` (`urn:li:versionedLeadGenForm:(urn:li:leadGenForm:ID,VERSION)`).
pub fn linkedin_form_id(response: &Value) -> Option<&str> {
    let urn = response.get("versionedLeadGenFormUrn")?.as_str()?;
    let inner = urn.split_once("urn:li:leadGenForm:")?.1;
    let id = inner.split([',', ')']).next()?;
    (!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())).then_some(id)
}

/// When a LinkedIn lead form response was submitted (`submittedAt`, epoch milliseconds).
pub fn linkedin_submitted_at(response: &Value) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_millis(response.get("submittedAt")?.as_i64()?)
}

/// A LinkedIn lead form response (`leadFormResponses`) as a `createLead` body for the
/// keyed route, its answers read with `form` (`leadForms/{id}`: `name`, and
/// `content.questions[]` with `questionId`, `name`, `predefinedField`): predefined
/// questions in `userData`, the others in `formData` by their name, the form's name as
/// `formName`, LinkedIn's lead id (also the `uniqueEventId`: a response read twice is one
/// lead), test leads marked, and the campaign and account as its source. `None` without
/// an id.
pub fn linkedin_lead(response: &Value, form: &Value) -> Option<Value> {
    let lead_id = response.get("id").and_then(Value::as_str)?;
    let questions = form["content"]["questions"].as_array();
    let question = |id: &Value| {
        questions
            .into_iter()
            .flatten()
            .find(|question| question["questionId"] == *id)
    };
    let mut user = Map::new();
    let mut form_data = Map::new();
    let answers = response["formResponse"]["answers"].as_array();
    for answer in answers.into_iter().flatten() {
        let asked = question(&answer["questionId"]);
        let Some(value) = linkedin_answer(answer, asked) else {
            continue;
        };
        let predefined = asked.and_then(|q| q["predefinedField"].as_str());
        match LINKEDIN_FIELDS
            .iter()
            .find(|(key, _)| Some(*key) == predefined)
        {
            Some((_, field)) => {
                user.entry(*field).or_insert_with(|| json!(value));
            }
            None => {
                let name = asked
                    .and_then(|q| q["name"].as_str())
                    .map(str::to_owned)
                    .unwrap_or_else(|| format!("question {}", answer["questionId"]));
                form_data.insert(name, json!(value));
            }
        }
    }
    let form_name = form["name"].as_str().map(str::to_owned);
    let form_id = linkedin_form_id(response);
    let named = form_name.or_else(|| form_id.map(|id| format!("LinkedIn lead form {id}")));
    form_data.insert(
        "formName".to_owned(),
        json!(named.unwrap_or_else(|| "LinkedIn lead form".to_owned())),
    );
    form_data.insert(
        "uniqueEventId".to_owned(),
        json!(format!("linkedin-lead:{lead_id}")),
    );
    form_data.insert("linkedinLeadId".to_owned(), json!(lead_id));
    if response["testLead"] == json!(true) {
        form_data.insert("isTest".to_owned(), json!(true));
    }
    let mut attribution = Map::new();
    attribution.insert("leadSource".to_owned(), json!("linkedin-lead-gen"));
    let sources = [
        ("linkedinFormId", form_id.map(str::to_owned)),
        (
            "linkedinCampaign",
            response["leadMetadata"]["sponsoredLeadMetadata"]["campaign"]
                .as_str()
                .map(str::to_owned),
        ),
        (
            "linkedinAccount",
            response["owner"]["sponsoredAccount"]
                .as_str()
                .map(str::to_owned),
        ),
    ];
    for (name, value) in sources {
        if let Some(value) = value {
            attribution.insert(name.to_owned(), json!(value));
        }
    }
    Some(json!({"userData": user, "formData": form_data, "attributionData": attribution}))
}

/// An answer's text: a text answer as given; a choice's options by their text on the
/// form (`questionDetails.multipleChoiceQuestionDetails.options[]`, each an `id` and a
/// `text`, plain or localized), else by their ids; joined.
fn linkedin_answer(answer: &Value, asked: Option<&Value>) -> Option<String> {
    let details = &answer["answerDetails"];
    if let Some(text) = details["textQuestionAnswer"]["answer"].as_str() {
        return Some(text.to_owned()).filter(|text| !text.trim().is_empty());
    }
    let choices = asked
        .and_then(|q| q["questionDetails"]["multipleChoiceQuestionDetails"]["options"].as_array());
    let text_of = |id: &Value| {
        let option = choices
            .into_iter()
            .flatten()
            .find(|option| option["id"] == *id)?;
        let text = &option["text"];
        text.as_str()
            .or_else(|| text["localized"].as_object()?.values().next()?.as_str())
            .map(str::to_owned)
    };
    let options = details["multipleChoiceAnswer"]["options"].as_array()?;
    let picked: Vec<String> = options
        .iter()
        .map(|id| text_of(id).unwrap_or_else(|| id.to_string()))
        .collect();
    (!picked.is_empty()).then(|| picked.join(", "))
}

/// Fills `firstName` and `lastName` from `fullName` when neither is given: the inbox names
/// people by them.
fn split_full_name(user: &mut Map<String, Value>) {
    let Some(full) = user
        .get("fullName")
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        return;
    };
    if user.contains_key("firstName") || user.contains_key("lastName") {
        return;
    }
    let (first, last) = full.trim().split_once(' ').unwrap_or((full.trim(), ""));
    user.insert("firstName".to_owned(), json!(first));
    if !last.trim().is_empty() {
        user.insert("lastName".to_owned(), json!(last.trim()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sample of Google's implementation guide, with a custom question added.
    fn sample() -> Value {
        json!({
            "lead_id": "TeSter-123-ABCDEFGHIJKLMNOPQRSTUVWXYZ-abcdefghijklmnopqrstuvwxyz-0123456789-AaBbCcDdEeFfGgHhIiJjKkLl",
            "user_column_data": [
                {"column_name": "Full Name", "string_value": "FirstName LastName", "column_id": "FULL_NAME"},
                {"column_name": "User Phone", "string_value": "+16505550123", "column_id": "PHONE_NUMBER"},
                {"column_name": "User Email", "string_value": "test@example.com", "column_id": "EMAIL"},
                {"column_name": "What is your budget?", "string_value": "10k", "column_id": "budget"}
            ],
            "api_version": "1.0",
            "form_id": 123_456_789_012_i64,
            "campaign_id": 123_456_789,
            "google_key": "secret-key",
            "is_test": true,
            "gcl_id": "TeSter-123-gclid",
            "adgroup_id": 20_000_000_000_i64,
            "creative_id": 30_000_000_000_i64
        })
    }

    #[test]
    fn a_google_lead_becomes_a_create_lead_body() {
        let lead = google_form_lead(&sample()).unwrap();
        assert_eq!(lead.key, "secret-key");
        assert!(lead.is_test);
        assert_eq!(
            lead.body,
            json!({
                "userData": {
                    "fullName": "FirstName LastName",
                    "firstName": "FirstName",
                    "lastName": "LastName",
                    "phone": "+16505550123",
                    "email": "test@example.com"
                },
                "formData": {
                    "What is your budget?": "10k",
                    "formName": "Google Ads lead form 123456789012",
                    "uniqueEventId": format!("google-lead-form:{}", lead.lead_id),
                    "googleLeadId": lead.lead_id,
                    "isTest": true
                },
                "attributionData": {
                    "leadSource": "google-lead-form",
                    "gclid": "TeSter-123-gclid",
                    "googleFormId": "123456789012",
                    "googleCampaignId": "123456789",
                    "googleAdGroupId": "20000000000",
                    "googleCreativeId": "30000000000"
                }
            })
        );
    }

    #[test]
    fn a_body_without_a_lead_id_or_a_key_is_not_a_google_lead() {
        for missing in ["lead_id", "google_key"] {
            let mut body = sample();
            body.as_object_mut().unwrap().remove(missing);
            assert_eq!(google_form_lead(&body), None, "{missing}");
        }
        assert_eq!(google_form_lead(&json!([1, 2])), None);
    }

    /// The lead of Meta's retrieval guide
    /// (<https://developers.facebook.com/docs/marketing-api/guides/lead-ads/retrieving/>).
    fn fetched() -> Value {
        json!({
            "created_time": "2015-02-28T08:49:14+0000",
            "id": "444444444444",
            "ad_id": "555555555",
            "form_id": "666666666",
            "campaign_id": "777777777",
            "field_data": [
                {"name": "car_make", "values": ["Honda"]},
                {"name": "full_name", "values": ["Joe Example"]},
                {"name": "email", "values": ["joe@example.com"]},
                {"name": "selected_dealer", "values": ["99213450"]}
            ]
        })
    }

    #[test]
    fn a_meta_lead_becomes_a_create_lead_body() {
        assert_eq!(
            meta_lead(&fetched(), Some("Test drive")),
            Some(json!({
                "userData": {
                    "fullName": "Joe Example",
                    "email": "joe@example.com",
                    "firstName": "Joe",
                    "lastName": "Example"
                },
                "formData": {
                    "car_make": "Honda",
                    "selected_dealer": "99213450",
                    "formName": "Test drive",
                    "uniqueEventId": "meta-lead:444444444444",
                    "metaLeadId": "444444444444"
                },
                "attributionData": {
                    "leadSource": "meta-lead-ads",
                    "metaFormId": "666666666",
                    "metaCampaignId": "777777777",
                    "metaAdId": "555555555"
                }
            }))
        );
        assert_eq!(
            meta_created_time(&fetched()).map(|at| at.to_rfc3339()),
            Some("2015-02-28T08:49:14+00:00".to_owned())
        );
        assert_eq!(meta_lead(&json!({"field_data": []}), None), None);
    }

    #[test]
    fn a_failed_fetch_waits_longer_each_time_up_to_an_hour() {
        let now = Utc::now();
        let waits: Vec<i64> = [0, 1, 2, 6, 7, 40]
            .iter()
            .map(|attempts| (fetch_retry_at(now, *attempts, FIRST_FETCH_RETRY) - now).num_seconds())
            .collect();
        assert_eq!(waits, [30, 60, 120, 1_920, 3_600, 3_600]);
    }

    #[test]
    fn a_linkedin_response_is_read_with_its_forms_questions() {
        let response = json!({
            "owner": {"sponsoredAccount": "urn:li:sponsoredAccount:507"},
            "leadMetadata": {"sponsoredLeadMetadata": {"campaign": "urn:li:sponsoredCampaign:9"}},
            "versionedLeadGenFormUrn": "urn:li:versionedLeadGenForm:(urn:li:leadGenForm:5664,2)",
            "id": "lead-1",
            "submittedAt": 1_700_000_000_000_i64,
            "testLead": true,
            "formResponse": {"answers": [
                {"answerDetails": {"textQuestionAnswer": {"answer": "Ada"}}, "questionId": 1},
                {"answerDetails": {"textQuestionAnswer": {"answer": "ada@example.com"}}, "questionId": 2},
                {"answerDetails": {"multipleChoiceAnswer": {"options": [2, 3]}}, "questionId": 3},
                {"answerDetails": {"textQuestionAnswer": {"answer": "  "}}, "questionId": 4}
            ]}
        });
        let form = json!({"name": "Demo", "content": {"questions": [
            {"questionId": 1, "name": "firstName", "predefinedField": "FIRST_NAME"},
            {"questionId": 2, "name": "workEmail", "predefinedField": "WORK_EMAIL"},
            {"questionId": 3, "name": "interests", "questionDetails": {"multipleChoiceQuestionDetails": {"options": [
                {"id": 2, "text": {"localized": {"en_US": "Pricing"}}}
            ]}}}
        ]}});
        assert_eq!(linkedin_form_id(&response), Some("5664"));
        assert_eq!(
            linkedin_submitted_at(&response).map(|at| at.timestamp()),
            Some(1_700_000_000)
        );
        assert_eq!(
            linkedin_lead(&response, &form),
            Some(json!({
                "userData": {"firstName": "Ada", "email": "ada@example.com"},
                "formData": {
                    "interests": "Pricing, 3",
                    "formName": "Demo",
                    "uniqueEventId": "linkedin-lead:lead-1",
                    "linkedinLeadId": "lead-1",
                    "isTest": true
                },
                "attributionData": {
                    "leadSource": "linkedin-lead-gen",
                    "linkedinFormId": "5664",
                    "linkedinCampaign": "urn:li:sponsoredCampaign:9",
                    "linkedinAccount": "urn:li:sponsoredAccount:507"
                }
            }))
        );
    }
}
