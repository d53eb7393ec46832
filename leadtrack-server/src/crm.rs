//! `integration hubspot|pipedrive ...`: keeping a project's leads in a CRM, changing where
//! its deals go, and disconnecting ([`leadtrack_core::crm`]).
//!
//! Connecting checks the token, the pipeline and the stages against the CRM's own before
//! anything is kept (and makes leadtrack's contact properties in HubSpot):
//! `leadtrack_platforms::crm`, which the dashboard's CRM page shares.

use chrono::Utc;
use clap::Args;
use leadtrack_core::crm::CrmOptions;
use leadtrack_core::integration::Secret;
use leadtrack_core::project::Project;
use leadtrack_core::target::Targets;
use leadtrack_core::webhook::{NewWebhook, WebhookKind, WebhookStatus};
use leadtrack_core::{Admin, LeadWebhooks};
use leadtrack_platforms::crm;

use crate::Failure;
use crate::admin::project;

/// `integration hubspot`: new leads become HubSpot contacts (one per email) and ratings
/// their deals.
#[derive(Debug, Args)]
pub(crate) struct HubspotArgs {
    /// A private app's access token with the scopes crm.objects.contacts.read/write,
    /// crm.objects.deals.read/write and crm.schemas.contacts.write.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "LEADTRACK_HUBSPOT_ACCESS_TOKEN",
        hide_env_values = true,
        required_unless_present = "disconnect"
    )]
    access_token: Option<String>,
    #[command(flatten)]
    crm: CrmArgs,
}

/// `integration pipedrive`: new leads become Pipedrive persons and leads, ratings their
/// deals.
#[derive(Debug, Args)]
pub(crate) struct PipedriveArgs {
    /// A user's API token (Personal preferences > API in Pipedrive).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "LEADTRACK_PIPEDRIVE_API_TOKEN",
        hide_env_values = true,
        required_unless_present = "disconnect"
    )]
    api_token: Option<String>,
    #[command(flatten)]
    crm: CrmArgs,
}

/// What both CRMs' commands take.
#[derive(Debug, Args)]
pub(crate) struct CrmArgs {
    /// The public project id.
    #[arg(long, value_name = "ID")]
    project: String,
    /// The deal pipeline's id (the CRM's default pipeline when left out).
    #[arg(long, value_name = "ID")]
    pipeline: Option<String>,
    /// The stage a label's ratings move deals to, `LABEL=STAGE_ID`; `lost=STAGE_ID` for
    /// lost leads. Repeat for each label.
    #[arg(long, value_name = "LABEL=STAGE_ID")]
    stage: Vec<String>,
    /// The CRM's API address, e.g. a test server.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// Stop syncing: what was made in the CRM stays there.
    #[arg(long, conflicts_with_all = ["pipeline", "stage"])]
    disconnect: bool,
}

impl HubspotArgs {
    /// The command as [`crm_command`] takes it.
    pub(crate) fn split(self) -> (WebhookKind, Option<String>, CrmArgs) {
        (WebhookKind::Hubspot, self.access_token, self.crm)
    }
}

impl PipedriveArgs {
    /// The command as [`crm_command`] takes it.
    pub(crate) fn split(self) -> (WebhookKind, Option<String>, CrmArgs) {
        (WebhookKind::Pipedrive, self.api_token, self.crm)
    }
}

/// `integration hubspot|pipedrive ...`: connects the CRM `kind` names with `token` (or
/// changes the project's sync with it), or disconnects.
pub(crate) async fn crm_command<S: Admin + LeadWebhooks>(
    store: &S,
    (kind, token, args): (WebhookKind, Option<String>, CrmArgs),
    targets: &Targets,
) -> Result<(), Failure> {
    let project = project(store, &args.project).await?;
    let name = kind.crm().unwrap_or_default();
    let existing = sync_of(store, &project, kind).await?;
    let Some(token) = token.filter(|_| !args.disconnect) else {
        let Some(existing) = existing else {
            let id = &project.public_id;
            return Err(Failure(format!("project {id} is not connected to {name}")));
        };
        remove(store, &project, &existing).await?;
        say!("Disconnected project {} from {name}.", project.public_id);
        return Ok(());
    };
    let options = CrmOptions::new(
        args.pipeline.as_deref(),
        args.stage.iter().map(String::as_str),
    )
    .map_err(|err| Failure(format!("--stage: {err}")))?;
    let api = (
        args.base_url.as_deref().unwrap_or(crm::default_api(kind)),
        targets,
    );
    let sync = NewWebhook::crm(kind, api, Secret::new(token.trim()), options)
        .map_err(|err| Failure(err.to_string()))?;
    let http = leadtrack_platforms::check::client(targets.clone());
    let options = crm::prepare(&http, &sync).await.map_err(Failure)?;
    let sync = NewWebhook {
        crm: Some(options),
        ..sync
    };
    // Connecting again keeps the sync's records: its deals are still moved, not made anew.
    let kept = match existing {
        Some(existing) => {
            store
                .update_webhook(project.id, existing.webhook.id, sync)
                .await
        }
        None => store.create_webhook(project.id, sync, Utc::now()).await,
    };
    let kept = kept.map_err(Failure::store)?;
    let described = crm::describe(kind, &kept.crm.unwrap_or_default());
    say!(
        "Connected project {} to {name}: {described}",
        project.public_id
    );
    Ok(())
}

async fn remove<S: LeadWebhooks>(
    store: &S,
    project: &Project,
    sync: &WebhookStatus,
) -> Result<(), Failure> {
    store
        .remove_webhook(project.id, sync.webhook.id)
        .await
        .map_err(Failure::store)
        .map(|_| ())
}

/// The project's sync with the CRM `kind` names, if it has one.
pub(crate) async fn sync_of<S: LeadWebhooks>(
    store: &S,
    project: &Project,
    kind: WebhookKind,
) -> Result<Option<WebhookStatus>, Failure> {
    let hooks = store.webhooks(project.id).await.map_err(Failure::store)?;
    Ok(hooks.into_iter().find(|status| status.webhook.kind == kind))
}
