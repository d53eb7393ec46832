//! The PostgreSQL tests need a server: `scripts/postgres-cluster` starts a throwaway one,
//! and `.ci/run` exports its URL as `LEADTRACK_POSTGRES_URL`. With the URL set at build
//! time, the tests that use it are compiled (`cfg(leadtrack_postgres)`); without it they
//! are left out, and `tests/required.rs` fails when `LEADTRACK_POSTGRES_TESTS=required`
//! says they must run.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(leadtrack_postgres)");
    println!("cargo::rerun-if-env-changed=LEADTRACK_POSTGRES_URL");
    if std::env::var_os("LEADTRACK_POSTGRES_URL").is_some_and(|url| !url.is_empty()) {
        println!("cargo::rustc-cfg=leadtrack_postgres");
    }
}
