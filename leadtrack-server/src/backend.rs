//! The backend the server runs on, chosen from `--db` / `LEADTRACK_DB`: the one place that
//! knows which stores exist and how each is opened and closed.
//!
//! Today every value is a SQLite file path. A new backend adds a [`Database`] variant, the
//! values that name it in [`Database::parse`], and its arm in [`Database::run`]; the commands
//! themselves are generic over the store and need no change.

use std::fmt;
use std::path::{Path, PathBuf};

use leadtrack_sqlite::{ReadPool, SqliteOptions, SqliteStore};

use crate::{Failure, Job};

/// The prefixes of PostgreSQL connection URLs, compared without regard to case.
const POSTGRES_SCHEMES: [&str; 2] = ["postgres://", "postgresql://"];

/// Where the server keeps its data.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Database {
    /// An embedded SQLite file, created by `serve` and `project create` when missing.
    Sqlite(PathBuf),
    // PostgreSQL comes here as `Postgres(url)`, made by `parse` from the URLs it refuses now.
}

impl Database {
    /// The backend a `--db` value names: a PostgreSQL URL (not supported yet, so an error),
    /// or else a SQLite file path. Paths that are not UTF-8 are paths.
    pub(crate) fn parse(value: PathBuf) -> Result<Self, Failure> {
        if value.to_str().is_some_and(is_postgres) {
            // The URL is not repeated: it may carry a password.
            return Err(Failure(
                "PostgreSQL URLs are not supported yet; give a SQLite file path".to_owned(),
            ));
        }
        Ok(Self::Sqlite(value))
    }

    /// The SQLite file, for the commands that work on the file itself (backup, restore).
    pub(crate) fn sqlite_file(&self) -> &Path {
        match self {
            Self::Sqlite(path) => path,
        }
    }

    /// Opens the store, runs the job on it, and closes it, whether the job succeeded or not.
    pub(crate) async fn run(&self, job: Job) -> Result<(), Failure> {
        match self {
            Self::Sqlite(path) => {
                let store = open_sqlite(path, job.creates(), sqlite_options(&job)).await?;
                let result = job.run(store.clone(), self).await;
                store.close().await;
                result
            }
        }
    }
}

/// For logs: the file path.
impl fmt::Display for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sqlite(path) => path.display().fmt(f),
        }
    }
}

/// Whether a `--db` value is a PostgreSQL URL.
fn is_postgres(value: &str) -> bool {
    POSTGRES_SCHEMES.iter().any(|scheme| {
        value
            .get(..scheme.len())
            .is_some_and(|prefix| prefix.eq_ignore_ascii_case(scheme))
    })
}

/// The SQLite store's options for `job`: `serve`'s reader pools as its flags say; the
/// worker and the admin commands run few reads at once, and get few readers.
fn sqlite_options(job: &Job) -> SqliteOptions {
    let readers = match job {
        Job::Serve { args, .. } => return args.readers.sqlite_options(),
        Job::Work(_) => 2,
        Job::Administer(_) => 1,
    };
    let defaults = SqliteOptions::default();
    SqliteOptions {
        quick: ReadPool {
            readers,
            ..defaults.quick
        },
        heavy: ReadPool {
            readers,
            ..defaults.heavy
        },
        ..defaults
    }
}

/// Opens the SQLite file. Only `create` jobs (`serve`, `project create`) may create it:
/// elsewhere a missing file is a mistyped path, not a wish for an empty database.
async fn open_sqlite(
    path: &Path,
    create: bool,
    options: SqliteOptions,
) -> Result<SqliteStore, Failure> {
    let shown = path.display();
    if !create && !path.exists() {
        return Err(Failure(format!(
            "no database at {shown}; start the server or run `server project create` first, or pass --db PATH"
        )));
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(value: &str) -> Result<Database, String> {
        Database::parse(PathBuf::from(value)).map_err(|Failure(message)| message)
    }

    #[test]
    fn file_paths_are_sqlite() {
        for path in [
            "leadtrack.db",
            "./data/leadtrack.db",
            "/var/lib/leadtrack/leadtrack.db",
            "postgres.db",
            "postgres/leadtrack.db",
            "postgres:/leadtrack.db",
            "",
        ] {
            assert_eq!(parse(path), Ok(Database::Sqlite(PathBuf::from(path))));
        }
    }

    #[test]
    fn postgres_urls_are_refused_in_one_line_without_the_url() {
        for url in [
            "postgres://localhost/x",
            "postgresql://leadtrack:hunter2@db.internal:5432/leadtrack?sslmode=require",
            "POSTGRES://localhost/x",
            "PostgreSQL://localhost/x",
        ] {
            let message = parse(url).unwrap_err();
            assert_eq!(
                message,
                "PostgreSQL URLs are not supported yet; give a SQLite file path"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn paths_that_are_not_utf8_are_sqlite() {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;

        let path = PathBuf::from(OsStr::from_bytes(b"leads-\xff.db"));
        assert_eq!(
            Database::parse(path.clone()).map_err(|Failure(message)| message),
            Ok(Database::Sqlite(path))
        );
    }

    #[test]
    fn a_sqlite_database_is_shown_as_its_path() {
        let db = Database::Sqlite(PathBuf::from("data/leadtrack.db"));
        assert_eq!(db.to_string(), "data/leadtrack.db");
    }
}
