//! Responses: JSON bodies, the contract's error replies, and CORS headers.

use leadtrack_core::api::{ErrorBody, messages};
use leadtrack_core::store::{Conflict, Entity};
use leadtrack_core::{ErrorCode, StoreError, ValidationError};
use warp::http::header::{self, HeaderMap, HeaderValue};
use warp::http::{Method, StatusCode};
use warp::reply::Response;

use crate::CorsOrigins;

pub(crate) use leadtrack_http::json;

/// An error answer: a status, the contract's error body, and the headers some codes need.
#[derive(Debug)]
pub(crate) struct ApiError {
    body: ErrorBody,
    allow: Option<String>,
    retry_after: Option<u32>,
}

impl ApiError {
    /// An error with the code's status and a message.
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            body: ErrorBody::new(code, message),
            allow: None,
            retry_after: None,
        }
    }

    /// `500 internal`, with nothing of the cause (the caller logs it).
    pub(crate) fn internal() -> Self {
        Self::new(ErrorCode::Internal, "Internal server error")
    }

    /// `503 unavailable` with `Retry-After: 1`: overloaded, or not ready.
    pub(crate) fn unavailable(message: &str) -> Self {
        Self {
            retry_after: Some(1),
            ..Self::new(ErrorCode::Unavailable, message)
        }
    }

    /// `405`, with the `Allow` header: the `allowed` methods, and `OPTIONS`.
    pub(crate) fn method_not_allowed(allowed: &[Method]) -> Self {
        let mut allow: Vec<&str> = allowed.iter().map(Method::as_str).collect();
        allow.push("OPTIONS");
        Self {
            allow: Some(allow.join(", ")),
            ..Self::new(ErrorCode::MethodNotAllowed, "Method not allowed")
        }
    }

    /// `429 rate_limited`, with `Retry-After` in whole seconds.
    pub(crate) fn rate_limited(retry_after: u32) -> Self {
        Self {
            retry_after: Some(retry_after),
            ..Self::new(
                ErrorCode::RateLimited,
                "Too many requests, retry after the time in Retry-After",
            )
        }
    }

    /// The response.
    pub(crate) fn into_response(self) -> Response {
        let mut response = leadtrack_http::error_body(self.body);
        let headers = response.headers_mut();
        if let Some(allow) = self
            .allow
            .and_then(|allow| HeaderValue::from_str(&allow).ok())
        {
            headers.insert(header::ALLOW, allow);
        }
        if let Some(seconds) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

impl From<ValidationError> for ApiError {
    fn from(err: ValidationError) -> Self {
        Self {
            body: err.into(),
            allow: None,
            retry_after: None,
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::NotFound(Entity::Lead) => {
                Self::new(ErrorCode::LeadNotFound, "Lead not found")
            }
            StoreError::NotFound(Entity::Label) => Self::new(
                ErrorCode::ConversionLabelNotFound,
                "Conversion label not found",
            ),
            StoreError::NotFound(Entity::Project) => {
                Self::new(ErrorCode::ProjectNotFound, "Project not found")
            }
            StoreError::NotFound(Entity::ApiKey) => {
                Self::new(ErrorCode::InvalidApiKey, "Invalid API key")
            }
            StoreError::Conflict(Conflict::JobPending { lead_id }) => Self {
                body: ErrorBody {
                    lead_id: Some(lead_id),
                    ..ErrorBody::new(ErrorCode::JobPending, messages::JOB_PENDING)
                },
                allow: None,
                retry_after: None,
            },
            StoreError::Unavailable(reason) => {
                tracing::warn!(%reason, "store unavailable");
                leadtrack_http::metrics::shed();
                Self::unavailable("Service temporarily unavailable, retry shortly")
            }
            other => {
                tracing::error!(error = %other, "store failure");
                Self::internal()
            }
        }
    }
}

/// The methods a preflight allows.
const ALLOW_METHODS: &str = "GET, POST, DELETE, OPTIONS";
/// The request headers a preflight allows.
const ALLOW_HEADERS: &str = "Content-Type, X-API-Key";

/// `204` for a CORS preflight.
pub(crate) fn preflight() -> Response {
    let mut response = Response::new(Vec::new().into());
    *response.status_mut() = StatusCode::NO_CONTENT;
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static(ALLOW_METHODS),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(ALLOW_HEADERS),
    );
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("86400"),
    );
    response
}

/// Adds the CORS headers every response on the lead paths carries.
pub(crate) fn apply_cors(response: &mut Response, request: &HeaderMap, origins: &CorsOrigins) {
    let headers = response.headers_mut();
    match origins {
        CorsOrigins::Any => {
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_ORIGIN,
                HeaderValue::from_static("*"),
            );
        }
        CorsOrigins::List(allowed) => {
            headers.append(header::VARY, HeaderValue::from_static("Origin"));
            let origin = request.get(header::ORIGIN);
            let listed = origin
                .and_then(|o| o.to_str().ok())
                .is_some_and(|o| allowed.iter().any(|a| a.eq_ignore_ascii_case(o)));
            if let (true, Some(origin)) = (listed, origin) {
                headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
            }
        }
    }
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("Retry-After"),
    );
}
