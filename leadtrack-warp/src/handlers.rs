//! One handler per route. Each answers every outcome itself: domain errors are replies,
//! never rejections, so a host app's routes and recovery stay untouched.

use std::net::IpAddr;

use chrono::Utc;
use leadtrack_core::activity::Attribution;
use leadtrack_core::api::{
    CreateLeadResponse, GetLeadActivityResponse, GetLeadJobsResponse, GetLeadResponse,
    GetLeadsResponse, Lead, UpdateLeadStatusResponse, messages,
};
use leadtrack_core::lead::CreatedLead;
use leadtrack_core::project::Project;
use leadtrack_core::request::query::lead_identifier_from_pairs;
use leadtrack_core::request::status::person_from_body;
use leadtrack_core::request::{CreateRoute, LeadQuery, NewLead, StatusUpdate};
use leadtrack_core::roas::{GetRoasResponse, RoasQuery};
use leadtrack_core::spam::SpamReason;
use leadtrack_core::{ErrorCode, LeadStore, LeadWebhooks, Spending};
use warp::http::{Method, StatusCode};
use warp::reply::Response;

use crate::hooks;
use crate::reply::{self, ApiError};
use crate::request::{self, Api, authenticate, authenticate_as, read_json_body};
use leadtrack_http::{Body, Found, Request};

use crate::Operation;

/// Answers a request on one of the lead paths, as the route table `found` it, CORS headers
/// included.
pub(crate) async fn handle<S: LeadStore + LeadWebhooks + Spending>(
    api: &Api<S>,
    found: Found<'_, Operation>,
    request: &Request,
    body: Body,
) -> Response {
    let mut response = match found {
        _ if request.method == Method::OPTIONS => reply::preflight(),
        Found::Route(operation, params) => {
            let result = match operation {
                Operation::CreateLead => create_lead(api, request, body).await,
                Operation::CreateServerSideLead => {
                    create_server_side_lead(api, request, body).await
                }
                Operation::UpdateLeadStatus => update_lead_status(api, request, body).await,
                Operation::GetLeads => get_leads(api, request).await,
                Operation::GetLead | Operation::GetLeadJobs | Operation::GetLeadActivity => {
                    one_lead(api, request, operation).await
                }
                Operation::GetRoas => get_roas(api, request).await,
                Operation::ErasePerson => erase_person(api, request, body).await,
                Operation::ExportPerson => export_person(api, request).await,
                Operation::CreateHook => hooks::create(api, request, body).await,
                Operation::ListHooks => hooks::list(api, request).await,
                Operation::DeleteHook => hooks::delete(api, request, params.get("id")).await,
                Operation::GetHookSample => hooks::sample(api, request).await,
            };
            result.unwrap_or_else(ApiError::into_response)
        }
        Found::MethodNotAllowed(allowed) => ApiError::method_not_allowed(&allowed).into_response(),
        Found::NotFound => ApiError::new(ErrorCode::NotFound, "Not found").into_response(),
    };
    reply::apply_cors(&mut response, &request.headers, &api.config.cors_origins);
    response
}

/// `POST /api/leads/createLead`: from browsers, no key; the project comes from the body.
///
/// Anyone may call it with any project's id, so it refuses origins the project does not
/// list, merges only into leads created here too, and answers only the `uniqueIdentifier`
/// the request itself sent. A well-formed lead is never refused for its rate: a lead that
/// meets a spam rule, or comes from an untrusted address past its rate, is stored and held
/// as spam, within the project's held budget.
async fn create_lead<S: LeadStore>(
    api: &Api<S>,
    request: &Request,
    body: Body,
) -> Result<Response, ApiError> {
    let client_ip = leadtrack_http::client_ip(
        &request.headers,
        request.remote,
        api.config.trust_forwarded_for,
    );
    let address = client_ip
        .as_deref()
        .and_then(|ip| ip.parse::<IpAddr>().ok());
    let body = read_json_body(&api.config, request, body).await?;
    let mut lead = NewLead::parse(&body, CreateRoute::Browser)?;
    let public_id = lead.project_id.as_deref().unwrap_or_default();
    let project = api.store.project_by_public_id(public_id).await?;
    request::log_project(&project);
    request::ensure_active(&project)?;
    request::ensure_origin_allowed(&project, &request.headers)?;
    let spam = screen(api, &project, &lead, address)?;
    let device = &mut lead.data.device_data;
    if device.ip_address.is_none() {
        device.ip_address = client_ip;
    }
    if device.user_agent.is_none() {
        device.user_agent = request::user_agent(&request.headers);
    }
    let sent_identifier = lead.data.unique_identifier.is_some();
    let mut created = api
        .store
        .create_screened_lead(
            project.id,
            CreateRoute::Browser,
            lead.data,
            spam,
            Utc::now(),
        )
        .await?;
    if created.created {
        leadtrack_http::metrics::lead_created(Operation::CreateLead.segment(), &project.public_id);
    }
    if !sent_identifier {
        // A merge may find an identifier an earlier submission set; this caller did not
        // send it, so it does not learn it.
        created.unique_identifier = None;
    }
    Ok(created_reply(&created))
}

