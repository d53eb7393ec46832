//! The end-to-end suites that need a browser or a PostgreSQL server are compiled only when
//! asked for, so that a run without them cannot pass by skipping them:
//!
//! - `LEADTRACK_BROWSER_TESTS=required` builds `tests/browser.rs` and `tests/dashboard.rs`
//!   (`cfg(leadtrack_browser)`), which then fail without Chromium, Firefox ESR and their
//!   drivers;
//! - `LEADTRACK_POSTGRES_TESTS=required` (set by `scripts/with-postgres`) builds the
//!   PostgreSQL process tests of `tests/api/postgres.rs` (`cfg(leadtrack_postgres)`).
//!
//! `.ci/run` sets both. `tests/required.rs` says which suites a run left out.

fn main() {
    for (cfg, variable) in [
        ("leadtrack_browser", "LEADTRACK_BROWSER_TESTS"),
        ("leadtrack_postgres", "LEADTRACK_POSTGRES_TESTS"),
    ] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        println!("cargo::rerun-if-env-changed={variable}");
        if std::env::var_os(variable).is_some_and(|value| value == "required") {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
}
