//! The PostgreSQL process tests (`tests/it/process/postgres.rs`) are compiled only with
//! `LEADTRACK_POSTGRES_TESTS=required` (`scripts/with-postgres` sets it), as
//! `cfg(leadtrack_postgres)`, and then fail, never skip, without a cluster; `tests/it/required.rs`
//! says when they were left out.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(leadtrack_postgres)");
    println!("cargo::rerun-if-env-changed=LEADTRACK_POSTGRES_TESTS");
    if std::env::var_os("LEADTRACK_POSTGRES_TESTS").is_some_and(|value| value == "required") {
        println!("cargo::rustc-cfg=leadtrack_postgres");
    }
}
