//! Turning pages into responses: the layout every page shares, HTML and redirects, the
//! error pages, the stylesheet, and the headers every response carries.

use std::sync::OnceLock;

use askama::Template;
use leadtrack_core::StoreError;
use leadtrack_core::account::Membership;
use leadtrack_core::types::Role;
use leadtrack_http::StaticAsset;
use warp::http::StatusCode;
use warp::http::header::{self, HeaderMap, HeaderValue};
use warp::reply::Response;

use crate::Request;
use crate::routes::{Links, Profile, Route, Settings};
use crate::viewer::Viewer;

/// What the layout shows around every page.
pub(crate) struct Layout {
    /// The page's title (before ` · leadtrack`).
    pub(crate) title: String,
    /// The signed-in user, for the header and its sign-out form.
    pub(crate) viewer: Option<ViewerView>,
    /// The project the page belongs to, for the header's project navigation.
    pub(crate) project: Option<ProjectNav>,
}

/// The header's navigation inside a project: Inbox, Reports, and Settings for owners.
pub(crate) struct ProjectNav {
    /// The project's public id.
    pub(crate) public_id: String,
    /// Its name.
    pub(crate) name: String,
    /// Whether the viewer owns it (and so sees Settings).
    pub(crate) is_owner: bool,
    /// The area shown: `leads`, `reports` or `settings`.
    pub(crate) active: &'static str,
}

impl ProjectNav {
    /// The project's inbox.
    pub(crate) fn inbox(&self) -> String {
        Links::new(&self.public_id).inbox()
    }

    /// Its reports.
    pub(crate) fn reports(&self) -> String {
        Links::new(&self.public_id).to(Route::Reports)
    }

    /// Its settings.
    pub(crate) fn settings(&self) -> String {
        Links::new(&self.public_id).to(Route::Settings(Settings::Root))
    }
}

/// The signed-in user as the header shows them.
pub(crate) struct ViewerView {
    /// Their name.
    pub(crate) name: String,
    /// The anti-forgery token of their session, for the sign-out form.
    pub(crate) csrf: String,
    /// The colour scheme they chose (`light` or `dark`); `None`: the system's.
    pub(crate) theme: Option<String>,
}

/// The links every page's frame holds (the header's and the stylesheet's), from the route
/// table.
impl Layout {
    /// The projects (the home page).
    pub(crate) fn home(&self) -> String {
        Route::Projects.path()
    }

    /// The stylesheet.
    pub(crate) fn stylesheet(&self) -> String {
        Route::Stylesheet.path()
    }

    /// The site's icon.
    pub(crate) fn favicon(&self) -> String {
        Route::Favicon.path()
    }

    /// The viewer's profile.
    pub(crate) fn profile(&self) -> String {
        Route::Profile(Profile::Page).path()
    }

    /// The colour scheme's form.
    pub(crate) fn theme_form(&self) -> String {
        Route::SaveTheme.path()
    }

    /// Signing out.
    pub(crate) fn sign_out(&self) -> String {
        Route::SignOut.path()
    }
}

impl Layout {
    /// The layout of a page titled `title`, for `viewer`.
    pub(crate) fn new(title: impl Into<String>, viewer: Option<&Viewer>) -> Self {
        Self {
            title: title.into(),
            viewer: viewer.map(|viewer| ViewerView {
                name: viewer.user.name.clone(),
                csrf: viewer.csrf(),
                theme: viewer
                    .user
                    .preferences
                    .theme
                    .map(|theme| theme.as_ref().to_owned()),
            }),
            project: None,
        }
    }

    /// The layout of a page of `membership`'s project, in the area `active` (`leads`,
    /// `reports` or `settings`).
    pub(crate) fn for_project(
        title: impl Into<String>,
        viewer: &Viewer,
        membership: &Membership,
        active: &'static str,
    ) -> Self {
        Self {
            project: Some(ProjectNav {
                public_id: membership.project.public_id.clone(),
                name: membership.project.name.clone(),
                is_owner: membership.role.allows(Role::Owner),
                active,
            }),
            ..Self::new(title, Some(viewer))
        }
    }
}

