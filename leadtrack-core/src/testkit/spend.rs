//! Ad spend: kept per day and campaign, replaced when a day is read again, with the
//! owner's currency rates; and the report of what it bought, counted from the leads.

use chrono::NaiveDate;
use serde_json::json;

use super::{Backend, at, by, create, project};
use crate::label::{LabelMapping, NewLabel};
use crate::report::{Period, Touchpoint};
use crate::request::StatusUpdate;
use crate::roas::{RoasGrouping, RoasQuery, RoasRow};
use crate::spend::{FxRates, SpendRow};
use crate::store::{Admin, LeadStore, Spending};
use crate::types::{ConversionId, LeadIdentifier};

fn march(day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 3, day).unwrap()
}

/// A day's spend on a campaign, in whole units of `currency`.
fn spent(day: u32, source: &str, campaign: &str, units: i64, currency: &str) -> SpendRow {
    SpendRow {
        date: march(day),
        source: source.to_owned(),
        medium: "cpc".to_owned(),
        account: String::new(),
        campaign_id: None,
        campaign: campaign.to_owned(),
        currency: currency.to_owned(),
        cost_micros: units * 1_000_000,
        clicks: Some(units as u64),
        impressions: None,
    }
}

/// Each day's spend on a campaign is one row: saving the same day and campaign again
/// replaces it, whatever its name's case; a range reads only its days and its project's;
/// the currency rates are replaced whole.
pub async fn spend_is_kept_per_day_and_campaign_and_saving_a_day_again_replaces_it<B: Backend>(
    backend: &B,
) {
    let store = backend.open().await;
    let (acme, other) = (
        project(&store, "acme").await,
        project(&store, "other").await,
    );
    let first = [
        spent(1, "google", "Brand", 100, "USD"),
        spent(2, "google", "Brand", 110, "USD"),
        spent(2, "meta", "Spring Sale", 50, "EUR"),
    ];
    assert_eq!(store.save_spend(acme.id, &first).await.unwrap(), 3);
    store
        .save_spend(other.id, &[spent(2, "google", "Brand", 9, "USD")])
        .await
        .unwrap();
    let again = [
        spent(2, "google", "BRAND", 120, "USD"),
        spent(3, "google", "Brand", 130, "USD"),
    ];
    store.save_spend(acme.id, &again).await.unwrap();
    let read = store.spend(acme.id, march(2), march(3)).await.unwrap();
    let rows: Vec<(NaiveDate, &str, &str, i64)> = read
        .iter()
        .map(|r| {
            (
                r.date,
                r.source.as_str(),
                r.campaign.as_str(),
                r.cost_micros,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (march(2), "google", "BRAND", 120_000_000),
            (march(2), "meta", "Spring Sale", 50_000_000),
            (march(3), "google", "Brand", 130_000_000),
        ]
    );
    assert_eq!(read[1].currency, "EUR");
    assert_eq!(read[1].clicks, Some(50));

    assert_eq!(store.fx_rates(acme.id).await.unwrap(), FxRates::default());
    let rates = FxRates::parse(["EUR=1.08", "GBP=1.25"]).unwrap();
    store.set_fx_rates(acme.id, &rates).await.unwrap();
    assert_eq!(store.fx_rates(acme.id).await.unwrap(), rates);
    let fewer = FxRates::parse(["EUR=1.1"]).unwrap();
    store.set_fx_rates(acme.id, &fewer).await.unwrap();
    assert_eq!(store.fx_rates(acme.id).await.unwrap(), fewer);
    assert_eq!(store.fx_rates(other.id).await.unwrap(), FxRates::default());
}

/// The known numbers: 1,000.00 spent on a campaign whose 40 leads hold 10 qualified
/// (8 Qualified, 2 Customer) and 2 customers worth 3,000.00 cost 25.00 a lead, 500.00 a
/// customer, and return 3.0; spam does not count; a lead known only by its Google click id
/// meets Google's spend; spend in dollars is converted at the owner's rate to the
/// project's euros.
pub async fn roas_counts_the_leads_the_spend_bought<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let acme = project(&store, "acme").await;
    let label = |name: &str, done: bool| NewLabel {
        name: name.to_owned(),
        mark_as_done: done,
        mapping: LabelMapping::default(),
    };
    let qualified = store
        .create_label(acme.id, label("Qualified", false), at(0))
        .await
        .unwrap()
        .id;
    let customer = store
        .create_label(acme.id, label("Customer", true), at(0))
        .await
        .unwrap()
        .id;
    let campaign = json!({"utm_source": "Facebook", "utm_medium": "paid_social", "utm_campaign": "Spring Sale"});
    let mut leads = Vec::new();
    for n in 0..41 {
        let body =
            json!({"userData": {"email": format!("p{n}@x.io")}, "attributionData": campaign});
        leads.push(create(&store, &acme, body, 10 + n).await.lead_id);
    }
    // The 41st is spam.
    store
        .mark_spam(acme.id, &leads[40..], &by(), at(100))
        .await
        .unwrap();
    let google =
        json!({"userData": {"email": "g@x.io"}, "attributionData": {"gclid": "Cj0-click"}});
    create(&store, &acme, google, 60).await;
    for (n, lead) in leads.iter().take(10).enumerate() {
        let (conversion_id, price) = match n {
            0 | 1 => (ConversionId::Label(customer), Some(150_000)),
            _ => (ConversionId::Label(qualified), None),
        };
        let update = StatusUpdate {
            identifier: LeadIdentifier::LeadId(*lead),
            conversion_id,
            price,
            note: None,
        };
        store
            .update_status(acme.id, &update, &by(), at(200))
            .await
            .unwrap();
    }
    let spend = [
        spent(1, "meta", "spring sale", 600, "EUR"),
        spent(2, "meta", "Spring Sale", 400, "EUR"),
        spent(1, "google", "Brand", 100, "USD"),
        spent(9, "meta", "Spring Sale", 5_000, "EUR"),
    ];
    store.save_spend(acme.id, &spend).await.unwrap();
    store
        .set_fx_rates(acme.id, &FxRates::parse(["USD=1.5"]).unwrap())
        .await
        .unwrap();

    let query = |by| RoasQuery {
        from: march(1),
        to: march(3),
        touch: Touchpoint::First,
        by,
    };
    let report = store
        .roas(acme.id, &query(RoasGrouping::Campaign))
        .await
        .unwrap();
    assert_eq!(report.currency, "EUR", "the project's");
    let figures = |row: &RoasRow| {
        (
            row.source.clone(),
            row.spend,
            row.leads,
            row.qualified,
            row.customers,
            row.value,
        )
    };
    let rows: Vec<_> = report.rows.iter().map(figures).collect();
    // Google's spend is on Brand; its lead's campaign is not known.
    assert_eq!(
        rows,
        [
            (Some("meta".into()), Some(1_000.0), 40, 10, 2, 3_000.0),
            (Some("google".into()), Some(150.0), 0, 0, 0, 0.0),
            (Some("google".into()), None, 1, 0, 0, 0.0),
        ]
    );
    assert_eq!(report.rows[2].campaign.as_deref(), Some("(not set)"));
    let spring = &report.rows[0];
    assert_eq!(spring.campaign.as_deref(), Some("Spring Sale"));
    assert_eq!(spring.clicks, Some(1_000));
    assert_eq!(spring.cost_per_lead(), Some(25.0));
    assert_eq!(spring.cost_per_qualified(), Some(100.0));
    assert_eq!(spring.cost_per_customer(), Some(500.0));
    assert_eq!(spring.roas(), Some(3.0));
    assert_eq!(report.rates.written(), "USD=1.5");
    assert_eq!(report.totals.spend, Some(1_150.0));
    assert_eq!(report.totals.leads, 41);
    // Each day's spend, and the leads created that day: of all rows, and of one.
    let days = |row: &RoasRow| -> Vec<_> {
        let days = report.per(row, Period::Day).into_iter();
        days.map(|(date, day)| (date, day.spend, day.leads, day.customers))
            .collect()
    };
    assert_eq!(
        days(&report.totals),
        [
            (march(1), Some(750.0), 41, 2),
            (march(2), Some(400.0), 0, 0),
            (march(3), None, 0, 0),
        ]
    );
    assert_eq!(
        report.row("meta/spring sale"),
        Some(spring),
        "found by its key"
    );
    assert_eq!(
        days(spring),
        [
            (march(1), Some(600.0), 40, 2),
            (march(2), Some(400.0), 0, 0),
            (march(3), None, 0, 0),
        ]
    );

    let by_source = store
        .roas(acme.id, &query(RoasGrouping::Source))
        .await
        .unwrap();
    let sources: Vec<_> = by_source.rows.iter().map(figures).collect();
    assert_eq!(
        sources,
        [
            (Some("meta".into()), Some(1_000.0), 40, 10, 2, 3_000.0),
            (Some("google".into()), Some(150.0), 1, 0, 0, 0.0),
        ]
    );
    let by_label = store
        .roas(acme.id, &query(RoasGrouping::Label))
        .await
        .unwrap();
    let labels: Vec<_> = by_label
        .rows
        .iter()
        .map(|row| (row.label.as_deref(), row.leads, row.spend))
        .collect();
    assert_eq!(
        labels,
        [
            (None, 31, None),
            (Some("Qualified"), 8, None),
            (Some("Customer"), 2, None)
        ]
    );
    assert_eq!(by_label.totals.spend, Some(1_150.0));
}

