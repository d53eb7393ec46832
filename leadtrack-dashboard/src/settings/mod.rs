//! The Settings area of a project, for its owners: conversion labels, integrations, lead
//! webhooks, API keys, members and invitations, the project's own settings, installing the
//! capture script, and the audit log.
//!
//! | path under `/projects/{projectId}/settings` | what |
//! |---|---|
//! | (none) | `303` to `labels` |
//! | `GET labels`, `POST labels` | the labels; `POST` creates one |
//! | `GET labels/{id}`, `POST labels/{id}` | one label's form; `POST` changes it |
//! | `POST labels/{id}/move`, `.../archive`, `.../delete` | moves it up or down (`direction`), archives or restores it (`archived=yes|no`), deletes it if never used |
//! | `GET integrations` | one card per platform: status, last delivery, settings |
//! | `POST integrations/{kind}` | connects or updates (`google-ads`, `ga4`, `meta`, `microsoft-ads`, `linkedin`, `webhook`) |
//! | `POST integrations/{kind}/disconnect` | disconnects |
//! | `POST labels/{id}/test/{kind}` | one test of the label's conversion to the platform, answered on the label's page |
//! | `GET sources`, `POST sources/{kind}`, `POST sources/{kind}/remove` | the lead sources: Google Ads lead forms' key, Meta Lead Ads' page, LinkedIn Lead Gen Forms' accounts |
//! | `GET inbound`, `POST inbound` | form tools' inbound webhooks: list, add (a generated signing secret shown once) |
//! | `POST inbound/{id}`, `POST inbound/{id}/remove` | tries a sample post against the mapping typed (`action=try`, nothing saved) or saves the mapping; removes |
//! | `GET import`, `POST import` | importing past leads: the upload form; a CSV file uploaded (multipart) |
//! | `GET import/{id}`, `POST import/{id}` | an upload's columns, mapped, with a preview of its first rows; its import started, then its progress and outcome |
//! | `GET spend`, `POST spend`, `POST spend/rates` | ad spend: the spend of the last 30 days; a CSV file of spend imported (multipart; a file with a bad row refused whole); the currency rates |
//! | `POST integrations/{kind}/test` | one test event in the platform's test mode (GA4's validator, Meta's test events, Google Ads' validateOnly, a webhook ping), or a token check (Microsoft Advertising, LinkedIn) |
//! | `GET webhooks`, `POST webhooks` | lead webhooks: list, add (a generated secret shown once) |
//! | `POST webhooks/{id}/remove` | removes a webhook |
//! | `GET keys`, `POST keys`, `POST keys/revoke` | API keys: list, create (shown once), revoke |
//! | `GET members`, `POST members` | members and pending invitations; `POST` invites by email and role |
//! | `POST members/{userId}`, `POST members/{userId}/remove` | changes a role, removes |
//! | `POST members/{userId}/export` | lets a member export, or no longer |
//! | `POST members/invitations/{id}/resend`, `.../revoke` | sends an invitation again with a new link, revokes it |
//! | `GET assignment`, `POST assignment` | round-robin: on or off, the members who take turns, the forms it covers |
//! | `GET alerts`, `POST alerts/{kind}`, `POST alerts/{kind}/remove` | chat channels for new leads (`slack`, `teams`, `google-chat`): set a webhook URL, remove |
//! | `GET audit` | the audit log, newest first (`?before=ID` for older events) |
//! | `GET project`, `POST project` | name, currency, phone country, allowed websites, default consent, what `lost` sends |
//! | `GET install`, `POST install/test-lead` | the snippet; creates a test lead |
//!
//! Every page is the owners' (a member gets `403`, anyone else `404`), every form carries
//! the session's anti-forgery token. A form that worked redirects (`303`) back to its page
//! with `?saved=...`, which the page shows as a confirmation, unless it has a secret to show
//! once: then the page is rendered at once. A form that failed is shown again with what was
//! typed (never a secret) and the problem next to it, with `400` or `409`.

mod alerts;
mod assignment;
mod audit;
mod crm;
mod import;
mod inbound;
mod install;
mod integrations;
mod keys;
mod labels;
mod members;
mod platform_reads;
mod project;
pub(crate) mod sign_in;
mod sources;
mod spam;
mod spend;
mod webhooks;

use chrono::Utc;
use leadtrack_core::account::Membership;
use leadtrack_core::activity::{Attribution, ProjectActivity};
use std::fmt::Display;

use leadtrack_core::project::Project;
use leadtrack_core::types::Role;
use leadtrack_core::{Accounts, LeadStore, Store};
use leadtrack_http::{Body, Params};
use leadtrack_outbound::Outbound;
use warp::reply::Response;

