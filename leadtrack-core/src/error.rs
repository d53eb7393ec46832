//! The contract's error codes and the validation error every parser in this crate returns.

use serde::{Deserialize, Serialize};
use strum::{AsRefStr, Display, VariantArray};

/// The stable, machine-readable `code` of an error body (CONTRACT.md section 7).
///
/// Each code has exactly one HTTP status, so the HTTP layer maps errors in one place
/// ([`ErrorCode::http_status`]) and the typed client can match on codes.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, AsRefStr, Display, VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ErrorCode {
    /// The body is not a JSON object.
    InvalidJson,
    /// A required property is absent.
    MissingField,
    /// A property has the wrong type or value.
    InvalidField,
    /// Neither `userData` nor `attributionData` holds data.
    NoLeadData,
    /// No lead identifier was given.
    MissingIdentifier,
    /// A query parameter is invalid.
    InvalidQuery,
    /// The request is not HTTP the server can read (the HTTP layer's answer, any path).
    BadRequest,
    /// The `X-API-Key` header is missing or empty.
    MissingApiKey,
    /// The API key is unknown or revoked.
    InvalidApiKey,
    /// The body's `projectId` is not the key's project.
    ProjectMismatch,
    /// The project is deactivated.
    ProjectInactive,
    /// A browser's `Origin` is not among the project's allowed origins (an addition).
    OriginNotAllowed,
    /// The `projectId` is unknown.
    ProjectNotFound,
    /// No such lead in the key's project.
    LeadNotFound,
    /// No such conversion label in the key's project.
    ConversionLabelNotFound,
    /// No such REST hook in the key's project (an addition).
    HookNotFound,
    /// Wrong method on one of the lead paths.
    MethodNotAllowed,
    /// The lead already has an unfinished conversion job.
    JobPending,
    /// The project has as many REST hooks as it may (an addition).
    TooManyHooks,
    /// The body is over the size limit.
    PayloadTooLarge,
    /// The request's content type is not accepted.
    UnsupportedMediaType,
    /// The request's URL is too long (the HTTP layer's answer, any path).
    UriTooLong,
    /// The request's header fields are too many or too large (the HTTP layer's answer).
    HeadersTooLarge,
    /// Too many requests.
    RateLimited,
    /// No such path (the standalone server's answer outside the lead routes).
    NotFound,
    /// An unexpected failure.
    Internal,
    /// The service is overloaded or shutting down.
    Unavailable,
    /// A code this version does not know (a newer server); only produced when decoding.
    #[serde(other)]
    Unknown,
}

impl ErrorCode {
    /// The HTTP status that carries this code.
    pub fn http_status(self) -> u16 {
        match self {
            Self::InvalidJson
            | Self::MissingField
            | Self::InvalidField
            | Self::NoLeadData
            | Self::MissingIdentifier
            | Self::InvalidQuery
            | Self::BadRequest => 400,
            Self::MissingApiKey | Self::InvalidApiKey => 401,
            Self::ProjectMismatch | Self::ProjectInactive | Self::OriginNotAllowed => 403,
            Self::ProjectNotFound
            | Self::LeadNotFound
            | Self::ConversionLabelNotFound
            | Self::HookNotFound
            | Self::NotFound => 404,
            Self::MethodNotAllowed => 405,
            Self::JobPending | Self::TooManyHooks => 409,
            Self::PayloadTooLarge => 413,
            Self::UnsupportedMediaType => 415,
            Self::UriTooLong => 414,
            Self::HeadersTooLarge => 431,
            Self::RateLimited => 429,
            Self::Internal | Self::Unknown => 500,
            Self::Unavailable => 503,
        }
    }
}

/// One offending field of a validation error: `{"field": "userData.email", "message": "..."}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    /// The property's path, dotted for nested properties (`userData.email`) or the query
    /// parameter's name (`createdAt[gte]`).
    pub field: String,
    /// What is wrong with it, for people.
    pub message: String,
}

/// A request that breaks an input rule of the contract: a 400 with its `code`.
///
/// `message` is the sentence for people; `errors` lists every offending field found (the
/// first one is the one `message` names).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ValidationError {
    /// The contract's code (always one of the 400 codes).
    pub code: ErrorCode,
    /// The sentence for people.
    pub message: String,
    /// The offending fields, when the error is about fields.
    pub errors: Vec<FieldError>,
}

impl ValidationError {
    fn for_field(code: ErrorCode, message: String, field: &str, detail: String) -> Self {
        Self {
            code,
            message,
            errors: vec![FieldError {
                field: field.to_owned(),
                message: detail,
            }],
        }
    }

    /// The body is not valid JSON, or not a JSON object.
    pub fn invalid_json(detail: impl std::fmt::Display) -> Self {
        Self {
            code: ErrorCode::InvalidJson,
            message: format!("Request body must be a JSON object: {detail}"),
            errors: Vec::new(),
        }
    }

