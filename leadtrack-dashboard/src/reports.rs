//! `GET /projects/{projectId}/reports`: which sources bring customers, not only form fills.
//!
//! Every view is a URL: `from` and `to` (`YYYY-MM-DD`, inclusive UTC days; the last 30 days
//! by default), `touch` (`first` or `last`; `first` by default) and `by` (`source`,
//! `medium`, `campaign` or `source_medium`; `source_medium` by default). A value that does
//! not parse is replaced by its default, and the page says so.

use askama::Template;
use chrono::{Days, NaiveDate, Utc};
use leadtrack_core::channel::NOT_SET;
use leadtrack_core::label::ConversionLabel;
use leadtrack_core::report::{Grouping, MAX_DAYS, Report, ReportQuery, Tally, Touchpoint};
use leadtrack_core::types::Role;
use leadtrack_core::{Store, StoreError};
use strum::VariantArray;
use warp::http::StatusCode;
use warp::reply::Response;

use crate::chart::{DayChart, TOP_GROUPS, ValueChart};
use crate::render::{self, Layout};
use crate::{Request, access, format};

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

/// An option of a `<select>`.
struct Choice {
    value: &'static str,
    label: &'static str,
    selected: bool,
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

/// The report page's query string for `query`.
fn href(query: &ReportQuery) -> String {
    form_urlencoded::Serializer::new(String::new())
        .append_pair("from", &query.from.to_string())
        .append_pair("to", &query.to.to_string())
        .append_pair("touch", query.touch.as_ref())
        .append_pair("by", query.by.as_ref())
        .finish()
}

/// `GET /projects/{project}/reports`: the report its query asks for.
pub(crate) async fn page<S: Store>(store: &S, request: &Request, public_id: &str) -> Response {
    let (viewer, membership) =
        match access::project_page(store, request, public_id, Role::Member).await {
            Ok(found) => found,
            Err(response) => return response,
        };
    let today = Utc::now().date_naive();
    let (query, problems) = parse_query(&request.query, today);
    let project = &membership.project;
    let read = async {
        let labels = store.labels(project.id).await?;
        let report = store.report(project.id, &query).await?;
        Ok::<_, StoreError>((labels, report))
    };
    let (labels, report) = match read.await {
        Ok(read) => read,
        Err(err) => return render::store_failure(err, Some(&viewer)),
    };
    let Report { groups, days } = &report;
    let totals = report.totals();
    let quick_ranges = QUICK_RANGES
        .into_iter()
        .map(|(days, label)| {
            let quick = ReportQuery {
                from: today - Days::new(days - 1),
                to: today,
                ..query
            };
            QuickRange {
                href: href(&quick),
                label,
                current: quick == query,
            }
        })
        .collect();
    let choices = |values: Vec<(&'static str, &'static str)>, selected: &str| {
        values
            .into_iter()
            .map(|(value, label)| Choice {
                value,
                label,
                selected: value == selected,
            })
            .collect()
    };
    let touches = Touchpoint::VARIANTS
        .iter()
        .map(|t| (t.as_ref(), touch_name(*t)))
        .collect();
    let groupings = Grouping::VARIANTS
        .iter()
        .map(|g| (g.as_ref(), grouping_name(*g)))
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
        quick_ranges,
        problems,
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
            href(&query),
            "from=2026-03-02&to=2026-03-31&touch=first&by=source_medium"
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
}
