//! `GET /projects/{projectId}/reports`: which sources bring customers, not only form fills.
//!
//! Every view is a URL: `from` and `to` (`YYYY-MM-DD`, inclusive UTC days; the last 30 days
//! by default), `touch` (`first` or `last`; `first` by default) and `by` (`source`,
//! `medium`, `campaign` or `source_medium`; `source_medium` by default). The trend of the
//! groups over time takes `per` (`day` or `week`: days for a range of up to 31 days, else
//! weeks) and `show` (`leads`, `value`, `lost` or a label's id; `leads` by default); what
//! the spend bought takes `spend_by` and `spend_trend` ([`spend`]). A value that does not
//! parse is replaced by its default, and the page says so.

use askama::Template;
use chrono::{Days, NaiveDate, Utc};
use leadtrack_core::channel::NOT_SET;
use leadtrack_core::label::ConversionLabel;
use leadtrack_core::next_step::Coverage;
use leadtrack_core::report::{Grouping, MAX_DAYS, Period, Report, ReportQuery, Tally, Touchpoint};
use leadtrack_core::roas::RoasQuery;
use leadtrack_core::types::Role;
use leadtrack_core::{Store, StoreError};
use strum::VariantArray;
use uuid::Uuid;
use warp::http::StatusCode;
use warp::reply::Response;

use crate::chart::{DayChart, TOP_GROUPS, TrendChart, ValueChart};
use crate::render::{self, Layout};
use crate::routes::{Leads, Links, Route, Settings};
use crate::{Request, access, format};

mod spend;

use spend::{SpendAsk, SpendSection};

/// Days in the default range, today included.
const DEFAULT_DAYS: u64 = 30;

/// The quick ranges offered above the form: `(days, label)`.
const QUICK_RANGES: [(u64, &str); 4] = [
    (7, "Last 7 days"),
    (30, "Last 30 days"),
    (90, "Last 90 days"),
    (365, "Last 365 days"),
];

/// The report a query string asks for on `today`, and what in it was replaced by a
/// default, in words.
pub(crate) fn parse_query(query: &str, today: NaiveDate) -> (ReportQuery, Vec<String>) {
    let param = |name: &str| crate::query_param(query, name);
    let mut problems = Vec::new();
    let touch = match param("touch") {
        None => Touchpoint::default(),
        Some(touch) => touch.parse().unwrap_or_else(|_| {
            problems.push(format!(
                "“{touch}” is not a touch (first or last), so the first touch is shown."
            ));
            Touchpoint::default()
        }),
    };
    let by = match param("by") {
        None => Grouping::default(),
        Some(by) => by.parse().unwrap_or_else(|_| {
            problems.push(format!(
                "“{by}” is not a grouping (source, medium, campaign or source_medium), so leads are grouped by source / medium."
            ));
            Grouping::default()
        }),
    };
    let mut date = |name: &str, what: &str| {
        let text = param(name)?;
        let parsed = NaiveDate::parse_from_str(&text, "%Y-%m-%d").ok();
        if parsed.is_none() {
            problems.push(format!(
                "The {what} “{text}” is not a date like 2026-03-15, so the default is used."
            ));
        }
        parsed
    };
    let (from, to) = (date("from", "start date"), date("to", "end date"));
    let to_or_today = to.unwrap_or(today);
    let default_from = |to: NaiveDate| to - Days::new(DEFAULT_DAYS - 1);
    let (mut from, mut to) = (from.unwrap_or(default_from(to_or_today)), to_or_today);
    if from > to {
        problems
            .push("The start date is after the end date, so the last 30 days are shown.".into());
        (from, to) = (default_from(today), today);
    } else if (to - from).num_days() >= MAX_DAYS as i64 {
        problems.push(format!(
            "A report covers at most {MAX_DAYS} days, so the last 30 days are shown."
        ));
        (from, to) = (default_from(today), today);
    }
    (
        ReportQuery {
            from,
            to,
            touch,
            by,
        },
        problems,
    )
}

