//! Whether this build left the PostgreSQL process tests out: they are built with
//! `LEADTRACK_POSTGRES_TESTS=required` (`build.rs`); `.ci/run` builds and runs them.

#[test]
fn the_postgres_process_tests_are_built_when_a_cluster_is_given() {
    if cfg!(leadtrack_postgres) {
        return;
    }
    assert!(
        std::env::var_os("LEADTRACK_POSTGRES_URL").is_none(),
        "LEADTRACK_POSTGRES_URL is set, but the PostgreSQL process tests were not built: set LEADTRACK_POSTGRES_TESTS=required too (scripts/with-postgres does)"
    );
    eprintln!(
        "not built: the PostgreSQL process tests; `scripts/with-postgres cargo test --workspace` builds them"
    );
}
