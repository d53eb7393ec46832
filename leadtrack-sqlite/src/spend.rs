//! Ad spend and the currency rates (migration 53), and the report of spend against leads:
//! one pass over the range's leads through the covering index `leads_report`, counted by
//! core's [`RoasBuilder`]; the leads whose touches name no source are read again with their
//! click ids' flags.

use std::str::FromStr;

use chrono::{DateTime, NaiveDate, Utc};
use leadtrack_core::integration::Secret;
use leadtrack_core::report::{ReportLead, Touchpoint};
use leadtrack_core::roas::{RoasBuilder, RoasQuery, RoasReport};
use leadtrack_core::spend::{ClickIds, FxRates, SpendPlatform, SpendRow, SpendSource};
use leadtrack_core::store::sql::NOT_SPAM;
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::{ConversionId, ProjectId};
use leadtrack_core::vault::{SPEND_TOKEN, Vault};
use rusqlite::{Connection, Row};

use crate::rows::{self, Error};

/// [`leadtrack_core::Spending::save_spend`].
pub(crate) fn save(
    conn: &Connection,
    project: ProjectId,
    spend: &[SpendRow],
) -> Result<u64, Error> {
    let mut upsert = conn.prepare_cached(
        "INSERT INTO spend (project_id, day, source, medium, account, campaign_key, campaign_id,
                            campaign, currency, cost_micros, clicks, impressions)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
         ON CONFLICT (project_id, day, source, medium, account, campaign_key) DO UPDATE SET
             campaign_id = excluded.campaign_id, campaign = excluded.campaign,
             currency = excluded.currency, cost_micros = excluded.cost_micros,
             clicks = excluded.clicks, impressions = excluded.impressions",
    )?;
    for row in spend {
        upsert.execute(rusqlite::params![
            project.0,
            row.date.to_string(),
            row.source,
            row.medium,
            row.account,
            row.key(),
            row.campaign_id,
            row.campaign,
            row.currency,
            row.cost_micros,
            row.clicks.map(|n| n as i64),
            row.impressions.map(|n| n as i64),
        ])?;
    }
    Ok(spend.len() as u64)
}

/// [`leadtrack_core::Spending::replace_spend`].
pub(crate) fn replace(
    conn: &Connection,
    project: ProjectId,
    (source, account): (&str, &str),
    (from, to): (NaiveDate, NaiveDate),
    spend: &[SpendRow],
) -> Result<u64, Error> {
    conn.prepare_cached(
        "DELETE FROM spend WHERE project_id = ?1 AND source = ?2 AND account = ?3
           AND day >= ?4 AND day <= ?5",
    )?
    .execute((project.0, source, account, from.to_string(), to.to_string()))?;
    save(conn, project, spend)
}

/// [`leadtrack_core::Spending::spend_sources`].
pub(crate) fn sources(
    conn: &Connection,
    vault: &Vault,
    project: ProjectId,
) -> Result<Vec<SpendSource>, Error> {
    conn.prepare_cached(
        "SELECT s.platform, s.account, s.base_url, t.token, s.synced_at, s.error
         FROM spend_sources s
         LEFT JOIN spend_tokens t ON t.project_id = s.project_id AND t.platform = s.platform
         WHERE s.project_id = ?1 ORDER BY s.platform",
    )?
    .query_and_then([project.0], |row| {
        let token: Option<String> = row.get(3)?;
        Ok(SpendSource {
            platform: rows::parse("spend_sources.platform", row.get(0)?)?,
            account: row.get(1)?,
            base_url: row.get(2)?,
            access_token: match token {
                Some(sealed) => Some(Secret::new(vault.open(SPEND_TOKEN, &sealed)?)),
                None => None,
            },
            synced_at: row.get::<_, Option<i64>>(4)?.map(from_millis),
            error: row.get(5)?,
        })
    })?
    .collect()
}

