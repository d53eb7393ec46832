//! Behaviour of the SQLite store beyond the conformance suite: group commit, opening bad
//! files, closing.

use chrono::Utc;
use futures_util::future::join_all;
use leadtrack_core::key::{KeyHash, KeyRef};
use leadtrack_core::project::{NewProject, Project};
use leadtrack_core::store::Entity;
use leadtrack_core::testkit::data;
use leadtrack_core::{Admin, LeadStore, StoreError};
use leadtrack_sqlite::{SqliteOptions, SqliteStore, Synchronous};
use serde_json::json;

async fn store_with_project(options: SqliteOptions) -> (tempfile::TempDir, SqliteStore, Project) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open_with(dir.path().join("db"), options)
        .await
        .unwrap();
    let project = store
        .create_project(
            NewProject {
                public_id: Some("p".into()),
                name: "P".into(),
                currency: None,
            },
            Utc::now(),
        )
        .await
        .unwrap();
    (dir, store, project)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn waiting_writes_are_committed_together() {
    let (_dir, store, project) = store_with_project(SqliteOptions::default()).await;
    let before = store.write_stats();
    let results = join_all((0..500).map(|i| {
        let store = store.clone();
        async move {
            store
                .create_lead(
                    project.id,
                    data(json!({"userData": {"email": format!("u{i}@x.io")}})),
                    Utc::now(),
                )
                .await
        }
    }))
    .await;
    assert!(results.iter().all(Result::is_ok));
    let after = store.write_stats();
    let writes = after.writes - before.writes;
    let transactions = after.transactions - before.transactions;
    assert_eq!(writes, 500);
    assert!(
        transactions < writes,
        "500 concurrent writes took {transactions} transactions: no group commit"
    );
    let syncs = after.syncs - before.syncs;
    assert!(
        (1..=transactions).contains(&syncs),
        "every acknowledged write was fsynced first: {syncs} fsyncs for {transactions} commits"
    );
}

/// With `Synchronous::Full` every acknowledged write was made durable by an fsync before it
/// was acknowledged, one fsync at a time: after each of a series of writes, the store has
/// fsynced at least once more. `Synchronous::Normal` never fsyncs.
#[tokio::test]
async fn full_durability_acknowledges_a_write_only_after_an_fsync() {
    for (synchronous, fsyncs) in [(Synchronous::Full, true), (Synchronous::Normal, false)] {
        let options = SqliteOptions {
            synchronous,
            ..SqliteOptions::default()
        };
        let (_dir, store, project) = store_with_project(options).await;
        for i in 0..20 {
            let before = store.write_stats().syncs;
            let body = json!({"userData": {"email": format!("s{i}@x.io")}});
            store
                .create_lead(project.id, data(body), Utc::now())
                .await
                .unwrap();
            let after = store.write_stats().syncs;
            assert_eq!(after > before, fsyncs, "{synchronous:?}, write {i}");
        }
        store.close().await;
        let reopened = SqliteStore::open(store.path()).await.unwrap();
        let leads = reopened
            .list_leads(project.id, &Default::default())
            .await
            .unwrap();
        assert_eq!(leads.total, 20);
    }
}

#[tokio::test]
async fn a_failing_write_does_not_undo_the_others_in_its_batch() {
    let (_dir, store, project) = store_with_project(SqliteOptions {
        synchronous: Synchronous::Normal,
        ..SqliteOptions::default()
    })
    .await;
    let attempts = join_all((0..40).map(|i| {
        let store = store.clone();
        async move {
            if i % 2 == 0 {
                store
                    .create_project(
                        NewProject {
                            public_id: Some("p".into()),
                            name: "dup".into(),
                            currency: None,
                        },
                        Utc::now(),
                    )
                    .await
                    .map(|_| ())
            } else {
                store
                    .create_lead(
                        project.id,
                        data(json!({"userData": {"email": "a@x.io"}})),
                        Utc::now(),
                    )
                    .await
                    .map(|_| ())
            }
        }
    }))
    .await;
    for (i, result) in attempts.iter().enumerate() {
        assert_eq!(result.is_ok(), i % 2 == 1, "write {i}: {result:?}");
    }
    let page = store
        .list_leads(project.id, &Default::default())
        .await
        .unwrap();
    assert_eq!(page.total, 20);
    assert_eq!(store.projects().await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_file_that_is_not_a_database_is_refused_with_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("garbage.db");
    std::fs::write(&path, vec![0x5a; 8192]).unwrap();
    let err = SqliteStore::open(&path).await.unwrap_err();
    assert!(err.to_string().contains("not a database"), "{err}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        vec![0x5a; 8192],
        "the file is untouched"
    );
}

#[tokio::test]
async fn a_missing_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = SqliteStore::open(dir.path().join("no/such/dir/db"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Backend(_)), "{err}");
}

