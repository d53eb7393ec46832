//! What each source, campaign or label cost and returned: a range's spend ([`SpendRow`])
//! against the leads created in it, counted as the reports count them (the credited touch,
//! spam left out, a lead reset to open not counted as rated): spend, clicks, leads,
//! qualified leads (rated with any label), customers (rated with a label that marks leads
//! done), their rated value, the costs per lead, per qualified lead and per customer, and
//! ROAS (rated value / spend).
//!
//! Spend meets a campaign's leads by the campaign's id where the leads carry one
//! ([`crate::spend::CAMPAIGN_ID_FIELDS`], or Google Ads' `{campaignid}` in `utm_campaign`),
//! else by source and campaign name ([`crate::spend::source_key`],
//! [`crate::spend::campaign_key`]). A store counts the leads alike together
//! ([`CountedLeads`]). Spend that meets no lead still counts,
//! under its campaign; a campaign with leads and no spend has none (`None`, never a division
//! by zero). A store reads the leads and the spend; the rules are here, once. The wire
//! type of `GET /api/reports/roas` is [`GetRoasResponse`].

mod wire;

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Datelike, Days, NaiveDate, NaiveTime, Utc, Weekday};
use strum::{AsRefStr, Display, EnumString, VariantArray};
use uuid::Uuid;

use crate::channel::NOT_SET;
use crate::error::ValidationError;
use crate::label::ConversionLabel;
use crate::report::{Period, ReportLead, Touchpoint, counted_conversion, done_labels};
use crate::spend::{
    ClickIds, FxRates, SpendRow, campaign_key, lead_campaign_id, source_key, source_of_click,
};
use crate::types::{ConversionId, LeadStatus};

pub use wire::{GetRoasResponse, RoasRowView};

/// What the report's rows are.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, AsRefStr, Display, EnumString, VariantArray,
)]
#[strum(serialize_all = "snake_case")]
pub enum RoasGrouping {
    /// One row per source (`google`, `meta`, `newsletter`).
    Source,
    /// One row per source and campaign.
    #[default]
    Campaign,
    /// One row per label the leads were rated with; spend is not per label, so only the
    /// totals have it.
    Label,
}

/// What a report covers: the spend of the days `from` to `to` (inclusive) and the leads
/// created in them (UTC), credited to one touch, in rows of one grouping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoasQuery {
    /// The first day.
    pub from: NaiveDate,
    /// The last day, inclusive.
    pub to: NaiveDate,
    /// The touch credited with a lead.
    pub touch: Touchpoint,
    /// The rows.
    pub by: RoasGrouping,
}

impl RoasQuery {
    /// The query `GET /api/reports/roas` names: `from` and `to` (`YYYY-MM-DD`; the 30 days
    /// to `today` when both are left out, 30 days from `from` or to `to` when one is; in
    /// either order; a range over [`crate::report::MAX_DAYS`] days cut to the days that
    /// end at `to`), `groupBy` (`source`, `campaign` (the default) or `label`) and `touch`
    /// (`first`, the default, or `last`). What it covers is in the answer.
    ///
    /// Errors: `400 invalid_query` naming the parameter that is not a date or a choice.
    pub fn from_pairs<K: AsRef<str>, V: AsRef<str>>(
        pairs: impl IntoIterator<Item = (K, V)>,
        today: NaiveDate,
    ) -> Result<Self, ValidationError> {
        let pairs: Vec<(K, V)> = pairs.into_iter().collect();
        let get = |name: &str| {
            pairs
                .iter()
                .find(|(key, _)| key.as_ref() == name)
                .map(|(_, value)| value.as_ref())
        };
        let day = |name: &str| -> Result<Option<NaiveDate>, ValidationError> {
            get(name)
                .map(|text| {
                    NaiveDate::parse_from_str(text, "%Y-%m-%d").map_err(|_| {
                        ValidationError::invalid_query(name, "must be a date, YYYY-MM-DD")
                    })
                })
                .transpose()
        };
        let month = Days::new(29);
        // The days a date is written with four digits for the year.
        let (first, last) = (
            NaiveDate::from_ymd_opt(1, 1, 1),
            NaiveDate::from_ymd_opt(9999, 12, 31),
        );
        let (first, last) = (
            first.unwrap_or(NaiveDate::MIN),
            last.unwrap_or(NaiveDate::MAX),
        );
        let (from, to) = match (day("from")?, day("to")?) {
            (Some(from), Some(to)) => (from.min(to), from.max(to)),
            (Some(from), None) => (from, from.checked_add_days(month).unwrap_or(last)),
            (None, Some(to)) => (to.checked_sub_days(month).unwrap_or(first), to),
            (None, None) => (today - month, today),
        };
        let (from, to) = (from.clamp(first, last), to.clamp(first, last));
        let longest = Days::new(crate::report::MAX_DAYS - 1);
        let from = from.max(to.checked_sub_days(longest).unwrap_or(from));
        let choice = |name: &str, allowed: &str| {
            ValidationError::invalid_query(name, &format!("must be one of {allowed}"))
        };
        let by = match get("groupBy") {
            None => RoasGrouping::default(),
            Some(by) => by
                .parse()
                .map_err(|_| choice("groupBy", "source, campaign, label"))?,
        };
        let touch = match get("touch") {
            None => Touchpoint::default(),
            Some(touch) => touch.parse().map_err(|_| choice("touch", "first, last"))?,
        };
        Ok(Self {
            from,
            to,
            touch,
            by,
        })
    }

