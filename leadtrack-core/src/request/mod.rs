//! The request parsers: a raw body or query string in, a validated request or the
//! contract's 400 out. One file per route family.
//!
//! - [`create`]: createLead and createServerSideLead bodies;
//! - [`status`]: updateLeadStatus bodies;
//! - [`query`]: getLeads, getLead and getLeadJobs query strings.

pub mod create;
mod fields;
pub mod query;
pub mod status;

pub use create::{CreateRoute, NewLead};
pub use query::LeadQuery;
pub use status::StatusUpdate;
