//! Everything under `/projects/{projectId}/leads`: the inbox, a lead's page, and rating.

use leadtrack_core::Store;
use leadtrack_core::account::Membership;
use leadtrack_core::job::{RetryTarget, UndoTarget};
use leadtrack_core::store::correction::ContactCorrection;
use leadtrack_core::types::{LeadId, Role};
use leadtrack_http::{Body, Params};
use uuid::Uuid;
use warp::http::StatusCode;
use warp::reply::Response;

use crate::access::MemberForm;
use crate::bulk;
use crate::lead::{self, Rating};
use crate::list;
use crate::rating::BulkResult;
use crate::rating::Rated;
use crate::rating::Refusal;
use crate::routes::parse_id;
use crate::routes::{Leads, Links};
use crate::session::Form;
use crate::view::InboxView;
use crate::viewer::Viewer;
use crate::{
    Config, Request, access, assign, attention, comments, delete, drafts, next_step, privacy,
    render, row, spam,
};

/// Answers the inbox's `page` (under `/projects/{project}/leads`).
pub(crate) async fn handle<S: Store + Clone>(
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
        Leads::Attention => attention::page(store, request, public_id).await,
        Leads::Due => next_step::page(store, request, public_id).await,
        Leads::Lead => match lead() {
            Some(id) => show_lead(store, request, public_id, id).await,
            None => render::not_found(None),
        },
        Leads::AskDelete | Leads::AskErase | Leads::PersonData => match lead() {
            Some(id) => match access::project_page(store, request, public_id, Role::Owner).await {
                Ok(owner) if page == Leads::AskErase => privacy::ask(store, owner, id).await,
                Ok(owner) if page == Leads::PersonData => privacy::download(store, owner, id).await,
                Ok(owner) => delete::ask(store, owner, id).await,
                Err(response) => response,
            },
            None => render::not_found(None),
        },
        Leads::Rate
        | Leads::Undo
        | Leads::Retry
        | Leads::Trust
        | Leads::Delete
        | Leads::Erase
        | Leads::Comment
        | Leads::Assign
        | Leads::CorrectContact
        | Leads::NextStep
        | Leads::EditComment
        | Leads::DeleteComment
            if lead().is_none() =>
        {
            render::not_found(None)
        }
        _ => {
            // Sending failed deliveries again and trusting addresses are an owner's
            // decisions; rating and sorting out spam, anyone's.
            let needed = match page {
                Leads::Retry | Leads::Trust | Leads::Delete | Leads::Erase => Role::Owner,
                _ => Role::Member,
            };
            let found = access::project_form(store, config, request, public_id, needed, body).await;
            let member = match found {
                Ok(member) => member,
                Err(response) => return response,
            };
            match (page, lead()) {
                (Leads::MarkSpam, _) => spam::mark(store, member).await,
                (Leads::NotSpam, _) => spam::free(store, member).await,
                (Leads::BulkAssign, _) => assign::assign(store, member, None).await,
                (Leads::Assign, Some(id)) => assign::assign(store, member, Some(id)).await,
                (Leads::CorrectContact, Some(id)) => correct_contact(store, member, id).await,
                (Leads::NextStep, Some(id)) => next_step::save(store, member, id).await,
                (Leads::Trust, Some(id)) => spam::trust(store, member, id).await,
                (Leads::Delete, Some(id)) => {
                    let by = member.0.attribution(request, config);
                    delete::delete(store, member, id, &by).await
                }
                (Leads::Erase, Some(id)) => {
                    let by = member.0.attribution(request, config);
                    privacy::erase(store, member, id, &by).await
                }
                (Leads::Undo, Some(id)) => undo_lead(store, member, id).await,
                (Leads::Retry, Some(id)) => retry_lead(store, member, id).await,
                (Leads::BulkUndo, _) => bulk_undo(store, member).await,
                (Leads::SendDrafts, _) => drafts::send(store, member).await,
                (Leads::Comment, Some(id)) => match comments::held_back(store, &member).await {
                    Ok(None) => comments::add(store, (config, request), member, id).await,
                    Ok(Some(draft)) => {
                        let (viewer, membership, _) = member;
                        let rating = Rating {
                            comment: Some(draft),
                            ..Rating::default()
                        };
                        let status = StatusCode::BAD_REQUEST;
                        lead::page(store, &viewer, &membership, id, status, rating).await
                    }
                    Err(response) => response,
                },
                (Leads::EditComment | Leads::DeleteComment, Some(id)) => {
                    match params.get("id").parse::<i64>() {
                        Ok(comment) if page == Leads::EditComment => {
                            comments::edit(store, member, (id, comment)).await
                        }
                        Ok(comment) => comments::delete(store, member, (id, comment)).await,
                        Err(_) => render::not_found(Some(&member.0)),
                    }
                }
                // From an inbox row: its form names the view to go back to.
                (_, Some(id)) if member.2.all("back").next().is_some() => {
                    row::save(store, member, id, row::wants_json(request)).await
                }
                (_, Some(id)) => rate_lead(store, member, id).await,
                (_, None) => bulk_rate(store, member).await,
            }
        }
    }
}

