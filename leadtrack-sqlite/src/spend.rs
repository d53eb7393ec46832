//! Ad spend and the currency rates (migration 53), and the report of spend against leads:
//! the range's days of the kept counts (`lead_report_counts`, migration 56) and the few
//! leads above their mark, counted by core's [`RoasBuilder`].

use std::str::FromStr;

use chrono::{DateTime, Days, NaiveDate, Utc};
use leadtrack_core::integration::Secret;
use leadtrack_core::roas::{CountedLeads, RoasBuilder, RoasQuery, RoasReport};
use leadtrack_core::spend::{ClickIds, FxRates, SpendPlatform, SpendRow, SpendSource};
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
    range: (NaiveDate, NaiveDate),
) -> Result<Vec<SpendRow>, Error> {
    read(conn, project, range, "day, source, campaign")
}

/// The project's spend of the days `from` to `to`, in the `order` of its columns (the
/// report's by day alone, the order of the key it is kept by, with no sort).
fn read(
    conn: &Connection,
    project: ProjectId,
    (from, to): (NaiveDate, NaiveDate),
    order: &str,
) -> Result<Vec<SpendRow>, Error> {
    conn.prepare_cached(&format!(
        "SELECT day, source, medium, account, campaign_id, campaign, currency, cost_micros,
                clicks, impressions
         FROM spend WHERE project_id = ?1 AND day >= ?2 AND day <= ?3
         ORDER BY {order}"
    ))?
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
    let epoch_day = |day: NaiveDate| (day - NaiveDate::default()).num_days();
    let range = (
        project.0,
        query.touch.as_ref(),
        epoch_day(query.from),
        epoch_day(query.to),
    );
    for sql in [KEPT, ABOVE_MARK] {
        let mut statement = conn.prepare_cached(sql)?;
        let mut rows = statement.query(range)?;
        while let Some(row) = rows.next()? {
            builder.add(&counted(row)?);
        }
    }
    let spend = read(conn, project, (query.from, query.to), "day")?;
    let rates = rates(conn, project)?;
    let currency = crate::admin::project(conn, project)?.currency;
    Ok(builder.finish(&spend, &rates, &currency))
}

/// The range's leads of one touch as counted per day (`lead_report_counts`, migration 56),
/// spam left out.
const KEPT: &str = "SELECT day, source, campaign, campaign_id, conversion_id, status, clicked,
        total, value
    FROM lead_report_counts
    WHERE project_id = ?1 AND touch = ?2 AND day >= ?3 AND day <= ?4 AND total <> 0
      AND status <> 'spam'";

/// The range's leads the kept counts do not hold yet, one at a time from the view the
/// counts are kept by: the few above the words' mark, read by id.
const ABOVE_MARK: &str = "SELECT day, source, campaign, campaign_id, conversion_id, status,
        clicked, 1, price
    FROM lead_report_rows
    WHERE id > (SELECT indexed_to FROM lead_words_state) AND +project_id = ?1 AND touch = ?2
      AND day >= ?3 AND day <= ?4 AND status <> 'spam'";

/// Leads counted together, from a row of [`KEPT`] or [`ABOVE_MARK`].
fn counted<'row>(row: &'row Row<'_>) -> Result<CountedLeads<'row>, Error> {
    let text = |column: usize| -> Result<Option<&'row str>, Error> {
        let text = row.get_ref(column)?.as_str().map_err(|err| {
            rusqlite::Error::FromSqlConversionFailure(
                column,
                rusqlite::types::Type::Text,
                Box::new(err),
            )
        })?;
        Ok(Some(text).filter(|text| !text.is_empty()))
    };
    let conversion_id = match text(4)? {
        None => None,
        Some(text) => Some(ConversionId::from_str(text).map_err(|_| Error::Corrupt {
            column: "conversion_id",
            value: text.to_owned(),
        })?),
    };
    let day = NaiveDate::default()
        .checked_add_days(Days::new(row.get::<_, i64>(0)?.max(0) as u64))
        .unwrap_or_default();
    Ok(CountedLeads {
        day,
        source: text(1)?,
        campaign: text(2)?,
        campaign_id: text(3)?,
        conversion_id,
        status: rows::parse("leads.status", row.get::<_, String>(5)?)?,
        clicked: ClickIds::from_bits(row.get(6)?),
        leads: row.get::<_, i64>(7)?.max(0) as u64,
        value: row.get(8)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report reads the kept counts by their key, and the leads above the mark by id:
    /// neither reads the project's leads.
    #[test]
    fn the_report_reads_its_kept_counts_and_the_leads_above_the_mark_by_id() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::schema::migrate(&mut conn).unwrap();
        let plan = |sql: &str| -> Vec<String> {
            let mut statement = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
            let rows = statement
                .query_map((1, "first", 0, 1), |row| row.get(3))
                .unwrap();
            rows.map(Result::unwrap).collect()
        };
        assert_eq!(
            plan(KEPT),
            [
                "SEARCH lead_report_counts USING PRIMARY KEY (project_id=? AND touch=? AND day>? AND day<?)"
            ]
        );
        let above = plan(ABOVE_MARK).join(" | ");
        assert!(
            above.contains("SEARCH leads USING INTEGER PRIMARY KEY (rowid>?)"),
            "{above}"
        );
        // The writer's batch reads its leads by id too.
        let batch = conn
            .prepare(&format!(
                "EXPLAIN QUERY PLAN {}",
                crate::counts::TALLIES[3].select
            ))
            .unwrap()
            .query_map((0, 10), |row| row.get::<_, String>(3))
            .unwrap()
            .map(Result::unwrap)
            .collect::<Vec<_>>()
            .join(" | ");
        assert!(
            batch.contains("SEARCH leads USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"),
            "{batch}"
        );
    }

    /// The view the report's counts are kept by holds the fields core says carry a
    /// campaign id, in its order.
    #[test]
    fn the_view_reads_the_campaign_ids_core_names() {
        let sql = include_str!("../migrations/0062_data_packed.sql");
        let at: Vec<usize> = leadtrack_core::spend::CAMPAIGN_ID_FIELDS
            .iter()
            .map(|(field, platform)| {
                let read = format!("'$.attributionData.{field}'");
                let found = sql.find(&read).unwrap_or_else(|| panic!("{read}"));
                if let Some(platform) = platform {
                    let prefix = &sql[..found];
                    assert!(prefix.ends_with(&format!(
                        "'{platform}:' || nullif(trim(CAST(lead_json(data) ->> "
                    )));
                }
                found
            })
            .collect();
        assert!(at.is_sorted(), "{at:?}");
    }
}