/// [`leadtrack_core::Spending::set_spend_source`].
pub(crate) fn set_source(
    conn: &Connection,
    vault: &Vault,
    project: ProjectId,
    source: &SpendSource,
) -> Result<(), Error> {
    let platform = source.platform.as_ref();
    conn.prepare_cached(
        "INSERT INTO spend_sources (project_id, platform, account, base_url) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (project_id, platform) DO UPDATE SET account = excluded.account,
             base_url = excluded.base_url, synced_at = NULL, error = NULL",
    )?
    .execute((project.0, platform, &source.account, &source.base_url))?;
    conn.prepare_cached("DELETE FROM spend_tokens WHERE project_id = ?1 AND platform = ?2")?
        .execute((project.0, platform))?;
    if let Some(token) = &source.access_token {
        conn.prepare_cached(
            "INSERT INTO spend_tokens (project_id, platform, token) VALUES (?1, ?2, ?3)",
        )?
        .execute((project.0, platform, vault.seal(SPEND_TOKEN, token.expose())))?;
    }
    Ok(())
}

/// [`leadtrack_core::Spending::remove_spend_source`].
pub(crate) fn remove_source(
    conn: &Connection,
    project: ProjectId,
    platform: SpendPlatform,
) -> Result<(), Error> {
    conn.prepare_cached("DELETE FROM spend_sources WHERE project_id = ?1 AND platform = ?2")?
        .execute((project.0, platform.as_ref()))?;
    Ok(())
}

/// [`leadtrack_core::Spending::record_spend_sync`].
pub(crate) fn record_sync(
    conn: &Connection,
    project: ProjectId,
    platform: SpendPlatform,
    (at, error): (DateTime<Utc>, Option<&str>),
) -> Result<(), Error> {
    conn.prepare_cached(
        "UPDATE spend_sources SET synced_at = ?3, error = ?4
         WHERE project_id = ?1 AND platform = ?2",
    )?
    .execute((project.0, platform.as_ref(), to_millis(&at), error))?;
    Ok(())
}

/// [`leadtrack_core::Spending::spend`].
pub(crate) fn list(
    conn: &Connection,
    project: ProjectId,
    (from, to): (NaiveDate, NaiveDate),
) -> Result<Vec<SpendRow>, Error> {
    conn.prepare_cached(
        "SELECT day, source, medium, account, campaign_id, campaign, currency, cost_micros,
                clicks, impressions
         FROM spend WHERE project_id = ?1 AND day >= ?2 AND day <= ?3
         ORDER BY day, source, campaign",
    )?
    .query_and_then((project.0, from.to_string(), to.to_string()), |row| {
        let day: String = row.get(0)?;
        Ok(SpendRow {
            date: rows::parse("spend.day", day)?,
            source: row.get(1)?,
            medium: row.get(2)?,
            account: row.get(3)?,
            campaign_id: row.get(4)?,
            campaign: row.get(5)?,
            currency: row.get(6)?,
            cost_micros: row.get(7)?,
            clicks: row.get::<_, Option<i64>>(8)?.map(|n| n.max(0) as u64),
            impressions: row.get::<_, Option<i64>>(9)?.map(|n| n.max(0) as u64),
        })
    })?
    .collect()
}

