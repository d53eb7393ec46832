//! Online backups, and restores, of the database file.
//!
//! A backup is `VACUUM INTO` on a connection of its own: one read transaction, so the copy
//! is the database as it was at one instant, taken while servers go on writing (in WAL mode
//! a reader does not block the writer). The copy is synced, checked with SQLite's
//! `integrity_check`, and its leads counted.
//!
//! Every open store holds a shared lock on a file beside the database (`<db>-lock`). A
//! restore takes that lock exclusively: it refuses while a server, worker or admin command
//! has the database open, and no store opens while a restore replaces the file.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::time::Duration;

use leadtrack_core::{StoreError, StoreResult};
use rusqlite::{Connection, OpenFlags};

use crate::schema;

/// What a backup or a restore wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BackupSummary {
    /// The size of the database file written, in bytes.
    pub bytes: u64,
    /// How many leads it holds.
    pub leads: u64,
}

/// Copies the database at `database` to a new file `to` while it may be in use, then checks
/// the copy. `to` must not exist yet: a backup never overwrites a file.
///
/// Errors: [`StoreError::Invalid`] saying what is wrong (no database, `to` exists, the copy
/// fails its check), [`StoreError::Backend`] when SQLite or the file system fails.
/// Blocks on file work: call it off an async runtime's threads.
pub fn backup(database: &Path, to: &Path) -> StoreResult<BackupSummary> {
    if !database.exists() {
        return Err(StoreError::Invalid(format!(
            "no database at {}",
            database.display()
        )));
    }
    let _open = hold_open(database)?;
    if to.exists() {
        return Err(StoreError::Invalid(format!(
            "{} already exists; a backup never overwrites a file",
            to.display()
        )));
    }
    let target = to
        .to_str()
        .ok_or_else(|| StoreError::Invalid(format!("{} is not a UTF-8 path", to.display())))?;
    let conn = Connection::open_with_flags(database, OpenFlags::SQLITE_OPEN_READ_WRITE)
        .map_err(StoreError::backend)?;
    conn.busy_timeout(Duration::from_secs(5))
        .map_err(StoreError::backend)?;
    conn.execute("VACUUM INTO ?1", [target])
        .map_err(StoreError::backend)?;
    drop(conn);
    File::open(to)
        .and_then(|file| file.sync_all())
        .map_err(StoreError::backend)?;
    verify(to)
}

/// Replaces the database at `database` with the backup `from`, after checking the backup.
/// Refused while any process has the database open.
///
/// Errors: [`StoreError::Invalid`] saying what is wrong (the database is in use, the backup
/// fails its check or is newer than this build), [`StoreError::Backend`] when the file
/// system fails.
/// Blocks on file work: call it off an async runtime's threads.
pub fn restore(from: &Path, database: &Path) -> StoreResult<BackupSummary> {
    let _lock = hold_alone(database, "restoring")?;
    let summary = verify(from)?;
    let staged = beside(database, "-restore");
    std::fs::copy(from, &staged).map_err(StoreError::backend)?;
    File::open(&staged)
        .and_then(|file| file.sync_all())
        .map_err(StoreError::backend)?;
    // The old database's log and index must not be applied to the restored file.
    for leftover in [beside(database, "-wal"), beside(database, "-shm")] {
        match std::fs::remove_file(&leftover) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                return Err(StoreError::backend(err));
            }
            _ => {}
        }
    }
    std::fs::rename(&staged, database).map_err(StoreError::backend)?;
    if let Some(dir) = database.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        File::open(dir)
            .and_then(|dir| dir.sync_all())
            .map_err(StoreError::backend)?;
    }
    Ok(summary)
}

/// A shared lock on the database's lock file, held while a store has it open. Errors:
/// [`StoreError::Unavailable`] while a restore replaces the database.
pub(crate) fn hold_open(database: &Path) -> StoreResult<File> {
    let lock = lock_file(database)?;
    match lock.try_lock_shared() {
        Ok(()) => Ok(lock),
        Err(TryLockError::WouldBlock) => Err(StoreError::Unavailable(format!(
            "{} is being restored",
            database.display()
        ))),
        Err(TryLockError::Error(err)) => Err(StoreError::backend(err)),
    }
}

