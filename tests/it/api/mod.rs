//! End-to-end tests of the lead API through the typed client, against the real server on a
//! random port. The standalone server's own tests (the binary as a process) are in
//! `leadtrack-server/tests/process`.

mod client;
mod helpers;