/// Spend with a campaign id meets the leads that carry it (`utm_id`, or a Meta lead form's
/// campaign id, which also says the lead is Meta's), together with the leads of its
/// campaign's name; the leads' ratings count there.
pub async fn spend_meets_the_leads_that_carry_its_campaign_id<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let acme = project(&store, "acme").await;
    let won = NewLabel {
        name: "Won".to_owned(),
        mark_as_done: true,
        mapping: LabelMapping::default(),
    };
    let won = store.create_label(acme.id, won, at(0)).await.unwrap().id;
    let bodies = [
        json!({"utm_source": "google", "utm_campaign": "Brand", "utm_id": "555"}),
        json!({"utm_source": "google", "utm_campaign": "brand search"}),
        json!({"leadSource": "meta-lead-ads", "metaCampaignId": "777"}),
        json!({"utm_source": "google", "utm_campaign": "Brand", "utm_id": "999"}),
    ];
    let mut leads = Vec::new();
    for (n, attribution) in bodies.into_iter().enumerate() {
        let body =
            json!({"userData": {"email": format!("c{n}@x.io")}, "attributionData": attribution});
        leads.push(create(&store, &acme, body, 10 + n as i64).await.lead_id);
    }
    let rate = |lead, price| StatusUpdate {
        identifier: LeadIdentifier::LeadId(lead),
        conversion_id: ConversionId::Label(won),
        price: Some(price),
        note: None,
    };
    for (lead, price) in [(leads[2], 20_000), (leads[0], 5_000)] {
        store
            .update_status(acme.id, &rate(lead, price), &by(), at(100))
            .await
            .unwrap();
    }
    let with_id = |source: &str, campaign: &str, id: &str, units| SpendRow {
        campaign_id: Some(id.to_owned()),
        ..spent(1, source, campaign, units, "EUR")
    };
    let spend = [
        with_id("google", "Brand search", "555", 100),
        with_id("meta", "Lead forms", "777", 50),
    ];
    store.save_spend(acme.id, &spend).await.unwrap();
    for touch in [Touchpoint::First, Touchpoint::Last] {
        let query = RoasQuery {
            from: march(1),
            to: march(3),
            touch,
            by: RoasGrouping::Campaign,
        };
        let report = store.roas(acme.id, &query).await.unwrap();
        let rows: Vec<_> = report
            .rows
            .iter()
            .map(|r| {
                (
                    r.source.as_deref(),
                    r.campaign.as_deref(),
                    r.campaign_id.as_deref(),
                    r.spend,
                    r.leads,
                    r.value,
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                (
                    Some("google"),
                    Some("Brand search"),
                    Some("555"),
                    Some(100.0),
                    2,
                    50.0
                ),
                (
                    Some("meta"),
                    Some("Lead forms"),
                    Some("777"),
                    Some(50.0),
                    1,
                    200.0
                ),
                (Some("google"), Some("Brand"), Some("999"), None, 1, 0.0),
            ],
            "{touch:?}"
        );
    }
}

