//! getLeads.
use crate::Error;
use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::types::*;

use leadtrack_core::lead::{LeadPage, StoredLead};
use leadtrack_core::request::{Cursor, LeadQuery};

pub(crate) async fn list(
    c: &impl GenericClient,
    project: ProjectId,
    query: &LeadQuery,
) -> Result<LeadPage, Error> {
    todo!()
}
pub(crate) async fn status_counts(
    c: &impl GenericClient,
    project: ProjectId,
    query: &LeadQuery,
) -> Result<Vec<(LeadStatus, u64)>, Error> {
    todo!()
}
pub(crate) async fn export(
    c: &impl GenericClient,
    project: ProjectId,
    query: &LeadQuery,
    after: Option<&Cursor>,
    limit: u32,
) -> Result<Vec<StoredLead>, Error> {
    todo!()
}
