//! Reading a whole database in the backend-neutral form of
//! [`leadtrack_core::transfer`], for moving it to another backend.
//!
//! An [`Export`] holds the database to itself (the lock file's exclusive lock: no server,
//! worker or admin command may have it open, and none can open it meanwhile), so that
//! what it reads does not change under it, and a copy interrupted and resumed reads the
//! same rows again.

use std::fs::File;
use std::path::Path;

use leadtrack_core::transfer::{Cell, Kind, Table};
use leadtrack_core::vault::{SecretKey, Vault};
use leadtrack_core::{StoreError, StoreResult};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, OptionalExtension};

use crate::{backup, schema};

/// A database open for export. Blocking: use it off an async runtime's threads.
pub struct Export {
    conn: Connection,
    _alone: File,
}

impl std::fmt::Debug for Export {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Export").finish_non_exhaustive()
    }
}

impl Export {
    /// Opens the database at `path` read-only, once nothing else has it open.
    ///
    /// Errors: [`StoreError::Invalid`] when there is no database, it is in use, or its
    /// schema is not exactly this build's (open it with a server of this build first).
    pub fn open(path: &Path) -> StoreResult<Self> {
        if !path.exists() {
            return Err(StoreError::Invalid(format!(
                "no database at {}",
                path.display()
            )));
        }
        let alone = backup::hold_alone(path, "copying it")?;
        let conn =
            Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(|err| {
                StoreError::Invalid(format!(
                    "{} is not a leadtrack database ({err})",
                    path.display()
                ))
            })?;
        crate::packed::register(&conn).map_err(StoreError::backend)?;
        schema::check_current(&conn).map_err(|err| {
            StoreError::Invalid(format!(
                "{}: {err}; open it once with `server serve` of this build to upgrade it",
                path.display()
            ))
        })?;
        Ok(Self {
            conn,
            _alone: alone,
        })
    }

    /// Whether the database's secrets are sealed with `key`, which the database they are
    /// copied to must then use.
    pub fn verifies(&self, key: &SecretKey) -> StoreResult<bool> {
        let check: Option<String> = self
            .conn
            .query_row("SELECT value FROM secret_key_check", [], |row| row.get(0))
            .optional()
            .map_err(StoreError::backend)?;
        Ok(check.is_some_and(|check| Vault::new(key).verifies(&check)))
    }

    /// How many rows `table` has.
    pub fn count(&self, table: &Table) -> StoreResult<u64> {
        let sql = format!("SELECT count(*) FROM {}", table.name);
        let n: i64 = self
            .conn
            .query_row(&sql, [], |row| row.get(0))
            .map_err(StoreError::backend)?;
        Ok(u64::try_from(n).unwrap_or_default())
    }

    /// The largest key of `table`, 0 when it is empty or has no key.
    pub fn last_key(&self, table: &Table) -> StoreResult<i64> {
        let Some(key) = table.key else {
            return Ok(0);
        };
        let sql = format!("SELECT coalesce(max({key}), 0) FROM {}", table.name);
        self.conn
            .query_row(&sql, [], |row| row.get(0))
            .map_err(StoreError::backend)
    }

    /// The rows of `table` whose key is in `keys`, in key order; for a table without a
    /// key, every row (`keys` does not apply). A range, not a count, so that rows sharing
    /// a key (a job's deliveries) are read together.
    pub fn batch(&self, table: &Table, keys: std::ops::Range<i64>) -> StoreResult<Vec<Vec<Cell>>> {
        let select = select(table);
        match table.key {
            Some(key) => {
                let sql = format!("{select} WHERE t.{key} >= ?1 AND t.{key} < ?2 ORDER BY t.{key}");
                self.rows(table, &sql, (keys.start, keys.end))
            }
            // Webhooks are listed in the order they were added, which the copy keeps.
            None if table.name == "webhooks" => {
                self.rows(table, &format!("{select} ORDER BY t.rowid"), ())
            }
            None => self.rows(table, &select, ()),
        }
    }

    /// The rows of `table` whose key is one of `keys`, in key order (for checking a copy).
    /// Errors: [`StoreError::Invalid`] for a table without a key.
    pub fn rows_with_keys(&self, table: &Table, keys: &[i64]) -> StoreResult<Vec<Vec<Cell>>> {
        let key = table.key.ok_or_else(|| {
            StoreError::Invalid(format!("{} has no key to look rows up by", table.name))
        })?;
        let list = keys
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let sql = format!(
            "{} WHERE t.{key} IN ({list}) ORDER BY t.{key}",
            select(table)
        );
        self.rows(table, &sql, ())
    }

