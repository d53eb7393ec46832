//! Reading a request: the API key, the content type, the body within its limit, the query
//! string and the client's address.

use bytes::Bytes;
use leadtrack_core::account::Actor;
use leadtrack_core::key::KeyHash;
use leadtrack_core::project::Project;
use leadtrack_core::{ErrorCode, LeadStore};
use warp::http::header::{self, HeaderMap};

use crate::Config;
use crate::rate::Limiters;
use crate::reply::ApiError;
use leadtrack_http::{Body, BodyError, Request};

/// The header that carries API keys.
pub(crate) const API_KEY_HEADER: &str = "x-api-key";

/// The project of the request's API key: `401` when the key is missing or unknown, `403`
/// when its project is deactivated, `429` past the key's rate limit.
pub(crate) async fn authenticate<S: LeadStore>(
    store: &S,
    limiters: &Limiters,
    headers: &HeaderMap,
) -> Result<Project, ApiError> {
    authenticate_as(store, limiters, headers)
        .await
        .map(|(project, _)| project)
}

/// [`authenticate`], and who the request acts as: its key, known by its display prefix.
pub(crate) async fn authenticate_as<S: LeadStore>(
    store: &S,
    limiters: &Limiters,
    headers: &HeaderMap,
) -> Result<(Project, Actor), ApiError> {
    let missing = || ApiError::new(ErrorCode::MissingApiKey, "Missing X-API-Key header");
    let invalid = || ApiError::new(ErrorCode::InvalidApiKey, "Invalid API key");
    let value = headers.get(API_KEY_HEADER).ok_or_else(missing)?;
    let key = value.to_str().map_err(|_| invalid())?.trim();
    if key.is_empty() {
        return Err(missing());
    }
    // An unknown or revoked key is the store's `NotFound(ApiKey)`: 401 invalid_api_key.
    let hash = KeyHash::of(key);
    let project = store.authenticate(&hash).await?;
    log_project(&project);
    ensure_active(&project)?;
    // Only known keys get a bucket, so made-up keys cannot fill the limiter's memory.
    limiters.check_key(&hash)?;
    Ok((project, Actor::api_key(key)))
}

/// Names `project` (by its public id) in the request's log span, so the access log line
/// says which project a request spoke for.
pub(crate) fn log_project(project: &Project) {
    tracing::Span::current().record("project", project.public_id.as_str());
}

/// `403 project_inactive` for a deactivated project.
pub(crate) fn ensure_active(project: &Project) -> Result<(), ApiError> {
    if project.active {
        Ok(())
    } else {
        Err(ApiError::new(
            ErrorCode::ProjectInactive,
            "Project is inactive",
        ))
    }
}

/// `403 origin_not_allowed` for a browser request (one with an `Origin` header) from an
/// origin the project does not list; requests without `Origin` (servers, plugins) pass.
pub(crate) fn ensure_origin_allowed(
    project: &Project,
    headers: &HeaderMap,
) -> Result<(), ApiError> {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return Ok(());
    };
    // An origin that is not even text is not in any list (but any is allowed when the
    // list is empty).
    let allowed = match origin.to_str() {
        Ok(origin) => project.allows_origin(origin),
        Err(_) => project.allowed_origins.is_empty(),
    };
    if allowed {
        Ok(())
    } else {
        Err(ApiError::new(
            ErrorCode::OriginNotAllowed,
            "This website's origin may not send leads to this project",
        ))
    }
}

/// Bodies may be JSON (any charset), `text/plain` (what `sendBeacon` sends) or untyped.
pub(crate) fn check_content_type(headers: &HeaderMap) -> Result<(), ApiError> {
    let unsupported = || {
        ApiError::new(
            ErrorCode::UnsupportedMediaType,
            "Unsupported Content-Type: send application/json or text/plain",
        )
    };
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return Ok(());
    };
    let text = value.to_str().map_err(|_| unsupported())?;
    let essence = text.split(';').next().unwrap_or_default().trim();
    if essence.is_empty()
        || essence.eq_ignore_ascii_case("application/json")
        || essence.eq_ignore_ascii_case("text/plain")
    {
        Ok(())
    } else {
        Err(unsupported())
    }
}

/// Reads the body, answering `413` as soon as it exceeds `limit` bytes (by its declared
/// length, or while it streams in).
pub(crate) async fn read_body(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
) -> Result<Bytes, ApiError> {
    body.read(headers, limit).await.map_err(|err| match err {
        BodyError::TooLarge(limit) => ApiError::new(
            ErrorCode::PayloadTooLarge,
            format!("Request body is larger than {limit} bytes"),
        ),
        BodyError::Broken => {
            ApiError::new(ErrorCode::InvalidJson, "Could not read the request body")
        }
    })
}

/// The query string's decoded `(name, value)` pairs; `%5B`/`%5D` and literal brackets in
/// names decode alike.
pub(crate) fn query_pairs(query: &str) -> Vec<(String, String)> {
    form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect()
}

/// The request's `User-Agent`, if any.
pub(crate) fn user_agent(headers: &HeaderMap) -> Option<String> {
    headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|ua| !ua.is_empty())
        .map(str::to_owned)
}

/// What every handler answers from: the store, the configuration and the rate limiters.
pub(crate) struct Api<S> {
    /// Where leads live.
    pub(crate) store: S,
    /// The routes' configuration.
    pub(crate) config: Config,
    /// The limiters built from `config`.
    pub(crate) limiters: Limiters,
}

/// The body of a POST: `415` for a content type other than JSON or text, `413` past the
/// limit.
pub(crate) async fn read_json_body(
    config: &Config,
    request: &Request,
    body: Body,
) -> Result<Bytes, ApiError> {
    check_content_type(&request.headers)?;
    read_body(&request.headers, body, config.body_limit).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use warp::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn accepted_content_types() {
        for ok in [
            &[][..],
            &[("content-type", "application/json")],
            &[("content-type", "application/json; charset=UTF-8")],
            &[("content-type", "Application/JSON")],
            &[("content-type", "text/plain;charset=UTF-8")],
            &[("content-type", "")],
        ] {
            assert!(check_content_type(&headers(ok)).is_ok(), "{ok:?}");
        }
        for bad in [
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/xml",
            "text/html",
        ] {
            assert!(
                check_content_type(&headers(&[("content-type", bad)])).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn bracketed_query_names_decode_alike() {
        let pairs = query_pairs(
            "createdAt%5Bgte%5D=2026-01-01&gclid[exists]=true&email=a%2Bb%40x.io&search=a+b",
        );
        assert_eq!(
            pairs,
            [
                ("createdAt[gte]".to_owned(), "2026-01-01".to_owned()),
                ("gclid[exists]".to_owned(), "true".to_owned()),
                ("email".to_owned(), "a+b@x.io".to_owned()),
                ("search".to_owned(), "a b".to_owned()),
            ]
        );
    }
}
