//! The backend the server runs on, chosen from `--db` / `LEADTRACK_DB`: the one place that
//! knows which stores exist and how each is opened and closed.
//!
//! A `postgres://` (or `postgresql://`) URL names PostgreSQL; any other value is a SQLite
//! file path. A new backend adds a [`Database`] variant, the values that name it in
//! [`Database::parse`], and its arm in [`Database::run`]; the commands themselves are
//! generic over the store and need no change.

use std::fmt;
use std::path::{Path, PathBuf};

use leadtrack_core::vault::WRONG_KEY;
use leadtrack_postgres::{PgOptions, PgStore};
use leadtrack_sqlite::{ReadPool, SqliteOptions, SqliteStore};

use crate::{Failure, Job, secret_key};

/// The prefixes of PostgreSQL connection URLs, compared without regard to case.
const POSTGRES_SCHEMES: [&str; 2] = ["postgres://", "postgresql://"];

/// Where the server keeps its data.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Database {
    /// An embedded SQLite file, created by `serve` and `project create` when missing.
    Sqlite(PathBuf),
    /// A PostgreSQL database, by its URL, with this process's pool size.
    Postgres {
        /// The `postgres://` URL (it may hold a password: never shown whole).
        url: String,
        /// The most connections this process holds.
        pool_size: usize,
    },
}

impl Database {
    /// The backend a `--db` value names: a PostgreSQL URL, or else a SQLite file path
    /// (`pool_size` is PostgreSQL's). Paths that are not UTF-8 are paths.
    pub(crate) fn parse(value: PathBuf, pool_size: usize) -> Self {
        match value.to_str() {
            Some(url) if is_postgres(url) => Self::Postgres {
                url: url.to_owned(),
                pool_size,
            },
            _ => Self::Sqlite(value),
        }
    }

    /// The SQLite file, for the commands that work on the file itself (backup, restore).
    /// Errors: the database is PostgreSQL's, which its own tools back up.
    pub(crate) fn sqlite_file(&self) -> Result<&Path, Failure> {
        match self {
            Self::Sqlite(path) => Ok(path),
            Self::Postgres { .. } => Err(Failure(
                "backup and restore copy a SQLite file; back up PostgreSQL with pg_dump, or your provider's snapshots (see docs/SCALING.md)".to_owned(),
            )),
        }
    }

    /// Opens the store with the secret key (`key_file`'s, see [`secret_key`]), runs the
    /// job on it, and closes it, whether the job succeeded or not.
    pub(crate) async fn run(&self, job: Job, key_file: Option<&Path>) -> Result<(), Failure> {
        match self {
            Self::Sqlite(path) => {
                let options = sqlite_options(&job);
                let store = open_sqlite(path, job.creates(), options, key_file).await?;
                let result = job.run(store.clone(), self).await;
                store.close().await;
                result
            }
            Self::Postgres { url, pool_size } => {
                let options = PgOptions {
                    pool_size: *pool_size,
                    ..PgOptions::default()
                };
                let key = secret_key::for_postgres(key_file)?;
                let store = PgStore::connect_with(url, &key, options).await.map_err(|err| {
                    if err.to_string().contains(WRONG_KEY) {
                        return Failure(format!("{self}: {WRONG_KEY}"));
                    }
                    // The URL is not repeated: it may carry a password.
                    Failure(format!(
                        "cannot use the PostgreSQL database {self}: {err}; check the URL, that the server runs and that the database exists"
                    ))
                })?;
                let result = job.run(store.clone(), self).await;
                store.close();
                result
            }
        }
    }
}

/// For logs: the file path, or the URL without its password and parameters.
impl fmt::Display for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sqlite(path) => path.display().fmt(f),
            Self::Postgres { url, .. } => f.write_str(&shown_url(url)),
        }
    }
}

/// A PostgreSQL URL as logs and messages show it: scheme (as written), user, host and
/// database, without the password or the query (which can carry one too).
fn shown_url(url: &str) -> String {
    let scheme = url
        .split_once("://")
        .map_or("postgres", |(scheme, _)| scheme);
    let Ok(mut parsed) = url::Url::parse(url) else {
        return format!("{scheme}://…");
    };
    // Neither fails on a URL with a host, which every postgres:// URL parsed here has.
    let _ = parsed.set_password(None);
    parsed.set_query(None);
    parsed.set_fragment(None);
    format!("{scheme}{}", &parsed.as_str()[parsed.scheme().len()..])
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
        Job::Work(..) => 2,
        Job::Administer { .. } => 1,
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
    key_file: Option<&Path>,
) -> Result<SqliteStore, Failure> {
    let shown = path.display();
    if !create && !path.exists() {
        return Err(Failure(format!(
            "no database at {shown}; start the server or run `server project create` first, or pass --db PATH"
        )));
    }
    let options = SqliteOptions {
        secret_key: Some(secret_key::for_sqlite(path, key_file)?),
        ..options
    };
    SqliteStore::open_with(path, options).await.map_err(|err| {
        let reason = err.to_string();
        if reason.contains(WRONG_KEY) {
            Failure(format!("{shown}: {WRONG_KEY}"))
        } else if reason.contains("not a database") {
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

    fn parse(value: &str) -> Database {
        Database::parse(PathBuf::from(value), 1)
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
            assert_eq!(parse(path), Database::Sqlite(PathBuf::from(path)));
        }
    }

    #[test]
    fn postgres_urls_are_postgres_shown_without_their_password() {
        for (url, shown) in [
            ("postgres://localhost/x", "postgres://localhost/x"),
            (
                "postgresql://leadtrack:hunter2@db.internal:5432/leadtrack?sslmode=require",
                "postgresql://leadtrack@db.internal:5432/leadtrack",
            ),
            ("POSTGRES://u@h/x?password=hunter2", "POSTGRES://u@h/x"),
            ("PostgreSQL://a:b:c@h/x", "PostgreSQL://a@h/x"),
        ] {
            let db = Database::parse(PathBuf::from(url), 7);
            assert_eq!(
                db,
                Database::Postgres {
                    url: url.to_owned(),
                    pool_size: 7
                }
            );
            assert_eq!(db.to_string(), shown);
            assert!(db.sqlite_file().is_err(), "{url}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn paths_that_are_not_utf8_are_sqlite() {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;

        let path = PathBuf::from(OsStr::from_bytes(b"leads-\xff.db"));
        assert_eq!(Database::parse(path.clone(), 1), Database::Sqlite(path));
    }

    #[test]
    fn a_sqlite_database_is_shown_as_its_path() {
        let db = Database::Sqlite(PathBuf::from("data/leadtrack.db"));
        assert_eq!(db.to_string(), "data/leadtrack.db");
    }
}
