//! The reports page's section of what the spend bought: rows by `spend_by` (`campaign` by
//! default, `source` or `label`), their totals, and the trend per day or week of all rows
//! or of the one `spend_trend` names (a row's key; rows by label have no spend of their
//! own, so they have no trend).

use chrono::NaiveDate;
use leadtrack_core::channel::NOT_SET;
use leadtrack_core::report::Period;
use leadtrack_core::roas::{RoasGrouping, RoasReport, RoasRow};
use strum::VariantArray;

use super::{Choice, choices};
use crate::chart::TrendChart;
use crate::format;

/// What the query asks of the section.
pub(super) struct SpendAsk {
    /// The rows.
    pub(super) by: RoasGrouping,
    /// The key of the row whose trend is shown; all rows' when `None`.
    trend_of: Option<String>,
}

impl SpendAsk {
    /// What `query` asks (`spend_by`, `spend_trend`), and in words what was replaced by
    /// the default.
    pub(super) fn parse(query: &str) -> (Self, Option<String>) {
        let trend_of = crate::query_param(query, "spend_trend").filter(|key| !key.is_empty());
        let (by, problem) = match crate::query_param(query, "spend_by") {
            None => (RoasGrouping::default(), None),
            Some(by) => match by.parse() {
                Ok(by) => (by, None),
                Err(_) => (
                    RoasGrouping::default(),
                    Some(format!(
                        "“{by}” is not a grouping of spend (source, campaign or label), so spend is shown by campaign."
                    )),
                ),
            },
        };
        (Self { by, trend_of }, problem)
    }

    /// The choices of `spend_by`.
    pub(super) fn groupings(&self) -> Vec<Choice> {
        let groupings = RoasGrouping::VARIANTS
            .iter()
            .map(|g| (g.as_ref().to_owned(), grouping_name(*g).to_owned()))
            .collect();
        choices(groupings, self.by.as_ref())
    }

    /// The page's query string with `spend_by`, from `base` (the rest of the page's).
    pub(super) fn href(&self, base: &str) -> String {
        format!("{base}&spend_by={}", self.by.as_ref())
    }
}

/// The section as the page shows it.
pub(super) struct SpendSection {
    /// The first column's heading.
    pub(super) heading: &'static str,
    pub(super) rows: Vec<SpendLine>,
    pub(super) totals: SpendLine,
    /// The rates used, as written (`USD=0.92`); empty when none were.
    pub(super) rates: String,
    /// Spend left out for want of a rate, in words.
    pub(super) unconverted: Vec<String>,
    /// Whether the range has any spend.
    pub(super) has_spend: bool,
    /// The name of the row whose trend is shown; `None` for all rows'.
    pub(super) trend_of: Option<String>,
    /// The link to all rows' trend.
    pub(super) all_href: String,
    /// Whether the rows link to their trend.
    pub(super) rows_link: bool,
    /// The trend's days together per period, as `(first day, figures)`.
    pub(super) periods: Vec<(String, SpendLine)>,
    /// Spend and rated value per period, as columns on one scale.
    pub(super) chart: TrendChart,
    /// `day` or `week`.
    pub(super) period_name: &'static str,
}

/// One row of what spend bought, as the page writes it (`–` where a figure cannot be
/// computed).
pub(super) struct SpendLine {
    pub(super) name: String,
    /// The campaign's source, under its name.
    pub(super) detail: String,
    pub(super) not_set: bool,
    /// The link to the row's trend; empty where it has none.
    pub(super) href: String,
    /// Whether the trend shown is the row's.
    pub(super) current: bool,
    pub(super) spend: String,
    pub(super) clicks: String,
    pub(super) leads: u64,
    pub(super) qualified: u64,
    pub(super) customers: u64,
    pub(super) value: String,
    pub(super) per_lead: String,
    pub(super) per_qualified: String,
    pub(super) per_customer: String,
    pub(super) roas: String,
}

