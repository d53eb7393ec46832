//! `spend ...`: a project's ad spend from a CSV file, and the spend kept
//! (docs/reports.md says how spend meets leads).

use std::path::PathBuf;

use chrono::{Days, NaiveDate, Utc};
use clap::Subcommand;
use leadtrack_core::activity::ProjectActivity;
use leadtrack_core::spend::{SpendRow, parse_csv};
use leadtrack_core::{Admin, LeadStore, Spending};
use serde_json::{Value, json};

use crate::Failure;
use crate::admin::{audit, print_json, project};

/// `spend ...`
#[derive(Debug, Subcommand)]
pub(crate) enum SpendCommand {
    /// Import ad spend from a CSV file with the columns date,source,medium,campaign,cost
    /// (and optionally currency,clicks,impressions,campaign_id): one row per day and
    /// campaign, in the project's currency unless the row names another. A row of the same
    /// day, source, medium and campaign as one kept replaces it; bad rows are reported
    /// with their line and skipped. Fails only when no row was imported.
    Import {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The CSV file.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Print the outcome as JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the spend kept for a range of days (the last 30 by default).
    List {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The first day, YYYY-MM-DD.
        #[arg(long, value_name = "DATE")]
        from: Option<NaiveDate>,
        /// The last day, YYYY-MM-DD.
        #[arg(long, value_name = "DATE")]
        to: Option<NaiveDate>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `spend ...`.
pub(crate) async fn spend_command<S: Admin + LeadStore + Spending>(
    store: &S,
    command: SpendCommand,
) -> Result<(), Failure> {
    match command {
        SpendCommand::Import {
            project: id,
            file,
            json,
        } => import(store, &id, file, json).await,
        SpendCommand::List {
            project: id,
            from,
            to,
            json,
        } => {
            let project = project(store, &id).await?;
            let to = to.unwrap_or_else(|| Utc::now().date_naive());
            let from = from.unwrap_or(to - Days::new(29));
            let rows = store
                .spend(project.id, from, to)
                .await
                .map_err(Failure::store)?;
            list(&rows, json);
            Ok(())
        }
    }
}

/// `spend import`.
async fn import<S: Admin + LeadStore + Spending>(
    store: &S,
    id: &str,
    file: PathBuf,
    json: bool,
) -> Result<(), Failure> {
    let project = project(store, id).await?;
    let bytes = std::fs::read(&file)
        .map_err(|err| Failure(format!("{} cannot be read: {err}", file.display())))?;
    let (rows, bad) = parse_csv(&bytes, &project.currency).map_err(Failure)?;
    let kept = store
        .save_spend(project.id, &rows)
        .await
        .map_err(Failure::store)?;
    let name = file.file_name().map_or_else(
        || file.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    );
    let imported = ProjectActivity::SpendImported {
        file: name.clone(),
        rows: kept,
        bad: bad.len() as u64,
    };
    audit(store, project.id, imported).await?;
    if json {
        let bad: Vec<Value> = bad
            .iter()
            .map(|row| json!({"line": row.line, "reason": row.reason}))
            .collect();
        print_json(&json!({"imported": kept, "bad": bad}));
    } else {
        for row in &bad {
            say!("line {}: {}", row.line, row.reason);
        }
        say!(
            "Imported {kept} rows of spend from {name}; {} bad rows skipped.",
            bad.len()
        );
    }
    if kept == 0 {
        return Err(Failure(format!("no spend was imported from {name}")));
    }
    Ok(())
}

/// Prints the spend kept, a row per day and campaign.
fn list(rows: &[SpendRow], json: bool) {
    if json {
        let rows: Vec<Value> = rows
            .iter()
            .map(|row| {
                json!({
                    "date": row.date, "source": row.source, "medium": row.medium,
                    "account": row.account, "campaignId": row.campaign_id,
                    "campaign": row.campaign, "currency": row.currency,
                    "cost": row.cost_micros as f64 / 1_000_000.0, "clicks": row.clicks,
                    "impressions": row.impressions,
                })
            })
            .collect();
        print_json(&json!(rows));
        return;
    }
    if rows.is_empty() {
        say!("No spend in this range: `server spend import --project ID FILE.csv` adds some.");
        return;
    }
    say!(
        "{:<10}  {:<12}  {:<12}  {:>12}  {:<3}  {:>7}  CAMPAIGN",
        "DATE",
        "SOURCE",
        "MEDIUM",
        "COST",
        "CUR",
        "CLICKS"
    );
    for row in rows {
        let clicks = row.clicks.map_or_else(String::new, |n| n.to_string());
        say!(
            "{:<10}  {:<12}  {:<12}  {:>12.2}  {:<3}  {:>7}  {}",
            row.date,
            row.source,
            row.medium,
            row.cost_micros as f64 / 1_000_000.0,
            row.currency,
            clicks,
            row.campaign
        );
    }
}
