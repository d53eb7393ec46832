//! The standalone leadtrack server: the process that serves the lead API and the dashboard
//! on a socket (the listener, connection timeouts and cap, compression, health probes,
//! metrics, the access log, the demo site) and runs the worker, with its command line.
//!
//! Its HTTP app is a library too: [`app`](fn@app) and [`app_with`] are the lead routes with health
//! probes, the demo, the OpenAPI document and the capture script, and [`serve_app_with`]
//! serves any warp filter with the server's timeouts and connection cap ([`ServeOptions`]).
//!
//! With no command it serves the lead API and the dashboard on `127.0.0.1:8080` from the
//! SQLite file `./leadtrack.db`, creating it, a first project and its owner on the first
//! run. `--help` lists the
//! admin commands. [`main`] is the whole program: the `leadtrack-server` binary and the
//! workspace's `server` example (`cargo run --release --example server`) only call it.

#![forbid(unsafe_code)]

/// The stack of each runtime thread. A page's future is polled on it, and debug builds give
/// every arm of a route's `match` its own stack slot: the dashboard's settings overflowed
/// tokio's default 2 MiB on PostgreSQL. Release builds need far less; 8 MiB of address
/// space costs only the pages touched.
const WORKER_STACK: usize = 8 * 1024 * 1024;

/// Prints a line to stdout. A closed pipe (`server project list | head -1`) is not an error
/// worth a panic: the reader has what it wanted.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

mod access;
mod accounts;
mod admin;
mod app;
mod backend;
mod backup;
mod bootstrap;
mod cli;
mod config;
mod connections;
mod crm;
mod demo;
mod header_limits;
mod health;
mod http_errors;
mod inbound;
mod integrations;
mod jobs;
mod listing;
mod mail;
mod metrics;
mod migrate;
mod platform_apps;
mod privacy;
mod retention;
mod rotate;
mod secret_key;
mod serve;
mod sources;
mod spend;
#[cfg(feature = "testkit")]
pub mod testkit;
mod webhooks;

pub use app::{App, app, app_with, serve, serve_app};
pub use connections::{ServeOptions, serve_app_with};
pub use demo::{demo, demo_allowing};
pub use health::Readiness;

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::process::ExitCode;

use leadtrack_core::target::Targets;
use leadtrack_core::{Store, StoreError};
use tokio::net::TcpListener;

use admin::ProjectCommand;
use backend::Database;
use cli::{
    Cli, Command, ConfigCommand, Connections, LogFormat, SecretsCommand, ServeArgs, WorkerCommand,
};
use mail::{MailArgs, MailCommand};

/// A failure to report: one line saying what is wrong and what to do.
#[derive(Debug)]
pub(crate) struct Failure(pub(crate) String);

impl Failure {
    /// A store error in an admin command, in words for the command line.
    pub(crate) fn store(err: StoreError) -> Self {
        Self(match err {
            StoreError::Invalid(reason) => reason,
            StoreError::Conflict(conflict) => conflict.to_string(),
            StoreError::NotFound(entity) => format!("{entity} not found"),
            other => format!("the database failed: {other}"),
        })
    }
}

