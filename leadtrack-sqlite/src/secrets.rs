//! Secrets at rest: the database's check value, the sealing of values an older build kept
//! in plain text, a new key for every sealed value, and the key file a database without a
//! configured key uses.
//!
//! Which columns are sealed, and how, is [`leadtrack_core::vault`]'s.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use leadtrack_core::vault::{SEALED, SealedColumn, SecretKey, Vault, WRONG_KEY};
use leadtrack_core::{StoreError, StoreResult};
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

use crate::{Error, backup, schema};

/// The key file of a database that has no key configured: `<database>.key`.
pub fn key_file(database: &Path) -> PathBuf {
    let mut name = database.as_os_str().to_owned();
    name.push(".key");
    PathBuf::from(name)
}

/// The key in `path`, or a new one written there (readable by its owner only) when there
/// is no file. The flag says whether it was made now.
///
/// Errors: the file cannot be read or written, or does not hold a key.
pub fn load_or_create_key(path: &Path) -> Result<(SecretKey, bool), StoreError> {
    let shown = path.display();
    match std::fs::read_to_string(path) {
        Ok(text) => SecretKey::from_base64(&text)
            .map(|key| (key, false))
            .map_err(|err| StoreError::Invalid(format!("{shown}: {err}"))),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            let key = SecretKey::generate();
            write_new_key(path, &key)
                .map_err(|err| StoreError::Invalid(format!("cannot write {shown}: {err}")))?;
            Ok((key, true))
        }
        Err(err) => Err(StoreError::Invalid(format!("cannot read {shown}: {err}"))),
    }
}

/// Puts `key` in the key file `path` in place of the one it held, atomically, readable by
/// its owner only.
///
/// Errors: the file cannot be written.
pub fn replace_key_file(path: &Path, key: &SecretKey) -> StoreResult<()> {
    let mut next = path.as_os_str().to_owned();
    next.push(".new");
    let next = PathBuf::from(next);
    // A leftover of an interrupted replacement holds nothing of value.
    let _ = std::fs::remove_file(&next);
    write_new_key(&next, key)
        .and_then(|()| std::fs::rename(&next, path))
        .map_err(|err| StoreError::Invalid(format!("cannot write {}: {err}", path.display())))
}

/// Writes `key` to a file that must not exist yet, with mode 0600 from its creation on.
fn write_new_key(path: &Path, key: &SecretKey) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    writeln!(file, "{}", key.to_base64())?;
    file.sync_all()
}

/// Makes the database's secrets `vault`'s, on the writer's connection at open: checks the
/// key against the database's check value, or, on a database without one (new, or from a
/// build that kept secrets plain), seals every plain secret and keeps the check value, in
/// one transaction.
///
/// Errors: [`StoreError::Invalid`] when the key is not the database's.
pub(crate) fn prepare(conn: &mut Connection, vault: &Vault) -> Result<(), StoreError> {
    let check: Option<String> = conn
        .query_row("SELECT value FROM secret_key_check", [], |row| row.get(0))
        .optional()
        .map_err(StoreError::backend)?;
    match check {
        Some(check) if vault.verifies(&check) => Ok(()),
        Some(_) => Err(StoreError::Invalid(WRONG_KEY.to_owned())),
        None => seal_plain(conn, vault).map_err(StoreError::from),
    }
}

/// Seals what an older build kept plain.
fn seal_plain(conn: &mut Connection, vault: &Vault) -> Result<(), Error> {
    rewrite(conn, |tx| {
        for column in SEALED {
            reseal(tx, column, |plain| Ok(vault.seal(column, plain)))?;
        }
        tx.execute(
            "INSERT INTO secret_key_check (id, value) VALUES (1, ?1)",
            [vault.check_value()],
        )?;
        Ok(0)
    })
    .map(drop)
}

/// Seals every secret of the database at `path` again with `new`, and makes its check value
/// `new`'s, in one transaction; returns how many secrets were sealed again. The database
/// must be closed (no server, worker or command may have it open), and opened with `new`
/// from then on.
///
/// Errors: [`StoreError::Invalid`] when the database is open, missing, or its secrets are
/// not sealed with `old` (nothing changes then).
pub fn rotate_secret_key(path: &Path, old: &SecretKey, new: &SecretKey) -> StoreResult<usize> {
    if !path.exists() {
        return Err(StoreError::Invalid(format!(
            "no database at {}",
            path.display()
        )));
    }
    let _alone = backup::hold_alone(path, "sealing its secrets with a new key")?;
    let mut conn = Connection::open(path).map_err(StoreError::backend)?;
    schema::check_current(&conn)?;
    let (old, new) = (Vault::new(old), Vault::new(new));
    prepare(&mut conn, &old)?;
    let count = rewrite(&mut conn, |tx| {
        let mut count = 0;
        for column in SEALED {
            count += reseal(tx, column, |sealed| {
                Ok(new.seal(column, &old.open(column, sealed)?))
            })?;
        }
        tx.execute(
            "UPDATE secret_key_check SET value = ?1 WHERE id = 1",
            [new.check_value()],
        )?;
        Ok(count)
    })?;
    Ok(count)
}

/// Runs `change` in a transaction whose overwritten content is zeroed (`secure_delete`),
/// then checkpoints the WAL into the file, so no earlier copy of a secret (plain, or sealed
/// with a retired key) stays behind in either.
fn rewrite(
    conn: &mut Connection,
    change: impl FnOnce(&Connection) -> Result<usize, Error>,
) -> Result<usize, Error> {
    conn.pragma_update(None, "secure_delete", true)?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let count = change(&tx)?;
    tx.commit()?;
    conn.pragma_update(None, "secure_delete", false)?;
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    Ok(count)
}

/// Replaces every value of `column` with `change` of it; returns how many rows it changed.
fn reseal(
    conn: &Connection,
    column: SealedColumn,
    change: impl Fn(&str) -> Result<String, Error>,
) -> Result<usize, Error> {
    let keys = column.key.join(", ");
    let rows: Vec<(Vec<Value>, String)> = conn
        .prepare(&format!(
            "SELECT {keys}, {} FROM {}",
            column.column, column.table
        ))?
        .query_map([], |row| {
            let key = (0..column.key.len())
                .map(|i| row.get::<_, Value>(i))
                .collect::<Result<Vec<_>, _>>()?;
            Ok((key, row.get(column.key.len())?))
        })?
        .collect::<Result<_, _>>()?;
    let matches: Vec<String> = (1..=column.key.len())
        .map(|i| format!("{} = ?{}", column.key[i - 1], i + 1))
        .collect();
    let mut update = conn.prepare(&format!(
        "UPDATE {} SET {} = ?1 WHERE {}",
        column.table,
        column.column,
        matches.join(" AND ")
    ))?;
    for (key, value) in &rows {
        let mut params = vec![Value::Text(change(value)?)];
        params.extend(key.iter().cloned());
        update.execute(rusqlite::params_from_iter(params))?;
    }
    Ok(rows.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_file_is_made_once_readable_by_its_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = key_file(&dir.path().join("leads.db"));
        assert_eq!(path, dir.path().join("leads.db.key"));
        let (made, created) = load_or_create_key(&path).unwrap();
        assert!(created);
        let (read, created) = load_or_create_key(&path).unwrap();
        assert!(!created);
        assert_eq!(read, made);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::write(&path, "not a key").unwrap();
        let err = load_or_create_key(&path).unwrap_err();
        assert!(err.to_string().contains("leads.db.key"), "{err}");
    }
}
