//! Which end-to-end suites this build left out. The browser suites are built with
//! `LEADTRACK_BROWSER_TESTS=required`, the PostgreSQL process tests with
//! `LEADTRACK_POSTGRES_TESTS=required` (`build.rs`); `.ci/run` builds and runs them all.

#[test]
fn the_browser_suites_are_built_when_asked_for() {
    if cfg!(leadtrack_browser) {
        return;
    }
    eprintln!(
        "not built: tests/browser.rs and tests/dashboard.rs; LEADTRACK_BROWSER_TESTS=required builds them (bash .ci/run installs the browsers)"
    );
}

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
        "not built: the PostgreSQL process tests; `scripts/with-postgres cargo test --workspace` builds and runs them"
    );
}
