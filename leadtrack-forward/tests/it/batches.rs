//! Deliveries batched per destination (#51 §3), against mocks of Meta's Conversions API and
//! Google's Data Manager API that check their documented request rules
//! (`leadtrack_platforms::testkit::rules`): the batch sizes, the events' required fields,
//! hashed identifiers, whole-request refusals and the quota's `429`.

use std::collections::{BTreeMap, HashSet};

use crate::common::*;
use chrono::Utc;
use leadtrack_core::Admin;
use leadtrack_core::job::JobRecord;
use leadtrack_core::label::{LabelMapping, NewLabel};
use leadtrack_core::types::{AttemptOutcome, ConversionId, DeliveryState, IntegrationKind, LeadId};
use leadtrack_forward::{Worker, WorkerConfig};
use leadtrack_platforms::testkit::{MockPlatform, rules};
use leadtrack_sqlite::SqliteStore;
use serde_json::json;
use uuid::Uuid;

/// A label of the fixture's project mapped to Meta and to the Google Ads conversion action
/// `action` alone: its conversions go only in batches.
async fn batched_label(f: &Fixture, name: &str, action: u64) -> Uuid {
    let label = NewLabel {
        name: name.into(),
        mark_as_done: true,
        mapping: LabelMapping {
            meta_event: Some("Purchase".into()),
            google_ads_action: Some(format!("customers/1234567890/conversionActions/{action}")),
            ..LabelMapping::default()
        },
    };
    f.store
        .create_label(f.project.id, label, Utc::now())
        .await
        .unwrap()
        .id
}

/// The fixture with its Meta and Data Manager mocks checking their platforms' rules, and
/// a label `Customer` mapped to both alone.
struct Checked {
    f: Fixture,
    /// The event ids Meta accepted.
    meta: rules::Accepted,
    /// The transaction ids Google accepted.
    ads: rules::Accepted,
    customer: Uuid,
}

/// [`Checked`], Google's quota spent after `quota` requests.
async fn checked(quota: usize) -> Checked {
    let f = fixture().await;
    let meta = rules::meta(&f.platforms.meta);
    let ads = rules::data_manager(&f.platforms.ads, quota);
    let customer = batched_label(&f, "Customer", 555).await;
    Checked {
        f,
        meta,
        ads,
        customer,
    }
}

/// Leads `from..to`, each another person, rated with `label`.
async fn rated(f: &Fixture, label: Uuid, people: std::ops::Range<u32>) -> Vec<LeadId> {
    let mut leads = Vec::new();
    for n in people {
        let body = another_person(n);
        leads.push(f.rated_lead(body, Some(ConversionId::Label(label))).await);
    }
    leads
}

