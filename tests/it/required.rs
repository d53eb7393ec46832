//! Whether this build left the browser suites out: they are built with
//! `LEADTRACK_BROWSER_TESTS=required` (`build.rs`); `.ci/run` builds and runs them.

#[test]
fn the_browser_suites_are_built_when_asked_for() {
    if cfg!(leadtrack_browser) {
        return;
    }
    eprintln!(
        "not built: tests/it/browser.rs, tests/it/dashboard.rs and tests/it/inbox.rs; LEADTRACK_BROWSER_TESTS=required builds them (bash .ci/run installs the browsers)"
    );
}
