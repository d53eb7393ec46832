//! The kept counts a listing's totals and tabs are read from, when they can tell: per
//! status, per facet's value and status, and per hour of creation and status (migrations 8,
//! 27 and 41); and the report of spend against leads, per day and what it tells leads
//! apart by (migration 56).
//!
//! They are written after the leads' commit (migration 51): the writer adds the new leads
//! to them ([`add`]) in the batches that keep the words' index, so they hold the leads up
//! to its mark (`lead_words_state.indexed_to`); a reader adds the few above it, so counts
//! are exact from a lead's first moment. A change or deletion of a counted lead adjusts
//! them by trigger, in its own transaction.

use std::sync::LazyLock;

use leadtrack_core::request::LeadQuery;
use leadtrack_core::request::query::{CreatedRange, Facet, FacetValue};
use leadtrack_core::time::to_millis;
use leadtrack_core::types::ProjectId;
use rusqlite::Connection;

use crate::rows::Error;

include!(concat!(env!("OUT_DIR"), "/facets.rs"));

/// The project's leads the kept counts do not hold yet, read by id: the `+` keeps the
/// planner from the project's indexes, through which it would read all of its leads.
const ABOVE_MARK: &str = "id > (SELECT indexed_to FROM lead_words_state) AND +project_id = ?1";

/// One kept count: its table, its key's columns, the columns it sums, and the query that
/// tallies the leads with ids in `(?1, ?2]` into its rows (key, then sums).
pub(crate) struct Tally {
    /// The table of the kept count.
    pub(crate) table: &'static str,
    /// The columns of its key.
    pub(crate) key: &'static str,
    /// The columns it sums: `total`, and for the report's, `value`.
    pub(crate) sums: &'static [&'static str],
    /// The tally of the leads with ids in `(?1, ?2]`.
    pub(crate) select: String,
}

/// The four kept counts.
pub(crate) static TALLIES: LazyLock<[Tally; 4]> = LazyLock::new(|| {
    const RANGE: &str = "FROM leads WHERE id > ?1 AND id <= ?2";
    [
        Tally {
            table: "lead_status_counts",
            key: "project_id, status",
            sums: &["total"],
            select: format!("SELECT project_id, status, count(*) {RANGE} GROUP BY 1, 2"),
        },
        Tally {
            table: "lead_hour_counts",
            key: "project_id, hour, status",
            sums: &["total"],
            select: format!(
                "SELECT project_id, created_at / 3600000, status, count(*) {RANGE}
                 GROUP BY 1, 2, 3"
            ),
        },
        Tally {
            table: "lead_facet_counts",
            key: "project_id, facet, value, status",
            sums: &["total"],
            select: facet_tally(RANGE),
        },
        // What the report of spend against leads counts (migration 56's view).
        Tally {
            table: "lead_report_counts",
            key: REPORT_KEY,
            sums: &["total", "value"],
            select: format!(
                "SELECT {REPORT_KEY}, count(*), sum(price) FROM lead_report_rows
                 WHERE id > ?1 AND id <= ?2 GROUP BY {REPORT_KEY}"
            ),
        },
    ]
});

/// The tally of the leads `range` reads into the facets' counts. The leads are first
/// grouped by their text facets and status, with each flag summed; each group then gives
/// a row per facet: a text facet's value (unless null), and both values of each flag, the
/// leads with it and the others (unless none). Grouping first reads each lead once and
/// sorts a few hundred groups, where a row per lead and facet sorted 18 for each lead
/// (five times slower).
fn facet_tally(range: &str) -> String {
    let texts = FACETS.join(", ");
    let flags: Vec<String> = FLAGS.iter().map(|f| format!("sum({f}) AS {f}")).collect();
    // (facet, value, total) of each row a group gives.
    let rows: Vec<(&str, String, String)> = FACETS
        .iter()
        .map(|f| (*f, f.to_string(), "n".to_owned()))
        .chain(FLAGS.iter().map(|f| (*f, "'1'".to_owned(), f.to_string())))
        .chain(
            FLAGS
                .iter()
                .map(|f| (*f, "'0'".to_owned(), format!("n - {f}"))),
        )
        .collect();
    let (mut values, mut totals, mut facets) = (String::new(), String::new(), Vec::new());
    for (i, (facet, value, total)) in rows.iter().enumerate() {
        values.push_str(&format!(" WHEN {i} THEN {value}"));
        totals.push_str(&format!(" WHEN {i} THEN {total}"));
        facets.push(format!("('{facet}', {i})"));
    }
    format!(
        "SELECT project_id, facet, value, status, sum(total) FROM (
            SELECT project_id, f.column1 AS facet, status,
                CASE f.column2{values} END AS value, CASE f.column2{totals} END AS total
            FROM (
                SELECT project_id, status, {texts}, count(*) AS n, {flags} {range}
                GROUP BY project_id, status, {texts}
            ) JOIN (VALUES {facets}) AS f
         ) WHERE value IS NOT NULL AND total > 0 GROUP BY 1, 2, 3, 4",
        flags = flags.join(", "),
        facets = facets.join(", ")
    )
}

/// The key of the report's kept count: what the report tells leads apart by.
pub(crate) const REPORT_KEY: &str =
    "project_id, touch, day, source, campaign, campaign_id, conversion_id, status, clicked";

/// The value a facet counts: the text column, or the flag as text.
fn facet_value(facet: &str) -> String {
    match FLAGS.contains(&facet) {
        true => format!("CAST({facet} AS TEXT)"),
        false => facet.to_owned(),
    }
}

