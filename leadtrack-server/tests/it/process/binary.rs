//! Running the compiled `leadtrack-server` binary as a process, as a user runs it.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use leadtrack_platforms::testkit::MockPlatform;
use reqwest::StatusCode;
use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The server's binary, which cargo builds for these tests.
pub(crate) fn server_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_leadtrack-server"))
}

/// A new database for a test of the contract, as `--db` takes it: a SQLite file in `dir`,
/// or a fresh PostgreSQL database's URL with `LEADTRACK_TEST_BACKEND=postgres`.
pub(crate) async fn fresh_db(dir: &tempfile::TempDir) -> PathBuf {
    match leadtrack_postgres::testkit::contract_database().await {
        Some(url) => PathBuf::from(url),
        None => dir.path().join("leadtrack.db"),
    }
}

/// The tests' secret key, in the variable that gives it: the same for every process, so
/// that a database one made (SQLite or PostgreSQL, or copied from one to the other) opens
/// in any other. The key files of databases without one are tested in `operations`.
pub(crate) fn test_key() -> (&'static str, String) {
    (
        "LEADTRACK_SECRET_KEY",
        leadtrack_postgres::testkit::test_key().to_base64(),
    )
}

/// The operator's exceptions the server processes of the tests run with: their mock
/// platforms listen on loopback addresses over `http://`.
pub(crate) const MOCK_TARGETS: [(&str, &str); 2] = [
    ("LEADTRACK_ALLOW_TARGETS", "127.0.0.0/8"),
    ("LEADTRACK_ALLOW_HTTP_TARGETS", "true"),
];

/// The SQLite store of `db` in this process, with the key the server processes use.
pub(crate) async fn open_store(db: &Path) -> leadtrack_sqlite::SqliteStore {
    let options = leadtrack_sqlite::SqliteOptions {
        secret_key: Some(leadtrack_postgres::testkit::test_key()),
        ..leadtrack_sqlite::SqliteOptions::default()
    };
    leadtrack_sqlite::SqliteStore::open_with(db, options)
        .await
        .expect("open the database")
}

/// Runs an admin command to completion.
pub(crate) async fn admin(db: &Path, args: &[&str]) -> Output {
    Command::new(server_binary())
        .envs([test_key()])
        .envs(MOCK_TARGETS)
        .args(args)
        .arg("--db")
        .arg(db)
        .env_remove("LEADTRACK_DB")
        .env_remove("LEADTRACK_ADDR")
        .output()
        .await
        .expect("run the server binary")
}

/// Runs an admin command with `input` on its standard input.
pub(crate) async fn admin_with_input(db: &Path, args: &[&str], input: &str) -> Output {
    use tokio::io::AsyncWriteExt;
    let mut child = Command::new(server_binary())
        .envs([test_key()])
        .args(args)
        .arg("--db")
        .arg(db)
        .env_remove("LEADTRACK_DB")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the server binary");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).await.unwrap();
    drop(stdin);
    child.wait_with_output().await.unwrap()
}

