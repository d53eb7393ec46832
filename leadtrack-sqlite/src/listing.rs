//! Listing a project's leads: the filters, the word search (`search` and `q`), sorts, pages,
//! the counts of the inbox's tabs, and exports read in batches.
//!
//! A listing takes one of two strategies, by its words alone:
//!
//! | strategy | takes | how, and why |
//! |---|---|---|
//! | **by the filters** | no word the words' index looks up (no `search` or `q`, or only words of one character, or of two that begin hundreds of trigrams); and the page of a `q` whose matches pass its count's bound | the leads are read through the filters' index in the page's order, each checked for the words, so a page stops once it is full: a common word fills it soon. Totals come from the kept counts where they tell (status, one facet, dates), else are counted (a `q`'s up to its bound). |
//! | **by the words** | a word the index looks up: of three characters or more, or of two that begin few trigrams ([`words::query`]) | the words' index gives the leads holding the words' trigrams, and the leads it has not indexed yet are added; each is checked for every word and filter. A rare word leaves few: they are all counted (a `q`'s up to its bound), and the page is sorted from them. |
//!
//! The words are always checked on the lead itself (`instr` of its folded `q` text, or of its
//! lowercased `search` text), so the index only narrows: a lead is found exactly when it
//! holds them, indexed yet or not.

use leadtrack_core::lead::{LeadPage, StoredLead};
use leadtrack_core::matching;
use leadtrack_core::request::LeadQuery;
use leadtrack_core::request::query::{AssigneeFilter, FacetValue, SortDirection, SortField};
use leadtrack_core::store::per_status;
use leadtrack_core::store::sql::{self, Listed, NOT_SPAM};
use leadtrack_core::time::to_millis;
use leadtrack_core::types::{LeadStatus, ProjectId};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};

use crate::counts::{kept_counts, kept_total};
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
    /// The index's part in `query`'s listing: `None` when it has no word the index looks
    /// up, and so is listed by its filters.
    fn of(conn: &Connection, query: &LeadQuery) -> Result<Option<Self>, Error> {
        // The search's term as the index holds it: folded, as the `q` text is. A final
        // sigma is lowercased by its place in the lead's text, but folded alone; the
        // term's parts between sigmas are looked up, and the whole checked.
        let search = query.search.as_deref().map(matching::fold);
        let parts = search.iter().flat_map(|term| term.split(['σ', 'ς']));
        let words = query.q.iter().map(String::as_str).chain(parts);
        let Some(query) = words::query(conn, words)? else {
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
pub(crate) fn sort_key(field: SortField) -> (&'static str, &'static str) {
    match field {
        SortField::CreatedAt => ("created_at", "created_at"),
        SortField::FirstName => ("first_name", "first_name COLLATE NOCASE"),
        SortField::LastName => ("last_name", "last_name COLLATE NOCASE"),
        SortField::Email => ("email", "email COLLATE NOCASE"),
        SortField::Price => ("price", "price"),
        SortField::Status => ("status", "status"),
    }
}

pub(crate) fn direction(query: &LeadQuery) -> &'static str {
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

#[cfg(test)]
mod tests;
