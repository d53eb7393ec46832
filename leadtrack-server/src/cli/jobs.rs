//! The commands of conversion jobs.

use chrono::NaiveDate;
use clap::{ArgGroup, Args, Subcommand};

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