    /// The first instant covered.
    pub fn start(&self) -> DateTime<Utc> {
        self.from.and_time(NaiveTime::MIN).and_utc()
    }

    /// The first instant after the range.
    pub fn end(&self) -> DateTime<Utc> {
        (self.to + Days::new(1)).and_time(NaiveTime::MIN).and_utc()
    }
}

/// One row: a source, a campaign or a label, and what it cost and returned. Money is in the
/// project's currency units.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RoasRow {
    /// What tells the row apart in its report, the same at every read of it (a link to
    /// the row names it): its source, its source and campaign (by id where its spend names
    /// one), or its label.
    pub key: String,
    /// The source (rows by source and campaign).
    pub source: Option<String>,
    /// The campaign's name (rows by campaign).
    pub campaign: Option<String>,
    /// The campaign's id on its platform, when its spend names one.
    pub campaign_id: Option<String>,
    /// The label (rows by label; `None` for the leads not rated with one).
    pub label: Option<String>,
    /// What it cost; `None` without spend.
    pub spend: Option<f64>,
    /// Clicks, when the spend gives them.
    pub clicks: Option<u64>,
    /// Leads.
    pub leads: u64,
    /// Leads rated with any label.
    pub qualified: u64,
    /// Leads rated with a label that marks leads done.
    pub customers: u64,
    /// The rated leads' prices, summed.
    pub value: f64,
    /// The days with spend or leads, each with its figures (and no days of its own).
    pub days: BTreeMap<NaiveDate, RoasRow>,
}

impl RoasRow {
    /// Spend per lead; `None` without spend or leads.
    pub fn cost_per_lead(&self) -> Option<f64> {
        per(self.spend, self.leads)
    }

    /// Spend per qualified lead.
    pub fn cost_per_qualified(&self) -> Option<f64> {
        per(self.spend, self.qualified)
    }

    /// Spend per customer.
    pub fn cost_per_customer(&self) -> Option<f64> {
        per(self.spend, self.customers)
    }

    /// Rated value per unit of spend; `None` without spend.
    pub fn roas(&self) -> Option<f64> {
        self.spend
            .filter(|spend| *spend > 0.0)
            .map(|spend| self.value / spend)
    }

    /// Counts `leads` alike: `rated` with a label (a `customer`'s marks leads done) at
    /// prices summing to `value`.
    fn count_leads(&mut self, leads: u64, (rated, customer): (bool, bool), value: f64) {
        self.leads += leads;
        if rated {
            self.qualified += leads;
            self.value += value;
            self.customers += if customer { leads } else { 0 };
        }
    }

    fn add_spend(&mut self, converted: f64, clicks: Option<u64>) {
        self.spend = Some(self.spend.unwrap_or_default() + converted);
        if let Some(clicks) = clicks {
            self.clicks = Some(self.clicks.unwrap_or_default() + clicks);
        }
    }

    /// Counts leads created on `day`, as [`Self::count_leads`] does.
    fn count_leads_on(&mut self, day: NaiveDate, leads: u64, rated: (bool, bool), value: f64) {
        self.count_leads(leads, rated, value);
        let on = self.days.entry(day).or_default();
        on.count_leads(leads, rated, value);
    }

