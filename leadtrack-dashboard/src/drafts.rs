//! Reviewing ratings before sending them, a project's choice ([`leadtrack_core::draft`]):
//! in such a project a rating made in the inbox is kept as the lead's draft, shown to the
//! team and to nothing else; "Send N ratings" rates every draft as one batch (one form
//! token, so one undo window and one Undo), by the same rules as any rating.

use chrono::Utc;
use leadtrack_core::Store;
use leadtrack_core::account::Membership;
use leadtrack_core::draft::Draft;
use leadtrack_core::request::StatusUpdate;
use leadtrack_core::types::{ConversionId, LeadIdentifier};
use uuid::Uuid;
use warp::http::StatusCode;
use warp::reply::Response;

use crate::access::MemberForm;
use crate::bulk::Outcome;
use crate::lead;
use crate::rating::Refusal;
use crate::render;
use crate::routes::Links;
use crate::viewer::Viewer;

/// What keeping a draft did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, strum::AsRefStr)]
#[strum(serialize_all = "lowercase")]
pub(crate) enum Kept {
    /// The lead's draft is the rating asked for.
    Draft,
    /// The rating asked for is the lead's own: its draft is gone.
    Discarded,
}

/// Keeps `update` as its lead's draft, by the viewer; or drops the lead's draft when
/// `update` asks for what the lead already is. `Err` with the problem and its status.
pub(crate) async fn keep<S: Store>(
    store: &S,
    (viewer, membership): (&Viewer, &Membership),
    update: &StatusUpdate,
) -> Result<Kept, (StatusCode, String)> {
    let project = membership.project.id;
    let failed = |err: leadtrack_core::StoreError| {
        tracing::error!(error = %err, "keeping a draft failed");
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            "Something went wrong on our side; nothing was changed. Try again.".to_owned(),
        )
    };
    let lead = match store.find_lead(project, &update.identifier).await {
        Ok(lead) => lead,
        Err(leadtrack_core::StoreError::NotFound(_)) => {
            return Err((StatusCode::NOT_FOUND, String::new()));
        }
        Err(err) => return Err(failed(err)),
    };
    if let ConversionId::Label(id) = update.conversion_id
        && store.label(project, id).await.is_err()
    {
        let problem = "That label no longer exists. Reload the page.".to_owned();
        return Err((StatusCode::BAD_REQUEST, problem));
    }
    let now_is = lead.conversion_id.unwrap_or(ConversionId::Open);
    if now_is == update.conversion_id && lead.price == update.price {
        store
            .discard_draft(project, lead.id)
            .await
            .map_err(failed)?;
        return Ok(Kept::Discarded);
    }
    let draft = Draft {
        lead_id: lead.id,
        conversion_id: update.conversion_id,
        price: update.price,
        by: viewer.actor(),
        at: Utc::now(),
    };
    store.save_draft(project, &draft).await.map_err(failed)?;
    Ok(Kept::Draft)
}

/// `POST /projects/{projectId}/leads/send-drafts`: rates every draft of the project as
/// one batch; then back to the inbox view (`303`), which says what was sent and offers
/// the batch's Undo.
pub(crate) async fn send<S: Store>(store: &S, member: MemberForm) -> Response {
    let (viewer, membership, form) = member;
    let project = &membership.project;
    let drafts = match store.drafts(project.id).await {
        Ok(drafts) => drafts,
        Err(err) => return render::store_failure(err, Some(&viewer)),
    };
    let window = chrono::Duration::seconds(i64::from(project.undo_window_seconds));
    let token = form.get("form").parse().unwrap_or_else(|_| Uuid::new_v4());
    let mut outcome = Outcome::new(token, window);
    for draft in &drafts {
        let update = StatusUpdate {
            identifier: LeadIdentifier::LeadId(draft.lead_id),
            conversion_id: draft.conversion_id,
            price: draft.price,
            note: None,
        };
        let rated = lead::apply(store, (&viewer, &membership), &update, token).await;
        if outcome.count(draft.lead_id, rated).is_err() {
            outcome.refused.push((draft.lead_id, Refusal::Invalid));
        }
    }
    render::redirect(&format!(
        "{}?{}&{}",
        Links::new(&project.public_id).inbox(),
        form.get("back"),
        outcome.query()
    ))
}
