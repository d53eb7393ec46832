//! The server under test: built by cargo, started on a fresh database (pinned to the first
//! core when `taskset` is there), administered through its own commands.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// What went wrong, for the person running the benchmark.
pub(crate) type Failure = String;

/// Builds the server (release, or the dev profile for a quick run) and returns its path.
pub(crate) fn build(release: bool) -> Result<PathBuf, Failure> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("the bench crate has no parent directory")?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut command = std::process::Command::new(cargo);
    command.current_dir(workspace).args([
        "build",
        "-q",
        "-p",
        "leadtrack-server",
        "--bin",
        "leadtrack-server",
    ]);
    if release {
        command.arg("--release");
    }
    let status = command.status().map_err(|e| format!("cargo: {e}"))?;
    if !status.success() {
        return Err("building the server failed".to_owned());
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace.join("target"), PathBuf::from);
    Ok(target
        .join(if release { "release" } else { "debug" })
        .join("leadtrack-server"))
}

/// A running server and its first project.
pub(crate) struct Server {
    binary: PathBuf,
    db: String,
    child: Child,
    /// Where it listens.
    pub(crate) addr: SocketAddr,
    /// The first project's public id.
    pub(crate) project: String,
    /// Its API key.
    pub(crate) key: String,
}

/// The secret key a server on PostgreSQL needs (`LEADTRACK_SECRET_KEY`), unless one is
/// set: a fixed one, as the benchmark's database is thrown away.
fn secret_key(db: &str) -> Option<(&'static str, &'static str)> {
    const KEY: &str = "bGVhZHRyYWNrIGJlbmNobWFyayBrZXksIG5vdCBzZWM=";
    let unset = std::env::var_os("LEADTRACK_SECRET_KEY").is_none();
    (db.starts_with("postgres") && unset).then_some(("LEADTRACK_SECRET_KEY", KEY))
}

fn free_port() -> Result<u16, Failure> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(listener.local_addr().map_err(|e| e.to_string())?.port())
}

fn has_taskset() -> bool {
    std::process::Command::new("taskset")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

impl Server {
    /// Starts `binary` on a new database in `dir`, or on the empty PostgreSQL database
    /// `postgres` names, without limits that would throttle the load, and reads the first
    /// project and key it prints.
    pub(crate) async fn start(
        binary: &Path,
        dir: &Path,
        postgres: Option<&str>,
    ) -> Result<Self, Failure> {
        let db = match postgres {
            Some(url) => url.to_owned(),
            None => dir
                .join("leadtrack.db")
                .to_str()
                .ok_or("the database path is not UTF-8")?
                .to_owned(),
        };
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()?)
            .parse()
            .map_err(|_| "no address")?;
        let server_args = [
            "--db",
            &db,
            "serve",
            "--addr",
            &addr.to_string(),
            "--rate-limit-ip",
            "off",
            "--rate-limit-key",
            "off",
            "--max-connections",
            "2048",
        ]
        .map(str::to_owned);
        let mut command = if has_taskset() {
            let mut command = Command::new("taskset");
            command.args(["-c", "0"]).arg(binary);
            command
        } else {
            Command::new(binary)
        };
        let mut child = command
            .args(server_args)
            .env("RUST_LOG", "warn")
            .envs(secret_key(&db))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("starting {}: {e}", binary.display()))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let (mut project, mut key) = (None, None);
        let deadline = Instant::now() + Duration::from_secs(30);
        while project.is_none() || key.is_none() {
            let line = tokio::time::timeout_at(deadline.into(), lines.next_line())
                .await
                .map_err(|_| "the server printed no project in 30 s")?
                .map_err(|e| e.to_string())?
                .ok_or("the server stopped")?;
            let line = line.trim();
            if let Some(id) = line.strip_prefix("project id:") {
                project = Some(id.trim().to_owned());
            } else if let Some(found) = line.strip_prefix("API key:") {
                key = Some(found.trim().to_owned());
            }
        }
        // Keep reading what it prints, so that it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        while tokio::net::TcpStream::connect(addr).await.is_err() {
            if Instant::now() > deadline {
                return Err("the server does not accept connections".to_owned());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(Self {
            binary: binary.to_owned(),
            db,
            child,
            addr,
            project: project.unwrap_or_default(),
            key: key.unwrap_or_default(),
        })
    }

    /// An admin command on the server's database, with `--json`, its output piped.
    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.binary);
        command
            .args(["--db", &self.db])
            .args(args)
            .arg("--json")
            .envs(secret_key(&self.db))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    /// Runs an admin command with `--json` and returns what it printed.
    pub(crate) async fn admin(&self, args: &[&str]) -> Result<Value, Failure> {
        let output = self
            .command(args)
            .output()
            .await
            .map_err(|e| e.to_string())?;
        if !output.status.success() {
            return Err(format!(
                "{args:?}: {}",
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        serde_json::from_slice(&output.stdout).map_err(|e| format!("{args:?}: {e}"))
    }

    /// The server's resident memory now and at its peak, in bytes.
    pub(crate) fn memory(&self) -> (u64, u64) {
        self.child.id().map(memory_of).unwrap_or_default()
    }

    /// The database's size on disk: the file, its WAL and shared memory; on PostgreSQL,
    /// the database's (`pg_database_size`).
    pub(crate) async fn database_size(&self) -> u64 {
        if self.db.starts_with("postgres") {
            let Ok((client, connection)) =
                tokio_postgres::connect(&self.db, tokio_postgres::NoTls).await
            else {
                return 0;
            };
            tokio::spawn(connection);
            return client
                .query_one("SELECT pg_database_size(current_database())", &[])
                .await
                .ok()
                .and_then(|row| row.try_get::<_, i64>(0).ok())
                .map_or(0, |size| u64::try_from(size).unwrap_or_default());
        }
        ["", "-wal", "-shm"]
            .iter()
            .filter_map(|suffix| {
                let mut path = std::ffi::OsString::from(&self.db);
                path.push(suffix);
                std::fs::metadata(path).ok()
            })
            .map(|meta| meta.len())
            .sum()
    }

    /// Stops the server.
    pub(crate) async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

/// Process `pid`'s resident memory now and at its peak, in bytes (zero once it is gone).
pub(crate) fn memory_of(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}
