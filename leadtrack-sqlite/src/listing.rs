//! Listing a project's leads: the word search (`search` and `q`), pages and the counts of
//! the inbox's tabs. The SQL of a query's filters and order is [`crate::clauses`]'s.
//!
//! A listing takes one of two strategies:
//!
//! | strategy | takes | how, and why |
//! |---|---|---|
//! | **by the filters** | no word the words' index looks up (no `search` or `q`, only words of one character, or of two that begin hundreds of trigrams or that one in twenty of the newest leads hold); a member's leads, when they are fewer than [`MEMBER_FEW`]; and the page of more than [`SORTED_MOST`] matches | the leads are read through the filters' index in the page's order, each checked for the words, so a page stops once it is full: many matches fill it soon. Totals come from the kept counts where they tell (status, one facet, dates), else are counted (a `q`'s up to its bound). |
//! | **by the words** | a word the index looks up ([`words::lookup`]) | the index gives the leads holding the words, exactly, and the leads above its mark are added, each checked; the other filters are checked on each, and so are the `q` words that one in twenty of the newest leads hold beside a rarer word the index looks up. A `search` with no other filter is counted in the index alone. A page of at most [`SORTED_MOST`] matches is sorted from them. |
//!
//! Every listing checks its words on the leads it reads too (`instr` of the lead's search
//! or `q` text), so a word the index does not look up is still found, and a lead is found
//! from its first moment, indexed yet or not.

use leadtrack_core::lead::{LeadPage, StoredLead};
use leadtrack_core::request::LeadQuery;
use leadtrack_core::request::query::{AssigneeFilter, SortDirection, SortField};
use leadtrack_core::store::sql::{self, Listed};
use leadtrack_core::store::{StatusCounts, per_status};
use leadtrack_core::types::{LeadStatus, ProjectId};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};
use strum::VariantArray;

use crate::clauses::{filter, order_by, search_term};
use crate::counts::{kept_counts, kept_total};
use crate::rowid::LEAD_BITS;
use crate::rows::{Error, LEAD_COLUMNS, LeadRecord};
use crate::words::{self, Column, Lookup};

/// How a listing's words find their leads: through the words' index, asked `query`, and
/// the leads above its mark (`indexed_to`) besides.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Words {
    /// The index's query; `None` when it holds no lead with the words.
    query: Option<String>,
    /// Whether the index alone tells which leads hold every word.
    whole: bool,
    indexed_to: i64,
}

impl Words {
    /// The index's part in `query`'s listing: `None` when it looks up none of its words,
    /// which is then listed by its filters.
    fn of(conn: &Connection, project: ProjectId, query: &LeadQuery) -> Result<Option<Self>, Error> {
        if few_of_a_member(conn, project, query)? {
            return Ok(None);
        }
        let term = query.search.as_deref().map(search_term);
        // A `q` word that many of the newest leads hold is checked on each lead: a word of
        // two characters always (its page is soon found in order, and the index's
        // vocabulary would read every lead that holds it to say which trigrams it begins),
        // a longer one when another word is looked up (reading the index for a word most
        // leads hold cost more than checking it on the other word's matches).
        let common = common_words(conn, project, &query.q)?;
        let any_rare = common.iter().any(|common| !common);
        let rare: Vec<&str> = query
            .q
            .iter()
            .zip(&common)
            .filter(|(word, common)| !**common || (word.chars().count() != 2 && !any_rare))
            .map(|(word, _)| word.as_str())
            .collect();
        let q = words::lookup(conn, Column::Q, rare.iter().copied())?;
        let search = words::lookup(conn, Column::Search, term.as_deref())?;
        let (mut parts, mut whole, mut nothing) = (Vec::new(), rare.len() == query.q.len(), false);
        for (lookup, words) in [(q, query.q.len()), (search, usize::from(term.is_some()))] {
            match lookup {
                Lookup::Unused => whole &= words == 0,
                Lookup::Nothing => nothing = true,
                Lookup::Query(part, all) => {
                    parts.push(part);
                    whole &= all;
                }
            }
        }
        if parts.is_empty() && !nothing {
            return Ok(None);
        }
        Ok(Some(Self {
            query: (!nothing).then(|| parts.join(" AND ")),
            whole,
            indexed_to: words::indexed_to(conn)?,
        }))
    }

