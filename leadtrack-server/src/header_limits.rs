//! The limits on a request's header fields, kept by our own code: more than
//! [`MAX_FIELDS`] fields, or more than [`MAX_BYTES`] of them, are answered with the
//! contract's JSON `431 headers_too_large` (section 7), and the connection closes.
//!
//! hyper's own limits are set above these ([`HYPER_MAX_FIELDS`], [`HYPER_MAX_BUFFER`]), so
//! that it refuses on its own only what is far past them, and that answer is the one
//! `http_errors` rewrites.

use leadtrack_core::ErrorCode;
use warp::http::Request;
use warp::http::header::{self, HeaderMap, HeaderValue};
use warp::reply::Response;
use warp::{Filter, Rejection};

use crate::App;

/// The most header fields a request may carry.
pub(crate) const MAX_FIELDS: usize = 100;
/// The most bytes its header fields may take, as sent (`name: value\r\n`).
pub(crate) const MAX_BYTES: usize = 400 * 1024;
/// hyper's limit on fields, above [`MAX_FIELDS`].
pub(crate) const HYPER_MAX_FIELDS: usize = 4 * MAX_FIELDS;
/// hyper's read buffer, which bounds the request line and headers, above [`MAX_BYTES`] and
/// a 64 KiB URL (hyper's default is about 408 KiB).
pub(crate) const HYPER_MAX_BUFFER: usize = 512 * 1024;

/// Marks a request whose header fields were over the limits; its headers are dropped.
#[derive(Clone, Copy, Debug)]
struct Refused;

/// Whether `headers` are over either limit.
fn exceeded(headers: &HeaderMap) -> bool {
    headers.len() > MAX_FIELDS
        || headers
            .iter()
            .map(|(name, value)| name.as_str().len() + value.len() + 4)
            .sum::<usize>()
            > MAX_BYTES
}

/// Checks `request` against the limits before any route sees it: one over them loses its
/// headers and is marked, for [`answer`] to refuse.
pub(crate) fn check<B>(request: &mut Request<B>) {
    if exceeded(request.headers()) {
        request.headers_mut().clear();
        request.extensions_mut().insert(Refused);
    }
}

/// The answer to a request [`check`] marked: `431`, the contract's body, the CORS header,
/// and `Connection: close`. Other requests are rejected untouched.
pub(crate) fn answer()
-> impl Filter<Extract = (Response,), Error = Rejection> + Clone + Send + Sync + 'static {
    warp::ext::get::<Refused>().map(|Refused| {
        let mut response = leadtrack_http::error(
            ErrorCode::HeadersTooLarge,
            "The request header fields are too many or too large",
        );
        response.headers_mut().extend([
            (
                header::ACCESS_CONTROL_ALLOW_ORIGIN,
                HeaderValue::from_static("*"),
            ),
            (header::CONNECTION, HeaderValue::from_static("close")),
        ]);
        response
    })
}

/// [`answer`] in front of `app`.
pub(crate) fn guard(app: impl App) -> impl App {
    answer().or(app)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(fields: usize, value_len: usize) -> Request<()> {
        let mut request = Request::new(());
        let value = HeaderValue::from_str(&"v".repeat(value_len)).unwrap();
        for i in 0..fields {
            let name = header::HeaderName::from_bytes(format!("x-h{i}").as_bytes()).unwrap();
            request.headers_mut().insert(name, value.clone());
        }
        request
    }

    #[test]
    fn requests_at_the_limits_pass_and_past_them_are_marked() {
        for (fields, value_len, refused) in [
            (MAX_FIELDS, 1, false),
            (MAX_FIELDS + 1, 1, true),
            (1, MAX_BYTES - "x-h0".len() - 4, false),
            (1, MAX_BYTES - "x-h0".len() - 3, true),
        ] {
            let mut request = request(fields, value_len);
            check(&mut request);
            assert_eq!(
                request.extensions().get::<Refused>().is_some(),
                refused,
                "{fields} fields of {value_len} bytes"
            );
            assert_eq!(request.headers().is_empty(), refused);
        }
    }

    #[tokio::test]
    async fn a_marked_request_gets_the_json_431_and_closes() {
        let app = guard(warp::any().map(|| "routes"));
        let response = warp::test::request().extension(Refused).reply(&app).await;
        assert_eq!(response.status(), 431);
        assert_eq!(response.headers()["connection"], "close");
        assert_eq!(response.headers()["access-control-allow-origin"], "*");
        let body: serde_json::Value = serde_json::from_slice(response.body()).unwrap();
        assert_eq!(body["code"], "headers_too_large");
        let passed = warp::test::request().reply(&app).await;
        assert_eq!(passed.body().as_ref(), b"routes");
    }
}
