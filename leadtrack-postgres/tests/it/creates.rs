//! Concurrent creates written in groups (one transaction for the creates waiting together):
//! each is stored as it would be alone, and one that fails fails alone; and a duplicate's
//! original, once marked, is not written again.
#![cfg(leadtrack_postgres)]

use std::time::Duration;

use chrono::Utc;
use leadtrack_core::request::LeadQuery;
use leadtrack_core::testkit::{data, project};
use leadtrack_core::types::{LeadId, LeadIdentifier, ProjectId};
use leadtrack_core::{LeadStore, StoreError, StoreResult};
use leadtrack_postgres::PgStore;
use serde_json::json;
use tokio::task::JoinHandle;
use tokio_postgres::{Client, Transaction};

/// Creates lead `n` in `project` on a task of its own.
fn create(store: &PgStore, project: ProjectId, n: usize) -> JoinHandle<StoreResult<LeadId>> {
    let store = store.clone();
    let body = json!({"userData": {"email": format!("g{n}@example.com"), "firstName": format!("Grace{n}")},
        "formData": {"formName": "Contact"}});
    tokio::spawn(async move {
        let created = store.create_lead(project, data(body), Utc::now()).await?;
        Ok(created.lead_id)
    })
}

/// Holds every insert into `project` until the transaction ends (an insert's foreign-key
/// check waits on the project's row), so that the creates meanwhile pile up.
async fn hold_inserts(db: &mut Client, project: ProjectId) -> Transaction<'_> {
    let hold = db.transaction().await.unwrap();
    hold.execute(
        "SELECT id FROM projects WHERE id = $1 FOR UPDATE",
        &[&project.0],
    )
    .await
    .unwrap();
    hold
}

/// The groups the test store writes at once (a quarter of its pool of 24, at most four).
const GROUPS: usize = 4;