    /// Adds `day`'s spend, `converted` to the report's currency.
    fn add_spend_on(&mut self, day: NaiveDate, converted: f64, clicks: Option<u64>) {
        self.add_spend(converted, clicks);
        self.days
            .entry(day)
            .or_default()
            .add_spend(converted, clicks);
    }

    /// Adds `other`'s figures, day by day.
    fn add_row(&mut self, other: &RoasRow) {
        self.add_figures(other);
        for (day, figures) in &other.days {
            self.days.entry(*day).or_default().add_figures(figures);
        }
    }

    fn add_figures(&mut self, other: &RoasRow) {
        if let Some(spend) = other.spend {
            self.add_spend(spend, other.clicks);
        }
        self.leads += other.leads;
        self.qualified += other.qualified;
        self.customers += other.customers;
        self.value += other.value;
    }
}

/// `amount / count`, when there is an amount and a count.
fn per(amount: Option<f64>, count: u64) -> Option<f64> {
    amount
        .filter(|_| count > 0)
        .map(|amount| amount / count as f64)
}

/// A report: its rows, their totals, and the rates it converted with.
#[derive(Clone, Debug, PartialEq)]
pub struct RoasReport {
    /// The project's currency, which every amount is in.
    pub currency: String,
    /// The rows: most spend first, then most leads, then by name.
    pub rows: Vec<RoasRow>,
    /// Every row together (all the range's spend, whichever rows show it).
    pub totals: RoasRow,
    /// The rates used, for the currencies the spend was in.
    pub rates: FxRates,
    /// Spend left out for want of a rate: rows per currency.
    pub unconverted: BTreeMap<String, usize>,
    /// The first day of the range.
    pub from: NaiveDate,
    /// The last day of the range.
    pub to: NaiveDate,
}

impl RoasReport {
    /// The row whose [`RoasRow::key`] is `key`.
    pub fn row(&self, key: &str) -> Option<&RoasRow> {
        self.rows.iter().find(|row| row.key == key)
    }

    /// The trend of `row` (one of the report's, or its totals): every day of the range
    /// together per `period`, each day or each week from Monday (the range's first and last
    /// weeks cut by it), labelled by their first day, oldest first.
    pub fn per(&self, row: &RoasRow, period: Period) -> Vec<(NaiveDate, RoasRow)> {
        let mut periods: Vec<(NaiveDate, RoasRow)> = Vec::new();
        let days = self.from.iter_days().take_while(|day| *day <= self.to);
        for date in days {
            let starts = match period {
                Period::Day => true,
                Period::Week => date.weekday() == Weekday::Mon,
            };
            if starts || periods.is_empty() {
                periods.push((date, RoasRow::default()));
            }
            if let (Some((_, tally)), Some(day)) = (periods.last_mut(), row.days.get(&date)) {
                tally.add_figures(day);
            }
        }
        periods
    }
}

/// Counts a range's leads one at a time, then meets them with the range's spend.
#[derive(Debug)]
pub struct RoasBuilder {
    by: RoasGrouping,
    from: NaiveDate,
    to: NaiveDate,
    done: Vec<Uuid>,
    names: HashMap<Uuid, String>,
    rows: BTreeMap<(String, String), RoasRow>,
}

impl RoasBuilder {
    /// An empty report of `query`, of a project whose labels are `labels`.
    pub fn new(query: &RoasQuery, labels: &[ConversionLabel]) -> Self {
        Self {
            by: query.by,
            from: query.from,
            to: query.to,
            done: done_labels(labels),
            names: labels.iter().map(|l| (l.id, l.name.clone())).collect(),
            rows: BTreeMap::new(),
        }
    }

    /// Whether `date` is in the range.
    fn covers(&self, date: NaiveDate) -> bool {
        (self.from..=self.to).contains(&date)
    }

