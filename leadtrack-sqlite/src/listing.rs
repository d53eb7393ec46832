//! Listing a project's leads: the filters, the word search (`search` and `q`), sorts, pages,
//! the counts of the inbox's tabs, and exports read in batches.
//!
//! A listing takes one of two strategies, by its words alone:
//!
//! | strategy | takes | how, and why |
//! |---|---|---|
//! | **by the filters** | no word of three characters or more (no `search` or `q`, or only shorter words); and the page of a `q` whose matches pass its count's bound | the leads are read through the filters' index in the page's order, each checked for the words, so a page stops once it is full: a common word fills it soon. Totals come from the kept counts where they tell (status, one facet, dates), else are counted (a `q`'s up to its bound). |
//! | **by the words** | a word of three characters or more | the words' index ([`crate::words`]) gives the leads holding each long word's trigrams, and the leads it has not indexed yet are added; each is checked for every word and filter. A rare word leaves few: they are all counted (a `q`'s up to its bound), and the page is sorted from them. |
//!
//! The words are always checked on the lead itself (`instr` of its folded `q` text, or of its
//! lowercased `search` text), so the index only narrows: a lead is found exactly when it
//! holds them, indexed yet or not.

use leadtrack_core::lead::{LeadPage, StoredLead};
use leadtrack_core::matching;
use leadtrack_core::request::query::{
    AssigneeFilter, CreatedRange, Facet, FacetValue, SortDirection, SortField, SortKey,
};
use leadtrack_core::request::{Cursor, LeadQuery};
use leadtrack_core::store::sql::{self, Listed, NOT_SPAM};
use leadtrack_core::store::{StoreError, per_status};
use leadtrack_core::time::to_millis;
use leadtrack_core::types::{LeadStatus, ProjectId};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};

use crate::rowid::LEAD_BITS;
use crate::rows::{Error, LEAD_COLUMNS, LeadRecord};
use crate::words;

/// A `search` term as looked for in [`search_text`].
pub(crate) fn search_term(term: &str) -> String {
    matching::search_term(term).replace(['\n', '\r'], " ")
}

/// How a listing's words find their leads: through the words' index, asked `query`, and
/// the leads above its mark (`indexed_to`) besides.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Words {
    query: String,
    indexed_to: i64,
}

impl Words {
    /// The index's part in `query`'s listing: `None` when it has no word of three
    /// characters or more, and so is listed by its filters.
    fn of(conn: &Connection, query: &LeadQuery) -> Result<Option<Self>, Error> {
        // The search's term as the index holds it: folded, as the `q` text is. A final
        // sigma is lowercased by its place in the lead's text, but folded alone; the
        // term's parts between sigmas are looked up, and the whole checked.
        let search = query.search.as_deref().map(matching::fold);
        let parts = search.iter().flat_map(|term| term.split(['σ', 'ς']));
        let words = query.q.iter().map(String::as_str).chain(parts);
        let Some(query) = words::query(words) else {
            return Ok(None);
        };
        let indexed_to = words::indexed_to(conn)?;
        Ok(Some(Self { query, indexed_to }))
    }

    /// `SELECT {columns}` of the project's leads that the index finds (or that are above
    /// its mark) and `filter` passes, with the parameters of the lookup; the filter's
    /// follow. The lookup drives (CROSS JOIN) and each lead is read by id, so a LIMIT stops
    /// the index's reading too.
    fn hits(&self, project: ProjectId, columns: &str, filter: &str) -> (String, Vec<SqlValue>) {
        let low = project.0 << LEAD_BITS;
        let sql = format!(
            "SELECT {columns} FROM (
               SELECT rowid & {mask} AS id FROM lead_words
                 WHERE lead_words MATCH ? AND rowid BETWEEN ? AND ?
               UNION ALL SELECT id FROM leads WHERE id > ?
             ) AS hits CROSS JOIN leads ON leads.id = hits.id WHERE {filter}",
            mask = (1_i64 << LEAD_BITS) - 1
        );
        let params = vec![
            SqlValue::Text(self.query.clone()),
            SqlValue::Integer(low),
            SqlValue::Integer(low | ((1 << LEAD_BITS) - 1)),
            SqlValue::Integer(self.indexed_to),
        ];
        (sql, params)
    }
}

