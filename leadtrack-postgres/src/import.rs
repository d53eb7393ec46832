//! Writing a whole database given in the backend-neutral form of
//! [`leadtrack_core::transfer`]: the PostgreSQL end of `server migrate-to`.
//!
//! Rows keep their ids (`OVERRIDING SYSTEM VALUE`), and a row already there is left as it
//! is (`ON CONFLICT DO NOTHING`), so a copy that stopped half-way is resumed by writing
//! again from the last key it reached. The table `leadtrack_import` records the copy: a
//! database that has data but no unfinished copy of the same source is never written to.

use chrono::Utc;
use leadtrack_core::transfer::{Cell, Kind, TABLES, Table};
use leadtrack_core::{StoreError, StoreResult};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::{Error, PgStore};

/// Where a copy into the database stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImportState {
    /// No copy, and no data: a copy may begin.
    Empty,
    /// A copy of `source` began and did not finish: it may be resumed.
    Unfinished {
        /// What was being copied.
        source: String,
    },
    /// A copy of `source` finished.
    Finished {
        /// What was copied.
        source: String,
    },
    /// The database holds data of its own: nothing may be copied into it.
    InUse,
}

/// The tables whose ids are identity columns: written as given, and their sequences moved
/// past the largest afterwards.
const IDENTITY: [&str; 16] = [
    "projects",
    "api_keys",
    "users",
    "login_failures",
    "reset_requests",
    "leads",
    "lead_events",
    "jobs",
    "attempts",
    "webhook_events",
    "saved_views",
    "invitations",
    "project_events",
    "lead_comments",
    "alert_queue",
    "lead_fetches",
];

/// A value to bind for a cell of a column of `kind`.
fn bind(kind: Kind, cell: &Cell) -> Result<Box<dyn ToSql + Sync + Send>, Error> {
    let mismatch = || Error::Store(StoreError::Invalid(format!("{cell:?} is not {kind:?}")));
    Ok(match (kind, cell) {
        (Kind::Int, Cell::Null) => Box::new(None::<i64>),
        (Kind::Int32, Cell::Null) => Box::new(None::<i32>),
        (Kind::Bool, Cell::Null) => Box::new(None::<bool>),
        (Kind::Text, Cell::Null) => Box::new(None::<String>),
        (Kind::Bytes, Cell::Null) => Box::new(None::<Vec<u8>>),
        (Kind::Uuid, Cell::Null) => Box::new(None::<Uuid>),
        (Kind::Int, Cell::Int(n)) => Box::new(*n),
        (Kind::Int32, Cell::Int(n)) => Box::new(i32::try_from(*n).map_err(|_| mismatch())?),
        (Kind::Bool, Cell::Bool(b)) => Box::new(*b),
        (Kind::Text, Cell::Text(text)) => Box::new(text.clone()),
        (Kind::Bytes, Cell::Bytes(bytes)) => Box::new(bytes.clone()),
        (Kind::Uuid, Cell::Uuid(id)) => Box::new(*id),
        _ => return Err(mismatch()),
    })
}

/// The cell of column `at` of `row`, of `kind`.
fn cell(row: &Row, at: usize, kind: Kind) -> Result<Cell, Error> {
    Ok(match kind {
        Kind::Int => row.try_get::<_, Option<i64>>(at)?.map(Cell::Int),
        Kind::Int32 => row
            .try_get::<_, Option<i32>>(at)?
            .map(|n| Cell::Int(n.into())),
        Kind::Bool => row.try_get::<_, Option<bool>>(at)?.map(Cell::Bool),
        Kind::Text => row.try_get::<_, Option<String>>(at)?.map(Cell::Text),
        Kind::Bytes => row.try_get::<_, Option<Vec<u8>>>(at)?.map(Cell::Bytes),
        Kind::Uuid => row.try_get::<_, Option<Uuid>>(at)?.map(Cell::Uuid),
    }
    .unwrap_or(Cell::Null))
}

