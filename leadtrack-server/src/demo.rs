//! The demo website, `/demo`: a small product site using the capture script, to try
//! capture in a browser, and `/demo/lead`, where its contact page reads back the lead it
//! sent (contract section 11).

use std::sync::Arc;

use leadtrack_core::api::{GetLeadResponse, Lead, messages};
use leadtrack_core::lead::StoredLead;
use leadtrack_core::types::{LeadId, LeadIdentifier};
use leadtrack_core::{ErrorCode, LeadStore};
use leadtrack_http::StaticAsset;
use warp::http::StatusCode;
use warp::http::header::{self, HeaderValue};
use warp::reply::Response;
use warp::{Filter, Rejection};

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
                    Some(lead) => leadtrack_http::json(
                        StatusCode::OK,
                        &GetLeadResponse {
                            message: messages::LEAD_RETRIEVED.to_owned(),
                            lead: Lead::from(&lead),
                        },
                    ),
                    None => leadtrack_http::error(ErrorCode::NotFound, "Not found"),
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
    warp::path("demo")
        .and(warp::path(name))
        .and(warp::path::end())
        .and(leadtrack_http::serve(move || {
            StaticAsset::new(body.as_bytes(), content_type, "public, max-age=300").compressed()
        }))
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

/// What is wrong with a demo page's address, said on a plain page instead.
enum Problem {
    /// `api` names an origin the server does not allow.
    ForeignApi(String),
    /// No valid `projectId`.
    NoProject,
    /// The page failed to render.
    Broken,
}

/// The plain page of a [`Problem`].
#[derive(askama::Template)]
#[template(path = "demo/notice.html")]
struct NoticePage {
    problem: Problem,
}

/// The demo `page` for `query`, or a page saying what is wrong with it.
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
        return notice(StatusCode::BAD_REQUEST, Problem::ForeignApi(api));
    }
    let Some(project) = project else {
        return notice(StatusCode::BAD_REQUEST, Problem::NoProject);
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
        Ok(document) => html(StatusCode::OK, document),
        Err(err) => {
            tracing::error!(error = %err, "a demo page failed to render");
            notice(StatusCode::INTERNAL_SERVER_ERROR, Problem::Broken)
        }
    }
}

/// A plain page saying what is wrong with the demo's address.
fn notice(status: StatusCode, problem: Problem) -> Response {
    let document = askama::Template::render(&NoticePage { problem })
        .unwrap_or_else(|_| "This page could not be shown.".to_owned());
    html(status, document)
}

/// An HTML document answered with `status`.
fn html(status: StatusCode, document: String) -> Response {
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
