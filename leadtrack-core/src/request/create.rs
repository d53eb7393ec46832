//! The body of createLead and createServerSideLead, validated by the input rules of
//! CONTRACT.md section 3.

use serde_json::Value;

use super::fields::{self, Errors};
use crate::error::ValidationError;
use crate::lead::LeadData;
use crate::spam::BotCheck;
use crate::types::{Consent, ConsentStatus, DeviceData, JsonObject};

/// Which create route a body arrived on; their rules differ slightly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CreateRoute {
    /// `POST /api/leads/createLead`: from browsers, no key, `projectId` required.
    Browser,
    /// `POST /api/leads/createServerSideLead`: with a key, `userData` required.
    Server,
}

/// The longest `uniqueIdentifier` and `formData.uniqueEventId`, in characters.
pub const MAX_IDENTIFIER_CHARS: usize = 255;

/// `userData` properties that must be strings (or `null`).
const NAMED_USER_FIELDS: [&str; 5] = ["firstName", "lastName", "email", "phone", "companyName"];
/// `attributionData` properties that must be strings (or `null`).
const NAMED_ATTRIBUTION_FIELDS: [&str; 8] = [
    "gclid",
    "wbraid",
    "cid",
    "sid",
    "fbp",
    "fbc",
    "msclkid",
    "li_fat_id",
];
/// `formData` properties that must be strings (or `null`).
const NAMED_FORM_FIELDS: [&str; 3] = ["formName", "formMessage", "uniqueEventId"];

/// A validated create request.
#[derive(Clone, Debug, PartialEq)]
pub struct NewLead {
    /// The public project id, trimmed; `None` only on the server route.
    pub project_id: Option<String>,
    /// The lead's data, ready to store or merge.
    pub data: LeadData,
    /// The capture script's `botCheck` (an addition); default when absent, and ignored,
    /// like any unknown property, when it is not an object of the expected shape.
    pub bot_check: BotCheck,
}

impl NewLead {
    /// Validates a raw request body.
    pub fn parse(body: &[u8], route: CreateRoute) -> Result<Self, ValidationError> {
        Self::from_object(fields::parse_object(body)?, route)
    }

    /// Validates a body already parsed into a JSON object. Unknown top-level properties are
    /// ignored.
    pub fn from_object(mut body: JsonObject, route: CreateRoute) -> Result<Self, ValidationError> {
        let mut errors = Errors::default();
        let project_id =
            fields::take_string(&mut body, "projectId", None, "projectId", &mut errors)
                .and_then(|id| fields::non_empty_trimmed(&id));
        if route == CreateRoute::Browser && project_id.is_none() && !errors.mentions("projectId") {
            return Err(ValidationError::missing_field("projectId"));
        }
        let user = fields::take_object(&mut body, "userData", &mut errors);
        if route == CreateRoute::Server && user.is_none() && !errors.mentions("userData") {
            return Err(ValidationError::missing_field("userData"));
        }
        let user_data = user
            .map(|user| clean_user_data(user, &mut errors))
            .unwrap_or_default();
        let attribution_data = fields::take_object(&mut body, "attributionData", &mut errors)
            .map(|a| clean_object(a, "attributionData", &NAMED_ATTRIBUTION_FIELDS, &mut errors))
            .unwrap_or_default();
        let form_data = fields::take_object(&mut body, "formData", &mut errors)
            .map(|form| check_form_data(form, &mut errors))
            .unwrap_or_default();
        let device_data = fields::take_object(&mut body, "deviceData", &mut errors)
            .map(|device| clean_device_data(device, &mut errors))
            .unwrap_or_default();
        let consent = fields::take_object(&mut body, "consent", &mut errors)
            .map(|consent| check_consent(consent, &mut errors))
            .unwrap_or_default();
        let bot_check = body
            .remove("botCheck")
            .and_then(|check| serde_json::from_value(check).ok())
            .unwrap_or_default();
        let channel_flow = take_channel_flow(&mut body, &mut errors);
        let unique_identifier = fields::take_string(
            &mut body,
            "uniqueIdentifier",
            Some("unique_identifier"),
            "uniqueIdentifier",
            &mut errors,
        )
        .and_then(|id| fields::non_empty_trimmed(&id));
        if let Some(id) = &unique_identifier {
            fields::check_max_chars(id, MAX_IDENTIFIER_CHARS, "uniqueIdentifier", &mut errors);
        }

        let data = LeadData {
            form_data,
            user_data,
            attribution_data,
            device_data,
            channel_flow,
            unique_identifier,
            consent,
        };
        let data = errors.finish(data)?;
        if !has_content(&data.user_data) && !has_content(&data.attribution_data) {
            return Err(ValidationError::no_lead_data());
        }
        Ok(Self {
            project_id,
            data,
            bot_check,
        })
    }
}

