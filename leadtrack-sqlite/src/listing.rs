//! Listing a project's leads: the filters, the trigram search, sorts, pages, the counts of
//! the inbox's tabs, and exports read in batches.

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
use rusqlite::{Connection, OptionalExtension, params_from_iter};

use crate::grams;
use crate::rowid::LEAD_BITS;
use crate::rows::{Error, LEAD_COLUMNS, LeadRecord};

/// A `search` term as looked for in [`search_text`].
pub(crate) fn search_term(term: &str) -> String {
    matching::search_term(term).replace(['\n', '\r'], " ")
}

/// The counts per status of the leads matching `query` but for its status: from the kept
/// counts when they can tell ([`kept_counts`]), else in one grouped pass.
pub(crate) fn status_counts(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
) -> Result<Vec<(LeadStatus, u64)>, Error> {
    let any_status = query.any_status();
    let counted: Vec<(String, i64)> = if let Some(kept) = kept_counts(conn, project, &any_status)? {
        kept
    } else {
        let (matches, params) = match query.counted() {
            Some(bound) => {
                let lookup = q_lookup(conn, project, &any_status)?;
                q_matches(project, &any_status, lookup, "status", bound)
            }
            None => {
                let (filter, params) = filter(project, &any_status, Terms::Indexed);
                (format!("SELECT status FROM leads WHERE {filter}"), params)
            }
        };
        conn.prepare_cached(&format!(
            "SELECT status, count(*) FROM ({matches}) GROUP BY status"
        ))?
        .query_map(params_from_iter(&params), |row| {
            Ok((row.get(0)?, row.get(1)?))
        })?
        .collect::<Result<_, _>>()?
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

/// A page of the project's leads matching `query`, and how many match in all.
///
/// The total comes from kept counts when only the status filters, or besides it one facet
/// or a range of dates, from the trigram index alone when only a search of three
/// characters or more does, and is counted only up to
/// [`LeadQuery::counted`] for `q` (see [`q_list`]). The page of such a search, newest or
/// oldest first, is read whichever way visits fewer leads: through the trigram index
/// (every match, then sorted), or along the project's leads by creation time, checking
/// each, which a common term fills after a few.
pub(crate) fn list(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
) -> Result<RecordPage, Error> {
    if !query.q.is_empty() {
        return q_list(conn, project, query);
    }
    let searched = search_alone(query);
    let (indexed, params) = filter(project, query, Terms::Indexed);
    let total: i64 = if let Some(total) = kept_total(conn, project, query)? {
        total
    } else if let Some(term) = &searched {
        count_matches(conn, project, term)?
    } else {
        conn.prepare_cached(&format!("SELECT count(*) FROM leads WHERE {indexed}"))?
            .query_row(params_from_iter(&params), |row| row.get(0))?
    };
    let total = u64::try_from(total).unwrap_or_default();
    let (filter, params) = match searched.is_some() && walks(conn, project, query, total)? {
        true => filter(project, query, Terms::Checked),
        false => (indexed, params),
    };
    let records = if query.offset() >= total {
        Vec::new()
    } else {
        let sql = format!(
            "SELECT {LEAD_COLUMNS} FROM leads WHERE {filter} ORDER BY {} LIMIT ? OFFSET ?",
            order_by(query)
        );
        read(conn, &sql, page_params(query, params))?
    };
    Ok(RecordPage {
        records,
        total,
        total_is_lower_bound: false,
    })
}

/// A page of a `q` search, and its total counted up to [`LeadQuery::counted`]: found
/// through its words' index, which it reads only as far as that bound (see
/// [`q_matches`]). When they are all counted, the page is sorted from them, and only its
/// leads are read ([`sorted_page`]). When more match, a page newest or oldest first is
/// the first matches by id, with the few leads out of creation order besides
/// ([`ordered_page`]); failing that, it is looked for along the creation times among the
/// [`WALKED`] leads where it starts, checking each, which such a search fills after a
/// few; else the matches are read through the index and sorted.
fn q_list(conn: &Connection, project: ProjectId, query: &LeadQuery) -> Result<RecordPage, Error> {
    let bound = query.counted().unwrap_or(u64::MAX);
    let lookup = q_lookup(conn, project, query)?;
    // The count keeps the ids it finds: when they are all the matches, the page is read
    // from them without reading the words' index again.
    let columns = "leads.id, leads.created_at";
    let (matches, params) = q_matches(project, query, lookup.clone(), columns, bound);
    let found: Vec<(i64, i64)> = conn
        .prepare_cached(&matches)?
        .query_map(params_from_iter(&params), |row| {
            Ok((row.get(0)?, row.get(1)?))
        })?
        .collect::<Result<_, _>>()?;
    let total = found.len() as u64;
    let counted_all = query.counted_all(total);
    let shown = total
        .saturating_sub(query.offset())
        .min(u64::from(query.limit));
    let records = if shown == 0 {
        Vec::new()
    } else if counted_all {
        sorted_page(conn, query, &found)?
    } else if let Some(page) = lookup
        .map(|lookup| ordered_page(conn, project, query, lookup))
        .transpose()?
        .flatten()
    {
        page
    } else {
        let walked =
            match query.sort.field == SortField::CreatedAt && !few_grams(conn, project, query)? {
                true => walk_page(conn, project, query)?,
                false => Vec::new(),
            };
        if walked.len() as u64 == shown {
            walked
        } else {
            let (filter, params) = filter(project, query, Terms::Indexed);
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

/// Leads out of creation order (migration 42) up to which a page of a `q` search is read
/// in its index's order of ids ([`ordered_page`]): each of them is checked on every page.
const BREAKS_CHECKED: i64 = 1_000;

/// The page of a `q` search sorted by creation time, when fewer than [`BREAKS_CHECKED`]
/// of the project's leads are out of creation order (`lead_order_breaks`): the others'
/// ids are in creation order, so the page is among the first matches `lookup` finds by
/// id, up to the page's end, and the out-of-order leads that match. `None` when more
/// leads are out of order, or the search is not sorted by creation time.
fn ordered_page(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
    lookup: (&str, String),
) -> Result<Option<Vec<LeadRecord>>, Error> {
    if query.sort.field != SortField::CreatedAt {
        return Ok(None);
    }
    let breaks: i64 = conn
        .prepare_cached(
            "SELECT count(*) FROM (SELECT 1 FROM lead_order_breaks WHERE project_id = ?1 LIMIT ?2)",
        )?
        .query_row((project.0, BREAKS_CHECKED), |row| row.get(0))?;
    if breaks >= BREAKS_CHECKED {
        return Ok(None);
    }
    let (filter, filter_params) = filter(project, query, Terms::Checked);
    // The first matches by id are those in order: the out-of-order ones come besides.
    let in_order = format!(
        "{filter} AND NOT EXISTS (SELECT 1 FROM lead_order_breaks
           WHERE project_id = leads.project_id AND lead_id = leads.id)"
    );
    let order = format!("ORDER BY hits.key {}", direction(query));
    let (first, mut params) = hits(project, lookup, "leads.id", &in_order, &order);
    params.extend(filter_params.iter().cloned());
    let end = query.offset().saturating_add(u64::from(query.limit));
    params.push(SqlValue::Integer(i64::try_from(end).unwrap_or(i64::MAX)));
    params.push(SqlValue::Integer(project.0));
    params.extend(filter_params);
    let ids = format!(
        "SELECT id FROM leads WHERE id IN (
           SELECT id FROM ({first} LIMIT ?)
           UNION ALL
           SELECT leads.id FROM (SELECT lead_id FROM lead_order_breaks WHERE project_id = ?)
             AS breaks CROSS JOIN leads ON leads.id = breaks.lead_id WHERE {filter}
         ) ORDER BY {} LIMIT ? OFFSET ?",
        order_by(query)
    );
    read_page(conn, query, &ids, params).map(Some)
}

/// How many leads, in creation order from where a page of a `q` search starts, are
/// checked for its words before its index is read instead: about 2 ms.
const WALKED: i64 = 2_000;

/// Fewer leads than this holding a `q` search's short words are read through their
/// index (about 10 ms) without a walk first.
const FEW_GRAMS: i64 = 10_000;

/// Whether every word of `query`'s `q` is short and fewer than [`FEW_GRAMS`] of the
/// project's leads hold them all: then a walk, which finds a page only where its matches
/// are dense, is not worth trying. Their index tells at little cost (one token a word, no
/// positions), which the trigram index does not for a common word.
fn few_grams(conn: &Connection, project: ProjectId, query: &LeadQuery) -> Result<bool, Error> {
    let Some(("leads_q_grams", grams)) = q_index(&query.q) else {
        return Ok(false);
    };
    let (low, high) = project_rowids(project);
    let held: i64 = conn
        .prepare_cached(
            "SELECT count(*) FROM (SELECT 1 FROM leads_q_grams
             WHERE leads_q_grams MATCH ?1 AND rowid BETWEEN ?2 AND ?3 LIMIT ?4)",
        )?
        .query_row((grams, low, high, FEW_GRAMS), |row| row.get(0))?;
    Ok(held < FEW_GRAMS)
}

/// The page of a `q` search (sorted by creation time) among the [`WALKED`] leads, of
/// those its other filters leave, from where the page starts: fewer leads than the page
/// holds when the matches are not there.
fn walk_page(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
) -> Result<Vec<LeadRecord>, Error> {
    let others = LeadQuery {
        q: Vec::new(),
        ..query.clone()
    };
    let (filter, mut params) = filter(project, &others, Terms::Checked);
    let order = order_by(query);
    let walked = i64::try_from(query.offset())
        .unwrap_or(i64::MAX)
        .saturating_add(WALKED);
    params.push(SqlValue::Integer(walked));
    let mut checks = Vec::new();
    for word in &query.q {
        checks.push("instr(q_text, ?) > 0".to_owned());
        params.push(SqlValue::Text(word.clone()));
    }
    // SQLite reads the inner query in its index's order as the outer one asks, and the
    // outer ORDER BY is that order: nothing is sorted, and the reading stops at the page.
    let ids = format!(
        "SELECT id FROM (SELECT id, created_at, q_text FROM leads WHERE {filter}
           ORDER BY {order} LIMIT ?)
         WHERE {} ORDER BY {order} LIMIT ? OFFSET ?",
        checks.join(" AND ")
    );
    read_page(conn, query, &ids, params)
}

/// Whether a page of a search held by `total` of the project's leads, newest or oldest
/// first, costs less read along the creation times than through its index: it is found
/// there after about `(offset + limit) * project / total` leads.
fn walks(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
    total: u64,
) -> Result<bool, Error> {
    if query.sort.field != SortField::CreatedAt {
        return Ok(false);
    }
    let in_project: i64 = conn
        .prepare_cached("SELECT total FROM lead_counts WHERE project_id = ?1")?
        .query_row([project.0], |row| row.get(0))
        .optional()?
        .unwrap_or(0);
    let wanted = u128::from(query.offset() + u64::from(query.limit));
    let in_project = u128::try_from(in_project).unwrap_or_default();
    Ok(wanted * in_project < u128::from(total) * u128::from(total))
}

/// `params` with the LIMIT and OFFSET of `query`'s page after them.
fn page_params(query: &LeadQuery, mut params: Vec<SqlValue>) -> Vec<SqlValue> {
    params.push(SqlValue::Integer(i64::from(query.limit)));
    params.push(SqlValue::Integer(
        i64::try_from(query.offset()).unwrap_or(i64::MAX),
    ));
    params
}

/// The leads that `sql` reads with `params`.
fn read(conn: &Connection, sql: &str, params: Vec<SqlValue>) -> Result<Vec<LeadRecord>, Error> {
    conn.prepare_cached(sql)?
        .query_and_then(params_from_iter(&params), LeadRecord::of)?
        .collect()
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
    read(conn, &sql, page_params(query, params))
}

/// At most `bound` of the leads matching `query`, a `q` search, as `SELECT {columns}`
/// (of `leads`) and its parameters. They are found through `lookup`, its words' index
/// ([`q_lookup`]), which SQLite reads as it goes, checking every word and the other
/// filters on each lead found: the bound stops the reading after that many matches,
/// however many there are. Without a lookup (the other filters leave few leads, a
/// member's own, say), those are read through their index instead, and the words checked
/// on each.
fn q_matches(
    project: ProjectId,
    query: &LeadQuery,
    lookup: Option<(&str, String)>,
    columns: &str,
    bound: u64,
) -> (String, Vec<SqlValue>) {
    let (filter, mut params) = filter(project, query, Terms::Checked);
    let bound = SqlValue::Integer(i64::try_from(bound).unwrap_or(i64::MAX));
    let Some(lookup) = lookup else {
        params.push(bound);
        let sql = format!("SELECT {columns} FROM leads WHERE {filter} LIMIT ?");
        return (sql, params);
    };
    let (hits, mut all) = hits(project, lookup, columns, &filter, "");
    all.append(&mut params);
    all.push(bound);
    (format!("{hits} LIMIT ?"), all)
}

/// `SELECT {columns}` of the project's leads that `lookup` finds in its index and `filter`
/// passes, in `order` (empty, or of `hits.key`: the index's rowid, whose order is the
/// leads' ids'), and the parameters of the lookup; the filter's follow. The index drives
/// (CROSS JOIN), and each lead is read by id; its only columns are the rowid and the
/// lead's id, so the filter's names are the lead's.
fn hits(
    project: ProjectId,
    (table, matched): (&str, String),
    columns: &str,
    filter: &str,
    order: &str,
) -> (String, Vec<SqlValue>) {
    let (low, high) = project_rowids(project);
    let sql = format!(
        "SELECT {columns} FROM (SELECT rowid AS key, rowid & {} AS hit FROM {table}
           WHERE {table} MATCH ? AND rowid BETWEEN ? AND ?) AS hits
         CROSS JOIN leads ON leads.id = hits.hit WHERE {filter} {order}",
        (1_i64 << LEAD_BITS) - 1
    );
    let params = vec![
        SqlValue::Text(matched),
        SqlValue::Integer(low),
        SqlValue::Integer(high),
    ];
    (sql, params)
}

