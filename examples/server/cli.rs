//! The command line.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// leadtrack: capture leads, rate them, forward the ratings to the ad platforms.
///
/// With no command, serves the API on an embedded SQLite file, creating it (and a first
/// project and API key) when needed.
#[derive(Debug, Parser)]
#[command(name = "server", version)]
pub(crate) struct Cli {
    /// The SQLite database file.
    #[arg(
        long,
        global = true,
        env = "LEADTRACK_DB",
        default_value = "leadtrack.db",
        value_name = "PATH"
    )]
    pub(crate) db: PathBuf,

    /// Serve options, when no command is given (`server --addr ...` is `server serve --addr ...`).
    #[command(flatten)]
    pub(crate) serve: ServeArgs,

    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve the API (the default command).
    Serve(ServeArgs),
    /// Manage projects.
    #[command(subcommand)]
    Project(ProjectCommand),
    /// Manage API keys.
    #[command(subcommand)]
    Key(KeyCommand),
    /// Manage conversion labels.
    #[command(subcommand)]
    Label(LabelCommand),
}

/// Options of `serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on.
    #[arg(
        long,
        env = "LEADTRACK_ADDR",
        default_value = "127.0.0.1:8080",
        value_name = "HOST:PORT"
    )]
    pub(crate) addr: String,

    /// Take client addresses from X-Forwarded-For (only behind a proxy that sets it).
    #[arg(long, env = "LEADTRACK_TRUST_FORWARDED_FOR")]
    pub(crate) trust_forwarded_for: bool,
}

/// `project ...`
#[derive(Debug, Subcommand)]
pub(crate) enum ProjectCommand {
    /// Create a project and its first API key.
    Create {
        /// A name for people.
        #[arg(long)]
        name: String,
        /// The public project id (default: generated).
        #[arg(long, value_name = "PUBLIC_ID")]
        id: Option<String>,
        /// ISO 4217 currency of lead prices.
        #[arg(long, value_name = "CODE")]
        currency: Option<String>,
        /// Print `{"projectId": ..., "apiKey": ...}`.
        #[arg(long)]
        json: bool,
    },
    /// List projects.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Deactivate a project: its routes answer 403 until it is activated again.
    Deactivate {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
    },
    /// Activate a deactivated project.
    Activate {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
    },
}

/// `key ...`
#[derive(Debug, Subcommand)]
pub(crate) enum KeyCommand {
    /// Create an API key (shown once).
    Create {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// Print `{"apiKey": ...}`.
        #[arg(long)]
        json: bool,
    },
    /// List a project's keys (their prefixes).
    List {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Revoke an API key, named by the whole key or its prefix.
    Revoke {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The key, or its prefix as `key list` shows it.
        #[arg(long, value_name = "KEY_OR_PREFIX")]
        key: String,
    },
}

/// `label ...`
#[derive(Debug, Subcommand)]
pub(crate) enum LabelCommand {
    /// Create a conversion label.
    Create {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// A name for people, e.g. "Qualified".
        #[arg(long)]
        name: String,
        /// Leads processed with this label become `rated` (else they return to `open`).
        #[arg(long)]
        mark_as_done: bool,
        /// GA4 event name to send.
        #[arg(long, value_name = "NAME")]
        ga4_event: Option<String>,
        /// Meta event name to send.
        #[arg(long, value_name = "NAME")]
        meta_event: Option<String>,
        /// Google Ads conversion action (its id or customers/C/conversionActions/ID).
        #[arg(long, value_name = "RESOURCE")]
        google_ads_action: Option<String>,
        /// Send to the project's webhook.
        #[arg(long)]
        webhook: bool,
        /// Print `{"labelId": ...}`.
        #[arg(long)]
        json: bool,
    },
    /// List a project's labels.
    List {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}
