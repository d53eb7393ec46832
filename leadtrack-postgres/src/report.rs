//! Reports.
use crate::Error;
use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::types::*;

use leadtrack_core::report::{Report, ReportQuery};

pub(crate) async fn report(
    c: &impl GenericClient,
    project: ProjectId,
    query: &ReportQuery,
) -> Result<Report, Error> {
    todo!()
}
