//! Listing a project's leads: the filters, the trigram search, sorts, pages, the counts of
//! the inbox's tabs, and exports read in batches.

use leadtrack_core::lead::{LeadPage, StoredLead};
use leadtrack_core::matching;
use leadtrack_core::request::query::{SortDirection, SortField, SortKey};
use leadtrack_core::request::{Cursor, LeadQuery};
use leadtrack_core::store::StoreError;
use leadtrack_core::time::to_millis;
use leadtrack_core::types::{LeadStatus, ProjectId};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, params_from_iter};
use strum::VariantArray;

use crate::rows::{self, Error, LEAD_COLUMNS};

/// A `search` term as looked for in [`search_text`].
pub(crate) fn search_term(term: &str) -> String {
    matching::search_term(term).replace(['\n', '\r'], " ")
}

/// The counts per status of the leads matching `query` but for its status: from the kept
/// counts when nothing else filters, else in one grouped pass.
pub(crate) fn status_counts(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
) -> Result<Vec<(LeadStatus, u64)>, Error> {
    let any_status = LeadQuery {
        status: None,
        ..query.clone()
    };
    let counted: Vec<(String, i64)> = if any_status.is_unfiltered() {
        conn.prepare_cached("SELECT status, total FROM lead_status_counts WHERE project_id = ?1")?
            .query_map([project.0], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<Result<_, _>>()?
    } else {
        let (filter, params) = filter(conn, project, &any_status)?;
        conn.prepare_cached(&format!(
            "SELECT status, count(*) FROM leads WHERE {filter} GROUP BY status"
        ))?
        .query_map(params_from_iter(&params), |row| {
            Ok((row.get(0)?, row.get(1)?))
        })?
        .collect::<Result<_, _>>()?
    };
    Ok(LeadStatus::VARIANTS
        .iter()
        .map(|status| {
            let total = counted
                .iter()
                .find(|(name, _)| name == status.as_ref())
                .map_or(0, |(_, total)| *total);
            (*status, u64::try_from(total).unwrap_or_default())
        })
        .collect())
}

/// A page of the project's leads matching `query`, and how many match in all.
pub(crate) fn list(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
) -> Result<LeadPage, Error> {
    let (filter, mut params) = filter(conn, project, query)?;
    let total: i64 = if query.is_unfiltered() {
        conn.prepare_cached("SELECT total FROM lead_counts WHERE project_id = ?1")?
            .query_row([project.0], |row| row.get(0))
            .optional()?
            .unwrap_or(0)
    } else if let Some(statuses) = query.only_statuses() {
        let mut count = conn.prepare_cached(
            "SELECT total FROM lead_status_counts WHERE project_id = ?1 AND status = ?2",
        )?;
        let mut counted: Vec<LeadStatus> = statuses.to_vec();
        counted.sort_unstable_by_key(|status| status.as_ref().to_owned());
        counted.dedup();
        let mut total = 0;
        for status in counted {
            total += count
                .query_row((project.0, status.as_ref()), |row| row.get::<_, i64>(0))
                .optional()?
                .unwrap_or(0);
        }
        total
    } else {
        conn.prepare_cached(&format!("SELECT count(*) FROM leads WHERE {filter}"))?
            .query_row(params_from_iter(&params), |row| row.get(0))?
    };
    let total = u64::try_from(total).unwrap_or_default();
    if query.offset() >= total {
        return Ok(LeadPage {
            leads: Vec::new(),
            total,
        });
    }
    params.push(SqlValue::Integer(i64::from(query.limit)));
    params.push(SqlValue::Integer(
        i64::try_from(query.offset()).unwrap_or(i64::MAX),
    ));
    let sql = format!(
        "SELECT {LEAD_COLUMNS} FROM leads WHERE {filter} ORDER BY {} LIMIT ? OFFSET ?",
        order_by(query)
    );
    let leads = conn
        .prepare_cached(&sql)?
        .query_and_then(params_from_iter(&params), rows::lead)?
        .collect::<Result<_, _>>()?;
    Ok(LeadPage { leads, total })
}

/// How many of a search term's trigrams the index is asked for: the rarest few narrow the
/// candidates almost as well as all of them, at a fraction of the cost.
const SEARCH_TRIGRAMS: usize = 3;

/// How far the leads holding a trigram are counted when picking the rarest: enough to tell
/// a rare trigram from a common one, never a long read.
const TRIGRAM_COUNT_CAP: i64 = 1_000;

/// The trigram index's query for a search term of three characters or more: its rarest
/// trigrams (counted up to [`TRIGRAM_COUNT_CAP`] leads each), all required. A phrase of
/// every trigram would read the long lists of the common ones (`lea`, `@ex`, `com`);
/// `instr` then keeps exactly the leads whose text holds the whole term.
fn search_match(conn: &Connection, term: &str) -> Result<Option<String>, Error> {
    let chars: Vec<char> = term.chars().collect();
    // FTS5 reads its query as a C string: a NUL ends it mid-phrase (a syntax error), so
    // trigrams holding one are left to `instr`, which compares bytes and finds them.
    let mut trigrams: Vec<String> = chars
        .windows(3)
        .filter(|w| !w.contains(&'\0'))
        .map(|w| w.iter().collect())
        .collect();
    if trigrams.is_empty() {
        return Ok(None);
    }
    trigrams.sort_unstable();
    trigrams.dedup();
    let mut count = conn.prepare_cached(
        "SELECT count(*) FROM (SELECT 1 FROM leads_search WHERE leads_search MATCH ?1 LIMIT ?2)",
    )?;
    let mut counted = Vec::with_capacity(trigrams.len());
    for trigram in trigrams {
        let quoted = format!("\"{}\"", trigram.replace('"', "\"\""));
        let leads: i64 = count.query_row((&quoted, TRIGRAM_COUNT_CAP), |row| row.get(0))?;
        counted.push((leads, trigram));
    }
    counted.sort_unstable();
    Ok(Some(
        counted
            .iter()
            .take(SEARCH_TRIGRAMS)
            .map(|(_, trigram)| format!("\"{}\"", trigram.replace('"', "\"\"")))
            .collect::<Vec<_>>()
            .join(" AND "),
    ))
}

/// The WHERE clause of a listing and its parameters. Always starts with the project, so
/// every plan is an index search within it.
pub(crate) fn filter(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
) -> Result<(String, Vec<SqlValue>), Error> {
    // A search of three characters or more is looked up in the trigram index, and the
    // leads it finds are read by id: the other columns are then only checked (a `+` keeps
    // SQLite from walking, say, every open lead of the project to test each one against
    // the search's few).
    let term = query.search.as_deref().map(search_term);
    let trigrams = match &term {
        Some(term) if term.chars().count() >= 3 => search_match(conn, term)?,
        _ => None,
    };
    let by_search = trigrams.is_some();
    let column = |name: &str| {
        if by_search {
            format!("+{name}")
        } else {
            name.to_owned()
        }
    };
    let mut sql = format!("{} = ?", column("project_id"));
    let mut params = vec![SqlValue::Integer(project.0)];
    let mut equals = |sql: &mut String, name: &str, value: Option<String>| {
        match value {
            Some(value) => {
                sql.push_str(&format!(" AND {} = ?", column(name)));
                params.push(SqlValue::Text(value));
            }
            // A filter value that normalises to nothing matches nothing.
            None => sql.push_str(" AND 0"),
        }
    };
    if let Some(statuses) = &query.status {
        if statuses.is_empty() {
            sql.push_str(" AND 0");
        } else {
            let list: Vec<String> = statuses
                .iter()
                .map(|s| format!("'{}'", s.as_ref()))
                .collect();
            sql.push_str(&format!(
                " AND {} IN ({})",
                column("status"),
                list.join(", ")
            ));
        }
    }
    if let Some(form_name) = &query.form_name {
        equals(&mut sql, "form_name", Some(form_name.clone()));
    }
    if let Some(id) = &query.unique_identifier {
        equals(&mut sql, "unique_identifier", Some(id.clone()));
    }
    if let Some(email) = &query.email {
        equals(&mut sql, "email_key", matching::email_key(email));
    }
    if let Some(phone) = &query.phone {
        equals(&mut sql, "phone_key", matching::phone_key(phone));
    }
    if let Some(from) = &query.created_from {
        sql.push_str(&format!(" AND {} >= ?", column("created_at")));
        params.push(SqlValue::Integer(to_millis(from)));
    }
    if let Some(to) = &query.created_to {
        sql.push_str(&format!(" AND {} <= ?", column("created_at")));
        params.push(SqlValue::Integer(to_millis(to)));
    }
    if let Some(term) = term {
        // `instr` keeps exactly the leads a scan would find.
        if let Some(trigrams) = trigrams {
            sql.push_str(" AND id IN (SELECT rowid FROM leads_search WHERE leads_search MATCH ?)");
            params.push(SqlValue::Text(trigrams));
        }
        sql.push_str(" AND instr(search_text, ?) > 0");
        params.push(SqlValue::Text(term));
    }
    for (name, exists) in [
        ("has_gclid", query.gclid_exists),
        ("has_cid", query.cid_exists),
        ("has_fbp", query.fbp_exists),
        ("has_fbc", query.fbc_exists),
        ("has_msclkid", query.msclkid_exists),
        ("has_li_fat_id", query.li_fat_id_exists),
    ] {
        if let Some(exists) = exists {
            sql.push_str(&format!(" AND {} = {}", column(name), i32::from(exists)));
        }
    }
    Ok((sql, params))
}

/// A sort field's column, and its key as listings sort by it (text sorts ignore ASCII
/// case, as their indexes do).
fn sort_key(field: SortField) -> (&'static str, &'static str) {
    match field {
        SortField::CreatedAt => ("created_at", "created_at"),
        SortField::FirstName => ("first_name", "first_name COLLATE NOCASE"),
        SortField::LastName => ("last_name", "last_name COLLATE NOCASE"),
        SortField::Email => ("email", "email COLLATE NOCASE"),
        SortField::Price => ("price", "price"),
        SortField::Status => ("status", "status"),
    }
}

fn direction(query: &LeadQuery) -> &'static str {
    match query.sort.direction {
        SortDirection::Asc => "ASC",
        SortDirection::Desc => "DESC",
    }
}