    /// Counts leads of the range alike in all the report tells apart ([`CountedLeads`]).
    pub fn add(&mut self, counted: &CountedLeads<'_>) {
        let as_lead = ReportLead {
            created_at: counted.day.and_time(NaiveTime::MIN).and_utc(),
            source: counted.source,
            medium: None,
            campaign: counted.campaign,
            conversion_id: counted.conversion_id,
            status: counted.status,
            price: None,
        };
        let conversion = counted_conversion(&as_lead, &self.done);
        let (id_platform, campaign_id) = match counted.campaign_id {
            Some(kept) => {
                let (platform, id) = lead_campaign_id(kept);
                (platform, Some(id))
            }
            None => (None, None),
        };
        let source = counted
            .source
            .map(source_key)
            .or_else(|| id_platform.map(str::to_owned))
            .or_else(|| source_of_click(counted.clicked).map(str::to_owned))
            .unwrap_or_else(|| NOT_SET.to_owned());
        let (label, customer) = match conversion {
            Some(ConversionId::Label(id)) => {
                (self.names.get(&id).cloned(), self.done.contains(&id))
            }
            _ => (None, false),
        };
        if !self.covers(counted.day) {
            return;
        }
        let row = match self.by {
            RoasGrouping::Source => self.row(source, String::new()),
            RoasGrouping::Campaign => {
                let name = counted.campaign.or(campaign_id).unwrap_or(NOT_SET);
                let key = match campaign_id {
                    Some(id) => by_id(id),
                    None => campaign_key(name),
                };
                let row = self.row(source, key);
                row.campaign.get_or_insert_with(|| name.to_owned());
                if let Some(id) = campaign_id {
                    row.campaign_id.get_or_insert_with(|| id.to_owned());
                }
                row
            }
            RoasGrouping::Label => {
                let row = self.row(String::new(), label.clone().unwrap_or_default());
                row.source = None;
                row.label = label;
                row
            }
        };
        let rated = matches!(conversion, Some(ConversionId::Label(_)));
        let value = counted.value as f64 / 100.0;
        row.count_leads_on(counted.day, counted.leads, (rated, customer), value);
    }

    /// The row of `(source, key)`, made when new.
    fn row(&mut self, source: String, key: String) -> &mut RoasRow {
        self.rows
            .entry((source, key))
            .or_insert_with_key(|(source, key)| new_row(source, key))
    }

    /// The report: the leads counted, met with the range's `spend`, converted to the
    /// project's `currency` at `rates`.
    pub fn finish(mut self, spend: &[SpendRow], rates: &FxRates, currency: &str) -> RoasReport {
        let mut used = FxRates::default();
        let mut unconverted = BTreeMap::new();
        let mut label_spend = RoasRow::default();
        // The row each campaign's spend meets, found once per campaign: a year of daily
        // spend is hundreds of rows per campaign.
        let mut met_by: HashMap<(&str, Option<&str>, &str), (String, String)> = HashMap::new();
        for row in spend {
            let Some(converted) = rates.convert(row.cost_micros, &row.currency, currency) else {
                *unconverted.entry(row.currency.clone()).or_insert(0) += 1;
                continue;
            };
            if let Some(rate) = rates.0.get(&row.currency)
                && !used.0.contains_key(&row.currency)
            {
                used.0.insert(row.currency.clone(), *rate);
            }
            if !self.covers(row.date) {
                continue;
            }
            match self.by {
                RoasGrouping::Source => self
                    .row(row.source.clone(), String::new())
                    .add_spend_on(row.date, converted, row.clicks),
                RoasGrouping::Campaign => {
                    let memo = (
                        row.source.as_str(),
                        row.campaign_id.as_deref(),
                        row.campaign.as_str(),
                    );
                    let key = met_by.entry(memo).or_insert_with(|| self.campaign_of(row));
                    // A later campaign's spend may have merged the row away: made again.
                    if !self.rows.contains_key(key) {
                        self.row(key.0.clone(), key.1.clone());
                    }
                    let Some(met) = self.rows.get_mut(key) else {
                        continue;
                    };
                    met.add_spend_on(row.date, converted, row.clicks);
                    if met.campaign.as_deref() != Some(row.campaign.as_str()) {
                        met.campaign = Some(row.campaign.clone());
                    }
                    if met.campaign_id.is_none() {
                        met.campaign_id.clone_from(&row.campaign_id);
                    }
                }
                RoasGrouping::Label => label_spend.add_spend_on(row.date, converted, row.clicks),
            }
        }
        let mut rows: Vec<RoasRow> = self.rows.into_values().collect();
        rows.sort_by(|a, b| {
            let spend = |row: &RoasRow| row.spend.unwrap_or(-1.0);
            spend(b)
                .total_cmp(&spend(a))
                .then(b.leads.cmp(&a.leads))
                .then_with(|| {
                    (&a.source, &a.campaign, &a.label).cmp(&(&b.source, &b.campaign, &b.label))
                })
        });
        let mut totals = label_spend;
        for row in &rows {
            totals.add_row(row);
        }
        RoasReport {
            currency: currency.to_owned(),
            rows,
            totals,
            rates: used,
            unconverted,
            from: self.from,
            to: self.to,
        }
    }

