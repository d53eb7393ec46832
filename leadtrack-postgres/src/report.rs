//! Reports: the project's leads in a range of creation times, read through the index
//! `leads_created` and counted by core's [`ReportBuilder`].
//!
//! The leads are grouped in the database by what a report tells apart (the day, the
//! credited touch's columns, the conversion id), so that a range of many leads sends a
//! few rows, not one per lead; the builder is then fed each group's leads.

use deadpool_postgres::GenericClient;
use leadtrack_core::report::{
    Report, ReportBuilder, ReportLead, ReportQuery, TouchedLead, Touchpoint,
};
use leadtrack_core::store::sql::NOT_SPAM;
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::ProjectId;

use crate::Error;
use crate::rows::{self, all};

/// Milliseconds in a day.
const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// The report of the project's leads created in `query`'s range.
///
/// Each row read stands for the leads of one day, touch and conversion id: the builder
/// counts as many leads, the first carrying the sum of their prices (a report only sums
/// them), at the day's start (a report only tells days apart). The report is the one the
/// leads fed one by one would make.
pub(crate) async fn report(
    c: &impl GenericClient,
    project: ProjectId,
    query: &ReportQuery,
) -> Result<Report, Error> {
    let start = to_millis(&query.start());
    let end = to_millis(&query.end());
    let rows = all(c, &sql(query.touch), &[&project.0, &start, &end]).await?;
    let labels = crate::admin::labels(c, project).await?;
    let mut builder = ReportBuilder::new(query, &labels);
    for row in &rows {
        let day: i64 = row.try_get(0)?;
        let conversion_id = row
            .try_get::<_, Option<String>>(4)?
            .map(|id| rows::parse("conversion_id", id))
            .transpose()?;
        let leads: i64 = row.try_get(5)?;
        let lead = ReportLead {
            created_at: from_millis(start.saturating_add(day.saturating_mul(DAY_MS))),
            source: row.try_get(1)?,
            medium: row.try_get(2)?,
            campaign: row.try_get(3)?,
            conversion_id,
            status: rows::parse("leads.status", row.try_get::<_, String>(7)?)?,
            price: row.try_get(6)?,
        };
        for n in 0..leads {
            if n == 0 {
                builder.add(lead);
            } else {
                builder.add(ReportLead {
                    price: None,
                    ..lead
                });
            }
        }
    }
    // The leads a person touched: how long each waited, and for whom.
    for row in &all(c, &touch_sql(query.touch), &[&project.0, &start, &end]).await? {
        builder.add_touch(TouchedLead {
            source: row.try_get(0)?,
            medium: row.try_get(1)?,
            campaign: row.try_get(2)?,
            waited_ms: row.try_get(3)?,
            by: row.try_get::<_, Option<&str>>(4)?.unwrap_or_default(),
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
         FROM leads WHERE project_id = $1 AND created_at >= $2 AND created_at < $3
           AND first_touch_at IS NOT NULL AND {NOT_SPAM}"
    )
}

/// The report's query: its parameters are the project, the start and the end (exclusive),
/// in milliseconds. A row per day (counted from the start), touch and conversion id: the
/// number of leads and the sum of their prices.
fn sql(touch: Touchpoint) -> String {
    let touch = match touch {
        Touchpoint::First => "first",
        Touchpoint::Last => "last",
    };
    format!(
        "SELECT (created_at - $2) / {DAY_MS}, {touch}_source, {touch}_medium, {touch}_campaign,
                conversion_id, count(*), sum(price)::bigint, status
         FROM leads WHERE project_id = $1 AND created_at >= $2 AND created_at < $3
           AND {NOT_SPAM}
         GROUP BY 1, 2, 3, 4, 5, 8"
    )
}
