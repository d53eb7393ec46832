//! Reports: a project's leads over a range of days, counted by where they came from and how
//! they were rated, so that a team sees which sources bring customers, not only form fills.
//!
//! A store reads the leads created in the range and feeds each one to a
//! [`ReportBuilder`]; the counting rules (which group, what converted, what the value is)
//! live here, once for every backend.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Days, NaiveDate, Utc};
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

/// A report: its groups and its days.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// One per group with leads: most leads first, ties by name.
    pub groups: Vec<ReportGroup>,
    /// Every day of the range, oldest first, days without leads included.
    pub days: Vec<ReportDay>,
}

impl Report {
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
    /// Reused for every lead's group name, so counting allocates only for a new group.
    name: String,
    /// The labels that mark a lead done: an open lead with one of them was reset.
    done_labels: Vec<Uuid>,
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
            name: String::new(),
            done_labels: labels
                .iter()
                .filter(|label| label.mark_as_done)
                .map(|label| label.id)
                .collect(),
        }
    }

    /// What `lead` counts as now: its conversion, unless it was reset to open since (an
    /// open lead with `lost`, or with a label that marks leads done, was reset; one with a
    /// label that keeps leads open, such as Qualified, is that label's).
    fn current(&self, lead: &ReportLead<'_>) -> Option<ConversionId> {
        match (lead.status, lead.conversion_id) {
            (LeadStatus::Open, Some(ConversionId::Lost)) => None,
            (LeadStatus::Open, Some(ConversionId::Label(id))) if self.done_labels.contains(&id) => {
                None
            }
            (_, conversion) => conversion,
        }
    }

    /// The query being counted.
    pub fn query(&self) -> &ReportQuery {
        &self.query
    }

    /// Counts one lead created in the range.
    pub fn add(&mut self, lead: ReportLead<'_>) {
        self.name.clear();
        match (self.query.by, lead.source) {
            (_, None) => self.name.push_str(NOT_SET),
            (Grouping::Source, Some(source)) => self.name.push_str(source),
            (Grouping::Medium, Some(_)) => self.name.push_str(lead.medium.unwrap_or(NOT_SET)),
            (Grouping::Campaign, Some(_)) => self.name.push_str(lead.campaign.unwrap_or(NOT_SET)),
            (Grouping::SourceMedium, Some(source)) => {
                self.name.push_str(source);
                self.name.push_str(" / ");
                self.name.push_str(lead.medium.unwrap_or(NOT_SET));
            }
        }
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
        let conversion = self.current(&lead);
        self.groups[at].tally.add(conversion, 1, value);
        let day = (lead.created_at - self.start).num_days();
        if let Some(day) = usize::try_from(day).ok().and_then(|d| self.days.get_mut(d)) {
            day.leads += 1;
            if matches!(conversion, Some(ConversionId::Label(_))) {
                day.converted += 1;
            }
        }
    }

    /// The report of the leads counted.
    pub fn finish(self) -> Report {
        let mut groups = self.groups;
        groups.sort_by(|a, b| {
            b.tally
                .leads
                .cmp(&a.tally.leads)
                .then_with(|| a.name.cmp(&b.name))
        });
        Report {
            groups,
            days: self.days,
        }
    }
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
