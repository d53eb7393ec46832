//! `migrate-to`: a whole SQLite database copied into PostgreSQL, table by table in key
//! order, reading the next batch while the last one is written; then checked.
//!
//! The copy is resumable: PostgreSQL records it (`leadtrack_import`), and running the same
//! command again after an interruption goes on from the last ids written.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use leadtrack_core::StoreResult;
use leadtrack_core::transfer::{Cell, TABLES, Table};
use leadtrack_core::vault::SecretKey;
use leadtrack_postgres::{ImportState, PgOptions, PgStore};
use leadtrack_sqlite::Export;

use crate::Failure;

/// How many leads the check compares value for value; other tables with ids get a fifth.
const SAMPLE: usize = 1000;

/// The SQLite end, shared with the blocking threads that read it.
#[derive(Clone)]
struct Source(Arc<Mutex<Export>>);

impl Source {
    /// Runs `read` on the export off the runtime's threads.
    async fn read<T: Send + 'static>(
        &self,
        read: impl FnOnce(&Export) -> StoreResult<T> + Send + 'static,
    ) -> Result<T, Failure> {
        let export = Arc::clone(&self.0);
        tokio::task::spawn_blocking(move || {
            let export = export
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            read(&export)
        })
        .await
        .map_err(|err| Failure(format!("reading the SQLite database stopped: {err}")))?
        .map_err(Failure::store)
    }

    async fn batch(
        &self,
        table: &'static Table,
        keys: Range<i64>,
    ) -> Result<Vec<Vec<Cell>>, Failure> {
        self.read(move |export| export.batch(table, keys)).await
    }
}

/// `server migrate-to --from FILE --to URL`. The secrets are copied sealed as they are:
/// PostgreSQL gets the SQLite database's key (`key`, else its own key file), which its
/// servers must then use.
pub(crate) async fn migrate_to(
    from: PathBuf,
    to: String,
    batch: usize,
    pool_size: usize,
    key: Option<SecretKey>,
) -> Result<(), Failure> {
    let span = i64::try_from(batch).unwrap_or(i64::MAX);
    let source_name = std::fs::canonicalize(&from)
        .unwrap_or_else(|_| from.clone())
        .display()
        .to_string();
    let path = from.clone();
    let export = tokio::task::spawn_blocking(move || Export::open(&path))
        .await
        .map_err(|err| Failure(format!("opening the SQLite database stopped: {err}")))?
        .map_err(Failure::store)?;
    let key = match key {
        Some(key) => key,
        None => read_key_file(&from)?,
    };
    if !export.verifies(&key).map_err(Failure::store)? {
        return Err(Failure(format!(
            "the secret key is not the one {source_name}'s secrets are sealed with; pass the key it was opened with (--secret-key-file or LEADTRACK_SECRET_KEY)"
        )));
    }
    let source = Source(Arc::new(Mutex::new(export)));
    let options = PgOptions {
        pool_size,
        ..PgOptions::default()
    };
    let target = PgStore::connect_with(&to, &key, options)
        .await
        .map_err(|err| Failure(format!("cannot use the PostgreSQL database: {err}")))?;
    let result = copy_and_check(&source, &target, &source_name, &from, span).await;
    target.close();
    result?;
    say!(
        "The secrets are sealed with the SQLite database's key: start the servers and workers on PostgreSQL with it (--secret-key-file or LEADTRACK_SECRET_KEY)."
    );
    Ok(())
}

/// The key in the SQLite database's own key file, which must exist: a database this build
/// has opened has its secrets sealed with it.
fn read_key_file(database: &Path) -> Result<SecretKey, Failure> {
    let file = leadtrack_sqlite::key_file(database);
    let text = std::fs::read_to_string(&file).map_err(|err| {
        Failure(format!(
            "cannot read {}, the key of the database's secrets ({err}); pass its key with --secret-key-file or LEADTRACK_SECRET_KEY",
            file.display()
        ))
    })?;
    SecretKey::from_base64(&text).map_err(|err| Failure(format!("{}: {err}", file.display())))
}

