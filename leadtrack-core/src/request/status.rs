//! The body of updateLeadStatus, validated by CONTRACT.md section 5.

use serde_json::Value;

use super::fields::{self, Errors};
use crate::error::ValidationError;
use crate::types::{ConversionId, JsonObject, LeadId, LeadIdentifier};

/// A validated status update.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusUpdate {
    /// The lead, by the first identifier present.
    pub identifier: LeadIdentifier,
    /// `open`, `lost` or a label.
    pub conversion_id: ConversionId,
    /// A new price in cents, when given.
    pub price: Option<i64>,
    /// A new note when given: `Some(None)` clears it (an empty string was sent).
    pub note: Option<Option<String>>,
}

impl StatusUpdate {
    /// Validates a raw request body.
    pub fn parse(body: &[u8]) -> Result<Self, ValidationError> {
        Self::from_object(fields::parse_object(body)?)
    }

    /// Validates a body already parsed into a JSON object.
    pub fn from_object(mut body: JsonObject) -> Result<Self, ValidationError> {
        let mut errors = Errors::default();
        let identifier = take_identifier(&mut body, &mut errors);
        let conversion =
            fields::take_string(&mut body, "conversionId", None, "conversionId", &mut errors)
                .and_then(|text| match text.trim().parse::<ConversionId>() {
                    Ok(id) => Some(id),
                    Err(_) => {
                        errors.push(
                            "conversionId",
                            "must be \"open\", \"lost\" or the UUID of a conversion label",
                        );
                        None
                    }
                });
        let price = fields::take(&mut body, "price", None).and_then(|value| {
            let cents = match &value {
                Value::Number(n) => fields::whole_number(n).filter(|cents| *cents >= 0),
                _ => None,
            };
            if cents.is_none() {
                errors.push("price", "must be a non-negative whole number of cents");
            }
            cents
        });
        let note = fields::take_string(&mut body, "note", None, "note", &mut errors)
            .map(|text| fields::non_empty_trimmed(&text));
        // Wrong types and values first; an invalid conversionId was reported there, so a
        // `None` left here means it was absent.
        let (identifier, conversion_id) = errors.finish((identifier, conversion))?;
        let identifier = identifier.ok_or_else(ValidationError::missing_identifier)?;
        let conversion_id =
            conversion_id.ok_or_else(|| ValidationError::missing_field("conversionId"))?;
        Ok(Self {
            identifier,
            conversion_id,
            price,
            note,
        })
    }
}

/// The person a privacy request's body names (`POST /api/privacy/erase`, CONTRACT.md
/// section 14): the first of `leadId`, `uniqueIdentifier`, `email` and `phone` present, as
/// updateLeadStatus reads them (the others, when given, must be strings or `null` too); any
/// other property is ignored.
///
/// Errors: `400 invalid_json`, `invalid_field` for an identifier of the wrong type, and
/// `missing_identifier` when none is present.
pub fn person_from_body(body: &[u8]) -> Result<LeadIdentifier, ValidationError> {
    let mut body = fields::parse_object(body)?;
    let mut errors = Errors::default();
    let identifier = take_identifier(&mut body, &mut errors);
    // An erasure names one person: an identifier after the one used must still be a
    // string, or the request is not what its sender meant.
    for name in ["uniqueIdentifier", "email", "phone"] {
        if let Some(value) = body.get(name).filter(|v| !v.is_string() && !v.is_null()) {
            let message = format!("must be a string, not {}", fields::type_name(value));
            errors.push(name, message);
        }
    }
    errors
        .finish(identifier)?
        .ok_or_else(ValidationError::missing_identifier)
}