/// Runs the server's command line: parses the arguments (and the `LEADTRACK_*` environment
/// variables), then serves, delivers conversions or runs an admin command.
///
/// A failure is one line on stderr, `error: ...`, and exit code 1; a usage error is clap's
/// message and exit code 2.
pub fn main() -> ExitCode {
    let parsed = match config::parse(std::env::args_os().collect()) {
        Ok(parsed) => parsed,
        Err(Failure(message)) => {
            eprintln!("error: {message}");
            return ExitCode::FAILURE;
        }
    };
    if matches!(
        parsed.cli.command,
        Some(Command::Config(ConfigCommand::Check))
    ) {
        config::check(&parsed);
        return ExitCode::SUCCESS;
    }
    let cli = parsed.cli;
    let serving = matches!(
        cli.command,
        None | Some(Command::Serve(_)) | Some(Command::Worker(_))
    );
    init_logging(if serving { "info" } else { "warn" }, cli.log_format);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(WORKER_STACK)
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("error: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message)) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Logs to stderr at `RUST_LOG`, else at `default`, in `format`.
fn init_logging(default: &str, format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let logger = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => logger.with_ansi(std::io::stderr().is_terminal()).init(),
        LogFormat::Json => logger
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .init(),
    }
}

/// Runs the command the line names, on the backend `--db` names.
async fn run(cli: Cli) -> Result<(), Failure> {
    let targets = cli.targets();
    let database = Database::parse(cli.db, cli.pool_size);
    let job = match cli.command {
        Some(Command::Backup { to, json }) => return backup::backup(&database, to, json).await,
        Some(Command::Restore { from, json }) => {
            return backup::restore(&database, from, json).await;
        }
        Some(Command::MigrateTo { from, to, batch }) => {
            let key = secret_key::configured(cli.secret_key_file.as_deref())?;
            return migrate::migrate_to(from, to, batch, cli.pool_size, key).await;
        }
        Some(Command::Secrets(SecretsCommand::Rotate { new_key_file })) => {
            return rotate::rotate(&database, cli.secret_key_file, new_key_file).await;
        }
        Some(Command::Mail(MailCommand::Test { to })) => {
            return mail::test(&cli.mail, &cli.serve.addr, &to).await;
        }
        None => {
            let apps = cli.serve.platforms.connections()?;
            Job::serve(Box::new(cli.serve), cli.mail, (apps, targets)).await?
        }
        Some(Command::Serve(mut args)) => {
            args.platforms = args.platforms.or(cli.serve.platforms);
            let apps = args.platforms.connections()?;
            Job::serve(args, cli.mail, (apps, targets)).await?
        }
        Some(Command::Worker(command)) => Job::Work(
            command,
            mail::Links {
                settings: cli.mail,
                addr: cli.serve.addr,
            },
            targets,
        ),
        Some(command) => Job::Administer {
            command,
            links: mail::Links {
                settings: cli.mail,
                addr: cli.serve.addr,
            },
            targets,
        },
    };
    let serving = matches!(job, Job::Serve { .. });
    database.run(job, cli.secret_key_file.as_deref()).await?;
    if serving {
        tracing::info!("stopped");
    }
    Ok(())
}

/// What the process does once its store is open.
pub(crate) enum Job {
    /// `serve`: the API on a listener bound before the store was opened, and the worker
    /// unless `--no-worker`.
    Serve {
        /// The bound listener.
        listener: TcpListener,
        /// Its address.
        addr: SocketAddr,
        /// The options of `serve` (boxed: they outweigh the other jobs many times).
        args: Box<ServeArgs>,
        /// Outgoing email, and where links point.
        links: mail::Links,
        /// The applications registered with the ad platforms.
        apps: Connections,
        /// The operator's exceptions to the rule for outbound addresses.
        targets: Targets,
    },
    /// `worker`: conversion deliveries, serving nothing but its metrics.
    Work(WorkerCommand, mail::Links, Targets),
    /// An admin command: `project`, `key`, `label`, `integration`, `user` or `member`.
    Administer {
        /// The command.
        command: Command,
        /// Outgoing email, and where links point (`member invite`, `user reset-link`).
        links: mail::Links,
        /// The operator's exceptions to the rule for the addresses a command saves or
        /// calls (`integration`, `webhook`).
        targets: Targets,
    },
}

impl Job {
    /// `serve`, with its address bound first: a port in use is reported before the database
    /// is touched.
    async fn serve(
        args: Box<ServeArgs>,
        settings: MailArgs,
        (apps, targets): (Connections, Targets),
    ) -> Result<Self, Failure> {
        let (listener, addr) = serve::bind(&args.addr).await?;
        Ok(Self::Serve {
            listener,
            addr,
            args,
            links: mail::Links {
                settings,
                addr: addr.to_string(),
            },
            apps,
            targets,
        })
    }

    /// Whether the job may create a missing database: only `serve` and `project create` may.
    pub(crate) fn creates(&self) -> bool {
        matches!(
            self,
            Self::Serve { .. }
                | Self::Administer {
                    command: Command::Project(ProjectCommand::Create { .. }),
                    ..
                }
        )
    }

    /// Runs the job on the open store; the caller closes the store afterwards.
    pub(crate) async fn run<S: Store + Clone>(
        self,
        store: S,
        database: &Database,
    ) -> Result<(), Failure> {
        match self {
            Self::Serve {
                listener,
                addr,
                args,
                links,
                apps,
                targets,
            } => {
                let reach = (addr, &links, apps, targets);
                serve::serve(store, listener, reach, *args, database).await
            }
            Self::Work(args, links, targets) => {
                serve::work(store, (&args, &links, targets), database).await
            }
            Self::Administer {
                command,
                links,
                targets,
            } => match command {
                Command::Project(command) => admin::project_command(&store, command).await,
                Command::Key(command) => admin::key_command(&store, command).await,
                Command::Label(command) => admin::label_command(&store, command).await,
                Command::Integration(command) => {
                    integrations::integration_command(&store, command, (&links, &targets)).await
                }
                Command::Webhook(command) => {
                    webhooks::webhook_command(&store, command, &targets).await
                }
                Command::Inbound(command) => {
                    inbound::inbound_command(&store, command, &links).await
                }
                Command::Lead(command) => inbound::lead_command(&store, command).await,
                Command::Spend(command) => spend::spend_command(&store, command, &targets).await,
                Command::Privacy(command) => privacy::privacy_command(&store, command).await,
                Command::Job(command) => jobs::job_command(&store, command).await,
                Command::User(command) => accounts::user_command(&store, command, &links).await,
                Command::Member(command) => {
                    accounts::member_command(&store, command, &links).await
                }
                Command::Serve(_)
                | Command::Worker(_)
                | Command::Backup { .. }
                | Command::Restore { .. }
                | Command::MigrateTo { .. }
                | Command::Secrets(_)
                | Command::Mail(_)
                | Command::Config(_) => Err(Failure(
                    "serve, worker, config, mail, backup, restore, migrate-to and secrets do not run on an open store"
                        .to_owned(),
                )),
            },
        }
    }
}
