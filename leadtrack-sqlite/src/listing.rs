//! Listing a project's leads: the word search (`search` and `q`), pages and the counts of
//! the inbox's tabs. The SQL of a query's filters and order is [`crate::clauses`]'s.
//!
//! A listing takes one of two strategies:
//!
//! | strategy | takes | how, and why |
//! |---|---|---|
//! | **by the filters** | no word the words' index looks up (no `search` or `q`, only words of one character, or of two that begin hundreds of trigrams or that one in twenty of the newest leads hold); a member's leads, when they are fewer than [`MEMBER_FEW`](index::MEMBER_FEW); and the page of more than [`SORTED_MOST`] matches, or of many among the leads the inbox's order begins at ([`walks_sooner`]) | the leads are read through the filters' index in the page's order, each checked for the words, so a page stops once it is full: many matches fill it soon. Totals come from the kept counts where they tell (status, one facet, dates), else are counted (a `q`'s up to its bound). |
//! | **by the words** | a word the index looks up ([`words::lookup`](crate::words::lookup)) | the index gives the leads holding the words, exactly (a `q` word of a phone's punctuation, or not ASCII, also where the search text alone holds it), and the leads above its mark are added, each checked; the other filters are checked on each, and so are the `q` words that one in four of the newest leads hold beside a rarer word the index looks up. A `search` with no other filter is counted in the index alone. A page of at most [`SORTED_MOST`] matches is sorted from them; under a `q`'s bound, the index's ids are read once, to tell whether they are that few and then to read their leads, and a page that may be walked reads the first [`READ_FIRST`] from where its walk begins before the rest, walked without them when it lies among those ([`begun`]). |
//!
//! Every listing checks its words on the leads it reads too (`instr` of the lead's search
//! or `q` text), so a word the index does not look up is still found, and a lead is found
//! from its first moment, indexed yet or not.

use leadtrack_core::lead::{LeadPage, StoredLead};
use leadtrack_core::request::LeadQuery;
use leadtrack_core::request::query::{SortDirection, SortField};
use leadtrack_core::store::sql::{self, Listed};
use leadtrack_core::store::{StatusCounts, per_status};
use leadtrack_core::types::{LeadStatus, ProjectId};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};
use strum::VariantArray;

use crate::clauses::{filter, order_by};
use crate::counts::{kept_counts, kept_total};
use crate::rows::{Error, LEAD_COLUMNS, LeadRecord};
use index::Words;

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
        let (once, walk) = match bound {
            u64::MAX => (None, false),
            _ => read_or_walk(conn, project, query, words)?,
        };
        let every = (bound == u64::MAX || once.is_some()) && !walk;
        let words = once.as_ref().unwrap_or(words);
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

/// Under a `q`'s bound: the index's candidates read once, when they are few enough to sort
/// a page from (to tell so, and then to read their leads), and whether the page is found
/// sooner along the inbox's order ([`walks_sooner`]); the matches are then read up to the
/// bound, for the total. A page that may be walked reads the candidates near where its
/// walk begins first ([`begun`]), and is walked without the rest when it lies among them.
fn read_or_walk(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
    words: &Words,
) -> Result<(Option<Words>, bool), Error> {
    if !walkable(query) {
        return Ok((words.read_once(conn, project, SORTED_MOST)?, false));
    }
    let ends = id_ends(conn)?;
    let once = match begun(conn, project, query, words, ends)? {
        Begun::Walked => return Ok((None, true)),
        Begun::All(ids) => Some(words.with_ids(ids)),
        Begun::Unknown => words.read_once(conn, project, SORTED_MOST)?,
    };
    let walk = match once.as_ref().and_then(Words::read) {
        Some(ids) => walks_sooner(query, ids, ids.len() as u64, ends),
        None => false,
    };
    Ok((once, walk))
}

/// What the candidates read first tell of a page that may be walked ([`begun`]).
enum Begun {
    /// It lies among the many matches its walk begins at: walked.
    Walked,
    /// They are all the index's candidates (`None`: it has none).
    All(Option<Vec<i64>>),
    /// Neither: the rest are read.
    Unknown,
}