/// At most `bound` of the leads matching `query`, as `SELECT {columns}` (of `leads`) and
/// its parameters: found by the words when they can ([`Words`]), else by the filters.
fn matches(
    project: ProjectId,
    query: &LeadQuery,
    words: Option<&Words>,
    columns: &str,
    bound: u64,
) -> (String, Vec<SqlValue>) {
    let (filter, mut params) = filter(project, query, words.is_some());
    let (sql, mut all) = match words {
        Some(words) => words.hits(project, columns, &filter),
        None => (
            format!("SELECT {columns} FROM leads WHERE {filter}"),
            Vec::new(),
        ),
    };
    all.append(&mut params);
    all.push(SqlValue::Integer(i64::try_from(bound).unwrap_or(i64::MAX)));
    (format!("{sql} LIMIT ?"), all)
}

/// The counts per status of the leads matching `query` but for its status: from the kept
/// counts when they can tell ([`kept_counts`]), else of its matches (a `q`'s up to its
/// bound, [`LeadQuery::counted`]).
pub(crate) fn status_counts(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
) -> Result<Vec<(LeadStatus, u64)>, Error> {
    let any_status = query.any_status();
    let counted = match kept_counts(conn, project, &any_status)? {
        Some(kept) => kept,
        None => {
            let words = Words::of(conn, &any_status)?;
            let bound = query.counted().unwrap_or(u64::MAX);
            let (matches, params) =
                matches(project, &any_status, words.as_ref(), "leads.status", bound);
            conn.prepare_cached(&format!(
                "SELECT status, count(*) FROM ({matches}) GROUP BY status"
            ))?
            .query_map(params_from_iter(&params), |row| {
                Ok((row.get(0)?, row.get(1)?))
            })?
            .collect::<Result<_, _>>()?
        }
    };
    Ok(per_status(&counted))
}

/// The counts per status of the leads matching `query` but for its status, when the store
/// keeps them: for a query that filters by status alone, or besides it by one facet
/// ([`LeadQuery::only_facet`]) or a range of dates ([`LeadQuery::only_dates`]).
fn kept_counts(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
) -> Result<Option<Vec<(String, i64)>>, Error> {
    let counts = if query.only_statuses().is_some() {
        conn.prepare_cached("SELECT status, total FROM lead_status_counts WHERE project_id = ?1")?
            .query_map([project.0], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<Result<_, _>>()?
    } else if let Some(facet) = query.only_facet() {
        facet_counts(conn, project, &facet)?
    } else if let Some(range) = query.only_dates() {
        range_counts(conn, project, range)?
    } else {
        return Ok(None);
    };
    Ok(Some(counts))
}

/// How many leads match `query`, from the kept counts when they can tell
/// ([`kept_counts`]): the sum of those of its statuses.
fn kept_total(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
) -> Result<Option<i64>, Error> {
    let statuses = query.statuses();
    Ok(kept_counts(conn, project, query)?.map(|counts| {
        counts
            .into_iter()
            .filter(|(status, _)| statuses.iter().any(|s| s.as_ref() == status))
            .map(|(_, total)| total)
            .sum()
    }))
}

/// The kept counts of the project's leads with `facet`'s value, per status. A click id's
/// absence is counted as its presence is: the facet's value is the flag.
fn facet_counts(
    conn: &Connection,
    project: ProjectId,
    facet: &Facet,
) -> Result<Vec<(String, i64)>, Error> {
    let value = match &facet.value {
        FacetValue::Text(value) => value.as_str(),
        FacetValue::Flag(true) => "1",
        FacetValue::Flag(false) => "0",
    };
    conn.prepare_cached(
        "SELECT status, total FROM lead_facet_counts
         WHERE project_id = ?1 AND facet = ?2 AND value = ?3",
    )?
    .query_map((project.0, facet.column, value), |row| {
        Ok((row.get(0)?, row.get(1)?))
    })?
    .collect::<Result<_, _>>()
    .map_err(Error::from)
}

/// An hour in milliseconds: the span of each of the counts kept in `lead_hour_counts`.
const HOUR_MS: i64 = 3_600_000;

/// The counts per status of the project's leads created in `range` (inclusive, open where
/// `None`): its whole hours from the kept counts, and the partial hours at its ends lead
/// by lead.
fn range_counts(
    conn: &Connection,
    project: ProjectId,
    (from, to): CreatedRange,
) -> Result<Vec<(String, i64)>, Error> {
    let from = from.as_ref().map_or(i64::MIN, to_millis);
    let end = to
        .as_ref()
        .map_or(i64::MAX, |to| to_millis(to).saturating_add(1));
    let ((first, last), [(a, b), (c, d)]) = whole_hours(from, end);
    conn.prepare_cached(
        "SELECT status, sum(n) FROM (
            SELECT status, total AS n FROM lead_hour_counts
                WHERE project_id = ?1 AND hour >= ?2 AND hour < ?3
            UNION ALL SELECT status, 1 FROM leads
                WHERE project_id = ?1 AND created_at >= ?4 AND created_at < ?5
            UNION ALL SELECT status, 1 FROM leads
                WHERE project_id = ?1 AND created_at >= ?6 AND created_at < ?7
         ) GROUP BY status",
    )?
    .query_map((project.0, first, last, a, b, c, d), |row| {
        Ok((row.get(0)?, row.get(1)?))
    })?
    .collect::<Result<_, _>>()
    .map_err(Error::from)
}

