//! Giving leads to members: from a lead's page (to anyone who may take leads), from an
//! inbox row ("Take": to me) and for the ticked leads of the inbox; then back where the
//! form came from, saying what was done.

use chrono::Utc;
use leadtrack_core::Store;
use leadtrack_core::store::{Entity, StoreError};
use leadtrack_core::types::{LeadId, UserId};
use warp::http::StatusCode;
use warp::reply::Response;

use crate::access::MemberForm;
use crate::list;
use crate::rating::BulkResult;
use crate::rating::Rated;
use crate::render;
use crate::routes::{Leads, Links, parse_id};
use crate::view::InboxView;
use crate::viewer::Viewer;

/// Who a form's `to` names: `me`, a user id, or `none` for nobody; `None` when it names
/// nobody at all (empty: no choice made) or nothing sensible.
fn recipient(to: &str, viewer: &Viewer) -> Option<Option<UserId>> {
    match to {
        "none" => Some(None),
        "me" => Some(Some(viewer.user.id)),
        id => id.parse().ok().map(|id| Some(UserId(id))),
    }
}

/// `POST /projects/{projectId}/leads/{leadId}/assign` (`lead`: that lead) and
/// `POST /projects/{projectId}/leads/assign` (the ticked `lead`s): assigns them to the
/// form's `to`.
pub(crate) async fn assign<S: Store>(
    store: &S,
    member: MemberForm,
    lead: Option<LeadId>,
) -> Response {
    let (viewer, membership, form) = member;
    let project = &membership.project;
    let leads: Vec<LeadId> = match lead {
        Some(lead) => vec![lead],
        None => form.all("lead").filter_map(parse_id).collect(),
    };
    let back = form.all("back").next();
    let to = recipient(form.get("to"), &viewer);
    // A form without a choice or without a ticked lead is shown again, saying so.
    let missing = match (to, leads.is_empty()) {
        (None, _) => Some("Pick who to assign them to first."),
        (_, true) => Some("Tick the leads to assign first."),
        _ => None,
    };
    if let (Some(problem), Some(back)) = (missing, back) {
        let result = BulkResult {
            problem: Some(problem.to_owned()),
            ..BulkResult::default()
        };
        let shown = InboxView::from_query(back, viewer.user.id);
        return list::page(store, &viewer, &membership, shown, Some(result)).await;
    }
    let (Some(to), false) = (to, leads.is_empty()) else {
        return render::not_found(Some(&viewer));
    };
    let assigned = store
        .assign(project.id, &leads, to, &viewer.actor(), Utc::now())
        .await;
    match (assigned, back) {
        (Ok(changed), Some(back)) => render::redirect(&format!(
            "{}?{back}&assigned={}",
            Links::new(&project.public_id).inbox(),
            changed.len()
        )),
        (Ok(_), None) => render::redirect(&format!(
            "{}?done={}",
            Links::new(&project.public_id).lead(Leads::Lead, &leads[0]),
            Rated::Assigned.as_ref()
        )),
        (Err(StoreError::NotFound(Entity::User)), _) => render::error(
            StatusCode::BAD_REQUEST,
            Some(&viewer),
            "That person cannot take leads",
            "Leads go to members who can rate them: not to viewers, disabled users or people \
             outside the project. Nothing was assigned.",
        ),
        (Err(StoreError::NotFound(Entity::Lead)), _) => render::not_found(Some(&viewer)),
        (Err(err), _) => render::store_failure(err, Some(&viewer)),
    }
}

/// The inbox's banner after an assignment, from its `assigned=` count.
pub(crate) fn notice(query: &str) -> Option<BulkResult> {
    let notice = match crate::query_param(query, "assigned")?
        .parse::<usize>()
        .ok()?
    {
        0 => "Nothing changed: they were assigned so already.".to_owned(),
        1 => "1 lead assigned.".to_owned(),
        n => format!("{n} leads assigned."),
    };
    Some(BulkResult {
        notice: Some(notice),
        ..BulkResult::default()
    })
}
