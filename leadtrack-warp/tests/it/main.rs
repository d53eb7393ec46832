//! The lead API's integration tests in one binary: the HTTP contract through `warp::test`
//! (`routes`), its hardening, and the filter mounted in a host app.

mod hardening;
mod host_app;
mod routes;
