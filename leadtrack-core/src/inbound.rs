//! Inbound webhooks: form tools (Typeform, Tally, Webflow, Jotform, or anything that posts
//! JSON) posting their submissions to `/webhooks/inbound/{id}`. Each webhook reads the
//! tool's shape with a mapping of JSONPaths (RFC 9535) to lead fields; a preset starts it
//! with the tool's usual places. What a post makes is created as the keyed route creates
//! (CONTRACT.md section 3): dedup by `uniqueEventId`, lead webhooks and alerts alike.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use serde_json_path::JsonPath;

use crate::integration::Secret;
use crate::mapping::{FieldMap, MappedLead};
use crate::types::ProjectId;

/// Where inbound webhooks post, followed by the webhook's id.
pub const INBOUND_PATH: &str = "/webhooks/inbound/";

/// A form tool whose shape and signature an inbound webhook knows.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::AsRefStr,
    strum::Display,
    strum::EnumString,
    strum::VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Preset {
    /// Typeform's `form_response` webhooks, signed with `Typeform-Signature`.
    Typeform,
    /// Tally's `FORM_RESPONSE` webhooks, signed with `Tally-Signature`.
    Tally,
    /// Webflow's `form_submission` webhooks, signed with `x-webflow-signature` when made
    /// through its API, unsigned when made in a site's settings.
    Webflow,
    /// Jotform's webhooks: multipart, the answers as JSON in `rawRequest`; unsigned
    /// (Jotform offers no signature).
    Jotform,
    /// Any JSON post, mapped by hand; unsigned.
    Custom,
}

impl Preset {
    /// Its name for people.
    pub fn title(self) -> &'static str {
        match self {
            Self::Typeform => "Typeform",
            Self::Tally => "Tally",
            Self::Webflow => "Webflow forms",
            Self::Jotform => "Jotform",
            Self::Custom => "Custom JSON",
        }
    }

    /// Whether the tool signs its posts with the webhook's secret.
    pub fn signs(self) -> bool {
        matches!(self, Self::Typeform | Self::Tally | Self::Webflow)
    }

    /// Whether the webhook's URL carries its secret (`?secret=`): for the tools that do
    /// not sign, and for Webflow, whose webhooks made in a site's settings come unsigned
    /// (<https://developers.webflow.com/data/docs/working-with-webhooks>).
    pub fn secret_in_url(self) -> bool {
        !matches!(self, Self::Typeform | Self::Tally)
    }

    /// The mapping the tool's usual payload needs: where its form puts emails, phones,
    /// names, the form's name, the submission's id and hidden click ids.
    pub fn mapping(self) -> Vec<FieldMap> {
        let pairs: Vec<(&str, String)> = match self {
            Self::Typeform => typeform(),
            Self::Tally => tally(),
            Self::Webflow => webflow(),
            Self::Jotform => jotform(),
            Self::Custom => crate::mapping::targets()
                .filter(|target| *target != "createdAt")
                .map(|target| (target, format!("$..{target}")))
                .collect(),
        };
        pairs
            .into_iter()
            .map(|(target, source)| FieldMap {
                target: target.to_owned(),
                source,
            })
            .collect()
    }
}

impl Preset {
    /// What a post to a hook of this preset makes with `mapping`: `map_document` of the
    /// post as the preset reads it (`Preset::document`), keeping the post as it came.
    pub fn map_post(self, mapping: &[FieldMap], post: &Value) -> MappedLead {
        let mut lead = map_document(mapping, &self.document(post.clone()));
        lead.keep("inbound", post.clone());
        lead
    }

    /// The post as the preset's mapping reads it: for Typeform, with the person's contact
    /// found by field type and label added ([`typeform_contact`]); the others as posted.
    fn document(self, mut document: Value) -> Value {
        if self == Self::Typeform
            && let Some(response) = document.get_mut("form_response")
        {
            let contact = typeform_contact(response);
            if let Some(response) = response.as_object_mut() {
                response.insert("contact".to_owned(), Value::Object(contact));
            }
        }
        document
    }
}