/// Adds the leads with ids in `(from, to]` to the kept counts: the writer's batch, in the
/// transaction that moves the mark to `to`.
pub(crate) fn add(conn: &Connection, from: i64, to: i64) -> Result<(), Error> {
    for tally in TALLIES.iter() {
        let Tally {
            table,
            key,
            sums,
            select,
        } = tally;
        let added: Vec<String> = sums
            .iter()
            .map(|sum| format!("{sum} = {sum} + excluded.{sum}"))
            .collect();
        conn.prepare_cached(&format!(
            "INSERT INTO {table} ({key}, {}) {select}
             ON CONFLICT ({key}) DO UPDATE SET {}",
            sums.join(", "),
            added.join(", ")
        ))?
        .execute((from, to))?;
    }
    Ok(())
}

/// The counts per status of the leads matching `query` but for its status, when the store
/// keeps them: for a query that filters by status alone, or besides it by one facet
/// ([`LeadQuery::only_facet`]) or a range of dates ([`LeadQuery::only_dates`]).
pub(crate) fn kept_counts(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
) -> Result<Option<Vec<(String, i64)>>, Error> {
    let counts = if query.only_statuses().is_some() {
        status_counts(conn, project)?
    } else if let Some(facet) = query.only_facet() {
        match facet_counts(conn, project, &facet)? {
            Some(counts) => counts,
            None => return Ok(None),
        }
    } else if let Some(range) = query.only_dates() {
        range_counts(conn, project, range)?
    } else {
        return Ok(None);
    };
    Ok(Some(counts))
}

/// How many leads match `query`, from the kept counts when they can tell
/// ([`kept_counts`]): the sum of those of its statuses.
pub(crate) fn kept_total(
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

/// The counts per status of the project's leads.
pub(crate) fn status_counts(
    conn: &Connection,
    project: ProjectId,
) -> Result<Vec<(String, i64)>, Error> {
    conn.prepare_cached(&format!(
        "SELECT status, sum(n) FROM (
            SELECT status, total AS n FROM lead_status_counts WHERE project_id = ?1
            UNION ALL SELECT status, 1 FROM leads WHERE {ABOVE_MARK}
         ) GROUP BY status"
    ))?
    .query_map([project.0], |row| Ok((row.get(0)?, row.get(1)?)))?
    .collect::<Result<_, _>>()
    .map_err(Error::from)
}

/// The counts per status of the project's leads with `facet`'s value, if it is counted. A
/// click id's absence is counted as its presence is: the facet's value is the flag.
fn facet_counts(
    conn: &Connection,
    project: ProjectId,
    facet: &Facet,
) -> Result<Option<Vec<(String, i64)>>, Error> {
    let column = facet.column;
    if !FACETS.iter().chain(FLAGS).any(|counted| *counted == column) {
        return Ok(None);
    }
    let value = match &facet.value {
        FacetValue::Text(value) => value.as_str(),
        FacetValue::Flag(true) => "1",
        FacetValue::Flag(false) => "0",
    };
    let counted = facet_value(column);
    conn.prepare_cached(&format!(
        "SELECT status, sum(n) FROM (
            SELECT status, total AS n FROM lead_facet_counts
                WHERE project_id = ?1 AND facet = ?2 AND value = ?3
            UNION ALL SELECT status, 1 FROM leads
                WHERE {ABOVE_MARK} AND {counted} = ?3
         ) GROUP BY status"
    ))?
    .query_map((project.0, column, value), |row| {
        Ok((row.get(0)?, row.get(1)?))
    })?
    .collect::<Result<_, _>>()
    .map(Some)
    .map_err(Error::from)
}

/// An hour in milliseconds: the span of each of the counts kept in `lead_hour_counts`.
const HOUR_MS: i64 = 3_600_000;

/// The counts per status of the project's leads created in `range` (inclusive, open where
/// `None`): its whole hours from the kept counts (and the leads above their mark), and the
/// partial hours at its ends lead by lead.
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
    conn.prepare_cached(&format!(
        "SELECT status, sum(n) FROM (
            SELECT status, total AS n FROM lead_hour_counts
                WHERE project_id = ?1 AND hour >= ?2 AND hour < ?3
            UNION ALL SELECT status, 1 FROM leads WHERE {ABOVE_MARK}
                AND created_at >= ?2 * 3600000 AND created_at < ?3 * 3600000
            UNION ALL SELECT status, 1 FROM leads
                WHERE project_id = ?1 AND created_at >= ?4 AND created_at < ?5
            UNION ALL SELECT status, 1 FROM leads
                WHERE project_id = ?1 AND created_at >= ?6 AND created_at < ?7
         ) GROUP BY status"
    ))?
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The leads above the mark are read by id, whatever else a count filters by: through
    /// the project's indexes, a count would read all of its leads.
    #[test]
    fn the_leads_above_the_mark_are_read_by_id() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::schema::migrate(&mut conn).unwrap();
        for filter in [
            "",
            "AND first_source = 'x'",
            "AND created_at >= 5 AND has_gclid = 1",
        ] {
            let sql = format!("SELECT status FROM leads WHERE {ABOVE_MARK} {filter}");
            let plan = crate::rows::plan_of(&conn, &sql, &[1.into()]);
            assert_eq!(
                plan[0], "SEARCH leads USING INTEGER PRIMARY KEY (rowid>?)",
                "{sql}"
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
}