/// The column list of `table`.
fn columns(table: &Table) -> String {
    table
        .columns
        .iter()
        .map(|column| column.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl PgStore {
    /// Where a copy into this database stands.
    pub async fn import_state(&self) -> StoreResult<ImportState> {
        let client = self.client().await?;
        let run = async {
            if let Some(row) = client
                .query_opt(
                    "SELECT source, finished_at IS NOT NULL FROM leadtrack_import",
                    &[],
                )
                .await?
            {
                let source: String = row.try_get(0)?;
                return Ok(if row.try_get(1)? {
                    ImportState::Finished { source }
                } else {
                    ImportState::Unfinished { source }
                });
            }
            for table in TABLES {
                let sql = format!("SELECT EXISTS (SELECT 1 FROM {})", table.name);
                if client.query_one(&sql, &[]).await?.try_get(0)? {
                    return Ok(ImportState::InUse);
                }
            }
            Ok::<_, Error>(ImportState::Empty)
        };
        Ok(run.await?)
    }

    /// Records that a copy of `source` begins. Errors: [`StoreError::Invalid`] unless the
    /// database is [`ImportState::Empty`].
    pub async fn begin_import(&self, source: &str) -> StoreResult<()> {
        if self.import_state().await? != ImportState::Empty {
            return Err(StoreError::Invalid(
                "the PostgreSQL database is not empty".to_owned(),
            ));
        }
        let client = self.client().await?;
        client
            .execute(
                "INSERT INTO leadtrack_import (source, started_at) VALUES ($1, $2)",
                &[&source, &Utc::now().timestamp_millis()],
            )
            .await
            .map_err(Error::from)?;
        Ok(())
    }

    /// The key a copy of `table` resumes from: its largest key written, whose rows are
    /// written again (those there are kept); 0 for a table without a key, written whole.
    pub async fn import_resume_key(&self, table: &Table) -> StoreResult<i64> {
        let Some(key) = table.key else {
            return Ok(0);
        };
        let client = self.client().await?;
        let sql = format!("SELECT coalesce(max({key}), 0) FROM {}", table.name);
        let row = client.query_one(&sql, &[]).await.map_err(Error::from)?;
        Ok(row.try_get(0).map_err(Error::from)?)
    }

    /// Writes `rows` of `table` in one transaction, keeping rows already there.
    pub async fn import_rows(&self, table: &Table, rows: &[Vec<Cell>]) -> StoreResult<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let width = table.columns.len();
        let mut values: Vec<Box<dyn ToSql + Sync + Send>> = Vec::with_capacity(rows.len() * width);
        let mut tuples = Vec::with_capacity(rows.len());
        for row in rows {
            if row.len() != width {
                return Err(StoreError::Invalid(format!(
                    "a row of {} has {} values, not {width}",
                    table.name,
                    row.len()
                )));
            }
            let first = values.len();
            for (column, cell) in table.columns.iter().zip(row) {
                values.push(bind(column.kind, cell)?);
            }
            let placeholders = (first + 1..=first + width)
                .map(|n| format!("${n}"))
                .collect::<Vec<_>>()
                .join(", ");
            tuples.push(format!("({placeholders})"));
        }
        let overriding = if IDENTITY.contains(&table.name) {
            " OVERRIDING SYSTEM VALUE"
        } else {
            ""
        };
        let sql = format!(
            "INSERT INTO {} ({}){overriding} VALUES {} ON CONFLICT DO NOTHING",
            table.name,
            columns(table),
            tuples.join(", ")
        );
        let params: Vec<&(dyn ToSql + Sync)> = values
            .iter()
            .map(|value| value.as_ref() as &(dyn ToSql + Sync))
            .collect();
        let mut client = self.client().await?;
        let run = async {
            let tx = client.transaction().await?;
            tx.execute(&sql, &params).await?;
            tx.commit().await?;
            Ok::<_, Error>(())
        };
        Ok(run.await?)
    }

    /// Ends a copy: the id sequences move past the largest ids written, so that new rows
    /// get new ids, the copied leads are counted (so that totals read the kept counts
    /// alone from the start), and the copy is recorded as finished.
    pub async fn finish_import(&self) -> StoreResult<()> {
        let client = self.client().await?;
        let run = async {
            for table in IDENTITY {
                let sql = format!(
                    "SELECT setval(pg_get_serial_sequence('{table}', 'id'),
                         coalesce((SELECT max(id) FROM {table}), 0) + 1, false)"
                );
                client.query_one(&sql, &[]).await?;
            }
            crate::derived::count_all(&client).await?;
            client
                .execute(
                    "UPDATE leadtrack_import SET finished_at = $1",
                    &[&Utc::now().timestamp_millis()],
                )
                .await?;
            Ok::<_, Error>(())
        };
        Ok(run.await?)
    }

    /// How many rows `table` has.
    pub async fn import_count(&self, table: &Table) -> StoreResult<u64> {
        let client = self.client().await?;
        let sql = format!("SELECT count(*) FROM {}", table.name);
        let row = client.query_one(&sql, &[]).await.map_err(Error::from)?;
        let n: i64 = row.try_get(0).map_err(Error::from)?;
        Ok(u64::try_from(n).unwrap_or_default())
    }

    /// The rows of `table` whose key is one of `keys`, in key order (for checking a copy).
    /// Errors: [`StoreError::Invalid`] for a table without a key.
    pub async fn import_rows_with_keys(
        &self,
        table: &Table,
        keys: &[i64],
    ) -> StoreResult<Vec<Vec<Cell>>> {
        let key = table.key.ok_or_else(|| {
            StoreError::Invalid(format!("{} has no key to look rows up by", table.name))
        })?;
        let client = self.client().await?;
        let sql = format!(
            "SELECT {} FROM {} WHERE {key} = ANY($1) ORDER BY {key}",
            columns(table),
            table.name
        );
        let run = async {
            client
                .query(&sql, &[&keys])
                .await?
                .iter()
                .map(|row| {
                    table
                        .columns
                        .iter()
                        .enumerate()
                        .map(|(at, column)| cell(row, at, column.kind))
                        .collect::<Result<Vec<_>, _>>()
                })
                .collect::<Result<Vec<_>, Error>>()
        };
        Ok(run.await?)
    }
}
