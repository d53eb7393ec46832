//! What connecting a platform does to a project's labels: unless the owner says not to,
//! each label starts sending there what the platform recommends
//! ([`LabelMapping::adding`]), so that a new connection is never silently idle. Labels that
//! already send there, and platforms where only the owner can choose (a Google Ads
//! conversion action, say), are left as they are.
//!
//! [`LabelMapping::adding`]: crate::label::LabelMapping::adding

use crate::label::NewLabel;
use crate::store::{Admin, StoreResult};
use crate::types::{IntegrationKind, ProjectId};

/// Makes every label of `project` send to `platform`, newly connected, as recommended.
/// Returns the names of the labels changed.
pub async fn send_labels_to<S: Admin + ?Sized>(
    store: &S,
    project: ProjectId,
    platform: IntegrationKind,
) -> StoreResult<Vec<String>> {
    let mut changed = Vec::new();
    for label in store.labels(project).await? {
        let Some(mapping) = label.mapping.adding(platform, label.mark_as_done) else {
            continue;
        };
        let new = NewLabel {
            name: label.name.clone(),
            mark_as_done: label.mark_as_done,
            mapping,
        };
        store.update_label(project, label.id, new).await?;
        changed.push(label.name);
    }
    Ok(changed)
}