/// What the lead page says after a rating, from its `?done=` parameter (a fixed sentence
/// per outcome, never text from the link).
fn done(query: &str) -> Option<Rated> {
    crate::query_param(query, "done").and_then(|value| value.parse::<Rated>().ok())
}

/// `GET /projects/{projectId}/leads/{leadId}`.
async fn show_lead<S: Store>(
    store: &S,
    request: &Request,
    public_id: &str,
    id: LeadId,
) -> Response {
    match access::project_page(store, request, public_id, Role::Viewer).await {
        Ok((viewer, membership)) => {
            let rating = Rating {
                done: done(&request.query),
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
        // `n`: saved, on to the next open lead (the inbox when there is none).
        Ok(Rated::Queued | Rated::Partly) if form.get("next") == "1" => {
            let next = next_open(store, &membership, id).await;
            let public_id = &membership.project.public_id;
            render::redirect(&match next {
                Some(next) => Links::new(public_id).lead(Leads::Lead, &next),
                None => Links::new(public_id).inbox(),
            })
        }
        Ok(rated) => render::redirect(&format!(
            "{}?done={}",
            Links::new(&membership.project.public_id).lead(Leads::Lead, &id),
            rated.as_ref()
        )),
        Err((StatusCode::NOT_FOUND, _)) => render::not_found(Some(&viewer)),
        Err((status, problem)) => {
            let rating = Rating {
                selected: form.get("conversionId").to_owned(),
                price: form.get("price").to_owned(),
                note: form.get("note").to_owned(),
                problem: Some(problem),
                done: None,
                comment: None,
                contact: None,
            };
            lead::page(store, &viewer, &membership, id, status, rating).await
        }
    }
}

/// `POST /projects/{projectId}/leads/{leadId}/contact`: corrects the lead's contact
/// details; then back to the lead (`303`), or the page again with the problem at the form.
async fn correct_contact<S: Store>(store: &S, member: MemberForm, id: LeadId) -> Response {
    let (viewer, membership, form) = member;
    let correction = ContactCorrection::read(|name| form.get(name));
    let project = membership.project.id;
    let by = viewer.actor();
    let corrected = store
        .correct_contact(project, id, &correction, &by, chrono::Utc::now())
        .await;
    let done = match corrected {
        Ok(true) => Rated::Corrected,
        Ok(false) => Rated::Uncorrected,
        Err(leadtrack_core::StoreError::Invalid(problem)) => {
            let rating = Rating {
                contact: Some((correction, problem)),
                ..Rating::default()
            };
            let status = StatusCode::BAD_REQUEST;
            return lead::page(store, &viewer, &membership, id, status, rating).await;
        }
        Err(leadtrack_core::StoreError::NotFound(_)) => return render::not_found(Some(&viewer)),
        Err(err) => return render::store_failure(err, Some(&viewer)),
    };
    let page = Links::new(&membership.project.public_id).lead(Leads::Lead, &id);
    render::redirect(&format!("{page}?done={}", done.as_ref()))
}

/// `POST /projects/{projectId}/leads/{leadId}/retry`: sends the failed deliveries of the
/// lead's last conversion again; then back to the lead, which says whether it did.
async fn retry_lead<S: Store>(store: &S, member: MemberForm, id: LeadId) -> Response {
    let (viewer, membership, form) = member;
    let project = &membership.project;
    let retried = store
        .retry_failed(
            project.id,
            RetryTarget::Lead(id),
            &viewer.actor(),
            chrono::Utc::now(),
        )
        .await;
    let done = match retried {
        Ok(jobs) if jobs.is_empty() => Rated::Unretried,
        Ok(_) => Rated::Retried,
        Err(leadtrack_core::StoreError::NotFound(_)) => return render::not_found(Some(&viewer)),
        Err(err) => return render::store_failure(err, Some(&viewer)),
    };
    // From the Needs attention page, back to it.
    let links = Links::new(&project.public_id);
    let back = match form.get("back") {
        "attention" => links.leads(Leads::Attention),
        _ => links.lead(Leads::Lead, &id),
    };
    render::redirect(&format!("{back}?done={}", done.as_ref()))
}

/// The newest open lead but `rated`, as the inbox's Open tab lists it first.
async fn next_open<S: Store>(store: &S, membership: &Membership, rated: LeadId) -> Option<LeadId> {
    let query = leadtrack_core::request::LeadQuery {
        status: Some(vec![leadtrack_core::types::LeadStatus::Open]),
        limit: 2,
        ..leadtrack_core::request::LeadQuery::default()
    };
    let page = store.list_leads(membership.project.id, &query).await.ok()?;
    page.leads
        .iter()
        .map(|lead| lead.id)
        .find(|id| *id != rated)
}

/// `POST /projects/{projectId}/leads/{leadId}/undo`: takes the rating back if it has not
/// left yet, then back to the lead (`303`), which says which.
async fn undo_lead<S: Store>(store: &S, member: MemberForm, id: LeadId) -> Response {
    let (viewer, membership, form) = member;
    let public_id = &membership.project.public_id;
    match lead::undo(store, &viewer, &membership, id).await {
        // From an inbox row: back to that view, which says how it went.
        Ok(done) if form.all("back").next().is_some() => render::redirect(&format!(
            "{}?{}&undone={}",
            Links::new(public_id).inbox(),
            form.get("back"),
            usize::from(done == Rated::Undone)
        )),
        Ok(done) => render::redirect(&format!(
            "{}?done={}",
            Links::new(&membership.project.public_id).lead(Leads::Lead, &id),
            done.as_ref()
        )),
        Err(err) => render::store_failure(err, Some(&viewer)),
    }
}

/// `GET /projects/{projectId}/leads`: the inbox view the query names.
async fn list_view<S: Store>(store: &S, request: &Request, public_id: &str) -> Response {
    match access::project_page(store, request, public_id, Role::Viewer).await {
        Ok((viewer, membership)) => {
            let shown = InboxView::from_query(&request.query, viewer.user.id);
            let project = membership.project.id;
            let now = chrono::Utc::now();
            let bulk = match bulk::Outcome::from_query(&request.query) {
                Some(outcome) => Some(outcome.result(store, project, now).await),
                None => crate::query_param(&request.query, "undone")
                    .and_then(|count| count.parse().ok())
                    .map(bulk::undone)
                    .or_else(|| spam::notice(&request.query))
                    .or_else(|| assign::notice(&request.query))
                    .or_else(|| delete::notice(&request.query)),
            };
            list::page(store, &viewer, &membership, shown, bulk).await
        }
        Err(response) => response,
    }
}

/// `GET /projects/{projectId}/leads/new?since=MS`: `{"count": N}`, the leads created since
/// the inbox page was shown.
async fn new_leads<S: Store>(store: &S, request: &Request, public_id: &str) -> Response {
    let (viewer, membership) =
        match access::project_page(store, request, public_id, Role::Viewer).await {
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
        Ok(count) => render::json(StatusCode::OK, &serde_json::json!({ "count": count })),
        Err(err) => render::store_failure(err, Some(&viewer)),
    }
}

/// `POST /projects/{projectId}/leads/rate`: rates every selected lead with one rating, each
/// by the same rules as one at a time, and all through the one form (one token, one undo
/// window); then back to the inbox (`303`), which lists the leads refused and why. A
/// problem of the form itself (nothing picked, a bad price) shows the inbox again with it.
async fn bulk_rate<S: Store>(store: &S, member: MemberForm) -> Response {
    let (viewer, membership, form) = member;
    let back = form.get("back").to_owned();
    let ids: Vec<LeadId> = form.all("lead").filter_map(parse_id).collect();
    let problem = if ids.is_empty() {
        Some("Select the leads to rate first.".to_owned())
    } else if form.get("conversionId").is_empty() {
        Some("Pick the rating for the selected leads.".to_owned())
    } else {
        None
    };
    let rated = match problem {
        Some(problem) => Err(problem),
        None => rate_all(store, (&viewer, &membership), &form, &ids).await,
    };
    match rated {
        Ok(outcome) => render::redirect(&format!(
            "{}?{back}&{}",
            Links::new(&membership.project.public_id).inbox(),
            outcome.query()
        )),
        Err(problem) => {
            let result = BulkResult {
                problem: Some(problem),
                ..BulkResult::default()
            };
            let shown = InboxView::from_query(&back, viewer.user.id);
            list::page(store, &viewer, &membership, shown, Some(result)).await
        }
    }
}

/// Rates each of `ids` with the form (or keeps each rating as a draft, in a project that
/// reviews them before sending); `Err` with a problem of the form itself.
async fn rate_all<S: Store>(
    store: &S,
    (viewer, membership): (&Viewer, &Membership),
    form: &Form,
    ids: &[LeadId],
) -> Result<bulk::Outcome, String> {
    let window = chrono::Duration::seconds(i64::from(membership.project.undo_window_seconds));
    let token = form.get("form").parse().unwrap_or_else(|_| Uuid::new_v4());
    let mut outcome = bulk::Outcome::new(token, window);
    for id in ids {
        let update = lead::update_of(*id, form).map_err(|(_, problem)| problem)?;
        if membership.project.review_ratings {
            match drafts::keep(store, (viewer, membership), &update).await {
                Ok(_) => outcome.drafted += 1,
                Err((StatusCode::BAD_REQUEST, problem)) => return Err(problem),
                Err(_) => outcome.refused.push((*id, Refusal::Missing)),
            }
            continue;
        }
        let rated = lead::apply(store, (viewer, membership), &update, token).await;
        outcome.count(*id, rated)?;
    }
    Ok(outcome)
}

/// `POST /projects/{projectId}/leads/undo`: takes back every rating of the batch (its
/// form's token) that has not left yet; then back to the inbox, which says how many.
async fn bulk_undo<S: Store>(store: &S, member: MemberForm) -> Response {
    let (viewer, membership, form) = member;
    let target = match form.get("bulk").parse() {
        Ok(token) => UndoTarget::Form(token),
        Err(_) => return render::not_found(Some(&viewer)),
    };
    let project = &membership.project;
    let undone = store
        .undo(project.id, target, &viewer.actor(), chrono::Utc::now())
        .await;
    match undone {
        Ok(leads) => render::redirect(&format!(
            "{}?{}&undone={}",
            Links::new(&project.public_id).inbox(),
            form.get("back"),
            leads.len()
        )),
        Err(err) => render::store_failure(err, Some(&viewer)),
    }
}