/// The ORDER BY of a listing: the sort key with nulls last, then the id, both in the
/// requested direction.
pub(crate) fn order_by(query: &LeadQuery) -> String {
    let (_, key) = sort_key(query.sort.field);
    let direction = direction(query);
    format!("{key} {direction} NULLS LAST, id {direction}")
}

/// A batch of the project's leads matching `query`, strictly after `after` in its order
/// (keyset pagination). The order is [`order_by`]'s: the leads with a sort key first, then
/// those without one; each part is read from the cursor on through the sort's index (a
/// range on the key, ties on the id), so a batch costs the same wherever it starts.
pub(crate) fn export(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
    after: Option<&Cursor>,
    limit: u32,
) -> Result<Vec<StoredLead>, Error> {
    let (filter, params) = filter(conn, project, query)?;
    let cursor = match after {
        None => None,
        Some(cursor) => Some((cursor_key(cursor, query.sort.field)?, cursor.id.0)),
    };
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let read = |sql: String, params: Vec<SqlValue>| -> Result<Vec<StoredLead>, Error> {
        conn.prepare_cached(&sql)?
            .query_and_then(params_from_iter(&params), rows::lead)?
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
    use chrono::Utc;
    use leadtrack_core::request::query::Sort;
    use leadtrack_core::types::LeadId;

    /// Every listing's plan reaches leads through an index on the project: no query scans
    /// the table, so no query reads another project's leads.
    #[test]
    fn every_filter_and_sort_searches_within_the_project() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::schema::migrate(&mut conn).unwrap();
        let base = LeadQuery::default;
        let mut queries = vec![
            base(),
            LeadQuery {
                status: Some(vec![LeadStatus::Open, LeadStatus::Rated]),
                ..base()
            },
            LeadQuery {
                form_name: Some("Contact".into()),
                ..base()
            },
            LeadQuery {
                unique_identifier: Some("crm-1".into()),
                ..base()
            },
            LeadQuery {
                email: Some("a@x.io".into()),
                ..base()
            },
            LeadQuery {
                phone: Some("+1 555".into()),
                ..base()
            },
            LeadQuery {
                created_from: Some(Utc::now()),
                created_to: Some(Utc::now()),
                ..base()
            },
            LeadQuery {
                search: Some("ada".into()),
                ..base()
            },
            LeadQuery {
                gclid_exists: Some(true),
                fbc_exists: Some(false),
                ..base()
            },
        ];
        for &field in SortField::VARIANTS {
            for direction in [SortDirection::Asc, SortDirection::Desc] {
                queries.push(LeadQuery {
                    sort: Sort { field, direction },
                    ..base()
                });
            }
        }
        for query in queries {
            let (filter, params) = filter(&conn, ProjectId(1), &query).unwrap();
            let count = format!("SELECT count(*) FROM leads WHERE {filter}");
            let mut page_params = params.clone();
            page_params.extend([SqlValue::Integer(10), SqlValue::Integer(0)]);
            let page = format!(
                "SELECT {LEAD_COLUMNS} FROM leads WHERE {filter} ORDER BY {} LIMIT ? OFFSET ?",
                order_by(&query)
            );
            for (sql, params) in [(count, params), (page, page_params)] {
                let plan: Vec<String> = conn
                    .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                    .unwrap()
                    .query_map(params_from_iter(&params), |row| row.get::<_, String>(3))
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap();
                // Every step on the leads table searches an index within the project (or
                // looks up single rows by id); the trigram index is searched by MATCH.
                let mut on_leads = 0;
                for step in &plan {
                    if step.contains("leads_search") {
                        assert!(
                            step.contains("VIRTUAL TABLE INDEX 0:M"),
                            "{query:?}: {step}"
                        );
                    } else if step.contains("leads") {
                        on_leads += 1;
                        let confined = step.starts_with("SEARCH leads USING")
                            && (step.contains("(project_id=?") || step.contains("(rowid=?)"));
                        assert!(confined, "{query:?} is not confined to the project: {step}");
                    }
                }
                assert!(on_leads > 0, "{sql}: {plan:?}");
            }
        }
    }

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
            let (filter, mut params) = filter(&conn, ProjectId(1), &query).unwrap();
            let key = cursor_key(&cursor, query.sort.field).unwrap();
            params.extend([key.clone(), key, SqlValue::Integer(7), SqlValue::Integer(3)]);
            let sql = format!(
                "EXPLAIN QUERY PLAN {}",
                export_sql(&filter, &query, true, true)
            );
            let plan: Vec<String> = conn
                .prepare(&sql)
                .unwrap()
                .query_map(params_from_iter(&params), |row| row.get::<_, String>(3))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
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
