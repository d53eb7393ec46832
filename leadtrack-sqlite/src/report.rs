//! Reports: one pass over the project's leads in a range of creation times, through the
//! covering index `leads_report` (migration 6), counted by core's [`ReportBuilder`].

use leadtrack_core::store::sql::NOT_SPAM;
use std::str::FromStr;

use leadtrack_core::report::{
    Report, ReportBuilder, ReportLead, ReportQuery, TouchedLead, Touchpoint,
};
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::{ConversionId, ProjectId};
use rusqlite::types::Type;
use rusqlite::{Connection, Row};

use crate::rows::Error;

/// The report of the project's leads created in `query`'s range. Rows are read borrowed
/// (no string is copied unless it names a new group), so the cost is one index step per
/// lead.
pub(crate) fn report(
    conn: &Connection,
    project: ProjectId,
    query: &ReportQuery,
) -> Result<Report, Error> {
    let mut statement = conn.prepare_cached(&sql(query.touch))?;
    let mut rows = statement.query((
        project.0,
        to_millis(&query.start()),
        to_millis(&query.end()),
    ))?;
    let labels = crate::admin::labels(conn, project)?;
    let mut builder = ReportBuilder::new(query, &labels);
    while let Some(row) = rows.next()? {
        let conversion_id = match text(row, 4)? {
            None => None,
            Some(text) => Some(ConversionId::from_str(text).map_err(|_| Error::Corrupt {
                column: "conversion_id",
                value: text.to_owned(),
            })?),
        };
        builder.add(ReportLead {
            created_at: from_millis(row.get(0)?),
            source: text(row, 1)?,
            medium: text(row, 2)?,
            campaign: text(row, 3)?,
            conversion_id,
            status: crate::rows::parse("leads.status", row.get::<_, String>(6)?)?,
            price: row.get(5)?,
        });
    }
    // The leads a person touched: how long each waited, and for whom.
    let mut statement = conn.prepare_cached(&touch_sql(query.touch))?;
    let mut rows = statement.query((
        project.0,
        to_millis(&query.start()),
        to_millis(&query.end()),
    ))?;
    while let Some(row) = rows.next()? {
        builder.add_touch(TouchedLead {
            source: text(row, 0)?,
            medium: text(row, 1)?,
            campaign: text(row, 2)?,
            waited_ms: row.get(3)?,
            by: text(row, 4)?.unwrap_or_default(),
        });
    }
    Ok(builder.finish())
}

/// The first touches' query, with the report's parameters.
fn touch_sql(touch: Touchpoint) -> String {
    let touch = touch.as_ref();
    format!(
        "SELECT {touch}_source, {touch}_medium, {touch}_campaign, first_touch_at - created_at,
                first_touch_by
         FROM leads WHERE project_id = ?1 AND created_at >= ?2 AND created_at < ?3
           AND first_touch_at IS NOT NULL AND {NOT_SPAM}"
    )
}

/// A text column, borrowed from the row.
fn text<'row>(row: &'row Row<'_>, column: usize) -> Result<Option<&'row str>, Error> {
    row.get_ref(column)?.as_str_or_null().map_err(|err| {
        Error::Sql(rusqlite::Error::FromSqlConversionFailure(
            column,
            Type::Text,
            Box::new(err),
        ))
    })
}

/// The report's query: its parameters are the project, the start and the end (exclusive).
fn sql(touch: Touchpoint) -> String {
    let touch = match touch {
        Touchpoint::First => "first",
        Touchpoint::Last => "last",
    };
    format!(
        "SELECT created_at, {touch}_source, {touch}_medium, {touch}_campaign, conversion_id, price,
                status
         FROM leads WHERE project_id = ?1 AND created_at >= ?2 AND created_at < ?3
           AND {NOT_SPAM}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;
    use leadtrack_core::report::Grouping;

    /// A report reads the covering index alone, within the project and the range.
    #[test]
    fn a_report_reads_only_its_covering_index() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::schema::migrate(&mut conn).unwrap();
        for touch in [Touchpoint::First, Touchpoint::Last] {
            let query = ReportQuery {
                from: NaiveDate::from_ymd_opt(2026, 3, 1).unwrap(),
                to: NaiveDate::from_ymd_opt(2026, 3, 31).unwrap(),
                touch,
                by: Grouping::SourceMedium,
            };
            let plan: String = conn
                .query_row(
                    &format!("EXPLAIN QUERY PLAN {}", sql(touch)),
                    (1, to_millis(&query.start()), to_millis(&query.end())),
                    |row| row.get(3),
                )
                .unwrap();
            assert_eq!(
                plan,
                "SEARCH leads USING COVERING INDEX leads_report (project_id=? AND created_at>? AND created_at<?)"
            );
        }
    }
}