#[tokio::test]
async fn a_closed_store_is_unavailable() {
    let (_dir, store, project) = store_with_project(SqliteOptions::default()).await;
    let clone = store.clone();
    store.close().await;
    let err = clone.projects().await.unwrap_err();
    assert!(matches!(err, StoreError::Unavailable(_)), "{err}");
    let err = clone
        .create_lead(
            project.id,
            data(json!({"userData": {"email": "a@x.io"}})),
            Utc::now(),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Unavailable(_)), "{err}");
}

#[tokio::test]
async fn two_stores_on_one_file_see_each_others_writes() {
    // The admin commands open the database of a running server this way.
    let (dir, server, project) = store_with_project(SqliteOptions::default()).await;
    let admin = SqliteStore::open(dir.path().join("db")).await.unwrap();
    let key = admin.issue_api_key(project.id, Utc::now()).await.unwrap();
    let hash = KeyHash::of(&key.key);
    assert_eq!(server.authenticate(&hash).await.unwrap().id, project.id);
    admin
        .revoke_api_key(project.id, &KeyRef::parse(&key.key), Utc::now())
        .await
        .unwrap();
    assert!(
        matches!(
            server.authenticate(&hash).await,
            Err(StoreError::NotFound(Entity::ApiKey))
        ),
        "revocation is immediate"
    );
    admin.close().await;
}

#[tokio::test]
async fn a_database_removed_under_the_store_refuses_writes_instead_of_losing_them() {
    let (dir, store, project) = store_with_project(SqliteOptions::default()).await;
    store
        .create_lead(
            project.id,
            data(json!({"userData": {"email": "a@x.io"}})),
            Utc::now(),
        )
        .await
        .unwrap();
    for name in ["db", "db-wal", "db-shm"] {
        let _ = std::fs::remove_file(dir.path().join(name));
    }
    let err = store
        .create_lead(
            project.id,
            data(json!({"userData": {"email": "b@x.io"}})),
            Utc::now(),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Unavailable(_)), "{err}");
    store.close().await;
    // Restarting would not quietly make a new, empty database if the log had survived.
    std::fs::write(dir.path().join("db-wal"), b"").unwrap();
    let refused = SqliteStore::open(dir.path().join("db")).await.unwrap_err();
    assert!(matches!(refused, StoreError::Invalid(_)), "{refused}");
}

/// Leads the words' index has not reached (thousands, as an upgraded database's) are
/// indexed and counted by the writer on its own, batch after batch, while no write comes;
/// and are found and counted meanwhile.
#[tokio::test]
async fn the_words_index_catches_up_on_its_own_while_no_write_comes() {
    let (dir, store, project) = store_with_project(SqliteOptions::default()).await;
    let created = join_all((0..5_000).map(|i| {
        let store = store.clone();
        async move {
            let body = json!({"userData": {"lastName": format!("Lovelace{i:04}")}});
            store.create_lead(project.id, data(body), Utc::now()).await
        }
    }))
    .await;
    assert!(created.iter().all(Result::is_ok));
    store.close().await;
    // The index and the kept counts forgotten, as the upgrade that made the index leaves
    // them (migration 51 counts up to the index's mark).
    let path = dir.path().join("db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "INSERT INTO lead_words (lead_words) VALUES ('delete-all');
         UPDATE lead_words_state SET indexed_to = 0;
         DELETE FROM lead_status_counts;
         DELETE FROM lead_hour_counts;
         DELETE FROM lead_facet_counts;
         DELETE FROM lead_report_counts;",
    )
    .unwrap();
    drop(conn);

    let store = SqliteStore::open(&path).await.unwrap();
    let query = leadtrack_core::request::LeadQuery {
        q: vec!["lovelace4999".to_owned()],
        ..leadtrack_core::request::LeadQuery::default()
    };
    assert_eq!(store.list_leads(project.id, &query).await.unwrap().total, 1);
    let open = leadtrack_core::request::LeadQuery {
        status: Some(vec![leadtrack_core::types::LeadStatus::Open]),
        ..leadtrack_core::request::LeadQuery::default()
    };
    assert_eq!(
        store.list_leads(project.id, &open).await.unwrap().total,
        5_000
    );
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while store.words_behind().await.unwrap() > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the index stopped behind"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(store.check_derived().await.unwrap(), Vec::<String>::new());
    assert_eq!(store.list_leads(project.id, &query).await.unwrap().total, 1);
    assert_eq!(
        store.list_leads(project.id, &open).await.unwrap().total,
        5_000
    );
}

