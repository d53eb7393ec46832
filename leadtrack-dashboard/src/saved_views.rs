//! Saved views ([`leadtrack_core::saved_view`]): the inbox's Views panel saves the view on
//! screen (its tab, search, filters, sort and columns) under a name, for the viewer or the
//! whole team, and lists them beside the tabs; opening one shows its columns.

use chrono::Utc;
use leadtrack_core::Store;
use leadtrack_core::saved_view::NewSavedView;
use leadtrack_core::types::Role;
use leadtrack_http::Body;
use warp::reply::Response;

use crate::columns::Col;
use crate::rating::BulkResult;
use crate::routes::Links;
use crate::view::InboxView;
use crate::view::opening;
use crate::{Config, Request, access, list, render};

/// `POST /projects/{projectId}/views`: saves the posted view (`name`, `shared`, `query`,
/// its `column`s), then opens it (`303`). A bad name shows the inbox again with why (`400`).
pub(crate) async fn save<S: Store>(
    store: &S,
    config: &Config,
    request: &Request,
    public_id: &str,
    body: Body,
) -> Response {
    let found = access::project_form(store, config, request, public_id, Role::Viewer, body).await;
    let (viewer, membership, form) = match found {
        Ok(found) => found,
        Err(response) => return response,
    };
    let (inbox, query) = InboxView::from_query(form.get("query"), viewer.user.id);
    // The query as the inbox writes it back, so a saved view holds only what it knows.
    let kept = InboxView {
        saved: None,
        page: 1,
        ..inbox.clone()
    }
    .href(&[]);
    let columns = form
        .all("column")
        .next()
        .is_some()
        .then(|| Col::names(form.all("column")));
    let shared = form.get("shared") == "yes";
    let new = match NewSavedView::new(form.get("name"), &kept, columns, shared) {
        Ok(new) => new,
        Err(problem) => {
            let result = BulkResult {
                problem: Some(problem.to_owned()),
                ..BulkResult::default()
            };
            return list::page(store, &viewer, &membership, (inbox, query), Some(result)).await;
        }
    };
    let project = &membership.project;
    match store
        .save_view(project.id, viewer.user.id, &new, Utc::now())
        .await
    {
        Ok(view) => render::redirect(&format!(
            "{}?{}",
            Links::new(&project.public_id).inbox(),
            opening(&view)
        )),
        Err(err) => render::store_failure(err, Some(&viewer)),
    }
}

/// `POST /projects/{projectId}/views/{id}/delete`: deletes a view the viewer may delete
/// (their own, or as an owner the team's), then back to the inbox (`303`, to `back`).
pub(crate) async fn delete<S: Store>(
    store: &S,
    config: &Config,
    request: &Request,
    (public_id, id): (&str, &str),
    body: Body,
) -> Response {
    let found = access::project_form(store, config, request, public_id, Role::Viewer, body).await;
    let (viewer, membership, form) = match found {
        Ok(found) => found,
        Err(response) => return response,
    };
    let project = membership.project.id;
    let views = match store.saved_views(project, viewer.user.id).await {
        Ok(views) => views,
        Err(err) => return render::store_failure(err, Some(&viewer)),
    };
    let Some(view) = views.iter().find(|view| view.id.to_string() == id) else {
        return render::not_found(Some(&viewer));
    };
    // Another's own views are never listed: only the team's can be refused here.
    if !view.may_delete(viewer.user.id, membership.role) {
        return render::owners_only(&viewer);
    }
    if let Err(err) = store.delete_view(project, view.id).await {
        return render::store_failure(err, Some(&viewer));
    }
    let (back, _) = InboxView::from_query(form.get("back"), viewer.user.id);
    let back = InboxView {
        saved: None,
        ..back
    };
    render::redirect(&format!(
        "{}?{}",
        Links::new(&membership.project.public_id).inbox(),
        back.href(&[])
    ))
}
