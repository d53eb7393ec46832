//! `integration hubspot ...`: connecting a project's leads to HubSpot, changing where its
//! deals go, and disconnecting ([`leadtrack_core::crm`]).
//!
//! Connecting checks the token and the pipeline and stages against HubSpot's own pipelines
//! before anything is kept, and makes leadtrack's contact properties there.

use chrono::Utc;
use clap::Args;
use leadtrack_core::crm::CrmOptions;
use leadtrack_core::integration::Secret;
use leadtrack_core::project::Project;
use leadtrack_core::target::Targets;
use leadtrack_core::webhook::{NewWebhook, WebhookKind, WebhookStatus};
use leadtrack_core::{Admin, LeadWebhooks};
use leadtrack_platforms::hubspot::{self, Hubspot, Pipeline};
use leadtrack_platforms::outcome::Outcome;

use crate::Failure;
use crate::admin::project;

/// `integration hubspot`: new leads become HubSpot contacts (one per email) and ratings
/// their deals, at the stage each label maps to.
#[derive(Debug, Args)]
pub(crate) struct HubspotArgs {
    /// The public project id.
    #[arg(long, value_name = "ID")]
    project: String,
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
    /// The deal pipeline's id (HubSpot's default pipeline when left out).
    #[arg(long, value_name = "ID")]
    pipeline: Option<String>,
    /// The stage a label's ratings move deals to, `LABEL=STAGE_ID`; `lost=STAGE_ID` for
    /// lost leads (the default pipeline's closedlost when left out). Repeat for each.
    #[arg(long, value_name = "LABEL=STAGE_ID")]
    stage: Vec<String>,
    /// HubSpot's API address, e.g. a test server.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// Stop syncing: the leads and deals made stay in HubSpot.
    #[arg(long, conflicts_with_all = ["access_token", "pipeline", "stage"])]
    disconnect: bool,
}

/// `integration hubspot ...`: connects (replacing the project's sync, if any) or
/// disconnects.
pub(crate) async fn hubspot_command<S: Admin + LeadWebhooks>(
    store: &S,
    args: HubspotArgs,
    targets: &Targets,
) -> Result<(), Failure> {
    let project = project(store, &args.project).await?;
    let existing = sync_of(store, &project).await?;
    let Some(token) = args.access_token.filter(|_| !args.disconnect) else {
        let Some(existing) = existing else {
            return Err(Failure(format!(
                "project {} is not connected to HubSpot",
                project.public_id
            )));
        };
        store
            .remove_webhook(project.id, existing.webhook.id)
            .await
            .map_err(Failure::store)?;
        say!("Disconnected project {} from HubSpot.", project.public_id);
        return Ok(());
    };
    let options = CrmOptions::new(
        args.pipeline.as_deref(),
        args.stage.iter().map(String::as_str),
    )
    .map_err(|err| Failure(format!("--stage: {err}")))?;
    let api = args.base_url.as_deref().unwrap_or(hubspot::API);
    let sync = NewWebhook::hubspot(api, targets, Secret::new(token.trim()), options)
        .map_err(|err| Failure(err.to_string()))?;
    let http = leadtrack_platforms::check::client(targets.clone());
    let hubspot = Hubspot {
        http: &http,
        api: &sync.url,
        token: &sync.secret,
    };
    let pipelines = hubspot.pipelines().await.map_err(refused)?;
    check_stages(
        &pipelines,
        sync.crm.as_ref().unwrap_or(&CrmOptions::default()),
    )?;
    hubspot.make_properties().await.map_err(refused)?;
    if let Some(existing) = existing {
        store
            .remove_webhook(project.id, existing.webhook.id)
            .await
            .map_err(Failure::store)?;
    }
    let kept = store
        .create_webhook(project.id, sync, Utc::now())
        .await
        .map_err(Failure::store)?;
    say!(
        "Connected project {} to HubSpot: {}",
        project.public_id,
        describe(&kept.crm.unwrap_or_default())
    );
    Ok(())
}

/// The project's HubSpot sync, if it has one.
pub(crate) async fn sync_of<S: LeadWebhooks>(
    store: &S,
    project: &Project,
) -> Result<Option<WebhookStatus>, Failure> {
    let hooks = store.webhooks(project.id).await.map_err(Failure::store)?;
    Ok(hooks
        .into_iter()
        .find(|status| status.webhook.kind == WebhookKind::Hubspot))
}

/// Where a sync's deals go, in one line.
pub(crate) fn describe(options: &CrmOptions) -> String {
    let mut stages: Vec<String> = options
        .stages
        .iter()
        .filter(|(label, _)| *label != "lost")
        .map(|(label, stage)| format!("{label} → {stage}"))
        .collect();
    stages.push(format!(
        "lost → {}",
        options.stage(None).unwrap_or_default()
    ));
    format!(
        "deals in pipeline {}; {}",
        options.pipeline(),
        stages.join(", ")
    )
}

/// Refuses a pipeline or stage the account does not have, naming the ones it has.
fn check_stages(pipelines: &[Pipeline], options: &CrmOptions) -> Result<(), Failure> {
    let ids = |list: Vec<&str>| list.join(", ");
    let Some(pipeline) = pipelines.iter().find(|p| p.id == options.pipeline()) else {
        let known = ids(pipelines.iter().map(|p| p.id.as_str()).collect());
        return Err(Failure(format!(
            "--pipeline: HubSpot has no pipeline {:?}; its pipelines: {known}",
            options.pipeline()
        )));
    };
    let stages: Vec<&str> = pipeline.stages.iter().map(|s| s.id.as_str()).collect();
    let lost = options.stage(None).unwrap_or_default();
    for stage in options.stages.values().map(String::as_str).chain([lost]) {
        if !stages.contains(&stage) {
            return Err(Failure(format!(
                "--stage: pipeline {} has no stage {stage:?}; its stages: {}",
                pipeline.id,
                ids(stages)
            )));
        }
    }
    Ok(())
}

/// What HubSpot's refusal says, for the command's error.
fn refused(outcome: Outcome) -> Failure {
    let detail = match outcome {
        Outcome::Failed { error, .. } | Outcome::Retry { error, .. } => error,
        Outcome::Skipped { reason } => reason,
        Outcome::Delivered { status } => format!("HTTP {status}"),
    };
    Failure(format!("HubSpot refused: {detail}"))
}