/// Runs an admin command that must succeed.
pub(crate) async fn admin_ok(db: &Path, args: &[&str]) -> Output {
    let output = admin(db, args).await;
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// An admin command's `--json` output.
pub(crate) async fn admin_json(db: &Path, args: &[&str]) -> Value {
    let output = admin_ok(db, args).await;
    serde_json::from_slice(&output.stdout).expect("JSON output")
}

/// `project create --name Acme --id acme --currency EUR --json`; returns its first API key.
pub(crate) async fn create_acme(db: &Path) -> String {
    let created = admin_json(
        db,
        &[
            "project",
            "create",
            "--name",
            "Acme",
            "--id",
            "acme",
            "--currency",
            "EUR",
            "--json",
        ],
    )
    .await;
    assert_eq!(created["projectId"], "acme");
    let key = created["apiKey"].as_str().unwrap().to_owned();
    assert!(key.starts_with("lt_"));
    key
}

/// `label create --project acme --name NAME OPTIONS... --json`; returns the label's id.
pub(crate) async fn create_label(db: &Path, name: &str, options: &[&str]) -> uuid::Uuid {
    let mut args = vec!["label", "create", "--project", "acme", "--name", name];
    args.extend_from_slice(options);
    args.push("--json");
    let label = admin_json(db, &args).await;
    label["labelId"].as_str().unwrap().parse().unwrap()
}

/// `integration webhook --project acme --url URL --secret SECRET`: connects `hook`'s
/// `/hook` as acme's conversion webhook; returns that URL.
pub(crate) async fn connect_webhook(db: &Path, hook: &MockPlatform, secret: &str) -> String {
    let url = format!("{}/hook", hook.url());
    let connect = ["integration", "webhook", "--project", "acme", "--url", &url];
    admin_ok(db, &[&connect[..], &["--secret", secret]].concat()).await;
    url
}

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A running server process, with its stdout lines up to the moment it was ready.
pub(crate) struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT` (empty for `server worker`, which serves nothing).
    pub(crate) base_url: String,
    /// What it printed to stdout before it was ready.
    pub(crate) stdout: Vec<String>,
    /// Its stderr (the log), line by line, so far.
    logs: Arc<Mutex<Vec<String>>>,
}

/// Starts `server serve` on a free port and waits until it listens.
pub(crate) async fn start(db: &Path) -> Server {
    start_serve(db, &[]).await
}

/// Starts `server serve` with extra options on a free port and waits until it listens.
pub(crate) async fn start_serve(db: &Path, options: &[&str]) -> Server {
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut args = vec!["serve", "--addr", &addr];
    args.extend_from_slice(options);
    let mut server = spawn(db, &args, "leadtrack listening").await;
    server.base_url = format!("http://{addr}");
    server
}

/// Starts `server worker` and waits until it delivers.
pub(crate) async fn start_worker(db: &Path) -> Server {
    spawn(db, &["worker"], "worker delivering conversions").await
}

/// Starts `server serve` on a free port with at most `open_files` file descriptors (the
/// shell's `ulimit -n`) and waits until it listens.
pub(crate) async fn start_serve_with_open_files(db: &Path, open_files: u32) -> Server {
    start_serve_limited(db, &format!("ulimit -n {open_files}")).await
}

/// Starts `server serve` on a free port after the shell commands `limits` (`ulimit ...`,
/// `trap ...`), which the server inherits, and waits until it listens.
pub(crate) async fn start_serve_limited(db: &Path, limits: &str) -> Server {
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("{limits} && exec \"$0\" \"$@\""))
        .arg(server_binary())
        .args(["serve", "--addr", &addr]);
    let mut server = spawn_command(command, db, "leadtrack listening").await;
    server.base_url = format!("http://{addr}");
    server
}

pub(crate) async fn spawn(db: &Path, args: &[&str], ready: &str) -> Server {
    let mut command = Command::new(server_binary());
    command.args(args);
    spawn_command(command, db, ready).await
}

async fn spawn_command(mut command: Command, db: &Path, ready: &str) -> Server {
    let mut child = command
        .arg("--db")
        .arg(db)
        .envs([test_key()])
        .envs(MOCK_TARGETS)
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start the server");
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let logs = Arc::new(Mutex::new(Vec::new()));
    let started = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = stderr.next_line().await.unwrap() {
            let seen = line.contains(ready);
            logs.lock().unwrap().push(line);
            if seen {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(started, Ok(true), "the process reports {ready:?}");
    // Keep reading stderr, so the server never blocks on a full pipe.
    let kept = Arc::clone(&logs);
    tokio::spawn(async move {
        while let Ok(Some(line)) = stderr.next_line().await {
            kept.lock().unwrap().push(line);
        }
    });
    let stdout = read_available(&mut child).await;
    Server {
        child,
        base_url: String::new(),
        stdout,
        logs,
    }
}

/// What the server printed to stdout before listening (the first-run banner).
async fn read_available(child: &mut Child) -> Vec<String> {
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let mut seen = Vec::new();
    // The banner is printed before the listening line, so it is already in the pipe.
    while let Ok(Ok(Some(line))) =
        tokio::time::timeout(Duration::from_millis(200), lines.next_line()).await
    {
        seen.push(line);
    }
    seen
}

impl Server {
    /// The process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id().expect("running")
    }

    /// Its log (stderr) so far, line by line.
    pub(crate) fn logs(&self) -> Vec<String> {
        self.logs.lock().unwrap().clone()
    }

    /// How many times its worker has looked for work (`leadtrack_worker_polls_total` on
    /// `/metrics`); 0 without a worker.
    pub(crate) async fn worker_polls(&self) -> u64 {
        let text = reqwest::get(format!("{}/metrics", self.base_url))
            .await
            .expect("/metrics answers")
            .text()
            .await
            .unwrap();
        text.lines()
            .find_map(|line| line.strip_prefix("leadtrack_worker_polls_total "))
            .map_or(0, |value| value.trim().parse().expect("a count"))
    }

    /// Waits until the delivery queues are empty (no job or lead webhook event queued or
    /// running, as `/metrics` shows them): whatever is still to be sent has been, and
    /// nothing else will be.
    pub(crate) async fn queues_drained(&self) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let text = reqwest::get(format!("{}/metrics", self.base_url))
                .await
                .expect("/metrics answers")
                .text()
                .await
                .unwrap();
            let busy = text.lines().any(|line| {
                (line.starts_with("leadtrack_queue_queued{")
                    || line.starts_with("leadtrack_queue_running{"))
                    && line.rsplit_once(' ').is_some_and(|(_, n)| n != "0")
            });
            if !busy {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the delivery queues never drained"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Sends it SIGTERM, without waiting.
    pub(crate) fn signal_terminate(&self) {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.pid()).expect("a process id"));
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("send SIGTERM");
    }

    /// Waits for it to exit by itself.
    pub(crate) async fn wait(&mut self) -> std::process::ExitStatus {
        tokio::time::timeout(Duration::from_secs(30), self.child.wait())
            .await
            .expect("graceful exit")
            .unwrap()
    }

    /// Stops it with SIGTERM and waits for its exit.
    pub(crate) async fn terminate(mut self) -> std::process::ExitStatus {
        self.signal_terminate();
        self.wait().await
    }

    /// Kills it with SIGKILL.
    pub(crate) async fn crash(mut self) {
        self.child.kill().await.unwrap();
    }
}

/// A JSON answer of the server's keyed route `url`, with `key`.
pub(crate) async fn get_json(http: &reqwest::Client, url: &str, key: &str) -> serde_json::Value {
    let answer = http.get(url).header("x-api-key", key).send().await;
    answer.unwrap().json().await.unwrap()
}

/// A browser without redirects or a cookie jar: each answer is seen as it is.
pub(crate) fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// Posts the sign-in form; returns the status and the session cookie, if one was set.
pub(crate) async fn sign_in(
    server: &Server,
    email: &str,
    password: &str,
) -> (StatusCode, Option<String>) {
    let login = format!("{}/login", server.base_url);
    post_form(server, &login, &[("email", email), ("password", password)]).await
}

/// Posts a form from the server's own pages without a session (signing in, a link's page);
/// returns the status and the session cookie, if one was set.
pub(crate) async fn post_form(
    server: &Server,
    url: &str,
    pairs: &[(&str, &str)],
) -> (StatusCode, Option<String>) {
    let body: String = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish();
    let reply = browser()
        .post(url)
        .header("origin", &server.base_url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap();
    let cookie = reply
        .headers()
        .get(SET_COOKIE)
        .map(|v| v.to_str().unwrap().split(';').next().unwrap().to_owned());
    (reply.status(), cookie)
}

/// A page as the holder of `cookie` gets it: its status, redirect and text.
pub(crate) async fn page(
    server: &Server,
    path: &str,
    cookie: &str,
) -> (StatusCode, Option<String>, String) {
    let reply = browser()
        .get(format!("{}{path}", server.base_url))
        .header(COOKIE, cookie)
        .send()
        .await
        .unwrap();
    let location = reply
        .headers()
        .get(LOCATION)
        .map(|v| v.to_str().unwrap().to_owned());
    (reply.status(), location, reply.text().await.unwrap())
}
