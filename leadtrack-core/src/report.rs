//! Reports: a project's leads over a range of days, counted by where they came from and how
//! they were rated, so that a team sees which sources bring customers, not only form fills.
//!
//! A store reads the leads created in the range and feeds each one to a
//! [`ReportBuilder`]; the counting rules (which group, what converted, what the value is)
//! live here, once for every backend.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Datelike, Days, Duration, NaiveDate, Utc};
use strum::{AsRefStr, Display, EnumString, VariantArray};
use uuid::Uuid;

use crate::channel::{NOT_SET, Touch};
use crate::label::ConversionLabel;
use crate::types::{ConversionId, LeadStatus};

/// The longest range a report covers, in days.
pub const MAX_DAYS: u64 = 366;

/// Which touch of a lead's channel path a report credits with the lead.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, AsRefStr, Display, EnumString, VariantArray,
)]
#[strum(serialize_all = "snake_case")]
pub enum Touchpoint {
    /// The visit that brought the lead to the site the first time.
    #[default]
    First,
    /// The visit the form was sent in.
    Last,
}

/// What a report groups leads by, from the credited touch.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, AsRefStr, Display, EnumString, VariantArray,
)]
#[strum(serialize_all = "snake_case")]
pub enum Grouping {
    /// `google`, `newsletter`, ...
    Source,
    /// `cpc`, `email`, ...
    Medium,
    /// The campaign name.
    Campaign,
    /// `google / cpc`, as [`Touch::label`] writes it.
    #[default]
    SourceMedium,
}

/// What a report covers: the leads created from `from` to `to` (inclusive UTC days),
/// credited to one touch and grouped one way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReportQuery {
    /// The first day.
    pub from: NaiveDate,
    /// The last day, inclusive.
    pub to: NaiveDate,
    /// The touch credited.
    pub touch: Touchpoint,
    /// The grouping.
    pub by: Grouping,
}

impl ReportQuery {
    /// The first instant covered: `from` at midnight UTC.
    pub fn start(&self) -> DateTime<Utc> {
        self.from.and_time(chrono::NaiveTime::MIN).and_utc()
    }

    /// The first instant after the range: the day after `to`, at midnight UTC.
    pub fn end(&self) -> DateTime<Utc> {
        (self.to + Days::new(1))
            .and_time(chrono::NaiveTime::MIN)
            .and_utc()
    }

    /// Every day of the range, oldest first (none when `to` is before `from`).
    pub fn days(&self) -> impl Iterator<Item = NaiveDate> + use<> {
        let to = self.to;
        self.from.iter_days().take_while(move |day| *day <= to)
    }
}

/// Counts of leads and their ratings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Leads.
    pub leads: u64,
    /// Leads whose conversion id is each label.
    pub labels: BTreeMap<Uuid, u64>,
    /// Leads whose conversion id is `lost`.
    pub lost: u64,
    /// The prices of the leads rated with a label, summed, in cents.
    pub value: i64,
}

impl Tally {
    /// Counts `leads` leads whose conversion id is `conversion` and whose prices sum to
    /// `value` cents. The value counts only for labels: a lost lead is worth nothing.
    pub fn add(&mut self, conversion: Option<ConversionId>, leads: u64, value: i64) {
        self.leads += leads;
        match conversion {
            Some(ConversionId::Label(id)) => {
                *self.labels.entry(id).or_default() += leads;
                self.value += value;
            }
            Some(ConversionId::Lost) => self.lost += leads,
            Some(ConversionId::Open) | None => {}
        }
    }

    /// Leads whose conversion id is the label `id`.
    pub fn label(&self, id: Uuid) -> u64 {
        self.labels.get(&id).copied().unwrap_or_default()
    }

    /// Leads rated with any label.
    pub fn converted(&self) -> u64 {
        self.labels.values().sum()
    }

    /// The share of leads rated with any label, in percent; `None` without leads.
    pub fn conversion_rate(&self) -> Option<f64> {
        (self.leads > 0).then(|| self.converted() as f64 * 100.0 / self.leads as f64)
    }

    /// The share of the leads (in percent) whose last rating is `label`: each label's own
    /// conversion rate; `None` without leads.
    pub fn label_rate(&self, label: Uuid) -> Option<f64> {
        (self.leads > 0).then(|| self.label(label) as f64 * 100.0 / self.leads as f64)
    }

