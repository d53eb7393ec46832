//! Drafts: the ratings made in the inbox of a project that reviews its ratings before
//! sending them ([`crate::project::Project::review_ratings`]). A draft is kept with the
//! project, one per lead, and shown to its team; nothing of it reaches the API or the
//! platforms (no job, no status, no `409`) until the team sends the drafts, which rates
//! each lead as any rating does. Any rating of a lead, from the API or the dashboard, `open`
//! included, discards its draft: a draft never outlives a decision made elsewhere.

use chrono::{DateTime, Utc};

use crate::account::Actor;
use crate::types::{ConversionId, LeadId};

/// A lead's rating waiting to be reviewed and sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Draft {
    /// The lead.
    pub lead_id: LeadId,
    /// The rating: a label, `lost` or `open`.
    pub conversion_id: ConversionId,
    /// The price, in cents, if one was given.
    pub price: Option<i64>,
    /// Who made it.
    pub by: Actor,
    /// When it was made (or last changed).
    pub at: DateTime<Utc>,
}
