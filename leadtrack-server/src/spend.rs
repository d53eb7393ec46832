//! `spend ...`: a project's ad spend from a CSV file or read from the platforms with its
//! sign-ins, and the spend kept (docs/reports.md says how spend meets leads); and the
//! server's hourly read of every project's spend.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use chrono::{Days, NaiveDate, Utc};
use clap::Subcommand;
use leadtrack_core::activity::ProjectActivity;
use leadtrack_core::integration::Secret;
use leadtrack_core::oauth::OAuthApp;
use leadtrack_core::spend::{SYNC_DAYS, SpendPlatform, SpendRow, SpendSource, parse_csv};
use leadtrack_core::target::Targets;
use leadtrack_core::{Admin, LeadStore, Spending};
use leadtrack_forward::spend::{SpendRead, sync_all, sync_project};
use leadtrack_outbound::Outbound;
use serde_json::{Value, json};

use crate::Failure;
use crate::admin::{audit, print_json, project};
use crate::platform_apps::PlatformApps;

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
    /// Read a platform's spend with the project's sign-in (Settings › Integrations,
    /// Connect with Google, Meta, Microsoft or LinkedIn), or TikTok's with an access token
    /// of the advertiser's TikTok for Business app: every hour while the server runs, and
    /// at `spend sync`.
    Connect {
        /// `google-ads`, `meta`, `microsoft-ads`, `linkedin` or `tiktok`.
        #[arg(value_name = "PLATFORM", value_parser = platform)]
        platform: SpendPlatform,
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The account: Google Ads' customer id (or CUSTOMER:MANAGER for a client reached
        /// through its manager), Meta's ad account id, Microsoft Advertising's
        /// ACCOUNT:CUSTOMER ids, LinkedIn's ad account id, TikTok's advertiser id.
        #[arg(long, value_name = "ID")]
        account_id: String,
        /// The access token to read with instead of a sign-in (TikTok's, with the
        /// Reporting permission); kept sealed.
        #[arg(long, value_name = "TOKEN")]
        access_token: Option<String>,
        /// Where the platform's reporting API is, when not at its own address.
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
    },
    /// Stop reading a platform's spend (what was read stays).
    Disconnect {
        /// `google-ads`, `meta`, `microsoft-ads`, `linkedin` or `tiktok`.
        #[arg(value_name = "PLATFORM", value_parser = platform)]
        platform: SpendPlatform,
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
    },
    /// Read the project's spend from its platforms now, for the last few days (3 unless
    /// --days says more, at most 366), and print what was read. Takes the platform apps' settings of
    /// `serve`.
    Sync {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// How many days before today to read.
        #[arg(long, value_name = "N", default_value_t = SYNC_DAYS)]
        days: u64,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// The platforms' applications, as `serve` takes them.
        #[command(flatten)]
        platforms: Box<PlatformApps>,
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

/// `--platform`'s value.
fn platform(value: &str) -> Result<SpendPlatform, String> {
    value
        .parse()
        .map_err(|_| "use google-ads, meta, microsoft-ads, linkedin or tiktok".to_owned())
}

/// The source `spend connect` names, refused when its account is empty, TikTok's comes
/// without a token, or its address is one the server's rule refuses.
fn spend_source(
    platform: SpendPlatform,
    account: &str,
    access_token: Option<String>,
    base_url: Option<String>,
    targets: &Targets,
) -> Result<SpendSource, Failure> {
    let account = account.trim();
    if account.is_empty() {
        return Err(Failure("--account-id is empty".to_owned()));
    }
    let access_token = access_token
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty());
    if platform.provider().is_none() && access_token.is_none() {
        return Err(Failure(format!(
            "{} spend is read with an access token: add --access-token",
            platform.name()
        )));
    }
    if let Some(url) = &base_url {
        targets
            .check(url)
            .map_err(|refused| Failure(format!("--base-url: {refused}")))?;
    }
    Ok(SpendSource {
        base_url,
        access_token: access_token.map(Secret::new),
        ..SpendSource::new(platform, account)
    })
}

