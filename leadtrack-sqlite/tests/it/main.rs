//! The SQLite backend's integration tests in one binary: the conformance suite, the store's
//! own behaviour on files, secrets at rest, and overload.

mod accounts;
mod conformance;
mod erasure;
mod overload;
mod secrets;
mod store;