    /// The key of the campaign row `spend` meets (made when new): for spend with a campaign
    /// id, the row of the leads that carry that id, into which the rows of the leads whose
    /// campaign is its name, or is the id itself (Google's `{campaignid}`), are merged; else
    /// the row of its name.
    fn campaign_of(&mut self, spend: &SpendRow) -> (String, String) {
        let source = spend.source.clone();
        let named = (source.clone(), campaign_key(&spend.campaign));
        let Some(id) = spend.campaign_id.as_deref() else {
            self.row(named.0.clone(), named.1.clone());
            return named;
        };
        let key = (source.clone(), by_id(id));
        for other in [named, (source, campaign_key(id))] {
            if let Some(merged) = self.rows.remove(&other) {
                let row = self
                    .rows
                    .entry(key.clone())
                    .or_insert_with_key(|(source, key)| new_row(source, key));
                row.add_row(&merged);
                row.campaign = row.campaign.take().or(merged.campaign);
            }
        }
        self.row(key.0.clone(), key.1.clone());
        key
    }
}

/// Leads of a range alike in all the report tells apart, which a store counts together:
/// their day, credited touch, campaign id, conversion, status and click ids, how many they
/// are and their prices' sum.
#[derive(Clone, Copy, Debug)]
pub struct CountedLeads<'a> {
    /// The day they were created (UTC).
    pub day: NaiveDate,
    /// The credited touch's source, as written.
    pub source: Option<&'a str>,
    /// The credited touch's campaign, as written.
    pub campaign: Option<&'a str>,
    /// The ad campaign id they carry, as the store keeps it
    /// ([`crate::spend::CAMPAIGN_ID_FIELDS`]), for the credited touch: the last, or the
    /// first when it is the last's source and campaign.
    pub campaign_id: Option<&'a str>,
    /// Their conversion id.
    pub conversion_id: Option<ConversionId>,
    /// Their status.
    pub status: LeadStatus,
    /// Their click ids (which say the source when the touch names none).
    pub clicked: ClickIds,
    /// How many they are.
    pub leads: u64,
    /// Their prices, summed, in cents.
    pub value: i64,
}

/// A row of no figures yet: of `source` (`""` for rows by label), told apart by `key`
/// (`""` for rows by source).
fn new_row(source: &str, key: &str) -> RoasRow {
    RoasRow {
        key: format!("{source}/{key}"),
        source: Some(source.to_owned()),
        ..RoasRow::default()
    }
}

