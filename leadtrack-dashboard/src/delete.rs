//! Deleting a lead (owners): a page that asks, and the form that deletes it. The lead goes
//! with its history and conversions; the project's history keeps its id, who and when.

use askama::Template;
use chrono::Utc;
use leadtrack_core::activity::Attribution;
use leadtrack_core::types::LeadId;
use leadtrack_core::{Store, StoreError};
use warp::http::StatusCode;
use warp::reply::Response;

use crate::access::MemberForm;
use crate::rating::BulkResult;
use crate::rating::{Rated, display_name};
use crate::render::{self, Layout};
use crate::routes::{Leads, Links};
use crate::viewer::Viewer;
use leadtrack_core::account::Membership;

#[derive(Template)]
#[template(path = "delete.html")]
struct DeletePage {
    layout: Layout,
    project_id: String,
    lead_id: LeadId,
    name: String,
    csrf: String,
}

/// `GET /projects/{projectId}/leads/{leadId}/delete`: asks whether to delete the lead.
pub(crate) async fn ask<S: Store>(
    store: &S,
    (viewer, membership): (Viewer, Membership),
    id: LeadId,
) -> Response {
    let project = &membership.project;
    let lead = match crate::access::found(store, &viewer, project.id, id).await {
        Ok(lead) => lead,
        Err(answer) => return answer,
    };
    let name = display_name(&lead);
    let page = DeletePage {
        layout: Layout::for_project(format!("Delete {name}"), &viewer, &membership, "leads"),
        project_id: project.public_id.clone(),
        lead_id: id,
        name,
        csrf: viewer.csrf(),
    };
    render::page(StatusCode::OK, &page)
}

/// `POST /projects/{projectId}/leads/{leadId}/delete`: deletes the lead; then to the inbox,
/// which says so, or back to the lead while its conversion may still be on its way.
pub(crate) async fn delete<S: Store>(
    store: &S,
    member: MemberForm,
    id: LeadId,
    by: &Attribution,
) -> Response {
    let (viewer, membership, _) = member;
    let project = &membership.project;
    match store.delete_lead(project.id, id, by, Utc::now()).await {
        Ok(()) => render::redirect(&format!(
            "{}?deleted={id}",
            Links::new(&project.public_id).inbox()
        )),
        Err(StoreError::Conflict(_)) => render::redirect(&format!(
            "{}?done={}",
            Links::new(&project.public_id).lead(Leads::Lead, &id),
            Rated::Undeletable.as_ref()
        )),
        Err(StoreError::NotFound(_)) => render::not_found(Some(&viewer)),
        Err(err) => render::store_failure(err, Some(&viewer)),
    }
}

/// The inbox's banner after a deletion, from its `deleted=` (a lead id, nothing else).
pub(crate) fn notice(query: &str) -> Option<BulkResult> {
    let id: i64 = crate::query_param(query, "deleted")?.parse().ok()?;
    Some(BulkResult {
        notice: Some(format!(
            "Lead #{id} deleted, with its history and conversions."
        )),
        ..BulkResult::default()
    })
}
