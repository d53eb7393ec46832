//! Google Ads lead form assets: each lead Google posts to the project's webhook
//! (<https://developers.google.com/google-ads/webhook/docs/implementation>).

use chrono::Utc;
use leadtrack_core::request::{CreateRoute, NewLead};
use leadtrack_core::source::{LeadSource, SourceKind, google_form_lead};
use leadtrack_core::{Admin, ErrorCode, LeadStore};
use leadtrack_http::{Body, Request};
use serde_json::json;
use subtle::ConstantTimeEq;
use warp::http::StatusCode;
use warp::reply::Response;

use crate::{BODY_LIMIT, store_error};

/// Where Google's lead form webhooks post: the project's public id names the project.
pub(crate) const PATH: &str = "/webhooks/google/lead-forms/{project}";

/// `POST /webhooks/google/lead-forms/{projectId}`: one lead of the project's Google Ads
/// lead forms (<https://developers.google.com/google-ads/webhook/docs/implementation>),
/// kept when its `google_key` is the project's (compared in constant time), and created
/// through the keyed route's rules.
pub(crate) async fn post<S: LeadStore + Admin>(
    store: &S,
    request: &Request,
    public_id: &str,
    body: Body,
) -> Response {
    let project = match store.project_by_public_id(public_id).await {
        Ok(project) => project,
        Err(err) => return store_error(&err),
    };
    let expected = match store
        .lead_source(project.id, SourceKind::GoogleLeadForms)
        .await
    {
        Ok(Some(LeadSource::GoogleLeadForms { key })) => key,
        Ok(_) => return wrong_key(public_id),
        Err(err) => return store_error(&err),
    };
    let bytes = match body.read(&request.headers, BODY_LIMIT).await {
        Ok(bytes) => bytes,
        Err(err) => {
            return leadtrack_http::error(ErrorCode::PayloadTooLarge, err.to_string());
        }
    };
    let posted = serde_json::from_slice(&bytes).ok();
    let Some(lead) = posted.as_ref().and_then(google_form_lead) else {
        return leadtrack_http::error(
            ErrorCode::InvalidJson,
            "The body is not a Google lead form lead: it needs a lead_id and a google_key",
        );
    };
    if !bool::from(lead.key.as_bytes().ct_eq(expected.expose().as_bytes())) {
        return wrong_key(public_id);
    }
    let body = lead.body.as_object().cloned().unwrap_or_default();
    let parsed = match NewLead::from_object(body, CreateRoute::Server) {
        Ok(parsed) => parsed,
        // A lead with no answer at all: the contract's own refusal (no_lead_data).
        Err(err) => return leadtrack_http::error_body(err.into()),
    };
    let created = store
        .create_lead_via(project.id, CreateRoute::Server, parsed.data, Utc::now())
        .await;
    match created {
        Ok(created) => {
            if created.created {
                leadtrack_http::metrics::lead_created("googleLeadForm", &project.public_id);
            }
            tracing::info!(project = %project.public_id, lead = %created.lead_id, created = created.created, test = lead.is_test, "Google lead form lead kept");
            let answer = json!({"leadId": created.lead_id, "created": created.created});
            leadtrack_http::json(StatusCode::OK, &answer)
        }
        Err(err) => store_error(&err),
    }
}

/// The refusal of a post whose key is not the project's, or to a project that set none:
/// the same answer, so that it tells nothing of which.
fn wrong_key(public_id: &str) -> Response {
    tracing::warn!(
        project = public_id,
        "a Google lead form post with a key that is not the project's refused"
    );
    leadtrack_http::error(
        ErrorCode::InvalidApiKey,
        "The google_key is not this project's lead form key",
    )
}
