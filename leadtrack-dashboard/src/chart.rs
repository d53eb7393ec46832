//! The reports' charts, drawn on the server as inline SVG: the geometry is computed here,
//! the markup is in the templates.
//!
//! Horizontal positions are percentages of the chart's width and vertical ones pixels, so a
//! chart fills any width while its text keeps the page's size (no viewBox scaling shrinks
//! it on a phone).

use chrono::NaiveDate;
use leadtrack_core::report::{ReportDay, ReportGroup, Trend};

use crate::format;

/// The daily chart's height in pixels, and where its plot area starts and ends.
const DAY_HEIGHT: f64 = 220.0;
const PLOT_TOP: f64 = 16.0;
const PLOT_BOTTOM: f64 = 192.0;
/// At most this many dates are written under the daily chart.
const MAX_DATE_LABELS: usize = 7;
/// The value chart's rows: label line, then the bar.
const ROW_HEIGHT: f64 = 44.0;
/// Groups the value chart shows.
pub(crate) const TOP_GROUPS: usize = 10;

/// Leads per day with the ones converted inside them, as columns.
pub(crate) struct DayChart {
    /// The SVG's height in pixels.
    pub(crate) height: f64,
    /// One per day.
    pub(crate) bars: Vec<DayBar>,
    /// Horizontal grid lines with their numbers.
    pub(crate) ticks: Vec<Tick>,
    /// Dates under the columns.
    pub(crate) dates: Vec<DateLabel>,
    /// The dates' baseline in pixels.
    pub(crate) dates_y: f64,
}

/// One day's columns.
pub(crate) struct DayBar {
    /// The left edge, in percent of the chart's width.
    pub(crate) x: String,
    /// The width, in percent of the chart's width.
    pub(crate) width: String,
    /// The leads column's top, in pixels.
    pub(crate) leads_y: f64,
    /// The leads column's height, in pixels.
    pub(crate) leads_height: f64,
    /// The converted column's top, in pixels (it is drawn over the leads column).
    pub(crate) converted_y: f64,
    /// The converted column's height, in pixels.
    pub(crate) converted_height: f64,
    /// What a pointer resting on the day shows.
    pub(crate) title: String,
}

/// A grid line.
pub(crate) struct Tick {
    /// Its height in pixels.
    pub(crate) y: f64,
    /// Its number's baseline, just above it.
    pub(crate) label_y: f64,
    /// Its number.
    pub(crate) text: String,
}

/// A date under the columns.
pub(crate) struct DateLabel {
    /// The middle of its day's column, in percent.
    pub(crate) x: String,
    /// `Mar 3`.
    pub(crate) text: String,
}

/// The groups worth the most, as horizontal bars.
pub(crate) struct ValueChart {
    /// The SVG's height in pixels.
    pub(crate) height: f64,
    /// One per group, most valuable first.
    pub(crate) bars: Vec<ValueBar>,
}

/// One group's bar.
pub(crate) struct ValueBar {
    /// The group's name.
    pub(crate) name: String,
    /// Its value, formatted.
    pub(crate) value: String,
    /// The baseline of its label line, in pixels.
    pub(crate) text_y: f64,
    /// The bar's top in pixels.
    pub(crate) bar_y: f64,
    /// The bar's width, in percent of the chart's width.
    pub(crate) width: String,
}

/// A small multiple's height in pixels, and its plot's bottom.
const MULTIPLE_HEIGHT: f64 = 64.0;
const MULTIPLE_BOTTOM: f64 = 60.0;

/// A trend as small multiples: one small column chart per group, all on one scale so
/// their heights compare.
pub(crate) struct TrendChart {
    /// Each chart's height in pixels.
    pub(crate) height: f64,
    /// The baseline's height.
    pub(crate) baseline: f64,
    /// One per series, in the trend's order.
    pub(crate) multiples: Vec<Multiple>,
    /// The range's first and last days, written under each chart.
    pub(crate) first: String,
    pub(crate) last: String,
    /// The largest count of a period, as the scale's top says it.
    pub(crate) top: String,
}

/// One group's small chart.
pub(crate) struct Multiple {
    pub(crate) name: String,
    /// The whole range's count, formatted.
    pub(crate) total: String,
    /// One column per period with any.
    pub(crate) bars: Vec<Column>,
}

/// A period's column of a small multiple.
pub(crate) struct Column {
    pub(crate) x: String,
    pub(crate) width: String,
    pub(crate) y: f64,
    pub(crate) height: f64,
    /// What a pointer resting on it shows: the period and its count.
    pub(crate) title: String,
}

