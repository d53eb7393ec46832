//! The command line.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use leadtrack_core::types::Role;
use leadtrack_warp::{RateLimit, RateLimits, ServeOptions};

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
    /// Serve the API (the default command); also delivers conversions unless --no-worker.
    Serve(ServeArgs),
    /// Deliver queued conversions to the integrations, without serving the API.
    Worker(WorkerArgs),
    /// Manage projects.
    #[command(subcommand)]
    Project(ProjectCommand),
    /// Manage API keys.
    #[command(subcommand)]
    Key(KeyCommand),
    /// Manage conversion labels.
    #[command(subcommand)]
    Label(LabelCommand),
    /// Connect, change or disconnect a project's integrations.
    #[command(subcommand)]
    Integration(IntegrationCommand),
    /// Manage the people who sign in to the dashboard.
    #[command(subcommand)]
    User(UserCommand),
    /// Manage who is a member of a project, and their role.
    #[command(subcommand)]
    Member(MemberCommand),
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

    /// Trust a reverse proxy's X-Forwarded-For (client addresses) and X-Forwarded-Proto
    /// (HTTPS, for secure cookies); only behind a proxy that sets them.
    #[arg(long, env = "LEADTRACK_TRUST_FORWARDED_FOR")]
    pub(crate) trust_forwarded_for: bool,

    /// The email of the owner created on the first run, when there is no user yet.
    #[arg(
        long,
        env = "LEADTRACK_OWNER_EMAIL",
        default_value = "owner@localhost",
        value_name = "EMAIL"
    )]
    pub(crate) owner_email: String,

    /// createLead requests per client address: PER_MINUTE:BURST, or off.
    #[arg(
        long,
        env = "LEADTRACK_RATE_LIMIT_IP",
        default_value_t = RateLimits::default().per_ip,
        value_name = "PER_MINUTE:BURST"
    )]
    pub(crate) rate_limit_ip: RateLimit,

    /// createLead requests per project, all clients together: PER_MINUTE:BURST, or off.
    #[arg(
        long,
        env = "LEADTRACK_RATE_LIMIT_PROJECT",
        default_value_t = RateLimits::default().per_project,
        value_name = "PER_MINUTE:BURST"
    )]
    pub(crate) rate_limit_project: RateLimit,

    /// Requests per API key on the keyed routes: PER_MINUTE:BURST, or off.
    #[arg(
        long,
        env = "LEADTRACK_RATE_LIMIT_KEY",
        default_value_t = RateLimits::default().per_key,
        value_name = "PER_MINUTE:BURST"
    )]
    pub(crate) rate_limit_key: RateLimit,

    /// Do not deliver conversions in this process (run `server worker` elsewhere).
    #[arg(long)]
    pub(crate) no_worker: bool,

    #[command(flatten)]
    pub(crate) connections: ConnectionArgs,

    #[command(flatten)]
    pub(crate) worker: WorkerArgs,
}

/// How `serve` treats connections: timeouts in seconds and the connection cap.
#[derive(Debug, Args)]
pub(crate) struct ConnectionArgs {
    /// Seconds a client has to send a request's headers (and, on a kept-alive connection,
    /// to start its next request).
    #[arg(
        long,
        env = "LEADTRACK_HEADER_TIMEOUT",
        default_value_t = ServeOptions::default().header_read_timeout.as_secs(),
        value_parser = clap::value_parser!(u64).range(1..),
        value_name = "SECONDS"
    )]
    pub(crate) header_timeout: u64,

    /// Seconds a client has to send a request's body.
    #[arg(
        long,
        env = "LEADTRACK_BODY_TIMEOUT",
        default_value_t = ServeOptions::default().body_read_timeout.as_secs(),
        value_parser = clap::value_parser!(u64).range(1..),
        value_name = "SECONDS"
    )]
    pub(crate) body_timeout: u64,

    /// Seconds a connection stays open with no request and no traffic.
    #[arg(
        long,
        env = "LEADTRACK_IDLE_TIMEOUT",
        default_value_t = ServeOptions::default().idle_timeout.as_secs(),
        value_parser = clap::value_parser!(u64).range(1..),
        value_name = "SECONDS"
    )]
    pub(crate) idle_timeout: u64,

    /// The most connections open at once; past it the longest idle one is closed (keep it
    /// well under the open-file limit, `ulimit -n`).
    #[arg(
        long,
        env = "LEADTRACK_MAX_CONNECTIONS",
        default_value_t = ServeOptions::default().max_connections,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..),
        value_name = "N"
    )]
    pub(crate) max_connections: usize,
}