/// Why a lead from `address` is spam, if it is: the project's rules first, then the
/// address's rate unless the project trusts it. A lead held counts against the project's
/// held budget, and is refused (`429`) once the budget is spent.
fn screen<S>(
    api: &Api<S>,
    project: &Project,
    lead: &NewLead,
    address: Option<IpAddr>,
) -> Result<Option<SpamReason>, ApiError> {
    let rules = &project.spam_rules;
    let trusted = address.is_some_and(|address| rules.trusts(address));
    let past_rate = !trusted && api.limiters.past_ip_rate(address);
    let spam = rules
        .screen(lead.data.submitted(), &lead.bot_check, address)
        .or(past_rate.then_some(SpamReason::Burst));
    if let Some(reason) = spam {
        api.limiters.hold(project.id, rules.held_budget)?;
        leadtrack_http::metrics::held(reason.into());
    }
    Ok(spam)
}

/// `POST /api/leads/createServerSideLead`: from backends, with a key.
async fn create_server_side_lead<S: LeadStore>(
    api: &Api<S>,
    request: &Request,
    body: Body,
) -> Result<Response, ApiError> {
    let project = authenticate(&api.store, &api.limiters, &request.headers).await?;
    let body = read_json_body(&api.config, request, body).await?;
    let lead = NewLead::parse(&body, CreateRoute::Server)?;
    if lead
        .project_id
        .as_ref()
        .is_some_and(|id| *id != project.public_id)
    {
        return Err(ApiError::new(
            ErrorCode::ProjectMismatch,
            "projectId does not match the project of the API key",
        ));
    }
    let created = api
        .store
        .create_lead_via(project.id, CreateRoute::Server, lead.data, Utc::now())
        .await?;
    if created.created {
        leadtrack_http::metrics::lead_created(
            Operation::CreateServerSideLead.segment(),
            &project.public_id,
        );
    }
    Ok(created_reply(&created))
}

fn created_reply(created: &CreatedLead) -> Response {
    let status = if created.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    reply::json(status, &CreateLeadResponse::from(created))
}

