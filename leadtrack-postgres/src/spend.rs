//! Ad spend and the currency rates (migration 35), and the report of spend against leads:
//! the range's leads grouped in the database by what the report tells apart (the credited
//! touch's columns, the conversion id, the status, and for leads whose touches name no
//! source their click ids' flags), counted by core's [`RoasBuilder`].

use chrono::{DateTime, Days, NaiveDate, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::integration::Secret;
use leadtrack_core::report::Touchpoint;
use leadtrack_core::roas::{CountedLeads, RoasBuilder, RoasQuery, RoasReport};
use leadtrack_core::spend::{
    CAMPAIGN_ID_FIELDS, ClickIds, FxRates, SpendPlatform, SpendRow, SpendSource,
};
use leadtrack_core::store::sql::NOT_SPAM;
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::ProjectId;
use leadtrack_core::vault::{SPEND_TOKEN, Vault};

use crate::Error;
use crate::rows::{self, all, run};

/// [`leadtrack_core::Spending::save_spend`].
pub(crate) async fn save(
    c: &impl GenericClient,
    project: ProjectId,
    spend: &[SpendRow],
) -> Result<u64, Error> {
    for row in spend {
        let clicks = row.clicks.map(|n| n as i64);
        let impressions = row.impressions.map(|n| n as i64);
        run(
            c,
            "INSERT INTO spend (project_id, day, source, medium, account, campaign_key, campaign_id,
                                campaign, currency, cost_micros, clicks, impressions)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
             ON CONFLICT (project_id, day, source, medium, account, campaign_key) DO UPDATE SET
                 campaign_id = excluded.campaign_id, campaign = excluded.campaign,
                 currency = excluded.currency, cost_micros = excluded.cost_micros,
                 clicks = excluded.clicks, impressions = excluded.impressions",
            &[
                &project.0,
                &row.date.to_string(),
                &row.source,
                &row.medium,
                &row.account,
                &row.key(),
                &row.campaign_id,
                &row.campaign,
                &row.currency,
                &row.cost_micros,
                &clicks,
                &impressions,
            ],
        )
        .await?;
    }
    Ok(spend.len() as u64)
}

/// [`leadtrack_core::Spending::replace_spend`].
pub(crate) async fn replace(
    c: &impl GenericClient,
    project: ProjectId,
    (source, account): (&str, &str),
    (from, to): (NaiveDate, NaiveDate),
    spend: &[SpendRow],
) -> Result<u64, Error> {
    run(
        c,
        "DELETE FROM spend WHERE project_id = $1 AND source = $2 AND account = $3
           AND day >= $4 AND day <= $5",
        &[
            &project.0,
            &source,
            &account,
            &from.to_string(),
            &to.to_string(),
        ],
    )
    .await?;
    save(c, project, spend).await
}

/// [`leadtrack_core::Spending::spend_sources`].
pub(crate) async fn sources(
    c: &impl GenericClient,
    vault: &Vault,
    project: ProjectId,
) -> Result<Vec<SpendSource>, Error> {
    let found = all(
        c,
        "SELECT s.platform, s.account, s.base_url, t.token, s.synced_at, s.error
         FROM spend_sources s
         LEFT JOIN spend_tokens t ON t.project_id = s.project_id AND t.platform = s.platform
         WHERE s.project_id = $1 ORDER BY s.platform",
        &[&project.0],
    )
    .await?;
    found
        .iter()
        .map(|row| {
            let token: Option<&str> = row.try_get(3)?;
            Ok(SpendSource {
                platform: rows::parse("spend_sources.platform", row.try_get::<_, String>(0)?)?,
                account: row.try_get(1)?,
                base_url: row.try_get(2)?,
                access_token: match token {
                    Some(sealed) => Some(Secret::new(vault.open(SPEND_TOKEN, sealed)?)),
                    None => None,
                },
                synced_at: row.try_get::<_, Option<i64>>(4)?.map(from_millis),
                error: row.try_get(5)?,
            })
        })
        .collect()
}

