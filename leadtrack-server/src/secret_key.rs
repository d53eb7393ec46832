//! The key the stores seal secrets with (see `leadtrack_core::vault`), and
//! `secrets rotate`.
//!
//! The key is `--secret-key-file FILE` (or `LEADTRACK_SECRET_KEY_FILE`), else
//! `LEADTRACK_SECRET_KEY` (the key itself, never a flag: command lines are visible to every
//! user of the machine). Without either, a SQLite database uses its own key file,
//! `<database>.key`, made on first start; PostgreSQL, shared by many servers, refuses to
//! start, since a key made by one would be unknown to the others.

use std::path::{Path, PathBuf};

use leadtrack_core::vault::SecretKey;
use leadtrack_postgres::{PgOptions, PgStore};

use crate::Failure;
use crate::backend::Database;

/// The variable holding the key itself.
pub(crate) const ENV: &str = "LEADTRACK_SECRET_KEY";

/// How to make a key, for the messages that ask for one.
const MAKE_ONE: &str = "make one with `openssl rand -base64 32 > leadtrack.key` (keep it apart from the database's backups) and pass --secret-key-file leadtrack.key, or set LEADTRACK_SECRET_KEY";

/// The key configured: `file`'s, else the variable's, else none.
pub(crate) fn configured(file: Option<&Path>) -> Result<Option<SecretKey>, Failure> {
    if let Some(file) = file {
        return read(file).map(Some);
    }
    match std::env::var(ENV) {
        Ok(text) if !text.trim().is_empty() => SecretKey::from_base64(&text)
            .map(Some)
            .map_err(|err| Failure(format!("{ENV}: {err}"))),
        _ => Ok(None),
    }
}

/// The key in `file`.
fn read(file: &Path) -> Result<SecretKey, Failure> {
    let shown = file.display();
    let text = std::fs::read_to_string(file)
        .map_err(|err| Failure(format!("cannot read the secret key file {shown}: {err}")))?;
    SecretKey::from_base64(&text).map_err(|err| Failure(format!("{shown}: {err}")))
}

/// The key of the SQLite database at `path`: the configured one, else its key file's, made
/// now (and its path, never the key, printed) when there is none.
pub(crate) fn for_sqlite(path: &Path, file: Option<&Path>) -> Result<SecretKey, Failure> {
    if let Some(key) = configured(file)? {
        return Ok(key);
    }
    let key_file = leadtrack_sqlite::key_file(path);
    let (key, created) = leadtrack_sqlite::load_or_create_key(&key_file).map_err(Failure::store)?;
    if created {
        // On stderr: stdout may be a command's JSON.
        eprintln!(
            "Made the key that seals the platforms' credentials in the database: {}",
            key_file.display()
        );
        eprintln!(
            "Keep it safe, and apart from the database's backups: they cannot be used without it."
        );
    }
    Ok(key)
}

/// The key of a PostgreSQL database: the configured one; there is no default.
pub(crate) fn for_postgres(file: Option<&Path>) -> Result<SecretKey, Failure> {
    configured(file)?.ok_or_else(|| {
        Failure(format!(
            "PostgreSQL needs a secret key to seal the platforms' credentials, the same for every server and worker: {MAKE_ONE}"
        ))
    })
}

/// `server secrets rotate --new-key-file FILE`: every secret sealed again with the new key.
/// On SQLite the database must be closed (servers stopped); a database that used its own key
/// file gets the new key in it. On PostgreSQL every server and worker must be stopped, and
/// started again with the new key.
pub(crate) async fn rotate(
    database: &Database,
    file: Option<PathBuf>,
    new_file: PathBuf,
) -> Result<(), Failure> {
    let new = read(&new_file)?;
    let count = match database {
        Database::Sqlite(path) => {
            if !path.exists() {
                return Err(Failure(format!("no database at {}", path.display())));
            }
            let old = for_sqlite(path, file.as_deref())?;
            let (at, new_key) = (path.clone(), new.clone());
            let count = tokio::task::spawn_blocking(move || {
                leadtrack_sqlite::rotate_secret_key(&at, &old, &new_key)
            })
            .await
            .map_err(|err| Failure(format!("sealing the secrets again stopped: {err}")))?
            .map_err(Failure::store)?;
            if file.is_none() && configured(None)?.is_none() {
                replace_key_file(&leadtrack_sqlite::key_file(path), &new)?;
            }
            count
        }
        Database::Postgres { url, .. } => {
            let old = for_postgres(file.as_deref())?;
            let store = PgStore::connect_with(url, &old, PgOptions::default())
                .await
                .map_err(|err| Failure(format!("cannot use the PostgreSQL database: {err}")))?;
            let count = store.rotate_secret_key(&new).await.map_err(Failure::store);
            store.close();
            count?
        }
    };
    say!(
        "Sealed {count} secrets with the key in {}.",
        new_file.display()
    );
    say!("Start every server and worker with that key from now on.");
    Ok(())
}

/// Puts `key` in the database's own key file, in place of the retired one.
fn replace_key_file(path: &Path, key: &SecretKey) -> Result<(), Failure> {
    leadtrack_sqlite::replace_key_file(path, key).map_err(|err| {
        Failure(format!(
            "the secrets are sealed with the new key, but {} still holds the old one ({err}): copy the new key there",
            path.display()
        ))
    })?;
    say!("{} now holds the new key.", path.display());
    Ok(())
}
