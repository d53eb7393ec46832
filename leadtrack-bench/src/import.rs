//! `--import N`: the time `server lead import` takes for an N-row CSV file of the data
//! set's leads, as a form tool exports them, and for the same file again (every row then
//! a duplicate), with the command's peak memory. The command runs where the benchmark
//! does (the second core, when it is pinned): the server beside it is idle.

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::data;
use crate::server::{self, Failure, Server};

/// The file's columns: the names a form tool's export gives them, each one the importer
/// maps by itself, and `Date` (mapped on the command line).
const HEADER: &str = "Date,Email,First name,Last name,Phone,Company,Form,Message,gclid,Event id";

/// One import's outcome.
pub(crate) struct Imported {
    /// The command's wall clock, from reading the file to its last commit.
    pub(crate) elapsed: Duration,
    /// The command's peak resident memory, in bytes.
    pub(crate) peak_rss: u64,
    /// What it printed (`--json`).
    pub(crate) outcome: Value,
}

/// A CSV field, quoted.
fn field(value: &Value) -> String {
    let text = value.as_str().unwrap_or_default();
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// The data set's first `rows` leads as a CSV file, created a minute apart.
pub(crate) fn csv(rows: u64) -> String {
    let mut file = format!("{HEADER}\n");
    let start = chrono::DateTime::UNIX_EPOCH + chrono::Duration::days(20_089); // 2025-01-01
    for n in 0..rows {
        let lead = data::lead(n);
        let (user, form) = (&lead["userData"], &lead["formData"]);
        let minutes = i64::try_from(n).unwrap_or_default();
        let date = start + chrono::Duration::minutes(minutes);
        let fields = [
            &user["email"],
            &user["firstName"],
            &user["lastName"],
            &user["phone"],
            &user["companyName"],
            &form["formName"],
            &form["message"],
            &lead["attributionData"]["gclid"],
            &form["uniqueEventId"],
        ]
        .map(field);
        let _ = writeln!(
            file,
            "{},{}",
            date.format("%Y-%m-%d %H:%M"),
            fields.join(",")
        );
    }
    file
}

/// Runs `lead import` of `file` into the server's first project, polling its peak memory.
pub(crate) async fn run(server: &Server, file: &Path) -> Result<Imported, Failure> {
    let file = file.to_str().ok_or("the file's path is not UTF-8")?;
    let args = [
        "lead",
        "import",
        "--project",
        &server.project,
        file,
        "--map",
        "createdAt=Date",
    ];
    let started = Instant::now();
    let child = server.command(&args).spawn().map_err(|e| e.to_string())?;
    let pid = child.id();
    let mut peak_rss = 0;
    let mut output = std::pin::pin!(child.wait_with_output());
    let output = loop {
        tokio::select! {
            output = &mut output => break output.map_err(|e| e.to_string())?,
            () = tokio::time::sleep(Duration::from_millis(50)) => {
                let (_, peak) = pid.map(server::memory_of).unwrap_or_default();
                peak_rss = peak_rss.max(peak);
            }
        }
    };
    let elapsed = started.elapsed();
    if !output.status.success() {
        return Err(format!(
            "lead import: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let outcome = serde_json::from_slice(&output.stdout).map_err(|e| e.to_string())?;
    Ok(Imported {
        elapsed,
        peak_rss,
        outcome,
    })
}