impl ConnectionArgs {
    /// The options of the server's accept loop.
    pub(crate) fn options(&self) -> ServeOptions {
        ServeOptions {
            header_read_timeout: Duration::from_secs(self.header_timeout),
            body_read_timeout: Duration::from_secs(self.body_timeout),
            idle_timeout: Duration::from_secs(self.idle_timeout),
            max_connections: self.max_connections,
        }
    }
}

/// Options of the conversion worker.
#[derive(Debug, Args)]
pub(crate) struct WorkerArgs {
    /// Conversion jobs delivered at once.
    #[arg(
        long,
        env = "LEADTRACK_WORKER_CONCURRENCY",
        default_value_t = 4,
        value_name = "N"
    )]
    pub(crate) worker_concurrency: usize,
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
    /// Change a project's settings; what is not given stays as it is.
    Set(ProjectSetArgs),
}

/// `project set`
#[derive(Debug, Args)]
pub(crate) struct ProjectSetArgs {
    /// The public project id.
    #[arg(long, value_name = "ID")]
    pub(crate) project: String,
    /// A new name.
    #[arg(long)]
    pub(crate) name: Option<String>,
    /// ISO 4217 currency of lead prices.
    #[arg(long, value_name = "CODE")]
    pub(crate) currency: Option<String>,
    /// Calling code put in front of national phone numbers (e.g. 49); "" removes it.
    #[arg(long, value_name = "DIGITS")]
    pub(crate) country_code: Option<String>,
    /// GA4 event sent for `lost` ("" sends none).
    #[arg(long, value_name = "NAME")]
    pub(crate) lost_ga4_event: Option<String>,
    /// Meta event sent for `lost` ("" sends none).
    #[arg(long, value_name = "NAME")]
    pub(crate) lost_meta_event: Option<String>,
    /// Google Ads conversion action for `lost` ("" sends none).
    #[arg(long, value_name = "RESOURCE")]
    pub(crate) lost_google_ads_action: Option<String>,
    /// Whether the webhook hears of `lost`.
    #[arg(long, value_name = "BOOL")]
    pub(crate) lost_webhook: Option<bool>,
    /// Browser origins createLead accepts, comma-separated (e.g.
    /// "https://shop.example,https://www.shop.example"); "" accepts any. Requests without
    /// an Origin header (servers, the WordPress plugin) are always accepted.
    #[arg(long, value_name = "ORIGINS")]
    pub(crate) allowed_origins: Option<String>,
}