/// The groups the trend charts one by one (the rest are together as Other).
const TREND_GROUPS: usize = 6;

/// What the trend counts per period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Metric {
    Leads,
    /// The value of the leads rated with a label.
    Value,
    Lost,
    /// The leads whose last rating is this label.
    Label(Uuid),
}

impl Metric {
    /// The `show` value.
    fn param(self) -> String {
        match self {
            Self::Leads => "leads".to_owned(),
            Self::Value => "value".to_owned(),
            Self::Lost => "lost".to_owned(),
            Self::Label(id) => id.to_string(),
        }
    }

    /// Its count in `tally` (cents for the value).
    fn count(self, tally: &Tally) -> i64 {
        let count = match self {
            Self::Leads => tally.leads,
            Self::Value => return tally.value,
            Self::Lost => tally.lost,
            Self::Label(id) => tally.label(id),
        };
        i64::try_from(count).unwrap_or(i64::MAX)
    }
}

/// The trend a query string asks for, of a report of `days` days whose project has
/// `labels`, and what in it was replaced by a default, in words.
fn parse_trend(
    query: &str,
    days: i64,
    labels: &[ConversionLabel],
) -> (Period, Metric, Vec<String>) {
    let param = |name: &str| crate::query_param(query, name);
    let mut problems = Vec::new();
    let default_period = if days <= 31 {
        Period::Day
    } else {
        Period::Week
    };
    let period = match param("per") {
        None => default_period,
        Some(per) => per.parse().unwrap_or_else(|_| {
            problems.push(format!("“{per}” is not a period (day or week)."));
            default_period
        }),
    };
    let metric = match param("show").as_deref() {
        None | Some("leads") => Metric::Leads,
        Some("value") => Metric::Value,
        Some("lost") => Metric::Lost,
        Some(other) => match other.parse::<Uuid>() {
            Ok(id) if labels.iter().any(|label| label.id == id) => Metric::Label(id),
            _ => {
                problems.push(
                    "The trend shows leads: the label asked for is not one of this project's."
                        .to_owned(),
                );
                Metric::Leads
            }
        },
    };
    (period, metric, problems)
}

/// An option of a `<select>`.
struct Choice {
    value: String,
    label: String,
    selected: bool,
}

/// The options of a `<select>`: `(value, label)`, the one whose value is `selected` chosen.
fn choices(values: Vec<(String, String)>, selected: &str) -> Vec<Choice> {
    values
        .into_iter()
        .map(|(value, label)| Choice {
            selected: value == selected,
            value,
            label,
        })
        .collect()
}

/// The trend of the report's groups: its choices, its small multiples and its table.
struct TrendSection {
    periods: Vec<Choice>,
    /// `day` or `week`.
    period_name: &'static str,
    /// What it can count: leads, each label, lost, value.
    metrics: Vec<Choice>,
    /// What it counts, in words.
    metric_name: String,
    /// Its series, in order.
    names: Vec<String>,
    chart: TrendChart,
    /// Each period's first day and its count in each series, for the table.
    rows: Vec<(String, Vec<String>)>,
}

impl TrendSection {
    fn new(
        report: &Report,
        (period, metric): (Period, Metric),
        labels: &[ConversionLabel],
        currency: &str,
    ) -> Self {
        let trend = report.trend(period, TREND_GROUPS);
        let last_day = report
            .days
            .last()
            .map_or_else(Default::default, |day| day.date);
        let metrics: Vec<(String, String)> = [(Metric::Leads, "Leads".to_owned())]
            .into_iter()
            .chain(labels.iter().map(|l| (Metric::Label(l.id), l.name.clone())))
            .chain([
                (Metric::Lost, "Lost".to_owned()),
                (Metric::Value, format!("Value ({currency})")),
            ])
            .map(|(metric, name)| (metric.param(), name))
            .collect();
        let metric_name = metrics
            .iter()
            .find(|(value, _)| *value == metric.param())
            .map(|(_, name)| name.clone())
            .unwrap_or_default();
        let write = |count: i64| match metric {
            Metric::Value => format::money(count),
            _ => count.to_string(),
        };
        let rows = trend
            .periods
            .iter()
            .enumerate()
            .map(|(n, start)| {
                let counts = trend.series.iter();
                let counts = counts.map(|series| write(metric.count(&series.tallies[n])));
                (start.to_string(), counts.collect())
            })
            .collect();
        let periods = vec![
            ("day".to_owned(), "Per day".to_owned()),
            ("week".to_owned(), "Per week".to_owned()),
        ];
        Self {
            periods: choices(periods, period.as_ref()),
            period_name: match period {
                Period::Day => "day",
                Period::Week => "week",
            },
            metrics: choices(metrics, &metric.param()),
            metric_name,
            names: trend.series.iter().map(|s| s.name.clone()).collect(),
            chart: TrendChart::new(&trend, last_day, |tally| metric.count(tally), write),
            rows,
        }
    }
}