    fn merge(&mut self, other: &Tally) {
        self.leads += other.leads;
        for (id, count) in &other.labels {
            *self.labels.entry(*id).or_default() += count;
        }
        self.lost += other.lost;
        self.value += other.value;
    }
}

/// One row of a report: the leads of one group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportGroup {
    /// The group's name (`google / cpc`, `spring-sale`), or [`NOT_SET`] for the leads
    /// nothing is known of.
    pub name: String,
    /// Its counts.
    pub tally: Tally,
}

/// The leads of one day of the range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReportDay {
    /// The day (UTC).
    pub date: NaiveDate,
    /// Leads created that day.
    pub leads: u64,
    /// Of those, the ones rated with a label.
    pub converted: u64,
}

/// The leads of one group created on one day of the range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportCell {
    /// The group: its index in [`Report::groups`].
    pub group: usize,
    /// The day: its index in [`Report::days`].
    pub day: usize,
    /// Their counts.
    pub tally: Tally,
}

/// A report: its groups, its days, and each group's days.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// One per group with leads: most leads first, ties by name.
    pub groups: Vec<ReportGroup>,
    /// Every day of the range, oldest first, days without leads included.
    pub days: Vec<ReportDay>,
    /// The days each group had leads on (only those), by group then day.
    pub cells: Vec<ReportCell>,
    /// How long the range's leads waited for their first touch
    /// ([`crate::activity::first_touch`]).
    pub first_touch: FirstTouches,
}

/// The median time to first touch of the leads a person touched, per group and per
/// person: how fast the team answers, and where it is slow.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FirstTouches {
    /// Per group (as [`Report::groups`] names them) with touched leads: the median wait and
    /// how many leads were touched; by name.
    pub by_group: Vec<(String, Duration, u64)>,
    /// Per person who touched leads first: the median wait and how many; by name.
    pub by_member: Vec<(String, Duration, u64)>,
}

/// What a report needs to know of a lead a person touched: its credited touch's columns,
/// how long after its creation the first touch came, and who made it.
#[derive(Clone, Copy, Debug)]
pub struct TouchedLead<'a> {
    /// The touch's source; `None` when nothing is known of where the lead came from.
    pub source: Option<&'a str>,
    /// The touch's medium.
    pub medium: Option<&'a str>,
    /// The touch's campaign.
    pub campaign: Option<&'a str>,
    /// How long after its creation it was first touched, in milliseconds.
    pub waited_ms: i64,
    /// The name of the person who touched it first.
    pub by: &'a str,
}

/// The median of `values` (the mean of the two middle ones for an even count); `None` for
/// none.
pub fn median(values: &mut [i64]) -> Option<i64> {
    values.sort_unstable();
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        // In 128 bits, so that two large waits cannot overflow their sum.
        _ => {
            let middle = (i128::from(values[n / 2 - 1]) + i128::from(values[n / 2])) / 2;
            i64::try_from(middle).ok()
        }
    }
}

/// How a trend divides a report's range.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, AsRefStr, Display, EnumString, VariantArray,
)]
#[strum(serialize_all = "snake_case")]
pub enum Period {
    /// Each day.
    #[default]
    Day,
    /// Each week, Monday to Sunday (the first and last may be cut by the range).
    Week,
}

/// A report's groups over time: the groups with the most leads, each counted per period,
/// and the rest together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trend {
    /// The first day of each period, oldest first.
    pub periods: Vec<NaiveDate>,
    /// The groups with the most leads, most first, then `Other` for the rest (if any).
    pub series: Vec<TrendSeries>,
}

/// One group's counts per period.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrendSeries {
    /// The group's name, or [`OTHER`].
    pub name: String,
    /// One per period of the trend.
    pub tallies: Vec<Tally>,
}

/// The name of a trend's series of the groups beyond its top ones.
pub const OTHER: &str = "Other";