/// The index a `q` search's matches are found through, and its query: `None` when the
/// other filters leave so few leads that each is checked instead ([`few_others`]). The
/// words of three characters or more are looked up by the trigrams of each that the
/// fewest of the project's newest leads hold, and a word most of them hold is left out
/// when another is rarer: the index's cost is a seek in each looked-up trigram's list for
/// each lead the rarest one finds, and a trigram nearly every lead holds ("for" of
/// "okafor", or "example" of every address at example.com) filters out little. Every
/// word is still checked on each lead found ([`q_matches`]).
fn q_lookup(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
) -> Result<Option<(&'static str, String)>, Error> {
    if q_index(&query.q).is_none() || few_others(conn, project, query)? {
        return Ok(None);
    }
    let long: Vec<&String> = query
        .q
        .iter()
        .filter(|word| phrase(word).is_some())
        .collect();
    if long.is_empty() {
        return Ok(q_index(&query.q));
    }
    let mut probes: Vec<String> = Vec::new();
    for word in &long {
        for probe in std::iter::once((*word).clone()).chain(trigrams(word)) {
            if !probes.contains(&probe) {
                probes.push(probe);
            }
        }
    }
    let counts = sample(conn, project, &probes)?;
    let held = |probe: &str| {
        let at = probes.iter().position(|p| p == probe);
        at.map_or(0, |at| counts[at])
    };
    let rarer: Vec<&String> = long
        .iter()
        .copied()
        .filter(|word| held(word) * 2 <= SAMPLED)
        .collect();
    let looked_up = if rarer.is_empty() { long } else { rarer };
    let mut parts: Vec<String> = Vec::new();
    for word in looked_up {
        let grams = trigrams(word);
        let fewest = grams.iter().map(|gram| held(gram)).min().unwrap_or(0);
        for gram in grams.iter().filter(|gram| held(gram) == fewest) {
            if let Some(part) = phrase(gram).filter(|part| !parts.contains(part)) {
                parts.push(part);
            }
        }
    }
    Ok(Some(("leads_q", parts.join(" AND "))))
}

