//! The user's projects, and the way into each.

use askama::Template;
use chrono::{DateTime, Duration, Utc};
use leadtrack_core::account::Membership;
use leadtrack_core::request::LeadQuery;
use leadtrack_core::types::{AttemptOutcome, LeadStatus, Role};
use leadtrack_core::{Store, StoreError};
use warp::http::StatusCode;
use warp::reply::Response;

use crate::format;
use crate::rating::platform_name;
use crate::render::{self, Layout};
use crate::routes::Links;
use crate::{Config, Request, access};

/// A project as the projects page lists it.
struct ProjectRow {
    public_id: String,
    name: String,
    active: bool,
    role: Role,
    open: u64,
    last_week: u64,
    /// The newest failed or retried delivery, when the newest attempt to a platform was one.
    problem: Option<String>,
}

/// A project's numbers, read for its membership: open leads, leads of the last 7 days, and
/// the last delivery problem.
async fn project_row<S: Store>(
    store: &S,
    membership: Membership,
) -> Result<ProjectRow, StoreError> {
    let project = membership.project;
    let now = Utc::now();
    let count = |status: Option<Vec<LeadStatus>>, since: Option<DateTime<Utc>>| LeadQuery {
        status,
        created_from: since,
        limit: 1,
        ..LeadQuery::default()
    };
    let open = store
        .list_leads(project.id, &count(Some(vec![LeadStatus::Open]), None))
        .await?
        .total;
    let last_week = store
        .list_leads(project.id, &count(None, Some(now - Duration::days(7))))
        .await?
        .total;
    let problem = store
        .last_attempts(project.id)
        .await?
        .into_iter()
        .filter(|attempt| {
            matches!(
                attempt.outcome,
                AttemptOutcome::Failed | AttemptOutcome::Retry
            )
        })
        .max_by_key(|attempt| attempt.at)
        .map(|attempt| {
            let what = match attempt.outcome {
                AttemptOutcome::Failed => "failed",
                _ => "will be retried",
            };
            let mut text = format!(
                "{} {what}, {}",
                platform_name(attempt.integration),
                format::relative(&attempt.at, now)
            );
            if let Some(error) = &attempt.error {
                text.push_str(&format!(": {error}"));
            }
            text
        });
    Ok(ProjectRow {
        public_id: project.public_id,
        name: project.name,
        active: project.active,
        role: membership.role,
        open,
        last_week,
        problem,
    })
}

#[derive(Template)]
#[template(path = "projects.html")]
struct ProjectsPage {
    layout: Layout,
    email: String,
    projects: Vec<ProjectRow>,
}

/// `GET /`: the projects the user is a member of.
pub(crate) async fn projects<S: Store>(store: &S, _config: &Config, request: &Request) -> Response {
    let viewer = match access::signed_in(store, request).await {
        Ok(viewer) => viewer,
        Err(response) => return response,
    };
    let rows = async {
        let mut rows = Vec::new();
        for membership in store.memberships(viewer.user.id).await? {
            rows.push(project_row(store, membership).await?);
        }
        Ok::<_, StoreError>(rows)
    };
    match rows.await {
        Ok(projects) => render::page(
            StatusCode::OK,
            &ProjectsPage {
                layout: Layout::new("Projects", Some(&viewer)),
                email: viewer.user.email.clone(),
                projects,
            },
        ),
        Err(err) => render::store_failure(err, Some(&viewer)),
    }
}

/// `GET /projects/{projectId}`: the project's inbox, for its members (a visitor signs in
/// first; anyone else gets `404`).
pub(crate) async fn project<S: Store>(store: &S, request: &Request, public_id: &str) -> Response {
    match access::project_page(store, request, public_id, Role::Viewer).await {
        Ok((_, membership)) => render::redirect(&Links::new(&membership.project.public_id).inbox()),
        Err(response) => response,
    }
}