/// [`leadtrack_core::Spending::fx_rates`].
pub(crate) fn rates(conn: &Connection, project: ProjectId) -> Result<FxRates, Error> {
    let rates = conn
        .prepare_cached("SELECT currency, rate FROM fx_rates WHERE project_id = ?1")?
        .query_map([project.0], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<Result<_, _>>()?;
    Ok(FxRates(rates))
}

/// [`leadtrack_core::Spending::set_fx_rates`].
pub(crate) fn set_rates(
    conn: &Connection,
    project: ProjectId,
    rates: &FxRates,
) -> Result<(), Error> {
    conn.prepare_cached("DELETE FROM fx_rates WHERE project_id = ?1")?
        .execute([project.0])?;
    let mut insert = conn
        .prepare_cached("INSERT INTO fx_rates (project_id, currency, rate) VALUES (?1, ?2, ?3)")?;
    for (currency, rate) in &rates.0 {
        insert.execute((project.0, currency, rate))?;
    }
    Ok(())
}

/// [`leadtrack_core::Spending::roas`].
pub(crate) fn roas(
    conn: &Connection,
    project: ProjectId,
    query: &RoasQuery,
) -> Result<RoasReport, Error> {
    let labels = crate::admin::labels(conn, project)?;
    let mut builder = RoasBuilder::new(query, &labels);
    let range = (
        project.0,
        to_millis(&query.start()),
        to_millis(&query.end()),
    );
    for (known, sql) in [
        (true, known_sql(query.touch)),
        (false, clicked_sql(query.touch)),
    ] {
        let mut statement = conn.prepare_cached(&sql)?;
        let mut leads = statement.query(range)?;
        while let Some(row) = leads.next()? {
            let clicked = match known {
                true => ClickIds::default(),
                false => ClickIds {
                    google: row.get(7)?,
                    meta: row.get(8)?,
                    microsoft: row.get(9)?,
                    linkedin: row.get(10)?,
                    tiktok: row.get(11)?,
                },
            };
            builder.add_lead(&report_lead(row)?, clicked);
        }
    }
    let spend = list(conn, project, (query.from, query.to))?;
    let rates = rates(conn, project)?;
    let currency = crate::admin::project(conn, project)?.currency;
    Ok(builder.finish(&spend, &rates, &currency))
}

/// A lead of the range as the report counts it, from the first seven columns of either
/// query.
fn report_lead<'row>(row: &'row Row<'_>) -> Result<ReportLead<'row>, Error> {
    let text = |column: usize| -> Result<Option<&'row str>, Error> {
        Ok(row.get_ref(column)?.as_str_or_null().map_err(|err| {
            rusqlite::Error::FromSqlConversionFailure(
                column,
                rusqlite::types::Type::Text,
                Box::new(err),
            )
        })?)
    };
    let conversion_id = match text(4)? {
        None => None,
        Some(text) => Some(ConversionId::from_str(text).map_err(|_| Error::Corrupt {
            column: "conversion_id",
            value: text.to_owned(),
        })?),
    };
    Ok(ReportLead {
        created_at: from_millis(row.get(0)?),
        source: text(1)?,
        medium: text(2)?,
        campaign: text(3)?,
        conversion_id,
        status: rows::parse("leads.status", row.get::<_, String>(6)?)?,
        price: row.get(5)?,
    })
}

/// The range's leads whose credited touch names a source: the covering index alone.
fn known_sql(touch: Touchpoint) -> String {
    let touch = touch.as_ref();
    format!(
        "SELECT created_at, {touch}_source, {touch}_medium, {touch}_campaign, conversion_id, price,
                status
         FROM leads WHERE project_id = ?1 AND created_at >= ?2 AND created_at < ?3
           AND {NOT_SPAM} AND {touch}_source IS NOT NULL"
    )
}

/// The range's other leads, with the flags of their click ids.
fn clicked_sql(touch: Touchpoint) -> String {
    let touch = touch.as_ref();
    format!(
        "SELECT created_at, {touch}_source, {touch}_medium, {touch}_campaign, conversion_id, price,
                status, has_gclid OR has_gbraid, has_fbc, has_msclkid, has_li_fat_id, has_ttclid
         FROM leads WHERE project_id = ?1 AND created_at >= ?2 AND created_at < ?3
           AND {NOT_SPAM} AND {touch}_source IS NULL"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The leads whose touch names a source are read from the covering index alone.
    #[test]
    fn the_known_leads_are_read_from_the_reports_covering_index() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::schema::migrate(&mut conn).unwrap();
        for touch in [Touchpoint::First, Touchpoint::Last] {
            let plan: String = conn
                .query_row(
                    &format!("EXPLAIN QUERY PLAN {}", known_sql(touch)),
                    (1, 0, 1),
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