    /// A required property is absent: `Missing required field: projectId`.
    pub fn missing_field(field: &str) -> Self {
        Self::for_field(
            ErrorCode::MissingField,
            format!("Missing required field: {field}"),
            field,
            "is required".to_owned(),
        )
    }

    /// A property has the wrong type or value; `detail` completes "`field` ...".
    pub fn invalid_field(field: &str, detail: &str) -> Self {
        Self::for_field(
            ErrorCode::InvalidField,
            format!("Invalid field: {field} {detail}"),
            field,
            detail.to_owned(),
        )
    }

    /// Several properties have wrong types or values; the message names the first.
    ///
    /// `errors` must not be empty.
    pub fn invalid_fields(errors: Vec<FieldError>) -> Self {
        let message = match errors.first() {
            Some(first) if errors.len() == 1 => {
                format!("Invalid field: {} {}", first.field, first.message)
            }
            Some(first) => format!(
                "Invalid field: {} {} (and {} more)",
                first.field,
                first.message,
                errors.len() - 1
            ),
            None => "Invalid field".to_owned(),
        };
        Self {
            code: ErrorCode::InvalidField,
            message,
            errors,
        }
    }

    /// A query parameter is invalid; `detail` completes "`param` ...".
    pub fn invalid_query(param: &str, detail: &str) -> Self {
        Self::for_field(
            ErrorCode::InvalidQuery,
            format!("Invalid query parameter: {param} {detail}"),
            param,
            detail.to_owned(),
        )
    }

    /// Neither `userData` nor `attributionData` holds data.
    pub fn no_lead_data() -> Self {
        Self {
            code: ErrorCode::NoLeadData,
            message: "At least one of userData or attributionData must contain data".to_owned(),
            errors: Vec::new(),
        }
    }

    /// None of `leadId`, `uniqueIdentifier`, `email`, `phone` was given.
    pub fn missing_identifier() -> Self {
        Self {
            code: ErrorCode::MissingIdentifier,
            message: "Missing lead identifier: one of leadId, uniqueIdentifier, email or phone is required"
                .to_owned(),
            errors: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_serialize_as_their_wire_names_and_map_to_one_status() {
        let all = [
            (ErrorCode::InvalidJson, 400),
            (ErrorCode::MissingField, 400),
            (ErrorCode::InvalidField, 400),
            (ErrorCode::NoLeadData, 400),
            (ErrorCode::MissingIdentifier, 400),
            (ErrorCode::InvalidQuery, 400),
            (ErrorCode::BadRequest, 400),
            (ErrorCode::MissingApiKey, 401),
            (ErrorCode::InvalidApiKey, 401),
            (ErrorCode::ProjectMismatch, 403),
            (ErrorCode::ProjectInactive, 403),
            (ErrorCode::OriginNotAllowed, 403),
            (ErrorCode::ProjectNotFound, 404),
            (ErrorCode::LeadNotFound, 404),
            (ErrorCode::ConversionLabelNotFound, 404),
            (ErrorCode::MethodNotAllowed, 405),
            (ErrorCode::JobPending, 409),
            (ErrorCode::PayloadTooLarge, 413),
            (ErrorCode::UnsupportedMediaType, 415),
            (ErrorCode::UriTooLong, 414),
            (ErrorCode::HeadersTooLarge, 431),
            (ErrorCode::RateLimited, 429),
            (ErrorCode::NotFound, 404),
            (ErrorCode::Internal, 500),
            (ErrorCode::Unavailable, 503),
        ];
        for (code, status) in all {
            assert_eq!(code.http_status(), status, "{code}");
            let json = serde_json::to_string(&code).unwrap();
            assert_eq!(json, format!("\"{}\"", code.as_ref()));
            let back: ErrorCode = serde_json::from_str(&json).unwrap();
            assert_eq!(back, code);
        }
    }

    #[test]
    fn wire_names_are_snake_case() {
        assert_eq!(
            ErrorCode::ConversionLabelNotFound.as_ref(),
            "conversion_label_not_found"
        );
        assert_eq!(ErrorCode::InvalidApiKey.to_string(), "invalid_api_key");
    }

    #[test]
    fn unknown_codes_decode_as_unknown() {
        let code: ErrorCode = serde_json::from_str("\"quota_exceeded\"").unwrap();
        assert_eq!(code, ErrorCode::Unknown);
    }

    #[test]
    fn messages_name_the_field() {
        assert_eq!(
            ValidationError::missing_field("projectId").message,
            "Missing required field: projectId"
        );
        let err = ValidationError::invalid_field("userData.email", "must be a string");
        assert_eq!(
            err.message,
            "Invalid field: userData.email must be a string"
        );
        assert_eq!(err.errors[0].field, "userData.email");
        let err = ValidationError::invalid_fields(vec![
            FieldError {
                field: "a".into(),
                message: "must be a string".into(),
            },
            FieldError {
                field: "b".into(),
                message: "must be an object".into(),
            },
        ]);
        assert_eq!(
            err.message,
            "Invalid field: a must be a string (and 1 more)"
        );
    }
}