    /// `SELECT {columns}` of the project's leads that the index finds (or that are above
    /// its mark) and `filter` passes, with the parameters of the lookup; the filter's
    /// follow. The lookup drives (CROSS JOIN) and each lead is read by id, so a LIMIT stops
    /// the index's reading too.
    fn hits(&self, project: ProjectId, columns: &str, filter: &str) -> (String, Vec<SqlValue>) {
        let (mut found, mut params) = (String::new(), Vec::new());
        if let Some(query) = &self.query {
            found = format!(
                "SELECT rowid & {} AS id FROM lead_words
                 WHERE lead_words MATCH ? AND rowid BETWEEN ? AND ? UNION ALL ",
                (1_i64 << LEAD_BITS) - 1
            );
            let (low, high) = project_rowids(project);
            params = vec![
                SqlValue::Text(query.clone()),
                SqlValue::Integer(low),
                SqlValue::Integer(high),
            ];
        }
        params.push(SqlValue::Integer(self.indexed_to));
        let sql = format!(
            "SELECT {columns} FROM ({found}SELECT id FROM leads WHERE id > ?) AS hits
             CROSS JOIN leads ON leads.id = hits.id WHERE {filter}"
        );
        (sql, params)
    }

    /// How many of the project's leads the index finds, counted in the index alone up to
    /// `most`.
    fn in_index(&self, conn: &Connection, project: ProjectId, most: u64) -> Result<u64, Error> {
        let Some(matched) = &self.query else {
            return Ok(0);
        };
        let (low, high) = project_rowids(project);
        let found: i64 = conn
            .prepare_cached(
                "SELECT count(*) FROM (SELECT 1 FROM lead_words
                   WHERE lead_words MATCH ?1 AND rowid BETWEEN ?2 AND ?3 LIMIT ?4)",
            )?
            .query_row(
                (matched, low, high, i64::try_from(most).unwrap_or(i64::MAX)),
                |row| row.get(0),
            )?;
        Ok(u64::try_from(found).unwrap_or_default())
    }

    /// How many of the project's leads hold the words of `query`, a `search` that filters
    /// by nothing else (but the statuses listed by default), when the index alone tells:
    /// its matches, less the spam leads among them, and the leads above its mark that
    /// match, checked one by one.
    fn count(
        &self,
        conn: &Connection,
        project: ProjectId,
        query: &LeadQuery,
    ) -> Result<Option<u64>, Error> {
        let others = LeadQuery {
            search: None,
            ..query.clone()
        };
        if !self.whole || !others.is_unfiltered() {
            return Ok(None);
        }
        let in_index = i64::try_from(self.in_index(conn, project, u64::MAX)?).unwrap_or(i64::MAX);
        // Less its spam (few, through their status's index); and the leads above the mark
        // that are listed (fewer, by id), each checked.
        let spam = LeadQuery {
            status: Some(vec![LeadStatus::Spam]),
            ..query.clone()
        };
        let counted = |query: &LeadQuery, by_id: bool, above: &str| -> Result<i64, Error> {
            let (filter, mut params) = filter(project, query, by_id);
            params.push(SqlValue::Integer(self.indexed_to));
            Ok(conn
                .prepare_cached(&format!(
                    "SELECT count(*) FROM leads WHERE {filter} AND id {above} ?"
                ))?
                .query_row(params_from_iter(&params), |row| row.get(0))?)
        };
        let spam_in_index = counted(&spam, false, "<=")?;
        let listed_above = counted(query, true, ">")?;
        Ok(u64::try_from(in_index - spam_in_index + listed_above).ok())
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
            let words = Words::of(conn, project, &any_status)?;
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
    Ok(listed(conn, project, query, false)?.0)
}

/// An inbox's page and its tabs' counts ([`leadtrack_core::LeadStore::inbox_page`]). A page
/// sorted from the matches the words find reads them once, whatever their status, when
/// the tabs filter as the page does: the tabs count them all, and the page lists those of
/// its statuses.
pub(crate) fn inbox_page(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
    tabs: &LeadQuery,
) -> Result<(RecordPage, Option<StatusCounts>), Error> {
    let shared = tabs.any_status() == query.any_status();
    let (page, counted) = listed(conn, project, query, shared)?;
    let counts = match (page.total_is_lower_bound, counted) {
        (true, _) => None,
        (false, Some(counted)) => Some(counted),
        (false, None) => Some(status_counts(conn, project, tabs)?),
    };
    Ok((page, counts))
}

