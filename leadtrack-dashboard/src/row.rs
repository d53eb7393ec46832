//! Rating a lead in its inbox row. It is the rating of the lead's page (the undo window,
//! the form's one-time token, one conversion per lead and label), answered for the script
//! that sent it with `fetch` as JSON, or, without the script, by going back to the inbox
//! view (`303`) that shows the rating waiting, or the problem.

use chrono::Utc;
use leadtrack_core::Store;
use leadtrack_core::types::LeadId;
use serde_json::json;
use warp::http::StatusCode;
use warp::http::header::ACCEPT;
use warp::reply::Response;

use crate::inbox::MemberForm;
use crate::lead::{self, Held};
use crate::list::{self, BulkResult};
use crate::view::InboxView;
use crate::{Request, render};

/// Whether the request was sent by the page's script, which reads JSON.
pub(crate) fn wants_json(request: &Request) -> bool {
    request
        .headers
        .get(ACCEPT)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|accept| accept.starts_with("application/json"))
}

/// `POST /projects/{projectId}/leads/{leadId}/rate` from an inbox row (its form names the
/// view to go `back` to).
pub(crate) async fn save<S: Store>(
    store: &S,
    member: MemberForm,
    id: LeadId,
    json: bool,
) -> Response {
    let (viewer, membership, form) = member;
    let rated = lead::rate(store, &viewer, &membership, id, &form).await;
    let back = form.get("back");
    let public_id = &membership.project.public_id;
    match (rated, json) {
        (Ok(rated), true) => {
            let jobs = store.lead_jobs(membership.project.id, id).await;
            let now = Utc::now();
            let held = jobs.ok().and_then(|jobs| {
                let newest = jobs.first()?;
                Held::of(newest, String::new(), now)
            });
            let body = json!({
                "rated": rated.as_ref(),
                "heldMs": held.map_or(0, |held| held.ms_left),
                "form": uuid::Uuid::new_v4().to_string(),
            });
            render::json(StatusCode::OK, &body)
        }
        (Ok(_), false) => {
            render::redirect(&format!("/projects/{public_id}/leads?{back}#lead-{id}"))
        }
        (Err((StatusCode::NOT_FOUND, _)), false) => render::not_found(Some(&viewer)),
        (Err((status, problem)), true) => render::json(status, &json!({ "problem": problem })),
        (Err((status, problem)), false) => {
            let result = BulkResult {
                problem: Some(problem),
                ..BulkResult::default()
            };
            let shown = InboxView::from_query(back);
            let mut page = list::page(store, &viewer, &membership, shown, Some(result)).await;
            *page.status_mut() = status;
            page
        }
    }
}