/// `POST /api/leads/updateLeadStatus`: `open`, `lost` or a conversion label, applied by the
/// request's key (which the lead's history and the job record by its display prefix).
async fn update_lead_status<S: LeadStore>(
    api: &Api<S>,
    request: &Request,
    body: Body,
) -> Result<Response, ApiError> {
    let (project, by) = authenticate_as(&api.store, &api.limiters, &request.headers).await?;
    let body = read_json_body(&api.config, request, body).await?;
    let update = StatusUpdate::parse(&body)?;
    let change = api
        .store
        .update_status(project.id, &update, &by, Utc::now())
        .await?;
    let status = if change.job.is_some() {
        leadtrack_http::metrics::rating_queued(&project.public_id);
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(reply::json(
        status,
        &UpdateLeadStatusResponse::from(&change),
    ))
}

/// `GET /api/leads/getLeads`: filtered, sorted, paged.
async fn get_leads<S: LeadStore>(api: &Api<S>, request: &Request) -> Result<Response, ApiError> {
    let project = authenticate(&api.store, &api.limiters, &request.headers).await?;
    let query = LeadQuery::from_pairs(request::query_pairs(&request.query))?;
    let page = api.store.list_leads(project.id, &query).await?;
    let mut response = GetLeadsResponse::new(&page, query.page, query.limit);
    let ids: Vec<_> = response.leads.iter().map(|lead| lead.id).collect();
    let steps = api.store.next_steps(project.id, &ids).await?;
    Lead::with_next_steps(&mut response.leads, &steps);
    Ok(reply::json(StatusCode::OK, &response))
}

/// `GET /api/reports/roas`: what the key's project's spend bought over a range of days
/// (its UTC days), by source, campaign or label.
async fn get_roas<S: LeadStore + Spending>(
    api: &Api<S>,
    request: &Request,
) -> Result<Response, ApiError> {
    let project = authenticate(&api.store, &api.limiters, &request.headers).await?;
    let today = Utc::now().date_naive();
    let query = RoasQuery::from_pairs(request::query_pairs(&request.query), today)?;
    let report = api.store.roas(project.id, &query).await?;
    Ok(reply::json(
        StatusCode::OK,
        &GetRoasResponse::new(&query, &report),
    ))
}

/// `POST /api/privacy/erase`: every lead of the person the body names erased, by the
/// request's key from its address (the project's history records both).
async fn erase_person<S: LeadStore>(
    api: &Api<S>,
    request: &Request,
    body: Body,
) -> Result<Response, ApiError> {
    let (project, actor) = authenticate_as(&api.store, &api.limiters, &request.headers).await?;
    let body = read_json_body(&api.config, request, body).await?;
    let who = person_from_body(&body)?;
    let by = Attribution {
        actor,
        address: leadtrack_http::client_ip(
            &request.headers,
            request.remote,
            api.config.trust_forwarded_for,
        ),
    };
    let erased = api
        .store
        .erase_person(project.id, &who, &by, Utc::now())
        .await?;
    Ok(reply::json(StatusCode::OK, &erased))
}

/// `GET /api/privacy/export`: everything the key's project keeps about the person the
/// query names (as getLead's query names a lead), as one document.
async fn export_person<S: LeadStore>(
    api: &Api<S>,
    request: &Request,
) -> Result<Response, ApiError> {
    let project = authenticate(&api.store, &api.limiters, &request.headers).await?;
    let who = lead_identifier_from_pairs(request::query_pairs(&request.query))?;
    let export = leadtrack_core::privacy::export(&api.store, &project, &who, Utc::now()).await?;
    Ok(reply::json(StatusCode::OK, &export))
}

/// `GET /api/leads/getLead` (by id, uniqueIdentifier, email or phone), `getLeadJobs` (its
/// conversion jobs with every delivery and attempt) and `getLeadActivity` (its history,
/// oldest first): the lead the query names, as getLead finds it in the key's project.
async fn one_lead<S: LeadStore>(
    api: &Api<S>,
    request: &Request,
    operation: Operation,
) -> Result<Response, ApiError> {
    let project = authenticate(&api.store, &api.limiters, &request.headers).await?;
    let identifier = lead_identifier_from_pairs(request::query_pairs(&request.query))?;
    let lead = api.store.find_lead(project.id, &identifier).await?;
    Ok(match operation {
        Operation::GetLeadJobs => {
            let jobs = api.store.lead_jobs(project.id, lead.id).await?;
            reply::json(StatusCode::OK, &GetLeadJobsResponse::new(lead.id, &jobs))
        }
        Operation::GetLeadActivity => {
            let events = api.store.lead_activity(project.id, lead.id).await?;
            reply::json(
                StatusCode::OK,
                &GetLeadActivityResponse::new(lead.id, &events),
            )
        }
        _ => {
            let mut found = [Lead::from(&lead)];
            let steps = api.store.next_steps(project.id, &[lead.id]).await?;
            Lead::with_next_steps(&mut found, &steps);
            let [lead] = found;
            reply::json(
                StatusCode::OK,
                &GetLeadResponse {
                    message: messages::LEAD_RETRIEVED.to_owned(),
                    lead,
                },
            )
        }
    })
}
