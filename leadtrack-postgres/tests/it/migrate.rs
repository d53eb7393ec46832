//! Ten processes starting at once on an empty database migrate it once: the migrations run
//! under an advisory lock, and those that waited find nothing left to do.
#![cfg(leadtrack_postgres)]

use futures_util::future::join_all;
use leadtrack_core::LeadStore;
use leadtrack_postgres::PgStore;
use leadtrack_postgres::testkit::{URL_VARIABLE, fresh_database, test_key};

#[tokio::test(flavor = "multi_thread")]
async fn ten_stores_starting_at_once_migrate_once() {
    let cluster = std::env::var(URL_VARIABLE).unwrap();
    let url = fresh_database(&cluster).await;
    let key = test_key();
    let stores =
        join_all((0..10).map(|_| PgStore::connect_with(&url, &key, crate::support::options())))
            .await;
    for store in &stores {
        let store = store.as_ref().expect("every store starts");
        store.ready().await.expect("and finds the schema current");
    }
    let client = crate::support::client(&url).await;
    let version: i32 = client
        .query_one("SELECT version FROM leadtrack_schema", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        usize::try_from(version).unwrap(),
        leadtrack_postgres::testkit::SCHEMA_VERSION
    );
    // One leads table, one trigger: nothing was created twice or half.
    let triggers: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_trigger WHERE tgname = 'leads_count_changed'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(triggers, 1);
}

#[tokio::test]
async fn a_database_newer_than_this_build_is_refused() {
    let (store, url) = crate::support::fresh_store().await;
    store.close();
    let client = crate::support::client(&url).await;
    client
        .batch_execute("UPDATE leadtrack_schema SET version = 99")
        .await
        .unwrap();
    let refused = PgStore::connect(&url, &test_key()).await.unwrap_err();
    assert!(
        refused.to_string().contains("upgrade leadtrack"),
        "{refused}"
    );
}
