//! The end-to-end suites that need a browser, `tests/it/browser.rs`, `tests/it/dashboard.rs`
//! and `tests/it/inbox.rs`, are compiled only with `LEADTRACK_BROWSER_TESTS=required`
//! (`cfg(leadtrack_browser)`), so that a run without browsers cannot pass by skipping
//! them; built, they fail without Chromium, Firefox ESR and their drivers. `.ci/run` sets
//! it; `tests/it/required.rs` says when a run left them out.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(leadtrack_browser)");
    println!("cargo::rerun-if-env-changed=LEADTRACK_BROWSER_TESTS");
    if std::env::var_os("LEADTRACK_BROWSER_TESTS").is_some_and(|value| value == "required") {
        println!("cargo::rustc-cfg=leadtrack_browser");
    }
}
