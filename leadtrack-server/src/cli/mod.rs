//! The command line.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

pub(crate) use crate::platform_apps::{Connections, PlatformApps};
use leadtrack_core::target::Targets;
use leadtrack_forward::RetryPolicy;
use leadtrack_sqlite::{ReadPool, SqliteOptions};
use leadtrack_warp::{RateLimit, RateLimits};

use crate::ServeOptions;
use crate::accounts::{MemberCommand, UserCommand};
use crate::admin::{KeyCommand, LabelCommand, ProjectCommand};
use crate::inbound::{InboundCommand, LeadCommand};
use crate::integrations::IntegrationCommand;
use crate::jobs::JobCommand;
use crate::mail::{MailArgs, MailCommand};
use crate::privacy::PrivacyCommand;
use crate::spend::SpendCommand;
use crate::webhooks::WebhookCommand;

/// leadtrack: capture leads, rate them, forward the ratings to the ad platforms.
///
/// With no command, serves the API on an embedded SQLite file, creating it (and a first
/// project and API key) when needed.
#[derive(Debug, Parser)]
#[command(name = "server", version)]
pub(crate) struct Cli {
    /// The database: a SQLite file path, or a PostgreSQL URL
    /// (`postgres://user:password@host:5432/leadtrack`).
    #[arg(
        help_heading = "Database",
        long,
        global = true,
        env = "LEADTRACK_DB",
        default_value = "leadtrack.db",
        value_name = "PATH|URL"
    )]
    pub(crate) db: PathBuf,

    /// On PostgreSQL, the most database connections this process holds at once. Every
    /// server and worker has its own pool: keep their sum below the database's
    /// `max_connections` (docs/SCALING.md).
    #[arg(help_heading = "Database", 
        long,
        global = true,
        env = "LEADTRACK_POOL_SIZE",
        default_value_t = leadtrack_postgres::PgOptions::default().pool_size,
        value_parser = at_least_one(),
        value_name = "N"
    )]
    pub(crate) pool_size: usize,

    /// The file holding the key (32 bytes, base64) that seals the platforms' credentials
    /// and other secrets in the database; `LEADTRACK_SECRET_KEY` may hold the key itself.
    /// Without either, a SQLite database uses `<database>.key`, made on first start;
    /// PostgreSQL requires one.
    #[arg(
        help_heading = "Database",
        long,
        global = true,
        env = "LEADTRACK_SECRET_KEY_FILE",
        value_name = "FILE"
    )]
    pub(crate) secret_key_file: Option<PathBuf>,

    /// A TOML file of settings: its keys are the long names of the flags (`addr`,
    /// `log-format`, ...). Flags win over environment variables, which win over the file.
    #[arg(
        help_heading = "Configuration",
        long,
        global = true,
        env = "LEADTRACK_CONFIG",
        value_name = "FILE"
    )]
    pub(crate) config: Option<PathBuf>,

    /// How log lines are written to stderr: `text` for people, `json` for log collectors
    /// (one JSON object per line). `RUST_LOG` sets what is logged.
    #[arg(
        help_heading = "Logging",
        long,
        global = true,
        env = "LEADTRACK_LOG_FORMAT",
        default_value = "text",
        value_name = "FORMAT"
    )]
    pub(crate) log_format: LogFormat,

    /// Addresses outside the public internet (loopback, private, link-local, shared,
    /// multicast, documentation, reserved) that platforms, webhooks, chat alerts and lead
    /// sources may be sent to anyway: ranges such as `127.0.0.0/8,10.1.2.0/24`, or
    /// `private` for all of them. For tests and internal services behind a firewall; none
    /// by default (docs/protection.md).
    #[arg(
        help_heading = "Outbound addresses",
        long,
        global = true,
        env = "LEADTRACK_ALLOW_TARGETS",
        default_value = "",
        value_parser = allowed_targets,
        value_name = "LIST"
    )]
    pub(crate) allow_targets: String,

    /// Let those sends use `http://` addresses as well as `https://` ones.
    #[arg(
        help_heading = "Outbound addresses",
        long,
        global = true,
        env = "LEADTRACK_ALLOW_HTTP_TARGETS"
    )]
    pub(crate) allow_http_targets: bool,

    /// Outgoing email's settings.
    #[command(flatten)]
    pub(crate) mail: MailArgs,

    /// Serve options, when no command is given (`server --addr ...` is `server serve --addr ...`).
    #[command(flatten)]
    pub(crate) serve: ServeArgs,

    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