/// The strings of three characters `word` holds, in order.
fn trigrams(word: &str) -> Vec<String> {
    let chars: Vec<char> = word.chars().collect();
    chars.windows(3).map(|gram| gram.iter().collect()).collect()
}

/// How many of the project's [`SAMPLED`] newest leads hold each of `probes` in their `q`
/// text.
fn sample(conn: &Connection, project: ProjectId, probes: &[String]) -> Result<Vec<i64>, Error> {
    let columns = vec!["ifnull(sum(instr(q_text, ?) > 0), 0)"; probes.len()].join(", ");
    let mut params: Vec<SqlValue> = probes
        .iter()
        .map(|probe| SqlValue::Text(probe.clone()))
        .collect();
    params.push(SqlValue::Integer(project.0));
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {columns} FROM (SELECT q_text FROM leads WHERE project_id = ?
               ORDER BY created_at DESC LIMIT {SAMPLED})"
        ))?
        .query_row(params_from_iter(&params), |row| {
            (0..probes.len()).map(|column| row.get(column)).collect()
        })?)
}

/// How many of the project's newest leads tell which of a `q` search's words are common
/// ([`q_lookup`]).
const SAMPLED: i64 = 200;

/// Fewer leads than this, left by a `q` search's other filters, are each checked for its
/// words rather than found through the words' index.
const FEW_OTHERS: i64 = 2_000;

