//! `integration hubspot|pipedrive ...`: keeping a project's leads in a CRM, changing where
//! its deals go, and disconnecting ([`leadtrack_core::crm`]).
//!
//! Connecting checks the token, the pipeline and the stages against the CRM's own before
//! anything is kept (and makes leadtrack's contact properties in HubSpot).

use chrono::Utc;
use clap::Args;
use leadtrack_core::crm::CrmOptions;
use leadtrack_core::integration::Secret;
use leadtrack_core::project::Project;
use leadtrack_core::target::Targets;
use leadtrack_core::webhook::{NewWebhook, WebhookKind, WebhookStatus};
use leadtrack_core::{Admin, LeadWebhooks};
use leadtrack_outbound::Outbound;
use leadtrack_platforms::hubspot::{self, Hubspot};
use leadtrack_platforms::outcome::Outcome;
use leadtrack_platforms::pipedrive::{self, Pipedrive};

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
    let default = match kind {
        WebhookKind::Pipedrive => pipedrive::API,
        _ => hubspot::API,
    };
    let api = (args.base_url.as_deref().unwrap_or(default), targets);
    let sync = NewWebhook::crm(kind, api, Secret::new(token.trim()), options)
        .map_err(|err| Failure(err.to_string()))?;
    let http = leadtrack_platforms::check::client(targets.clone());
    let options = sync.crm.clone().unwrap_or_default();
    let options = prepare(&http, &sync, options).await?;
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
    let described = describe(kind, &kept.crm.unwrap_or_default());
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

/// Checks `options` against the CRM `sync` reaches, makes what it needs there, and
/// answers the options to keep (with the pipeline Pipedrive defaults to).
async fn prepare(
    http: &Outbound,
    sync: &NewWebhook,
    mut options: CrmOptions,
) -> Result<CrmOptions, Failure> {
    let (api, token) = (sync.url.as_str(), &sync.secret);
    let refused = refused(sync.kind);
    if sync.kind == WebhookKind::Pipedrive {
        let account = Pipedrive { http, api, token };
        let pipelines = account.pipelines().await.map_err(&refused)?;
        let ids: Vec<String> = pipelines.iter().map(|p| p.id.to_string()).collect();
        let chosen = options.pipeline.clone().or_else(|| ids.first().cloned());
        let pipeline = chosen.filter(|id| ids.contains(id));
        let Some(pipeline) = pipeline else {
            return Err(no_pipeline(options.pipeline.as_deref(), &ids));
        };
        let stages = account.stages(pipeline.parse().unwrap_or_default()).await;
        let stages: Vec<String> = stages
            .map_err(&refused)?
            .iter()
            .map(|s| s.id.to_string())
            .collect();
        check_stages(&pipeline, &stages, options.stages.values())?;
        options.pipeline = Some(pipeline);
        return Ok(options);
    }
    let account = Hubspot { http, api, token };
    let pipelines = account.pipelines().await.map_err(&refused)?;
    let wanted = hubspot::pipeline(&options);
    let Some(pipeline) = pipelines.iter().find(|p| p.id == wanted) else {
        let ids: Vec<String> = pipelines.iter().map(|p| p.id.clone()).collect();
        return Err(no_pipeline(Some(wanted), &ids));
    };
    let stages: Vec<String> = pipeline.stages.iter().map(|s| s.id.clone()).collect();
    let lost = hubspot::stage(&options, None)
        .unwrap_or_default()
        .to_owned();
    check_stages(
        &pipeline.id,
        &stages,
        options.stages.values().chain([&lost]),
    )?;
    account.make_properties().await.map_err(&refused)?;
    Ok(options)
}

fn no_pipeline(wanted: Option<&str>, ids: &[String]) -> Failure {
    let wanted = wanted.unwrap_or("(the first)");
    Failure(format!(
        "--pipeline: there is no pipeline {wanted:?}; the pipelines: {}",
        ids.join(", ")
    ))
}

/// Refuses a stage that is not among `stages`, naming them.
fn check_stages<'a>(
    pipeline: &str,
    stages: &[String],
    wanted: impl IntoIterator<Item = &'a String>,
) -> Result<(), Failure> {
    match wanted.into_iter().find(|stage| !stages.contains(stage)) {
        None => Ok(()),
        Some(stage) => Err(Failure(format!(
            "--stage: pipeline {pipeline} has no stage {stage:?}; its stages: {}",
            stages.join(", ")
        ))),
    }
}

/// Where a sync's deals go, in one line.
pub(crate) fn describe(kind: WebhookKind, options: &CrmOptions) -> String {
    let mut stages: Vec<String> = options
        .stages
        .iter()
        .filter(|(label, _)| *label != "lost")
        .map(|(label, stage)| format!("{label} → {stage}"))
        .collect();
    let (pipeline, lost) = match kind {
        WebhookKind::Pipedrive => {
            let lost = options
                .stage(None)
                .map_or("marked lost".to_owned(), |s| format!("{s}, marked lost"));
            (options.pipeline.clone().unwrap_or_default(), lost)
        }
        _ => {
            let lost = hubspot::stage(options, None).unwrap_or_default().to_owned();
            (hubspot::pipeline(options).to_owned(), lost)
        }
    };
    stages.push(format!("lost → {lost}"));
    format!("deals in pipeline {pipeline}; {}", stages.join(", "))
}

/// What the refusal of the CRM `kind` names says, for the command's error.
fn refused(kind: WebhookKind) -> impl Fn(Outcome) -> Failure {
    move |outcome| {
        let detail = match outcome {
            Outcome::Failed { error, .. } | Outcome::Retry { error, .. } => error,
            Outcome::Skipped { reason } => reason,
            Outcome::Delivered { status } => format!("HTTP {status}"),
        };
        Failure(format!(
            "{} refused: {detail}",
            kind.crm().unwrap_or_default()
        ))
    }
}