impl TrendChart {
    /// The chart of `trend`, a range ending on `last_day`, each period's count read by
    /// `count` and written by `write`.
    pub(crate) fn new(
        trend: &Trend,
        last_day: NaiveDate,
        count: impl Fn(&leadtrack_core::report::Tally) -> i64,
        write: impl Fn(i64) -> String,
    ) -> Self {
        let series: Vec<(String, Vec<i64>)> = trend
            .series
            .iter()
            .map(|series| {
                let counts = series.tallies.iter().map(&count).collect();
                (series.name.clone(), counts)
            })
            .collect();
        Self::of(&series, (&trend.periods, last_day), write)
    }

    /// The chart of named `series` of counts, one per period of `periods` (each period's
    /// first day; the range ends on `last_day`), written by `write`.
    pub(crate) fn of(
        series: &[(String, Vec<i64>)],
        (periods, last_day): (&[NaiveDate], NaiveDate),
        write: impl Fn(i64) -> String,
    ) -> Self {
        let most = series
            .iter()
            .flat_map(|(_, counts)| counts)
            .copied()
            .max()
            .unwrap_or(0)
            .max(1);
        let band = 100.0 / periods.len().max(1) as f64;
        let scale = (MULTIPLE_BOTTOM - 2.0) / most as f64;
        let date = |date: Option<&NaiveDate>| {
            date.map(|d| d.format("%b %-d").to_string())
                .unwrap_or_default()
        };
        let multiples = series
            .iter()
            .map(|(name, counts)| Multiple {
                name: name.clone(),
                total: write(counts.iter().sum()),
                bars: counts
                    .iter()
                    .zip(periods)
                    .enumerate()
                    .filter(|(_, (count, _))| **count > 0)
                    .map(|(n, (count, start))| {
                        let height = (*count as f64 * scale).max(1.0);
                        Column {
                            x: percent(n as f64 * band + band * 0.1),
                            width: percent(band * 0.8),
                            y: MULTIPLE_BOTTOM - height,
                            height,
                            title: format!("{}: {}", start.format("%Y-%m-%d"), write(*count)),
                        }
                    })
                    .collect(),
            })
            .collect();
        Self {
            height: MULTIPLE_HEIGHT,
            baseline: MULTIPLE_BOTTOM,
            multiples,
            first: date(periods.first()),
            last: date(Some(&last_day)),
            top: write(most),
        }
    }
}

fn percent(value: f64) -> String {
    format!("{:.3}%", value)
}

/// The smallest "nice" number (1, 2 or 5 times a power of ten) of at least `value`.
fn nice_step(value: f64) -> f64 {
    let magnitude = 10f64.powf(value.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|step| *step >= value)
        .unwrap_or(10.0 * magnitude)
}

impl DayChart {
    /// The chart of `days`, oldest first.
    pub(crate) fn new(days: &[ReportDay]) -> Self {
        let most = days.iter().map(|d| d.leads).max().unwrap_or(0).max(1);
        // About four grid lines, on whole numbers.
        let step = nice_step((most as f64 / 4.0).max(1.0));
        let top = (most as f64 / step).ceil() * step;
        let scale = (PLOT_BOTTOM - PLOT_TOP) / top;
        let y = |count: u64| PLOT_BOTTOM - count as f64 * scale;
        let ticks = (0..)
            .map(|n| n as f64 * step)
            .take_while(|value| *value <= top)
            .map(|value| Tick {
                y: PLOT_BOTTOM - value * scale,
                label_y: PLOT_BOTTOM - value * scale - 4.0,
                text: format!("{value}"),
            })
            .collect();
        let band = 100.0 / days.len().max(1) as f64;
        let bars = days
            .iter()
            .enumerate()
            .map(|(n, day)| DayBar {
                x: percent(n as f64 * band + band * 0.15),
                width: percent(band * 0.7),
                leads_y: y(day.leads),
                leads_height: PLOT_BOTTOM - y(day.leads),
                converted_y: y(day.converted),
                converted_height: PLOT_BOTTOM - y(day.converted),
                title: format!(
                    "{}: {} lead{}, {} converted",
                    day.date.format("%Y-%m-%d"),
                    day.leads,
                    if day.leads == 1 { "" } else { "s" },
                    day.converted
                ),
            })
            .collect();
        let every = days.len().div_ceil(MAX_DATE_LABELS).max(1);
        let dates = days
            .iter()
            .enumerate()
            .step_by(every)
            .map(|(n, day)| DateLabel {
                x: percent((n as f64 + 0.5) * band),
                text: day.date.format("%b %-d").to_string(),
            })
            .collect();
        Self {
            height: DAY_HEIGHT,
            bars,
            ticks,
            dates,
            dates_y: PLOT_BOTTOM + 20.0,
        }
    }
}