/// Whether the filters of `query` but `q` leave fewer than [`FEW_OTHERS`] of the
/// project's leads: from the kept counts when they can tell, else counted up to that.
fn few_others(conn: &Connection, project: ProjectId, query: &LeadQuery) -> Result<bool, Error> {
    let others = LeadQuery {
        q: Vec::new(),
        ..query.clone()
    };
    let left: i64 = if let Some(total) = kept_total(conn, project, &others)? {
        total
    } else {
        let (filter, params) = filter(project, &others, Terms::Indexed);
        conn.prepare_cached(&format!(
            "SELECT count(*) FROM (SELECT 1 FROM leads WHERE {filter} LIMIT {FEW_OTHERS})"
        ))?
        .query_row(params_from_iter(&params), |row| row.get(0))?
    };
    Ok(left < FEW_OTHERS)
}

/// The term of a `search` that filters by nothing else (but the default statuses), whose
/// trigram index counts its matches alone: of three characters or more.
fn search_alone(query: &LeadQuery) -> Option<String> {
    let alone = LeadQuery {
        search: None,
        ..query.clone()
    }
    .is_unfiltered();
    let term = query.search.as_deref().map(search_term)?;
    (alone && phrase(&term).is_some()).then_some(term)
}

/// The range of trigram index rowids of the project's leads.
fn project_rowids(project: ProjectId) -> (i64, i64) {
    let low = project.0 << LEAD_BITS;
    (low, low | ((1 << LEAD_BITS) - 1))
}

