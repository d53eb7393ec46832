//! What deleting a lead does, decided once for every backend. A backend finds (and locks)
//! the lead and asks whether it has an unfinished job; [`deletion`] says whether the lead
//! may go and what the project's history records. The backend then removes the lead's rows,
//! children first, and records that.

use crate::activity::ProjectActivity;
use crate::store::{Conflict, StoreError, StoreResult};
use crate::types::LeadId;

/// The project's history entry of deleting `lead`, or the conflict that keeps it: while a
/// job is unfinished a conversion may be on its way, and its deliveries must not lose
/// their lead.
pub fn deletion(lead: LeadId, unfinished_job: bool) -> StoreResult<ProjectActivity> {
    if unfinished_job {
        let conflict = Conflict::JobPending { lead_id: lead };
        return Err(StoreError::Conflict(conflict));
    }
    Ok(ProjectActivity::LeadDeleted { lead_id: lead })
}