/// `channelFlow` (alias `lt_channelflow`): a string as given, or an array or object as its
/// compact JSON text.
fn take_channel_flow(body: &mut JsonObject, errors: &mut Errors) -> Option<String> {
    match fields::take(body, "channelFlow", Some("lt_channelflow"))? {
        Value::String(text) => fields::non_empty_trimmed(&text),
        value @ (Value::Array(_) | Value::Object(_)) => Some(value.to_string()),
        other => {
            errors.push(
                "channelFlow",
                format!(
                    "must be a string, an array or an object, not {}",
                    fields::type_name(&other)
                ),
            );
            None
        }
    }
}

/// `userData`: `company` becomes `companyName` unless a non-blank `companyName` is given
/// too (the primary name wins), then the common string rules apply.
fn clean_user_data(user: JsonObject, errors: &mut Errors) -> JsonObject {
    let primary_given = match user.get("companyName") {
        None | Some(Value::Null) => false,
        Some(Value::String(text)) => !text.trim().is_empty(),
        Some(_) => true,
    };
    let renamed = user
        .into_iter()
        .filter_map(|(key, value)| match key.as_str() {
            "company" if primary_given => None,
            "company" => Some(("companyName".to_owned(), value)),
            "companyName" if !primary_given => None,
            _ => Some((key, value)),
        })
        .collect();
    clean_object(renamed, "userData", &NAMED_USER_FIELDS, errors)
}

/// The rules common to `userData` and `attributionData`: `named` properties must be strings;
/// every string is trimmed; `null` and empty strings are dropped; other values are kept.
fn clean_object(object: JsonObject, path: &str, named: &[&str], errors: &mut Errors) -> JsonObject {
    object
        .into_iter()
        .filter_map(|(key, value)| {
            let value = match value {
                Value::Null => return None,
                Value::String(text) => Value::String(fields::non_empty_trimmed(&text)?),
                other if named.contains(&key.as_str()) => {
                    errors.push(
                        format!("{path}.{key}"),
                        format!("must be a string, not {}", fields::type_name(&other)),
                    );
                    return None;
                }
                other => other,
            };
            Some((key, value))
        })
        .collect()
}

/// `formData` is stored exactly as given; only its named properties are checked.
fn check_form_data(form: JsonObject, errors: &mut Errors) -> JsonObject {
    for name in NAMED_FORM_FIELDS {
        match form.get(name) {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => {
                if name == "uniqueEventId" {
                    let path = "formData.uniqueEventId";
                    fields::check_max_chars(text, MAX_IDENTIFIER_CHARS, path, errors);
                }
            }
            Some(other) => errors.push(
                format!("formData.{name}"),
                format!("must be a string, not {}", fields::type_name(other)),
            ),
        }
    }
    form
}

/// `consent`: `adUserData` and `adPersonalization`, each `"granted"` or `"denied"` (any
/// case) or `null`; other properties are not kept.
fn check_consent(mut consent: JsonObject, errors: &mut Errors) -> Consent {
    let mut signal = |name: &str| {
        let path = format!("consent.{name}");
        match consent.remove(name)? {
            Value::Null => None,
            Value::String(text) if text.trim().eq_ignore_ascii_case("granted") => {
                Some(ConsentStatus::Granted)
            }
            Value::String(text) if text.trim().eq_ignore_ascii_case("denied") => {
                Some(ConsentStatus::Denied)
            }
            other => {
                let given = match &other {
                    Value::String(text) => format!("{text:?}"),
                    other => fields::type_name(other).to_owned(),
                };
                errors.push(
                    &path,
                    format!("must be \"granted\" or \"denied\", not {given}"),
                );
                None
            }
        }
    };
    Consent {
        ad_user_data: signal("adUserData"),
        ad_personalization: signal("adPersonalization"),
    }
}