/// The trigram index's query for a search term: the phrase of its trigrams, which the
/// case-sensitive index matches exactly where the (lowercased) text contains the term.
/// `None` for terms under three characters, which have no trigram, and for terms holding
/// a NUL, which FTS5 would read as the query's end.
fn phrase(term: &str) -> Option<String> {
    (term.chars().count() >= 3 && !term.contains('\0'))
        .then(|| format!("\"{}\"", term.replace('"', "\"\"")))
}

/// The `q` index's query for the `q` words that have trigrams: each word's phrase, all of
/// them required; `None` when no word has three characters.
fn q_match(words: &[String]) -> Option<String> {
    let phrases: Vec<String> = words.iter().filter_map(|word| phrase(word)).collect();
    (!phrases.is_empty()).then(|| phrases.join(" AND "))
}

/// The index that finds the words of `q`, and its query: the trigram index (`leads_q`)
/// for the words of three characters or more, else, every word being short, the short
/// words' own (`leads_q_grams`). The trigram index leaves fewer leads to check the short
/// words on, when it has a word to look up.
fn q_index(words: &[String]) -> Option<(&'static str, String)> {
    match q_match(words) {
        Some(phrases) => Some(("leads_q", phrases)),
        None => grams::query(words).map(|grams| ("leads_q_grams", grams)),
    }
}

