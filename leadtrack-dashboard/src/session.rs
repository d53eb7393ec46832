//! Who is asking: the session cookie that makes a [`Viewer`], and the checks that a form
//! came from this site (its origin and the session's anti-forgery token).

use chrono::Utc;
use cookie::{Cookie, SameSite};
use leadtrack_core::account::{Device, Session, SessionToken, User};
use leadtrack_core::store::Entity;
use leadtrack_core::types::UserId;
use leadtrack_core::{Accounts, StoreError};
use leadtrack_http::{Body, BodyError};
use subtle::ConstantTimeEq;
use warp::http::header::{self, HeaderValue};

use crate::viewer::{Viewer, client_address};
use crate::{Config, Request, render};
use warp::reply::Response;

/// The session cookie's name.
pub(crate) const COOKIE: &str = "lt_session";

/// Starts a session of `user` for the browser that sent `request`, and answers the
/// `Set-Cookie` that gives it the session.
pub(crate) async fn start<S: Accounts>(
    store: &S,
    config: &Config,
    request: &Request,
    user: UserId,
) -> Result<HeaderValue, StoreError> {
    let token = SessionToken::generate();
    let user_agent = request
        .headers
        .get(header::USER_AGENT)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let device = Device::new(&client_address(request, config), user_agent);
    store
        .create_session(user, &token.hash(), &device, Utc::now())
        .await?;
    Ok(session_cookie(&token, is_https(request, config)))
}

/// The value of the request's cookie `name`.
pub(crate) fn cookie(request: &Request, name: &str) -> Option<String> {
    request
        .headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|cookie| cookie.name() == name)
        .map(|cookie| cookie.value().to_owned())
}

/// The session token the request's cookie holds, if it holds a well-formed one.
fn presented_token(request: &Request) -> Option<SessionToken> {
    cookie(request, COOKIE).and_then(|value| SessionToken::parse(&value))
}

/// The signed-in user, when the request carries a live session; marks the session used.
pub(crate) async fn viewer<S: Accounts>(
    store: &S,
    request: &Request,
) -> Result<Option<Viewer>, StoreError> {
    let Some(token) = presented_token(request) else {
        return Ok(None);
    };
    let now = Utc::now();
    let hash = token.hash();
    let (user, session): (User, Session) = match store.session(&hash, now).await {
        Ok(found) => found,
        Err(StoreError::NotFound(Entity::Session)) => return Ok(None),
        Err(err) => return Err(err),
    };
    if session.needs_touch(now) {
        store.touch_session(&hash, now).await?;
    }
    Ok(Some(Viewer { user, token }))
}

/// Whether the request arrived over HTTPS: only through a trusted proxy's
/// `X-Forwarded-Proto`, since the server itself speaks plain HTTP.
pub(crate) fn is_https(request: &Request, config: &Config) -> bool {
    config.trust_proxy
        && request
            .headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next())
            .is_some_and(|proto| proto.trim().eq_ignore_ascii_case("https"))
}

/// The `Set-Cookie` that starts a session: `HttpOnly`, `SameSite=Lax`, `Path=/`, lasting as
/// long as a session can, and `Secure` over HTTPS.
pub(crate) fn session_cookie(token: &SessionToken, secure: bool) -> HeaderValue {
    let max_age = leadtrack_core::account::session_lifetime().num_seconds();
    set_cookie(token.expose().to_owned(), max_age, secure)
}

/// The `Set-Cookie` that removes the session cookie.
pub(crate) fn cleared_cookie(secure: bool) -> HeaderValue {
    set_cookie(String::new(), 0, secure)
}

fn set_cookie(value: String, max_age_seconds: i64, secure: bool) -> HeaderValue {
    let cookie = Cookie::build((COOKIE, value))
        .max_age(cookie::time::Duration::seconds(max_age_seconds))
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(secure)
        .build();
    HeaderValue::from_str(&cookie.to_string())
        .unwrap_or_else(|_| HeaderValue::from_static("lt_session=; Max-Age=0; Path=/"))
}