/// The contact fields of a Typeform response (its `form_response`), by lead field: from a
/// Contact Info block (`contact_info`: first and last name, email, phone, company), then
/// from answers whose question's title or `ref` names a field the way a CSV header does
/// ([`crate::mapping::target`]: "First name", "Nachname", `company`), then by the
/// answer's type: the email and phone questions, and the first short text left for the
/// first name. See <https://www.typeform.com/developers/webhooks/example-payload/> and
/// the Contact Info block's answer in
/// <https://www.typeform.com/developers/responses/reference/retrieve-responses/>.
fn typeform_contact(response: &Value) -> Map<String, Value> {
    fn value(answer: &Value) -> Option<&Value> {
        answer["type"].as_str().and_then(|kind| answer.get(kind))
    }
    let answers = response["answers"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let titles = response["definition"]["fields"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let title = |id: &Value| {
        titles
            .iter()
            .find(|field| &field["id"] == id)
            .and_then(|field| field["title"].as_str())
    };
    let mut contact = Map::new();
    let mut put = |field: &str, value: Option<&Value>| {
        if let Some(value) = value.filter(|v| v.as_str().is_some_and(|t| !t.trim().is_empty())) {
            contact.entry(field).or_insert_with(|| value.clone());
        }
    };
    for answer in answers.iter().filter(|a| a["type"] == "contact_info") {
        let info = &answer["contact_info"];
        for (field, key) in [
            ("firstName", "first_name"),
            ("lastName", "last_name"),
            ("email", "email"),
            ("phone", "phone_number"),
            ("companyName", "company"),
        ] {
            put(field, info.get(key));
        }
    }
    let mut named = Vec::new();
    for (at, answer) in answers.iter().enumerate() {
        let names = [
            title(&answer["field"]["id"]),
            answer["field"]["ref"].as_str(),
        ];
        let field = names.into_iter().flatten().find_map(crate::mapping::target);
        if let Some(field @ ("firstName" | "lastName" | "email" | "phone" | "companyName")) = field
        {
            put(field, value(answer));
            named.push(at);
        }
    }
    for (kind, field) in [
        ("email", "email"),
        ("phone_number", "phone"),
        ("short_text", "firstName"),
    ] {
        let unnamed = answers
            .iter()
            .enumerate()
            .filter(|(at, _)| !named.contains(at));
        let mut typed = unnamed
            .map(|(_, a)| a)
            .filter(|a| a["field"]["type"] == kind);
        put(field, typed.next().and_then(value));
    }
    contact
}

/// The click ids and UTM parameters a form carries as hidden fields.
const HIDDEN: [&str; 8] = [
    "gclid",
    "gbraid",
    "wbraid",
    "fbclid",
    "msclkid",
    "utm_source",
    "utm_medium",
    "utm_campaign",
];

/// Typeform: the contact by type and label ([`Preset::document`]), the message by its
/// type, hidden fields by name
/// (<https://www.typeform.com/developers/webhooks/example-payload/>).
fn typeform() -> Vec<(&'static str, String)> {
    let answer = |kind: &str, value: &str| {
        format!("$.form_response.answers[?@.field.type == '{kind}'].{value}")
    };
    // The contact as [`Preset::document`] finds it, by type and label.
    let contact = |field: &str| format!("$.form_response.contact.{field}");
    let mut pairs = vec![
        ("email", contact("email")),
        ("phone", contact("phone")),
        ("firstName", contact("firstName")),
        ("lastName", contact("lastName")),
        ("companyName", contact("companyName")),
        ("formMessage", answer("long_text", "text")),
        ("formName", "$.form_response.definition.title".to_owned()),
        ("uniqueEventId", "$.form_response.token".to_owned()),
    ];
    pairs.extend(HIDDEN.map(|name| (name, format!("$.form_response.hidden.{name}"))));
    pairs
}

/// Tally: fields by their type, hidden fields by label
/// (<https://tally.so/help/webhooks>).
fn tally() -> Vec<(&'static str, String)> {
    let field = |kind: &str| format!("$.data.fields[?@.type == '{kind}'].value");
    let mut pairs = vec![
        ("email", field("INPUT_EMAIL")),
        ("phone", field("INPUT_PHONE_NUMBER")),
        ("firstName", field("INPUT_TEXT")),
        ("formMessage", field("TEXTAREA")),
        ("formName", "$.data.formName".to_owned()),
        ("uniqueEventId", "$.data.responseId".to_owned()),
    ];
    pairs.extend(HIDDEN.map(|name| {
        let path =
            format!("$.data.fields[?@.type == 'HIDDEN_FIELDS' && @.label == '{name}'].value");
        (name, path)
    }));
    pairs
}

/// Webflow: the form's fields by their usual names
/// (<https://developers.webflow.com/data/reference/webhooks/events/form-submission>).
fn webflow() -> Vec<(&'static str, String)> {
    let field = |names: &str| format!("$.payload.data[{names}]");
    let mut pairs = vec![
        ("email", field("'Email','email','E-mail','Email Address'")),
        (
            "phone",
            field("'Phone','phone','Phone Number','Phone number'"),
        ),
        (
            "firstName",
            field("'First Name','First name','Name','name'"),
        ),
        ("lastName", field("'Last Name','Last name'")),
        ("companyName", field("'Company','company','Company Name'")),
        ("formMessage", field("'Message','message'")),
        ("formName", "$.payload.name".to_owned()),
        ("uniqueEventId", "$.payload.id".to_owned()),
    ];
    pairs.extend(HIDDEN.map(|name| (name, format!("$.payload.data['{name}']"))));
    pairs
}

/// Jotform: its fields' unique names, read from `rawRequest` without their `qN_` prefix
/// ([`jotform_document`]; <https://www.jotform.com/help/449-how-to-send-submissions-to-your-own-server/>).
fn jotform() -> Vec<(&'static str, String)> {
    let mut pairs = vec![
        ("email", "$['email','emailAddress','email1']".to_owned()),
        (
            "phone",
            "$['phoneNumber','phone','phoneNumber1']".to_owned(),
        ),
        (
            "firstName",
            "$['name','fullName','yourName'].first".to_owned(),
        ),
        (
            "lastName",
            "$['name','fullName','yourName'].last".to_owned(),
        ),
        ("companyName", "$['company','companyName']".to_owned()),
        (
            "formMessage",
            "$['message','comments','yourMessage']".to_owned(),
        ),
        ("formName", "$.formTitle".to_owned()),
        ("uniqueEventId", "$.submissionID".to_owned()),
    ];
    pairs.extend(HIDDEN.map(|name| (name, format!("$['{name}']"))));
    pairs
}

/// An inbound webhook of a project.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InboundHook {
    /// Its id, in its URL: random, unguessable.
    pub id: String,
    /// The project its leads go to.
    pub project: ProjectId,
    /// What people call it ("Typeform: demo requests").
    pub name: String,
    /// The tool.
    pub preset: Preset,
    /// The secret: signs the tool's posts, or is presented in the URL by a post that is
    /// not signed.
    pub secret: Secret,
    /// Where each lead field is read.
    pub mapping: Vec<FieldMap>,
    /// When it was made.
    pub created_at: DateTime<Utc>,
}

impl InboundHook {
    /// A new webhook with a fresh id, and a fresh secret unless one is given.
    pub fn new(project: ProjectId, (name, preset): (&str, Preset), secret: Option<Secret>) -> Self {
        let name = name.trim();
        Self {
            id: random_token(16),
            project,
            name: if name.is_empty() {
                preset.title().to_owned()
            } else {
                name.to_owned()
            },
            preset,
            secret: secret.unwrap_or_else(|| Secret::new(random_token(24))),
            mapping: preset.mapping(),
            created_at: Utc::now(),
        }
    }

    /// Its URL's path, with the secret where the tool presents it there.
    pub fn path(&self) -> String {
        match self.preset.secret_in_url() {
            false => format!("{INBOUND_PATH}{}", self.id),
            true => format!("{INBOUND_PATH}{}?secret={}", self.id, self.secret.expose()),
        }
    }
}

/// What stores seal of an inbound webhook: all but its id, project and time, which they
/// keep in the clear to find it.
#[derive(Serialize, Deserialize)]
struct Sealed {
    name: String,
    preset: Preset,
    secret: Secret,
    mapping: Vec<FieldMap>,
}

impl InboundHook {
    /// Its settings as the JSON a store seals.
    pub fn settings(&self) -> String {
        let sealed = Sealed {
            name: self.name.clone(),
            preset: self.preset,
            secret: self.secret.clone(),
            mapping: self.mapping.clone(),
        };
        serde_json::to_string(&sealed).expect("plain data serializes")
    }

    /// The webhook a store kept: its clear columns and its opened [`Self::settings`].
    pub fn from_row(
        (id, project, created_at): (String, ProjectId, DateTime<Utc>),
        settings: &str,
    ) -> serde_json::Result<Self> {
        let Sealed {
            name,
            preset,
            secret,
            mapping,
        } = serde_json::from_str(settings)?;
        Ok(Self {
            id,
            project,
            name,
            preset,
            secret,
            mapping,
            created_at,
        })
    }
}

/// `bytes` random bytes as lowercase hex.
fn random_token(bytes: usize) -> String {
    let mut random = vec![0_u8; bytes];
    getrandom::fill(&mut random).expect("the operating system's random source");
    hex::encode(random)
}

/// Checks that `path` is a JSONPath (RFC 9535); the problem in words.
pub fn check_path(path: &str) -> Result<(), String> {
    JsonPath::parse(path)
        .map(drop)
        .map_err(|err| format!("\"{path}\" is not a JSONPath: {err}"))
}

/// Parses `FIELD=JSONPATH` pairs for a webhook's mapping, each path checked; the first
/// problem in words.
pub fn parse_mapping<'a>(
    pairs: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<FieldMap>, String> {
    pairs
        .into_iter()
        .filter(|pair| !pair.trim().is_empty())
        .map(|pair| {
            let pair = FieldMap::parse(pair)?;
            if pair.target == "createdAt" {
                return Err(
                    "a posted lead is created when it arrives: createdAt cannot be mapped"
                        .to_owned(),
                );
            }
            check_path(&pair.source)?;
            Ok(pair)
        })
        .collect()
}

/// The lead `mapping` reads from `document`: each target takes the first value its path
/// finds. The whole document is kept as `formData.inbound`, so that nothing the form
/// asked is lost to the mapping.
fn map_document(mapping: &[FieldMap], document: &Value) -> MappedLead {
    let mut lead = MappedLead::default();
    for pair in mapping {
        let Ok(path) = JsonPath::parse(&pair.source) else {
            continue;
        };
        if let Some(value) = path.query(document).iter().find_map(|node| text(node)) {
            lead.set(&pair.target, &value);
        }
    }
    lead.keep("inbound", document.clone());
    lead
}

/// A value as the text a lead field takes: numbers and booleans as written, a list's
/// items joined by ", ", an object's text leaves joined by spaces (Jotform's
/// `{"first","last"}` name, `{"full"}` phone); `None` when nothing is in it.
fn text(value: &Value) -> Option<String> {
    let text = match value {
        Value::Null => return None,
        Value::String(text) => text.trim().to_owned(),
        Value::Number(number) => number.to_string(),
        Value::Bool(flag) => flag.to_string(),
        Value::Array(items) => items.iter().filter_map(text).collect::<Vec<_>>().join(", "),
        Value::Object(fields) => fields
            .values()
            .filter_map(text)
            .collect::<Vec<_>>()
            .join(" "),
    };
    (!text.is_empty()).then_some(text)
}

/// Jotform's post as one JSON document: its form fields (`formID`, `submissionID`,
/// `formTitle`, ...) with the answers of `rawRequest` beside them, each under its unique
/// name without the `qN_` prefix (`q4_email` is `email`). `None` without a `rawRequest`
/// that is a JSON object.
pub fn jotform_document<'a>(fields: impl IntoIterator<Item = (&'a str, &'a str)>) -> Option<Value> {
    let mut document = Map::new();
    let mut answers = None;
    for (name, value) in fields {
        match name {
            "rawRequest" => answers = serde_json::from_str::<Map<String, Value>>(value).ok(),
            "pretty" => {}
            _ => {
                document.insert(name.to_owned(), Value::String(value.to_owned()));
            }
        }
    }
    for (name, value) in answers? {
        document.insert(unprefixed(&name).to_owned(), value);
    }
    Some(Value::Object(document))
}

