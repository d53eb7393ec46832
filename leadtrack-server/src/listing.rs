//! What every command that lists one project's things takes.

use clap::Args;

/// `--project ID [--json]`: what a command listing one project's things takes.
#[derive(Debug, Args)]
pub(crate) struct ProjectListing {
    /// The public project id.
    #[arg(long, value_name = "ID")]
    pub(crate) project: String,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}