/// [`list`], and, when `tabs` asks and every match the words find is read, the counts per
/// status of those matches ([`Matched`]).
fn listed(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
    tabs: bool,
) -> Result<(RecordPage, Option<StatusCounts>), Error> {
    let words = Words::of(conn, project, query)?;
    let bound = query.counted().unwrap_or(u64::MAX);
    let in_index = match &words {
        Some(words) => words.count(conn, project, query)?,
        None => kept_total(conn, project, query)?.map(|kept| u64::try_from(kept).unwrap_or(0)),
    };
    let matched = match (in_index, &words) {
        (None, Some(words)) => Some(Matched::read(conn, project, query, words, tabs)?),
        _ => None,
    };
    let total = match (in_index, &matched) {
        (Some(total), _) => total,
        (None, Some(matched)) => (matched.found.len() as u64).min(bound),
        (None, None) => {
            let (matches, params) = matches(project, query, None, "1", bound);
            let total: i64 = conn
                .prepare_cached(&format!("SELECT count(*) FROM ({matches})"))?
                .query_row(params_from_iter(&params), |row| row.get(0))?;
            u64::try_from(total).unwrap_or_default()
        }
    };
    let by_words = match &matched {
        Some(matched) => matched.every && matched.found.len() as u64 <= SORTED_MOST,
        // Counted in the index alone, exactly.
        None => words.is_some() && total <= SORTED_MOST,
    };
    let (found, counts) = match matched {
        Some(Matched { found, counts, .. }) => (Some(found), counts),
        None => (None, None),
    };
    let records = if query.offset() >= total {
        Vec::new()
    } else if by_words {
        let found = match found {
            Some(found) => found,
            None => find(conn, project, query, words.as_ref(), u64::MAX)?,
        };
        sorted_page(conn, query, &found)?
    } else {
        let (filter, params) = filter(project, query, false);
        let ids = format!(
            "SELECT id FROM leads WHERE {filter} ORDER BY {} LIMIT ? OFFSET ?",
            order_by(query)
        );
        read_page(conn, query, &ids, params)?
    };
    let page = RecordPage {
        records,
        total,
        total_is_lower_bound: !query.counted_all(total),
    };
    Ok((page, counts))
}

/// The leads a listing's words find that match it, as read for its total and its page.
struct Matched {
    found: Vec<Found>,
    /// Whether they are every match, not only those up to the listing's bound.
    every: bool,
    /// When the tabs asked and every match was read: their counts per status.
    counts: Option<StatusCounts>,
}

impl Matched {
    /// The matches `words` find for `query`, read once: all of them when the index's
    /// candidates are few enough to sort a page from (or no bound applies), else up to
    /// the bound. With `tabs`, all of them are read whatever their status, and counted;
    /// the listing keeps those of its statuses.
    fn read(
        conn: &Connection,
        project: ProjectId,
        query: &LeadQuery,
        words: &Words,
        tabs: bool,
    ) -> Result<Self, Error> {
        let bound = query.counted().unwrap_or(u64::MAX);
        let every =
            bound == u64::MAX || words.in_index(conn, project, SORTED_MOST + 1)? <= SORTED_MOST;
        if every && tabs {
            let all = find(conn, project, &query.any_status(), Some(words), u64::MAX)?;
            let counts = Some(tally(&all));
            let found = all.into_iter().filter(|f| query.lists(f.status)).collect();
            return Ok(Self {
                found,
                every,
                counts,
            });
        }
        let found = find(
            conn,
            project,
            query,
            Some(words),
            if every { u64::MAX } else { bound },
        )?;
        let every = every || (found.len() as u64) < bound;
        Ok(Self {
            found,
            every,
            counts: None,
        })
    }
}

/// A lead that matches a listing, as read to sort a page from.
struct Found {
    id: i64,
    created_at: i64,
    status: LeadStatus,
}

