//! leadtrack's lead sources: the webhooks the ad platforms' own lead forms post their
//! leads to, as one mountable warp filter.
//!
//! | Route | Answers |
//! |---|---|
//! | `POST /webhooks/google/lead-forms/{projectId}` | `200 {"leadId", "created"}`; `401 invalid_api_key` for a key that is not the project's; `404 project_not_found`; `400 invalid_json` for a body that is not a Google lead |
//!
//! A project takes Google lead form leads once its key is set
//! (`server integration google-lead-forms`, [`leadtrack_core::source::LeadSource`]). Google
//! retries a delivery until it gets a `200`, so a lead is kept before it is answered, and
//! a retried delivery (the same `lead_id`) merges into the lead it made.
//!
//! ```no_run
//! # async fn mount(store: leadtrack_sqlite::SqliteStore) {
//! use warp::Filter;
//! let app = leadtrack_sources::routes(store.clone())
//!     .or(leadtrack_warp::routes(store, leadtrack_warp::Config::default()));
//! # }
//! ```

#![forbid(unsafe_code)]

use std::sync::Arc;

use chrono::Utc;
use leadtrack_core::request::{CreateRoute, NewLead};
use leadtrack_core::source::{LeadSource, SourceKind, google_form_lead};
use leadtrack_core::store::Entity;
use leadtrack_core::{Admin, ErrorCode, LeadStore, StoreError};
use leadtrack_http::{Body, Request};
use serde_json::json;
use subtle::ConstantTimeEq;
use warp::http::{Method, StatusCode};
use warp::reply::Response;
use warp::{Filter, Rejection};

/// Where Google's lead form webhooks post, followed by the project's public id.
const GOOGLE_LEAD_FORMS: &str = "/webhooks/google/lead-forms/";

/// The largest body taken: a lead form has a few dozen short answers.
const BODY_LIMIT: usize = 64 * 1024;

/// The lead sources' routes, answered from `store`. Requests to other paths are rejected
/// with warp's "not found", for the host's own routes.
pub fn routes<S: LeadStore + Admin>(
    store: S,
) -> impl Filter<Extract = (Response,), Error = Rejection> + Clone + Send + Sync + 'static {
    let store = Arc::new(store);
    leadtrack_http::claimed(|path| path.starts_with(GOOGLE_LEAD_FORMS)).then(
        move |request: Request, body: Body| {
            let store = Arc::clone(&store);
            async move { google_lead_form(&*store, &request, body).await }
        },
    )
}

/// `POST /webhooks/google/lead-forms/{projectId}`: one lead of the project's Google Ads
/// lead forms (<https://developers.google.com/google-ads/webhook/docs/implementation>),
/// kept when its `google_key` is the project's (compared in constant time), and created
/// through the keyed route's rules.
async fn google_lead_form<S: LeadStore + Admin>(
    store: &S,
    request: &Request,
    body: Body,
) -> Response {
    if request.method != Method::POST {
        let mut refused = leadtrack_http::error(
            ErrorCode::MethodNotAllowed,
            "Google posts its leads: use POST",
        );
        refused
            .headers_mut()
            .insert("allow", warp::http::HeaderValue::from_static("POST"));
        return refused;
    }
    let public_id = &request.path[GOOGLE_LEAD_FORMS.len()..];
    let project = match store.project_by_public_id(public_id).await {
        Ok(project) => project,
        Err(err) => return store_error(&err),
    };
    let expected = match store
        .lead_source(project.id, SourceKind::GoogleLeadForms)
        .await
    {
        Ok(Some(LeadSource::GoogleLeadForms { key })) => key,
        Ok(None) => return wrong_key(public_id),
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

/// A store's failure as an answer: an unknown project is `404`; anything else is a `503`
/// (Google delivers again later), with no internals.
fn store_error(err: &StoreError) -> Response {
    match err {
        StoreError::NotFound(Entity::Project) => {
            leadtrack_http::error(ErrorCode::ProjectNotFound, "No such project")
        }
        err => {
            tracing::error!(error = %err, "a Google lead form lead could not be kept");
            leadtrack_http::error(
                ErrorCode::Unavailable,
                "The lead could not be kept now; deliver it again later",
            )
        }
    }
}