/// A quick range's link.
struct QuickRange {
    href: String,
    label: &'static str,
    current: bool,
}

/// A row of the table.
struct Row {
    name: String,
    not_set: bool,
    leads: u64,
    /// Each label's count, and its own conversion rate.
    labels: Vec<(u64, String)>,
    lost: u64,
    rate: String,
    value: String,
}

impl Row {
    fn new(name: &str, tally: &Tally, labels: &[ConversionLabel]) -> Self {
        Self {
            name: name.to_owned(),
            not_set: name == NOT_SET,
            leads: tally.leads,
            labels: labels
                .iter()
                .map(|label| (tally.label(label.id), percent(tally.label_rate(label.id))))
                .collect(),
            lost: tally.lost,
            rate: rate(tally),
            value: format::money(tally.value),
        }
    }
}

/// A conversion rate as the page writes it: `12.5%`, or `–` without leads.
fn rate(tally: &Tally) -> String {
    percent(tally.conversion_rate())
}

/// A share as the page writes it: `12.5%`, or `–` when there is none.
fn percent(share: Option<f64>) -> String {
    share.map_or_else(|| "–".to_owned(), |rate| format!("{rate:.1}%"))
}

#[derive(Template)]
#[template(path = "reports.html")]
struct ReportsPage {
    layout: Layout,
    public_id: String,
    currency: String,
    from: String,
    to: String,
    range: String,
    touches: Vec<Choice>,
    groupings: Vec<Choice>,
    trend: TrendSection,
    quick_ranges: Vec<QuickRange>,
    problems: Vec<String>,
    group_heading: &'static str,
    touch_name: &'static str,
    labels: Vec<String>,
    rows: Vec<Row>,
    totals: Row,
    converted: u64,
    days_chart: DayChart,
    value_chart: ValueChart,
    days: Vec<(String, u64, u64)>,
    top_groups: usize,
    /// The median time to first touch per group and per person: `(name, median, leads)`.
    touch_groups: Vec<(String, String, u64)>,
    touch_members: Vec<(String, String, u64)>,
    /// How many of the project's open leads have a next step, today.
    coverage: Coverage,
    /// What the range's spend bought; `None` when it could not be counted in time.
    spend: Option<SpendSection>,
    /// The choices of `spend_by`.
    spend_groupings: Vec<Choice>,
}

/// Medians of first touches as the page shows them.
fn touch_rows(medians: &[(String, chrono::Duration, u64)]) -> Vec<(String, String, u64)> {
    medians
        .iter()
        .map(|(name, median, leads)| (name.clone(), crate::format::span(*median), *leads))
        .collect()
}

/// The words for a grouping, as a column heading.
fn grouping_name(by: Grouping) -> &'static str {
    match by {
        Grouping::Source => "Source",
        Grouping::Medium => "Medium",
        Grouping::Campaign => "Campaign",
        Grouping::SourceMedium => "Source / medium",
    }
}

fn touch_name(touch: Touchpoint) -> &'static str {
    match touch {
        Touchpoint::First => "First touch",
        Touchpoint::Last => "Last touch",
    }
}

