//! Stores on fresh databases of the test cluster (`LEADTRACK_POSTGRES_URL`).

use leadtrack_postgres::testkit::{URL_VARIABLE, fresh_database, test_key};
use leadtrack_postgres::{PgOptions, PgStore};

/// A store on a fresh database, and the database's URL. A cluster that cannot be reached
/// fails the test: it never skips it.
pub(crate) async fn fresh_store() -> (PgStore, String) {
    let cluster = std::env::var(URL_VARIABLE)
        .unwrap_or_else(|_| panic!("{URL_VARIABLE} names the test cluster"));
    let url = fresh_database(&cluster).await;
    let store = PgStore::connect_with(&url, &test_key(), options())
        .await
        .expect("connect to the fresh database");
    (store, url)
}

/// The tests' pool: large enough for the suite's concurrency checks (64 creates at once).
pub(crate) fn options() -> PgOptions {
    PgOptions {
        pool_size: 24,
        ..PgOptions::default()
    }
}

/// A plain client of the database at `url`, for what a test reads or changes behind the
/// store's back; its connection runs on the test's runtime.
pub(crate) async fn client(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect to the test database");
    tokio::spawn(connection);
    client
}
