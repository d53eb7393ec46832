//! Guarding the database file itself: storage that cannot be written is refused at start,
//! a missing file next to a leftover write-ahead log is not silently replaced by a new
//! database, and a file removed or replaced under a running store stops writes instead of
//! acknowledging them into a file no one will open again.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use leadtrack_core::StoreError;

/// The file's identity on its file system, as it was when the store opened it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FileIdentity {
    device: u64,
    inode: u64,
}

/// The write-ahead log SQLite keeps beside `path`.
fn wal_of(path: &Path) -> PathBuf {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    PathBuf::from(wal)
}

/// Checks, before opening, that the database at `path` can be used: an existing file must
/// be writable, and a missing one must not have a write-ahead log beside it (the sign of a
/// database moved or deleted while in use, which a new empty one would hide).
pub(crate) fn check_before_open(path: &Path) -> Result<(), StoreError> {
    if path.exists() {
        return std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map(drop)
            .map_err(|err| {
                StoreError::Invalid(format!(
                    "the database {} cannot be written ({err}); leadtrack needs storage it can \
                     write to",
                    path.display()
                ))
            });
    }
    let wal = wal_of(path);
    if wal.exists() {
        return Err(StoreError::Invalid(format!(
            "the database {} is missing but its write-ahead log {} is there: the database \
             may have been moved or deleted; put it back, or delete the -wal file to start a \
             new, empty database",
            path.display(),
            wal.display()
        )));
    }
    Ok(())
}

/// The identity of the file at `path` now.
pub(crate) fn identity(path: &Path) -> Option<FileIdentity> {
    std::fs::metadata(path).ok().map(|meta| FileIdentity {
        device: meta.dev(),
        inode: meta.ino(),
    })
}

/// Checks, before a write, that the file at `path` is still the one opened.
pub(crate) fn check_still_there(path: &Path, opened: FileIdentity) -> Result<(), StoreError> {
    if identity(path) == Some(opened) {
        Ok(())
    } else {
        tracing::error!(
            path = %path.display(),
            "the database file was removed or replaced while the store was open; refusing writes"
        );
        Err(StoreError::Unavailable(
            "the database file was removed or replaced".to_owned(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_database_beside_a_leftover_log_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("leadtrack.db");
        assert!(check_before_open(&path).is_ok(), "a new database");
        std::fs::write(wal_of(&path), b"").unwrap();
        let err = check_before_open(&path).unwrap_err().to_string();
        assert!(
            err.contains("write-ahead log") && err.contains("delete the -wal file"),
            "{err}"
        );
        std::fs::write(&path, b"").unwrap();
        assert!(check_before_open(&path).is_ok(), "the database is back");
    }

    #[test]
    fn a_replaced_file_is_noticed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("leadtrack.db");
        std::fs::write(&path, b"one").unwrap();
        // Held open as SQLite holds it: an open file keeps its inode, so a new file cannot
        // be given the same number (with the file closed, some file systems reuse it).
        let _held = std::fs::File::open(&path).unwrap();
        let opened = identity(&path).unwrap();
        assert!(check_still_there(&path, opened).is_ok());
        std::fs::remove_file(&path).unwrap();
        assert!(matches!(
            check_still_there(&path, opened),
            Err(StoreError::Unavailable(_))
        ));
        std::fs::write(&path, b"three").unwrap();
        assert!(
            check_still_there(&path, opened).is_err(),
            "a new file at the same path"
        );
    }
}
