//! The PostgreSQL tests need a server. `scripts/with-postgres cargo test --workspace` starts
//! a throwaway one, exports its URL as `LEADTRACK_POSTGRES_URL`, and sets
//! `LEADTRACK_POSTGRES_TESTS=required`, which compiles the tests that use it
//! (`cfg(leadtrack_postgres)`). They then fail, never skip, without a server. Without the
//! variable they are left out, and `tests/it/required.rs` says so.
//!
//! The cfg follows `LEADTRACK_POSTGRES_TESTS`, not the URL, whose port changes with every
//! cluster and would rebuild the crate each time.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(leadtrack_postgres)");
    println!("cargo::rerun-if-env-changed=LEADTRACK_POSTGRES_TESTS");
    if std::env::var_os("LEADTRACK_POSTGRES_TESTS").is_some_and(|value| value == "required") {
        println!("cargo::rustc-cfg=leadtrack_postgres");
    }
}