impl ValueChart {
    /// The [`TOP_GROUPS`] groups worth the most (those worth anything), most first.
    pub(crate) fn new(groups: &[ReportGroup]) -> Self {
        let mut worth: Vec<&ReportGroup> = groups.iter().filter(|g| g.tally.value > 0).collect();
        worth.sort_by(|a, b| b.tally.value.cmp(&a.tally.value).then(a.name.cmp(&b.name)));
        worth.truncate(TOP_GROUPS);
        let most = worth.first().map_or(1, |g| g.tally.value).max(1) as f64;
        let bars = worth
            .iter()
            .enumerate()
            .map(|(n, group)| {
                let top = n as f64 * ROW_HEIGHT;
                ValueBar {
                    name: group.name.clone(),
                    value: format::money(group.tally.value),
                    text_y: top + 16.0,
                    bar_y: top + 22.0,
                    width: percent((group.tally.value as f64 / most * 100.0).max(0.5)),
                }
            })
            .collect::<Vec<_>>();
        Self {
            height: bars.len() as f64 * ROW_HEIGHT,
            bars,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;
    use leadtrack_core::report::Tally;

    #[test]
    fn steps_are_one_two_or_five() {
        for (value, step) in [
            (0.3, 0.5),
            (1.0, 1.0),
            (1.5, 2.0),
            (3.0, 5.0),
            (7.0, 10.0),
            (26.0, 50.0),
        ] {
            assert_eq!(nice_step(value), step, "{value}");
        }
    }

    #[test]
    fn columns_scale_to_the_busiest_day() {
        let day = |d, leads, converted| ReportDay {
            date: NaiveDate::from_ymd_opt(2026, 3, d).unwrap(),
            leads,
            converted,
        };
        let chart = DayChart::new(&[day(1, 8, 2), day(2, 0, 0)]);
        let ticks: Vec<&str> = chart.ticks.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(ticks, ["0", "2", "4", "6", "8"]);
        let busy = &chart.bars[0];
        assert_eq!(
            (busy.leads_y, busy.leads_height),
            (PLOT_TOP, PLOT_BOTTOM - PLOT_TOP)
        );
        assert_eq!(busy.converted_height, (PLOT_BOTTOM - PLOT_TOP) / 4.0);
        assert_eq!(
            (busy.x.as_str(), busy.width.as_str()),
            ("7.500%", "35.000%")
        );
        assert_eq!(chart.bars[1].leads_height, 0.0);
        assert_eq!(busy.title, "2026-03-01: 8 leads, 2 converted");
        assert_eq!(chart.dates[1].text, "Mar 2");
    }

    #[test]
    fn small_multiples_share_one_scale() {
        use leadtrack_core::report::TrendSeries;
        let tallies = |leads: [u64; 3]| {
            leads
                .map(|leads| Tally {
                    leads,
                    ..Tally::default()
                })
                .to_vec()
        };
        let trend = Trend {
            periods: (1..=3)
                .map(|d| NaiveDate::from_ymd_opt(2026, 3, d).unwrap())
                .collect(),
            series: vec![
                TrendSeries {
                    name: "google".into(),
                    tallies: tallies([4, 0, 2]),
                },
                TrendSeries {
                    name: "Other".into(),
                    tallies: tallies([1, 1, 0]),
                },
            ],
        };
        let last = NaiveDate::from_ymd_opt(2026, 3, 3).unwrap();
        let chart = TrendChart::new(&trend, last, |t| t.leads as i64, |n| n.to_string());
        assert_eq!(
            (
                chart.first.as_str(),
                chart.last.as_str(),
                chart.top.as_str()
            ),
            ("Mar 1", "Mar 3", "4")
        );
        let google = &chart.multiples[0];
        assert_eq!(google.total, "6");
        assert_eq!(google.bars.len(), 2, "no column for a period without any");
        assert_eq!(google.bars[0].height, MULTIPLE_BOTTOM - 2.0);
        assert_eq!(google.bars[1].x, "70.000%");
        assert_eq!(
            chart.multiples[1].bars[0].height,
            (MULTIPLE_BOTTOM - 2.0) / 4.0
        );
        assert_eq!(google.bars[1].title, "2026-03-03: 2");
    }

    #[test]
    fn value_bars_are_the_most_valuable_groups() {
        let group = |name: &str, value| ReportGroup {
            name: name.to_owned(),
            tally: Tally {
                value,
                ..Tally::default()
            },
        };
        let groups: Vec<ReportGroup> = (0..12)
            .map(|n| group(&format!("g{n:02}"), n * 1_000))
            .collect();
        let chart = ValueChart::new(&groups);
        assert_eq!(chart.bars.len(), TOP_GROUPS);
        assert_eq!(chart.bars[0].name, "g11");
        assert_eq!(chart.bars[0].width, "100.000%");
        assert_eq!(chart.bars[0].value, "110.00");
        assert_eq!(chart.bars[9].name, "g02", "nothing worth nothing");
        assert!(ValueChart::new(&[group("x", 0)]).bars.is_empty());
    }
}