/// `spend ...`; `targets` are the operator's exceptions to the rule for the addresses a
/// read calls.
pub(crate) async fn spend_command<S: Admin + LeadStore + Spending>(
    store: &S,
    command: SpendCommand,
    targets: &Targets,
) -> Result<(), Failure> {
    match command {
        SpendCommand::Connect {
            platform,
            project: id,
            account_id,
            access_token,
            base_url,
        } => {
            let project = project(store, &id).await?;
            let source = spend_source(platform, &account_id, access_token, base_url, targets)?;
            store
                .set_spend_source(project.id, &source)
                .await
                .map_err(Failure::store)?;
            let account = source.account;
            say!(
                "Project {id}: {platform} spend of account {account} is read every hour while the server runs; `server spend sync --project {id}` reads it now."
            );
            Ok(())
        }
        SpendCommand::Disconnect {
            platform,
            project: id,
        } => {
            let project = project(store, &id).await?;
            store
                .remove_spend_source(project.id, platform)
                .await
                .map_err(Failure::store)?;
            say!("Project {id}: {platform} spend is no longer read.");
            Ok(())
        }
        SpendCommand::Sync {
            project: id,
            days,
            json,
            platforms,
        } => {
            let project = project(store, &id).await?;
            let apps = platforms.apps()?;
            let http = leadtrack_platforms::check::client(targets.clone());
            let today = Utc::now().date_naive();
            let reads = sync_project(store, (&apps, &http), &project, (today, days))
                .await
                .map_err(Failure::store)?;
            synced(&reads, json)
        }
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
            let from = from.unwrap_or(to.checked_sub_days(Days::new(29)).unwrap_or(to));
            let rows = store
                .spend(project.id, from, to)
                .await
                .map_err(Failure::store)?;
            list(&rows, json);
            Ok(())
        }
    }
}

/// Prints what each source's read did; fails when one failed.
fn synced(reads: &[SpendRead], json: bool) -> Result<(), Failure> {
    if json {
        let reads: Vec<Value> = reads
            .iter()
            .map(|read| {
                let (rows, error) = match &read.outcome {
                    Ok(rows) => (Some(*rows), None),
                    Err(error) => (None, Some(error)),
                };
                json!({"platform": read.platform.as_ref(), "account": read.account,
                       "from": read.days.0, "to": read.days.1, "rows": rows, "error": error})
            })
            .collect();
        print_json(&json!(reads));
    } else if reads.is_empty() {
        say!(
            "No spend is read in this project: `server spend connect google-ads|meta --project ID --account-id ID` reads one."
        );
    }
    for read in reads.iter().filter(|_| !json) {
        match &read.outcome {
            Ok(rows) => say!(
                "{} {}: {rows} rows of spend from {} to {}.",
                read.platform,
                read.account,
                read.days.0,
                read.days.1
            ),
            Err(error) => say!("{} {}: not read: {error}", read.platform, read.account),
        }
    }
    match reads.iter().filter(|read| read.outcome.is_err()).count() {
        0 => Ok(()),
        n => Err(Failure(format!(
            "the spend of {n} of {} sources could not be read",
            reads.len()
        ))),
    }
}

/// Reads every project's spend now and then every hour, until `stop` resolves.
pub(crate) async fn every_hour<S: Admin + Spending>(
    store: S,
    (apps, http): (Vec<OAuthApp>, Outbound),
    stop: impl Future<Output = ()>,
) {
    tokio::pin!(stop);
    loop {
        let today = Utc::now().date_naive();
        if let Err(err) = sync_all(&store, (&apps, &http), today).await {
            tracing::warn!(error = %err, "ad spend could not be read");
        }
        tokio::select! {
            () = tokio::time::sleep(Duration::from_secs(60 * 60)) => {}
            () = &mut stop => return,
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