/// The whole hours within `[from, end)` (milliseconds) as `[first, last)` (hours since the
/// epoch), and the partial hours left at its two ends, as `[start, end)` in milliseconds.
/// The epoch's first hour is never whole: its kept count (`created_at / 3600000` rounds
/// toward zero) also holds the hour before the epoch.
fn whole_hours(from: i64, end: i64) -> ((i64, i64), [(i64, i64); 2]) {
    let first = (from.div_euclid(HOUR_MS) + i64::from(from.rem_euclid(HOUR_MS) != 0)).max(1);
    let last = end.div_euclid(HOUR_MS);
    if first < last {
        (
            (first, last),
            [(from, first * HOUR_MS), (last * HOUR_MS, end)],
        )
    } else {
        ((0, 0), [(from, end), (0, 0)])
    }
}

/// The distinct values of a column among the project's leads, in order.
pub(crate) fn listed_values(
    conn: &Connection,
    project: ProjectId,
    listed: Listed,
) -> Result<Vec<String>, Error> {
    conn.prepare_cached(&sql::distinct_values(listed, "?1"))?
        .query_map([project.0], |row| row.get(0))?
        .collect::<Result<_, _>>()
        .map_err(Error::from)
}

/// A page as a reader found it: its leads' rows, parsed by [`RecordPage::parse`] on the
/// caller's thread (see [`LeadRecord`] for why).
pub(crate) struct RecordPage {
    records: Vec<LeadRecord>,
    total: u64,
    total_is_lower_bound: bool,
}

impl RecordPage {
    /// The page of leads it holds.
    pub(crate) fn parse(self) -> Result<LeadPage, Error> {
        Ok(LeadPage {
            leads: parse(self.records)?,
            total: self.total,
            total_is_lower_bound: self.total_is_lower_bound,
        })
    }
}

/// The leads `records` hold.
pub(crate) fn parse(records: Vec<LeadRecord>) -> Result<Vec<StoredLead>, Error> {
    records.into_iter().map(LeadRecord::parse).collect()
}