/// [`leadtrack_core::Spending::set_spend_source`].
pub(crate) async fn set_source(
    c: &impl GenericClient,
    vault: &Vault,
    project: ProjectId,
    source: &SpendSource,
) -> Result<(), Error> {
    let platform = source.platform.as_ref();
    run(
        c,
        "INSERT INTO spend_sources (project_id, platform, account, base_url) VALUES ($1, $2, $3, $4)
         ON CONFLICT (project_id, platform) DO UPDATE SET account = excluded.account,
             base_url = excluded.base_url, synced_at = NULL, error = NULL",
        &[&project.0, &platform, &source.account, &source.base_url],
    )
    .await?;
    run(
        c,
        "DELETE FROM spend_tokens WHERE project_id = $1 AND platform = $2",
        &[&project.0, &platform],
    )
    .await?;
    if let Some(token) = &source.access_token {
        let sealed = vault.seal(SPEND_TOKEN, token.expose());
        run(
            c,
            "INSERT INTO spend_tokens (project_id, platform, token) VALUES ($1, $2, $3)",
            &[&project.0, &platform, &sealed],
        )
        .await?;
    }
    Ok(())
}

/// [`leadtrack_core::Spending::remove_spend_source`].
pub(crate) async fn remove_source(
    c: &impl GenericClient,
    project: ProjectId,
    platform: SpendPlatform,
) -> Result<(), Error> {
    run(
        c,
        "DELETE FROM spend_sources WHERE project_id = $1 AND platform = $2",
        &[&project.0, &platform.as_ref()],
    )
    .await?;
    Ok(())
}

/// [`leadtrack_core::Spending::record_spend_sync`].
pub(crate) async fn record_sync(
    c: &impl GenericClient,
    project: ProjectId,
    platform: SpendPlatform,
    (at, error): (DateTime<Utc>, Option<&str>),
) -> Result<(), Error> {
    run(
        c,
        "UPDATE spend_sources SET synced_at = $3, error = $4
         WHERE project_id = $1 AND platform = $2",
        &[&project.0, &platform.as_ref(), &to_millis(&at), &error],
    )
    .await?;
    Ok(())
}

/// [`leadtrack_core::Spending::spend`].
pub(crate) async fn list(
    c: &impl GenericClient,
    project: ProjectId,
    (from, to): (NaiveDate, NaiveDate),
) -> Result<Vec<SpendRow>, Error> {
    let found = all(
        c,
        "SELECT day, source, medium, account, campaign_id, campaign, currency, cost_micros,
                clicks, impressions
         FROM spend WHERE project_id = $1 AND day >= $2 AND day <= $3
         ORDER BY day, source, campaign",
        &[&project.0, &from.to_string(), &to.to_string()],
    )
    .await?;
    found
        .iter()
        .map(|row| {
            Ok(SpendRow {
                date: rows::parse("spend.day", row.try_get::<_, String>(0)?)?,
                source: row.try_get(1)?,
                medium: row.try_get(2)?,
                account: row.try_get(3)?,
                campaign_id: row.try_get(4)?,
                campaign: row.try_get(5)?,
                currency: row.try_get(6)?,
                cost_micros: row.try_get(7)?,
                clicks: row.try_get::<_, Option<i64>>(8)?.map(|n| n.max(0) as u64),
                impressions: row.try_get::<_, Option<i64>>(9)?.map(|n| n.max(0) as u64),
            })
        })
        .collect()
}

/// [`leadtrack_core::Spending::fx_rates`].
pub(crate) async fn rates(c: &impl GenericClient, project: ProjectId) -> Result<FxRates, Error> {
    let found = all(
        c,
        "SELECT currency, rate FROM fx_rates WHERE project_id = $1",
        &[&project.0],
    )
    .await?;
    let rates = found
        .iter()
        .map(|row| Ok((row.try_get(0)?, row.try_get(1)?)))
        .collect::<Result<_, Error>>()?;
    Ok(FxRates(rates))
}

/// [`leadtrack_core::Spending::set_fx_rates`].
pub(crate) async fn set_rates(
    c: &impl GenericClient,
    project: ProjectId,
    rates: &FxRates,
) -> Result<(), Error> {
    run(
        c,
        "DELETE FROM fx_rates WHERE project_id = $1",
        &[&project.0],
    )
    .await?;
    for (currency, rate) in &rates.0 {
        run(
            c,
            "INSERT INTO fx_rates (project_id, currency, rate) VALUES ($1, $2, $3)",
            &[&project.0, currency, rate],
        )
        .await?;
    }
    Ok(())
}

