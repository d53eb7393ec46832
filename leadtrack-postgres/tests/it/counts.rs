//! The per-status and per-facet counts under concurrent changes the opposite way: ratings (open to
//! pending) and finished jobs (pending to open) on leads that share count slots. Each
//! change locks two counts, always in the order of their statuses; in two orders, two such
//! changes can deadlock (the benchmark saw 33 in 5 seconds at 64 connections). PostgreSQL
//! finds a deadlock only after `deadlock_timeout`, which this database sets to a minute, so
//! that one stalls the test rather than being retried unseen.
#![cfg(leadtrack_postgres)]

use leadtrack_postgres::testkit::test_key;
use std::time::Duration;

use chrono::Utc;
use futures_util::StreamExt;
use futures_util::future::join_all;
use leadtrack_core::account::Actor;
use leadtrack_core::label::{LabelMapping, NewLabel};
use leadtrack_core::request::{LeadQuery, StatusUpdate};
use leadtrack_core::testkit::{data, project};
use leadtrack_core::types::{ConversionId, LeadId, LeadIdentifier, LeadStatus};
use leadtrack_core::{Admin, JobQueue, LeadStore};
use leadtrack_postgres::{PgOptions, PgStore};
use serde_json::json;

/// Leads: 32 for each of the 16 count slots.
const LEADS: usize = 512;