/// A page of the project's leads matching `query`, and how many match in all (a `q`'s up
/// to [`LeadQuery::counted`]), by the module's two strategies.
pub(crate) fn list(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
) -> Result<RecordPage, Error> {
    let words = Words::of(conn, query)?;
    let bound = query.counted().unwrap_or(u64::MAX);
    let (total, found) = match (&words, kept_total(conn, project, query)?) {
        (None, Some(kept)) => (u64::try_from(kept).unwrap_or_default(), None),
        (None, None) => {
            let (matches, params) = matches(project, query, None, "1", bound);
            let total: i64 = conn
                .prepare_cached(&format!("SELECT count(*) FROM ({matches})"))?
                .query_row(params_from_iter(&params), |row| row.get(0))?;
            (u64::try_from(total).unwrap_or_default(), None)
        }
        (Some(_), _) => {
            let columns = "leads.id, leads.created_at";
            let (matches, params) = matches(project, query, words.as_ref(), columns, bound);
            let found: Vec<(i64, i64)> = conn
                .prepare_cached(&matches)?
                .query_map(params_from_iter(&params), |row| {
                    Ok((row.get(0)?, row.get(1)?))
                })?
                .collect::<Result<_, _>>()?;
            (found.len() as u64, Some(found))
        }
    };
    let counted_all = query.counted_all(total);
    let records = match found {
        _ if query.offset() >= total => Vec::new(),
        Some(found) if counted_all => sorted_page(conn, query, &found)?,
        _ => {
            let (filter, params) = filter(project, query, false);
            let ids = format!(
                "SELECT id FROM leads WHERE {filter} ORDER BY {} LIMIT ? OFFSET ?",
                order_by(query)
            );
            read_page(conn, query, &ids, params)?
        }
    };
    Ok(RecordPage {
        records,
        total,
        total_is_lower_bound: !counted_all,
    })
}

/// The page `query` asks for of the leads `found` (ids and creation times), sorted: by
/// creation time here, so that only the page's leads are read; by another key in SQL.
fn sorted_page(
    conn: &Connection,
    query: &LeadQuery,
    found: &[(i64, i64)],
) -> Result<Vec<LeadRecord>, Error> {
    if query.sort.field != SortField::CreatedAt {
        let ids: Vec<i64> = found.iter().map(|(id, _)| *id).collect();
        return read_ids(conn, query, &ids);
    }
    // As `order_by`: the creation time, then the id, both one way.
    let mut keys: Vec<(i64, i64)> = found.iter().map(|(id, at)| (*at, *id)).collect();
    keys.sort_unstable();
    if query.sort.direction == SortDirection::Desc {
        keys.reverse();
    }
    let ids: Vec<i64> = keys
        .iter()
        .skip(usize::try_from(query.offset()).unwrap_or(usize::MAX))
        .take(usize::try_from(query.limit).unwrap_or(usize::MAX))
        .map(|(_, id)| *id)
        .collect();
    let first = LeadQuery {
        page: 1,
        ..query.clone()
    };
    read_ids(conn, &first, &ids)
}

/// The page `query` asks for of the leads `ids`, sorted.
fn read_ids(conn: &Connection, query: &LeadQuery, ids: &[i64]) -> Result<Vec<LeadRecord>, Error> {
    let sorted = format!(
        "SELECT id FROM leads WHERE id IN (SELECT value FROM json_each(?))
         ORDER BY {} LIMIT ? OFFSET ?",
        order_by(query)
    );
    let ids = serde_json::to_string(ids)?;
    read_page(conn, query, &sorted, vec![SqlValue::Text(ids)])
}

/// `params` with the LIMIT and OFFSET of `query`'s page after them.
fn page_params(query: &LeadQuery, mut params: Vec<SqlValue>) -> Vec<SqlValue> {
    params.push(SqlValue::Integer(i64::from(query.limit)));
    params.push(SqlValue::Integer(
        i64::try_from(query.offset()).unwrap_or(i64::MAX),
    ));
    params
}

/// The page `query` asks for, of the ids that `ids` (ending in `LIMIT ? OFFSET ?`)
/// finds with `params`: their leads, read after the ids are sorted, so that a sort of
/// many matches moves only their keys.
fn read_page(
    conn: &Connection,
    query: &LeadQuery,
    ids: &str,
    params: Vec<SqlValue>,
) -> Result<Vec<LeadRecord>, Error> {
    let sql = format!(
        "SELECT {LEAD_COLUMNS} FROM leads WHERE id IN ({ids}) ORDER BY {}",
        order_by(query)
    );
    conn.prepare_cached(&sql)?
        .query_and_then(params_from_iter(page_params(query, params)), LeadRecord::of)?
        .collect()
}

