//! The heart of leadtrack: the HTTP contract's types, the domain model, the
//! [`LeadStore`] trait every backend implements, and the pure rules (input validation,
//! matching, warnings, job planning) that every server shell and backend share.
//!
//! This crate does no I/O: no database, no HTTP, no async runtime.
//!
//! ```
//! use leadtrack_core::input::{CreateRoute, NewLead};
//!
//! let body = br#"{"projectId":"prj_demo","userData":{"email":" Ada@Example.com "},"lt_channelflow":"direct"}"#;
//! let lead = NewLead::parse(body, CreateRoute::Browser).unwrap();
//! assert_eq!(lead.project_id.as_deref(), Some("prj_demo"));
//! assert_eq!(lead.data.user("email"), Some("Ada@Example.com"));
//! assert_eq!(lead.data.channel_flow.as_deref(), Some("direct"));
//!
//! let err = NewLead::parse(br#"{"projectId":"prj_demo","userData":{}}"#, CreateRoute::Browser)
//!     .unwrap_err();
//! assert_eq!(err.code.as_str(), "no_lead_data");
//! ```

#![forbid(unsafe_code)]

pub mod api;
pub mod error;
mod fields;
pub mod input;
pub mod lead;
pub mod matching;
pub mod model;
pub mod query;
pub mod rules;
pub mod status;
pub mod store;
#[cfg(feature = "testkit")]
pub mod testkit;
pub mod time;

pub use error::{ErrorCode, FieldError, ValidationError};
pub use lead::{LeadData, StoredLead};
pub use store::{LeadStore, StoreError, StoreResult};
