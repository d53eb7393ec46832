//! The browser capture script, `GET /leadtrack.js`, and the demo pages that show it at work.

use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use leadtrack_core::api::{GetLeadResponse, Lead, messages};
use leadtrack_core::lead::StoredLead;
use leadtrack_core::types::{LeadId, LeadIdentifier};
use leadtrack_core::{ErrorCode, LeadStore};
use warp::http::header::{self, HeaderValue};
use warp::http::{HeaderMap, StatusCode};
use warp::reply::Response;
use warp::{Filter, Rejection};

use crate::reply::ApiError;

/// The first-party capture script websites include, as served: `assets/leadtrack.js`
/// (plain JavaScript, no build step to read or change it) minified by `scripts/minify-js`.
pub const SCRIPT: &str = include_str!("../assets/leadtrack.min.js");

/// How long browsers and CDNs may reuse the script before revalidating it.
const SCRIPT_MAX_AGE: &str = "public, max-age=3600, stale-while-revalidate=86400";

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

/// `GET /leadtrack.js`: the capture script, cacheable, revalidated by `ETag` (`304` when
/// unchanged), readable from any origin, in brotli or gzip for browsers that accept them.
/// Mount it beside [`crate::routes`] in an embedding app.
pub fn script()
-> impl Filter<Extract = (Response,), Error = Rejection> + Clone + Send + Sync + 'static {
    static ASSET: OnceLock<StaticAsset> = OnceLock::new();
    warp::path!("leadtrack.js")
        .and(warp::get().or(warp::head()).unify())
        .and(warp::header::headers_cloned())
        .map(|request: HeaderMap| {
            let asset = ASSET.get_or_init(|| {
                StaticAsset::new(
                    SCRIPT.as_bytes(),
                    "text/javascript; charset=utf-8",
                    SCRIPT_MAX_AGE,
                )
                .compressed()
            });
            let mut response = asset.response(&request);
            response.headers_mut().insert(
                header::ACCESS_CONTROL_ALLOW_ORIGIN,
                HeaderValue::from_static("*"),
            );
            response
        })
}

/// `GET /demo`, `GET /demo/contact`, `POST /demo/thanks`: a small product website using the
/// script, to try capture in a browser: `/demo?projectId=PROJECT_ID`. Its contact page shows
/// live what the script captured and, once the form is sent, the lead it became. The pages load the script
/// from, and post to, their own origin; an `api` parameter naming another origin is refused
/// with a `400` page (see [`demo_allowing`] to permit some).
pub fn demo()
-> impl Filter<Extract = (Response,), Error = Rejection> + Clone + Send + Sync + 'static {
    demo_allowing(std::iter::empty::<String>())
}

/// [`demo`], whose pages also accept `api=ORIGIN` (`http(s)://host:port`) for each of
/// `origins`, and then load the script from, and post to, that origin.
///
/// Only listed origins are accepted: a page on our origin running a script from anywhere a
/// link names would let any site's code run as ours.
pub fn demo_allowing<I, O>(
    origins: I,
) -> impl Filter<Extract = (Response,), Error = Rejection> + Clone + Send + Sync + 'static
where
    I: IntoIterator<Item = O>,
    O: Into<String>,
{
    let origins: Arc<[String]> = origins
        .into_iter()
        .map(|origin| origin.into().trim().trim_end_matches('/').to_owned())
        .filter(|origin| origin.starts_with("http://") || origin.starts_with("https://"))
        .collect();
    let query = warp::query::raw().or_else(|_| async { Ok::<_, Rejection>((String::new(),)) });
    let allowed = warp::any().map(move || origins.clone());
    let landing = warp::path!("demo")
        .and(warp::get())
        .and(query)
        .and(allowed.clone())
        .map(|query: String, origins: Arc<[String]>| page(&query, &origins, Page::Landing));
    let contact = warp::path!("demo" / "contact")
        .and(warp::get())
        .and(query)
        .and(allowed.clone())
        .map(|query: String, origins: Arc<[String]>| page(&query, &origins, Page::Contact));
    let thanks = warp::path!("demo" / "thanks")
        .and(warp::post())
        .and(query)
        .and(allowed)
        .map(|query: String, origins: Arc<[String]>| page(&query, &origins, Page::Thanks));
    let style = demo_asset("demo.css", DEMO_CSS, "text/css; charset=utf-8");
    let panel = demo_asset("panel.js", DEMO_PANEL, "text/javascript; charset=utf-8");
    landing
        .or(contact)
        .unify()
        .or(thanks)
        .unify()
        .or(style)
        .unify()
        .or(panel)
        .unify()
}

