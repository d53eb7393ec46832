//! The facade's end-to-end tests in one binary: the lead API through the typed client
//! against a real server (`api`), and the capture script and the dashboard in real
//! browsers (`browser`, `dashboard`, `inbox`; built with `LEADTRACK_BROWSER_TESTS=required`,
//! see `build.rs`, and `required` says when a run left them out).

mod api;
#[cfg(leadtrack_browser)]
mod browser;
#[cfg(leadtrack_browser)]
mod dashboard;
#[cfg(leadtrack_browser)]
mod inbox;
mod layering;
mod required;
#[cfg(leadtrack_browser)]
mod support;
