//! The kept counts a listing's totals and tabs are read from, when they can tell: per
//! status, per facet's value and status, and per hour of creation and status (migrations 8,
//! 27 and 41; triggers keep them with the leads, in the same transaction).

use leadtrack_core::request::LeadQuery;
use leadtrack_core::request::query::{CreatedRange, Facet, FacetValue};
use leadtrack_core::time::to_millis;
use leadtrack_core::types::ProjectId;
use rusqlite::Connection;

use crate::rows::Error;

/// The counts per status of the leads matching `query` but for its status, when the store
/// keeps them: for a query that filters by status alone, or besides it by one facet
/// ([`LeadQuery::only_facet`]) or a range of dates ([`LeadQuery::only_dates`]).
pub(crate) fn kept_counts(
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

#[cfg(test)]
mod tests {
    use super::*;

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