#[tokio::test(flavor = "multi_thread")]
async fn ratings_and_finished_jobs_at_once_never_deadlock_and_keep_the_counts() {
    let store = store_slow_to_find_deadlocks().await;
    let acme = project(&store, "acme").await;
    // Not marked done: a finished job returns its lead to open.
    let label = store
        .create_label(
            acme.id,
            NewLabel {
                name: "Called".into(),
                mark_as_done: false,
                mapping: LabelMapping::default(),
            },
            Utc::now(),
        )
        .await
        .unwrap()
        .id;
    // Created all at once: each create adds to the same facet counts (form, source,
    // click ids), in one order, so none waits for another's lock in a cycle.
    let leads: Vec<LeadId> = join_all((0..LEADS).map(|n| {
        let store = store.clone();
        let body = json!({"userData": {"email": format!("l{n}@example.com")},
            "formData": {"formName": if n % 2 == 0 { "Contact" } else { "CONTACT" }},
            "attributionData": {"utm_source": "google", "gclid": format!("g{n}")}});
        async move {
            let created = store.create_lead(acme.id, data(body), Utc::now()).await;
            created.unwrap().lead_id
        }
    }))
    .await;
    let rate = |lead: LeadId| {
        let store = store.clone();
        async move {
            store
                .update_status(
                    acme.id,
                    &StatusUpdate {
                        identifier: LeadIdentifier::LeadId(lead),
                        conversion_id: ConversionId::Label(label),
                        price: None,
                        note: None,
                    },
                    &Actor::api_key("lt_counts"),
                    Utc::now(),
                )
                .await
                .unwrap();
        }
    };
    let finish_one = || {
        let store = store.clone();
        async move {
            let claimed = store
                .claim_job(Utc::now(), chrono::Duration::minutes(5))
                .await
                .unwrap()
                .expect("a job is due");
            let status = store
                .finish_job(claimed.job.id, claimed.lease.token, Utc::now())
                .await
                .unwrap();
            assert_eq!(status, LeadStatus::Open);
        }
    };
    // Half the leads pending: each slot then holds a pending lead and an open one.
    let (first, second) = leads.split_at(LEADS / 2);
    join_all(first.iter().map(|&lead| rate(lead))).await;
    for round in 0..8 {
        let to_rate = if round % 2 == 0 { second } else { first };
        let changes = tokio::time::timeout(
            Duration::from_secs(30),
            futures_util::future::join(
                join_all(to_rate.iter().map(|&lead| rate(lead))),
                join_all((0..LEADS / 2).map(|_| finish_one())),
            ),
        )
        .await;
        assert!(
            changes.is_ok(),
            "round {round}: the changes stalled (a deadlock)"
        );
    }
    let counts = store
        .status_counts(acme.id, &LeadQuery::default())
        .await
        .unwrap();
    let count = |status| counts.iter().find(|(s, _)| *s == status).unwrap().1;
    let half = (LEADS / 2) as u64;
    assert_eq!(
        (count(LeadStatus::Open), count(LeadStatus::Pending)),
        (half, half)
    );
    let pending = store
        .list_leads(
            acme.id,
            &LeadQuery::from_pairs([("status", "pending")]).unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(pending.total, half, "the kept count is the listing's");
    for facet in ["form=contact", "source=google", "gclid[exists]=true"] {
        let (name, value) = facet.split_once('=').unwrap();
        let query = LeadQuery::from_pairs([(name, value)]).unwrap();
        let counts = store.status_counts(acme.id, &query).await.unwrap();
        let count = |status| counts.iter().find(|(s, _)| *s == status).unwrap().1;
        assert_eq!(
            (count(LeadStatus::Open), count(LeadStatus::Pending)),
            (half, half),
            "{facet}"
        );
        let pending = LeadQuery {
            status: Some(vec![LeadStatus::Pending]),
            ..query
        };
        let page = store.list_leads(acme.id, &pending).await.unwrap();
        assert_eq!(page.total, half, "{facet}");
    }
}

/// The derived-data check finds the counts of a store's leads right, and a count changed
/// behind the leads' back wrong.
#[tokio::test]
async fn kept_counts_are_checked_against_a_recount() {
    let (store, url) = crate::support::fresh_store().await;
    let db = crate::support::client(&url).await;
    let acme = project(&store, "acme").await;
    for n in 0..20 {
        let body = json!({"userData": {"email": format!("c{n}@example.com")},
                          "formData": {"formName": "Contact"}});
        store
            .create_lead(acme.id, data(body), Utc::now())
            .await
            .unwrap();
    }
    all_counted(&store).await;
    assert_eq!(store.check_derived().await.unwrap(), Vec::<String>::new());
    db.batch_execute(
        "UPDATE lead_facet_counts SET total = total + 1
         WHERE facet = 'form_name' AND value = 'Contact' AND slot = 3;
         UPDATE lead_status_counts SET total = total - 1 WHERE status = 'open' AND slot = 4;",
    )
    .await
    .unwrap();
    assert_eq!(
        store.check_derived().await.unwrap(),
        [
            "lead_status_counts differs from a recount in 2 rows",
            "lead_facet_counts differs from a recount in 2 rows",
        ]
    );
}

/// A new lead is counted after its commit (migration 42): while the counter is held up,
/// totals still count every lead, a change of a lead not counted yet leaves the counts
/// alone, and once the counter goes on it catches up and the counts match a recount.
#[tokio::test(flavor = "multi_thread")]
async fn leads_are_counted_at_once_while_the_counter_is_behind() {
    let (store, url) = crate::support::fresh_store().await;
    let mut db = crate::support::client(&url).await;
    let acme = project(&store, "acme").await;
    let create = |n: usize| {
        let store = store.clone();
        let body = json!({"userData": {"email": format!("b{n}@example.com")},
            "formData": {"formName": "Contact"},
            "attributionData": {"gclid": format!("g{n}")}});
        async move {
            let created = store.create_lead(acme.id, data(body), Utc::now()).await;
            created.unwrap().lead_id
        }
    };
    // Hold the counter up: it gives up on this lock (its `lock_timeout`) round after round.
    let hold = db.transaction().await.unwrap();
    hold.batch_execute("LOCK TABLE lead_facet_counts IN EXCLUSIVE MODE")
        .await
        .unwrap();
    create(0).await;
    let leads = join_all((1..=10).map(create)).await;
    let spam = store
        .mark_spam(
            acme.id,
            &leads[..2],
            &Actor::api_key("lt_counts"),
            Utc::now(),
        )
        .await
        .unwrap();
    assert_eq!(spam.len(), 2);

    let totals = || async {
        let mut totals = Vec::new();
        for pairs in [
            vec![],
            vec![("status", "spam")],
            vec![("form", "contact")],
            vec![("gclid[exists]", "true"), ("status", "spam")],
        ] {
            let query = LeadQuery::from_pairs(pairs).unwrap();
            totals.push(store.list_leads(acme.id, &query).await.unwrap().total);
            let counts = store.status_counts(acme.id, &query).await.unwrap();
            let count = |status| counts.iter().find(|(s, _)| *s == status).unwrap().1;
            totals.push(count(LeadStatus::Open));
        }
        totals
    };
    let expected = vec![9, 9, 2, 9, 9, 9, 2, 9];
    assert_eq!(totals().await, expected, "while the counter is held up");
    assert_eq!(store.uncounted().await.unwrap(), 11);

    hold.commit().await.unwrap();
    all_counted(&store).await;
    assert_eq!(totals().await, expected, "once counted");
    assert_eq!(store.check_derived().await.unwrap(), Vec::<String>::new());
}

/// A store on a fresh database that finds a deadlock only after a minute, so that one stalls
/// a test rather than being retried unseen.
async fn store_slow_to_find_deadlocks() -> PgStore {
    let (store, url) = crate::support::fresh_store().await;
    let database = url.rsplit('/').next().unwrap().to_owned();
    let admin = crate::support::client(&url).await;
    admin
        .batch_execute(&format!(
            "ALTER DATABASE {database} SET deadlock_timeout = '60s'"
        ))
        .await
        .unwrap();
    // New connections get the setting. The 512 changes of a round queue for the pool's
    // connections: on a slow machine the last waits longer than the 5 seconds after which
    // a request is refused as unavailable, and a round stalled for longer fails below.
    store.close();
    let options = PgOptions {
        wait: Duration::from_secs(60),
        ..crate::support::options()
    };
    PgStore::connect_with(&url, &test_key(), options)
        .await
        .unwrap()
}

/// Waits until the store's counter has counted every lead.
async fn all_counted(store: &PgStore) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while store.uncounted().await.unwrap() > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the counter never caught up"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Changes of many counted leads at once (marking spam, 16 statements of 32 leads each)
/// while the counter counts new leads with the same facets: each statement locks its
/// counts in one order (migration 42) and the counter gives way, so no change stalls in a
/// deadlock (which this database would find only after a minute), and the counts end
/// right.
#[tokio::test(flavor = "multi_thread")]
async fn changes_of_many_leads_never_wait_on_the_counter() {
    let store = store_slow_to_find_deadlocks().await;
    let acme = project(&store, "acme").await;
    let create = |n: usize| {
        let store = store.clone();
        let body = json!({"userData": {"email": format!("m{n}@example.com")},
            "formData": {"formName": format!("Form {}", n % 3)},
            "attributionData": {"utm_source": format!("s{}", n % 5), "gclid": format!("g{n}")}});
        async move {
            let created = store.create_lead(acme.id, data(body), Utc::now()).await;
            created.unwrap().lead_id
        }
    };
    // As many at once as the pool has connections, so that none waits long for one.
    let create_all = |leads: std::ops::Range<usize>| {
        futures_util::stream::iter(leads)
            .map(create)
            .buffer_unordered(24)
            .collect::<Vec<LeadId>>()
    };
    let counted = create_all(0..LEADS).await;
    all_counted(&store).await;
    let by = Actor::api_key("lt_counts");
    let changes = tokio::time::timeout(
        Duration::from_secs(30),
        futures_util::future::join(
            create_all(LEADS..3 * LEADS),
            join_all(counted.chunks(32).map(|leads| {
                let (store, by) = (store.clone(), by.clone());
                async move {
                    let marked = store.mark_spam(acme.id, leads, &by, Utc::now()).await;
                    assert_eq!(marked.unwrap().len(), leads.len());
                }
            })),
        ),
    )
    .await;
    assert!(changes.is_ok(), "a change stalled (a deadlock)");
    all_counted(&store).await;
    assert_eq!(store.check_derived().await.unwrap(), Vec::<String>::new());
    let spam = LeadQuery::from_pairs([("status", "spam")]).unwrap();
    let total = store.list_leads(acme.id, &spam).await.unwrap().total;
    assert_eq!(total, LEADS as u64);
}