/// The first identifier present, in priority order; the others are ignored.
fn take_identifier(body: &mut JsonObject, errors: &mut Errors) -> Option<LeadIdentifier> {
    if let Some(value) = fields::take(body, "leadId", None) {
        return match fields::positive_integer(&value) {
            Some(id) => Some(LeadIdentifier::LeadId(LeadId(id))),
            None => {
                errors.push("leadId", "must be a positive integer");
                None
            }
        };
    }
    type Make = fn(String) -> LeadIdentifier;
    let text_identifiers: [(&str, Make); 3] = [
        ("uniqueIdentifier", LeadIdentifier::UniqueIdentifier),
        ("email", LeadIdentifier::Email),
        ("phone", LeadIdentifier::Phone),
    ];
    for (name, make) in text_identifiers {
        match fields::take(body, name, None) {
            None => continue,
            Some(Value::String(text)) => match fields::non_empty_trimmed(&text) {
                Some(text) => return Some(make(text)),
                None => continue,
            },
            Some(other) => {
                errors.push(
                    name,
                    format!("must be a string, not {}", fields::type_name(&other)),
                );
                return None;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use serde_json::json;
    use uuid::Uuid;

    const LABEL: &str = "0b8f6f0c-5d5c-4f4e-9a0e-5f2b8a7d9c11";

    fn parse(body: Value) -> Result<StatusUpdate, ValidationError> {
        StatusUpdate::parse(body.to_string().as_bytes())
    }

    #[test]
    fn lead_id_as_number_or_digit_string() {
        for id in [json!(42), json!("42"), json!(42.0)] {
            let update = parse(json!({"leadId": id, "conversionId": "open"})).unwrap();
            assert_eq!(update.identifier, LeadIdentifier::LeadId(LeadId(42)));
        }
        for id in [
            json!(0),
            json!(-1),
            json!("4x"),
            json!(1.5),
            json!(true),
            json!(" 1"),
            json!("1 "),
        ] {
            let err = parse(json!({"leadId": id, "conversionId": "open"})).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidField);
            assert_eq!(err.errors[0].field, "leadId");
        }
    }

    #[test]
    fn first_identifier_present_wins() {
        let update = parse(json!({
            "phone": "+1 555", "email": "a@x.io", "uniqueIdentifier": "crm-1", "conversionId": "lost"
        }))
        .unwrap();
        assert_eq!(
            update.identifier,
            LeadIdentifier::UniqueIdentifier("crm-1".into())
        );
        let update = parse(json!({"leadId": null, "uniqueIdentifier": " ", "email": "a@x.io", "phone": 5, "conversionId": "lost"})).unwrap();
        assert_eq!(update.identifier, LeadIdentifier::Email("a@x.io".into()));
        let update = parse(json!({"phone": "+1 555", "conversionId": "lost"})).unwrap();
        assert_eq!(update.identifier, LeadIdentifier::Phone("+1 555".into()));
    }

    #[test]
    fn a_privacy_request_names_a_person_by_the_first_identifier_present() {
        let person = |body: &str| person_from_body(body.as_bytes());
        assert_eq!(
            person(r#"{"email": " ada@example.com ", "phone": "0151"}"#),
            Ok(LeadIdentifier::Email("ada@example.com".into()))
        );
        assert_eq!(
            person(r#"{"leadId": "42", "email": "ada@example.com"}"#),
            Ok(LeadIdentifier::LeadId(LeadId(42)))
        );
        let codes = |body: &str| person(body).unwrap_err().code;
        assert_eq!(codes("{}"), ErrorCode::MissingIdentifier);
        assert_eq!(codes(r#"{"email": "  "}"#), ErrorCode::MissingIdentifier);
        assert_eq!(codes(r#"{"phone": 151}"#), ErrorCode::InvalidField);
        assert_eq!(
            codes(r#"{"leadId": 1, "email": "", "phone": {}}"#),
            ErrorCode::InvalidField,
            "every identifier given is checked"
        );
        assert_eq!(codes("[]"), ErrorCode::InvalidJson);
    }

    #[test]
    fn missing_identifier_and_missing_conversion() {
        let err = parse(json!({"conversionId": "open"})).unwrap_err();
        assert_eq!(err.code, ErrorCode::MissingIdentifier);
        let err = parse(json!({"leadId": 1})).unwrap_err();
        assert_eq!(err.code, ErrorCode::MissingField);
        assert_eq!(err.message, "Missing required field: conversionId");
        let err = parse(json!({"leadId": 1, "conversionId": null})).unwrap_err();
        assert_eq!(err.code, ErrorCode::MissingField);
    }

    #[test]
    fn conversion_ids() {
        let update = parse(json!({"leadId": 1, "conversionId": LABEL})).unwrap();
        assert_eq!(
            update.conversion_id,
            ConversionId::Label(Uuid::parse_str(LABEL).unwrap())
        );
        assert_eq!(
            parse(json!({"leadId": 1, "conversionId": "lost"}))
                .unwrap()
                .conversion_id,
            ConversionId::Lost
        );
        for bad in [
            json!("rated"),
            json!("OPEN"),
            json!("123"),
            json!(5),
            json!(""),
        ] {
            let err = parse(json!({"leadId": 1, "conversionId": bad})).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidField, "{bad}");
            assert_eq!(err.errors[0].field, "conversionId");
        }
    }

    #[test]
    fn price_is_whole_non_negative_cents() {
        for (price, cents) in [(json!(5000), 5000), (json!(5000.0), 5000), (json!(0), 0)] {
            let update =
                parse(json!({"leadId": 1, "conversionId": "open", "price": price})).unwrap();
            assert_eq!(update.price, Some(cents));
        }
        let update = parse(json!({"leadId": 1, "conversionId": "open", "price": null})).unwrap();
        assert_eq!(update.price, None);
        for bad in [
            json!(50.5),
            json!(-1),
            json!("5000"),
            json!(true),
            json!([]),
        ] {
            let err =
                parse(json!({"leadId": 1, "conversionId": "open", "price": bad})).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidField, "{bad}");
            assert_eq!(
                err.message,
                "Invalid field: price must be a non-negative whole number of cents"
            );
        }
    }

    #[test]
    fn notes_replace_and_empty_notes_clear() {
        let update =
            parse(json!({"leadId": 1, "conversionId": "open", "note": " Called back "})).unwrap();
        assert_eq!(update.note, Some(Some("Called back".into())));
        let update = parse(json!({"leadId": 1, "conversionId": "open", "note": ""})).unwrap();
        assert_eq!(update.note, Some(None));
        let update = parse(json!({"leadId": 1, "conversionId": "open"})).unwrap();
        assert_eq!(update.note, None);
        let err = parse(json!({"leadId": 1, "conversionId": "open", "note": 3})).unwrap_err();
        assert_eq!(err.errors[0].field, "note");
    }

    #[test]
    fn invalid_json() {
        assert_eq!(
            StatusUpdate::parse(b"[]").unwrap_err().code,
            ErrorCode::InvalidJson
        );
        assert_eq!(
            StatusUpdate::parse(b"{").unwrap_err().code,
            ErrorCode::InvalidJson
        );
    }
}
