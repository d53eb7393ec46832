//! Jobs.
use crate::Error;
use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::types::*;

use chrono::Duration;
use leadtrack_core::account::Actor;
use leadtrack_core::job::{Attempt, ClaimedJob, JobRecord, QueueDepths, StatusChange};
use leadtrack_core::request::StatusUpdate;
use uuid::Uuid;

pub(crate) async fn update_status(
    c: &impl GenericClient,
    project: ProjectId,
    update: &StatusUpdate,
    by: &Actor,
    now: DateTime<Utc>,
) -> Result<StatusChange, Error> {
    todo!()
}
pub(crate) async fn lead_jobs(
    c: &impl GenericClient,
    project: ProjectId,
    lead: LeadId,
) -> Result<Vec<JobRecord>, Error> {
    todo!()
}
pub(crate) async fn claim(
    c: &impl GenericClient,
    now: DateTime<Utc>,
    lease_for: Duration,
) -> Result<Option<ClaimedJob>, Error> {
    todo!()
}
pub(crate) async fn queue_depth(
    c: &impl GenericClient,
    now: DateTime<Utc>,
) -> Result<QueueDepths, Error> {
    todo!()
}
pub(crate) async fn record_attempt(
    c: &impl GenericClient,
    job: JobId,
    lease: Uuid,
    attempt: &Attempt,
) -> Result<(), Error> {
    todo!()
}
pub(crate) async fn reschedule(
    c: &impl GenericClient,
    job: JobId,
    lease: Uuid,
    due_at: DateTime<Utc>,
) -> Result<(), Error> {
    todo!()
}
pub(crate) async fn finish(
    c: &impl GenericClient,
    job: JobId,
    lease: Uuid,
    now: DateTime<Utc>,
) -> Result<LeadStatus, Error> {
    todo!()
}
