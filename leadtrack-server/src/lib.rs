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
mod bootstrap;
mod cli;
mod integrations;
mod serve;

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use clap::Parser;
use leadtrack_core::StoreError;
use leadtrack_sqlite::{SqliteOptions, SqliteStore};

use cli::{Cli, Command};

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

/// Logs to stderr at `RUST_LOG`, else at `default`.
fn init_logging(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .init();
}

/// Runs the command the line names.
async fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        None => serve::serve(&cli.db, cli.serve).await,
        Some(Command::Serve(args)) => serve::serve(&cli.db, args).await,
        Some(Command::Worker(args)) => serve::work(&cli.db, args).await,
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
pub(crate) async fn open_store(
    path: &Path,
    create: bool,
    readers: usize,
) -> Result<SqliteStore, Failure> {
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
