//! `server secrets rotate --new-key-file FILE`: every secret sealed again with a new key, on
//! the backend `--db` names.

use std::path::{Path, PathBuf};

use leadtrack_core::vault::SecretKey;
use leadtrack_postgres::{PgOptions, PgStore};

use crate::Failure;
use crate::backend::Database;
use crate::secret_key::{self, configured, for_postgres, for_sqlite};

/// `server secrets rotate --new-key-file FILE`: every secret sealed again with the new key.
/// On SQLite the database must be closed (servers stopped); a database that used its own key
/// file gets the new key in it. On PostgreSQL every server and worker must be stopped, and
/// started again with the new key.
pub(crate) async fn rotate(
    database: &Database,
    file: Option<PathBuf>,
    new_file: PathBuf,
) -> Result<(), Failure> {
    let new = secret_key::read(&new_file)?;
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
