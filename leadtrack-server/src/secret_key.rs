//! The key the stores seal secrets with (see `leadtrack_core::vault`).
//!
//! The key is `--secret-key-file FILE` (or `LEADTRACK_SECRET_KEY_FILE`), else
//! `LEADTRACK_SECRET_KEY` (the key itself, never a flag: command lines are visible to every
//! user of the machine). Without either, a SQLite database uses its own key file,
//! `<database>.key`, made on first start; PostgreSQL, shared by many servers, refuses to
//! start, since a key made by one would be unknown to the others.

use std::path::Path;

use leadtrack_core::vault::SecretKey;

use crate::Failure;

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
pub(crate) fn read(file: &Path) -> Result<SecretKey, Failure> {
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