/// [`leadtrack_core::Spending::roas`]. Each row read stands for the leads of one touch,
/// conversion id, status, set of click ids and day: the builder counts as many leads, the first
/// carrying the sum of their prices (the report only sums them).
pub(crate) async fn roas(
    c: &impl GenericClient,
    project: ProjectId,
    query: &RoasQuery,
) -> Result<RoasReport, Error> {
    let (start, end) = (to_millis(&query.start()), to_millis(&query.end()));
    let groups = all(c, &sql(query.touch), &[&project.0, &start, &end]).await?;
    let labels = crate::admin::labels(c, project).await?;
    let mut builder = RoasBuilder::new(query, &labels);
    for row in &groups {
        let conversion_id = row
            .try_get::<_, Option<String>>(3)?
            .map(|id| rows::parse("conversion_id", id))
            .transpose()?;
        let day: i64 = row.try_get(8)?;
        let day = query
            .from
            .checked_add_days(Days::new(day.max(0) as u64))
            .unwrap_or(query.from);
        let leads: i64 = row.try_get(5)?;
        builder.add(&CountedLeads {
            day,
            source: row.try_get(0)?,
            campaign: row.try_get(1)?,
            campaign_id: row.try_get(6)?,
            conversion_id,
            status: rows::parse("leads.status", row.try_get::<_, String>(2)?)?,
            clicked: ClickIds::from_bits(row.try_get::<_, i32>(7)?.into()),
            leads: leads.max(0) as u64,
            value: row.try_get::<_, Option<i64>>(4)?.unwrap_or_default(),
        });
    }
    let spend = list(c, project, (query.from, query.to)).await?;
    let rates = rates(c, project).await?;
    let currency = crate::admin::project(c, project).await?.currency;
    Ok(builder.finish(&spend, &rates, &currency))
}

/// A day, in milliseconds.
const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// The range's leads (`$1` the project, `$2` and `$3` the range's first and first-after
/// instants) grouped by what the report tells apart ([`CountedLeads`]): the touch's source
/// and campaign, status, conversion id, the campaign id the leads carry (core's
/// [`CAMPAIGN_ID_FIELDS`]; the last touch's, and the first's when it is the last's source
/// and campaign), their click ids as bits ([`ClickIds::from_bits`]) when the touch names no
/// source, and their day.
fn sql(touch: Touchpoint) -> String {
    let name = touch.as_ref();
    let field =
        |field: &str| format!("nullif(btrim(data::jsonb -> 'attributionData' ->> '{field}'), '')");
    let ids: Vec<String> = CAMPAIGN_ID_FIELDS
        .iter()
        .map(|(name, platform)| match platform {
            Some(platform) => format!("'{platform}:' || {}", field(name)),
            None => field(name),
        })
        .collect();
    let credited = match touch {
        Touchpoint::Last => "true",
        Touchpoint::First => {
            "first_source IS NOT DISTINCT FROM last_source
             AND first_campaign IS NOT DISTINCT FROM last_campaign"
        }
    };
    let bit = |flags: &str, n: u32| format!("(CASE WHEN {flags} THEN {} ELSE 0 END)", 1 << n);
    format!(
        "SELECT {name}_source, {name}_campaign, status, conversion_id, sum(price)::bigint,
                count(*),
                CASE WHEN {credited} THEN coalesce({ids}) END,
                CASE WHEN {name}_source IS NULL THEN {google} | {meta} | {microsoft} | {linkedin} | {tiktok}
                     ELSE 0 END,
                (created_at - $2) / {DAY_MS}
         FROM leads WHERE project_id = $1 AND created_at >= $2 AND created_at < $3
           AND {NOT_SPAM}
         GROUP BY 1, 2, 3, 4, 7, 8, 9",
        ids = ids.join(", "),
        google = bit("has_gclid OR has_gbraid", 0),
        meta = bit("has_fbc", 1),
        microsoft = bit("has_msclkid", 2),
        linkedin = bit("has_li_fat_id", 3),
        tiktok = bit("has_ttclid", 4),
    )
}
