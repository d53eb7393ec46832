//! Files compiled into the binary, served with their content type, caching headers and
//! entity tags, precompressed once: the capture script, the demo's and the dashboard's
//! assets.

use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use warp::http::header::{self, HeaderValue};
use warp::http::{HeaderMap, StatusCode};
use warp::reply::Response;
use warp::{Filter, Rejection};

/// A file compiled into the binary, served with its content type, caching headers and an
/// entity tag made from its content, so a new version is fetched at once and an unchanged
/// one is revalidated with a `304`. [`StaticAsset::compressed`] adds brotli and gzip
/// versions, made once, for clients that accept them.
#[derive(Debug)]
pub struct StaticAsset {
    body: &'static [u8],
    content_type: &'static str,
    cache_control: &'static str,
    etag: String,
    /// `(coding, body, entity tag)`, in the order of preference; each body made once and
    /// shared by every response.
    encoded: Vec<(&'static str, Bytes, String)>,
    /// Readable by pages of any origin (`Access-Control-Allow-Origin: *`).
    any_origin: bool,
}

/// `GET` and `HEAD` answered with the asset `make` builds on first use; other methods are
/// rejected. Put the asset's path in front of it.
pub fn serve<M>(
    make: M,
) -> impl Filter<Extract = (Response,), Error = Rejection> + Clone + Send + Sync + 'static
where
    M: Fn() -> StaticAsset + Clone + Send + Sync + 'static,
{
    let asset = Arc::new(OnceLock::new());
    warp::get()
        .or(warp::head())
        .unify()
        .and(warp::header::headers_cloned())
        .map(move |request: HeaderMap| asset.get_or_init(make.clone()).response(&request))
}

/// Brotli's densest setting, and its largest window: paid once per asset.
const BROTLI_QUALITY: u32 = 11;
const BROTLI_WINDOW: u32 = 22;

impl StaticAsset {
    /// An asset with its `Content-Type` and `Cache-Control`.
    pub fn new(
        body: &'static [u8],
        content_type: &'static str,
        cache_control: &'static str,
    ) -> Self {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        body.hash(&mut hasher);
        Self {
            body,
            content_type,
            cache_control,
            etag: format!("\"lt-{:016x}\"", hasher.finish()),
            encoded: Vec::new(),
            any_origin: false,
        }
    }

    /// This asset, readable by pages of any origin.
    pub fn for_any_origin(self) -> Self {
        Self {
            any_origin: true,
            ..self
        }
    }

    /// This asset with brotli and gzip versions, each with its own entity tag.
    pub fn compressed(mut self) -> Self {
        let mut br = Vec::new();
        let params = brotli::enc::BrotliEncoderParams {
            quality: BROTLI_QUALITY as i32,
            lgwin: BROTLI_WINDOW as i32,
            ..Default::default()
        };
        let brotli_ok = brotli::BrotliCompress(&mut &*self.body, &mut br, &params).is_ok();
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let gzip = std::io::Write::write_all(&mut gzip, self.body).and_then(|()| gzip.finish());
        let tag = |coding: &str| format!("{}-{coding}\"", self.etag.trim_end_matches('"'));
        if brotli_ok {
            self.encoded.push(("br", br.into(), tag("br")));
        }
        if let Ok(gzip) = gzip {
            self.encoded.push(("gzip", gzip.into(), tag("gzip")));
        }
        self
    }

    /// The size of the version sent with `coding` (`br`, `gzip`), if there is one.
    pub fn encoded_len(&self, coding: &str) -> Option<usize> {
        self.encoded
            .iter()
            .find(|(name, ..)| *name == coding)
            .map(|(_, body, _)| body.len())
    }

    /// The asset, or `304 Not Modified` when `request` already holds this version; in the
    /// first coding of [`StaticAsset::compressed`] that `request` accepts, if any.
    pub fn response(&self, request: &HeaderMap) -> Response {
        let (coding, body, etag) = self
            .encoded
            .iter()
            .find(|(coding, ..)| accepts(request, coding))
            .map_or(
                (None, Bytes::from_static(self.body), &self.etag),
                |(coding, body, etag)| (Some(*coding), body.clone(), etag),
            );
        let fresh = request
            .get(header::IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|tags| {
                tags.split(',')
                    .any(|tag| tag.trim() == etag || tag.trim() == "*")
            });
        let mut response = if fresh {
            let mut response = Response::new(Vec::new().into());
            *response.status_mut() = StatusCode::NOT_MODIFIED;
            response
        } else {
            let mut response = Response::new(body.into());
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(self.content_type),
            );
            if let Some(coding) = coding {
                response
                    .headers_mut()
                    .insert(header::CONTENT_ENCODING, HeaderValue::from_static(coding));
            }
            response
        };
        let headers = response.headers_mut();
        headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static(self.cache_control),
        );
        if !self.encoded.is_empty() {
            headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        }
        if let Ok(etag) = HeaderValue::from_str(etag) {
            headers.insert(header::ETAG, etag);
        }
        headers.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
        if self.any_origin {
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_ORIGIN,
                HeaderValue::from_static("*"),
            );
        }
        response
    }
}

/// Whether `request`'s `Accept-Encoding` allows `coding` (not given `q=0`).
fn accepts(request: &HeaderMap, coding: &str) -> bool {
    request
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|item| {
            let mut parts = item.split(';');
            let named = parts
                .next()
                .is_some_and(|name| name.trim().eq_ignore_ascii_case(coding));
            named
                && !parts.any(|param| {
                    param
                        .trim()
                        .strip_prefix("q=")
                        .and_then(|q| q.trim().parse::<f32>().ok())
                        .is_some_and(|q| q <= 0.0)
                })
        })
}