use crate::render::{self, Layout};
use crate::routes::{Links, Settings};
use crate::session::{self, Form};
use crate::viewer::Viewer;
use crate::{Config, Request, access};

/// Answers the settings `page` (under `/projects/{project}/settings`).
pub(crate) async fn handle<S: Store + Clone>(
    store: &S,
    config: &Config,
    request: &Request,
    page: Settings,
    params: &Params<'_>,
    body: Body,
) -> Response {
    let public_id = params.get("project");
    // The new pages' futures are boxed: inline, they would make this one's (the largest
    // of its arms) overflow a worker thread's stack in debug builds.
    if matches!(page, Settings::Upload) {
        let answer = Box::pin(import::upload(store, config, request, public_id, body)).await;
        return answer.unwrap_or_else(|response| response);
    }
    if matches!(page, Settings::UploadSpend) {
        let answer = Box::pin(spend::upload(store, (config, request), public_id, body)).await;
        return answer.unwrap_or_else(|response| response);
    }
    let form = || owner_form(store, config, request, public_id, body);
    let owner = || owner_page(store, config, request, public_id);
    let (id, kind, user) = (params.get("id"), params.get("kind"), params.get("user"));
    let answer: Answer = async {
        match page {
            Settings::Root => Ok(owner().await?.redirect(Settings::Labels, None)),
            Settings::Labels => labels::list(store, request, owner().await?).await,
            Settings::CreateLabel => labels::create(store, form().await?).await,
            Settings::AddStarterLabels => labels::add_starters(store, form().await?).await,
            Settings::Label => labels::edit(store, request, owner().await?, id).await,
            Settings::UpdateLabel => labels::update(store, form().await?, id).await,
            Settings::MoveLabel => labels::move_label(store, form().await?, id).await,
            Settings::ArchiveLabel => labels::archive(store, form().await?, id).await,
            Settings::DeleteLabel => labels::delete(store, form().await?, id).await,
            Settings::TestLabel => labels::test(store, form().await?, (id, kind)).await,
            Settings::Integrations => integrations::page(store, request, owner().await?).await,
            Settings::SaveIntegration => integrations::save(store, form().await?, kind).await,
            Settings::DisconnectIntegration => {
                integrations::disconnect(store, form().await?, kind).await
            }
            Settings::SignIn => sign_in::start(config, request, form().await?, kind).await,
            Settings::PickAccount => sign_in::pick_account(store, form().await?, kind).await,
            Settings::TestIntegration => integrations::test(store, form().await?, kind).await,
            Settings::RetryIntegration => integrations::retry(store, form().await?, kind).await,
            Settings::Sources => sources::page(store, config, request, owner().await?).await,
            Settings::SaveSource => {
                sources::save(store, (config, request), form().await?, kind).await
            }
            Settings::RemoveSource => sources::remove(store, form().await?, kind).await,
            Settings::Inbound => inbound::page(store, config, request, owner().await?).await,
            Settings::AddInbound => inbound::create(store, (config, request), form().await?).await,
            Settings::SaveInbound => {
                inbound::save(store, (config, request), form().await?, id).await
            }
            Settings::RemoveInbound => inbound::remove(store, form().await?, id).await,
            Settings::Import => Ok(import::page(owner().await?)),
            // Answered above: its body is a file, which the form closure cannot read.
            Settings::Upload => Ok(render::not_found(None)),
            Settings::ImportFile => Ok(import::file(owner().await?, id)),
            Settings::StartImport => Box::pin(import::start(store, form().await?, id)).await,
            Settings::Spend => spend::page(store, (config, request), owner().await?).await,
            // Answered above: its body is a file.
            Settings::UploadSpend => Ok(render::not_found(None)),
            Settings::SaveRates => spend::save_rates((store, config), form().await?).await,
            Settings::Crm => crm::page(store, request, owner().await?).await,
            Settings::SaveCrm => crm::save(store, form().await?, kind).await,
            Settings::DisconnectCrm => crm::disconnect(store, form().await?, kind).await,
            Settings::Webhooks => webhooks::page(store, request, owner().await?).await,
            Settings::AddWebhook => webhooks::add(store, form().await?).await,
            Settings::RemoveWebhook => webhooks::remove(store, form().await?, id).await,
            Settings::Keys => keys::page(store, request, owner().await?).await,
            Settings::CreateKey => keys::create(store, form().await?).await,
            Settings::RevokeKey => keys::revoke(store, form().await?).await,
            Settings::Members => members::page(store, request, owner().await?).await,
            Settings::AddMember => members::invite(store, config, request, form().await?).await,
            Settings::ResendInvitation => {
                members::resend(store, config, request, form().await?, id).await
            }
            Settings::RevokeInvitation => members::revoke(store, form().await?, id).await,
            Settings::Audit => audit::page(store, request, owner().await?).await,
            Settings::ChangeRole => members::change_role(store, form().await?, user).await,
            Settings::RemoveMember => members::remove(store, form().await?, user).await,
            Settings::MemberExport => members::export(store, form().await?, user).await,
            Settings::Project => project::page(store, request, owner().await?).await,
            Settings::SaveProject => project::save(store, form().await?).await,
            Settings::Alerts => alerts::page(store, request, owner().await?).await,
            Settings::SaveChat => alerts::save(store, form().await?, (kind, false)).await,
            Settings::RemoveChat => alerts::save(store, form().await?, (kind, true)).await,
            Settings::Assignment => assignment::page(store, request, owner().await?).await,
            Settings::SaveAssignment => assignment::save(store, form().await?).await,
            Settings::Spam => Ok(spam::page(request, owner().await?)),
            Settings::SaveSpam => spam::save(store, form().await?).await,
            Settings::Install => Ok(install::page(config, request, owner().await?)),
            Settings::TestLead => install::test_lead(store, form().await?).await,
        }
    }
    .await;
    answer.unwrap_or_else(|response| response)
}

