//! The project's ad spend: a CSV file of spend imported (each row replacing the same day
//! and campaign's, [`leadtrack_core::spend`]), the currency rates spend in another
//! currency is converted with, and the spend kept for the last 30 days. A file with a bad
//! row is refused whole, each bad row named by its line, so that nothing half of a file is
//! kept.

use askama::Template;
use chrono::{Days, Utc};
use leadtrack_core::activity::ProjectActivity;
use leadtrack_core::import::BadRow;
use leadtrack_core::spend::{FxRates, SpendRow, SpendSource, parse_csv};
use leadtrack_core::{Accounts, LeadStore, Spending};
use warp::http::StatusCode;

use super::{Answer, Frame, Owner, Problems, notice, owner_upload, sentence};
use crate::render::{self, Layout};
use crate::routes::Settings;
use crate::session::Form;
use crate::{Config, Request, format};

/// The largest file taken: years of daily spend of hundreds of campaigns.
const UPLOAD_LIMIT: usize = 8 * 1024 * 1024;
/// How many days of spend the page lists.
const LISTED_DAYS: u64 = 30;
/// How many bad rows a refused file lists.
const LISTED_BAD: usize = 50;

const NOTICES: &[(&str, &str)] = &[
    (
        "imported",
        "Spend imported. Rows of the same day and campaign as before replaced them; the reports count it.",
    ),
    ("rates", "Currency rates saved."),
];

/// A row of the spend kept, as the page writes it.
struct Line {
    date: String,
    source: String,
    campaign: String,
    cost: String,
    currency: String,
    clicks: String,
}

impl Line {
    fn new(row: &SpendRow) -> Self {
        Self {
            date: row.date.to_string(),
            source: row.source.clone(),
            campaign: row.campaign.clone(),
            // To the cent, rounded half away from zero.
            cost: format::money((row.cost_micros + 5_000) / 10_000),
            currency: row.currency.clone(),
            clicks: row.clicks.map_or_else(String::new, |n| n.to_string()),
        }
    }
}