impl Report {
    /// The trend of the `top` groups with the most leads (the rest as [`OTHER`]), per
    /// `period`.
    pub fn trend(&self, period: Period, top: usize) -> Trend {
        let first = self.days.first().map(|day| day.date);
        // Days before the first Monday of the range, counted in its first week.
        let lead_in = first.map_or(0, |date| date.weekday().num_days_from_monday() as usize);
        let index = |day: usize| match period {
            Period::Day => day,
            Period::Week => (day + lead_in) / 7,
        };
        let periods: Vec<NaiveDate> = self
            .days
            .iter()
            .enumerate()
            .filter(|(n, _)| *n == 0 || index(*n) != index(n - 1))
            .map(|(_, day)| day.date)
            .collect();
        let shown = self.groups.len().min(top);
        let others = self.groups.len() > shown;
        let mut series: Vec<TrendSeries> = self.groups[..shown]
            .iter()
            .map(|group| group.name.clone())
            .chain(others.then(|| OTHER.to_owned()))
            .map(|name| TrendSeries {
                name,
                tallies: vec![Tally::default(); periods.len()],
            })
            .collect();
        for cell in &self.cells {
            let row = cell.group.min(shown);
            if let Some(tally) = series[row].tallies.get_mut(index(cell.day)) {
                tally.merge(&cell.tally);
            }
        }
        Trend { periods, series }
    }

    /// The counts of every group together.
    pub fn totals(&self) -> Tally {
        let mut totals = Tally::default();
        for group in &self.groups {
            totals.merge(&group.tally);
        }
        totals
    }
}

/// What a report needs to know of one lead: the credited touch's columns as a store keeps
/// them (see [`touch_columns`]), its rating and its price.
#[derive(Clone, Copy, Debug)]
pub struct ReportLead<'a> {
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// The touch's source; `None` when nothing is known of where the lead came from.
    pub source: Option<&'a str>,
    /// The touch's medium.
    pub medium: Option<&'a str>,
    /// The touch's campaign.
    pub campaign: Option<&'a str>,
    /// The lead's conversion id.
    pub conversion_id: Option<ConversionId>,
    /// Its status now.
    pub status: LeadStatus,
    /// Its price in cents.
    pub price: Option<i64>,
}

/// The columns a store keeps of a lead's first and last touch, so that reports group
/// without reading the lead's data: `[source, medium, campaign]` of the first touch, then
/// of the last; all `None` when nothing is known of where the lead came from.
pub fn touch_columns(touches: &[Touch]) -> [Option<&str>; 6] {
    fn columns(touch: &Touch) -> [Option<&str>; 3] {
        [
            Some(touch.source.as_str()),
            Some(touch.medium.as_str()),
            touch.campaign.as_deref(),
        ]
    }
    match crate::channel::first_and_last(touches) {
        Some((first, last)) => {
            let ([a, b, c], [d, e, f]) = (columns(first), columns(last));
            [a, b, c, d, e, f]
        }
        None => [None; 6],
    }
}

/// What `lead` counts as now: its conversion, unless it was reset to open since (an open
/// lead with `lost`, or with one of the `done_labels` that mark leads done, was reset; one
/// with a label that keeps leads open, such as Qualified, is that label's).
pub fn counted_conversion(lead: &ReportLead<'_>, done_labels: &[Uuid]) -> Option<ConversionId> {
    match (lead.status, lead.conversion_id) {
        (LeadStatus::Open, Some(ConversionId::Lost)) => None,
        (LeadStatus::Open, Some(ConversionId::Label(id))) if done_labels.contains(&id) => None,
        (_, conversion) => conversion,
    }
}

/// The labels of `labels` that mark a lead done: a lead rated with one is a customer.
pub fn done_labels(labels: &[ConversionLabel]) -> Vec<Uuid> {
    labels
        .iter()
        .filter(|label| label.mark_as_done)
        .map(|label| label.id)
        .collect()
}

/// Counts leads into a [`Report`], one lead at a time, holding only one tally per group
/// and per day (never the leads themselves).
#[derive(Debug)]
pub struct ReportBuilder {
    query: ReportQuery,
    start: DateTime<Utc>,
    /// Each group's index in `groups`.
    index: HashMap<String, usize>,
    groups: Vec<ReportGroup>,
    days: Vec<ReportDay>,
    /// Each group's days with leads: `(group, day)` to their counts.
    cells: HashMap<(usize, usize), Tally>,
    /// Reused for every lead's group name, so counting allocates only for a new group.
    name: String,
    /// The labels that mark a lead done: an open lead with one of them was reset.
    done_labels: Vec<Uuid>,
    /// The waits for a first touch, in milliseconds, per group name and per person.
    touch_waits: (HashMap<String, Vec<i64>>, HashMap<String, Vec<i64>>),
}