/// The lock file's exclusive lock, held while `doing` (e.g. "restoring") needs the database
/// to itself. Errors: [`StoreError::Invalid`] while a server, worker or admin command has
/// the database open.
pub(crate) fn hold_alone(database: &Path, doing: &str) -> StoreResult<File> {
    let lock = lock_file(database)?;
    match lock.try_lock() {
        Ok(()) => Ok(lock),
        Err(TryLockError::WouldBlock) => Err(StoreError::Invalid(format!(
            "{} is open in a running leadtrack (server, worker or admin command); \
                 stop it before {doing}",
            database.display()
        ))),
        Err(TryLockError::Error(err)) => Err(StoreError::backend(err)),
    }
}

/// The lock file beside `database`, created when missing.
fn lock_file(database: &Path) -> StoreResult<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(beside(database, "-lock"))
        .map_err(StoreError::backend)
}

/// `database`'s path with `suffix` appended, as SQLite names its `-wal` and `-shm` files.
fn beside(database: &Path, suffix: &str) -> PathBuf {
    let mut path = database.as_os_str().to_owned();
    path.push(suffix);
    PathBuf::from(path)
}

/// Checks the database file at `path` (SQLite's `integrity_check`, a schema this build
/// knows) and counts its leads.
fn verify(path: &Path) -> StoreResult<BackupSummary> {
    let shown = path.display();
    let not_leadtrack = |err: rusqlite::Error| {
        StoreError::Invalid(format!("{shown} is not a leadtrack database ({err})"))
    };
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(not_leadtrack)?;
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .map_err(not_leadtrack)?;
    if check != "ok" {
        return Err(StoreError::Invalid(format!(
            "{shown} fails SQLite's integrity check: {check}"
        )));
    }
    schema::check_known(&conn)?;
    let leads: i64 = conn
        .query_row("SELECT count(*) FROM leads", [], |row| row.get(0))
        .map_err(not_leadtrack)?;
    let bytes = std::fs::metadata(path).map_err(StoreError::backend)?.len();
    Ok(BackupSummary {
        bytes,
        leads: u64::try_from(leads).unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SqliteStore;

    fn invalid(result: StoreResult<BackupSummary>) -> String {
        match result {
            Err(StoreError::Invalid(reason)) => reason,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn a_missing_database_is_not_backed_up_and_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let (database, to) = (dir.path().join("none.db"), dir.path().join("copy.db"));
        assert!(invalid(backup(&database, &to)).starts_with("no database at"));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[tokio::test]
    async fn restore_refuses_an_open_database_a_broken_backup_and_a_newer_schema() {
        let dir = tempfile::tempdir().unwrap();
        let database = dir.path().join("leadtrack.db");
        let store = SqliteStore::open(&database).await.unwrap();
        let copy = dir.path().join("copy.db");
        assert_eq!(backup(&database, &copy).unwrap().leads, 0);
        assert!(invalid(restore(&copy, &database)).contains("stop it before restoring"));
        store.close().await;
        drop(store);

        let junk = dir.path().join("junk.db");
        std::fs::write(&junk, b"not a database at all").unwrap();
        assert!(invalid(restore(&junk, &database)).contains("is not a leadtrack database"));
        let newer = dir.path().join("newer.db");
        std::fs::copy(&copy, &newer).unwrap();
        Connection::open(&newer)
            .unwrap()
            .pragma_update(None, "user_version", 10_000)
            .unwrap();
        assert!(invalid(restore(&newer, &database)).contains("newer than this leadtrack"));

        // The database is untouched by the refusals, and a good backup restores.
        let restored = restore(&copy, &database).unwrap();
        assert_eq!(restored.leads, 0);
        let reopened = SqliteStore::open(&database).await.unwrap();
        leadtrack_core::LeadStore::ready(&reopened).await.unwrap();
    }
}
