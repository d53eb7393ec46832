//! `backup` and `restore`: the database copied to a file while servers run, and put back.

use std::path::PathBuf;

use leadtrack_sqlite::BackupSummary;
use serde_json::json;

use crate::Failure;
use crate::backend::Database;

/// `server backup --to FILE`: an online, consistent copy, checked, with its size and leads.
pub(crate) async fn backup(database: &Database, to: PathBuf, json: bool) -> Result<(), Failure> {
    let from = database.sqlite_file()?.to_owned();
    let target = to.clone();
    let summary = blocking(move || leadtrack_sqlite::backup(&from, &target)).await?;
    report("backup written to", &to, summary, json);
    Ok(())
}

/// `server restore --from FILE`: the backup checked, then in place of the database, unless
/// a process has the database open.
pub(crate) async fn restore(database: &Database, from: PathBuf, json: bool) -> Result<(), Failure> {
    let target = database.sqlite_file()?.to_owned();
    let source = from.clone();
    let summary = blocking(move || leadtrack_sqlite::restore(&source, &target)).await?;
    report("restored from", &from, summary, json);
    Ok(())
}

/// Runs the file work off the runtime's threads.
async fn blocking(
    work: impl FnOnce() -> leadtrack_core::StoreResult<BackupSummary> + Send + 'static,
) -> Result<BackupSummary, Failure> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| Failure(format!("the copy stopped: {err}")))?
        .map_err(Failure::store)
}

/// Prints what was written: one line, or JSON.
fn report(done: &str, file: &std::path::Path, summary: BackupSummary, json: bool) {
    if json {
        say!(
            "{}",
            json!({"file": file, "bytes": summary.bytes, "leads": summary.leads, "integrity": "ok"})
        );
    } else {
        say!(
            "{done} {}: {:.1} MiB, {} leads, integrity ok",
            file.display(),
            summary.bytes as f64 / (1024.0 * 1024.0),
            summary.leads
        );
    }
}
