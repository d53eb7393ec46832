//! The commands of leads from elsewhere: form tools' inbound webhooks, and past leads
//! imported from a CSV file.

use std::path::PathBuf;

use clap::Subcommand;
use leadtrack_core::inbound::Preset;

use super::ProjectListing;

/// `inbound ...`: a project's inbound webhooks, for form tools.
#[derive(Debug, Subcommand)]
pub(crate) enum InboundCommand {
    /// Make an inbound webhook: the tool's posts become leads. Prints its URL last.
    Create {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The form tool, whose signature is checked and whose fields are mapped:
        /// typeform, tally, webflow, jotform or custom.
        #[arg(long, value_name = "TOOL")]
        preset: Preset,
        /// What to call it (the tool's name when not given).
        #[arg(long, value_name = "NAME", default_value = "")]
        name: String,
        /// The secret: the one to give the tool to sign with (Typeform, Tally), Webflow's
        /// `secretKey` for a webhook made through its API, or the one the URL carries
        /// (Jotform, custom, Webflow's unsigned webhooks). Generated when not given.
        #[arg(
            long,
            env = "LEADTRACK_INBOUND_SECRET",
            hide_env_values = true,
            value_name = "SECRET"
        )]
        secret: Option<String>,
        /// Where a lead field is read, as FIELD=JSONPATH (e.g.
        /// `email=$.data.fields[?@.label == 'Work email'].value`), in place of the
        /// preset's; repeat for more.
        #[arg(long = "map", value_name = "FIELD=JSONPATH")]
        map: Vec<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List a project's inbound webhooks (secrets hidden).
    List(ProjectListing),
    /// Remove an inbound webhook: later posts to it are refused.
    Remove {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The webhook's id, as `inbound list` shows it.
        #[arg(value_name = "WEBHOOK_ID")]
        id: String,
    },
}

/// `lead ...`: leads in bulk.
#[derive(Debug, Subcommand)]
pub(crate) enum LeadCommand {
    /// Import past leads from a CSV file (UTF-8; comma, semicolon or tab), each dated by
    /// its createdAt. Columns named like the lead's fields (email, firstName, createdAt,
    /// gclid, ...) map themselves. Leads already there are skipped; bad rows are reported
    /// with their line and skipped. Imported leads are not sent to lead webhooks, alerts
    /// or platforms until someone rates them. Fails only when no row was imported.
    Import {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The CSV file.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Which column fills a field, as FIELD=COLUMN (e.g. `createdAt=Date`); repeat
        /// for more.
        #[arg(long = "map", value_name = "FIELD=COLUMN")]
        map: Vec<String>,
        /// Print the outcome as JSON.
        #[arg(long)]
        json: bool,
    },
}
