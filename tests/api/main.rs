//! End-to-end tests: the real server on a random port, driven by the typed client, and the
//! compiled `server` example run as a user runs it (the API, the admin commands, and
//! signing in to the dashboard).

mod accounts;
mod client;
mod faults;
mod forwarding;
mod helpers;
mod operations;
mod overload;
// Built with `LEADTRACK_POSTGRES_TESTS=required` (`build.rs`), which names a cluster.
#[cfg(leadtrack_postgres)]
mod postgres;
mod process;
mod protection;
mod server_process;