async fn copy_and_check(
    source: &Source,
    target: &PgStore,
    source_name: &str,
    from: &Path,
    span: i64,
) -> Result<(), Failure> {
    match target.import_state().await.map_err(Failure::store)? {
        ImportState::Empty => {
            target
                .begin_import(source_name)
                .await
                .map_err(Failure::store)?;
            say!("copying {} into PostgreSQL", from.display());
        }
        ImportState::Unfinished { source } if source == source_name => {
            say!("resuming the copy of {}", from.display());
        }
        ImportState::Unfinished { source } => {
            return Err(Failure(format!(
                "the PostgreSQL database holds an unfinished copy of {source}, not of {}; use an empty database",
                from.display()
            )));
        }
        ImportState::Finished { source } => {
            return Err(Failure(format!(
                "the PostgreSQL database already holds a finished copy of {source}; use an empty database"
            )));
        }
        ImportState::InUse => {
            return Err(Failure(
                "the PostgreSQL database is not empty; migrate-to copies into an empty database"
                    .to_owned(),
            ));
        }
    }
    for table in TABLES {
        copy_table(source, target, table, span).await?;
    }
    target.finish_import().await.map_err(Failure::store)?;
    check(source, target).await
}

/// Copies `table`: a table with ids batch by batch from where an earlier run stopped,
/// reading each batch while the one before it is written; a table without, whole.
async fn copy_table(
    source: &Source,
    target: &PgStore,
    table: &'static Table,
    span: i64,
) -> Result<(), Failure> {
    let total = source.read(move |export| export.count(table)).await?;
    if table.key.is_none() {
        let rows = source.batch(table, 0..0).await?;
        for chunk in rows.chunks(usize::try_from(span).unwrap_or(usize::MAX)) {
            target
                .import_rows(table, chunk)
                .await
                .map_err(Failure::store)?;
        }
        say!("{}: {total} rows", table.name);
        return Ok(());
    }
    let last = source.read(move |export| export.last_key(table)).await?;
    let mut next = target
        .import_resume_key(table)
        .await
        .map_err(Failure::store)?
        .max(0);
    let mut rows = source.batch(table, next..next.saturating_add(span)).await?;
    let mut written = 0_u64;
    while next <= last {
        next = next.saturating_add(span);
        let (wrote, read) = tokio::join!(
            target.import_rows(table, &rows),
            source.batch(table, next..next.saturating_add(span))
        );
        wrote.map_err(Failure::store)?;
        written += rows.len() as u64;
        rows = read?;
        if written > 0 && next <= last {
            say!("{}: {written} rows written", table.name);
        }
    }
    say!("{}: {total} rows", table.name);
    Ok(())
}

/// Checks the copy: every table has as many rows as the original, and a sample of the rows
/// of each table with ids (leads most) are the original's, value for value.
async fn check(source: &Source, target: &PgStore) -> Result<(), Failure> {
    let mut compared = 0_usize;
    for table in TABLES {
        let expected = source.read(move |export| export.count(table)).await?;
        let copied = target.import_count(table).await.map_err(Failure::store)?;
        if expected != copied {
            return Err(Failure(format!(
                "the copy of {} has {copied} rows, the original {expected}; run migrate-to again to resume",
                table.name
            )));
        }
        if table.key.is_none() {
            continue;
        }
        let last = source.read(move |export| export.last_key(table)).await?;
        let size = if table.name == "leads" {
            SAMPLE
        } else {
            SAMPLE / 5
        };
        let keys = sample(last, size);
        let wanted = keys.clone();
        let original = source
            .read(move |export| export.rows_with_keys(table, &wanted))
            .await?;
        let copy = target
            .import_rows_with_keys(table, &keys)
            .await
            .map_err(Failure::store)?;
        if original != copy {
            return Err(Failure(format!(
                "a sampled row of {} differs from the original",
                table.name
            )));
        }
        compared += original.len();
    }
    say!("checked: every table has the original's rows, and {compared} sampled rows are identical");
    Ok(())
}

/// Up to `size` keys spread evenly over `1..=last`.
fn sample(last: i64, size: usize) -> Vec<i64> {
    let size = i64::try_from(size).unwrap_or(i64::MAX).max(1);
    let step = (last / size).max(1);
    (1..=last)
        .step_by(usize::try_from(step).unwrap_or(1))
        .take(usize::try_from(size).unwrap_or(0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::sample;

    #[test]
    fn samples_spread_over_the_ids() {
        assert_eq!(sample(0, 10), Vec::<i64>::new());
        assert_eq!(sample(5, 10), [1, 2, 3, 4, 5]);
        assert_eq!(sample(100, 4), [1, 26, 51, 76]);
        assert_eq!(sample(10, 3), [1, 4, 7]);
    }
}