/// `secrets ...`.
#[derive(Debug, Subcommand)]
pub(crate) enum SecretsCommand {
    /// Seal every secret again with a new key, in one transaction. Stop every server and
    /// worker first, and start them with the new key afterwards; a SQLite database that
    /// used its own key file gets the new key in it.
    Rotate {
        /// The file holding the new key (32 bytes, base64: `openssl rand -base64 32`).
        #[arg(long, value_name = "FILE")]
        new_key_file: PathBuf,
    },
}

/// `config ...`.
#[derive(Debug, Subcommand)]
pub(crate) enum ConfigCommand {
    /// Validate the configuration file and print every setting in effect, where it came
    /// from (flag, environment, file, default), secrets masked.
    Check,
}

/// How log lines are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line: `timestamp`, `level`, `target`, `fields` (the message and
    /// its values) and `span` (the request's `id` and `project`).
    Json,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve the API (the default command); also delivers conversions unless --no-worker.
    Serve(Box<ServeArgs>),
    /// Deliver queued conversions to the integrations, without serving the API.
    Worker(WorkerCommand),
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
    /// Manage a project's lead webhooks: new, merged, converted and lost leads, as they
    /// happen.
    #[command(subcommand)]
    Webhook(WebhookCommand),
    /// Manage a project's inbound webhooks: leads posted by form tools (Typeform, Tally,
    /// Webflow, Jotform, or any JSON).
    #[command(subcommand)]
    Inbound(InboundCommand),
    /// Leads in bulk: import past leads from a CSV file.
    #[command(subcommand)]
    Lead(LeadCommand),
    /// Ad spend: import it from a CSV file, list what is kept.
    #[command(subcommand)]
    Spend(SpendCommand),
    /// A person's requests about their data: erase them.
    #[command(subcommand)]
    Privacy(PrivacyCommand),
    /// Send failed deliveries again.
    #[command(subcommand)]
    Job(JobCommand),
    /// Check a configuration file (--config FILE) and show the settings in effect.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Outgoing email: send a test message.
    #[command(subcommand)]
    Mail(MailCommand),
    /// Copy the SQLite database to a new file while servers keep running, then check the
    /// copy (SQLite's integrity check) and print its size and lead count.
    Backup {
        /// The file to write; it must not exist yet.
        #[arg(long, value_name = "FILE")]
        to: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Replace the SQLite database with a backup, after checking it. Refused while a
    /// server, worker or admin command has the database open: stop them first.
    Restore {
        /// The backup to restore.
        #[arg(long, value_name = "FILE")]
        from: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Copy a whole SQLite database into a PostgreSQL database, then check the copy: every
    /// table's row count, and a sample of leads, jobs and events compared value for value.
    /// The SQLite file must not be open anywhere (stop its servers first); the PostgreSQL
    /// database must be empty, or hold an unfinished copy of the same file, which is
    /// resumed where it stopped.
    MigrateTo {
        /// The SQLite database file to copy.
        #[arg(long, value_name = "PATH")]
        from: PathBuf,
        /// The PostgreSQL database to copy into (`postgres://user:password@host/db`).
        #[arg(long, value_name = "URL")]
        to: String,
        /// How many ids each step of the copy covers (one transaction each).
        #[arg(long, default_value_t = 2000, value_parser = at_least_one(), value_name = "IDS")]
        batch: usize,
    },
    /// The key that seals secrets in the database.
    #[command(subcommand)]
    Secrets(SecretsCommand),
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
        help_heading = "Network",
        long,
        env = "LEADTRACK_ADDR",
        default_value = "127.0.0.1:8080",
        value_name = "HOST:PORT"
    )]
    pub(crate) addr: String,

    /// Trust a reverse proxy's X-Forwarded-For (client addresses) and X-Forwarded-Proto
    /// (HTTPS, for secure cookies); only behind a proxy that sets them.
    #[arg(help_heading = "Network", long, env = "LEADTRACK_TRUST_FORWARDED_FOR")]
    pub(crate) trust_forwarded_for: bool,

    /// The email of the owner created on the first run, when there is no user yet.
    #[arg(
        help_heading = "First run",
        long,
        env = "LEADTRACK_OWNER_EMAIL",
        default_value = "owner@localhost",
        value_name = "EMAIL"
    )]
    pub(crate) owner_email: String,

    /// createLead requests per client address past which its leads are stored but held as
    /// spam (never refused): PER_MINUTE:BURST, or off. Addresses a project trusts are exempt.
    #[arg(help_heading = "Limits", 
        long,
        env = "LEADTRACK_RATE_LIMIT_IP",
        default_value_t = RateLimits::default().per_ip,
        value_name = "PER_MINUTE:BURST"
    )]
    pub(crate) rate_limit_ip: RateLimit,

    /// Retired (accepted, and ignored with a warning): a project's leads are no longer
    /// refused for their rate; see `server project set --held-budget`.
    #[arg(
        help_heading = "Limits",
        long,
        env = "LEADTRACK_RATE_LIMIT_PROJECT",
        value_name = "PER_MINUTE:BURST",
        hide = true
    )]
    pub(crate) rate_limit_project: Option<RateLimit>,

    /// Requests per API key on the keyed routes: PER_MINUTE:BURST, or off.
    #[arg(help_heading = "Limits", 
        long,
        env = "LEADTRACK_RATE_LIMIT_KEY",
        default_value_t = RateLimits::default().per_key,
        value_name = "PER_MINUTE:BURST"
    )]
    pub(crate) rate_limit_key: RateLimit,

    /// Do not deliver conversions in this process (run `server worker` elsewhere).
    #[arg(help_heading = "Worker", long)]
    pub(crate) no_worker: bool,

    /// On Ctrl-C or SIGTERM, how long `GET /readyz` answers 503 while requests are still
    /// served, before the listener closes and the requests in flight drain: give a load
    /// balancer polling /readyz this long to stop sending new ones (e.g. 5s).
    #[arg(help_heading = "Network", 
        long,
        env = "LEADTRACK_SHUTDOWN_DELAY",
        default_value = "0s",
        value_parser = humantime::parse_duration,
        value_name = "DURATION"
    )]
    pub(crate) shutdown_delay: Duration,

    #[command(flatten)]
    pub(crate) connections: ConnectionArgs,

    /// The applications registered with the ad platforms, for signing in with them (the
    /// dashboard's): settings of `serve` alone.
    #[command(flatten)]
    pub(crate) platforms: PlatformApps,

    #[command(flatten)]
    pub(crate) readers: ReaderArgs,

    #[command(flatten)]
    pub(crate) worker: WorkerArgs,

    #[command(flatten)]
    pub(crate) metrics: MetricsArgs,
}