    fn rows(
        &self,
        table: &Table,
        sql: &str,
        params: impl rusqlite::Params,
    ) -> StoreResult<Vec<Vec<Cell>>> {
        let mut statement = self.conn.prepare(sql).map_err(StoreError::backend)?;
        let mut rows = statement.query(params).map_err(StoreError::backend)?;
        let mut read = Vec::new();
        while let Some(row) = rows.next().map_err(StoreError::backend)? {
            let mut cells = Vec::with_capacity(table.columns.len());
            for (at, column) in table.columns.iter().enumerate() {
                let value = row.get_ref(at).map_err(StoreError::backend)?;
                cells.push(cell(table, column.name, column.kind, value)?);
            }
            read.push(cells);
        }
        Ok(read)
    }
}

/// The `SELECT` of `table`'s columns from this schema (aliased `t`): tables whose rows do
/// not hold their project take it from their parent.
fn select(table: &Table) -> String {
    let (from, project) = match table.name {
        "deliveries" | "attempts" => (
            format!("{} t JOIN jobs p ON p.id = t.job_id", table.name),
            Some("p.project_id"),
        ),
        "webhook_events" => (
            "webhook_events t JOIN webhooks p ON p.id = t.webhook_id".to_owned(),
            Some("p.project_id"),
        ),
        name => (format!("{name} t"), None),
    };
    let columns = table
        .columns
        .iter()
        .map(|column| match (table.name, column.name, project) {
            // Stored packed (`packed.rs`), moved as the JSON it holds.
            ("leads", "data", _) => "lead_json(t.data)".to_owned(),
            (_, "project_id", Some(parent)) => parent.to_owned(),
            (_, name, _) => format!("t.{name}"),
        })
        .collect::<Vec<_>>()
        .join(", ");
    format!("SELECT {columns} FROM {from}")
}

/// The cell of a value SQLite holds in a column of `kind`.
fn cell(table: &Table, column: &str, kind: Kind, value: ValueRef<'_>) -> StoreResult<Cell> {
    let corrupt = || {
        StoreError::Invalid(format!(
            "{}.{column} holds a value that is not {kind:?}",
            table.name
        ))
    };
    Ok(match (kind, value) {
        (_, ValueRef::Null) => Cell::Null,
        (Kind::Int | Kind::Int32, ValueRef::Integer(n)) => Cell::Int(n),
        (Kind::Bool, ValueRef::Integer(n)) => Cell::Bool(n != 0),
        (Kind::Text, ValueRef::Text(text)) => {
            Cell::Text(String::from_utf8(text.to_vec()).map_err(|_| corrupt())?)
        }
        (Kind::Bytes, ValueRef::Blob(bytes)) => Cell::Bytes(bytes.to_vec()),
        (Kind::Uuid, ValueRef::Text(text)) => Cell::Uuid(
            std::str::from_utf8(text)
                .ok()
                .and_then(|text| uuid::Uuid::parse_str(text).ok())
                .ok_or_else(corrupt)?,
        ),
        _ => return Err(corrupt()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use leadtrack_core::transfer::TABLES;

    /// A lead's data, stored packed, leaves as the JSON it holds, as every backend reads it.
    #[test]
    fn a_leads_packed_data_is_exported_as_its_json() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("leads.db");
        let json = r#"{"userData":{"email":"a@x.io"}}"#;
        {
            let mut conn = Connection::open(&path).unwrap();
            schema::migrate(&mut conn).unwrap();
            conn.execute_batch(&format!(
                r#"INSERT INTO projects (id, public_id, name, currency, lost_mapping, created_at)
                       VALUES (1, 'acme', 'Acme', 'EUR', '{{}}', 0);
                   INSERT INTO leads (id, project_id, status, created_at, updated_at, data,
                       search_text, has_gclid, has_cid, has_fbp, has_fbc)
                   VALUES (7, 1, 'open', 0, 0, lead_pack('{json}'), '', 0, 0, 0, 0);"#
            ))
            .unwrap();
        }
        let export = Export::open(&path).unwrap();
        let leads = TABLES.iter().find(|table| table.name == "leads").unwrap();
        let rows = export.batch(leads, 0..10).unwrap();
        let data = leads.position("data").unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0][data], Cell::Text(json.to_owned()));
        assert_eq!(export.rows_with_keys(leads, &[7]).unwrap(), rows);
    }
}
