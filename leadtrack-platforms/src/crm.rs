//! What connecting a CRM takes, for the command line and the dashboard alike: the
//! pipelines and stages to pick from, read from the CRM ([`choices`]), the options checked
//! against them and leadtrack's contact properties made there ([`prepare`]), and where a
//! sync's deals go, in words ([`describe`]).

use leadtrack_core::crm::CrmOptions;
use leadtrack_core::integration::Secret;
use leadtrack_core::webhook::{NewWebhook, WebhookKind};
use leadtrack_outbound::Outbound;

use crate::hubspot::{self, Hubspot};
use crate::outcome::Outcome;
use crate::pipedrive::{self, Pipedrive};

/// A pipeline to pick, with its stages (each id and name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PipelineChoice {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its stages, in order (Pipedrive's are read for the chosen pipeline only).
    pub stages: Vec<(String, String)>,
}

/// The CRM `kind` names' own API address.
pub fn default_api(kind: WebhookKind) -> &'static str {
    match kind {
        WebhookKind::Pipedrive => pipedrive::API,
        _ => hubspot::API,
    }
}

/// The pipelines of the account `token` reaches at `api`, and the one `options` names (or
/// the CRM's default); the chosen one has its stages. Errors: what the CRM answered, in
/// words.
pub async fn choices(
    http: &Outbound,
    (kind, api, token): (WebhookKind, &str, &Secret),
    options: &CrmOptions,
) -> Result<(Vec<PipelineChoice>, String), String> {
    let refused = |outcome: Outcome| refusal(kind, outcome);
    if kind == WebhookKind::Pipedrive {
        let account = Pipedrive { http, api, token };
        let pipelines = account.pipelines().await.map_err(refused)?;
        let mut listed: Vec<PipelineChoice> = pipelines
            .iter()
            .map(|p| PipelineChoice {
                id: p.id.to_string(),
                name: p.name.clone(),
                stages: Vec::new(),
            })
            .collect();
        let first = listed.first().map(|p| p.id.clone()).unwrap_or_default();
        let chosen = options.pipeline.clone().unwrap_or(first);
        if let Some(pipeline) = listed.iter_mut().find(|p| p.id == chosen) {
            let stages = account
                .stages(pipeline.id.parse().unwrap_or_default())
                .await;
            let stages = stages.map_err(refused)?;
            pipeline.stages = stages
                .iter()
                .map(|s| (s.id.to_string(), s.name.clone()))
                .collect();
        }
        return Ok((listed, chosen));
    }
    let account = Hubspot { http, api, token };
    let pipelines = account.pipelines().await.map_err(refused)?;
    let listed = pipelines
        .into_iter()
        .map(|p| PipelineChoice {
            id: p.id,
            name: p.label,
            stages: p.stages.into_iter().map(|s| (s.id, s.label)).collect(),
        })
        .collect();
    Ok((listed, hubspot::pipeline(options).to_owned()))
}

/// Checks `sync`'s options against its CRM, makes what the CRM needs (HubSpot's contact
/// properties), and answers the options to keep, with the pipeline Pipedrive defaults to
/// named. Errors: what is wrong, in words for a person.
pub async fn prepare(http: &Outbound, sync: &NewWebhook) -> Result<CrmOptions, String> {
    let mut options = sync.crm.clone().unwrap_or_default();
    let account = (sync.kind, sync.url.as_str(), &sync.secret);
    let (pipelines, chosen) = choices(http, account, &options).await?;
    let Some(pipeline) = pipelines.iter().find(|p| p.id == chosen) else {
        let ids: Vec<&str> = pipelines.iter().map(|p| p.id.as_str()).collect();
        return Err(format!(
            "there is no pipeline {chosen:?}; the pipelines: {}",
            ids.join(", ")
        ));
    };
    let stages: Vec<&str> = pipeline.stages.iter().map(|(id, _)| id.as_str()).collect();
    let lost = match sync.kind {
        WebhookKind::Pipedrive => None,
        _ => hubspot::stage(&options, None),
    };
    let wanted = options.stages.values().map(String::as_str).chain(lost);
    if let Some(stage) = wanted.into_iter().find(|stage| !stages.contains(stage)) {
        return Err(format!(
            "pipeline {} has no stage {stage:?}; its stages: {}",
            pipeline.id,
            stages.join(", ")
        ));
    }
    if sync.kind == WebhookKind::Hubspot {
        let account = Hubspot {
            http,
            api: &sync.url,
            token: &sync.secret,
        };
        account
            .make_properties()
            .await
            .map_err(|o| refusal(sync.kind, o))?;
    }
    options.pipeline = Some(chosen);
    Ok(options)
}

/// Where a sync's deals go, in one line.
pub fn describe(kind: WebhookKind, options: &CrmOptions) -> String {
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
            let lost = hubspot::stage(options, None)
                .unwrap_or("no change")
                .to_owned();
            (hubspot::pipeline(options).to_owned(), lost)
        }
    };
    stages.push(format!("lost → {lost}"));
    format!("deals in pipeline {pipeline}; {}", stages.join(", "))
}

/// What a CRM's refusal says, for a person.
fn refusal(kind: WebhookKind, outcome: Outcome) -> String {
    let detail = match outcome {
        Outcome::Failed { error, .. } | Outcome::Retry { error, .. } => error,
        Outcome::Skipped { reason } => reason,
        Outcome::Delivered { status } => format!("HTTP {status}"),
    };
    format!("{} refused: {detail}", kind.crm().unwrap_or_default())
}