/// A page rendered with `status`; never stored by caches, since pages show private data.
pub(crate) fn page(status: StatusCode, template: &impl Template) -> Response {
    match template.render() {
        Ok(html) => uncached(status, html, "text/html; charset=utf-8"),
        Err(err) => {
            tracing::error!(error = %err, "a page failed to render");
            plain(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Something went wrong on our side.",
            )
        }
    }
}

/// A short text answer, for when not even a page can be rendered.
fn plain(status: StatusCode, text: &'static str) -> Response {
    let mut response = Response::new(text.into());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// `303 See Other` to `location` (a local path).
pub(crate) fn redirect(location: &str) -> Response {
    let mut response = Response::new(Vec::new().into());
    *response.status_mut() = StatusCode::SEE_OTHER;
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage {
    layout: Layout,
    heading: &'static str,
    message: String,
}

/// An error page.
pub(crate) fn error(
    status: StatusCode,
    viewer: Option<&Viewer>,
    heading: &'static str,
    message: impl Into<String>,
) -> Response {
    page(
        status,
        &ErrorPage {
            layout: Layout::new(heading, viewer),
            heading,
            message: message.into(),
        },
    )
}

/// `404`: also the answer for a project the user is not a member of, so ids can't be probed.
pub(crate) fn not_found(viewer: Option<&Viewer>) -> Response {
    error(
        StatusCode::NOT_FOUND,
        viewer,
        "Page not found",
        "There is no such page, or you are not a member of its project.",
    )
}

/// `403` for an action the user's role does not allow.
pub(crate) fn owners_only(viewer: &Viewer) -> Response {
    error(
        StatusCode::FORBIDDEN,
        Some(viewer),
        "Owners only",
        "Only the project's owners can do this. Ask one of them.",
    )
}

/// `403` for what a viewer asked but may not do: rate, export, change.
pub(crate) fn viewers_read(viewer: &Viewer) -> Response {
    error(
        StatusCode::FORBIDDEN,
        Some(viewer),
        "Viewers only read",
        "You can see this project's leads and reports, but not rate, export or change them. \
         Ask one of its owners for the member role.",
    )
}

/// `403` for a form that did not come from this site's own page of this session.
pub(crate) fn forged(viewer: Option<&Viewer>) -> Response {
    error(
        StatusCode::FORBIDDEN,
        viewer,
        "This form has expired",
        "The form was sent from another site or an older session, so nothing was changed. \
         Reload the page and try again.",
    )
}

/// `405` on one of the dashboard's paths.
pub(crate) fn method_not_allowed() -> Response {
    plain(StatusCode::METHOD_NOT_ALLOWED, "Method not allowed")
}

/// `413` for a form over the size limit.
pub(crate) fn too_large() -> Response {
    plain(StatusCode::PAYLOAD_TOO_LARGE, "The form is too large.")
}

/// `500` or `503` for a store failure: the cause is logged, never shown.
pub(crate) fn store_failure(err: StoreError, viewer: Option<&Viewer>) -> Response {
    if let StoreError::Unavailable(reason) = &err {
        tracing::warn!(%reason, "store unavailable");
        leadtrack_http::metrics::shed();
        let mut response = error(
            StatusCode::SERVICE_UNAVAILABLE,
            viewer,
            "Busy",
            "leadtrack is busy or restarting. Try again in a moment.",
        );
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return response;
    }
    tracing::error!(error = %err, "store failure");
    error(
        StatusCode::INTERNAL_SERVER_ERROR,
        viewer,
        "Something went wrong",
        "Something went wrong on our side, and it has been logged. Try again in a moment.",
    )
}

/// How long browsers may reuse the stylesheet and the script before revalidating them.
const ASSET_MAX_AGE: &str = "public, max-age=3600, stale-while-revalidate=86400";

/// `GET /assets/app.css`.
pub(crate) fn stylesheet(request: &Request) -> Response {
    static ASSET: OnceLock<StaticAsset> = OnceLock::new();
    ASSET
        .get_or_init(|| {
            StaticAsset::new(
                include_bytes!("../assets/app.css"),
                "text/css; charset=utf-8",
                ASSET_MAX_AGE,
            )
        })
        .response(&request.headers)
}

/// `GET /assets/app.js`: the pages' progressive enhancement (keyboard, live updates,
/// selection); every page works without it.
pub(crate) fn script(request: &Request) -> Response {
    static ASSET: OnceLock<StaticAsset> = OnceLock::new();
    ASSET
        .get_or_init(|| {
            StaticAsset::new(
                include_bytes!("../assets/app.js"),
                "text/javascript; charset=utf-8",
                ASSET_MAX_AGE,
            )
        })
        .response(&request.headers)
}

/// `GET /favicon.ico`: the dashboard's mark (`scripts/make-favicon` draws it).
pub(crate) fn favicon(request: &Request) -> Response {
    static ASSET: OnceLock<StaticAsset> = OnceLock::new();
    ASSET
        .get_or_init(|| {
            StaticAsset::new(
                include_bytes!("../assets/favicon.ico"),
                "image/vnd.microsoft.icon",
                ASSET_MAX_AGE,
            )
        })
        .response(&request.headers)
}

/// A JSON answer for a page's script; never cached.
pub(crate) fn json(status: StatusCode, body: &serde_json::Value) -> Response {
    uncached(status, body.to_string(), "application/json")
}

/// `body` as `content_type`, with `status`, kept by no cache: it is private to the viewer.
fn uncached(status: StatusCode, body: String, content_type: &'static str) -> Response {
    let mut response = Response::new(body.into());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Keeps a page that holds a secret (a one-use link's token) out of every cache.
pub(crate) fn no_store(response: &mut Response) {
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
}

/// The content policy of every page but its forms' targets: this site's own files only.
const POLICY: &str = "default-src 'self'; frame-ancestors 'none'; base-uri 'none'";

/// [`POLICY`], with forms posting to this site only.
const SAME_SITE_FORMS: &str =
    "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/// Headers every dashboard response carries: no framing (clickjacking), no sniffing, no
/// referrer to other sites, and a content policy that allows only this site's own files
/// (and forms posting to this site only, unless the page allowed more with
/// [`allow_form_redirects`]).
pub(crate) fn secure_headers(headers: &mut HeaderMap) {
    for (name, value) in [
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "same-origin"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    headers
        .entry(header::CONTENT_SECURITY_POLICY)
        .or_insert_with(|| HeaderValue::from_static(SAME_SITE_FORMS));
}

/// Lets the page's forms lead on to the origins of `urls` too (a form answered by a
/// redirect to a platform's consent page: browsers hold redirects to `form-action`).
pub(crate) fn allow_form_redirects<'a>(
    response: &mut Response,
    urls: impl IntoIterator<Item = &'a str>,
) {
    let origins: Vec<&str> = urls
        .into_iter()
        .filter_map(|url| {
            let (scheme, rest) = url.split_once("://")?;
            let authority = rest.split(['/', '?', '#']).next()?;
            let origin = &url[..scheme.len() + 3 + authority.len()];
            origin
                .bytes()
                .all(|b| b.is_ascii_graphic() && b != b';' && b != b',')
                .then_some(origin)
        })
        .collect();
    let policy = format!("{POLICY}; form-action 'self' {}", origins.join(" "));
    if let Ok(value) = HeaderValue::from_str(policy.trim_end()) {
        response
            .headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_post_to_this_site_unless_a_page_allows_a_platform_too() {
        assert_eq!(SAME_SITE_FORMS, format!("{POLICY}; form-action 'self'"));
        let mut response = Response::new(Vec::new().into());
        allow_form_redirects(
            &mut response,
            [
                "https://accounts.google.com/o/oauth2/v2/auth",
                "http://127.0.0.1:9/auth?x=1",
                "not a url",
            ],
        );
        secure_headers(response.headers_mut());
        assert_eq!(
            response.headers()[header::CONTENT_SECURITY_POLICY],
            "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self' https://accounts.google.com http://127.0.0.1:9"
        );
        let mut plain = Response::new(Vec::new().into());
        secure_headers(plain.headers_mut());
        assert_eq!(
            plain.headers()[header::CONTENT_SECURITY_POLICY],
            SAME_SITE_FORMS
        );
    }
}
