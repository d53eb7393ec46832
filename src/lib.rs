//! The facade over the leadtrack crates: capture leads from web forms and backends, rate them
//! later, and forward the ratings as offline conversions to the ad platforms.
//!
//! This facade re-exports the workspace crates under one name:
//!
//! - [`core`]: the types, records and rules, the HTTP contract's wire types and request
//!   parsers, and the store traits ([`core::LeadStore`], [`core::Admin`],
//!   [`core::JobQueue`], [`core::Accounts`]);
//! - [`sqlite`]: the embedded SQLite store, the default backend;
//! - [`warp`]: the lead routes as one mountable warp filter;
//! - [`dashboard`]: the team's web pages (inbox, reports, settings) as one mountable warp filter;
//! - [`sources`]: the webhooks the ad platforms' own lead forms post to, as one mountable
//!   warp filter;
//! - [`client`]: a typed HTTP client for the same contract;
//! - [`outbound`]: the HTTP client every address the server calls goes through, under
//!   core's rule for outbound addresses ([`core::target`]);
//! - [`platforms`]: the ad platforms' API clients (sign-in, pickers, test events, lead
//!   readers);
//! - [`forward`]: the worker that delivers rated leads to Google Ads, GA4, Meta, Microsoft
//!   Advertising, LinkedIn and webhooks.

#![forbid(unsafe_code)]

pub use leadtrack_client as client;
pub use leadtrack_core as core;
pub use leadtrack_dashboard as dashboard;
pub use leadtrack_forward as forward;
pub use leadtrack_outbound as outbound;
pub use leadtrack_platforms as platforms;
pub use leadtrack_sources as sources;
pub use leadtrack_sqlite as sqlite;
pub use leadtrack_warp as warp;