/// A read of a platform's days replaces those days of its account (a campaign gone from
/// the report goes), and nothing else; the accounts read from are kept with how their
/// last read went, and forgotten.
pub async fn a_read_of_a_platforms_days_replaces_them_and_its_source_is_kept<B: Backend>(
    backend: &B,
) {
    use crate::spend::{SpendPlatform, SpendSource};
    let store = backend.open().await;
    let acme = project(&store, "acme").await;
    let of = |day: u32, campaign: &str, account: &str| SpendRow {
        account: account.to_owned(),
        ..spent(day, "google", campaign, 10, "EUR")
    };
    let first = [
        of(1, "Brand", "123"),
        of(2, "Brand", "123"),
        of(2, "Old", "123"),
        of(2, "Brand", "456"),
    ];
    store.save_spend(acme.id, &first).await.unwrap();
    store
        .save_spend(acme.id, &[spent(2, "newsletter", "May", 5, "EUR")])
        .await
        .unwrap();
    let now = [of(2, "Brand", "123"), of(3, "Brand", "123")];
    let kept = store
        .replace_spend(acme.id, "google", "123", (march(2), march(3)), &now)
        .await
        .unwrap();
    assert_eq!(kept, 2);
    let read = store.spend(acme.id, march(1), march(3)).await.unwrap();
    let rows: Vec<(u32, &str, &str, &str)> = read
        .iter()
        .map(|r| {
            use chrono::Datelike;
            (
                r.date.day(),
                r.source.as_str(),
                r.campaign.as_str(),
                r.account.as_str(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (1, "google", "Brand", "123"),
            (2, "google", "Brand", "123"),
            (2, "google", "Brand", "456"),
            (2, "newsletter", "May", ""),
            (3, "google", "Brand", "123"),
        ]
    );

    assert!(store.spend_sources(acme.id).await.unwrap().is_empty());
    let (google, meta, tiktok) = (
        SpendPlatform::GoogleAds,
        SpendPlatform::Meta,
        SpendPlatform::Tiktok,
    );
    let with_token = SpendSource {
        base_url: Some("http://127.0.0.1:9/".into()),
        access_token: Some(crate::integration::Secret::new("tt-token")),
        ..SpendSource::new(tiktok, "7001")
    };
    for source in [
        SpendSource::new(meta, "777"),
        SpendSource::new(google, "123"),
        with_token.clone(),
    ] {
        store.set_spend_source(acme.id, &source).await.unwrap();
    }
    store
        .record_spend_sync(acme.id, meta, at(5), Some("Meta answered HTTP 400"))
        .await
        .unwrap();
    let sources = store.spend_sources(acme.id).await.unwrap();
    assert_eq!(
        sources,
        [
            SpendSource::new(google, "123"),
            SpendSource {
                synced_at: Some(at(5)),
                error: Some("Meta answered HTTP 400".into()),
                ..SpendSource::new(meta, "777")
            },
            with_token,
        ]
    );
    // Another account starts afresh, without the token of the one before; a source removed
    // is forgotten.
    store
        .set_spend_source(acme.id, &SpendSource::new(meta, "888"))
        .await
        .unwrap();
    store
        .set_spend_source(acme.id, &SpendSource::new(tiktok, "7002"))
        .await
        .unwrap();
    store.remove_spend_source(acme.id, google).await.unwrap();
    let sources = store.spend_sources(acme.id).await.unwrap();
    assert_eq!(
        sources,
        [
            SpendSource::new(meta, "888"),
            SpendSource::new(tiktok, "7002")
        ]
    );
}