/// Adds to a filter that the lead is among the project's matches of `query` in the
/// search index `table` (`leads_search`, `leads_q` or `leads_q_grams`).
fn in_index(
    sql: &mut String,
    params: &mut Vec<SqlValue>,
    (table, query): (&str, String),
    project: ProjectId,
) {
    let (low, high) = project_rowids(project);
    sql.push_str(&format!(
        " AND id IN (SELECT rowid & {} FROM {table}
           WHERE {table} MATCH ? AND rowid BETWEEN ? AND ?)",
        (1_i64 << LEAD_BITS) - 1
    ));
    params.extend([
        SqlValue::Text(query),
        SqlValue::Integer(low),
        SqlValue::Integer(high),
    ]);
}

/// How many of the project's leads, spam left out, hold `term` (a [`search_alone`]'s): its
/// matches in the trigram index, less the spam leads among them (counted one by one, but
/// through the index of their status).
fn count_matches(conn: &Connection, project: ProjectId, term: &str) -> Result<i64, Error> {
    let (low, high) = project_rowids(project);
    let matches: i64 = conn
        .prepare_cached(
            "SELECT count(*) FROM leads_search
             WHERE leads_search MATCH ?1 AND rowid BETWEEN ?2 AND ?3",
        )?
        .query_row((phrase(term), low, high), |row| row.get(0))?;
    let spam: i64 = conn
        .prepare_cached(&format!(
            "SELECT count(*) FROM leads
             WHERE project_id = ?1 AND status = '{}' AND instr(search_text, ?2) > 0",
            LeadStatus::Spam.as_ref()
        ))?
        .query_row((project.0, term), |row| row.get(0))?;
    Ok(matches - spam)
}

/// How a listing finds the leads holding a search's terms (`search`'s and `q`'s words).
#[derive(Clone, Copy)]
pub(crate) enum Terms {
    /// Through an index: the trigram indexes for terms of three characters or more (a
    /// `q`'s shorter words checked on each lead found), or the short words' own index
    /// when every word of `q` is short.
    Indexed,
    /// The trigram indexes for the longer terms; `q`'s short words checked on each lead
    /// the other filters leave (an export, which reads every match anyway).
    ShortChecked,
    /// Each term checked on every lead the other filters leave, in their index's order:
    /// a walk along the creation times, which a common term fills soon.
    Checked,
}

