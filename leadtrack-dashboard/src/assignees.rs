//! Who leads can go to, and how a page names a lead's assignee. A leaf: the lead page, the
//! inbox and the assign action use it.

use leadtrack_core::account;
use leadtrack_core::assignment::Assignee;
use leadtrack_core::types::{ProjectId, UserId};
use leadtrack_core::{Store, StoreError};

/// The members of the project who may take leads, in the team's order: what an assignee
/// picker offers.
pub(crate) async fn takers<S: Store>(
    store: &S,
    project: ProjectId,
) -> Result<Vec<Assignee>, StoreError> {
    Ok(account::takers(store.members(project).await?))
}

/// How a page names a lead's assignee: their name (empty for nobody), and whether it is
/// `viewer`.
pub(crate) fn shown(assignee: Option<&Assignee>, viewer: UserId) -> (String, bool) {
    match assignee {
        Some(assignee) => (assignee.name.clone(), assignee.id == viewer),
        None => (String::new(), false),
    }
}
