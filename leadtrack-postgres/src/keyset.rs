//! Exports read in batches: keyset pagination along a listing's order.

use deadpool_postgres::GenericClient;
use leadtrack_core::lead::StoredLead;
use leadtrack_core::request::query::{SortDirection, SortField, SortKey};
use leadtrack_core::request::{Cursor, LeadQuery};
use leadtrack_core::store::StoreError;
use leadtrack_core::time::to_millis;
use leadtrack_core::types::ProjectId;

use crate::Error;
use crate::listing::{Table, direction, filter, nocase, sort_key};
use crate::rows::{self, LEAD_COLUMNS};

/// A cursor's key, as the sort's column holds it (a lead without one has none).
enum CursorKey {
    /// A time in milliseconds, or a price.
    Integer(i64),
    /// A text, or a status's name.
    Text(String),
}

/// A cursor's key for a sort by `field`; `None` for a lead without one, which stands in
/// the part of the order after the leads with one.
fn cursor_key(cursor: &Cursor, field: SortField) -> Result<Option<CursorKey>, Error> {
    let invalid = |message: &str| Error::Store(StoreError::Invalid(message.to_owned()));
    Ok(match (&cursor.key, field) {
        (SortKey::CreatedAt(at), SortField::CreatedAt) => Some(CursorKey::Integer(to_millis(at))),
        (SortKey::Text(value), SortField::FirstName | SortField::LastName | SortField::Email) => {
            match value {
                None => None,
                // No lead's text holds a NUL (PostgreSQL's text cannot): the cursor is not
                // after one of them.
                Some(value) if value.contains('\0') => {
                    return Err(invalid("the cursor's key holds a NUL character"));
                }
                Some(value) => Some(CursorKey::Text(value.clone())),
            }
        }
        (SortKey::Price(price), SortField::Price) => price.map(CursorKey::Integer),
        (SortKey::Status(status), SortField::Status) => {
            Some(CursorKey::Text(status.as_ref().to_owned()))
        }
        _ => return Err(invalid("the cursor is not of the query's sort field")),
    })
}

/// A batch of the project's leads matching `query`, strictly after `after` in its order
/// (keyset pagination); `limit` and `page` of the query do not apply. The order is
/// the listing's ([`sort_key`], then the id): the leads with a sort key first, then those without one; each part is
/// read from the cursor on through the sort's index (a row comparison on the key and the
/// id), so a batch costs the same wherever it starts.
pub(crate) async fn export(
    c: &impl GenericClient,
    project: ProjectId,
    query: &LeadQuery,
    after: Option<&Cursor>,
    limit: u32,
) -> Result<Vec<StoredLead>, Error> {
    let cursor = match after {
        None => None,
        Some(cursor) => Some((cursor_key(cursor, query.sort.field)?, cursor.id.0)),
    };
    let (key, nullable) = sort_key(query.sort.field);
    let direction = direction(query);
    let beyond = match query.sort.direction {
        SortDirection::Asc => ">",
        SortDirection::Desc => "<",
    };
    let wanted = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut leads = Vec::new();
    // The part with keys, unless the cursor is already past it.
    if !matches!(cursor, Some((None, _))) {
        let mut statement = filter(project, query, Table::Leads);
        if nullable {
            statement.push(&format!(" AND {key} IS NOT NULL"));
        }
        if let Some((Some(value), id)) = &cursor {
            let value = match value {
                CursorKey::Integer(value) => statement.bind(*value),
                // Folded as the column's key is (an email's key already is).
                CursorKey::Text(value) => nocase(&statement.bind(value.clone())),
            };
            let id = statement.bind(*id);
            statement.push(&format!(" AND ({key}, id) {beyond} ({value}, {id})"));
        }
        let limit = statement.bind(i64::from(limit));
        statement.sql = format!(
            "SELECT {LEAD_COLUMNS} FROM leads WHERE {} ORDER BY {key} {direction}, id {direction} LIMIT {limit}",
            statement.sql
        );
        for row in statement.rows(c).await? {
            leads.push(rows::lead(&row)?);
        }
    }
    // Then the part without: only text and price sorts have one.
    if nullable && leads.len() < wanted {
        let mut statement = filter(project, query, Table::Leads);
        statement.push(&format!(" AND {key} IS NULL"));
        if let Some((None, id)) = &cursor {
            let id = statement.bind(*id);
            statement.push(&format!(" AND id {beyond} {id}"));
        }
        let rest = i64::try_from(wanted - leads.len()).unwrap_or(i64::MAX);
        let limit = statement.bind(rest);
        statement.sql = format!(
            "SELECT {LEAD_COLUMNS} FROM leads WHERE {} ORDER BY id {direction} LIMIT {limit}",
            statement.sql
        );
        for row in statement.rows(c).await? {
            leads.push(rows::lead(&row)?);
        }
    }
    Ok(leads)
}
