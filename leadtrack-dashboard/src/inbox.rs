//! Everything under `/projects/{projectId}/leads`: the inbox, a lead's page, and rating.

use leadtrack_core::Store;
use leadtrack_core::account::Membership;
use leadtrack_core::types::{LeadId, Role};
use leadtrack_http::{Body, Params};
use warp::http::StatusCode;
use warp::reply::Response;

use crate::lead::{self, Rated, Rating, display_name};
use crate::list::{self, BulkResult};
use crate::routes::Leads;
use crate::session::{Form, Viewer};
use crate::view::InboxView;
use crate::{Config, Request, access, render};

/// A member's posted form, genuine: who posted it, their membership of the project, and
/// the form.
type MemberForm = (Viewer, Membership, Form);

/// Answers the inbox's `page` (under `/projects/{project}/leads`).
pub(crate) async fn handle<S: Store>(
    store: &S,
    config: &Config,
    request: &Request,
    page: Leads,
    params: &Params<'_>,
    body: Body,
) -> Response {
    let public_id = params.get("project");
    let lead = || parse_id(params.get("lead"));
    match page {
        Leads::List => list_view(store, request, public_id).await,
        Leads::New => new_leads(store, request, public_id).await,
        Leads::Lead => match lead() {
            Some(id) => show_lead(store, request, public_id, id).await,
            None => render::not_found(None),
        },
        Leads::Rate if lead().is_none() => render::not_found(None),
        Leads::Rate | Leads::BulkRate => {
            let found =
                access::project_form(store, config, request, public_id, Role::Member, body).await;
            let member = match found {
                Ok(member) => member,
                Err(response) => return response,
            };
            match lead() {
                Some(id) => rate_lead(store, member, id).await,
                None => bulk_rate(store, member).await,
            }
        }
    }
}

/// A lead id in a path: a positive number.
fn parse_id(text: &str) -> Option<LeadId> {
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    digits
        .then(|| text.parse().ok())
        .flatten()
        .filter(|id| *id > 0)
        .map(LeadId)
}

/// What the lead page says after a rating, from its `?done=` parameter (a fixed sentence
/// per outcome, never text from the link).
fn notice(query: &str) -> Option<&'static str> {
    crate::query_param(query, "done")
        .and_then(|value| value.parse::<Rated>().ok())
        .map(Rated::notice)
}

/// `GET /projects/{projectId}/leads/{leadId}`.
async fn show_lead<S: Store>(
    store: &S,
    request: &Request,
    public_id: &str,
    id: LeadId,
) -> Response {
    match access::project_page(store, request, public_id, Role::Member).await {
        Ok((viewer, membership)) => {
            let rating = Rating {
                notice: notice(&request.query),
                ..Rating::default()
            };
            lead::page(store, &viewer, &membership, id, StatusCode::OK, rating).await
        }
        Err(response) => response,
    }
}

/// `POST /projects/{projectId}/leads/{leadId}/rate`: then back to the lead (`303`), or the
/// page again with the problem at the form.
async fn rate_lead<S: Store>(store: &S, member: MemberForm, id: LeadId) -> Response {
    let (viewer, membership, form) = member;
    match lead::rate(store, &viewer, &membership, id, &form).await {
        Ok(rated) => render::redirect(&format!(
            "/projects/{}/leads/{id}?done={}",
            membership.project.public_id,
            rated.as_ref()
        )),
        Err((StatusCode::NOT_FOUND, _)) => render::not_found(Some(&viewer)),
        Err((status, problem)) => {
            let rating = Rating {
                selected: form.get("conversionId").to_owned(),
                price: form.get("price").to_owned(),
                note: form.get("note").to_owned(),
                problem: Some(problem),
                notice: None,
            };
            lead::page(store, &viewer, &membership, id, status, rating).await
        }
    }
}

/// `GET /projects/{projectId}/leads`: the inbox view the query names.
async fn list_view<S: Store>(store: &S, request: &Request, public_id: &str) -> Response {
    match access::project_page(store, request, public_id, Role::Member).await {
        Ok((viewer, membership)) => {
            let shown = InboxView::from_query(&request.query);
            list::page(store, &viewer, &membership, shown, None).await
        }
        Err(response) => response,
    }
}

/// `GET /projects/{projectId}/leads/new?since=MS`: `{"count": N}`, the leads created since
/// the inbox page was shown.
async fn new_leads<S: Store>(store: &S, request: &Request, public_id: &str) -> Response {
    let (viewer, membership) =
        match access::project_page(store, request, public_id, Role::Member).await {
            Ok(found) => found,
            Err(response) => return response,
        };
    let since = request
        .param("since")
        .and_then(|value| value.parse::<i64>().ok());
    let Some(since) = since else {
        return render::error(
            StatusCode::BAD_REQUEST,
            Some(&viewer),
            "Bad request",
            "since must be a time in milliseconds.",
        );
    };
    match list::new_since(store, &membership, since).await {
        Ok(count) => {
            let mut response = Response::new(format!("{{\"count\":{count}}}").into());
            response.headers_mut().insert(
                warp::http::header::CONTENT_TYPE,
                warp::http::HeaderValue::from_static("application/json"),
            );
            response.headers_mut().insert(
                warp::http::header::CACHE_CONTROL,
                warp::http::HeaderValue::from_static("no-store"),
            );
            response
        }
        Err(err) => render::store_failure(err, Some(&viewer)),
    }
}

/// `POST /projects/{projectId}/leads/rate`: rates every selected lead with one rating, each
/// by the same rules as one at a time; the inbox then lists the leads refused and why.
async fn bulk_rate<S: Store>(store: &S, member: MemberForm) -> Response {
    let (viewer, membership, form) = member;
    let shown = InboxView::from_query(form.get("back"));
    let ids: Vec<LeadId> = form.all("lead").filter_map(parse_id).collect();
    let mut result = BulkResult::default();
    if ids.is_empty() {
        result.problem = Some("Select the leads to rate first.".to_owned());
    } else if form.get("conversionId").is_empty() {
        result.problem = Some("Pick the rating for the selected leads.".to_owned());
    }
    if result.problem.is_none() {
        for id in ids {
            match lead::rate(store, &viewer, &membership, id, &form).await {
                Ok(_) => result.rated += 1,
                Err((status, problem)) if status == StatusCode::BAD_REQUEST => {
                    // A problem of the form (a bad price): the same for every lead.
                    result.problem = Some(problem);
                    break;
                }
                Err((_, problem)) => {
                    let who = match store
                        .find_lead(
                            membership.project.id,
                            &leadtrack_core::types::LeadIdentifier::LeadId(id),
                        )
                        .await
                    {
                        Ok(lead) => format!("{} (#{id})", display_name(&lead)),
                        Err(_) => format!("Lead #{id}"),
                    };
                    let problem = if problem.is_empty() {
                        "not found in this project".to_owned()
                    } else {
                        problem
                    };
                    result.refused.push((who, problem));
                }
            }
        }
    }
    list::page(store, &viewer, &membership, shown, Some(result)).await
}
