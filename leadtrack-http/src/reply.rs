//! JSON answers, and the contract's error body as a response.

use leadtrack_core::ErrorCode;
use leadtrack_core::api::ErrorBody;
use serde::Serialize;
use warp::http::StatusCode;
use warp::http::header::{self, HeaderValue};
use warp::reply::Response;

/// The body of a `500` when a body could not be serialized (which a well-typed body never
/// fails, but the answer must still be the contract's).
const INTERNAL: &str = r#"{"message":"Internal server error","code":"internal"}"#;

/// A JSON response with `status`.
pub fn json<T: Serialize>(status: StatusCode, body: &T) -> Response {
    let (status, bytes) = match serde_json::to_vec(body) {
        Ok(bytes) => (status, bytes),
        Err(err) => {
            tracing::error!(error = %err, "could not serialize a response");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                INTERNAL.as_bytes().to_vec(),
            )
        }
    };
    let mut response = Response::new(bytes.into());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// The contract's error answer: the code's status and `{"message", "code"}`.
pub fn error(code: ErrorCode, message: impl Into<String>) -> Response {
    error_body(ErrorBody::new(code, message))
}

/// An error body (which may carry more than the message and code) as its answer.
pub fn error_body(body: ErrorBody) -> Response {
    let status =
        StatusCode::from_u16(body.code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json(status, &body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use warp::Filter;

    #[tokio::test]
    async fn errors_carry_their_code_status_and_the_contract_body() {
        let filter = warp::any().map(|| error(ErrorCode::NotFound, "Not found"));
        let response = warp::test::request().reply(&filter).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        assert_eq!(response.headers()["content-type"], "application/json");
        let body: ErrorBody = serde_json::from_slice(response.body()).unwrap();
        assert_eq!(body, ErrorBody::new(ErrorCode::NotFound, "Not found"));
    }

    #[test]
    fn the_fallback_body_is_the_contract_internal_error() {
        let body: ErrorBody = serde_json::from_str(INTERNAL).unwrap();
        assert_eq!(
            body,
            ErrorBody::new(ErrorCode::Internal, "Internal server error")
        );
    }
}
