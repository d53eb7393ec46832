//! Fresh databases on a test cluster, for the tests of this crate and of the server
//! (feature `testkit`). `scripts/postgres-cluster` starts a throwaway cluster and prints
//! its URL, which the tests read from `LEADTRACK_POSTGRES_URL`.

use uuid::Uuid;

/// The schema version this build migrates a database to: its number of migrations.
pub const SCHEMA_VERSION: usize = crate::schema::MIGRATIONS.len();

/// The key the tests' stores seal secrets with: one for all, so that any store may open a
/// database another made.
pub fn test_key() -> leadtrack_core::vault::SecretKey {
    leadtrack_core::vault::SecretKey::from_bytes(*b"the key of leadtrack's test runs")
}

/// The variable naming the test cluster's maintenance database.
pub const URL_VARIABLE: &str = "LEADTRACK_POSTGRES_URL";

/// The test cluster's URL, if `LEADTRACK_POSTGRES_URL` is set. When it is not and
/// `LEADTRACK_POSTGRES_TESTS=required` (as in CI), panics: a missing cluster fails a test
/// run rather than skipping its tests. Otherwise says on stderr that `test` is skipped.
pub fn cluster_url(test: &str) -> Option<String> {
    match std::env::var(URL_VARIABLE) {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            let required =
                std::env::var("LEADTRACK_POSTGRES_TESTS").is_ok_and(|value| value == "required");
            assert!(
                !required,
                "{test}: LEADTRACK_POSTGRES_TESTS=required, but {URL_VARIABLE} is not set (start a cluster with scripts/postgres-cluster)"
            );
            eprintln!(
                "skipped {test}: set {URL_VARIABLE} to a cluster from scripts/postgres-cluster"
            );
            None
        }
    }
}

/// The variable that runs the HTTP contract's suites (the route tests, the end-to-end API
/// tests) on PostgreSQL: `LEADTRACK_TEST_BACKEND=postgres`. Unset, they run on SQLite.
pub const BACKEND_VARIABLE: &str = "LEADTRACK_TEST_BACKEND";

/// A fresh database's URL when the contract's suites run on PostgreSQL
/// ([`BACKEND_VARIABLE`]), `None` when they run on SQLite.
///
/// # Panics
///
/// When PostgreSQL is asked for but `LEADTRACK_POSTGRES_URL` is not set, or the cluster
/// cannot be reached: the suite never quietly runs on the other backend.
pub async fn contract_database() -> Option<String> {
    match std::env::var(BACKEND_VARIABLE).as_deref() {
        Ok("postgres") => {
            let cluster = std::env::var(URL_VARIABLE).unwrap_or_else(|_| {
                panic!("{BACKEND_VARIABLE}=postgres needs {URL_VARIABLE} (scripts/with-postgres)")
            });
            Some(fresh_database(&cluster).await)
        }
        Ok("sqlite") | Err(_) => None,
        Ok(other) => panic!("{BACKEND_VARIABLE}={other}: say postgres or sqlite"),
    }
}

/// `url` with its database replaced by `database`.
pub fn with_database(url: &str, database: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let host_start = base.find("://").map_or(0, |at| at + 3);
    let host_end = base[host_start..]
        .find('/')
        .map_or(base.len(), |at| host_start + at);
    let mut new = format!("{}/{database}", &base[..host_end]);
    if let Some(query) = query {
        new.push('?');
        new.push_str(query);
    }
    new
}

/// Creates an empty database on the cluster at `cluster` and returns its URL.
///
/// # Panics
///
/// When the cluster cannot be reached or refuses: a test never skips for that.
pub async fn fresh_database(cluster: &str) -> String {
    let (client, connection) = tokio_postgres::connect(cluster, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|err| panic!("the test cluster at {URL_VARIABLE} answers: {err}"));
    let driver = tokio::spawn(connection);
    let name = format!("lt_{}", Uuid::new_v4().simple());
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap_or_else(|err| panic!("the test cluster creates a database: {err}"));
    drop(client);
    let _ = driver.await;
    with_database(cluster, &name)
}

#[cfg(test)]
mod tests {
    use super::with_database;

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
}