/// Takes every group with a create of its own (leads 0 to 3), each sent once the one
/// before waits on the held inserts (and so was taken alone), so that the creates after
/// them wait together. A create alone waits for its lock as long as it takes, so the
/// groups stay taken until the inserts are let go.
async fn take_every_group(
    store: &PgStore,
    project: ProjectId,
    watch: &Client,
) -> Vec<JoinHandle<StoreResult<LeadId>>> {
    let mut tasks = Vec::new();
    for n in 0..GROUPS {
        tasks.push(create(store, project, n));
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while waiting_on_locks(watch).await <= n as i64 {
            assert!(tokio::time::Instant::now() < deadline, "create {n} waits");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    tasks
}

/// How many of the database's connections wait on a lock.
async fn waiting_on_locks(watch: &Client) -> i64 {
    let row = watch
        .query_one(
            "SELECT count(*) FROM pg_stat_activity \
             WHERE datname = current_database() AND wait_event_type = 'Lock'",
            &[],
        )
        .await
        .unwrap();
    row.get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn creates_waiting_together_share_a_transaction_and_one_that_fails_fails_alone() {
    let (store, url) = crate::support::fresh_store().await;
    let mut db = crate::support::client(&url).await;
    let acme = project(&store, "acme").await;
    let missing = ProjectId(acme.id.0 + 1_000);
    let alone = store
        .create_lead(
            missing,
            data(json!({"userData": {"email": "x@example.com"}})),
            Utc::now(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(alone, StoreError::Backend(_)),
        "a create in a missing project, alone: {alone:?}"
    );

    let watch = crate::support::client(&url).await;
    let hold = hold_inserts(&mut db, acme.id).await;
    let mut tasks = take_every_group(&store, acme.id, &watch).await;
    tasks.extend((GROUPS..48).map(|n| create(&store, acme.id, n)));
    let store_for_bad = store.clone();
    let bad = tokio::spawn(async move {
        let body = json!({"userData": {"email": "x@example.com"}});
        store_for_bad
            .create_lead(missing, data(body), Utc::now())
            .await
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    hold.commit().await.unwrap();

    let mut ids = Vec::new();
    for task in tasks {
        ids.push(task.await.unwrap().expect("every good create is stored"));
    }
    let bad = bad.await.unwrap().unwrap_err();
    assert!(
        matches!(bad, StoreError::Backend(_)),
        "the bad create fails as it does alone: {bad:?}"
    );
    ids.sort_by_key(|id| id.0);
    ids.dedup();
    assert_eq!(ids.len(), 48, "48 leads, each its own");
    let mut emails = Vec::new();
    for id in &ids {
        let lead = store.find_lead(acme.id, &LeadIdentifier::LeadId(*id)).await;
        emails.push(lead.unwrap().data.user("email").unwrap().to_owned());
    }
    emails.sort();
    let mut expected: Vec<_> = (0..48).map(|n| format!("g{n}@example.com")).collect();
    expected.sort();
    assert_eq!(emails, expected, "each lead holds what was sent");
    let listed = store
        .list_leads(acme.id, &LeadQuery::default())
        .await
        .unwrap();
    assert_eq!(listed.total, 48);

    let row = db
        .query_one(
            "SELECT count(*), count(DISTINCT xmin::text) FROM leads WHERE project_id = $1",
            &[&acme.id.0],
        )
        .await
        .unwrap();
    let (leads, transactions): (i64, i64) = (row.get(0), row.get(1));
    assert_eq!(leads, 48);
    // The lone creates, one transaction of the other group, and at worst the 31 beside the
    // bad one, run alone.
    assert!(
        transactions <= GROUPS as i64 + 31 + 1,
        "the creates that waited together shared transactions: {transactions} for 48 leads"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_counter_gives_a_new_database_the_statistics_of_its_leads() {
    let (store, url) = crate::support::fresh_store().await;
    let db = crate::support::client(&url).await;
    // Only the store may bring the statistics up to date.
    db.batch_execute("ALTER TABLE leads SET (autovacuum_enabled = false)")
        .await
        .unwrap();
    let acme = project(&store, "acme").await;
    for n in 0..20 {
        create(&store, acme.id, n).await.unwrap().unwrap();
    }
    let known = || async {
        let row = db
            .query_one(
                "SELECT reltuples FROM pg_class WHERE oid = 'leads'::regclass",
                &[],
            )
            .await
            .unwrap();
        row.get::<_, f32>(0)
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while known().await <= 0.0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A new table's `reltuples` is -1: never analyzed. Once analyzed, the planner scales
    // what it learned to the table's size as it grows.
    let known = known().await;
    assert!(
        (1.0..=20.0).contains(&known),
        "the planner knows of the leads counted: {known}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_group_gives_up_a_held_lock_and_its_creates_run_alone() {
    let (store, url) = crate::support::fresh_store().await;
    let mut leads_db = crate::support::client(&url).await;
    let mut projects_db = crate::support::client(&url).await;
    let acme = project(&store, "acme").await;
    let event = |n: usize| {
        json!({"userData": {"email": format!("e{n}@example.com")},
            "formData": {"formName": "Contact", "uniqueEventId": "evt-held"}})
    };
    let held = store
        .create_lead(acme.id, data(event(0)), Utc::now())
        .await
        .unwrap()
        .lead_id;

    // The lead a later create merges into stays locked; the project's row only until the
    // creates have piled up, so that they are written in groups, one with the merge.
    let hold_lead = leads_db.transaction().await.unwrap();
    hold_lead
        .execute(
            "SELECT id FROM leads WHERE project_id = $1 AND id = $2 FOR UPDATE",
            &[&acme.id.0, &held.0],
        )
        .await
        .unwrap();
    let watch = crate::support::client(&url).await;
    let hold_project = hold_inserts(&mut projects_db, acme.id).await;
    let mut tasks = take_every_group(&store, acme.id, &watch).await;
    let merging = {
        let store = store.clone();
        tokio::spawn(async move { store.create_lead(acme.id, data(event(1)), Utc::now()).await })
    };
    tasks.extend((GROUPS..28).map(|n| create(&store, acme.id, n)));
    tokio::time::sleep(Duration::from_millis(300)).await;
    hold_project.commit().await.unwrap();

    for task in tasks {
        let stored = tokio::time::timeout(Duration::from_secs(5), task).await;
        let stored = stored.expect("stored while the merged lead is still locked");
        stored.unwrap().unwrap();
    }
    assert!(!merging.is_finished(), "the merge waits for its lead");
    hold_lead.commit().await.unwrap();
    let merged = merging.await.unwrap().unwrap();
    assert_eq!((merged.lead_id, merged.created), (held, false));
    let listed = store
        .list_leads(acme.id, &LeadQuery::default())
        .await
        .unwrap();
    assert_eq!(listed.total, 29);
}

/// A person's later duplicates leave their original, marked by the first, as it is: no new
/// row version, so nothing for a concurrent duplicate to wait on and nothing to vacuum.
#[tokio::test(flavor = "multi_thread")]
async fn an_original_marked_once_is_not_written_again_by_its_later_duplicates() {
    let (store, url) = crate::support::fresh_store().await;
    let db = crate::support::client(&url).await;
    let acme = project(&store, "acme").await;
    let send = |email: &str| {
        let body = data(json!({"userData": {"email": email}}));
        let store = store.clone();
        async move { store.create_lead(acme.id, body, Utc::now()).await.unwrap() }
    };
    let original = send("ada@example.com").await.lead_id;
    // The original's row version, and whether it is marked.
    let version = || async {
        let row = db
            .query_one(
                "SELECT xmin::text, duplicated FROM leads WHERE id = $1",
                &[&original.0],
            )
            .await
            .unwrap();
        (row.get::<_, String>(0), row.get::<_, bool>(1))
    };
    let (unmarked, duplicated) = version().await;
    assert!(!duplicated);

    let first = send("ADA@example.com").await.lead_id;
    let (marked, duplicated) = version().await;
    assert!(duplicated, "the first duplicate marks the original");
    assert_ne!(marked, unmarked, "by writing it");
    let original_of = |lead| {
        let store = store.clone();
        async move {
            let id = LeadIdentifier::LeadId(lead);
            store.find_lead(acme.id, &id).await.unwrap().duplicate_of
        }
    };
    for email in ["ada@example.com", " Ada@Example.com"] {
        let later = send(email).await.lead_id;
        assert_eq!(original_of(later).await, Some(original), "{email}");
        assert_eq!(version().await, (marked.clone(), true), "{email}");
    }
    assert_eq!(original_of(first).await, Some(original));
}