/// Options of `worker`.
#[derive(Debug, Args)]
pub(crate) struct WorkerCommand {
    #[command(flatten)]
    pub(crate) worker: WorkerArgs,

    #[command(flatten)]
    pub(crate) metrics: MetricsArgs,
}

/// Where Prometheus metrics are served.
#[derive(Debug, Args)]
#[command(next_help_heading = "Logging")]
pub(crate) struct MetricsArgs {
    /// Serve GET /metrics on this address only (say, 127.0.0.1:9090 or a private
    /// interface). Without it, `serve` answers /metrics on its own address, to clients on
    /// the same machine only (a loopback address, not through a proxy), and `worker`
    /// serves none.
    #[arg(long, env = "LEADTRACK_METRICS_ADDR", value_name = "HOST:PORT")]
    pub(crate) metrics_addr: Option<String>,

    /// Leave out the per-project label (leads created, ratings queued): a few series in
    /// all instead of a few per project.
    #[arg(long, env = "LEADTRACK_METRICS_NO_PROJECT_LABEL")]
    pub(crate) metrics_no_project_label: bool,
}

/// How `serve` treats connections: timeouts in seconds and the connection cap.
#[derive(Debug, Args)]
#[command(next_help_heading = "Network")]
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
        value_parser = at_least_one(),
        value_name = "N"
    )]
    pub(crate) max_connections: usize,

    /// The most connections one client address keeps while it is not using them; past it,
    /// its own quiet for a second are closed, oldest first (never one being answered). Not
    /// applied with --trust-forwarded-for, where every connection comes from the proxy
    /// (cap them per client there, e.g. nginx's limit_conn).
    #[arg(
        long,
        env = "LEADTRACK_MAX_CONNECTIONS_PER_ADDRESS",
        default_value_t = ServeOptions::default().max_connections_per_address,
        value_parser = at_least_one(),
        value_name = "N"
    )]
    pub(crate) max_connections_per_address: usize,
}

impl ConnectionArgs {
    /// The options of the server's accept loop.
    pub(crate) fn options(&self) -> ServeOptions {
        ServeOptions {
            header_read_timeout: Duration::from_secs(self.header_timeout),
            body_read_timeout: Duration::from_secs(self.body_timeout),
            idle_timeout: Duration::from_secs(self.idle_timeout),
            max_connections: self.max_connections,
            max_connections_per_address: self.max_connections_per_address,
        }
    }
}