impl SpendLine {
    fn new(row: &RoasRow, by: RoasGrouping) -> Self {
        let amount = |amount: Option<f64>| {
            amount.map_or_else(
                || "–".to_owned(),
                |a| format::money((a * 100.0).round() as i64),
            )
        };
        let (name, detail) = match by {
            RoasGrouping::Source => (row.source.clone(), None),
            // The source under the campaign, unless nothing is known of it.
            RoasGrouping::Campaign => (
                row.campaign.clone(),
                row.source.clone().filter(|source| source != NOT_SET),
            ),
            RoasGrouping::Label => (
                Some(row.label.clone().unwrap_or_else(|| "No label".into())),
                None,
            ),
        };
        let name = name.unwrap_or_else(|| "Total".to_owned());
        Self {
            not_set: name == NOT_SET,
            name,
            detail: detail.unwrap_or_default(),
            href: String::new(),
            current: false,
            spend: amount(row.spend),
            clicks: row.clicks.map_or_else(|| "–".to_owned(), |n| n.to_string()),
            leads: row.leads,
            qualified: row.qualified,
            customers: row.customers,
            value: amount(Some(row.value)),
            per_lead: amount(row.cost_per_lead()),
            per_qualified: amount(row.cost_per_qualified()),
            per_customer: amount(row.cost_per_customer()),
            roas: row
                .roas()
                .map_or_else(|| "–".to_owned(), |roas| format!("{roas:.2}×")),
        }
    }
}

impl SpendSection {
    /// The section of `report`, as `ask` asks, its trend per `period`, its links from
    /// `href` (the page's query string with `spend_by`); and in words a trend asked for
    /// that the report has no row for.
    pub(super) fn new(
        report: &RoasReport,
        ask: &SpendAsk,
        period: Period,
        href: &str,
    ) -> (Self, Option<String>) {
        let rows_link = ask.by != RoasGrouping::Label;
        let chosen = ask.trend_of.as_deref().filter(|_| rows_link);
        let trended = chosen.and_then(|key| report.row(key));
        let problem = chosen.filter(|_| trended.is_none()).map(|_| {
            "The spend trend shows every row: the row asked for has no spend or leads in this range.".to_owned()
        });
        let row_href = |key: &str| {
            let mut query = form_urlencoded::Serializer::new(String::new());
            query.append_pair("spend_trend", key);
            format!("?{href}&{}#spend-trend", query.finish())
        };
        let rows = report.rows.iter().map(|row| SpendLine {
            href: if rows_link {
                row_href(&row.key)
            } else {
                String::new()
            },
            current: trended.is_some_and(|t| t.key == row.key),
            ..SpendLine::new(row, ask.by)
        });
        let per_period = report.per(trended.unwrap_or(&report.totals), period);
        let section = Self {
            chart: chart(&per_period, report.to),
            heading: grouping_name(ask.by),
            rows: rows.collect(),
            totals: SpendLine::new(&report.totals, RoasGrouping::Source),
            rates: report.rates.written(),
            unconverted: unconverted(report),
            has_spend: report.totals.spend.is_some(),
            trend_of: trended.map(|row| SpendLine::new(row, ask.by).name),
            all_href: format!("?{href}#spend-trend"),
            rows_link,
            periods: per_period
                .iter()
                .map(|(start, figures)| {
                    let line = SpendLine::new(figures, RoasGrouping::Source);
                    (start.format("%-d %b %Y").to_string(), line)
                })
                .collect(),
            period_name: match period {
                Period::Day => "day",
                Period::Week => "week",
            },
        };
        (section, problem)
    }
}

/// Spend and rated value per period (`(first day, figures)`, of a range ending on
/// `last_day`), as columns on one scale.
fn chart(per_period: &[(NaiveDate, RoasRow)], last_day: NaiveDate) -> TrendChart {
    let cents = |amount: f64| (amount * 100.0).round() as i64;
    let series = [
        (
            "Spend".to_owned(),
            per_period
                .iter()
                .map(|(_, f)| cents(f.spend.unwrap_or_default()))
                .collect(),
        ),
        (
            "Rated value".to_owned(),
            per_period.iter().map(|(_, f)| cents(f.value)).collect(),
        ),
    ];
    let starts: Vec<NaiveDate> = per_period.iter().map(|(start, _)| *start).collect();
    TrendChart::of(&series, (&starts, last_day), format::money)
}

/// The spend left out for want of a rate, in words, a line per currency.
fn unconverted(report: &RoasReport) -> Vec<String> {
    let currencies = report.unconverted.iter();
    currencies
        .map(|(currency, rows)| {
            let left_out = match rows {
                1 => format!("1 row of spend in {currency} is left out"),
                n => format!("{n} rows of spend in {currency} are left out"),
            };
            format!(
                "{left_out}: set a rate for {currency} (server project set --fx {currency}=RATE)."
            )
        })
        .collect()
}

/// The words for a grouping of spend, as a column heading.
fn grouping_name(by: RoasGrouping) -> &'static str {
    match by {
        RoasGrouping::Source => "Source",
        RoasGrouping::Campaign => "Campaign",
        RoasGrouping::Label => "Label",
    }
}