/// The WHERE clause of a listing and its parameters. Always starts with the project, so
/// every plan is an index search within it.
pub(crate) fn filter(
    project: ProjectId,
    query: &LeadQuery,
    terms: Terms,
) -> (String, Vec<SqlValue>) {
    // A search of three characters or more is looked up in the trigram index, and the
    // leads it finds are read by id: the other columns are then only checked (a `+` keeps
    // SQLite from walking, say, every open lead of the project to test each one against
    // the search's few).
    let term = query.search.as_deref().map(search_term);
    let search_phrase = match terms {
        Terms::Checked => None,
        _ => term.as_deref().and_then(phrase),
    };
    let q_indexed = match terms {
        Terms::Indexed => q_index(&query.q),
        Terms::ShortChecked => q_match(&query.q).map(|phrases| ("leads_q", phrases)),
        Terms::Checked => None,
    };
    let by_search = search_phrase.is_some() || q_indexed.is_some();
    // A member's leads are few: found through their own index (`leads_assigned`), which
    // SQLite, without statistics, would pass over for a range of dates or a status.
    let by_assignee = matches!(query.assignee, Some(AssigneeFilter::User(_)));
    let column = |name: &str| {
        if by_search || by_assignee && name != "project_id" {
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
    if let Some(term) = term {
        match search_phrase {
            Some(phrase) => in_index(&mut sql, &mut params, ("leads_search", phrase), project),
            // Too short for a trigram (or walked): each lead is checked.
            None => {
                sql.push_str(" AND instr(search_text, ?) > 0");
                params.push(SqlValue::Text(term));
            }
        }
    }
    // A `q` search: its words of three characters or more in its trigram index at once,
    // and the shorter ones checked on each lead that index leaves; or, when all its words
    // are short, those in their own index.
    let index = q_indexed.as_ref().map(|(table, _)| *table);
    if let Some(indexed) = q_indexed {
        in_index(&mut sql, &mut params, indexed, project);
    }
    let checked = |word: &&String| match index {
        Some("leads_q") => phrase(word).is_none(),
        Some(_) => !grams::is_short(word),
        None => true,
    };
    for word in query.q.iter().filter(checked) {
        sql.push_str(" AND instr(q_text, ?) > 0");
        params.push(SqlValue::Text(word.clone()));
    }
    if let Some(duplicates) = query.duplicates {
        sql.push_str(&format!(" AND {}", column(&duplicates.condition())));
    }
    if let Some(assignee) = query.assignee {
        let condition = assignee.condition();
        match by_search {
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
    let (filter, params) = filter(project, query, Terms::ShortChecked);
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
            let (filter, params) = filter(ProjectId(1), &query, Terms::Indexed);
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

    /// A search's total is counted in the trigram index alone, and a common term's page is
    /// read along the project's creation-time index, in both directions, without sorting.
    #[test]
    fn searches_count_in_the_index_and_walk_in_order() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::schema::migrate(&mut conn).unwrap();
        let plan = |sql: &str| crate::rows::without_assignee(plan_of(&conn, sql, &[]));
        let count = plan(
            "SELECT count(*) FROM leads_search
             WHERE leads_search MATCH '\"ada\"' AND rowid BETWEEN 0 AND 9",
        );
        assert_eq!(count.len(), 1, "{count:?}");
        assert!(
            count[0].starts_with("SCAN leads_search VIRTUAL TABLE INDEX"),
            "{count:?}"
        );
        for direction in [SortDirection::Asc, SortDirection::Desc] {
            let query = LeadQuery {
                search: Some("ada".into()),
                sort: Sort {
                    field: SortField::CreatedAt,
                    direction,
                },
                ..LeadQuery::default()
            };
            // `search`'s walk, and `q`'s (two words).
            let q = LeadQuery {
                search: None,
                q: vec!["ada".into(), "kay".into()],
                ..query.clone()
            };
            for query in [query, q] {
                let (walk, _) = filter(ProjectId(1), &query, Terms::Checked);
                let walk = plan(&format!(
                    "SELECT {LEAD_COLUMNS} FROM leads WHERE {} ORDER BY {} LIMIT 10 OFFSET 0",
                    walk.replacen('?', "1", 1).replace('?', "'ada'"),
                    order_by(&query)
                ));
                assert_eq!(
                    walk,
                    ["SEARCH leads USING INDEX leads_created (project_id=?)"],
                    "{direction:?}"
                );
            }
        }
        // A `q` search is counted through its words' index, which drives: each lead it
        // finds is read by id, so the count's LIMIT stops the index's reading too. When
        // the other filters leave few leads (no open lead yet), those are read instead.
        let q_plan = |words: &[&str]| {
            let query = LeadQuery {
                q: words.iter().map(|word| (*word).to_owned()).collect(),
                status: Some(vec![LeadStatus::Open]),
                ..LeadQuery::default()
            };
            let lookup = q_lookup(&conn, ProjectId(1), &query).unwrap();
            let (sql, params) = q_matches(ProjectId(1), &query, lookup, "1", 1_001);
            crate::rows::without_assignee(plan_of(&conn, &sql, &params))
        };
        assert_eq!(
            q_plan(&["ada"]),
            ["SEARCH leads USING INDEX leads_status (project_id=? AND status=?)"]
        );
        conn.execute_batch(
            "PRAGMA foreign_keys = OFF;
             INSERT INTO lead_status_counts (project_id, status, total) VALUES (1, 'open', 2000);",
        )
        .unwrap();
        for (words, index) in [
            (vec!["ada"], "leads_q"),
            (vec!["ada", "k"], "leads_q"),
            (vec!["ad", "k"], "leads_q_grams"),
        ] {
            let steps = q_plan(&words);
            assert_eq!(steps.len(), 2, "{words:?}: {steps:?}");
            assert!(
                steps[0].starts_with(&format!("SCAN {index} VIRTUAL TABLE INDEX 0:M")),
                "{words:?}: {steps:?}"
            );
            assert_eq!(
                steps[1], "SEARCH leads USING INTEGER PRIMARY KEY (rowid=?)",
                "{words:?}"
            );
        }
    }

    /// A `q` search's index is asked for the trigrams of each word the fewest of the
    /// project's newest leads hold, and not for a word most of them hold, unless every
    /// word is one.
    #[test]
    fn common_words_and_trigrams_are_checked_on_each_lead_rather_than_looked_up() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::schema::migrate(&mut conn).unwrap();
        conn.execute_batch(
            "PRAGMA foreign_keys = OFF;
             INSERT INTO lead_status_counts (project_id, status, total) VALUES (1, 'open', 5000);",
        )
        .unwrap();
        for n in 0..300 {
            // Every lead is at example.com and asks for a quote; one in ten is an Okafor.
            let name = if n % 10 == 0 { "okafor" } else { "hopper" };
            conn.execute(
                "INSERT INTO leads (project_id, status, created_at, updated_at, data,
                     search_text, has_gclid, has_cid, has_fbp, has_fbc, q_text)
                 VALUES (1, 'open', ?1, 0, '{}', '', 0, 0, 0, 0, ?2)",
                (
                    n,
                    format!("lead{n}\n{name}\nlead{n}@example.com\nquote for me"),
                ),
            )
            .unwrap();
        }
        let lookup = |words: &[&str]| {
            let query = LeadQuery {
                q: words.iter().map(|word| (*word).to_owned()).collect(),
                ..LeadQuery::default()
            };
            q_lookup(&conn, ProjectId(1), &query).unwrap()
        };
        let looked_up = |query: &str| Some(("leads_q", query.to_owned()));
        // "lead2" is in half of the newest 200 ("lead200" to "lead299"), "lea" and "ead"
        // in all of them.
        assert_eq!(lookup(&["lead2", "example"]), looked_up("\"ad2\""));
        assert_eq!(
            lookup(&["okafor"]),
            looked_up("\"oka\" AND \"kaf\" AND \"afo\"")
        );
        assert_eq!(
            lookup(&["example", "com", "e"]),
            looked_up("\"exa\" AND \"xam\" AND \"amp\" AND \"mpl\" AND \"ple\" AND \"com\"")
        );
        assert_eq!(
            lookup(&["e", "x"]),
            Some((
                "leads_q_grams",
                grams::query(&["e".into(), "x".into()]).unwrap()
            ))
        );
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
            let (filter, params) = filter(ProjectId(1), &query, Terms::Indexed);
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
            let (filter, mut params) = filter(ProjectId(1), &query, Terms::Indexed);
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
