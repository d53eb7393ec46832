//! The backend conformance suite of `leadtrack-core`, run against PostgreSQL: every check,
//! each on a fresh database of the test cluster.
#![cfg(leadtrack_postgres)]

use async_trait::async_trait;
use leadtrack_core::testkit::Backend;
use leadtrack_postgres::PgStore;
use leadtrack_postgres::testkit::test_key;
use std::sync::Mutex;

/// Stores on fresh databases; `reopen` connects again to the database of the store the
/// check opened (the checks that reopen open one store).
#[derive(Default)]
struct Postgres {
    urls: Mutex<Vec<String>>,
}

#[async_trait]
impl Backend for Postgres {
    type Store = PgStore;

    async fn open(&self) -> PgStore {
        let (store, url) = crate::support::fresh_store().await;
        self.urls.lock().unwrap().push(url);
        store
    }

    async fn reopen(&self, store: PgStore) -> PgStore {
        let url = match self.urls.lock().unwrap().as_slice() {
            [url] => url.clone(),
            urls => panic!("reopen after {} opens: which store?", urls.len()),
        };
        store.close();
        drop(store);
        PgStore::connect_with(&url, &test_key(), crate::support::options())
            .await
            .expect("reconnect")
    }
}

leadtrack_core::conformance_tests!(Postgres::default());
