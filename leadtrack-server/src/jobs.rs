//! `job retry`: failed deliveries sent again, as new jobs of the same conversions.

use chrono::NaiveDate;
use chrono::Utc;
use clap::{ArgGroup, Args, Subcommand};
use leadtrack_core::Store;
use leadtrack_core::account::Actor;
use leadtrack_core::integration::Platform;
use leadtrack_core::job::RetryTarget;
use leadtrack_core::types::LeadId;
use serde_json::json;

use crate::Failure;
use crate::admin::project;

/// `job ...`
#[derive(Debug, Subcommand)]
pub(crate) enum JobCommand {
    /// Send again the deliveries that failed for good: a lead's last conversion, or an
    /// integration's conversions rated since a day. Each goes as a new job of the same
    /// conversion (the lead is pending until it ends); a lead whose last rating is still
    /// being sent is left as it is.
    Retry(JobRetryArgs),
}

/// `job retry`
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("which").required(true).args(["lead", "integration"])))]
pub(crate) struct JobRetryArgs {
    /// The public project id.
    #[arg(long, value_name = "ID")]
    pub(crate) project: String,
    /// The lead whose last conversion's failed deliveries go again.
    #[arg(long, value_name = "LEAD_ID")]
    pub(crate) lead: Option<i64>,
    /// The integration whose failed deliveries go again: ga4, meta, google-ads,
    /// microsoft-ads, linkedin or webhook.
    #[arg(long, value_name = "NAME", requires = "since")]
    pub(crate) integration: Option<String>,
    /// With --integration: the conversions rated on this day (UTC) or later.
    #[arg(long, value_name = "YYYY-MM-DD")]
    pub(crate) since: Option<NaiveDate>,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `job ...`
pub(crate) async fn job_command<S: Store>(store: &S, command: JobCommand) -> Result<(), Failure> {
    match command {
        JobCommand::Retry(args) => retry(store, args).await,
    }
}

/// `job retry`: queues the jobs, and says how many.
async fn retry<S: Store>(store: &S, args: JobRetryArgs) -> Result<(), Failure> {
    let project = project(store, &args.project).await?;
    let target = match (args.lead, args.integration.as_deref(), args.since) {
        (Some(lead), _, _) => RetryTarget::Lead(LeadId(lead)),
        (None, Some(name), Some(day)) => {
            let platform = Platform::by_slug(name).ok_or_else(|| {
                Failure(format!(
                    "unknown integration {name:?}: ga4, meta, google-ads, microsoft-ads, \
                     linkedin or webhook"
                ))
            })?;
            RetryTarget::Integration {
                kind: platform.kind,
                since: day.and_time(chrono::NaiveTime::MIN).and_utc(),
            }
        }
        _ => {
            return Err(Failure(
                "give --lead, or --integration with --since".to_owned(),
            ));
        }
    };
    let by = Actor::Admin;
    let queued = store
        .retry_failed(project.id, target, &by, Utc::now())
        .await
        .map_err(Failure::store)?;
    if args.json {
        let ids: Vec<i64> = queued.iter().map(|job| job.0).collect();
        say!("{}", json!({"queued": queued.len(), "jobIds": ids}));
    } else {
        say!(
            "Queued {} conversion{} of project {} again.",
            queued.len(),
            if queued.len() == 1 { "" } else { "s" },
            project.public_id
        );
    }
    Ok(())
}