/// How `serve` reads the SQLite database: its two pools of reader threads. A pool's full
/// queue, or a read past its time limit, is answered `503 unavailable`.
#[derive(Debug, Args)]
#[command(next_help_heading = "Limits")]
pub(crate) struct ReaderArgs {
    /// Threads for the lookups every request makes: API keys, projects, one lead, sessions.
    #[arg(
        long,
        env = "LEADTRACK_LOOKUP_THREADS",
        default_value_t = SqliteOptions::default().quick.readers,
        value_parser = at_least_one(),
        value_name = "N"
    )]
    pub(crate) lookup_threads: usize,

    /// Lookups that may wait for a thread.
    #[arg(
        long,
        env = "LEADTRACK_LOOKUP_QUEUE",
        default_value_t = SqliteOptions::default().quick.queue,
        value_parser = at_least_one(),
        value_name = "N"
    )]
    pub(crate) lookup_queue: usize,

    /// Seconds one lookup may wait for a thread (or it is refused), and then run (or it is
    /// interrupted).
    #[arg(
        long,
        env = "LEADTRACK_LOOKUP_TIME_LIMIT",
        default_value_t = SqliteOptions::default().quick.time_limit.as_secs(),
        value_parser = clap::value_parser!(u64).range(1..),
        value_name = "SECONDS"
    )]
    pub(crate) lookup_time_limit: u64,

    /// Threads for listings, searches, counts, reports and exports.
    #[arg(
        long,
        env = "LEADTRACK_READ_THREADS",
        default_value_t = SqliteOptions::default().heavy.readers,
        value_parser = at_least_one(),
        value_name = "N"
    )]
    pub(crate) read_threads: usize,

    /// Listings, searches, reports and exports that may wait for a thread (one project
    /// may hold half of the threads and of these places).
    #[arg(
        long,
        env = "LEADTRACK_READ_QUEUE",
        default_value_t = SqliteOptions::default().heavy.queue,
        value_parser = at_least_one(),
        value_name = "N"
    )]
    pub(crate) read_queue: usize,

    /// Seconds one listing, search, report or export batch may wait for a thread (or it is
    /// refused), and then run (or it is interrupted).
    #[arg(
        long,
        env = "LEADTRACK_READ_TIME_LIMIT",
        default_value_t = SqliteOptions::default().heavy.time_limit.as_secs(),
        value_parser = clap::value_parser!(u64).range(1..),
        value_name = "SECONDS"
    )]
    pub(crate) read_time_limit: u64,
}

impl ReaderArgs {
    /// The SQLite store's options with these pools.
    pub(crate) fn sqlite_options(&self) -> SqliteOptions {
        SqliteOptions {
            quick: ReadPool {
                readers: self.lookup_threads,
                queue: self.lookup_queue,
                time_limit: Duration::from_secs(self.lookup_time_limit),
            },
            heavy: ReadPool {
                readers: self.read_threads,
                queue: self.read_queue,
                time_limit: Duration::from_secs(self.read_time_limit),
            },
            ..SqliteOptions::default()
        }
    }
}

/// A count of at least one.
/// `--allow-targets`, checked as the rule reads it.
fn allowed_targets(list: &str) -> Result<String, String> {
    Targets::new(list, false).map(|_| list.to_owned())
}

impl Cli {
    /// The operator's exceptions to the rule for outbound addresses.
    pub(crate) fn targets(&self) -> Targets {
        // `allowed_targets` has read the list already.
        Targets::new(&self.allow_targets, self.allow_http_targets).unwrap_or_default()
    }
}

fn at_least_one() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..)
}

/// Options of the conversion worker.
#[derive(Debug, Args)]
#[command(next_help_heading = "Worker")]
pub(crate) struct WorkerArgs {
    /// Conversion jobs and lead webhook events delivered at once.
    #[arg(
        long,
        env = "LEADTRACK_WORKER_CONCURRENCY",
        default_value_t = 4,
        value_name = "N"
    )]
    pub(crate) worker_concurrency: usize,

    /// How long a delivery a worker claimed stays its own: a worker that dies loses its
    /// deliveries in progress to the others when this runs out. Longer than a platform's
    /// slowest answer (requests time out after 30s).
    #[arg(
        long,
        env = "LEADTRACK_WORKER_LEASE",
        default_value = "5m",
        value_parser = humantime::parse_duration,
        value_name = "DURATION"
    )]
    pub(crate) worker_lease: Duration,

    #[command(flatten)]
    pub(crate) retry: RetryArgs,
}

