//! The ad platforms' APIs, as leadtrack speaks them: one module per platform with its
//! request and answer rules (endpoints, payload pieces, how an answer is read), its account
//! pickers and its test event; signing in and refreshing tokens with OAuth 2.0 ([`oauth`],
//! [`sign_in`]); the CRMs HubSpot and Pipedrive ([`hubspot`], [`pipedrive`]); the lead readers of Meta's Graph API and LinkedIn's Lead Sync; and the
//! hashing rules user data leaves by ([`normalize`]).
//!
//! The delivery worker (`leadtrack-forward`), the dashboard's connection pages and the lead
//! sources all call the platforms through this crate; none of them reaches another's code.
//! Adding a platform is its entry in core's platform table, its module here and its
//! delivery module in `leadtrack-forward` (docs/architecture.md lists the files).

#![forbid(unsafe_code)]

mod api;
pub use api::AdAccount;
pub mod check;
pub mod crm;
pub mod ga4;
pub mod google_ads;
pub mod hubspot;
pub mod linkedin;
pub mod meta;
pub mod microsoft_ads;
pub mod normalize;
pub mod oauth;
pub mod outcome;
pub mod pinterest;
pub mod pipedrive;
pub mod reddit;
pub mod sign_in;
pub mod snapchat;
#[cfg(feature = "testkit")]
pub mod testkit;
pub mod tiktok;
pub mod webhook;

pub use outcome::Outcome;
