//! Reading properties out of a raw JSON body, with the contract's rules for `null`, `[]`,
//! aliases and field-naming errors. Shared by the create and status-update parsers.

use serde_json::{Map, Value};

use crate::error::{FieldError, ValidationError};
use crate::types::JsonObject;

/// Parses a request body into its top-level JSON object, or `invalid_json`.
pub(crate) fn parse_object(body: &[u8]) -> Result<JsonObject, ValidationError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(ValidationError::invalid_json(format_args!(
            "found {}",
            type_name(&other)
        ))),
        Err(err) => Err(ValidationError::invalid_json(err)),
    }
}

/// The JSON type of `value`, as error messages name it.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Collects the field errors of one body, so a caller learns every problem at once.
#[derive(Default)]
pub(crate) struct Errors(Vec<FieldError>);

impl Errors {
    /// Records that `field` `detail` (e.g. "userData.email", "must be a string").
    pub(crate) fn push(&mut self, field: impl Into<String>, detail: impl Into<String>) {
        self.0.push(FieldError {
            field: field.into(),
            message: detail.into(),
        });
    }

    /// Whether an error about `field` was recorded.
    pub(crate) fn mentions(&self, field: &str) -> bool {
        self.0.iter().any(|e| e.field == field)
    }

    /// `Ok(value)` when nothing was recorded, else `invalid_field` listing every error.
    pub(crate) fn finish<T>(self, value: T) -> Result<T, ValidationError> {
        if self.0.is_empty() {
            Ok(value)
        } else {
            Err(ValidationError::invalid_fields(self.0))
        }
    }
}

/// Removes `name` (or, when it is absent or `null`, `alias`) from `map`; `null` counts as absent.
///
/// The primary name wins over the alias; the alias is removed either way.
pub(crate) fn take(map: &mut JsonObject, name: &str, alias: Option<&str>) -> Option<Value> {
    let primary = map.shift_remove(name).filter(|v| !v.is_null());
    let secondary = alias
        .and_then(|alias| map.shift_remove(alias))
        .filter(|v| !v.is_null());
    primary.or(secondary)
}

/// Takes an optional string property; another type is recorded as an error.
pub(crate) fn take_string(
    map: &mut JsonObject,
    name: &str,
    alias: Option<&str>,
    path: &str,
    errors: &mut Errors,
) -> Option<String> {
    match take(map, name, alias)? {
        Value::String(s) => Some(s),
        other => {
            errors.push(path, format!("must be a string, not {}", type_name(&other)));
            None
        }
    }
}

/// Takes an optional object property; `[]` counts as an empty object (PHP's empty map).
pub(crate) fn take_object(
    map: &mut JsonObject,
    name: &str,
    errors: &mut Errors,
) -> Option<JsonObject> {
    match take(map, name, None)? {
        Value::Object(object) => Some(object),
        Value::Array(items) if items.is_empty() => Some(Map::new()),
        other => {
            errors.push(
                name,
                format!("must be an object, not {}", type_name(&other)),
            );
            None
        }
    }
}

/// Trims a string; an empty result counts as absent.
pub(crate) fn non_empty_trimmed(s: &str) -> Option<String> {
    let trimmed = s.trim();
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}

/// Checks a length limit in characters (not bytes).
pub(crate) fn check_max_chars(value: &str, max: usize, path: &str, errors: &mut Errors) {
    if value.chars().count() > max {
        errors.push(path, format!("must be at most {max} characters"));
    }
}

/// A JSON number or digit string that is a positive integer: lead ids.
pub(crate) fn positive_integer(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => whole_number(n).filter(|id| *id > 0),
        Value::String(s) => parse_positive_digits(s),
        _ => None,
    }
}

/// A string of ASCII digits, nothing else (no sign, no spaces), that is a positive `i64`.
pub(crate) fn parse_positive_digits(s: &str) -> Option<i64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<i64>().ok().filter(|id| *id > 0)
}

/// A JSON number without a fractional part, within `i64` (`5000` and `5000.0` alike).
pub(crate) fn whole_number(n: &serde_json::Number) -> Option<i64> {
    if let Some(i) = n.as_i64() {
        return Some(i);
    }
    // 2^63 is exactly representable; every float below it with no fraction fits an i64.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    let f = n.as_f64()?;
    (f.fract() == 0.0 && f > -LIMIT && f < LIMIT).then_some(f as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> JsonObject {
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    #[test]
    fn body_must_be_a_json_object() {
        assert!(parse_object(br#"{"a":1}"#).is_ok());
        for body in [&b"[]"[..], b"\"text\"", b"42", b"null", b"{", b"", b"\xff"] {
            let err = parse_object(body).unwrap_err();
            assert_eq!(err.code, crate::error::ErrorCode::InvalidJson, "{body:?}");
        }
    }

    #[test]
    fn primary_name_wins_and_null_counts_as_absent() {
        let mut map = object(json!({"channelFlow": "a", "lt_channelflow": "b"}));
        assert_eq!(
            take(&mut map, "channelFlow", Some("lt_channelflow")),
            Some(json!("a"))
        );
        assert!(map.is_empty(), "the alias is consumed too");

        let mut map = object(json!({"channelFlow": null, "lt_channelflow": "b"}));
        assert_eq!(
            take(&mut map, "channelFlow", Some("lt_channelflow")),
            Some(json!("b"))
        );
    }

    #[test]
    fn empty_array_is_an_empty_object() {
        let mut errors = Errors::default();
        let mut map = object(json!({"userData": [], "formData": [1], "deviceData": "x"}));
        assert_eq!(
            take_object(&mut map, "userData", &mut errors),
            Some(Map::new())
        );
        assert_eq!(take_object(&mut map, "formData", &mut errors), None);
        assert_eq!(take_object(&mut map, "deviceData", &mut errors), None);
        let err = errors.finish(()).unwrap_err();
        assert_eq!(err.errors.len(), 2);
        assert_eq!(err.errors[0].field, "formData");
        assert_eq!(err.errors[1].message, "must be an object, not a string");
    }

    #[test]
    fn whole_numbers_and_lead_ids() {
        assert_eq!(positive_integer(&json!(42)), Some(42));
        assert_eq!(positive_integer(&json!(42.0)), Some(42));
        assert_eq!(positive_integer(&json!("42")), Some(42));
        for bad in [
            json!(" 42 "),
            json!(" 1"),
            json!("1\n"),
            json!(0),
            json!(-1),
            json!(4.5),
            json!("0"),
            json!("-3"),
            json!("+3"),
            json!("4.0"),
            json!(""),
            json!("99999999999999999999"),
            json!(true),
            json!(null),
        ] {
            assert_eq!(positive_integer(&bad), None, "{bad}");
        }
        let big: Value = serde_json::from_str("1e300").unwrap();
        assert_eq!(positive_integer(&big), None);
    }
}