/// The page of `query`, walkable, told from the index's first [`READ_FIRST`] candidates
/// (or as many as the page ends after), and when the newest come first, from those
/// among the [`WALKED_PER_SORTED`] times as many newest leads, read before: when these
/// cannot hold the page, it is not walked, and the first are not read.
fn begun(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
    words: &Words,
    ends: IdEnds,
) -> Result<Begun, Error> {
    let page_end = query.offset() + u64::from(query.limit);
    let first = READ_FIRST.max(page_end).min(SORTED_MOST);
    let window = match query.sort.direction {
        SortDirection::Asc => None,
        SortDirection::Desc => {
            let walked = WALKED_PER_SORTED * first;
            let (_, newest) = ends;
            let above = newest.unwrap_or(0) - i64::try_from(walked).unwrap_or(i64::MAX);
            let ids = words.ids(conn, project, walked, above)?.unwrap_or_default();
            if (ids.len() as u64) < page_end {
                return Ok(Begun::Unknown);
            }
            Some(ids)
        }
    };
    let Some(mut ids) = words.ids(conn, project, first, 0)? else {
        return Ok(Begun::All(None));
    };
    if ids.len() as u64 <= first {
        return Ok(Begun::All(Some(ids)));
    }
    ids.truncate(usize::try_from(first).unwrap_or(usize::MAX));
    let begun = window.unwrap_or(ids);
    Ok(match walks_sooner(query, &begun, first, ends) {
        true => Begun::Walked,
        false => Begun::Unknown,
    })
}

/// How many leads a walk along the inbox's order may pass for each match a sorted page
/// would read instead: a walk reads the leads in the order of their rows, a sort each
/// match's row wherever it lies (at a million leads, `q=ada`'s 17,721 matches took 36 ms).
const WALKED_PER_SORTED: u64 = 4;

/// Whether the page of `query`, [`walkable`], is found sooner by a walk along the inbox's
/// order than sorted from its `matches`, of which the index gave `ids` (in order; at least
/// those nearest the end the walk begins at): when its last lead lies fewer than
/// [`WALKED_PER_SORTED`] leads a match from that end of the store's `ends`. Ids grow with
/// time, so the ids tell where the matches lie; an import of older leads makes that a
/// guess, never a wrong page (the walk checks each lead).
fn walks_sooner(query: &LeadQuery, ids: &[i64], matches: u64, ends: IdEnds) -> bool {
    let last = usize::try_from(query.offset() + u64::from(query.limit)).unwrap_or(usize::MAX);
    if last > ids.len() {
        return false;
    }
    let passed = match (query.sort.direction, ends) {
        (SortDirection::Desc, (_, Some(newest))) => newest - ids[ids.len() - last],
        (SortDirection::Asc, (Some(first), _)) => ids[last - 1] - first,
        _ => return false,
    };
    passed.unsigned_abs() < WALKED_PER_SORTED * matches
}

/// The first and the newest lead's ids in the store (`None` when it holds none): where a
/// walk along the inbox's order begins, in ids. Read once a listing.
type IdEnds = (Option<i64>, Option<i64>);

/// The store's [`IdEnds`].
fn id_ends(conn: &Connection) -> Result<IdEnds, Error> {
    Ok(conn
        .prepare_cached("SELECT (SELECT min(id) FROM leads), (SELECT max(id) FROM leads)")?
        .query_row([], |row| Ok((row.get(0)?, row.get(1)?)))?)
}

/// Whether `query`'s page may be walked instead of sorted from its matches
/// ([`walks_sooner`]): it is sorted by creation time, and filters by its words alone.
fn walkable(query: &LeadQuery) -> bool {
    let only_words = LeadQuery {
        q: Vec::new(),
        search: None,
        ..query.clone()
    };
    query.sort.field == SortField::CreatedAt && only_words.is_unfiltered()
}

/// How many of the index's candidates a listing under a bound reads first, from where its
/// walk begins ([`begun`]): at a million leads, `q=okafor`'s 20,001 candidates took
/// 6 ms to read, its first 1,001 0.5 ms. A few in the unit tests, as [`SORTED_MOST`].
const READ_FIRST: u64 = if cfg!(test) { 5 } else { 1_000 };

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

/// Most matches a page is sorted from: reading each one's creation time costs about as much
/// as the page's walk along the inbox's order, which more matches fill soon. A few in the
/// unit tests, so that their searches list on both sides of it.
const SORTED_MOST: u64 = if cfg!(test) { 20 } else { 20_000 };

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

mod index;
#[cfg(test)]
mod tests;
