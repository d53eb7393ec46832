//! Reports: leads of a range of days counted by their first or last touch and their rating.

use chrono::{Duration, NaiveDate};
use serde_json::json;
use uuid::Uuid;

use super::{Backend, at, by, create, project};
use crate::label::{LabelMapping, NewLabel};
use crate::report::{Grouping, Report, ReportQuery, Touchpoint};
use crate::request::StatusUpdate;
use crate::store::{LeadStore, Store};
use crate::types::{ConversionId, LeadId, LeadIdentifier, ProjectId};

/// `(group, leads, [per label], lost, value)` of every row of a report, in its order.
type Rows = Vec<(String, u64, Vec<u64>, u64, i64)>;

fn rows(report: &Report, labels: &[Uuid]) -> Rows {
    report
        .groups
        .iter()
        .map(|group| {
            let tally = &group.tally;
            let per_label = labels.iter().map(|id| tally.label(*id)).collect();
            (
                group.name.clone(),
                tally.leads,
                per_label,
                tally.lost,
                tally.value,
            )
        })
        .collect()
}

fn row(
    name: &str,
    leads: u64,
    per_label: [u64; 2],
    lost: u64,
    value: i64,
) -> (String, u64, Vec<u64>, u64, i64) {
    (name.to_owned(), leads, per_label.to_vec(), lost, value)
}

/// A small known project: six leads in the range (one merged into a channel after it was
/// created, one with the cookie form of a channel path), one the day before, one of another
/// project, rated with its two labels (Qualified, Customer) or lost.
struct Known<S> {
    store: S,
    project: ProjectId,
    labels: [Uuid; 2],
}

impl<S: Store> Known<S> {
    /// The report of 1 to 3 March 2026 by `touch` and `by`.
    async fn report(&self, touch: Touchpoint, by: Grouping) -> Report {
        let query = ReportQuery {
            from: march(1),
            to: march(3),
            touch,
            by,
        };
        self.store.report(self.project, &query).await.unwrap()
    }
}

fn march(day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 3, day).unwrap()
}

