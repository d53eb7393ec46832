//! The request parsers: a raw body or query string in, a validated request or the
//! contract's 400 out. One file per route family.
//!
//! - [`create`]: createLead and createServerSideLead bodies;
//! - [`status`]: updateLeadStatus bodies;
//! - [`hook`]: REST hook subscriptions and the sample's event;
//! - [`query`]: getLeads, getLead and getLeadJobs query strings, and the [`Cursor`] of a
//!   listing read in batches.

pub mod create;
mod fields;
pub mod hook;
pub mod query;
pub mod status;

pub use create::{CreateRoute, NewLead};
pub use query::{Cursor, LeadQuery};
pub use status::StatusUpdate;