/// `GET /demo/lead?projectId=P&leadId=N&receipt=R`: a lead the demo's contact form sent, as
/// getLead returns it, for the page that sent it. The page puts a random `receipt` in the
/// form (a hidden field, stored among the lead's `formFields`); only a lead holding that
/// receipt is shown, so the route reveals nothing its caller did not send. Anything else is
/// the JSON `404 not_found`.
pub(crate) fn demo_lead<S: LeadStore>(
    store: Arc<S>,
) -> impl Filter<Extract = (Response,), Error = Rejection> + Clone + Send + Sync + 'static {
    warp::path!("demo" / "lead")
        .and(warp::get())
        .and(warp::query::<Vec<(String, String)>>())
        .then(move |params: Vec<(String, String)>| {
            let store = Arc::clone(&store);
            async move {
                let mut response = match read_back(&*store, &params).await {
                    Some(lead) => crate::reply::json(
                        StatusCode::OK,
                        &GetLeadResponse {
                            message: messages::LEAD_RETRIEVED.to_owned(),
                            lead: Lead::from(&lead),
                        },
                    ),
                    None => ApiError::new(ErrorCode::NotFound, "Not found").into_response(),
                };
                response.headers_mut().insert(
                    header::ACCESS_CONTROL_ALLOW_ORIGIN,
                    HeaderValue::from_static("*"),
                );
                response
            }
        })
}

/// The lead `params` name, if it holds their receipt.
async fn read_back<S: LeadStore>(store: &S, params: &[(String, String)]) -> Option<StoredLead> {
    let param = |name: &str| {
        params
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    };
    let receipt = param("receipt").filter(|receipt| {
        (16..=64).contains(&receipt.len())
            && receipt
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    })?;
    let lead_id = param("leadId")?.parse::<i64>().ok()?;
    let project = store.project_by_public_id(param("projectId")?).await.ok()?;
    let lead = store
        .find_lead(project.id, &LeadIdentifier::LeadId(LeadId(lead_id)))
        .await
        .ok()?;
    let kept = lead
        .data
        .form_data
        .get("formFields")?
        .get("receipt")?
        .as_str()?;
    (kept == receipt).then_some(lead)
}

/// The demo site's styles and its contact page's panel script.
const DEMO_CSS: &str = include_str!("../assets/demo/demo.css");
const DEMO_PANEL: &str = include_str!("../assets/demo/panel.js");

/// `GET /demo/NAME`: one of the demo site's files.
fn demo_asset(
    name: &'static str,
    body: &'static str,
    content_type: &'static str,
) -> impl Filter<Extract = (Response,), Error = Rejection> + Clone + Send + Sync + 'static {
    let asset = Arc::new(
        StaticAsset::new(body.as_bytes(), content_type, "public, max-age=300").compressed(),
    );
    warp::path("demo")
        .and(warp::path(name))
        .and(warp::path::end())
        .and(warp::get().or(warp::head()).unify())
        .and(warp::header::headers_cloned())
        .map(move |request: HeaderMap| asset.response(&request))
}

#[derive(Clone, Copy)]
enum Page {
    Landing,
    Contact,
    Thanks,
}

/// What every page of the demo site knows: the project, the API's origin (empty: this
/// one) and the query that carries both from page to page.
struct Site {
    project: String,
    api: String,
    carry: String,
}

/// `/demo`: the product's landing page, with a newsletter form that navigates away.
#[derive(askama::Template)]
#[template(path = "demo/landing.html")]
struct LandingPage<'a> {
    title: &'a str,
    site: &'a Site,
}

/// `/demo/contact`: the contact form, with the panel of what was captured.
#[derive(askama::Template)]
#[template(path = "demo/contact.html")]
struct ContactPage<'a> {
    title: &'a str,
    site: &'a Site,
}

/// `POST /demo/thanks`: where the newsletter form lands.
#[derive(askama::Template)]
#[template(path = "demo/thanks.html")]
struct ThanksPage<'a> {
    title: &'a str,
    site: &'a Site,
}

/// Escapes text for HTML content and attribute values.
fn escape(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '&' => "&amp;".to_owned(),
            '<' => "&lt;".to_owned(),
            '>' => "&gt;".to_owned(),
            '"' => "&quot;".to_owned(),
            '\'' => "&#39;".to_owned(),
            c => c.to_string(),
        })
        .collect()
}