/// The events each request to `mock` carried (their `key`), in order.
fn events_per_request(mock: &MockPlatform, list: &str, key: &str) -> Vec<Vec<String>> {
    mock.requests()
        .iter()
        .map(|request| {
            let body = request.json();
            let events = body[list].as_array().cloned().unwrap_or_default();
            events
                .iter()
                .map(|e| e[key].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .collect()
}

async fn jobs(f: &Fixture, leads: &[LeadId]) -> Vec<JobRecord> {
    let mut jobs = Vec::new();
    for &lead in leads {
        jobs.push(f.job(lead).await);
    }
    jobs
}

/// `list` holds each of `ids` once, and nothing else.
fn each_once(list: &[String], ids: &[String]) {
    let mut sorted = list.to_vec();
    sorted.sort();
    let mut expected = ids.to_vec();
    expected.sort();
    assert_eq!(sorted, expected, "each conversion once");
}

fn conversion_ids(jobs: &[JobRecord]) -> Vec<String> {
    jobs.iter()
        .map(|r| r.job.conversion_event_id.to_string())
        .collect()
}

#[tokio::test]
async fn conversions_to_one_destination_go_in_one_request() {
    let Checked {
        f,
        meta,
        ads,
        customer,
    } = checked(100).await;
    let partner = batched_label(&f, "Partner", 777).await;
    let mut leads = rated(&f, customer, 0..10).await;
    leads.extend(rated(&f, partner, 10..13).await);
    // Two leads of the label mapped to every platform: GA4 and the webhook go alone.
    leads.extend(rated(&f, f.label, 13..15).await);

    assert!(worker(&f.store, fast()).run_once().await.unwrap());
    let records = jobs(&f, &leads).await;
    assert!(
        records
            .iter()
            .all(|r| r.job.state == leadtrack_core::types::JobState::Done)
    );
    let ids = conversion_ids(&records);

    // Meta: one request, every conversion in it.
    let to_meta = events_per_request(&f.platforms.meta, "data", "event_id");
    assert_eq!(to_meta.len(), 1, "one request to the pixel");
    each_once(&to_meta[0], &ids);
    each_once(&meta.lock().unwrap(), &ids);
    // Google Ads: one request per conversion action, each with its action's conversions.
    let mut by_action = BTreeMap::new();
    for request in f.platforms.ads.requests() {
        let body = request.json();
        let action = body["destinations"][0]["productDestinationId"]
            .as_str()
            .unwrap()
            .to_owned();
        let count = body["events"].as_array().unwrap().len();
        assert!(
            by_action.insert(action, count).is_none(),
            "one request per action"
        );
    }
    let expected: BTreeMap<String, usize> =
        [("555".into(), 10), ("777".into(), 3), ("987654".into(), 2)].into();
    assert_eq!(by_action, expected);
    each_once(&ads.lock().unwrap(), &ids);
    assert_eq!(f.platforms.ga4.requests().len(), 2);
    assert_eq!(f.platforms.hook.requests().len(), 2);

    // Each attempt records its request: Meta's the same for all fifteen, GA4's none.
    let meta_batches: HashSet<_> = records
        .iter()
        .map(|r| attempts_of(r, IntegrationKind::Meta)[0].batch.unwrap())
        .collect();
    assert_eq!(meta_batches.len(), 1);
    assert_eq!(meta_batches.iter().next().unwrap().size, 15);
    let ads_sizes: Vec<u32> = records
        .iter()
        .map(|r| {
            attempts_of(r, IntegrationKind::GoogleAds)[0]
                .batch
                .unwrap()
                .size
        })
        .collect();
    assert_eq!(ads_sizes, [vec![10; 10], vec![3; 3], vec![2; 2]].concat());
    for record in &records[13..] {
        assert_eq!(attempts_of(record, IntegrationKind::Ga4)[0].batch, None);
        assert_eq!(attempts_of(record, IntegrationKind::Webhook)[0].batch, None);
    }
}

#[tokio::test]
async fn a_batch_holds_at_most_what_the_platform_takes() {
    let Checked {
        f,
        meta,
        ads,
        customer,
    } = checked(100).await;
    let leads = rated(&f, customer, 0..1_001).await;

    assert!(worker(&f.store, fast()).run_once().await.unwrap());
    let ids = conversion_ids(&jobs(&f, &leads).await);
    let to_meta = events_per_request(&f.platforms.meta, "data", "event_id");
    let mut sizes: Vec<usize> = to_meta.iter().map(Vec::len).collect();
    sizes.sort_unstable();
    assert_eq!(sizes, [1, 1_000], "Meta takes 1,000 events a request");
    each_once(&meta.lock().unwrap(), &ids);
    let to_ads = events_per_request(&f.platforms.ads, "events", "transactionId");
    assert_eq!(
        to_ads.iter().map(Vec::len).collect::<Vec<_>>(),
        [1_001],
        "Google takes 2,000"
    );
    each_once(&ads.lock().unwrap(), &ids);
}

#[tokio::test]
async fn a_request_refused_whole_is_halved_until_the_bad_event_is_alone() {
    let Checked {
        f,
        meta,
        ads,
        customer,
    } = checked(100).await;
    let mut leads = rated(&f, customer, 0..5).await;
    let mut refused = another_person(5);
    refused["userData"]["email"] = json!(rules::REFUSED);
    leads.push(
        f.rated_lead(refused, Some(ConversionId::Label(customer)))
            .await,
    );
    leads.extend(rated(&f, customer, 6..8).await);

    assert!(worker(&f.store, fast()).run_once().await.unwrap());
    let records = jobs(&f, &leads).await;
    let ids = conversion_ids(&records);
    let good: Vec<String> = ids
        .iter()
        .enumerate()
        .filter(|(n, _)| *n != 5)
        .map(|(_, id)| id.clone())
        .collect();
    // 8 are refused; of their halves 4 go and 4 are refused, whose first pair is refused
    // (its two then go alone) and whose second pair goes.
    let sizes = |mock: &MockPlatform, list, key| {
        events_per_request(mock, list, key)
            .iter()
            .map(Vec::len)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        sizes(&f.platforms.meta, "data", "event_id"),
        [8, 4, 4, 2, 1, 1, 2]
    );
    assert_eq!(
        sizes(&f.platforms.ads, "events", "transactionId"),
        [8, 4, 4, 2, 1, 1, 2]
    );
    each_once(&meta.lock().unwrap(), &good);
    each_once(&ads.lock().unwrap(), &good);

    for (kind, words) in [
        (
            IntegrationKind::Meta,
            "Meta error 100/2804019: Invalid parameter: an event's user data is refused",
        ),
        (
            IntegrationKind::GoogleAds,
            "HTTP 400: INVALID_ARGUMENT An event's user data is refused",
        ),
    ] {
        let (state, attempts) = delivery(&records[5], kind);
        assert_eq!(
            (state, attempts),
            (
                DeliveryState::Failed,
                vec![(AttemptOutcome::Failed, Some(400))]
            )
        );
        let attempt = &attempts_of(&records[5], kind)[0];
        assert_eq!(attempt.error.as_deref(), Some(words));
        assert_eq!(attempt.batch.unwrap().size, 1, "the bad event ends alone");
        let sizes: Vec<u32> = records
            .iter()
            .map(|r| attempts_of(r, kind)[0].batch.unwrap().size)
            .collect();
        // Where each good one went through: the first half whole, then a pair, then alone.
        assert_eq!(sizes, [4, 4, 4, 4, 1, 1, 2, 2], "{kind}");
        for record in records
            .iter()
            .enumerate()
            .filter(|(n, _)| *n != 5)
            .map(|(_, r)| r)
        {
            assert_eq!(delivery(record, kind).0, DeliveryState::Delivered);
        }
    }
}

#[tokio::test]
async fn too_many_requests_wait_their_turn_and_each_event_goes_once() {
    let Checked {
        f,
        meta,
        ads,
        customer,
    } = checked(0).await;
    let leads = rated(&f, customer, 0..5).await;
    let w = worker(&f.store, fast());

    assert!(w.run_once().await.unwrap());
    let records = jobs(&f, &leads).await;
    let ids = conversion_ids(&records);
    for record in &records {
        let (state, attempts) = delivery(record, IntegrationKind::GoogleAds);
        assert_eq!(
            (state, attempts),
            (
                DeliveryState::Pending,
                vec![(AttemptOutcome::Retry, Some(429))]
            )
        );
        let attempt = &attempts_of(record, IntegrationKind::GoogleAds)[0];
        let wait = attempt.retry_at.unwrap() - attempt.at;
        assert!(
            wait >= chrono::Duration::seconds(1),
            "Retry-After is honoured: {wait}"
        );
        assert_eq!(
            delivery(record, IntegrationKind::Meta).0,
            DeliveryState::Delivered
        );
    }
    each_once(&meta.lock().unwrap(), &ids);

    // While Google's Retry-After runs, ratings rated meanwhile wait too, unsent.
    rules::data_manager(&f.platforms.ads, 100);
    let later = rated(&f, customer, 5..7).await;
    assert!(w.run_once().await.unwrap());
    assert_eq!(
        f.platforms.ads.requests().len(),
        1,
        "nothing sent while held"
    );
    for record in jobs(&f, &later).await {
        let attempt = &attempts_of(&record, IntegrationKind::GoogleAds)[0];
        assert_eq!(
            (attempt.outcome, attempt.http_status),
            (AttemptOutcome::Retry, None)
        );
        assert_eq!(attempt.batch, None, "no request was made");
        let error = attempt.error.as_deref().unwrap();
        assert!(
            error.starts_with("Google Ads asked to slow down"),
            "{error}"
        );
    }

    // Then the quota is back: the seven go, each once, the first five with their ids.
    for &lead in leads.iter().chain(&later) {
        f.run_until_done(&w, lead).await;
    }
    let to_ads = events_per_request(&f.platforms.ads, "events", "transactionId");
    let resent: Vec<String> = to_ads[1..].concat();
    let all = conversion_ids(&jobs(&f, &[leads.clone(), later].concat()).await);
    each_once(&resent, &all);
    assert!(
        to_ads[0].iter().all(|id| resent.contains(id)),
        "the same ids"
    );
    assert!(
        ads.lock().unwrap().is_empty(),
        "the first mock's rules accepted nothing"
    );
    // Meta, never throttled, had the first five and then the two, each once.
    assert_eq!(f.platforms.meta.requests().len(), 2);
    each_once(&meta.lock().unwrap(), &all);
}

#[tokio::test]
async fn two_workers_never_put_one_conversion_in_two_batches() {
    let Checked {
        f,
        meta,
        ads,
        customer,
    } = checked(100).await;
    let leads = rated(&f, customer, 0..60).await;
    let config = || WorkerConfig {
        batch_jobs: 7,
        ..fast()
    };
    let (a, b) = (worker(&f.store, config()), worker(&f.store, config()));

    let drain = |w: Worker<SqliteStore>| async move { while w.run_once().await.unwrap() {} };
    tokio::join!(drain(a), drain(b));
    let records = jobs(&f, &leads).await;
    assert!(
        records
            .iter()
            .all(|r| r.job.state == leadtrack_core::types::JobState::Done)
    );
    let ids = conversion_ids(&records);
    each_once(&meta.lock().unwrap(), &ids);
    each_once(&ads.lock().unwrap(), &ids);
    let sizes: Vec<usize> = events_per_request(&f.platforms.meta, "data", "event_id")
        .iter()
        .map(Vec::len)
        .collect();
    assert!(sizes.iter().all(|&n| n <= 7), "{sizes:?}");
    assert!(sizes.len() >= 60 / 7, "{sizes:?}");
}