/// This site's origin as the browser sees it, from `Host` (and the proxy's protocol).
pub(crate) fn own_origin(request: &Request, config: &Config) -> Option<String> {
    let host = request.headers.get(header::HOST)?.to_str().ok()?.trim();
    let scheme = if is_https(request, config) {
        "https"
    } else {
        "http"
    };
    (!host.is_empty()).then(|| format!("{scheme}://{}", host.to_ascii_lowercase()))
}

/// Where the platforms reach this server: the public URL, else this request's own origin.
pub(crate) fn public_origin(request: &Request, config: &Config) -> Option<String> {
    match &config.public_url {
        Some(url) => Some(url.trim_end_matches('/').to_owned()),
        None => own_origin(request, config),
    }
}

/// The origin a request says it comes from: `Origin`, else the origin part of `Referer`.
fn claimed_origin(request: &Request) -> Option<String> {
    let header = |name| {
        request
            .headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(origin) = header(header::ORIGIN) {
        return Some(origin.to_ascii_lowercase());
    }
    let referer = header(header::REFERER)?;
    let (scheme, rest) = referer.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    Some(format!("{scheme}://{authority}").to_ascii_lowercase())
}

/// Whether the request comes from this site's own pages. `None` when it says nothing of
/// where it comes from.
pub(crate) fn from_own_site(request: &Request, config: &Config) -> Option<bool> {
    let claimed = claimed_origin(request)?;
    Some(own_origin(request, config).is_some_and(|own| own == claimed))
}

/// A submitted form's fields, read one by one. Not deserialized into a struct (as with
/// `serde_html_form`): a page shows every problem next to its field and the form again as
/// typed, where a derived struct fails whole at the first bad field.
#[derive(Default)]
pub(crate) struct Form(Vec<(String, String)>);

impl Form {
    /// The first value of a field, or `""`.
    pub(crate) fn get(&self, name: &str) -> &str {
        self.0
            .iter()
            .find(|(key, _)| key == name)
            .map_or("", |(_, value)| value.as_str())
    }

    /// Every value of a field (a field of checkboxes).
    pub(crate) fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .iter()
            .filter(move |(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
    /// A form of `fields`, as a browser would send them: for unit tests of what reads one.
    #[cfg(test)]
    pub(crate) fn of(fields: &[(&str, &str)]) -> Self {
        Self(
            fields
                .iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                .collect(),
        )
    }
}

/// Reads an `application/x-www-form-urlencoded` body within the size limit.
pub(crate) async fn read_form(
    request: &Request,
    config: &Config,
    body: Body,
) -> Result<Form, Response> {
    match body.read(&request.headers, config.body_limit).await {
        Ok(bytes) => Ok(Form(form_urlencoded::parse(&bytes).into_owned().collect())),
        Err(BodyError::TooLarge(_)) => Err(render::too_large()),
        Err(BodyError::Broken) => Err(render::error(
            warp::http::StatusCode::BAD_REQUEST,
            None,
            "The form did not arrive",
            "The connection broke while the form was being sent. Try again.",
        )),
    }
}

/// A file sent with a form (`multipart/form-data`).
pub(crate) struct Upload {
    /// Its name on the sender's disk.
    pub(crate) name: String,
    /// Its bytes.
    pub(crate) bytes: Vec<u8>,
}

/// A `multipart/form-data` form within `limit` bytes: its text fields, and its first file.
/// The answer for a body too large, or one that is not such a form.
pub(crate) async fn read_upload(
    request: &Request,
    body: Body,
    limit: usize,
) -> Result<(Form, Option<Upload>), Response> {
    let not_a_form = || {
        render::error(
            warp::http::StatusCode::BAD_REQUEST,
            None,
            "The file did not arrive",
            "The upload was not a form with a file, or it broke on the way. Try again.",
        )
    };
    let boundary = request
        .headers
        .get(warp::http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| multer::parse_boundary(value).ok())
        .ok_or_else(not_a_form)?;
    let bytes = match body.read(&request.headers, limit).await {
        Ok(bytes) => bytes,
        Err(BodyError::TooLarge(_)) => return Err(render::too_large()),
        Err(BodyError::Broken) => return Err(not_a_form()),
    };
    let stream =
        futures_util::stream::once(async move { Ok::<_, std::convert::Infallible>(bytes) });
    let mut multipart = multer::Multipart::new(stream, boundary);
    let (mut fields, mut upload) = (Vec::new(), None);
    while let Some(field) = multipart.next_field().await.map_err(|_| not_a_form())? {
        let name = field.name().unwrap_or_default().to_owned();
        match field.file_name().map(str::to_owned) {
            Some(file) if upload.is_none() => {
                let bytes = field.bytes().await.map_err(|_| not_a_form())?;
                upload = Some(Upload {
                    name: file,
                    bytes: bytes.to_vec(),
                });
            }
            Some(_) => {}
            None => fields.push((name, field.text().await.map_err(|_| not_a_form())?)),
        }
    }
    Ok((Form(fields), upload))
}

/// A form posted without a session's token (signing in, a one-use link's page): read within
/// the size limit, and refused with `403` when it comes from another site (login forgery).
/// One that says nothing of its origin (a script, an old browser) is let through: it holds
/// no session to abuse.
pub(crate) async fn anonymous_form(
    request: &Request,
    config: &Config,
    body: Body,
) -> Result<Form, Response> {
    let form = read_form(request, config, body).await?;
    if from_own_site(request, config) == Some(false) {
        return Err(render::forged(None));
    }
    Ok(form)
}

/// Whether a session's form came from this site: its origin (`Origin` or `Referer`, one
/// of which is required) and the session's anti-forgery token. A form that fails is to be
/// answered with [`render::forged`].
pub(crate) fn genuine_form(
    request: &Request,
    config: &Config,
    viewer: &Viewer,
    form: &Form,
) -> bool {
    let same_site = from_own_site(request, config) == Some(true);
    let presented = form.get("csrf").as_bytes();
    let genuine = same_site && bool::from(presented.ct_eq(viewer.csrf().as_bytes()));
    if !genuine {
        tracing::warn!(user = %viewer.user.id, "a form failed the anti-forgery check");
    }
    genuine
}

#[cfg(test)]
mod tests {
    use super::*;
    use warp::http::{HeaderMap, Method};

    fn request(pairs: &[(&'static str, &str)]) -> Request {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_str(value).unwrap());
        }
        Request {
            method: Method::POST,
            path: "/logout".into(),
            query: String::new(),
            headers,
            remote: None,
        }
    }

    #[test]
    fn origins_come_from_origin_else_referer() {
        let config = Config::default();
        let host = ("host", "leads.example.com");
        let ok = request(&[host, ("origin", "http://leads.example.com")]);
        assert_eq!(from_own_site(&ok, &config), Some(true));
        let referer = request(&[host, ("referer", "http://leads.example.com/projects/x?y=1")]);
        assert_eq!(from_own_site(&referer, &config), Some(true));
        let evil = request(&[host, ("origin", "http://evil.example")]);
        assert_eq!(from_own_site(&evil, &config), Some(false));
        let sneaky = request(&[host, ("referer", "http://leads.example.com.evil.example/")]);
        assert_eq!(from_own_site(&sneaky, &config), Some(false));
        assert_eq!(from_own_site(&request(&[host]), &config), None);
        let https = request(&[
            host,
            ("origin", "https://leads.example.com"),
            ("x-forwarded-proto", "https"),
        ]);
        assert_eq!(
            from_own_site(&https, &config),
            Some(false),
            "untrusted proxy"
        );
        let trusted = Config {
            trust_proxy: true,
            ..Config::default()
        };
        assert_eq!(from_own_site(&https, &trusted), Some(true));
    }

    #[test]
    fn cookies_carry_the_token_only_where_they_must() {
        let token = SessionToken::generate();
        let plain = request(&[("cookie", &format!("a=b; {COOKIE}={}", token.expose()))]);
        assert_eq!(presented_token(&plain), Some(token.clone()));
        assert_eq!(
            presented_token(&request(&[("cookie", "lt_session=nope")])),
            None
        );
        let set = session_cookie(&token, false);
        let set = set.to_str().unwrap();
        assert!(set.contains("HttpOnly") && set.contains("SameSite=Lax") && set.contains("Path=/"));
        assert!(!set.contains("Secure"));
        assert!(
            session_cookie(&token, true)
                .to_str()
                .unwrap()
                .contains("; Secure")
        );
    }
}
