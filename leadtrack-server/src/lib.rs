//! The standalone leadtrack server: its command line, the admin and integration commands,
//! the first run, serving the API and delivering conversions.
//!
//! With no command it serves the lead API on `127.0.0.1:8080` from the SQLite file
//! `./leadtrack.db`, creating it and a first project on the first run. `--help` lists the
//! admin commands. [`main`] is the whole program: the `leadtrack-server` binary and the
//! workspace's `server` example (`cargo run --release --example server`) only call it.

#![forbid(unsafe_code)]

/// Prints a line to stdout. A closed pipe (`server project list | head -1`) is not an error
/// worth a panic: the reader has what it wanted.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

mod admin;
mod cli;
mod integrations;

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use clap::Parser;
use leadtrack_core::{LeadStore, StoreError};
use leadtrack_sqlite::{SqliteOptions, SqliteStore};
use leadtrack_warp::Config;
use tokio::net::TcpListener;

use cli::{Cli, Command, ServeArgs, WorkerArgs};
use leadtrack_forward::{Worker, WorkerConfig};
use tokio::sync::watch;

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
    let cli = Cli::parse();
    let serving = matches!(
        cli.command,
        None | Some(Command::Serve(_)) | Some(Command::Worker(_))
    );
    init_logging(if serving { "info" } else { "warn" });
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
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

fn init_logging(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .init();
}

async fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        None => serve(&cli.db, cli.serve).await,
        Some(Command::Serve(args)) => serve(&cli.db, args).await,
        Some(Command::Worker(args)) => work(&cli.db, args).await,
        Some(command) => administer(&cli.db, command).await,
    }
}

/// Runs an admin command on the database, then closes it.
async fn administer(db: &Path, command: Command) -> Result<(), Failure> {
    let create = matches!(
        command,
        Command::Project(cli::ProjectCommand::Create { .. })
    );
    let store = open_store(db, create, 1).await?;
    let result = match command {
        Command::Project(command) => admin::project_command(&store, command).await,
        Command::Key(command) => admin::key_command(&store, command).await,
        Command::Label(command) => admin::label_command(&store, command).await,
        Command::Integration(command) => integrations::integration_command(&store, command).await,
        Command::Serve(_) | Command::Worker(_) => Err(Failure(
            "serve and worker are not admin commands".to_owned(),
        )),
    };
    store.close().await;
    result
}

/// Opens the database. Only `serve` and `project create` may create it: elsewhere a missing
/// file is a mistyped path, not a wish for an empty database.
async fn open_store(path: &Path, create: bool, readers: usize) -> Result<SqliteStore, Failure> {
    let shown = path.display();
    if !create && !path.exists() {
        return Err(Failure(format!(
            "no database at {shown}; start the server or run `server project create` first, or pass --db PATH"
        )));
    }
    let options = SqliteOptions {
        readers,
        ..SqliteOptions::default()
    };
    SqliteStore::open_with(path, options).await.map_err(|err| {
        let reason = err.to_string();
        if reason.contains("not a database") {
            Failure(format!(
                "{shown} is not a leadtrack database (SQLite says: file is not a database); pass --db PATH to use another file"
            ))
        } else {
            Failure(format!(
                "cannot open the database {shown}: {reason}; check the path and its permissions, or pass --db PATH"
            ))
        }
    })
}

async fn serve(db: &Path, args: ServeArgs) -> Result<(), Failure> {
    // Bind first: a port in use is reported before the database is touched.
    let listener = TcpListener::bind(&args.addr).await.map_err(|err| {
        Failure(format!(
            "cannot listen on {}: {err}; stop whatever uses it or pass --addr HOST:PORT",
            args.addr
        ))
    })?;
    let addr = listener
        .local_addr()
        .map_err(|err| Failure(format!("cannot read the listening address: {err}")))?;
    let store = open_store(db, true, 4).await?;
    if let Err(failure) = bootstrap(&store, addr).await {
        store.close().await;
        return Err(failure);
    }

    let config = Config {
        trust_forwarded_for: args.trust_forwarded_for,
        ..Config::default()
    };
    let stop = stop_on_signal();
    let worker = if args.no_worker {
        None
    } else {
        let worker = worker(&store, &args.worker)?;
        Some(tokio::spawn(worker.run(stopped(&stop))))
    };
    tracing::info!(%addr, db = %db.display(), worker = !args.no_worker, "leadtrack listening on http://{addr}");
    leadtrack_warp::serve(listener, store.clone(), config, stopped(&stop)).await;
    tracing::info!("stopped accepting requests");
    if let Some(worker) = worker {
        let _ = worker.await;
    }
    store.close().await;
    tracing::info!("stopped");
    Ok(())
}

/// `server worker`: delivers conversions until Ctrl-C or SIGTERM, serving nothing.
async fn work(db: &Path, args: WorkerArgs) -> Result<(), Failure> {
    let store = open_store(db, false, 2).await?;
    let worker = match worker(&store, &args) {
        Ok(worker) => worker,
        Err(failure) => {
            store.close().await;
            return Err(failure);
        }
    };
    let stop = stop_on_signal();
    tracing::info!(db = %db.display(), "leadtrack worker delivering conversions");
    worker.run(stopped(&stop)).await;
    store.close().await;
    Ok(())
}

fn worker(store: &SqliteStore, args: &WorkerArgs) -> Result<Worker<SqliteStore>, Failure> {
    let config = WorkerConfig {
        concurrency: args.worker_concurrency.max(1),
        ..WorkerConfig::default()
    };
    Worker::new(store.clone(), config).map_err(|err| {
        Failure(format!(
            "cannot set up the HTTP client of the worker: {err}"
        ))
    })
}

/// A flag raised on Ctrl-C or SIGTERM, for every part of the process to stop on.
fn stop_on_signal() -> watch::Receiver<bool> {
    let (raise, flag) = watch::channel(false);
    tokio::spawn(async move {
        shutdown_signal().await;
        let _ = raise.send(true);
    });
    flag
}

/// Resolves once the flag is raised.
fn stopped(flag: &watch::Receiver<bool>) -> impl std::future::Future<Output = ()> + Send + 'static {
    let mut flag = flag.clone();
    async move {
        let _ = flag.wait_for(|raised| *raised).await;
    }
}

/// On the first run, creates a project and prints how to use it.
async fn bootstrap(store: &SqliteStore, addr: std::net::SocketAddr) -> Result<(), Failure> {
    if !store.projects().await.map_err(Failure::store)?.is_empty() {
        return Ok(());
    }
    let (project, key) = admin::create_project(store, "My project".to_owned(), None, None).await?;
    let host = if addr.ip().is_unspecified() {
        format!("127.0.0.1:{}", addr.port())
    } else {
        addr.to_string()
    };
    say!("No project yet, so leadtrack created one.");
    say!("  project id: {}", project.public_id);
    say!("  API key:    {key}");
    say!("The key is shown only this once: store it somewhere safe.");
    say!();
    say!("Try it:");
    say!(
        "  curl -i http://{host}/api/leads/createServerSideLead -H 'Content-Type: application/json' -H 'X-API-Key: {key}' -d '{{\"userData\":{{\"email\":\"ada@example.com\"}}}}'"
    );
    say!(
        "or in a browser: http://{host}/demo?projectId={}",
        project.public_id
    );
    say!();
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutdown requested");
}