async fn known<S: Store + Clone>(store: S) -> Known<S> {
    let project = project(&store, "p1").await;
    let other = super::project(&store, "p2").await;
    let label = |name: &str| NewLabel::done(name, LabelMapping::default());
    let qualified = store
        .create_label(project.id, label("Qualified"), at(0))
        .await
        .unwrap()
        .id;
    let customer = store
        .create_label(project.id, label("Customer"), at(0))
        .await
        .unwrap()
        .id;
    let labels = [qualified, customer];

    let day = 24 * 60;
    let google_then_direct = r#"[{"t":1772323200000,"ch":{"s":"google","m":"cpc","cm":"spring"}},{"ch":{"s":"(direct)","m":"(none)"}}]"#;
    let google = r#"[{"ch":{"s":"google","m":"cpc","cm":"spring"}}]"#;
    let facebook_then_google: String = form_urlencoded::byte_serialize(
        br#"[{"ch":{"s":"facebook","m":"paid_social"}},{"ch":{"s":"google","m":"cpc","cm":"retarget"}}]"#,
    )
    .collect();
    let a = create(
        &store,
        &project,
        json!({"userData": {"email": "a@x.io"}, "channelFlow": google_then_direct}),
        10,
    )
    .await
    .lead_id;
    let b = create(
        &store,
        &project,
        json!({"userData": {"email": "b@x.io"}, "channelFlow": google}),
        day - 1,
    )
    .await
    .lead_id;
    let c = create(&store, &project, json!({"attributionData": {"utm_source": "newsletter", "utm_medium": "email", "utm_campaign": "may"}}), day).await.lead_id;
    create(
        &store,
        &project,
        json!({"userData": {"email": "d@x.io"}}),
        day + 5,
    )
    .await;
    let e = create(
        &store,
        &project,
        json!({"userData": {"email": "e@x.io"}, "lt_channelflow": facebook_then_google}),
        2 * day + 1,
    )
    .await
    .lead_id;
    let merged = json!({"userData": {"email": "h@x.io"}, "formData": {"uniqueEventId": "ev-h"}});
    create(&store, &project, merged, 2 * day + 2).await;
    let merge = json!({"formData": {"uniqueEventId": "ev-h"}, "userData": {"phone": "1"}, "channelFlow": r#"[{"ch":{"s":"bing","m":"cpc"}}]"#});
    create(&store, &project, merge, 2 * day + 3).await;
    // Outside: the day before, and another project.
    let before = create(
        &store,
        &project,
        json!({"userData": {"email": "f@x.io"}, "channelFlow": google}),
        -1,
    )
    .await
    .lead_id;
    create(
        &store,
        &other,
        json!({"userData": {"email": "g@x.io"}, "channelFlow": google}),
        10,
    )
    .await;

    let rate = |lead: LeadId, conversion_id: ConversionId, price: Option<i64>| {
        let store = store.clone();
        async move {
            let update = StatusUpdate {
                identifier: LeadIdentifier::LeadId(lead),
                conversion_id,
                price,
                note: None,
            };
            store
                .update_status(project.id, &update, &by(), at(5 * day))
                .await
                .unwrap();
        }
    };
    rate(a, ConversionId::Label(customer), Some(120_000)).await;
    rate(b, ConversionId::Label(qualified), Some(5_000)).await;
    rate(c, ConversionId::Lost, Some(999)).await;
    rate(e, ConversionId::Label(customer), Some(30_000)).await;
    rate(before, ConversionId::Label(customer), Some(1)).await;

    Known {
        store,
        project: project.id,
        labels,
    }
}

/// By first touch and source / medium, every group, the totals and each day count the
/// known project's leads, ratings and value exactly.
pub async fn report_counts_by_first_touch_with_totals_and_days<B: Backend>(backend: &B) {
    let known = known(backend.open().await).await;
    let (labels, [qualified, customer]) = (known.labels, known.labels);
    let report = |touch, by| known.report(touch, by);
    let first = report(Touchpoint::First, Grouping::SourceMedium).await;
    assert_eq!(
        rows(&first, &labels),
        [
            row("google / cpc", 2, [1, 1], 0, 125_000),
            row("(not set)", 1, [0, 0], 0, 0),
            row("bing / cpc", 1, [0, 0], 0, 0),
            row("facebook / paid_social", 1, [0, 1], 0, 30_000),
            row("newsletter / email", 1, [0, 0], 1, 0),
        ]
    );
    let totals = first.totals();
    assert_eq!(
        (
            totals.leads,
            totals.label(qualified),
            totals.label(customer),
            totals.lost,
            totals.value
        ),
        (6, 1, 2, 1, 155_000)
    );
    let days: Vec<(NaiveDate, u64, u64)> = first
        .days
        .iter()
        .map(|d| (d.date, d.leads, d.converted))
        .collect();
    assert_eq!(days, [(march(1), 2, 2), (march(2), 2, 0), (march(3), 2, 1)]);
}

/// A lead reset to open counts as open, whatever it was rated before: the lost lead of the
/// newsletter, reset, is no longer lost.
pub async fn a_lead_reset_to_open_is_reported_open<B: Backend>(backend: &B) {
    let known = known(backend.open().await).await;
    let page = known
        .store
        .list_leads(known.project, &crate::request::LeadQuery::default())
        .await
        .unwrap();
    let lost = page
        .leads
        .iter()
        .find(|lead| lead.conversion_id == Some(ConversionId::Lost))
        .expect("the known project's lost lead");
    let reset = StatusUpdate {
        identifier: LeadIdentifier::LeadId(lost.id),
        conversion_id: ConversionId::Open,
        price: None,
        note: None,
    };
    known
        .store
        .update_status(known.project, &reset, &by(), at(60 * 24 * 6))
        .await
        .unwrap();
    let report = known
        .report(Touchpoint::First, Grouping::SourceMedium)
        .await;
    let newsletter = rows(&report, &known.labels).pop().unwrap();
    assert_eq!(newsletter, row("newsletter / email", 1, [0, 0], 0, 0));
    assert_eq!(report.totals().lost, 0);
}

/// By last touch, and by source, campaign and medium alone.
pub async fn report_counts_by_last_touch_and_each_grouping<B: Backend>(backend: &B) {
    let known = known(backend.open().await).await;
    let labels = known.labels;
    let report = |touch, by| known.report(touch, by);
    assert_eq!(
        rows(&report(Touchpoint::Last, Grouping::Source).await, &labels),
        [
            row("google", 2, [1, 1], 0, 35_000),
            row("(direct)", 1, [0, 1], 0, 120_000),
            row("(not set)", 1, [0, 0], 0, 0),
            row("bing", 1, [0, 0], 0, 0),
            row("newsletter", 1, [0, 0], 1, 0),
        ]
    );
    assert_eq!(
        rows(
            &report(Touchpoint::First, Grouping::Campaign).await,
            &labels
        ),
        [
            row("(not set)", 3, [0, 1], 0, 30_000),
            row("spring", 2, [1, 1], 0, 125_000),
            row("may", 1, [0, 0], 1, 0),
        ]
    );
    assert_eq!(
        rows(&report(Touchpoint::Last, Grouping::Medium).await, &labels),
        [
            row("cpc", 3, [1, 1], 0, 35_000),
            row("(none)", 1, [0, 1], 0, 120_000),
            row("(not set)", 1, [0, 0], 0, 0),
            row("email", 1, [0, 0], 1, 0),
        ]
    );
}

/// A range without leads has its days and no group.
pub async fn report_of_an_empty_range_has_its_days_and_no_group<B: Backend>(backend: &B) {
    let known = known(backend.open().await).await;
    let (store, project) = (&known.store, known.project);
    let empty = store
        .report(
            project,
            &ReportQuery {
                from: march(10),
                to: march(10) + Duration::days(6),
                touch: Touchpoint::First,
                by: Grouping::Source,
            },
        )
        .await
        .unwrap();
    assert!(empty.groups.is_empty());
    assert_eq!(empty.days.len(), 7);
    assert!(empty.days.iter().all(|d| d.leads == 0));
}

/// The first touch of each lead (a person's first comment, rating or status change, never
/// an API key's) is kept with it, and reported as medians per group and per person.
pub async fn first_touches_are_reported_per_group_and_person<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p = project(&store, "p1").await;
    let person = |id: i64, name: &str| crate::account::Actor::User {
        id: crate::types::UserId(id),
        name: name.to_owned(),
    };
    let (ada, grace) = (person(1, "Ada"), person(2, "Grace"));
    let lead = |source: &'static str, minute: i64| {
        let store = store.clone();
        let p = p.clone();
        async move {
            let body = json!({"userData": {"email": format!("{source}{minute}@x.io")},
                "attributionData": {"utm_source": source, "utm_medium": "cpc"}});
            create(&store, &p, body, minute).await.lead_id
        }
    };
    let rate = |lead: LeadId| StatusUpdate {
        identifier: LeadIdentifier::LeadId(lead),
        conversion_id: ConversionId::Lost,
        price: None,
        note: None,
    };
    // Google: touched after 10 min (Ada, by a comment) and 30 min (Grace, by a rating,
    // after an API key's rating that does not count); news: after 60 min (Ada); one never.
    let first = lead("google", 0).await;
    store
        .add_comment(p.id, first, &ada, "Called", at(10))
        .await
        .unwrap();
    store
        .update_status(p.id, &rate(first), &grace, at(20))
        .await
        .unwrap();
    let second = lead("google", 5).await;
    store
        .update_status(p.id, &rate(second), &by(), at(6))
        .await
        .unwrap();
    let reopen = StatusUpdate {
        conversion_id: ConversionId::Open,
        ..rate(second)
    };
    store
        .update_status(p.id, &reopen, &grace, at(35))
        .await
        .unwrap();
    let third = lead("news", 0).await;
    store
        .add_comment(p.id, third, &ada, "Emailed", at(60))
        .await
        .unwrap();
    lead("news", 1).await;

    let query = ReportQuery {
        from: march(1),
        to: march(3),
        touch: Touchpoint::First,
        by: Grouping::Source,
    };
    let touches = store.report(p.id, &query).await.unwrap().first_touch;
    let minutes = Duration::minutes;
    assert_eq!(
        touches.by_group,
        [
            ("google".to_owned(), minutes(20), 2),
            ("news".to_owned(), minutes(60), 1)
        ]
    );
    assert_eq!(
        touches.by_member,
        [
            ("Ada".to_owned(), minutes(35), 2),
            ("Grace".to_owned(), minutes(30), 1)
        ]
    );
}
