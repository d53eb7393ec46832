//! A listing read in batches, each strictly after the last lead of the one before in the
//! listing's order (keyset pagination): the inbox's exports.

use leadtrack_core::request::query::{SortDirection, SortField, SortKey};
use leadtrack_core::request::{Cursor, LeadQuery};
use leadtrack_core::store::StoreError;
use leadtrack_core::time::to_millis;
use leadtrack_core::types::ProjectId;
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};

use crate::clauses::{direction, filter, sort_key};
use crate::rows::{Error, LEAD_COLUMNS, LeadRecord};

/// A batch of the project's leads matching `query`, strictly after `after` in its order
/// (keyset pagination). The order is [`order_by`](crate::clauses::order_by)'s: the leads
/// with a sort key first, then those without one; each part is read from the cursor on
/// through the sort's index (a range on the key, ties on the id), so a batch costs the
/// same wherever it starts.
pub(crate) fn export(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
    after: Option<&Cursor>,
    limit: u32,
) -> Result<Vec<LeadRecord>, Error> {
    let (filter, params) = filter(project, query, false);
    let cursor = match after {
        None => None,
        Some(cursor) => Some((cursor_key(cursor, query.sort.field)?, cursor.id.0)),
    };
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let read = |sql: String, params: Vec<SqlValue>| -> Result<Vec<LeadRecord>, Error> {
        conn.prepare_cached(&sql)?
            .query_and_then(params_from_iter(&params), LeadRecord::of)?
            .collect()
    };
    let mut leads = Vec::new();
    // The part with keys, unless the cursor is already past it.
    if !matches!(cursor, Some((SqlValue::Null, _))) {
        let mut params = params.clone();
        if let Some((value, id)) = &cursor {
            params.extend([value.clone(), value.clone(), SqlValue::Integer(*id)]);
        }
        params.push(SqlValue::Integer(limit as i64));
        leads = read(export_sql(&filter, query, true, cursor.is_some()), params)?;
    }
    // Then the part without: only text and price sorts have one.
    let never_null = matches!(query.sort.field, SortField::CreatedAt | SortField::Status);
    if !never_null && leads.len() < limit {
        let mut params = params;
        let in_part = matches!(cursor, Some((SqlValue::Null, _)));
        if let Some((SqlValue::Null, id)) = &cursor {
            params.push(SqlValue::Integer(*id));
        }
        params.push(SqlValue::Integer((limit - leads.len()) as i64));
        leads.extend(read(export_sql(&filter, query, false, in_part), params)?);
    }
    Ok(leads)
}

/// The SQL of one part of an export batch: the leads with a sort key (`keyed`) or without,
/// after the cursor's `(key, id)` or id when `after`; its last parameter is the limit.
fn export_sql(filter: &str, query: &LeadQuery, keyed: bool, after: bool) -> String {
    let (column, key) = sort_key(query.sort.field);
    let direction = direction(query);
    let beyond = match query.sort.direction {
        SortDirection::Asc => ">",
        SortDirection::Desc => "<",
    };
    let mut sql = format!("SELECT {LEAD_COLUMNS} FROM leads WHERE {filter}");
    if keyed {
        sql.push_str(&format!(" AND {column} IS NOT NULL"));
        if after {
            // Not the row value `(key, id) > (?, ?)`: SQLite seeks an index by a row value
            // only without a COLLATE, and the text keys have one.
            sql.push_str(&format!(
                " AND {key} {beyond}= ? AND ({key} {beyond} ? OR id {beyond} ?)"
            ));
        }
        sql.push_str(&format!(
            " ORDER BY {key} {direction}, id {direction} LIMIT ?"
        ));
    } else {
        sql.push_str(&format!(" AND {column} IS NULL"));
        if after {
            sql.push_str(&format!(" AND id {beyond} ?"));
        }
        sql.push_str(&format!(" ORDER BY id {direction} LIMIT ?"));
    }
    sql
}

/// A cursor's key as the sort's column holds it (`NULL` for a lead without one).
fn cursor_key(cursor: &Cursor, field: SortField) -> Result<SqlValue, Error> {
    let text = |value: &Option<String>| value.clone().map_or(SqlValue::Null, SqlValue::Text);
    Ok(match (&cursor.key, field) {
        (SortKey::CreatedAt(at), SortField::CreatedAt) => SqlValue::Integer(to_millis(at)),
        (SortKey::Text(value), SortField::FirstName | SortField::LastName | SortField::Email) => {
            text(value)
        }
        (SortKey::Price(price), SortField::Price) => {
            price.map_or(SqlValue::Null, SqlValue::Integer)
        }
        (SortKey::Status(status), SortField::Status) => SqlValue::Text(status.as_ref().to_owned()),
        _ => {
            return Err(Error::Store(StoreError::Invalid(
                "the cursor is not of the query's sort field".to_owned(),
            )));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::plan_of;
    use chrono::Utc;
    use leadtrack_core::request::query::Sort;
    use leadtrack_core::types::{LeadId, LeadStatus};

    /// The inbox's exports (its tab, newest first; by name) read each batch through an
    /// index from the cursor on: no batch sorts or skips the leads before it.
    #[test]
    fn export_batches_seek_through_an_index() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::schema::migrate(&mut conn).unwrap();
        let after = |key| Cursor { id: LeadId(7), key };
        let cases = [
            (LeadQuery::default(), after(SortKey::CreatedAt(Utc::now()))),
            (
                LeadQuery {
                    status: Some(vec![LeadStatus::Open]),
                    ..LeadQuery::default()
                },
                after(SortKey::CreatedAt(Utc::now())),
            ),
            (
                LeadQuery {
                    sort: Sort {
                        field: SortField::FirstName,
                        direction: SortDirection::Asc,
                    },
                    ..LeadQuery::default()
                },
                after(SortKey::Text(Some("ada".into()))),
            ),
        ];
        for (query, cursor) in cases {
            let (filter, mut params) = filter(ProjectId(1), &query, false);
            let key = cursor_key(&cursor, query.sort.field).unwrap();
            params.extend([key.clone(), key, SqlValue::Integer(7), SqlValue::Integer(3)]);
            let sql = export_sql(&filter, &query, true, true);
            let plan = crate::rows::without_assignee(plan_of(&conn, &sql, &params));
            assert_eq!(plan.len(), 1, "{query:?}: {plan:?}");
            assert!(
                plan[0].starts_with("SEARCH leads USING INDEX")
                    && plan[0].contains("(project_id=?")
                    && (plan[0].contains("<?") || plan[0].contains(">?")),
                "{query:?}: {plan:?}"
            );
        }
    }
}