/// What a settings handler answers: its page or redirect, or an early answer (sign-in,
/// `403`, `404`, a store failure) as `Err`, so that `?` can pass it on.
type Answer = Result<Response, Response>;

/// An owner of the project a settings request is about.
pub(crate) struct Owner {
    viewer: Viewer,
    membership: Membership,
    /// The server's applications for signing in with the platforms.
    oauth: Vec<leadtrack_core::oauth::OAuthApp>,
    /// The client's address, for the audit log.
    address: String,
    /// The client for the addresses owners give, and the rule they are checked by.
    outbound: Outbound,
}

/// A signed-in owner of `public_id`, for a page.
async fn owner_page<S: Accounts>(
    store: &S,
    config: &Config,
    request: &Request,
    public_id: &str,
) -> Result<Owner, Response> {
    let (viewer, membership) = access::project_page(store, request, public_id, Role::Owner).await?;
    let address = crate::viewer::client_address(request, config);
    Ok(Owner {
        viewer,
        membership,
        oauth: config.oauth.clone(),
        address,
        outbound: config.outbound.clone(),
    })
}

/// A signed-in owner of `public_id` and their genuine form.
async fn owner_form<S: Accounts>(
    store: &S,
    config: &Config,
    request: &Request,
    public_id: &str,
    body: Body,
) -> Result<(Owner, Form), Response> {
    let (viewer, membership, form) =
        access::project_form(store, config, request, public_id, Role::Owner, body).await?;
    let address = crate::viewer::client_address(request, config);
    let owner = Owner {
        viewer,
        membership,
        oauth: config.oauth.clone(),
        address,
        outbound: config.outbound.clone(),
    };
    Ok((owner, form))
}

/// A signed-in owner of `public_id`, their genuine upload form and its file.
async fn owner_upload<S: Accounts>(
    store: &S,
    (config, request): (&Config, &Request),
    public_id: &str,
    (body, limit): (Body, usize),
) -> Result<(Owner, Form, Option<session::Upload>), Response> {
    let (viewer, membership, form, upload) = access::project_upload(
        store,
        (config, request),
        (public_id, Role::Owner),
        (body, limit),
    )
    .await?;
    let address = crate::viewer::client_address(request, config);
    let owner = Owner {
        viewer,
        membership,
        oauth: config.oauth.clone(),
        address,
        outbound: config.outbound.clone(),
    };
    Ok((owner, form, upload))
}

impl Owner {
    /// The client for the addresses owners give; its rule checks them when saved.
    fn outbound(&self) -> &Outbound {
        &self.outbound
    }

    /// The project.
    fn project(&self) -> &Project {
        &self.membership.project
    }

    /// The layout and the frame of a page of `area` (one of [`Settings::AREAS`]), showing
    /// `notice` if there is one.
    fn frame(&self, area: Settings, notice: Option<String>) -> (Layout, Frame) {
        let title = format!("{} · {} settings", area.title(), self.project().name);
        (
            Layout::for_project(title, &self.viewer, &self.membership, "settings"),
            Frame {
                public_id: self.project().public_id.clone(),
                area,
                notice,
                csrf: self.viewer.csrf(),
            },
        )
    }

