//! Secrets at rest: the database's check value, the sealing of values an older build kept
//! in plain text, and a new key for every sealed value.
//!
//! Which columns are sealed, and how, is [`leadtrack_core::vault`]'s. Both changes run in
//! one transaction holding the migration lock, so servers starting together seal each
//! value once.

use deadpool_postgres::GenericClient;
use leadtrack_core::StoreError;
use leadtrack_core::vault::{SEALED, SealedColumn, Vault, WRONG_KEY};

use crate::Error;
use crate::rows::{all, one, run};
use crate::schema::MIGRATION_LOCK;

/// Makes the database's secrets `vault`'s, at connect: checks the key against the
/// database's check value, or, on a database without one (new, or from a build that kept
/// secrets plain), seals every plain secret and keeps the check value.
///
/// Errors: [`StoreError::Invalid`] when the key is not the database's.
pub(crate) async fn prepare(
    client: &mut deadpool_postgres::Object,
    vault: &Vault,
) -> Result<(), Error> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    match one(&tx, "SELECT value FROM secret_key_check", &[]).await? {
        Some(row) if vault.verifies(row.try_get(0)?) => return Ok(()),
        Some(_) => {
            return Err(Error::Store(StoreError::Invalid(WRONG_KEY.to_owned())));
        }
        None => {}
    }
    for column in SEALED {
        reseal(&tx, column, |plain| Ok(vault.seal(column, plain))).await?;
    }
    run(
        &tx,
        "INSERT INTO secret_key_check (value) VALUES ($1)",
        &[&vault.check_value()],
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Every sealed value opened with `old` and sealed again with `new`, and the check value
/// made `new`'s; returns how many values were sealed again.
///
/// Errors: the database's key is not `old`, or a value does not open with it.
pub(crate) async fn rotate(
    client: &mut deadpool_postgres::Object,
    old: &Vault,
    new: &Vault,
) -> Result<usize, Error> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    let check = one(&tx, "SELECT value FROM secret_key_check", &[]).await?;
    if !check.is_some_and(|row| row.try_get(0).is_ok_and(|check| old.verifies(check))) {
        return Err(Error::Store(StoreError::Invalid(
            "the database's secrets are not sealed with the current key".to_owned(),
        )));
    }
    let mut count = 0;
    for column in SEALED {
        count += reseal(&tx, column, |sealed| {
            Ok(new.seal(column, &old.open(column, sealed)?))
        })
        .await?;
    }
    run(
        &tx,
        "UPDATE secret_key_check SET value = $1",
        &[&new.check_value()],
    )
    .await?;
    tx.commit().await?;
    Ok(count)
}

/// Replaces every value of `column` with `change` of it, each row found by its `ctid` (the
/// rows are locked, so it does not move meanwhile); returns how many rows it changed.
async fn reseal(
    c: &impl GenericClient,
    column: SealedColumn,
    change: impl Fn(&str) -> Result<String, Error>,
) -> Result<usize, Error> {
    let (table, name) = (column.table, column.column);
    let rows = all(
        c,
        &format!("SELECT ctid::text, {name} FROM {table} FOR UPDATE"),
        &[],
    )
    .await?;
    let update = format!("UPDATE {table} SET {name} = $1 WHERE ctid = $2::text::tid");
    for row in &rows {
        let (at, value): (&str, &str) = (row.try_get(0)?, row.try_get(1)?);
        run(c, &update, &[&change(value)?, &at]).await?;
    }
    Ok(rows.len())
}