/// At most `bound` of the leads matching `query`, found through `words`.
fn find(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
    words: Option<&Words>,
    bound: u64,
) -> Result<Vec<Found>, Error> {
    let columns = "leads.id, leads.created_at, leads.status";
    let (matches, params) = matches(project, query, words, columns, bound);
    conn.prepare_cached(&matches)?
        .query_and_then(params_from_iter(&params), |row| {
            Ok(Found {
                id: row.get(0)?,
                created_at: row.get(1)?,
                status: crate::rows::parse("status", row.get(2)?)?,
            })
        })?
        .collect()
}

/// How many of `found` hold each status, in [`LeadStatus`] order.
fn tally(found: &[Found]) -> StatusCounts {
    LeadStatus::VARIANTS
        .iter()
        .map(|status| {
            let holding = found.iter().filter(|found| found.status == *status).count();
            (*status, holding as u64)
        })
        .collect()
}

/// How many of the project's newest leads tell whether a `q` word is common
/// ([`common_words`]).
const GLANCED: i64 = 200;

/// Which of the `q` words at least one in twenty of the project's [`GLANCED`] newest leads
/// hold in their `q` text. Those leads are read only when it can matter: for a word of two
/// characters, or more than one word.
fn common_words(
    conn: &Connection,
    project: ProjectId,
    words: &[String],
) -> Result<Vec<bool>, Error> {
    if words.len() < 2 && words.iter().all(|word| word.chars().count() != 2) {
        return Ok(vec![false; words.len()]);
    }
    let texts: Vec<String> = conn
        .prepare_cached(
            "SELECT q_text FROM leads WHERE project_id = ?1
             ORDER BY created_at DESC, id DESC LIMIT ?2",
        )?
        .query_map((project.0, GLANCED), |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    Ok(words
        .iter()
        .map(|word| {
            let holding = texts
                .iter()
                .filter(|text| text.contains(word.as_str()))
                .count();
            holding as i64 * 20 >= GLANCED
        })
        .collect())
}

/// Fewest leads of a member whose listing is found through the words' index: fewer are
/// read through their own index (`leads_assigned`) and each checked for the words, at
/// most a millisecond or two, where a word can have thousands of matches to check for the
/// member (the Mine tab's count beside every search).
const MEMBER_FEW: i64 = 2_000;

/// How many leads a member holds, up to a limit: in their own index alone.
const MEMBERS_LEADS: &str = "SELECT count(*) FROM (SELECT 1 FROM leads
    WHERE project_id = ?1 AND assigned_to = ?2 LIMIT ?3)";

/// Whether `query` searches a member's leads, and they are fewer than [`MEMBER_FEW`].
fn few_of_a_member(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
) -> Result<bool, Error> {
    let Some(AssigneeFilter::User(user)) = query.assignee else {
        return Ok(false);
    };
    if query.q.is_empty() && query.search.is_none() {
        return Ok(false);
    }
    let theirs: i64 = conn
        .prepare_cached(MEMBERS_LEADS)?
        .query_row((project.0, user.0, MEMBER_FEW), |row| row.get(0))?;
    Ok(theirs < MEMBER_FEW)
}

/// Most matches a page is sorted from: reading each one's creation time costs about as much
/// as the page's walk along the inbox's order, which more matches fill soon.
const SORTED_MOST: u64 = 20_000;

/// The range of the words' index rowids of the project's leads.
fn project_rowids(project: ProjectId) -> (i64, i64) {
    let low = project.0 << LEAD_BITS;
    (low, low | ((1 << LEAD_BITS) - 1))
}

/// The page `query` asks for of the leads `found` (ids and creation times), sorted: by
/// creation time here, so that only the page's leads are read; by another key in SQL.
fn sorted_page(
    conn: &Connection,
    query: &LeadQuery,
    found: &[Found],
) -> Result<Vec<LeadRecord>, Error> {
    if query.sort.field != SortField::CreatedAt {
        let ids: Vec<i64> = found.iter().map(|found| found.id).collect();
        return read_ids(conn, query, &ids);
    }
    // As `order_by`: the creation time, then the id, both one way.
    let mut keys: Vec<(i64, i64)> = found
        .iter()
        .map(|found| (found.created_at, found.id))
        .collect();
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

#[cfg(test)]
mod tests;
