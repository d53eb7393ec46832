//! The PostgreSQL backend's integration tests in one binary, each on a fresh database of the
//! test cluster (`LEADTRACK_POSTGRES_URL`). Built with `LEADTRACK_POSTGRES_TESTS=required`
//! (`build.rs`); `required` says when a run left them out.

mod accounts;
mod conformance;
mod counts;
mod creates;
mod imports;
mod listen;
mod migrate;
mod required;
mod secrets;
#[cfg(leadtrack_postgres)]
mod support;