/// `integration ...`: connect (or change) with the settings given; `--disconnect` removes.
/// Settings already stored are kept unless given again.
#[derive(Debug, Subcommand)]
pub(crate) enum IntegrationCommand {
    /// Google Analytics 4, Measurement Protocol.
    Ga4 {
        #[command(flatten)]
        target: IntegrationTarget,
        /// The web stream's measurement id, G-XXXXXXX.
        #[arg(long, value_name = "ID")]
        measurement_id: Option<String>,
        /// A Measurement Protocol API secret of the stream.
        #[arg(
            long,
            env = "LEADTRACK_GA4_API_SECRET",
            hide_env_values = true,
            value_name = "SECRET"
        )]
        api_secret: Option<String>,
        /// Send to the validation endpoint and fail on its messages (`--validate false` stops).
        #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
        validate: Option<bool>,
    },
    /// Meta Conversions API.
    Meta {
        #[command(flatten)]
        target: IntegrationTarget,
        /// The pixel (dataset) id.
        #[arg(long, value_name = "ID")]
        pixel_id: Option<String>,
        /// A system-user access token.
        #[arg(
            long,
            env = "LEADTRACK_META_ACCESS_TOKEN",
            hide_env_values = true,
            value_name = "TOKEN"
        )]
        access_token: Option<String>,
        /// Graph API version (default v23.0).
        #[arg(long, value_name = "VERSION")]
        api_version: Option<String>,
        /// Send to the Test Events tool with this code ("" stops).
        #[arg(long, value_name = "CODE")]
        test_event_code: Option<String>,
    },
    /// Google Ads offline click conversions, through the Data Manager API.
    GoogleAds {
        #[command(flatten)]
        target: IntegrationTarget,
        /// The Google Ads customer id the conversions belong to.
        #[arg(long, value_name = "ID")]
        customer_id: Option<String>,
        /// The manager account the credentials act through ("" removes it).
        #[arg(long, value_name = "ID")]
        login_customer_id: Option<String>,
        /// OAuth client id.
        #[arg(long, value_name = "ID")]
        client_id: Option<String>,
        /// OAuth client secret.
        #[arg(
            long,
            env = "LEADTRACK_GOOGLE_ADS_CLIENT_SECRET",
            hide_env_values = true,
            value_name = "SECRET"
        )]
        client_secret: Option<String>,
        /// OAuth refresh token with the datamanager scope.
        #[arg(
            long,
            env = "LEADTRACK_GOOGLE_ADS_REFRESH_TOKEN",
            hide_env_values = true,
            value_name = "TOKEN"
        )]
        refresh_token: Option<String>,
        /// The OAuth token endpoint ("" restores Google's).
        #[arg(long, value_name = "URL")]
        token_url: Option<String>,
    },
    /// A signed JSON webhook.
    Webhook {
        #[command(flatten)]
        target: IntegrationTarget,
        /// Where events are posted.
        #[arg(long, value_name = "URL")]
        url: Option<String>,
        /// The signing secret (generated, and shown once, when connecting without one).
        #[arg(
            long,
            env = "LEADTRACK_WEBHOOK_SECRET",
            hide_env_values = true,
            value_name = "SECRET"
        )]
        secret: Option<String>,
    },
    /// Show a project's integrations (credentials hidden).
    List {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// The options every `integration` command shares.
#[derive(Debug, Args)]
pub(crate) struct IntegrationTarget {
    /// The public project id.
    #[arg(long, value_name = "ID")]
    pub(crate) project: String,
    /// The platform's base URL ("" restores the platform's own), e.g. for a test server.
    #[arg(long, value_name = "URL")]
    pub(crate) base_url: Option<String>,
    /// Disconnect the integration.
    #[arg(long)]
    pub(crate) disconnect: bool,
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

/// `user ...`
#[derive(Debug, Subcommand)]
pub(crate) enum UserCommand {
    /// Create a user; prints a generated password once unless --password-stdin.
    Create {
        /// The email they sign in with.
        #[arg(long)]
        email: String,
        /// The name shown for what they do (default: the email's local part).
        #[arg(long)]
        name: Option<String>,
        /// Read the password from the first line of standard input.
        #[arg(long)]
        password_stdin: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List users.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Set a new password (generated unless --password-stdin); ends the user's sessions.
    SetPassword {
        /// The user's email.
        #[arg(long)]
        email: String,
        /// Read the password from the first line of standard input.
        #[arg(long)]
        password_stdin: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Disable a user: they cannot sign in, and their sessions end.
    Disable {
        /// The user's email.
        #[arg(long)]
        email: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Enable a disabled user.
    Enable {
        /// The user's email.
        #[arg(long)]
        email: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `member ...`
#[derive(Debug, Subcommand)]
pub(crate) enum MemberCommand {
    /// Make a user a member of a project, or change their role.
    Add {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The user's email.
        #[arg(long)]
        email: String,
        /// `owner` (manages keys, integrations, labels, members, settings) or `member`
        /// (sees and rates leads).
        #[arg(long, default_value = "member", value_name = "owner|member")]
        role: Role,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List a project's members.
    List {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove a user from a project.
    Remove {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The user's email.
        #[arg(long)]
        email: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}
