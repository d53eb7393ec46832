//! Reading a project's ad spend from the platforms, with its sign-ins: each source's days
//! from [`SYNC_DAYS`] before today to today (the platforms revise recent figures), the
//! platform's report replacing those days of its account, and how the read went noted on
//! the source ([`leadtrack_core::Spending`]). The server reads every project's every hour,
//! and `server spend sync` on demand.

use chrono::{Days, NaiveDate};
use leadtrack_core::oauth::OAuthApp;
use leadtrack_core::project::Project;
use leadtrack_core::spend::{SYNC_DAYS, SpendPlatform, SpendRow, SpendSource};
use leadtrack_core::{Admin, Spending, StoreError};
use leadtrack_outbound::Outbound;
use leadtrack_platforms::{google_ads, linkedin, meta, microsoft_ads, tiktok};

/// How one source's read went: the rows kept, or why none were.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpendRead {
    /// The source.
    pub platform: SpendPlatform,
    /// Its account.
    pub account: String,
    /// The days read.
    pub days: (NaiveDate, NaiveDate),
    /// The rows kept, or why nothing was read, in words.
    pub outcome: Result<u64, String>,
}

/// Reads the spend of each of `project`'s sources, the `days` before `today` to today
/// (at least [`SYNC_DAYS`] days before, at most a year), with the server's `apps` and the project's
/// sign-ins. A source's failure is noted on it and answered; only the store's failure
/// stops the read.
pub async fn sync_project<S: Admin + Spending>(
    store: &S,
    (apps, http): (&[OAuthApp], &Outbound),
    project: &Project,
    (today, days): (NaiveDate, u64),
) -> Result<Vec<SpendRead>, StoreError> {
    let days = Days::new(days.clamp(SYNC_DAYS, leadtrack_core::report::MAX_DAYS));
    let from = today.checked_sub_days(days).unwrap_or(today);
    let mut reads = Vec::new();
    for source in store.spend_sources(project.id).await? {
        let outcome = match read(store, (apps, http), project, &source, (from, today)).await? {
            Ok(rows) => {
                let source_name = source.platform.source();
                let kept = store
                    .replace_spend(
                        project.id,
                        source_name,
                        &account_of(&source),
                        (from, today),
                        &rows,
                    )
                    .await?;
                Ok(kept)
            }
            Err(error) => Err(error),
        };
        let error = outcome.as_ref().err().map(String::as_str);
        if let Some(error) = error {
            tracing::warn!(project = project.id.0, platform = %source.platform, %error, "ad spend could not be read");
        }
        store
            .record_spend_sync(project.id, source.platform, chrono::Utc::now(), error)
            .await?;
        reads.push(SpendRead {
            platform: source.platform,
            account: source.account.clone(),
            days: (from, today),
            outcome,
        });
    }
    Ok(reads)
}

/// Reads every project's spend, as [`sync_project`] does; a store's failure on one project
/// is logged and the next read.
pub async fn sync_all<S: Admin + Spending>(
    store: &S,
    with: (&[OAuthApp], &Outbound),
    today: NaiveDate,
) -> Result<(), StoreError> {
    for project in store.projects().await?.iter().filter(|p| p.active) {
        if let Err(err) = sync_project(store, with, project, (today, SYNC_DAYS)).await {
            tracing::warn!(project = project.id.0, error = %err, "ad spend could not be kept");
        }
    }
    Ok(())
}

/// The account a source's rows are kept under: its own id, without the manager it is
/// reached through.
fn account_of(source: &SpendSource) -> String {
    let account = source.account.split(':').next().unwrap_or_default();
    account.chars().filter(char::is_ascii_digit).collect()
}

/// The platform's spend of `source` for `days`, or why it cannot be read (no application
/// on the server, no sign-in in the project, the platform's answer).
async fn read<S: Admin>(
    store: &S,
    (apps, http): (&[OAuthApp], &Outbound),
    project: &Project,
    source: &SpendSource,
    days: (NaiveDate, NaiveDate),
) -> Result<Result<Vec<SpendRow>, String>, StoreError> {
    let Some(provider) = source.platform.provider() else {
        return Ok(read_with_token(http, source, days).await);
    };
    let Some(app) = apps.iter().find(|app| app.provider == provider) else {
        return Ok(Err(format!(
            "the server has no {} application to read spend with (docs/platform-apps.md)",
            provider.name()
        )));
    };
    let Some(grant) = store.oauth_grant(project.id, provider).await? else {
        return Ok(Err(format!(
            "nobody signed in with {} in this project: Settings › Integrations, Connect with {}",
            provider.name(),
            provider.name()
        )));
    };
    // The platform's API at the source's address, when it names one.
    let mut app = app.clone();
    if let Some(base) = &source.base_url {
        app.endpoints.api = base.trim_end_matches('/').to_owned();
    }
    let with = (&app, &grant);
    Ok(match source.platform {
        SpendPlatform::GoogleAds => google_ads::spend(http, with, &source.account, days).await,
        SpendPlatform::Meta => meta::spend(http, with, &account_of(source), days).await,
        SpendPlatform::MicrosoftAds => {
            let base = source
                .base_url
                .as_deref()
                .unwrap_or(microsoft_ads::DEFAULT_REPORTING_URL);
            microsoft_ads::spend(http, with, (base, &source.account), days).await
        }
        SpendPlatform::Linkedin => linkedin::spend(http, with, &account_of(source), days).await,
        SpendPlatform::Tiktok => read_with_token(http, source, days).await,
    })
}

/// The spend of a source read with a token of its own (TikTok's).
async fn read_with_token(
    http: &Outbound,
    source: &SpendSource,
    days: (NaiveDate, NaiveDate),
) -> Result<Vec<SpendRow>, String> {
    let Some(token) = &source.access_token else {
        return Err(format!(
            "no access token to read {} spend with: server spend connect {} --access-token",
            source.platform.name(),
            source.platform
        ));
    };
    let base = source
        .base_url
        .as_deref()
        .unwrap_or(tiktok::DEFAULT_BASE_URL);
    tiktok::spend(http, (base, token.expose()), &account_of(source), days).await
}