/// The report's kept counts (migration 56) follow the changes of leads already counted,
/// by trigger: a rating, a new price, spam, a deletion; after each they match a recount,
/// and the report counts what the leads are now.
#[tokio::test]
async fn the_reports_kept_counts_follow_changes_of_counted_leads() {
    use leadtrack_core::Spending;
    use leadtrack_core::account::Actor;
    use leadtrack_core::activity::Attribution;
    use leadtrack_core::label::{LabelMapping, NewLabel};
    use leadtrack_core::request::StatusUpdate;
    use leadtrack_core::roas::{RoasGrouping, RoasQuery};
    use leadtrack_core::types::{ConversionId, LeadIdentifier};

    let (_dir, store, project) = store_with_project(SqliteOptions::default()).await;
    let attributions = [
        json!({"utm_source": "google", "utm_campaign": "Brand", "utm_id": "555"}),
        json!({"gclid": "Cj0-only"}),
        json!({"leadSource": "meta-lead-ads", "metaCampaignId": "777"}),
        json!({"utm_source": "newsletter", "utm_campaign": "May"}),
    ];
    let mut leads = Vec::new();
    for n in 0..12 {
        let body = json!({"userData": {"email": format!("r{n}@x.io")},
                          "attributionData": attributions[n % 4]});
        let created = store.create_lead(project.id, data(body), Utc::now()).await;
        leads.push(created.unwrap().lead_id);
    }
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while store.words_behind().await.unwrap() > 0 {
        assert!(tokio::time::Instant::now() < deadline, "not counted");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let won = NewLabel {
        name: "Won".to_owned(),
        mark_as_done: true,
        mapping: LabelMapping::default(),
    };
    let won = store
        .create_label(project.id, won, Utc::now())
        .await
        .unwrap()
        .id;
    let actor = Actor::api_key("lt_kept");
    let rate = |lead, price| StatusUpdate {
        identifier: LeadIdentifier::LeadId(lead),
        conversion_id: ConversionId::Label(won),
        price: Some(price),
        note: None,
    };
    let today = Utc::now().date_naive();
    let query = RoasQuery {
        from: today,
        to: today,
        touch: leadtrack_core::report::Touchpoint::First,
        by: RoasGrouping::Source,
    };
    let totals = |report: leadtrack_core::roas::RoasReport| {
        let t = report.totals;
        (t.leads, t.customers, t.value)
    };
    for (lead, price) in [(leads[0], 12_000), (leads[2], 30_000)] {
        store
            .update_status(project.id, &rate(lead, price), &actor, Utc::now())
            .await
            .unwrap();
        assert_eq!(store.check_derived().await.unwrap(), Vec::<String>::new());
    }
    assert_eq!(
        totals(store.roas(project.id, &query).await.unwrap()),
        (12, 2, 420.0)
    );
    store
        .mark_spam(project.id, &leads[3..4], &actor, Utc::now())
        .await
        .unwrap();
    let by = Attribution {
        actor: actor.clone(),
        address: None,
    };
    store
        .delete_lead(project.id, leads[5], &by, Utc::now())
        .await
        .unwrap();
    assert_eq!(store.check_derived().await.unwrap(), Vec::<String>::new());
    let report = store.roas(project.id, &query).await.unwrap();
    let sources: Vec<_> = report
        .rows
        .iter()
        .map(|r| (r.source.as_deref(), r.leads, r.value))
        .collect();
    assert_eq!(
        sources,
        [
            (Some("google"), 5, 120.0),
            (Some("meta"), 3, 300.0),
            (Some("newsletter"), 2, 0.0),
        ]
    );
    assert_eq!(totals(report), (10, 2, 420.0));
}