impl ReportBuilder {
    /// An empty report for `query`, of a project whose labels are `labels`.
    pub fn new(query: &ReportQuery, labels: &[ConversionLabel]) -> Self {
        Self {
            query: *query,
            start: query.start(),
            index: HashMap::new(),
            groups: Vec::new(),
            days: query
                .days()
                .map(|date| ReportDay {
                    date,
                    leads: 0,
                    converted: 0,
                })
                .collect(),
            cells: HashMap::new(),
            name: String::new(),
            done_labels: done_labels(labels),
            touch_waits: (HashMap::new(), HashMap::new()),
        }
    }

    /// Puts the name of the group of a lead whose touch has these columns in `self.name`.
    fn name_group(&mut self, source: Option<&str>, medium: Option<&str>, campaign: Option<&str>) {
        self.name.clear();
        match (self.query.by, source) {
            (_, None) => self.name.push_str(NOT_SET),
            (Grouping::Source, Some(source)) => self.name.push_str(source),
            (Grouping::Medium, Some(_)) => self.name.push_str(medium.unwrap_or(NOT_SET)),
            (Grouping::Campaign, Some(_)) => self.name.push_str(campaign.unwrap_or(NOT_SET)),
            (Grouping::SourceMedium, Some(source)) => {
                self.name.push_str(source);
                self.name.push_str(" / ");
                self.name.push_str(medium.unwrap_or(NOT_SET));
            }
        }
    }

    /// Counts the first touch of a lead of the range that a person touched.
    pub fn add_touch(&mut self, lead: TouchedLead<'_>) {
        self.name_group(lead.source, lead.medium, lead.campaign);
        let (by_group, by_member) = &mut self.touch_waits;
        by_group
            .entry(self.name.clone())
            .or_default()
            .push(lead.waited_ms);
        by_member
            .entry(lead.by.to_owned())
            .or_default()
            .push(lead.waited_ms);
    }

    /// The query being counted.
    pub fn query(&self) -> &ReportQuery {
        &self.query
    }

    /// Counts one lead created in the range.
    pub fn add(&mut self, lead: ReportLead<'_>) {
        self.name_group(lead.source, lead.medium, lead.campaign);
        let at = match self.index.get(self.name.as_str()) {
            Some(&at) => at,
            None => {
                self.index.insert(self.name.clone(), self.groups.len());
                self.groups.push(ReportGroup {
                    name: self.name.clone(),
                    tally: Tally::default(),
                });
                self.groups.len() - 1
            }
        };
        let value = lead.price.unwrap_or_default();
        let conversion = counted_conversion(&lead, &self.done_labels);
        self.groups[at].tally.add(conversion, 1, value);
        let day = (lead.created_at - self.start).num_days();
        let day = usize::try_from(day).ok().filter(|d| *d < self.days.len());
        if let Some(day) = day {
            self.days[day].leads += 1;
            if matches!(conversion, Some(ConversionId::Label(_))) {
                self.days[day].converted += 1;
            }
            let cell = self.cells.entry((at, day)).or_default();
            cell.add(conversion, 1, value);
        }
    }

    /// The report of the leads counted.
    pub fn finish(self) -> Report {
        let mut groups: Vec<(usize, ReportGroup)> = self.groups.into_iter().enumerate().collect();
        groups.sort_by(|(_, a), (_, b)| {
            b.tally
                .leads
                .cmp(&a.tally.leads)
                .then_with(|| a.name.cmp(&b.name))
        });
        // Where each group, by the order it was counted in, stands once sorted.
        let mut rank = vec![0; groups.len()];
        for (sorted, (counted, _)) in groups.iter().enumerate() {
            rank[*counted] = sorted;
        }
        let mut cells: Vec<ReportCell> = self
            .cells
            .into_iter()
            .map(|((group, day), tally)| ReportCell {
                group: rank[group],
                day,
                tally,
            })
            .collect();
        cells.sort_by_key(|cell| (cell.group, cell.day));
        let (by_group, by_member) = self.touch_waits;
        Report {
            groups: groups.into_iter().map(|(_, group)| group).collect(),
            days: self.days,
            cells,
            first_touch: FirstTouches {
                by_group: medians(by_group),
                by_member: medians(by_member),
            },
        }
    }
}

