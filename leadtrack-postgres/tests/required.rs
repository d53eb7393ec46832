//! With `LEADTRACK_POSTGRES_TESTS=required` (as `.ci/run` sets), the PostgreSQL tests must
//! have been compiled in, which needs `LEADTRACK_POSTGRES_URL` at build time: a missing
//! cluster fails the run instead of skipping its tests.

#[test]
fn the_postgres_tests_run_when_required() {
    let required = std::env::var("LEADTRACK_POSTGRES_TESTS").is_ok_and(|v| v == "required");
    if cfg!(leadtrack_postgres) {
        return;
    }
    assert!(
        !required,
        "LEADTRACK_POSTGRES_TESTS=required, but LEADTRACK_POSTGRES_URL was not set when the tests were built (start a cluster with scripts/postgres-cluster)"
    );
    eprintln!(
        "skipped: the PostgreSQL tests (set LEADTRACK_POSTGRES_URL to a cluster from scripts/postgres-cluster; LEADTRACK_POSTGRES_TESTS=required fails instead)"
    );
}