/// The WHERE clause of a listing and its parameters. Always starts with the project, so
/// every plan is an index search within it; `by_words` when the words' index drives
/// ([`Words::hits`]), whose leads the other columns then only check (a `+` keeps SQLite
/// from walking, say, every open lead of the project to test each against the few found).
/// The words are checked on each lead.
pub(crate) fn filter(
    project: ProjectId,
    query: &LeadQuery,
    by_words: bool,
) -> (String, Vec<SqlValue>) {
    // A member's leads are few: found through their own index (`leads_assigned`), which
    // SQLite, without statistics, would pass over for a range of dates or a status.
    let by_assignee = matches!(query.assignee, Some(AssigneeFilter::User(_)));
    let column = |name: &str| {
        if by_words || by_assignee && name != "project_id" {
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
    match &query.status {
        Some(statuses) if statuses.is_empty() => sql.push_str(" AND 0"),
        Some(statuses) => {
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
        None => sql.push_str(&format!(" AND {}", column(NOT_SPAM))),
    }
    for facet in query.facets() {
        match facet.value {
            FacetValue::Text(value) => equals(&mut sql, facet.column, Some(value)),
            FacetValue::Flag(exists) => {
                sql.push_str(&format!(
                    " AND {} = {}",
                    column(facet.column),
                    i32::from(exists)
                ));
            }
        }
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
    if let Some(term) = &query.search {
        sql.push_str(" AND instr(search_text, ?) > 0");
        params.push(SqlValue::Text(search_term(term)));
    }
    for word in &query.q {
        sql.push_str(" AND instr(q_text, ?) > 0");
        params.push(SqlValue::Text(word.clone()));
    }
    if let Some(duplicates) = query.duplicates {
        sql.push_str(&format!(" AND {}", column(&duplicates.condition())));
    }
    if let Some(assignee) = query.assignee {
        let condition = assignee.condition();
        match by_words {
            true => sql.push_str(&format!(" AND +{condition}")),
            false => sql.push_str(&format!(" AND {condition}")),
        }
    }
    (sql, params)
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
    use chrono::Utc;
    use leadtrack_core::request::query::Sort;
    use leadtrack_core::types::LeadId;
    use strum::VariantArray;

    /// The steps of `sql`'s query plan with `params`.
    fn plan_of(conn: &Connection, sql: &str, params: &[SqlValue]) -> Vec<String> {
        conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap()
            .query_map(params_from_iter(params), |row| row.get::<_, String>(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

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
            let (filter, params) = filter(ProjectId(1), &query, false);
            let count = format!("SELECT count(*) FROM leads WHERE {filter}");
            let mut page_params = params.clone();
            page_params.extend([SqlValue::Integer(10), SqlValue::Integer(0)]);
            let page = format!(
                "SELECT {LEAD_COLUMNS} FROM leads WHERE {filter} ORDER BY {} LIMIT ? OFFSET ?",
                order_by(&query)
            );
            for (sql, params) in [(count, params), (page, page_params)] {
                let plan = plan_of(&conn, &sql, &params);
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

    /// A listing with a long word is found through the words' index, which drives: each
    /// lead it finds, and each above its mark, is read by id, so a count's LIMIT stops the
    /// index's reading too. Without one, a page of a `search` or `q` is read along the
    /// project's creation-time index, in both directions, without sorting.
    #[test]
    fn words_drive_through_their_index_and_short_ones_walk_in_order() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::schema::migrate(&mut conn).unwrap();
        let plan = |sql: &str, params: &[SqlValue]| {
            crate::rows::without_assignee(plan_of(&conn, sql, params))
        };
        for query in [
            LeadQuery {
                q: vec!["ada".into(), "k".into()],
                status: Some(vec![LeadStatus::Open]),
                ..LeadQuery::default()
            },
            LeadQuery {
                search: Some("Ada".into()),
                ..LeadQuery::default()
            },
        ] {
            let words = Words::of(&conn, &query).unwrap().unwrap();
            assert_eq!(words.query, r#""ada""#);
            let (sql, params) = matches(ProjectId(1), &query, Some(&words), "1", 1_001);
            assert_eq!(
                plan(&sql, &params),
                [
                    "CO-ROUTINE hits",
                    "COMPOUND QUERY",
                    "LEFT-MOST SUBQUERY",
                    "SCAN lead_words VIRTUAL TABLE INDEX 0:M1><",
                    "UNION ALL",
                    "SEARCH leads USING INTEGER PRIMARY KEY (rowid>?)",
                    "SCAN hits",
                    "SEARCH leads USING INTEGER PRIMARY KEY (rowid=?)",
                ],
                "{query:?}"
            );
        }
        for direction in [SortDirection::Asc, SortDirection::Desc] {
            let sort = Sort {
                field: SortField::CreatedAt,
                direction,
            };
            let search = LeadQuery {
                search: Some("ad".into()),
                sort,
                ..LeadQuery::default()
            };
            let q = LeadQuery {
                q: vec!["ad".into(), "k".into()],
                sort,
                ..LeadQuery::default()
            };
            for query in [search, q] {
                assert_eq!(Words::of(&conn, &query).unwrap(), None);
                let (filter, mut params) = filter(ProjectId(1), &query, false);
                params.extend([SqlValue::Integer(10), SqlValue::Integer(0)]);
                let page = format!(
                    "SELECT {LEAD_COLUMNS} FROM leads WHERE {filter} ORDER BY {} LIMIT ? OFFSET ?",
                    order_by(&query)
                );
                assert_eq!(
                    plan(&page, &params),
                    ["SEARCH leads USING INDEX leads_created (project_id=?)"],
                    "{direction:?}"
                );
            }
        }
    }

    /// A member's leads (the Mine tab, and its count) are found through their own index,
    /// whatever else filters: a range of dates, a status.
    #[test]
    fn a_members_leads_are_read_through_their_index() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::schema::migrate(&mut conn).unwrap();
        let query = LeadQuery {
            assignee: Some(AssigneeFilter::User(leadtrack_core::types::UserId(5))),
            status: Some(vec![LeadStatus::Open]),
            created_from: Some(Utc::now()),
            created_to: Some(Utc::now()),
            ..LeadQuery::default()
        };
        for query in [query.clone(), query.any_status()] {
            let (filter, params) = filter(ProjectId(1), &query, false);
            let sql = format!("SELECT status, count(*) FROM leads WHERE {filter} GROUP BY status");
            let plan = plan_of(&conn, &sql, &params);
            assert!(
                plan[0].starts_with(
                    "SEARCH leads USING INDEX leads_assigned (project_id=? AND assigned_to=?)"
                ),
                "{plan:?}"
            );
        }
    }

    /// A range of dates is counted from the kept counts of its whole hours, and lead by
    /// lead in the partial hours at its ends.
    #[test]
    fn a_range_is_split_into_whole_hours_and_its_partial_ends() {
        const H: i64 = HOUR_MS;
        assert_eq!(whole_hours(0, 3 * H), ((1, 3), [(0, H), (3 * H, 3 * H)]));
        assert_eq!(
            whole_hours(H + 1, 3 * H + 5),
            ((2, 3), [(H + 1, 2 * H), (3 * H, 3 * H + 5)])
        );
        assert_eq!(
            whole_hours(i64::MIN, i64::MAX),
            (
                (1, i64::MAX / H),
                [(i64::MIN, H), (i64::MAX / H * H, i64::MAX)]
            )
        );
        // No whole hour: the range is counted lead by lead.
        assert_eq!(
            whole_hours(H + 1, 2 * H),
            ((0, 0), [(H + 1, 2 * H), (0, 0)])
        );
        assert_eq!(whole_hours(-5 * H, -H), ((0, 0), [(-5 * H, -H), (0, 0)]));
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