fn page(query: &str, origins: &[String], page: Page) -> Response {
    let params: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    let param = |name: &str| {
        params
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.trim().to_owned())
    };
    let project =
        param("projectId").filter(|id| leadtrack_core::project::validate_public_id(id).is_ok());
    let api = param("api")
        .map(|url| url.trim_end_matches('/').to_owned())
        .unwrap_or_default();
    if !api.is_empty()
        && !origins
            .iter()
            .any(|origin| origin.eq_ignore_ascii_case(&api))
    {
        return html(
            StatusCode::BAD_REQUEST,
            "leadtrack demo",
            &format!(
                "<p>This demo does not load the script from <code>{}</code>: only from its own \
                 origin (open it without <code>api</code>) or from an origin the server allows.</p>",
                escape(&api)
            ),
        );
    }
    let Some(project) = project else {
        return html(
            StatusCode::BAD_REQUEST,
            "leadtrack demo",
            "<p>Open this page with your project id: <code>/demo?projectId=PROJECT_ID</code> \
             (<code>server project list</code> shows it).</p>",
        );
    };
    let carry = form_urlencoded::Serializer::new(String::new())
        .append_pair("projectId", &project)
        .extend_pairs((!api.is_empty()).then_some(("api", api.as_str())))
        .finish();
    let site = Site {
        project,
        api,
        carry,
    };
    let rendered = match page {
        Page::Landing => askama::Template::render(&LandingPage {
            title: "Northwind Cloud",
            site: &site,
        }),
        Page::Contact => askama::Template::render(&ContactPage {
            title: "Talk to sales",
            site: &site,
        }),
        Page::Thanks => askama::Template::render(&ThanksPage {
            title: "Thank you",
            site: &site,
        }),
    };
    match rendered {
        Ok(document) => {
            let mut response = Response::new(document.into());
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            );
            response
        }
        Err(err) => {
            tracing::error!(error = %err, "a demo page failed to render");
            html(
                StatusCode::INTERNAL_SERVER_ERROR,
                "leadtrack demo",
                "<p>This page could not be shown.</p>",
            )
        }
    }
}

