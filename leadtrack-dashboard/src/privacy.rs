//! A lead's person's requests about their data (owners): everything kept about them, as
//! one JSON file (core's `privacy`), and their erasure, after a page that says how many
//! leads it erases (core's `store::erasure`). The person is the lead's email, else its
//! phone, else the lead alone.

use askama::Template;
use chrono::Utc;
use leadtrack_core::StoredLead;
use leadtrack_core::account::Membership;
use leadtrack_core::activity::Attribution;
use leadtrack_core::store::erasure::person_of;
use leadtrack_core::types::{LeadId, LeadIdentifier, ProjectId};
use leadtrack_core::{Store, StoreError};
use warp::Reply as _;
use warp::http::StatusCode;
use warp::http::header::{self, HeaderValue};
use warp::reply::Response;

use crate::access::MemberForm;
use crate::rating::{Rated, display_name};
use crate::render::{self, Layout};
use crate::routes::{Leads, Links};
use crate::viewer::Viewer;

#[derive(Template)]
#[template(path = "erase.html")]
struct ErasePage {
    layout: Layout,
    project_id: String,
    lead_id: LeadId,
    name: String,
    /// How the person is matched, in words: `the email ada@example.com`.
    matched_by: String,
    /// The leads it erases, as `#41`.
    leads: Vec<String>,
    csrf: String,
}

/// `GET /projects/{projectId}/leads/{leadId}/erase`: says what erasing the lead's person
/// takes, and asks.
pub(crate) async fn ask<S: Store>(
    store: &S,
    (viewer, membership): (Viewer, Membership),
    id: LeadId,
) -> Response {
    let project = &membership.project;
    let (lead, person) = match person(store, &viewer, project.id, id).await {
        Ok(found) => found,
        Err(answer) => return answer,
    };
    let leads = match store.person_leads(project.id, &person).await {
        Ok(leads) => leads,
        Err(err) => return render::store_failure(err, Some(&viewer)),
    };
    let name = display_name(&lead);
    let matched_by = match &person {
        LeadIdentifier::Email(email) => format!("the email {email}"),
        LeadIdentifier::Phone(phone) => format!("the phone number {phone}"),
        _ => "this lead alone (it has no email or phone)".to_owned(),
    };
    let page = ErasePage {
        layout: Layout::for_project(format!("Erase {name}"), &viewer, &membership, "leads"),
        project_id: project.public_id.clone(),
        lead_id: id,
        name,
        matched_by,
        leads: leads.iter().map(|lead| format!("#{lead}")).collect(),
        csrf: viewer.csrf(),
    };
    render::page(StatusCode::OK, &page)
}

/// `POST /projects/{projectId}/leads/{leadId}/erase`: erases the lead's person; then back
/// to the lead, which says so.
pub(crate) async fn erase<S: Store>(
    store: &S,
    member: MemberForm,
    id: LeadId,
    by: &Attribution,
) -> Response {
    let (viewer, membership, _) = member;
    let project = &membership.project;
    let (_, person) = match person(store, &viewer, project.id, id).await {
        Ok(found) => found,
        Err(answer) => return answer,
    };
    let done = match store
        .erase_person(project.id, &person, by, Utc::now())
        .await
    {
        Ok(_) => Rated::Erased,
        Err(StoreError::Conflict(_)) => Rated::Unerasable,
        Err(err) => return render::store_failure(err, Some(&viewer)),
    };
    render::redirect(&format!(
        "{}?done={}",
        Links::new(&project.public_id).lead(Leads::Lead, &id),
        done.as_ref()
    ))
}

/// `GET /projects/{projectId}/leads/{leadId}/person.json`: everything the project keeps
/// about the lead's person, as a file to download.
pub(crate) async fn download<S: Store>(
    store: &S,
    (viewer, membership): (Viewer, Membership),
    id: LeadId,
) -> Response {
    let project = &membership.project;
    let (_, person) = match person(store, &viewer, project.id, id).await {
        Ok(found) => found,
        Err(answer) => return answer,
    };
    let export = leadtrack_core::privacy::export(store, project, &person, Utc::now());
    let export = match export.await {
        Ok(export) => export,
        Err(err) => return render::store_failure(err, Some(&viewer)),
    };
    let body = serde_json::to_vec_pretty(&export).unwrap_or_default();
    let mut response = warp::reply::with_status(body, StatusCode::OK).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    let filename = format!("attachment; filename=\"person-of-lead-{id}.json\"");
    if let Ok(value) = HeaderValue::from_str(&filename) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The lead `id` of the viewer's project and its person, or the page that says why not.
async fn person<S: Store>(
    store: &S,
    viewer: &Viewer,
    project: ProjectId,
    id: LeadId,
) -> Result<(StoredLead, LeadIdentifier), Response> {
    let lead = crate::access::found(store, viewer, project, id).await?;
    let person = person_of(&lead);
    Ok((lead, person))
}