/// Each name's median wait and count, by name.
fn medians(waits: HashMap<String, Vec<i64>>) -> Vec<(String, Duration, u64)> {
    let mut medians: Vec<_> = waits
        .into_iter()
        .filter_map(|(name, mut waits)| {
            let count = waits.len() as u64;
            median(&mut waits).map(|ms| (name, Duration::milliseconds(ms), count))
        })
        .collect();
    medians.sort_by(|a, b| a.0.cmp(&b.0));
    medians
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn query(by: Grouping) -> ReportQuery {
        ReportQuery {
            from: NaiveDate::from_ymd_opt(2026, 3, 1).unwrap(),
            to: NaiveDate::from_ymd_opt(2026, 3, 3).unwrap(),
            touch: Touchpoint::First,
            by,
        }
    }

    fn lead<'a>(
        day: u32,
        touch: Option<(&'a str, &'a str, Option<&'a str>)>,
        conversion_id: Option<ConversionId>,
        price: Option<i64>,
    ) -> ReportLead<'a> {
        ReportLead {
            created_at: Utc.with_ymd_and_hms(2026, 3, day, 23, 59, 59).unwrap(),
            source: touch.map(|t| t.0),
            medium: touch.map(|t| t.1),
            campaign: touch.and_then(|t| t.2),
            conversion_id,
            status: match conversion_id {
                None => LeadStatus::Open,
                Some(_) => LeadStatus::Rated,
            },
            price,
        }
    }

    #[test]
    fn a_lead_reset_to_open_counts_as_open() {
        let won = Uuid::from_u128(1);
        let qualified = Uuid::from_u128(2);
        let label = |id, mark_as_done| ConversionLabel {
            id,
            project_id: crate::types::ProjectId(1),
            name: String::new(),
            mark_as_done,
            mapping: crate::label::LabelMapping::default(),
            created_at: Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap(),
            archived: false,
        };
        let labels = [label(won, true), label(qualified, false)];
        let mut builder = ReportBuilder::new(&query(Grouping::Source), &labels);
        let google = Some(("google", "cpc", None));
        for (conversion, status) in [
            (ConversionId::Label(won), LeadStatus::Open),
            (ConversionId::Lost, LeadStatus::Open),
            (ConversionId::Label(qualified), LeadStatus::Open),
            (ConversionId::Lost, LeadStatus::Pending),
        ] {
            builder.add(ReportLead {
                status,
                ..lead(1, google, Some(conversion), Some(100))
            });
        }
        let tally = &builder.finish().groups[0].tally;
        assert_eq!(
            (
                tally.leads,
                tally.label(won),
                tally.label(qualified),
                tally.lost
            ),
            (4, 0, 1, 1),
            "the reset ones count as open; Qualified keeps leads open; pending counts"
        );
    }

    #[test]
    fn first_touches_are_medians_per_group_and_person() {
        let mut odd = [5, 1, 3];
        assert_eq!(median(&mut odd), Some(3));
        assert_eq!(median(&mut [4, 1, 3, 2]), Some(2));
        assert_eq!(median(&mut [1, 2]), Some(1));
        assert_eq!(median(&mut [i64::MAX, i64::MAX]), Some(i64::MAX));
        assert_eq!(median(&mut []), None);
        let mut builder = ReportBuilder::new(&query(Grouping::Source), &[]);
        let minutes = |m: i64| m * 60_000;
        for (source, waited, by) in [
            (Some("google"), 10, "Ada"),
            (Some("google"), 30, "Grace"),
            (Some("google"), 50, "Ada"),
            (None, 120, "Ada"),
        ] {
            builder.add_touch(TouchedLead {
                source,
                medium: Some("cpc"),
                campaign: None,
                waited_ms: minutes(waited),
                by,
            });
        }
        let touches = builder.finish().first_touch;
        let mins = Duration::minutes;
        assert_eq!(
            touches.by_group,
            [
                ("(not set)".to_owned(), mins(120), 1),
                ("google".to_owned(), mins(30), 3)
            ]
        );
        assert_eq!(
            touches.by_member,
            [
                ("Ada".to_owned(), mins(50), 3),
                ("Grace".to_owned(), mins(30), 1)
            ]
        );
    }

    #[test]
    fn the_range_is_whole_utc_days() {
        let q = query(Grouping::Source);
        assert_eq!(
            q.start(),
            Utc.with_ymd_and_hms(2026, 3, 1, 0, 0, 0).unwrap()
        );
        assert_eq!(q.end(), Utc.with_ymd_and_hms(2026, 3, 4, 0, 0, 0).unwrap());
        assert_eq!(q.days().count(), 3);
        assert_eq!(
            "source_medium".parse::<Grouping>(),
            Ok(Grouping::SourceMedium)
        );
        assert_eq!(Touchpoint::Last.as_ref(), "last");
    }

    #[test]
    fn leads_are_counted_by_group_rating_and_day() {
        let won = Uuid::from_u128(1);
        let google = Some(("google", "cpc", Some("spring")));
        let mut builder = ReportBuilder::new(&query(Grouping::SourceMedium), &[]);
        builder.add(lead(1, google, Some(ConversionId::Label(won)), Some(5_000)));
        builder.add(lead(1, google, Some(ConversionId::Lost), Some(900)));
        builder.add(lead(3, google, None, Some(100)));
        builder.add(lead(3, None, Some(ConversionId::Label(won)), None));
        builder.add(lead(2, Some(("news", "(not set)", None)), None, None));
        let report = builder.finish();
        let names: Vec<&str> = report.groups.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["google / cpc", "(not set)", "news / (not set)"]);
        let google = &report.groups[0].tally;
        assert_eq!((google.leads, google.label(won), google.lost), (3, 1, 1));
        assert_eq!(
            google.value, 5_000,
            "only labelled leads are worth something"
        );
        assert_eq!(google.conversion_rate(), Some(100.0 / 3.0));
        let totals = report.totals();
        assert_eq!(
            (totals.leads, totals.converted(), totals.value),
            (5, 2, 5_000)
        );
        let days: Vec<(u64, u64)> = report.days.iter().map(|d| (d.leads, d.converted)).collect();
        assert_eq!(days, [(2, 1), (1, 0), (2, 1)]);
        assert_eq!(Tally::default().conversion_rate(), None);
    }

    #[test]
    fn a_trend_counts_the_top_groups_per_day_or_week_and_the_rest_as_other() {
        let won = Uuid::from_u128(1);
        let range = ReportQuery {
            to: NaiveDate::from_ymd_opt(2026, 3, 10).unwrap(),
            ..query(Grouping::Source)
        };
        let mut builder = ReportBuilder::new(&range, &[]);
        let google = Some(("google", "cpc", None));
        builder.add(lead(1, google, Some(ConversionId::Label(won)), Some(700)));
        builder.add(lead(2, google, None, None));
        builder.add(lead(9, google, Some(ConversionId::Lost), None));
        builder.add(lead(2, Some(("news", "email", None)), None, None));
        builder.add(lead(
            10,
            Some(("bing", "cpc", None)),
            Some(ConversionId::Label(won)),
            Some(50),
        ));
        let report = builder.finish();
        let daily = report.trend(Period::Day, 1);
        assert_eq!(daily.periods.len(), 10);
        let names: Vec<&str> = daily.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["google", OTHER]);
        let leads =
            |series: &TrendSeries| -> Vec<u64> { series.tallies.iter().map(|t| t.leads).collect() };
        assert_eq!(leads(&daily.series[0]), [1, 1, 0, 0, 0, 0, 0, 0, 1, 0]);
        assert_eq!(leads(&daily.series[1]), [0, 1, 0, 0, 0, 0, 0, 0, 0, 1]);
        // 1 March 2026 is a Sunday: its week is cut to that day, then Mondays.
        let weekly = report.trend(Period::Week, 5);
        let starts: Vec<String> = weekly.periods.iter().map(|d| d.to_string()).collect();
        assert_eq!(starts, ["2026-03-01", "2026-03-02", "2026-03-09"]);
        let names: Vec<&str> = weekly.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["google", "bing", "news"], "no Other when all fit");
        let google = &weekly.series[0].tallies;
        assert_eq!(leads(&weekly.series[0]), [1, 1, 1]);
        assert_eq!(
            (google[0].label(won), google[0].value, google[2].lost),
            (1, 700, 1)
        );
        assert_eq!(weekly.series[1].tallies[2].value, 50);
    }

    #[test]
    fn campaigns_and_media_of_unknown_leads_are_not_set() {
        let mut builder = ReportBuilder::new(&query(Grouping::Campaign), &[]);
        builder.add(lead(1, Some(("google", "cpc", None)), None, None));
        builder.add(lead(1, None, None, None));
        builder.add(lead(1, Some(("google", "cpc", Some("x"))), None, None));
        let report = builder.finish();
        let groups: Vec<(&str, u64)> = report
            .groups
            .iter()
            .map(|g| (g.name.as_str(), g.tally.leads))
            .collect();
        assert_eq!(groups, [("(not set)", 2), ("x", 1)]);
    }
}
