//! Fresh databases on the test cluster (`LEADTRACK_POSTGRES_URL`), one per store.

#![allow(dead_code)] // each test binary uses part of it

use leadtrack_postgres::{PgOptions, PgStore};
use uuid::Uuid;

/// The URL of the cluster's maintenance database, from `LEADTRACK_POSTGRES_URL`.
pub fn admin_url() -> String {
    std::env::var("LEADTRACK_POSTGRES_URL")
        .expect("LEADTRACK_POSTGRES_URL names the test cluster (scripts/postgres-cluster)")
}

/// `url` with its database replaced by `database`.
pub fn with_database(url: &str, database: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let scheme_end = base.find("://").map_or(0, |at| at + 3);
    let host_end = base[scheme_end..]
        .find('/')
        .map_or(base.len(), |at| scheme_end + at);
    let mut new = format!("{}/{database}", &base[..host_end]);
    if let Some(query) = query {
        new.push('?');
        new.push_str(query);
    }
    new
}

/// Creates an empty database on the cluster and returns its URL. A cluster that cannot be
/// reached fails the test: it never skips it.
pub async fn fresh_database() -> String {
    let admin = admin_url();
    let (client, connection) = tokio_postgres::connect(&admin, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|err| panic!("the test cluster at LEADTRACK_POSTGRES_URL answers: {err}"));
    let driver = tokio::spawn(connection);
    let name = format!("lt_{}", Uuid::new_v4().simple());
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .expect("create a test database");
    drop(client);
    let _ = driver.await;
    with_database(&admin, &name)
}

/// A store on a fresh database.
pub async fn fresh_store() -> (PgStore, String) {
    let url = fresh_database().await;
    let store = PgStore::connect_with(&url, options())
        .await
        .expect("connect to the fresh database");
    (store, url)
}

/// The tests' pool: large enough for the suite's concurrency checks (64 creates at once).
pub fn options() -> PgOptions {
    PgOptions {
        pool_size: 24,
        ..PgOptions::default()
    }
}

#[test]
fn urls_get_another_database() {
    assert_eq!(
        with_database("postgres://postgres@127.0.0.1:5432/postgres", "lt_x"),
        "postgres://postgres@127.0.0.1:5432/lt_x"
    );
    assert_eq!(
        with_database("postgresql://u:p@h/db?sslmode=disable", "lt_x"),
        "postgresql://u:p@h/lt_x?sslmode=disable"
    );
    assert_eq!(with_database("postgres://h", "lt_x"), "postgres://h/lt_x");
}