/// `deviceData`: `ipAddress` and `userAgent`, trimmed; other properties are not kept.
fn clean_device_data(mut device: JsonObject, errors: &mut Errors) -> DeviceData {
    let mut take = |name: &str| {
        let path = format!("deviceData.{name}");
        fields::take_string(&mut device, name, None, &path, errors)
            .and_then(|text| fields::non_empty_trimmed(&text))
    };
    DeviceData {
        ip_address: take("ipAddress"),
        user_agent: take("userAgent"),
    }
}

/// Whether an object holds at least one non-empty value.
fn has_content(object: &JsonObject) -> bool {
    object.values().any(|value| match value {
        Value::Null => false,
        Value::String(s) => !s.is_empty(),
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => !map.is_empty(),
        Value::Bool(_) | Value::Number(_) => true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use serde_json::json;

    fn parse(body: Value, route: CreateRoute) -> Result<NewLead, ValidationError> {
        NewLead::parse(body.to_string().as_bytes(), route)
    }

    fn browser(body: Value) -> NewLead {
        parse(body, CreateRoute::Browser).unwrap()
    }

    fn error(body: Value, route: CreateRoute) -> ValidationError {
        parse(body, route).unwrap_err()
    }

    fn object(value: Value) -> JsonObject {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_minimal_browser_lead() {
        let lead = browser(json!({"projectId": " prj_1 ", "userData": {"email": "a@x.io"}}));
        assert_eq!(lead.project_id.as_deref(), Some("prj_1"));
        assert_eq!(lead.data.user_data, object(json!({"email": "a@x.io"})));
        assert!(lead.data.form_data.is_empty());
        assert_eq!(lead.data.channel_flow, None);
    }

    #[test]
    fn browser_route_requires_project_id() {
        for body in [
            json!({"userData": {"email": "a@x.io"}}),
            json!({"projectId": null, "userData": {"email": "a@x.io"}}),
            json!({"projectId": "  ", "userData": {"email": "a@x.io"}}),
        ] {
            let err = error(body, CreateRoute::Browser);
            assert_eq!(err.code, ErrorCode::MissingField);
            assert_eq!(err.message, "Missing required field: projectId");
        }
        let err = error(
            json!({"projectId": 7, "userData": {"email": "a"}}),
            CreateRoute::Browser,
        );
        assert_eq!(err.code, ErrorCode::InvalidField);
        assert_eq!(err.errors[0].field, "projectId");
    }

    #[test]
    fn server_route_requires_user_data_but_not_project_id() {
        let err = error(
            json!({"attributionData": {"gclid": "G"}}),
            CreateRoute::Server,
        );
        assert_eq!(err.code, ErrorCode::MissingField);
        assert_eq!(err.message, "Missing required field: userData");
        let err = error(json!({"userData": "x"}), CreateRoute::Server);
        assert_eq!(err.code, ErrorCode::InvalidField);
        assert_eq!(err.errors[0].field, "userData");
        let lead = parse(json!({"userData": {"phone": "1"}}), CreateRoute::Server).unwrap();
        assert_eq!(lead.project_id, None);
        // `[]` is present (an empty object), so the no-data rule applies instead.
        let err = error(
            json!({"userData": [], "attributionData": {}}),
            CreateRoute::Server,
        );
        assert_eq!(err.code, ErrorCode::NoLeadData);
    }

    #[test]
    fn aliases_and_primary_names() {
        let lead = browser(json!({
            "projectId": "p",
            "userData": {"company": "ACME", "email": "a@x.io"},
            "lt_channelflow": "cookie%20value",
            "unique_identifier": "crm-1"
        }));
        assert_eq!(
            Value::Object(lead.data.user_data),
            json!({"companyName": "ACME", "email": "a@x.io"})
        );
        assert_eq!(lead.data.channel_flow.as_deref(), Some("cookie%20value"));
        assert_eq!(lead.data.unique_identifier.as_deref(), Some("crm-1"));

        let lead = browser(json!({
            "projectId": "p",
            "userData": {"company": "Alias", "companyName": "Primary"},
            "channelFlow": "primary", "lt_channelflow": "alias",
            "uniqueIdentifier": "primary", "unique_identifier": "alias"
        }));
        assert_eq!(
            Value::Object(lead.data.user_data),
            json!({"companyName": "Primary"})
        );
        assert_eq!(lead.data.channel_flow.as_deref(), Some("primary"));
        assert_eq!(lead.data.unique_identifier.as_deref(), Some("primary"));

        let lead = browser(json!({
            "projectId": "p",
            "userData": {"company": "Alias", "companyName": null},
            "channelFlow": null, "lt_channelflow": "alias",
        }));
        assert_eq!(
            Value::Object(lead.data.user_data),
            json!({"companyName": "Alias"})
        );
        assert_eq!(lead.data.channel_flow.as_deref(), Some("alias"));

        let lead = browser(
            json!({"projectId": "p", "userData": {"companyName": "  ", "company": "Alias"}}),
        );
        assert_eq!(
            Value::Object(lead.data.user_data),
            json!({"companyName": "Alias"})
        );
    }

    #[test]
    fn strings_are_trimmed_and_empty_or_null_values_dropped() {
        let lead = browser(json!({
            "projectId": "p",
            "userData": {"firstName": "  Ada ", "lastName": "", "email": null, "tags": ["a"], "age": 36, "note": "  "},
            "attributionData": {"gclid": " G ", "fbp": "", "utm_source": " news ", "fbclid": null},
            "deviceData": {"ipAddress": " 192.0.2.1 ", "userAgent": "", "other": 1},
        }));
        assert_eq!(
            Value::Object(lead.data.user_data),
            json!({"firstName": "Ada", "tags": ["a"], "age": 36})
        );
        assert_eq!(
            Value::Object(lead.data.attribution_data),
            json!({"gclid": "G", "utm_source": "news"})
        );
        assert_eq!(
            lead.data.device_data,
            DeviceData {
                ip_address: Some("192.0.2.1".into()),
                user_agent: None
            }
        );
    }

    #[test]
    fn form_data_is_kept_exactly() {
        let form = json!({"formName": " Contact ", "uniqueEventId": "e-1", "x": null, "nested": {"a": ""}});
        let lead = browser(json!({"projectId": "p", "userData": {"email": "a"}, "formData": form}));
        assert_eq!(Value::Object(lead.data.form_data.clone()), form);
        assert_eq!(lead.data.form_name(), Some("Contact"));
        assert_eq!(lead.data.unique_event_id(), Some("e-1"));
    }

    #[test]
    fn channel_flow_arrays_and_objects_are_stored_as_compact_json() {
        let flow = json!([{"t": 1_700_000_000, "ch": {"s": "google", "m": "cpc", "cm": "", "ct": "", "tm": ""}, "lp": "/"}]);
        let lead =
            browser(json!({"projectId": "p", "userData": {"email": "a"}, "channelFlow": flow}));
        assert_eq!(
            lead.data.channel_flow.as_deref(),
            Some(
                r#"[{"t":1700000000,"ch":{"s":"google","m":"cpc","cm":"","ct":"","tm":""},"lp":"/"}]"#
            )
        );
        let lead =
            browser(json!({"projectId": "p", "userData": {"email": "a"}, "channelFlow": {"a": 1}}));
        assert_eq!(lead.data.channel_flow.as_deref(), Some(r#"{"a":1}"#));
        let err = error(
            json!({"projectId": "p", "userData": {"email": "a"}, "channelFlow": 5}),
            CreateRoute::Browser,
        );
        assert_eq!(err.errors[0].field, "channelFlow");
    }

    #[test]
    fn empty_arrays_count_as_empty_objects() {
        let lead = browser(json!({
            "projectId": "p", "userData": [], "attributionData": {"gclid": "G"},
            "formData": [], "deviceData": []
        }));
        assert!(lead.data.user_data.is_empty());
        assert!(lead.data.form_data.is_empty());
        let err = error(
            json!({"projectId": "p", "userData": ["x"]}),
            CreateRoute::Browser,
        );
        assert_eq!(err.code, ErrorCode::InvalidField);
        assert_eq!(
            err.message,
            "Invalid field: userData must be an object, not an array"
        );
    }

    #[test]
    fn wrong_types_are_invalid_fields_naming_each_field() {
        let err = error(
            json!({
                "projectId": "p",
                "userData": {"email": 5, "phone": true, "custom": 5},
                "attributionData": {"gclid": ["G"], "gbraid": 7},
                "formData": {"formName": 1, "uniqueEventId": {}},
                "deviceData": {"userAgent": 3},
                "uniqueIdentifier": 12
            }),
            CreateRoute::Browser,
        );
        assert_eq!(err.code, ErrorCode::InvalidField);
        let fields: Vec<&str> = err.errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "userData.email",
                "userData.phone",
                "attributionData.gclid",
                "formData.formName",
                "formData.uniqueEventId",
                "deviceData.userAgent",
                "uniqueIdentifier",
            ]
        );
        assert_eq!(
            err.message,
            "Invalid field: userData.email must be a string, not a number (and 6 more)"
        );
    }

    #[test]
    fn consent_is_granted_or_denied_per_signal() {
        let lead = browser(json!({
            "projectId": "p", "userData": {"email": "a"},
            "consent": {"adUserData": " Granted", "adPersonalization": "denied", "analytics": "x"}
        }));
        assert_eq!(
            lead.data.consent,
            Consent {
                ad_user_data: Some(ConsentStatus::Granted),
                ad_personalization: Some(ConsentStatus::Denied),
            }
        );
        let partial = browser(json!({
            "projectId": "p", "userData": {"email": "a"}, "consent": {"adUserData": "denied", "adPersonalization": null}
        }));
        assert_eq!(partial.data.consent.ad_personalization, None);
        let none = browser(json!({"projectId": "p", "userData": {"email": "a"}, "consent": null}));
        assert!(none.data.consent.is_empty());

        let err = error(
            json!({"projectId": "p", "userData": {"email": "a"},
                   "consent": {"adUserData": "yes", "adPersonalization": true}}),
            CreateRoute::Browser,
        );
        assert_eq!(err.code, ErrorCode::InvalidField);
        assert_eq!(
            err.message,
            "Invalid field: consent.adUserData must be \"granted\" or \"denied\", not \"yes\" (and 1 more)"
        );
        assert_eq!(err.errors[1].field, "consent.adPersonalization");
        let err = error(
            json!({"userData": {"email": "a"}, "consent": "granted"}),
            CreateRoute::Server,
        );
        assert_eq!(err.errors[0].field, "consent");
    }

    #[test]
    fn identifiers_are_limited_to_255_characters() {
        let ok = "é".repeat(255);
        let lead = browser(
            json!({"projectId": "p", "userData": {"email": "a"}, "uniqueIdentifier": ok, "formData": {"uniqueEventId": ok}}),
        );
        assert_eq!(lead.data.unique_identifier.as_deref(), Some(ok.as_str()));
        let long = "x".repeat(256);
        for body in [
            json!({"projectId": "p", "userData": {"email": "a"}, "uniqueIdentifier": long}),
            json!({"projectId": "p", "userData": {"email": "a"}, "formData": {"uniqueEventId": long}}),
        ] {
            let err = error(body, CreateRoute::Browser);
            assert_eq!(err.code, ErrorCode::InvalidField);
            assert!(
                err.message.ends_with("must be at most 255 characters"),
                "{}",
                err.message
            );
        }
    }

    #[test]
    fn at_least_one_of_user_or_attribution_data_must_hold_data() {
        for body in [
            json!({"projectId": "p"}),
            json!({"projectId": "p", "userData": {}, "attributionData": {}}),
            json!({"projectId": "p", "userData": {"email": "  "}, "attributionData": {"gclid": "", "fbc": null}}),
            json!({"projectId": "p", "userData": {"tags": []}, "formData": {"formName": "x"}}),
        ] {
            let err = error(body.clone(), CreateRoute::Browser);
            assert_eq!(err.code, ErrorCode::NoLeadData, "{body}");
            assert_eq!(
                err.message,
                "At least one of userData or attributionData must contain data"
            );
        }
        browser(json!({"projectId": "p", "attributionData": {"gclid": "G"}}));
        browser(json!({"projectId": "p", "userData": {"custom": 0}}));
    }

    #[test]
    fn odd_emails_and_phones_are_accepted() {
        let lead = browser(
            json!({"projectId": "p", "userData": {"email": "not an email", "phone": "call me"}}),
        );
        assert_eq!(lead.data.user("email"), Some("not an email"));
    }

    #[test]
    fn unknown_top_level_properties_are_ignored() {
        let lead =
            browser(json!({"projectId": "p", "userData": {"email": "a"}, "extra": {"x": 1}}));
        assert_eq!(lead.data.user("email"), Some("a"));
    }

    /// CONTRACT.md section 9: the tag-manager tag.
    #[test]
    fn tag_manager_payload() {
        let lead = browser(json!({
            "projectId": "prj_demo",
            "formData": {
                "formName": "undefined form name",
                "uniqueEventId": "gtm-1700000000000-abc",
                "formFields": {"message": "Hello", "budget": "10k"}
            },
            "userData": {"email": "ada@example.com", "phone": "+44 20 7946 0958", "firstName": "Ada", "lastName": "Lovelace", "newsletter": "yes"},
            "channelFlow": [
                {"t": 1_700_000_000_000_u64, "ch": {"s": "google", "m": "cpc", "cm": "spring", "ct": "", "tm": ""}, "lp": "https://example.com/?gclid=G"},
                {"t": 1_700_000_500_000_u64, "ch": {"s": "(direct)", "m": "(none)", "cm": "", "ct": "", "tm": ""}, "lp": "https://example.com/contact"}
            ],
            "attributionData": {"fbc": "", "fbp": "fb.1.1700000000000.123", "gclid": "G-CLICK", "wbraid": "", "cid": "123.456"}
        }));
        assert_eq!(
            Value::Object(lead.data.attribution_data.clone()),
            json!({"fbp": "fb.1.1700000000000.123", "gclid": "G-CLICK", "cid": "123.456"})
        );
        assert_eq!(lead.data.unique_event_id(), Some("gtm-1700000000000-abc"));
        assert_eq!(lead.data.form_name(), Some("undefined form name"));
        assert_eq!(lead.data.user("newsletter"), Some("yes"));
        assert!(
            lead.data
                .channel_flow
                .unwrap()
                .starts_with(r#"[{"t":1700000000000,"ch":{"s":"google""#)
        );
    }

    /// CONTRACT.md section 9: the WordPress plugin, with and without attribution.
    #[test]
    fn wordpress_payloads() {
        let lead = browser(json!({
            "projectId": "prj_demo",
            "formData": {"formId": 12, "formName": "Contact", "customFormName": "Kontakt", "formFields": [{"name": "Ada"}, {"message": "Hi"}]},
            "userData": {"email": "ada@example.com", "company": "Analytical Engines Ltd"},
            "deviceData": {"ipAddress": "203.0.113.9", "userAgent": "Mozilla/5.0"},
            "attributionData": [],
            "lt_channelflow": "%5B%7B%22t%22%3A1700000000000%7D%5D"
        }));
        assert_eq!(
            lead.data.user("companyName"),
            Some("Analytical Engines Ltd")
        );
        assert!(lead.data.attribution_data.is_empty());
        assert_eq!(
            lead.data.device_data.ip_address.as_deref(),
            Some("203.0.113.9")
        );
        assert_eq!(
            lead.data.channel_flow.as_deref(),
            Some("%5B%7B%22t%22%3A1700000000000%7D%5D")
        );
        assert_eq!(
            lead.data.form_data["formFields"],
            json!([{"name": "Ada"}, {"message": "Hi"}])
        );

        let lead = browser(json!({
            "projectId": "prj_demo",
            "formData": {"formId": "3", "formName": "Quote", "customFormName": "", "formFields": []},
            "userData": [],
            "deviceData": {"ipAddress": "203.0.113.9", "userAgent": "Mozilla/5.0"},
            "attributionData": {"gclid": "G-WP", "fbc": "fb.1.1700000000000.IwAR"}
        }));
        assert!(lead.data.user_data.is_empty());
        assert_eq!(lead.data.attribution("gclid"), Some("G-WP"));

        let err = error(
            json!({"projectId": "prj_demo", "userData": [], "attributionData": []}),
            CreateRoute::Browser,
        );
        assert_eq!(err.code, ErrorCode::NoLeadData);
    }

    #[test]
    fn invalid_json_bodies() {
        for body in [&b"not json"[..], b"[1,2]", b"\"x\"", b"", b"null"] {
            let err = NewLead::parse(body, CreateRoute::Browser).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidJson);
        }
    }
}
