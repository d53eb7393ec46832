//! The retention rule's daily run (docs/privacy.md): every project's leads older than its
//! retention are erased and its old spam deleted (core's `project::Retention`), in small
//! batches, each its own short transaction, so that no run holds the database for long.

use std::future::Future;
use std::time::Duration;

use chrono::{DateTime, Utc};
use leadtrack_core::{Admin, LeadStore};

/// Leads a batch takes at most.
const BATCH: u32 = 200;

/// How often the rule runs.
const EVERY: Duration = Duration::from_secs(24 * 60 * 60);

/// Runs every project's retention rule now and then once a day, until `stop` resolves.
pub(crate) async fn every_day<S: Admin + LeadStore>(store: S, stop: impl Future<Output = ()>) {
    tokio::pin!(stop);
    loop {
        run(&store, Utc::now()).await;
        tokio::select! {
            () = tokio::time::sleep(EVERY) => {}
            () = &mut stop => return,
        }
    }
}

/// Runs every project's rule at `now`, batch after batch until one takes fewer than a
/// batch; a failure is logged and leaves that project for the next run.
async fn run<S: Admin + LeadStore>(store: &S, now: DateTime<Utc>) {
    let projects = match store.projects().await {
        Ok(projects) => projects,
        Err(err) => {
            tracing::warn!(error = %err, "the retention rule could not list the projects");
            return;
        }
    };
    for project in projects {
        let mut taken = 0;
        loop {
            match store.erase_expired(project.id, now, BATCH).await {
                Ok(batch) => {
                    taken += batch;
                    if batch < u64::from(BATCH) {
                        break;
                    }
                }
                Err(err) => {
                    let project = project.public_id.as_str();
                    tracing::warn!(project, error = %err, "the retention rule could not run");
                    break;
                }
            }
        }
        if taken > 0 {
            let project = project.public_id.as_str();
            tracing::info!(
                project,
                leads = taken,
                "the retention rule erased old leads"
            );
        }
    }
}