/// A plain page saying what is wrong with the demo's address.
fn html(status: StatusCode, title: &str, body: &str) -> Response {
    let document = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title><link rel=\"stylesheet\" href=\"/demo/demo.css\"></head>\n\
         <body><main><section class=\"card narrow\"><h1>{title}</h1>\n{body}\n</section></main>\
         </body></html>\n",
        title = escape(title),
    );
    let mut response = Response::new(document.into());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_script_is_served_with_caching_headers_and_revalidated() {
        let filter = script();
        let response = warp::test::request()
            .path("/leadtrack.js")
            .reply(&filter)
            .await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response.headers()["content-type"],
            "text/javascript; charset=utf-8"
        );
        assert_eq!(response.headers()["cache-control"], SCRIPT_MAX_AGE);
        assert_eq!(response.body().as_ref(), SCRIPT.as_bytes());
        let etag = response.headers()["etag"].to_str().unwrap().to_owned();
        let again = warp::test::request()
            .path("/leadtrack.js")
            .header("if-none-match", &etag)
            .reply(&filter)
            .await;
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
        assert!(again.body().is_empty());
        let stale = warp::test::request()
            .path("/leadtrack.js")
            .header("if-none-match", "\"lt-old\"")
            .reply(&filter)
            .await;
        assert_eq!(stale.status(), StatusCode::OK);
    }

    /// `GET /leadtrack.js` with `Accept-Encoding: accept` (and `If-None-Match: etag`).
    async fn fetch_script(accept: &str, etag: Option<&str>) -> warp::http::Response<bytes::Bytes> {
        let mut request = warp::test::request()
            .path("/leadtrack.js")
            .header("accept-encoding", accept);
        if let Some(etag) = etag {
            request = request.header("if-none-match", etag);
        }
        request.reply(&script()).await
    }

    #[tokio::test]
    async fn the_script_is_sent_in_brotli_or_gzip_when_accepted_and_within_its_budget() {
        let br = fetch_script("gzip, deflate, br, zstd", None).await;
        assert_eq!(br.headers()["content-encoding"], "br");
        assert_eq!(br.headers()["vary"], "accept-encoding");
        assert_eq!(br.headers()["cache-control"], SCRIPT_MAX_AGE);
        let mut unbrotlied = Vec::new();
        brotli::BrotliDecompress(&mut br.body().as_ref(), &mut unbrotlied).unwrap();
        assert_eq!(unbrotlied, SCRIPT.as_bytes());

        let gzip = fetch_script("gzip;q=1.0, br;q=0", None).await;
        assert_eq!(gzip.headers()["content-encoding"], "gzip");
        let mut gunzipped = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::GzDecoder::new(gzip.body().as_ref()),
            &mut gunzipped,
        )
        .unwrap();
        assert_eq!(gunzipped, SCRIPT.as_bytes());

        let plain = fetch_script("identity", None).await;
        assert!(plain.headers().get("content-encoding").is_none());
        assert_eq!(plain.body().as_ref(), SCRIPT.as_bytes());
        assert_eq!(plain.headers()["vary"], "accept-encoding");

        // Each version has its own entity tag, and revalidates only against it.
        let tags: Vec<&str> = [&br, &gzip, &plain]
            .iter()
            .map(|response| response.headers()["etag"].to_str().unwrap())
            .collect();
        assert!(
            tags[0] != tags[1] && tags[1] != tags[2] && tags[0] != tags[2],
            "{tags:?}"
        );
        let fresh = fetch_script("br", Some(tags[0])).await;
        assert_eq!(fresh.status(), StatusCode::NOT_MODIFIED);
        let other = fetch_script("br", Some(tags[1])).await;
        assert_eq!(other.status(), StatusCode::OK);

        // The size budget: under 6 kB as browsers download it.
        assert!(br.body().len() < 6_000, "brotli: {} bytes", br.body().len());
        assert!(
            gzip.body().len() < 6_000,
            "gzip: {} bytes",
            gzip.body().len()
        );
    }

    #[test]
    fn the_served_script_is_minified_from_the_current_source() {
        use sha2::Digest;
        let source = include_str!("../assets/leadtrack.js");
        let digest: String = sha2::Sha256::digest(source.as_bytes())
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        let first_line = SCRIPT.lines().next().unwrap_or_default();
        assert!(
            first_line.contains(&format!("sha256 {digest}")),
            "leadtrack.min.js is not made from the current leadtrack.js: run scripts/minify-js"
        );
        assert!(
            SCRIPT.len() < source.len() * 2 / 3,
            "minified: {} bytes",
            SCRIPT.len()
        );
    }

    #[tokio::test]
    async fn demo_pages_embed_the_script_and_escape_what_they_are_given() {
        let filter = demo_allowing(["http://127.0.0.1:9/"]);
        let response = warp::test::request()
            .path("/demo/contact?projectId=prj_1&api=http://127.0.0.1:9")
            .reply(&filter)
            .await;
        assert_eq!(response.status(), StatusCode::OK);
        let text = String::from_utf8(response.body().to_vec()).unwrap();
        assert!(text.contains(r#"<script src="http://127.0.0.1:9/leadtrack.js" data-project-id="prj_1" data-endpoint="http://127.0.0.1:9" async></script>"#), "{text}");
        assert!(text.contains(r#"<form id="contact-form" data-leadtrack="Demo contact""#));
        let hostile = warp::test::request()
            .path("/demo?projectId=prj_1&api=http://x%22%3E%3Cscript%3E")
            .reply(&filter)
            .await;
        let text = String::from_utf8(hostile.body().to_vec()).unwrap();
        assert_eq!(hostile.status(), StatusCode::BAD_REQUEST);
        assert!(!text.contains("\"><script>"), "{text}");
        let missing = warp::test::request()
            .path("/demo?projectId=%3Cb%3E")
            .reply(&filter)
            .await;
        assert_eq!(missing.status(), StatusCode::BAD_REQUEST);
    }

    #[tokio::test]
    async fn demo_pages_refuse_a_script_from_a_foreign_origin() {
        for filter in [
            demo().boxed(),
            demo_allowing(["http://127.0.0.1:9"]).boxed(),
        ] {
            for path in [
                "/demo?projectId=prj_1&api=https://evil.example",
                "/demo/contact?projectId=prj_1&api=https://evil.example/",
                "/demo?projectId=prj_1&api=javascript:alert(1)",
            ] {
                let response = warp::test::request().path(path).reply(&filter).await;
                assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{path}");
                let text = String::from_utf8(response.body().to_vec()).unwrap();
                assert!(!text.contains("<script"), "{path}: {text}");
                assert!(text.contains("only from its own"), "{text}");
            }
        }
        let own = warp::test::request()
            .path("/demo?projectId=prj_1")
            .reply(&demo())
            .await;
        assert_eq!(own.status(), StatusCode::OK);
        let text = String::from_utf8(own.body().to_vec()).unwrap();
        assert!(
            text.contains(r#"<script src="/leadtrack.js" data-project-id="prj_1" async></script>"#),
            "{text}"
        );
    }
}
