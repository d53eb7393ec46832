//! A user's own choices of how the dashboard looks: the inbox's columns and the colour
//! scheme. Each is a form that saves the choice with the user and goes back (`303`) to the
//! page it was posted from.

use leadtrack_core::Accounts;
use leadtrack_core::account::Theme;
use leadtrack_http::Body;
use warp::reply::Response;

use crate::columns::Col;
use crate::routes::Route;
use crate::{Config, Request, access, render};

/// Saves the choice `route` posts (its columns or its theme), then back.
pub(crate) async fn save<S: Accounts>(
    store: &S,
    config: &Config,
    request: &Request,
    route: Route,
    body: Body,
) -> Response {
    let (viewer, form) = match access::user_form(store, config, request, body).await {
        Ok(found) => found,
        Err(response) => return response,
    };
    let mut preferences = viewer.user.preferences.clone();
    match route {
        Route::SaveColumns => preferences.inbox_columns = Some(Col::names(form.all("column"))),
        // `system` (or anything else) follows the system again.
        _ => preferences.theme = form.get("theme").parse::<Theme>().ok(),
    }
    // The header's theme switch is on every page: it goes back to the page it was on.
    let back = match form.get("back") {
        "" => referer_path(request).unwrap_or_default(),
        back => back.to_owned(),
    };
    match store.set_preferences(viewer.user.id, &preferences).await {
        Ok(()) => render::redirect(local(&back)),
        Err(err) => render::store_failure(err, Some(&viewer)),
    }
}

/// The path and query of the page a form was posted from (the dashboard's pages send
/// their address to their own site: `Referrer-Policy: same-origin`).
fn referer_path(request: &Request) -> Option<String> {
    let referer = request.headers.get(warp::http::header::REFERER)?;
    let (_, rest) = referer.to_str().ok()?.split_once("://")?;
    let path = &rest[rest.find('/')?..];
    Some(path.split('#').next().unwrap_or_default().to_owned())
}

/// `back` when it is a path of this site, else the projects page: a form never sends
/// anyone elsewhere.
fn local(back: &str) -> &str {
    let ours = back.starts_with('/') && !back.starts_with("//") && !back.contains('\\');
    if ours && !back.chars().any(char::is_control) {
        back
    } else {
        "/"
    }
}

#[cfg(test)]
mod tests {
    use super::local;

    #[test]
    fn only_a_path_of_this_site_is_gone_back_to() {
        assert_eq!(
            local("/projects/p/leads?tab=open"),
            "/projects/p/leads?tab=open"
        );
        for elsewhere in [
            "https://evil.example/",
            "//evil.example",
            "/\\evil.example",
            "",
            "x",
        ] {
            assert_eq!(local(elsewhere), "/", "{elsewhere}");
        }
        assert_eq!(local("/a\r\nSet-Cookie: x"), "/");
    }
}