/// A platform's account spend is read from, as the page lists it.
struct SourceLine {
    platform: &'static str,
    account: String,
    /// How the last read went, in words.
    read: String,
    failed: bool,
    /// After a failed read, the integration whose sign-in ("Connect with …") to give again
    /// (its slug), when the server can sign in with its platform: a sign-in given before
    /// leadtrack read spend lacks the scope to read it (LinkedIn's `r_ads_reporting`).
    sign_in_again: Option<(&'static str, String)>,
}

impl SourceLine {
    fn new(source: &SpendSource, config: &Config) -> Self {
        let read = match source.synced_at.map(|at| at.format("%-d %b %Y, %H:%M")) {
            None => "Not read yet: it is read every hour.".to_owned(),
            Some(at) => match &source.error {
                None => format!("Read {at} UTC."),
                Some(error) => format!("Not read {at} UTC: {}", sentence(error)),
            },
        };
        let failed = source.error.is_some();
        let sign_in_again = source
            .platform
            .provider()
            .filter(|provider| failed && super::sign_in::app(config, *provider).is_some())
            .map(|provider| (provider.name(), provider.integration().as_ref().to_owned()));
        Self {
            platform: source.platform.name(),
            account: source.account.clone(),
            read,
            failed,
            sign_in_again,
        }
    }
}

#[derive(Template)]
#[template(path = "settings/spend.html")]
struct SpendPage {
    layout: Layout,
    frame: Frame,
    currency: String,
    /// The rates as typed, or as kept.
    rates: String,
    lines: Vec<Line>,
    /// The platforms' accounts spend is read from.
    sources: Vec<SourceLine>,
    /// A refused file's bad rows.
    bad: Vec<BadRow>,
    /// How many more bad rows the file had than are listed.
    more_bad: usize,
    problems: Problems,
}

impl SpendPage {
    /// docs/reports.md, which says how spend meets leads.
    fn reports_doc(&self) -> String {
        format!("{}/blob/main/docs/reports.md", env!("CARGO_PKG_REPOSITORY"))
    }
}

/// What a page shows beyond what is kept: a notice, the rates as typed, a refused file's
/// rows, its problems.
#[derive(Default)]
struct Shown {
    notice: Option<String>,
    rates: Option<String>,
    bad: Vec<BadRow>,
    problems: Problems,
}

/// The page, with what `shown` holds.
async fn spend_page<S: Spending>(
    (store, config): (&S, &Config),
    owner: &Owner,
    status: StatusCode,
    shown: Shown,
) -> Answer {
    let project = owner.project();
    let to = Utc::now().date_naive();
    let from = to - Days::new(LISTED_DAYS - 1);
    let read = async {
        let rows = store.spend(project.id, from, to).await?;
        let rates = store.fx_rates(project.id).await?;
        let sources = store.spend_sources(project.id).await?;
        Ok::<_, leadtrack_core::StoreError>((rows, rates, sources))
    };
    let (rows, rates, sources) = read.await.map_err(|e| owner.failure(e))?;
    let (layout, frame) = owner.frame(Settings::Spend, shown.notice);
    let more_bad = shown.bad.len().saturating_sub(LISTED_BAD);
    let page = SpendPage {
        layout,
        frame,
        currency: project.currency.clone(),
        rates: shown.rates.unwrap_or_else(|| rates.written()),
        lines: rows.iter().rev().map(Line::new).collect(),
        sources: sources.iter().map(|s| SourceLine::new(s, config)).collect(),
        bad: shown.bad.into_iter().take(LISTED_BAD).collect(),
        more_bad,
        problems: shown.problems,
    };
    Ok(render::page(status, &page))
}

/// `GET spend`.
pub(super) async fn page<S: Spending>(
    store: &S,
    (config, request): (&Config, &Request),
    owner: Owner,
) -> Answer {
    let shown = Shown {
        notice: notice(request, NOTICES),
        ..Shown::default()
    };
    spend_page((store, config), &owner, StatusCode::OK, shown).await
}

/// `POST spend` (multipart): imports the file's spend, or refuses it whole with its bad
/// rows.
pub(super) async fn upload<S: Accounts + LeadStore + Spending>(
    store: &S,
    (config, request): (&Config, &Request),
    public_id: &str,
    body: leadtrack_http::Body,
) -> Answer {
    let (owner, _, upload) =
        owner_upload(store, (config, request), public_id, (body, UPLOAD_LIMIT)).await?;
    let refused =
        |shown: Shown| spend_page((store, config), &owner, StatusCode::BAD_REQUEST, shown);
    let Some(upload) = upload.filter(|u| !u.bytes.is_empty()) else {
        let problems = Problems::one("file", "Choose a CSV file of spend to import.");
        return refused(Shown {
            problems,
            ..Shown::default()
        })
        .await;
    };
    let currency = &owner.project().currency;
    let (rows, bad) = match parse_csv(&upload.bytes, currency) {
        Ok(read) => read,
        Err(problem) => {
            let problems = Problems::one("file", sentence(&problem));
            return refused(Shown {
                problems,
                ..Shown::default()
            })
            .await;
        }
    };
    if !bad.is_empty() || rows.is_empty() {
        let problem = match bad.len() {
            0 => "The file holds no row of spend.".to_owned(),
            1 => "One row is not spend, so nothing was imported: correct it and upload the file again.".to_owned(),
            n => format!("{n} rows are not spend, so nothing was imported: correct them and upload the file again."),
        };
        let problems = Problems::one("file", problem);
        return refused(Shown {
            bad,
            problems,
            ..Shown::default()
        })
        .await;
    }
    let project = owner.project().id;
    let kept = store
        .save_spend(project, &rows)
        .await
        .map_err(|e| owner.failure(e))?;
    let imported = ProjectActivity::SpendImported {
        file: upload.name,
        rows: kept,
        bad: 0,
    };
    owner.record(store, imported).await?;
    Ok(owner.redirect(Settings::Spend, Some("imported")))
}

/// `POST spend/rates`: replaces the currency rates (`CUR=RATE`, separated by spaces,
/// commas or lines; blank removes them), or shows the problem with what was typed.
pub(super) async fn save_rates<S: LeadStore + Spending>(
    (store, config): (&S, &Config),
    (owner, form): (Owner, Form),
) -> Answer {
    let typed = form.get("rates").to_owned();
    let pairs = typed
        .split([' ', ',', '\n', '\r', ';'])
        .filter(|p| !p.trim().is_empty());
    let rates = match FxRates::parse(pairs) {
        Ok(rates) => rates,
        Err(problem) => {
            let shown = Shown {
                rates: Some(typed),
                problems: Problems::one("rates", sentence(&problem)),
                ..Shown::default()
            };
            return spend_page((store, config), &owner, StatusCode::BAD_REQUEST, shown).await;
        }
    };
    store
        .set_fx_rates(owner.project().id, &rates)
        .await
        .map_err(|e| owner.failure(e))?;
    let set = ProjectActivity::FxRatesSet {
        rates: rates.written(),
    };
    owner.record(store, set).await?;
    Ok(owner.redirect(Settings::Spend, Some("rates")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_is_written_in_the_currencys_units_to_the_cent() {
        let row = SpendRow {
            date: chrono::NaiveDate::from_ymd_opt(2026, 3, 1).unwrap(),
            source: "google".into(),
            medium: "cpc".into(),
            account: String::new(),
            campaign_id: None,
            campaign: "Brand".into(),
            currency: "EUR".into(),
            cost_micros: 1_234_567_890,
            clicks: None,
            impressions: None,
        };
        let line = Line::new(&row);
        assert_eq!((line.cost.as_str(), line.clicks.as_str()), ("1,234.57", ""));
    }
}