    /// This project's links.
    fn links(&self) -> Links<'_> {
        Links::new(&self.project().public_id)
    }

    /// `303` to the settings page `page`, confirming what `saved` names (see each page's
    /// notices).
    fn redirect(&self, page: Settings, saved: Option<&str>) -> Response {
        saved_redirect(self.links().settings(page), saved)
    }

    /// `303` to the settings page `page` of the thing `id` (a label, an import).
    fn redirect_to(&self, page: Settings, id: &dyn Display, saved: Option<&str>) -> Response {
        saved_redirect(self.links().setting(page, id), saved)
    }

    /// Who the audit log says did what this owner does.
    fn by(&self) -> Attribution {
        Attribution {
            actor: self.viewer.actor(),
            address: Some(self.address.clone()),
        }
    }

    /// Records what the owner did in the project's audit log.
    async fn record<S: LeadStore>(
        &self,
        store: &S,
        activity: ProjectActivity,
    ) -> Result<(), Response> {
        store
            .record_project_event(self.project().id, &self.by(), &activity, Utc::now())
            .await
            .map_err(|e| self.failure(e))
    }

    /// A store failure, answered for this owner.
    fn failure(&self, err: leadtrack_core::StoreError) -> Response {
        render::store_failure(err, Some(&self.viewer))
    }

    /// `404` for this owner.
    fn not_found(&self) -> Response {
        render::not_found(Some(&self.viewer))
    }
}

/// What every settings page shows around its own part.
pub(crate) struct Frame {
    /// The project's public id, for links and form actions.
    pub(crate) public_id: String,
    /// The area shown (one of [`Settings::AREAS`]).
    pub(crate) area: Settings,
    /// A confirmation of what the last form did.
    pub(crate) notice: Option<String>,
    /// The session's anti-forgery token, for the page's forms.
    pub(crate) csrf: String,
}

/// One entry of the settings navigation.
pub(crate) struct NavItem {
    /// Where it goes.
    pub(crate) href: String,
    /// The area's name.
    pub(crate) title: &'static str,
    /// Whether it is the page shown.
    pub(crate) current: bool,
}

impl Frame {
    /// The settings navigation.
    pub(crate) fn nav(&self) -> Vec<NavItem> {
        Settings::AREAS
            .iter()
            .map(|&(area, title)| NavItem {
                href: self.links().settings(area),
                title,
                current: area == self.area,
            })
            .collect()
    }

    /// The project's links, for the page's forms.
    pub(crate) fn links(&self) -> Links<'_> {
        Links::new(&self.public_id)
    }
}

/// `303` to `path`, with `?saved=` when `saved` names what was done.
fn saved_redirect(path: String, saved: Option<&str>) -> Response {
    match saved {
        Some(saved) => render::redirect(&format!("{path}?saved={saved}")),
        None => render::redirect(&path),
    }
}

/// What went wrong with a submitted form, by field (`""` for the form as a whole), in words
/// for the person who filled it in.
#[derive(Default)]
pub(crate) struct Problems(Vec<(&'static str, String)>);

impl Problems {
    /// Notes a problem with `field`.
    pub(crate) fn add(&mut self, field: &'static str, message: impl Into<String>) {
        self.0.push((field, message.into()));
    }

    /// A form whose only problem is `message`, about `field`.
    pub(crate) fn one(field: &'static str, message: impl Into<String>) -> Self {
        let mut problems = Self::default();
        problems.add(field, message);
        problems
    }

    /// The problem with `field`, if there is one.
    pub(crate) fn of(&self, field: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(name, _)| *name == field)
            .map(|(_, message)| message.as_str())
    }

    /// Whether the form is fine.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The `?saved=` value of a page's address: what the form before the redirect did.
fn saved(request: &Request) -> Option<String> {
    request.param("saved")
}

/// The confirmation a page shows after a redirect: `notices` maps each `?saved=` value the
/// page's forms send to its sentence; anything else shows nothing.
fn notice(request: &Request, notices: &[(&str, &str)]) -> Option<String> {
    let saved = saved(request)?;
    notices
        .iter()
        .find(|(key, _)| *key == saved)
        .map(|(_, sentence)| (*sentence).to_owned())
}

/// Whether a checkbox was ticked.
fn ticked(form: &Form, field: &str) -> bool {
    !form.get(field).is_empty()
}

/// A message of core's (lowercase, no period) as a sentence on a page.
pub(crate) fn sentence(message: &str) -> String {
    let mut chars = message.chars();
    let first = chars.next().map(|c| c.to_uppercase().to_string());
    let mut sentence = first.unwrap_or_default() + chars.as_str();
    if !sentence.ends_with(['.', '!', '?']) {
        sentence.push('.');
    }
    sentence
}
