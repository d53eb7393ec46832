//! The user's projects and each project's page.

use askama::Template;
use bytes::Buf;
use chrono::Utc;
use futures_util::Stream;
use leadtrack_core::account::Membership;
use leadtrack_core::request::LeadQuery;
use leadtrack_core::types::{LeadStatus, ProjectId, Role};
use leadtrack_core::{Store, StoreError};
use warp::http::StatusCode;
use warp::reply::Response;

use crate::render::{self, Layout};
use crate::session::{self, Viewer};
use crate::{Config, Request, access};

/// A project as the pages list it.
struct ProjectRow {
    public_id: String,
    name: String,
    active: bool,
    role: Role,
    open: u64,
    total: u64,
}

/// A project's numbers, read for its membership.
async fn project_row<S: Store>(
    store: &S,
    membership: Membership,
) -> Result<ProjectRow, StoreError> {
    let (open, total) = lead_counts(store, membership.project.id).await?;
    let project = membership.project;
    Ok(ProjectRow {
        public_id: project.public_id,
        name: project.name,
        active: project.active,
        role: membership.role,
        open,
        total,
    })
}

/// How many of the project's leads are open, and how many it has.
async fn lead_counts<S: Store>(store: &S, project: ProjectId) -> Result<(u64, u64), StoreError> {
    let count = |status: Option<Vec<LeadStatus>>| LeadQuery {
        status,
        limit: 1,
        ..LeadQuery::default()
    };
    let open = store
        .list_leads(project, &count(Some(vec![LeadStatus::Open])))
        .await?
        .total;
    let total = store.list_leads(project, &count(None)).await?.total;
    Ok((open, total))
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

/// An API key as the project page lists it.
struct KeyRow {
    prefix: String,
    created: String,
    revoked: Option<String>,
}

#[derive(Template)]
#[template(path = "project.html")]
struct ProjectPage {
    layout: Layout,
    project: ProjectRow,
    can_manage: bool,
    keys: Vec<KeyRow>,
    new_key: Option<String>,
    csrf: String,
}

/// A project's page for `viewer`, with `new_key` shown once when one was just created.
async fn project_page<S: Store>(
    store: &S,
    viewer: &Viewer,
    membership: Membership,
    status: StatusCode,
    new_key: Option<String>,
) -> Response {
    let can_manage = membership.role.allows(Role::Owner);
    let project_id = membership.project.id;
    let page = async {
        let project = project_row(store, membership).await?;
        let keys = if can_manage {
            let date = |t: &chrono::DateTime<Utc>| t.format("%Y-%m-%d %H:%M UTC").to_string();
            store
                .api_keys(project_id)
                .await?
                .iter()
                .rev()
                .map(|key| KeyRow {
                    prefix: key.prefix.clone(),
                    created: date(&key.created_at),
                    revoked: key.revoked_at.as_ref().map(date),
                })
                .collect()
        } else {
            Vec::new()
        };
        Ok::<_, StoreError>(ProjectPage {
            layout: Layout::new(project.name.clone(), Some(viewer)),
            project,
            can_manage,
            keys,
            new_key,
            csrf: viewer.csrf(),
        })
    };
    match page.await {
        Ok(page) => render::page(status, &page),
        Err(err) => render::store_failure(err, Some(viewer)),
    }
}

/// `GET /projects/{projectId}`.
pub(crate) async fn project<S: Store>(
    store: &S,
    _config: &Config,
    request: &Request,
    public_id: &str,
) -> Response {
    let viewer = match access::signed_in(store, request).await {
        Ok(viewer) => viewer,
        Err(response) => return response,
    };
    match access::project(store, &viewer, public_id, Role::Member).await {
        Ok(membership) => project_page(store, &viewer, membership, StatusCode::OK, None).await,
        Err(response) => response,
    }
}

/// `POST /projects/{projectId}/keys`: owners create an API key, shown once.
pub(crate) async fn create_key<S, B, D>(
    store: &S,
    config: &Config,
    request: &Request,
    public_id: &str,
    body: B,
) -> Response
where
    S: Store,
    B: Stream<Item = Result<D, warp::Error>>,
    D: Buf,
{
    let viewer = match access::signed_in(store, request).await {
        Ok(viewer) => viewer,
        Err(response) => return response,
    };
    let form = match session::read_form(request, config, body).await {
        Ok(form) => form,
        Err(response) => return response,
    };
    if !session::genuine_form(request, config, &viewer, &form) {
        return render::forged(Some(&viewer));
    }
    let membership = match access::project(store, &viewer, public_id, Role::Owner).await {
        Ok(membership) => membership,
        Err(response) => return response,
    };
    match store.issue_api_key(membership.project.id, Utc::now()).await {
        Ok(key) => {
            tracing::info!(user = %viewer.user.id, prefix = %key.info.prefix, "API key created");
            project_page(
                store,
                &viewer,
                membership,
                StatusCode::CREATED,
                Some(key.key),
            )
            .await
        }
        Err(err) => render::store_failure(err, Some(&viewer)),
    }
}
