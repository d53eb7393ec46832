//! The standalone server as its users run it: the compiled `leadtrack-server` binary as a
//! process (serving, the admin commands, the worker, signals and restarts), and its app
//! served in-process under load.

mod accounts;
mod binary;
mod crash;
mod crm;
mod faults;
mod forwarding;
mod imports;
mod mail;
mod operations;
mod outbound;
mod overload;
mod privacy;
// Built with `LEADTRACK_POSTGRES_TESTS=required` (`build.rs`), which names a cluster.
#[cfg(leadtrack_postgres)]
mod postgres;
mod protection;
mod secrets;
mod server_process;
mod sources;