/// The key of a campaign's row by its id, apart from any name.
fn by_id(id: &str) -> String {
    format!("id:{id}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{LeadStatus, ProjectId};

    /// 1 to 3 March 2026, grouped `by`.
    fn march(by: RoasGrouping) -> RoasQuery {
        RoasQuery {
            from: NaiveDate::from_ymd_opt(2026, 3, 1).unwrap(),
            to: NaiveDate::from_ymd_opt(2026, 3, 3).unwrap(),
            touch: Touchpoint::First,
            by,
        }
    }

    fn label(name: &str, done: bool) -> ConversionLabel {
        ConversionLabel {
            id: Uuid::new_v4(),
            project_id: ProjectId(1),
            name: name.to_owned(),
            mark_as_done: done,
            mapping: Default::default(),
            created_at: Utc::now(),
            archived: false,
        }
    }

    /// One lead of 1 March by `touch` (source, campaign), with `conversion` at `price`.
    fn lead<'a>(
        touch: Option<(&'a str, &'a str)>,
        conversion: Option<ConversionId>,
        price: Option<i64>,
    ) -> CountedLeads<'a> {
        CountedLeads {
            day: NaiveDate::from_ymd_opt(2026, 3, 1).unwrap(),
            source: touch.map(|t| t.0),
            campaign: touch.map(|t| t.1),
            campaign_id: None,
            conversion_id: conversion,
            status: match conversion {
                Some(ConversionId::Label(_)) => LeadStatus::Rated,
                _ => LeadStatus::Open,
            },
            clicked: ClickIds::default(),
            leads: 1,
            value: price.unwrap_or_default(),
        }
    }

    fn spend(
        source: &str,
        campaign: &str,
        id: Option<&str>,
        cost: i64,
        currency: &str,
    ) -> SpendRow {
        SpendRow {
            date: NaiveDate::from_ymd_opt(2026, 3, 1).unwrap(),
            source: source.to_owned(),
            medium: "cpc".to_owned(),
            account: String::new(),
            campaign_id: id.map(str::to_owned),
            campaign: campaign.to_owned(),
            currency: currency.to_owned(),
            cost_micros: cost * 1_000_000,
            clicks: Some(10),
            impressions: None,
        }
    }

    /// Each row's source, campaign, campaign id, spend and leads.
    type CampaignRow<'a> = (
        Option<&'a str>,
        Option<&'a str>,
        Option<&'a str>,
        Option<f64>,
        u64,
    );
    fn campaigns(report: &RoasReport) -> Vec<CampaignRow<'_>> {
        let rows = report.rows.iter();
        rows.map(|r| {
            let (source, campaign) = (r.source.as_deref(), r.campaign.as_deref());
            (source, campaign, r.campaign_id.as_deref(), r.spend, r.leads)
        })
        .collect()
    }

    /// The example: 1,000.00 on a campaign with 40 leads, 10 qualified, 2 customers
    /// worth 3,000.00.
    #[test]
    fn costs_and_roas_of_a_campaign_with_known_numbers() {
        let (qualified, customer) = (label("Qualified", false), label("Customer", true));
        let labels = [qualified.clone(), customer.clone()];
        let mut builder = RoasBuilder::new(&march(RoasGrouping::Campaign), &labels);
        let touch = Some(("Facebook", "Spring Sale"));
        for n in 0..40 {
            let (conversion, price) = match n {
                0 | 1 => (Some(ConversionId::Label(customer.id)), Some(150_000)),
                2..10 => (Some(ConversionId::Label(qualified.id)), None),
                _ => (None, None),
            };
            builder.add(&lead(touch, conversion, price));
        }
        let spent = [spend("meta", "spring  sale", None, 1_000, "USD")];
        let report = builder.finish(&spent, &FxRates::default(), "USD");
        assert_eq!(report.rows.len(), 1);
        let row = &report.rows[0];
        assert_eq!(row.source.as_deref(), Some("meta"));
        assert_eq!(row.campaign.as_deref(), Some("spring  sale"));
        assert_eq!(
            (row.leads, row.qualified, row.customers, row.value),
            (40, 10, 2, 3_000.0)
        );
        assert_eq!(row.spend, Some(1_000.0));
        assert_eq!(row.cost_per_lead(), Some(25.0));
        assert_eq!(row.cost_per_qualified(), Some(100.0));
        assert_eq!(row.cost_per_customer(), Some(500.0));
        assert_eq!(row.roas(), Some(3.0));
        assert_eq!(report.totals.roas(), Some(3.0));
    }

    #[test]
    fn spend_meets_leads_by_campaign_id_source_and_name_and_counts_when_it_meets_none() {
        let mut builder = RoasBuilder::new(&march(RoasGrouping::Campaign), &[]);
        // Google's {campaignid} in utm_campaign; a Meta lead by its click id alone.
        builder.add(&lead(Some(("google", "1234567")), None, None));
        let fbc = ClickIds {
            meta: true,
            ..ClickIds::default()
        };
        builder.add(&CountedLeads {
            clicked: fbc,
            ..lead(None, None, None)
        });
        let spent = [
            spend("google", "Brand", Some("1234567"), 300, "USD"),
            spend("meta", "Retargeting", None, 100, "EUR"),
            spend("linkedin", "ABM", None, 50, "GBP"),
        ];
        let rates = FxRates::parse(["EUR=1.5", "JPY=0.01"]).unwrap();
        let report = builder.finish(&spent, &rates, "USD");
        assert_eq!(
            campaigns(&report),
            [
                (
                    Some("google"),
                    Some("Brand"),
                    Some("1234567"),
                    Some(300.0),
                    1
                ),
                (Some("meta"), Some("Retargeting"), None, Some(150.0), 0),
                (Some("meta"), Some(NOT_SET), None, None, 1),
            ]
        );
        assert_eq!(report.totals.spend, Some(450.0));
        assert_eq!(report.totals.leads, 2);
        assert_eq!(report.totals.cost_per_lead(), Some(225.0));
        assert_eq!(report.rates.written(), "EUR=1.5", "only the rates used");
        assert_eq!(report.unconverted, BTreeMap::from([("GBP".to_owned(), 1)]));
        assert_eq!(report.rows[2].roas(), None, "no spend, no ROAS");
    }

    #[test]
    fn spend_meets_the_leads_that_carry_its_campaign_id_and_those_of_its_name() {
        let mut builder = RoasBuilder::new(&march(RoasGrouping::Campaign), &[]);
        // A lead with the campaign's utm_id, one with its name alone, one of Meta's lead
        // forms (no touch: its campaign id names the platform), and a utm_id no spend has.
        let with_id = |id, touch| CountedLeads {
            campaign_id: Some(id),
            ..lead(touch, None, None)
        };
        builder.add(&with_id("555", Some(("Google", "Brand Search"))));
        builder.add(&lead(Some(("google", "brand  search")), None, None));
        builder.add(&with_id("meta:777", None));
        builder.add(&with_id("999", Some(("google", "Brand Search"))));
        let spent = [
            spend("google", "Brand search", Some("555"), 100, "USD"),
            spend("meta", "Lead forms", Some("777"), 30, "USD"),
        ];
        let report = builder.finish(&spent, &FxRates::default(), "USD");
        assert_eq!(
            campaigns(&report),
            [
                (
                    Some("google"),
                    Some("Brand search"),
                    Some("555"),
                    Some(100.0),
                    2
                ),
                (Some("meta"), Some("Lead forms"), Some("777"), Some(30.0), 1),
                (Some("google"), Some("Brand Search"), Some("999"), None, 1),
            ]
        );
        assert_eq!(report.totals.leads, 4);
    }

    #[test]
    fn days_go_together_per_week_from_monday() {
        // 1 March 2026 is a Sunday: its week is cut by the range.
        let query = RoasQuery {
            to: NaiveDate::from_ymd_opt(2026, 3, 9).unwrap(),
            ..march(RoasGrouping::Source)
        };
        let mut builder = RoasBuilder::new(&query, &[]);
        builder.add(&lead(Some(("google", "Brand")), None, None));
        let spent: Vec<SpendRow> = [1, 2, 9]
            .iter()
            .map(|day| SpendRow {
                date: NaiveDate::from_ymd_opt(2026, 3, *day).unwrap(),
                ..spend("google", "Brand", None, 10, "USD")
            })
            .collect();
        let report = builder.finish(&spent, &FxRates::default(), "USD");
        let weeks: Vec<_> = report
            .per(&report.totals, Period::Week)
            .into_iter()
            .map(|(start, week)| (start.to_string(), week.spend, week.leads))
            .collect();
        assert_eq!(
            weeks,
            [
                ("2026-03-01".to_owned(), Some(10.0), 1),
                ("2026-03-02".to_owned(), Some(10.0), 0),
                ("2026-03-09".to_owned(), Some(10.0), 0),
            ]
        );
        assert_eq!(report.per(&report.totals, Period::Day).len(), 9);
    }

    #[test]
    fn each_row_has_its_own_trend_merged_with_the_rows_its_spend_meets() {
        let mut builder = RoasBuilder::new(&march(RoasGrouping::Campaign), &[]);
        let on = |day, counted: CountedLeads<'static>| CountedLeads {
            day: NaiveDate::from_ymd_opt(2026, 3, day).unwrap(),
            ..counted
        };
        // Brand's leads: one by its id on the 1st, one by its name on the 2nd; another
        // campaign's on the 3rd, and one outside the range.
        let brand_id = CountedLeads {
            campaign_id: Some("555"),
            ..lead(Some(("google", "Brand")), None, None)
        };
        builder.add(&on(1, brand_id));
        builder.add(&on(2, lead(Some(("google", "brand")), None, None)));
        builder.add(&on(3, lead(Some(("google", "Other")), None, None)));
        builder.add(&on(4, lead(Some(("google", "Other")), None, None)));
        let spent = [1, 3].map(|day| SpendRow {
            date: NaiveDate::from_ymd_opt(2026, 3, day).unwrap(),
            ..spend("google", "Brand", Some("555"), 10 * i64::from(day), "USD")
        });
        let report = builder.finish(&spent, &FxRates::default(), "USD");
        let keys: Vec<_> = report.rows.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["google/id:555", "google/other"]);
        let trend = |row: &RoasRow| -> Vec<_> {
            let days = report.per(row, Period::Day).into_iter();
            days.map(|(day, figures)| (day.day(), figures.spend, figures.leads))
                .collect()
        };
        let brand = report.row("google/id:555").unwrap();
        assert_eq!(
            trend(brand),
            [(1, Some(10.0), 1), (2, None, 1), (3, Some(30.0), 0)]
        );
        let other = report.row("google/other").unwrap();
        assert_eq!(trend(other), [(1, None, 0), (2, None, 0), (3, None, 1)]);
        assert_eq!(
            trend(&report.totals),
            [(1, Some(10.0), 1), (2, None, 1), (3, Some(30.0), 1)]
        );
        assert_eq!(report.row("google/brand"), None, "merged into the id's row");
    }

    #[test]
    fn a_query_names_its_range_grouping_and_touch() {
        let today = NaiveDate::from_ymd_opt(2026, 3, 31).unwrap();
        let parse = |pairs: &[(&str, &str)]| RoasQuery::from_pairs(pairs.iter().copied(), today);
        let default = parse(&[]).unwrap();
        assert_eq!(default.from, NaiveDate::from_ymd_opt(2026, 3, 2).unwrap());
        assert_eq!(
            (default.to, default.by, default.touch),
            (today, RoasGrouping::Campaign, Touchpoint::First)
        );
        let given = parse(&[
            ("from", "2026-01-01"),
            ("to", "2026-01-31"),
            ("groupBy", "label"),
            ("touch", "last"),
        ])
        .unwrap();
        assert_eq!(
            (given.by, given.touch),
            (RoasGrouping::Label, Touchpoint::Last)
        );
        // One end alone is 30 days from or to it; the ends in either order; a range over
        // 366 days cut to those that end at `to`.
        let date = |text: &str| NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap();
        let range = |pairs: &[(&str, &str)]| {
            let query = parse(pairs).unwrap();
            (query.from.to_string(), query.to.to_string())
        };
        assert_eq!(
            range(&[("from", "2026-01-01")]),
            ("2026-01-01".into(), "2026-01-30".into())
        );
        assert_eq!(
            range(&[("to", "2026-01-30")]),
            ("2026-01-01".into(), "2026-01-30".into())
        );
        assert_eq!(
            range(&[("from", "2026-01-02"), ("to", "2026-01-01")]),
            ("2026-01-01".into(), "2026-01-02".into())
        );
        assert_eq!(
            range(&[("from", "2000-01-01"), ("to", "2026-01-01")]),
            ("2025-01-01".into(), "2026-01-01".into())
        );
        assert_eq!(
            parse(&[("from", "9999-12-31")]).unwrap().to,
            date("9999-12-31")
        );
        for (pairs, message) in [
            (
                &[("from", "1/1/2026"), ("to", "2026-01-02")][..],
                "Invalid query parameter: from must be a date, YYYY-MM-DD",
            ),
            (
                &[("groupBy", "medium")],
                "Invalid query parameter: groupBy must be one of source, campaign, label",
            ),
            (
                &[("touch", "middle")],
                "Invalid query parameter: touch must be one of first, last",
            ),
        ] {
            assert_eq!(parse(pairs).unwrap_err().message, message);
        }
    }

    #[test]
    fn rows_by_label_leave_spend_to_the_totals() {
        let won = label("Won", true);
        let mut builder = RoasBuilder::new(&march(RoasGrouping::Label), std::slice::from_ref(&won));
        let touch = Some(("google", "Brand"));
        builder.add(&lead(
            touch,
            Some(ConversionId::Label(won.id)),
            Some(50_000),
        ));
        builder.add(&lead(touch, None, None));
        let report = builder.finish(
            &[spend("google", "Brand", None, 100, "USD")],
            &FxRates::default(),
            "USD",
        );
        let rows: Vec<_> = report
            .rows
            .iter()
            .map(|r| (r.label.as_deref(), r.leads, r.customers, r.spend))
            .collect();
        assert_eq!(rows, [(None, 1, 0, None), (Some("Won"), 1, 1, None)]);
        assert_eq!(report.totals.spend, Some(100.0));
        assert_eq!(report.totals.roas(), Some(5.0));
        assert_eq!(report.totals.cost_per_customer(), Some(100.0));
    }
}
