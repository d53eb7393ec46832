//! The PostgreSQL tests are built with `LEADTRACK_POSTGRES_TESTS=required`
//! (`scripts/with-postgres` sets it, as `.ci/run` uses it), and then fail without a server.
//! Left out, they are said to be, and a cluster given without them is a mistake.

#[test]
fn the_postgres_tests_are_built_when_a_cluster_is_given() {
    if cfg!(leadtrack_postgres) {
        return;
    }
    assert!(
        std::env::var_os("LEADTRACK_POSTGRES_URL").is_none(),
        "LEADTRACK_POSTGRES_URL is set, but the PostgreSQL tests were not built: set LEADTRACK_POSTGRES_TESTS=required too (scripts/with-postgres does)"
    );
    eprintln!(
        "skipped: the PostgreSQL tests; `scripts/with-postgres cargo test --workspace` builds and runs them"
    );
}