/// When failed deliveries are tried again: the wait after the first failure grows by a
/// factor each time (drawn between half and all of it, and never shorter than a platform's
/// Retry-After), within a number of attempts and a window from when the conversion was
/// queued.
#[derive(Debug, Args)]
pub(crate) struct RetryArgs {
    /// The wait after a delivery's first failed attempt (e.g. 1m, 30s, 500ms).
    #[arg(
        long,
        env = "LEADTRACK_RETRY_FIRST_DELAY",
        default_value = "1m",
        value_parser = humantime::parse_duration,
        value_name = "DURATION"
    )]
    pub(crate) retry_first_delay: Duration,

    /// Each wait is this many times the one before.
    #[arg(
        long,
        env = "LEADTRACK_RETRY_FACTOR",
        default_value_t = RetryPolicy::default().multiplier,
        value_parser = clap::value_parser!(u32).range(1..),
        value_name = "N"
    )]
    pub(crate) retry_factor: u32,

    /// Attempts per delivery, the first included.
    #[arg(
        long,
        env = "LEADTRACK_RETRY_ATTEMPTS",
        default_value_t = RetryPolicy::default().max_attempts,
        value_parser = clap::value_parser!(u32).range(1..),
        value_name = "N"
    )]
    pub(crate) retry_attempts: u32,

    /// No attempt later than this after the conversion was queued (e.g. 24h).
    #[arg(
        long,
        env = "LEADTRACK_RETRY_WINDOW",
        default_value = "24h",
        value_parser = humantime::parse_duration,
        value_name = "DURATION"
    )]
    pub(crate) retry_window: Duration,
}

impl RetryArgs {
    /// The worker's retry policy.
    pub(crate) fn policy(&self) -> RetryPolicy {
        RetryPolicy {
            max_attempts: self.retry_attempts,
            window: self.retry_window,
            base_delay: self.retry_first_delay,
            multiplier: self.retry_factor,
            ..RetryPolicy::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    /// The platforms' apps are settings of `serve`, written after it or before it.
    #[test]
    fn platform_apps_are_read_before_and_after_serve() {
        let apps = |line: &[&str]| match Cli::try_parse_from(line).unwrap() {
            Cli {
                command: Some(Command::Serve(args)),
                serve,
                ..
            } => args.platforms.or(serve.platforms),
            other => panic!("{other:?}"),
        };
        let after = apps(&["server", "serve", "--meta-app-id", "after"]);
        assert_eq!(after.meta_app_id.as_deref(), Some("after"));
        let before = apps(&["server", "--meta-app-id", "before", "serve"]);
        assert_eq!(before.meta_app_id.as_deref(), Some("before"));
        let both = [
            "server",
            "--meta-app-id",
            "before",
            "serve",
            "--meta-app-id",
            "after",
        ];
        assert_eq!(apps(&both).meta_app_id.as_deref(), Some("after"));
        let other = Cli::try_parse_from(["server", "project", "list", "--meta-app-id", "x"]);
        assert!(other.is_err(), "not a setting of the other commands");
    }

    fn worker_args(args: &[&str]) -> WorkerArgs {
        let mut line = vec!["server", "worker"];
        line.extend_from_slice(args);
        match Cli::try_parse_from(line).unwrap().command {
            Some(Command::Worker(command)) => command.worker,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_retry_flags_default_to_the_workers_schedule_and_read_durations() {
        assert_eq!(worker_args(&[]).retry.policy(), RetryPolicy::default());
        let policy = worker_args(&[
            "--retry-first-delay",
            "250ms",
            "--retry-factor",
            "2",
            "--retry-attempts",
            "3",
            "--retry-window",
            "1h 30m",
        ])
        .retry
        .policy();
        assert_eq!(
            (
                policy.base_delay,
                policy.multiplier,
                policy.max_attempts,
                policy.window
            ),
            (Duration::from_millis(250), 2, 3, Duration::from_secs(5400))
        );
        for bad in [["--retry-first-delay", "soon"], ["--retry-attempts", "0"]] {
            let mut line = vec!["server", "worker"];
            line.extend_from_slice(&bad);
            assert!(Cli::try_parse_from(line).is_err(), "{bad:?}");
        }
    }
}
