//! What needs attention: the leads whose last conversion has not reached a platform (it
//! failed for good, or failed and waits for its next attempt), each with the platform's
//! answer, and for owners a Retry. The inbox links here with the count, and marks each such
//! row.

use askama::Template;
use chrono::{DateTime, Utc};
use leadtrack_core::Store;
use leadtrack_core::account::Membership;
use leadtrack_core::job::{TROUBLES_LISTED, Trouble};
use leadtrack_core::types::{DeliveryState, LeadId, LeadIdentifier, Role};
use warp::http::StatusCode;
use warp::reply::Response;

use crate::rating::{Rated, conversion_name, display_name, platform_name};
use crate::render::{self, Layout};
use crate::routes::{Leads, Links};
use crate::viewer::Viewer;
use crate::{Request, access, format};

/// A troubled delivery as the page and an inbox row show it.
pub(crate) struct Shown {
    /// The platform's name.
    pub(crate) platform: &'static str,
    /// "failed", or when it is tried again.
    pub(crate) state: String,
    /// What the platform answered last, as recorded.
    pub(crate) reason: String,
}

impl Shown {
    /// `trouble` in words, at `now`.
    pub(crate) fn of(trouble: &Trouble, now: DateTime<Utc>) -> Self {
        let delivery = &trouble.delivery;
        let state = match (delivery.state, delivery.next_attempt_at) {
            (DeliveryState::Pending, Some(next)) if next > now => {
                format!("failing, tried again in {}", format::span(next - now))
            }
            (DeliveryState::Pending, _) => "failing, tried again soon".to_owned(),
            _ => "failed".to_owned(),
        };
        Self {
            platform: platform_name(delivery.integration),
            state,
            reason: delivery
                .detail
                .clone()
                .unwrap_or_else(|| "no answer recorded".to_owned()),
        }
    }
}

/// One row of the page: a lead's troubled delivery.
struct Row {
    lead: LeadId,
    name: String,
    rating: String,
    rated: String,
    shown: Shown,
    /// Failed for good, so a Retry sends it again (one waiting for its next attempt is
    /// still being sent).
    retryable: bool,
}

#[derive(Template)]
#[template(path = "attention.html")]
struct AttentionPage<'a> {
    layout: Layout,
    links: Links<'a>,
    rows: Vec<Row>,
    /// The list stopped at [`TROUBLES_LISTED`] jobs.
    full: bool,
    listed: u32,
    owner: bool,
    csrf: String,
    /// What a Retry did.
    notice: Option<String>,
}

/// `GET /projects/{projectId}/leads/attention`.
pub(crate) async fn page<S: Store>(store: &S, request: &Request, public_id: &str) -> Response {
    let (viewer, membership) =
        match access::project_page(store, request, public_id, Role::Viewer).await {
            Ok(found) => found,
            Err(response) => return response,
        };
    match rows(store, &membership, Utc::now()).await {
        Ok((rows, full)) => {
            let notice = crate::query_param(&request.query, "done")
                .and_then(|done| done.parse::<Rated>().ok())
                .filter(|done| matches!(done, Rated::Retried | Rated::Unretried))
                .map(|done| done.notice(&[]));
            render_page(&viewer, &membership, rows, full, notice)
        }
        Err(err) => render::store_failure(err, Some(&viewer)),
    }
}

fn render_page(
    viewer: &Viewer,
    membership: &Membership,
    rows: Vec<Row>,
    full: bool,
    notice: Option<String>,
) -> Response {
    let page = AttentionPage {
        layout: Layout::for_project("Needs attention", viewer, membership, "leads"),
        links: Links::new(&membership.project.public_id),
        rows,
        full,
        listed: TROUBLES_LISTED,
        owner: membership.role.allows(Role::Owner),
        csrf: viewer.csrf(),
        notice,
    };
    render::page(StatusCode::OK, &page)
}

/// The page's rows, newest rating first, and whether the list stopped at its bound.
async fn rows<S: Store>(
    store: &S,
    membership: &Membership,
    now: DateTime<Utc>,
) -> Result<(Vec<Row>, bool), leadtrack_core::StoreError> {
    let project = membership.project.id;
    let troubles = store.troubles(project).await?;
    let labels = store.labels(project).await?;
    let mut jobs: Vec<_> = troubles.iter().map(|trouble| trouble.job.id).collect();
    jobs.dedup();
    let full = jobs.len() >= TROUBLES_LISTED as usize;
    let mut rows = Vec::with_capacity(troubles.len());
    for trouble in &troubles {
        let id = LeadIdentifier::LeadId(trouble.job.lead_id);
        let name = match store.find_lead(project, &id).await {
            Ok(lead) => display_name(&lead),
            // Deleted since the list was read: nothing to look at any more.
            Err(leadtrack_core::StoreError::NotFound(_)) => continue,
            Err(err) => return Err(err),
        };
        rows.push(Row {
            lead: trouble.job.lead_id,
            name,
            rating: conversion_name(trouble.job.conversion_id, &labels),
            rated: format::relative(&trouble.job.created_at, now),
            shown: Shown::of(trouble, now),
            retryable: trouble.delivery.state == DeliveryState::Failed,
        });
    }
    Ok((rows, full))
}