/// A Jotform field name without its `q{number}_` prefix.
fn unprefixed(name: &str) -> &str {
    name.strip_prefix('q')
        .and_then(|rest| {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            (digits > 0).then(|| rest[digits..].strip_prefix('_'))?
        })
        .unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn mapped(preset: Preset, document: &Value) -> Value {
        let mut lead = preset.map_post(&preset.mapping(), document);
        lead.body["formData"]
            .as_object_mut()
            .unwrap()
            .remove("inbound");
        Value::Object(lead.body)
    }

    #[test]
    fn every_preset_path_is_a_json_path() {
        for preset in <Preset as strum::VariantArray>::VARIANTS {
            for pair in preset.mapping() {
                check_path(&pair.source).unwrap();
            }
        }
        assert!(
            check_path("$.a[")
                .unwrap_err()
                .starts_with("\"$.a[\" is not a JSONPath")
        );
    }

    #[test]
    fn a_typeform_answer_is_found_by_its_type() {
        let document = json!({"form_response": {
            "token": "tok",
            "definition": {"title": "Demo"},
            "hidden": {"gclid": "g1"},
            "answers": [
                {"type": "text", "text": "Ada", "field": {"type": "short_text"}},
                {"type": "email", "email": "ada@example.com", "field": {"type": "email"}},
                {"type": "text", "text": "Second", "field": {"type": "short_text"}},
            ]
        }});
        assert_eq!(
            mapped(Preset::Typeform, &document),
            json!({
                "userData": {"email": "ada@example.com", "firstName": "Ada"},
                "formData": {"formName": "Demo", "uniqueEventId": "tok"},
                "attributionData": {"gclid": "g1"},
            })
        );
    }

    #[test]
    fn a_typeform_contact_is_found_by_its_block_its_labels_or_its_refs() {
        let field = |id: &str, kind: &str| json!({"id": id, "type": kind});
        let document = json!({"form_response": {
            "token": "tok",
            "definition": {"title": "Demo", "fields": [
                {"id": "f1", "title": "Firma", "type": "short_text"},
                {"id": "f2", "title": "What should we call you?", "type": "short_text"},
                {"id": "f3", "title": "Last name", "type": "short_text"},
            ]},
            "answers": [
                {"type": "text", "text": "Analytical GmbH", "field": field("f1", "short_text")},
                {"type": "text", "text": "Ada", "field": field("f2", "short_text")},
                {"type": "text", "text": "Lovelace", "field": field("f3", "short_text")},
                {"type": "phone_number", "phone_number": "+4915112345678", "field": field("f4", "phone_number")},
                {"type": "email", "email": "ada@example.com", "field": field("f5", "email")},
            ]
        }});
        assert_eq!(
            mapped(Preset::Typeform, &document)["userData"],
            json!({
                "firstName": "Ada", "lastName": "Lovelace", "companyName": "Analytical GmbH",
                "phone": "+4915112345678", "email": "ada@example.com",
            })
        );
        // A Contact Info block comes first; a ref names a field as a title does.
        let document = json!({"form_response": {
            "answers": [
                {"type": "text", "text": "Grace", "field": {"id": "a", "type": "short_text", "ref": "first_name"}},
                {"type": "contact_info", "field": {"id": "b", "type": "contact_info"}, "contact_info": {
                    "first_name": "Grace B.", "last_name": "Hopper", "email": "grace@example.com",
                    "phone_number": "+15555550100", "company": "Navy"}},
            ]
        }});
        assert_eq!(
            mapped(Preset::Typeform, &document)["userData"],
            json!({
                "firstName": "Grace B.", "lastName": "Hopper", "companyName": "Navy",
                "phone": "+15555550100", "email": "grace@example.com",
            })
        );
    }

    #[test]
    fn jotform_answers_lose_their_prefix_and_objects_become_text() {
        let raw = r#"{"q3_name":{"first":"Ada","last":"Lovelace"},"q4_email":"ada@example.com","q5_phoneNumber":{"full":"(555) 555-0100"}}"#;
        let document = jotform_document([
            ("formID", "1"),
            ("submissionID", "99"),
            ("formTitle", "Contact"),
            ("rawRequest", raw),
            ("pretty", "Name:Ada"),
        ])
        .unwrap();
        assert_eq!(
            mapped(Preset::Jotform, &document),
            json!({
                "userData": {"email": "ada@example.com", "phone": "(555) 555-0100", "firstName": "Ada", "lastName": "Lovelace"},
                "formData": {"formName": "Contact", "uniqueEventId": "99"},
            })
        );
        assert_eq!(jotform_document([("formID", "1")]), None);
        assert_eq!(unprefixed("q12_email"), "email");
        assert_eq!(unprefixed("question"), "question");
        assert_eq!(unprefixed("q_x"), "q_x");
    }

    #[test]
    fn custom_finds_the_contract_s_names_anywhere() {
        let document = json!({"userData": {"email": "a@example.com"}, "phone": 5550100});
        assert_eq!(
            mapped(Preset::Custom, &document),
            json!({"userData": {"email": "a@example.com", "phone": "5550100"}, "formData": {}})
        );
    }

    #[test]
    fn an_unsigned_tool_carries_its_secret_in_the_url() {
        let hook = InboundHook::new(ProjectId(1), ("", Preset::Jotform), Some(Secret::new("s3")));
        assert_eq!(hook.name, "Jotform");
        assert_eq!(
            hook.path(),
            format!("/webhooks/inbound/{}?secret=s3", hook.id)
        );
        let hook = InboundHook::new(ProjectId(1), ("Demo", Preset::Typeform), None);
        assert_eq!(hook.path(), format!("/webhooks/inbound/{}", hook.id));
        assert_eq!(hook.id.len(), 32);
        assert_eq!(hook.secret.expose().len(), 48);
    }
}
