//! `GET /api/reports/roas`: what each source, campaign or label cost and returned over a
//! range of days (CONTRACT.md section 13, an addition). Money is in the project's currency
//! units as decimal numbers; a figure that cannot be computed is `null`, never a division
//! by zero.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use super::{RoasQuery, RoasReport, RoasRow};

/// Response of `GET /api/reports/roas`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetRoasResponse {
    /// The first day.
    pub from: NaiveDate,
    /// The last day, inclusive.
    pub to: NaiveDate,
    /// `source`, `campaign` or `label`.
    pub group_by: String,
    /// `first` or `last`: the touch credited with a lead.
    pub touch: String,
    /// The project's currency, which every amount is in.
    pub currency: String,
    /// The rows: most spend first, then most leads.
    pub rows: Vec<RoasRowView>,
    /// Every row together.
    pub totals: RoasRowView,
    /// The owner's rates the spend was converted with, by currency.
    pub rates: BTreeMap<String, f64>,
    /// Spend rows left out for want of a rate, by currency.
    pub unconverted: BTreeMap<String, usize>,
}

/// One row of the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RoasRowView {
    /// The source (rows by source and campaign); `null` otherwise.
    pub source: Option<String>,
    /// The campaign's name (rows by campaign).
    pub campaign: Option<String>,
    /// The campaign's id on its platform, when its spend names one.
    pub campaign_id: Option<String>,
    /// The label (rows by label; `null` for the leads not rated with one).
    pub label: Option<String>,
    /// What it cost; `null` without spend.
    pub spend: Option<f64>,
    /// The project's currency.
    pub currency: String,
    /// Clicks, when the spend gives them.
    pub clicks: Option<u64>,
    /// Leads (spam never counts).
    pub leads: u64,
    /// Leads rated with any label.
    pub qualified: u64,
    /// Leads rated with a label that marks leads done.
    pub customers: u64,
    /// The rated leads' prices, summed.
    pub value: f64,
    /// `spend / leads`.
    pub cost_per_lead: Option<f64>,
    /// `spend / qualified`.
    pub cost_per_qualified: Option<f64>,
    /// `spend / customers`.
    pub cost_per_customer: Option<f64>,
    /// `value / spend`.
    pub roas: Option<f64>,
}

impl RoasRowView {
    fn new(row: &RoasRow, currency: &str) -> Self {
        // Amounts to the cent (ROAS to four places): what a float sum leaves beyond
        // that is noise.
        let cents = |amount: f64| (amount * 100.0).round() / 100.0;
        Self {
            source: row.source.clone(),
            campaign: row.campaign.clone(),
            campaign_id: row.campaign_id.clone(),
            label: row.label.clone(),
            spend: row.spend.map(cents),
            currency: currency.to_owned(),
            clicks: row.clicks,
            leads: row.leads,
            qualified: row.qualified,
            customers: row.customers,
            value: cents(row.value),
            cost_per_lead: row.cost_per_lead().map(cents),
            cost_per_qualified: row.cost_per_qualified().map(cents),
            cost_per_customer: row.cost_per_customer().map(cents),
            roas: row.roas().map(|roas| (roas * 10_000.0).round() / 10_000.0),
        }
    }
}

impl GetRoasResponse {
    /// The response of `report`, the answer to `query`.
    pub fn new(query: &RoasQuery, report: &RoasReport) -> Self {
        let view = |row: &RoasRow| RoasRowView::new(row, &report.currency);
        Self {
            from: query.from,
            to: query.to,
            group_by: query.by.to_string(),
            touch: query.touch.to_string(),
            currency: report.currency.clone(),
            rows: report.rows.iter().map(view).collect(),
            totals: view(&report.totals),
            rates: report.rates.0.clone(),
            unconverted: report.unconverted.clone(),
        }
    }
}
