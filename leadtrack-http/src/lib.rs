//! The HTTP pieces both of leadtrack's web crates use (the lead API, `leadtrack-warp`, and
//! the dashboard, `leadtrack-dashboard`): route tables, the client's address, bodies read
//! once within a limit, JSON and the contract's error answers, static assets with entity tags and
//! precompression, and the counters both record.

#![forbid(unsafe_code)]

mod asset;
mod body;
pub mod metrics;
mod peer;
mod reply;
mod request;
mod router;

pub use asset::{StaticAsset, serve};
pub use body::{Body, BodyError, body};
pub use peer::{PeerAddr, client_ip, client_network, remote};
pub use reply::{error, error_body, json};
pub use request::{Request, claimed, query_param};
pub use router::{Found, Params, Router, Row};
