//! Rating a lead in its inbox row. It is the rating of the lead's page (the undo window,
//! the form's one-time token, one conversion per lead and label), or the lead's draft in a
//! project that reviews ratings; answered for the script that sent it with `fetch` as
//! JSON, or, without the script, by going back to the inbox view (`303`) that shows the
//! rating waiting, or the problem.

use chrono::Utc;
use leadtrack_core::Store;
use leadtrack_core::account::Membership;
use leadtrack_core::request::StatusUpdate;
use leadtrack_core::types::LeadId;
use serde_json::json;
use uuid::Uuid;
use warp::http::StatusCode;
use warp::http::header::ACCEPT;
use warp::reply::Response;

use crate::access::MemberForm;
use crate::lead;
use crate::list;
use crate::rating::BulkResult;
use crate::rating::Held;
use crate::routes::Links;
use crate::session::Form;
use crate::view::InboxView;
use crate::viewer::Viewer;
use crate::{Request, drafts, render};

/// Whether the request was sent by the page's script, which reads JSON.
pub(crate) fn wants_json(request: &Request) -> bool {
    request
        .headers
        .get(ACCEPT)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|accept| accept.starts_with("application/json"))
}

/// `POST /projects/{projectId}/leads/{leadId}/rate` from an inbox row (its form names the
/// view to go `back` to). In a project that reviews ratings, the row's rating is kept as
/// the lead's draft instead.
pub(crate) async fn save<S: Store>(
    store: &S,
    member: MemberForm,
    id: LeadId,
    json: bool,
) -> Response {
    let (viewer, membership, form) = member;
    let saved = match lead::update_of(id, &form) {
        Ok(update) if membership.project.review_ratings => {
            draft(store, (&viewer, &membership), &update).await
        }
        Ok(update) => rate(store, (&viewer, &membership), (id, &update), &form).await,
        Err(problem) => Err(problem),
    };
    let back = form.get("back");
    match (saved, json) {
        (Ok(body), true) => render::json(StatusCode::OK, &body),
        (Ok(_), false) => render::redirect(&format!(
            "{}?{back}#lead-{id}",
            Links::new(&membership.project.public_id).inbox()
        )),
        (Err((StatusCode::NOT_FOUND, _)), false) => render::not_found(Some(&viewer)),
        (Err((status, problem)), true) => render::json(status, &json!({ "problem": problem })),
        (Err((status, problem)), false) => {
            let result = BulkResult {
                problem: Some(problem),
                ..BulkResult::default()
            };
            let shown = InboxView::from_query(back, viewer.user.id);
            let mut page = list::page(store, &viewer, &membership, shown, Some(result)).await;
            *page.status_mut() = status;
            page
        }
    }
}

/// Rates the lead through the row's form; what the script is told: how it went, how
/// long the rating waits, and the token for the row's next save.
async fn rate<S: Store>(
    store: &S,
    (viewer, membership): (&Viewer, &Membership),
    (id, update): (LeadId, &StatusUpdate),
    form: &Form,
) -> Result<serde_json::Value, (StatusCode, String)> {
    let token = form.get("form").parse().unwrap_or_else(|_| Uuid::new_v4());
    let rated = lead::apply(store, (viewer, membership), update, token).await?;
    let project = membership.project.id;
    let status = store
        .find_lead(project, &leadtrack_core::types::LeadIdentifier::LeadId(id))
        .await
        .map(|lead| lead.status)
        .ok();
    let jobs = store.lead_jobs(project, id).await;
    let now = Utc::now();
    let held = jobs.ok().and_then(|jobs| {
        let newest = jobs.first()?;
        Held::of(newest, String::new(), now)
    });
    Ok(json!({
        "rated": rated.as_ref(),
        "status": status.map(|status| status.as_ref().to_owned()),
        "heldMs": held.map_or(0, |held| held.ms_left),
        "form": Uuid::new_v4().to_string(),
    }))
}

/// Keeps the row's rating as the lead's draft; what the script is told: that, and how
/// many drafts the project has now.
async fn draft<S: Store>(
    store: &S,
    member: (&Viewer, &Membership),
    update: &StatusUpdate,
) -> Result<serde_json::Value, (StatusCode, String)> {
    let kept = drafts::keep(store, member, update).await?;
    let count = store
        .drafts(member.1.project.id)
        .await
        .map_or(0, |d| d.len());
    Ok(json!({
        "rated": kept.as_ref(),
        "heldMs": 0,
        "drafts": count,
        "form": Uuid::new_v4().to_string(),
    }))
}