/// The report page's query string for `query`, with its trend's `per` and `show` when
/// they are given.
fn href(query: &ReportQuery, trend: Option<(Period, Metric)>) -> String {
    let mut serializer = form_urlencoded::Serializer::new(String::new());
    serializer
        .append_pair("from", &query.from.to_string())
        .append_pair("to", &query.to.to_string())
        .append_pair("touch", query.touch.as_ref())
        .append_pair("by", query.by.as_ref());
    if let Some((period, metric)) = trend {
        serializer
            .append_pair("per", period.as_ref())
            .append_pair("show", &metric.param());
    }
    serializer.finish()
}

/// `GET /projects/{project}/reports`: the report its query asks for.
pub(crate) async fn page<S: Store>(store: &S, request: &Request, public_id: &str) -> Response {
    let (viewer, membership) =
        match access::project_page(store, request, public_id, Role::Viewer).await {
            Ok(found) => found,
            Err(response) => return response,
        };
    let today = Utc::now().date_naive();
    let (query, mut problems) = parse_query(&request.query, today);
    let (spend_ask, spend_problem) = SpendAsk::parse(&request.query);
    problems.extend(spend_problem);
    let project = &membership.project;
    let spend_query = RoasQuery {
        from: query.from,
        to: query.to,
        touch: query.touch,
        by: spend_ask.by,
    };
    let read = async {
        let labels = store.labels(project.id).await?;
        let report = store.report(project.id, &query).await?;
        let coverage = store.next_step_coverage(project.id).await?;
        // What the spend bought is its own heavy read: past the store's time limit, the
        // page says so in its place rather than failing whole.
        let spend = match store.roas(project.id, &spend_query).await {
            Err(StoreError::Unavailable(_)) => None,
            spend => Some(spend?),
        };
        Ok::<_, StoreError>((labels, report, coverage, spend))
    };
    let (labels, report, coverage, spend) = match read.await {
        Ok(read) => read,
        Err(err) => return render::store_failure(err, Some(&viewer)),
    };
    let Report { groups, days, .. } = &report;
    let totals = report.totals();
    let (period, metric, trend_problems) = parse_trend(
        &request.query,
        (query.to - query.from).num_days() + 1,
        &labels,
    );
    let spend_href = spend_ask.href(&href(&query, Some((period, metric))));
    let (spend, spend_trend_problem) = match spend {
        Some(spend) => {
            let (section, problem) = SpendSection::new(&spend, &spend_ask, period, &spend_href);
            (Some(section), problem)
        }
        None => (None, None),
    };
    let quick_ranges = QUICK_RANGES
        .into_iter()
        .map(|(days, label)| {
            let quick = ReportQuery {
                from: today - Days::new(days - 1),
                to: today,
                ..query
            };
            QuickRange {
                href: href(&quick, Some((period, metric))),
                label,
                current: quick == query,
            }
        })
        .collect();
    let touches = Touchpoint::VARIANTS
        .iter()
        .map(|t| (t.as_ref().to_owned(), touch_name(*t).to_owned()))
        .collect();
    let groupings = Grouping::VARIANTS
        .iter()
        .map(|g| (g.as_ref().to_owned(), grouping_name(*g).to_owned()))
        .collect();
    let page = ReportsPage {
        layout: Layout::for_project("Reports", &viewer, &membership, "reports"),
        public_id: project.public_id.clone(),
        currency: project.currency.clone(),
        from: query.from.to_string(),
        to: query.to.to_string(),
        range: format!(
            "{} – {}",
            query.from.format("%-d %b %Y"),
            query.to.format("%-d %b %Y")
        ),
        touches: choices(touches, query.touch.as_ref()),
        groupings: choices(groupings, query.by.as_ref()),
        trend: TrendSection::new(&report, (period, metric), &labels, &project.currency),
        quick_ranges,
        problems: problems
            .into_iter()
            .chain(trend_problems)
            .chain(spend_trend_problem)
            .collect(),
        group_heading: grouping_name(query.by),
        touch_name: touch_name(query.touch),
        labels: labels.iter().map(|label| label.name.clone()).collect(),
        rows: groups
            .iter()
            .map(|group| Row::new(&group.name, &group.tally, &labels))
            .collect(),
        converted: totals.converted(),
        totals: Row::new("Total", &totals, &labels),
        days_chart: DayChart::new(days),
        value_chart: ValueChart::new(groups),
        days: days
            .iter()
            .map(|d| (d.date.to_string(), d.leads, d.converted))
            .collect(),
        top_groups: TOP_GROUPS,
        touch_groups: touch_rows(&report.first_touch.by_group),
        touch_members: touch_rows(&report.first_touch.by_member),
        coverage,
        spend,
        spend_groupings: spend_ask.groupings(),
    };
    render::page(StatusCode::OK, &page)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(text: &str) -> NaiveDate {
        text.parse().unwrap()
    }

    #[test]
    fn the_default_is_the_last_30_days_by_first_touch_source_and_medium() {
        let (query, problems) = parse_query("", date("2026-03-31"));
        assert_eq!(
            query,
            ReportQuery {
                from: date("2026-03-02"),
                to: date("2026-03-31"),
                touch: Touchpoint::First,
                by: Grouping::SourceMedium,
            }
        );
        assert!(problems.is_empty());
        assert_eq!(
            href(&query, None),
            "from=2026-03-02&to=2026-03-31&touch=first&by=source_medium"
        );
        assert_eq!(
            href(&query, Some((Period::Week, Metric::Value))),
            "from=2026-03-02&to=2026-03-31&touch=first&by=source_medium&per=week&show=value"
        );
    }

    #[test]
    fn every_parameter_is_read() {
        let (query, problems) = parse_query(
            "from=2026-01-01&to=2026-01-31&touch=last&by=campaign",
            date("2026-03-31"),
        );
        assert_eq!(
            (query.from, query.to, query.touch, query.by),
            (
                date("2026-01-01"),
                date("2026-01-31"),
                Touchpoint::Last,
                Grouping::Campaign
            )
        );
        assert!(problems.is_empty());
        // A start alone runs to today; an end alone covers the 30 days up to it.
        let (query, _) = parse_query("from=2026-03-20", date("2026-03-31"));
        assert_eq!(
            (query.from, query.to),
            (date("2026-03-20"), date("2026-03-31"))
        );
        let (query, _) = parse_query("to=2026-02-28", date("2026-03-31"));
        assert_eq!(
            (query.from, query.to),
            (date("2026-01-30"), date("2026-02-28"))
        );
    }

    #[test]
    fn bad_values_are_said_and_replaced_by_defaults() {
        let today = date("2026-03-31");
        let (query, problems) = parse_query("from=yesterday&touch=middle&by=color", today);
        assert_eq!(query, parse_query("", today).0);
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].contains("“middle” is not a touch"));
        for bad in [
            "from=2026-03-10&to=2026-03-01",
            "from=2024-01-01&to=2026-01-01",
        ] {
            let (query, problems) = parse_query(bad, today);
            assert_eq!(query, parse_query("", today).0, "{bad}");
            assert_eq!(problems.len(), 1, "{bad}: {problems:?}");
        }
        let (_, problems) = parse_query("from=2025-03-31&to=2026-03-31", today);
        assert!(problems.is_empty(), "366 days are allowed");
    }

    #[test]
    fn the_trend_is_per_day_up_to_a_month_and_counts_what_is_asked() {
        assert_eq!(
            parse_trend("", 31, &[]),
            (Period::Day, Metric::Leads, vec![])
        );
        assert_eq!(parse_trend("", 32, &[]).0, Period::Week);
        assert_eq!(
            parse_trend("per=day&show=value", 90, &[]),
            (Period::Day, Metric::Value, vec![])
        );
        let stranger = Uuid::from_u128(7).to_string();
        let (period, metric, problems) = parse_trend(&format!("per=hour&show={stranger}"), 7, &[]);
        assert_eq!(
            (period, metric, problems.len()),
            (Period::Day, Metric::Leads, 2)
        );
    }
}
