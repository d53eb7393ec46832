//! LinkedIn Lead Gen Forms: the sync that lists the new responses of the ad accounts a
//! project chose, through LinkedIn's lead sync API
//! (<https://learn.microsoft.com/en-us/linkedin/marketing/lead-sync/leadsync>), and
//! queues each for the fetcher, which reads it with its form's questions. A response
//! listed again queues nothing (the queue holds each once per project), so overlapping
//! windows lose nothing and keep nothing twice.

use chrono::{DateTime, Utc};
use leadtrack_core::source::{LeadSource, NewLeadFetch, SourceKind};
use leadtrack_core::{Admin, JobQueue};
use leadtrack_outbound::Outbound;
use leadtrack_platforms::linkedin;
use serde_json::Value;

/// Responses per page of the listing.
const PAGE: usize = 100;

/// Lists the responses submitted since `since` to the Lead Gen Forms of every project's
/// chosen ad accounts, and queues each; how many were new. A project whose listing fails
/// is logged and left for the next sync.
pub(crate) async fn sync<S: Admin + JobQueue>(
    store: &S,
    http: &Outbound,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
) -> usize {
    let projects = match store.projects().await {
        Ok(projects) => projects,
        Err(err) => {
            tracing::warn!(error = %err, "LinkedIn's lead forms could not be synced");
            return 0;
        }
    };
    let mut queued = 0;
    for project in projects {
        let source = store
            .lead_source(project.id, SourceKind::LinkedinLeadGen)
            .await;
        let Ok(Some(LeadSource::LinkedinLeadGen { accounts })) = source else {
            continue;
        };
        match sync_project(store, http, (project.id, &accounts), (since, now)).await {
            Ok(new) => queued += new,
            Err(error) => {
                tracing::warn!(project = %project.public_id, %error, "LinkedIn's lead forms could not be synced; the next sync tries again");
            }
        }
    }
    queued
}

/// One project's sync: each account's responses in the window, page by page.
async fn sync_project<S: Admin + JobQueue>(
    store: &S,
    http: &Outbound,
    (project, accounts): (leadtrack_core::types::ProjectId, &[String]),
    (since, now): (DateTime<Utc>, DateTime<Utc>),
) -> Result<usize, String> {
    let integrations = store
        .integrations(project)
        .await
        .map_err(|err| err.to_string())?;
    let settings = integrations
        .linkedin
        .ok_or("LinkedIn is not connected to the project")?;
    let mut queued = 0;
    for account in accounts {
        let mut start = 0;
        loop {
            let path = format!(
                "leadFormResponses?q=owner&owner=(sponsoredAccount:urn%3Ali%3AsponsoredAccount%3A{account})&leadType=(leadType:SPONSORED)&limitedToTestLeads=false&submittedAtTimeRange=(start:{},end:{})&start={start}&count={PAGE}",
                since.timestamp_millis(),
                now.timestamp_millis()
            );
            let listed = linkedin::read(http, &settings, &path).await?;
            let elements = listed["elements"].as_array().cloned().unwrap_or_default();
            for response in &elements {
                let Some(id) = response["id"].as_str() else {
                    continue;
                };
                let fetch = NewLeadFetch {
                    kind: SourceKind::LinkedinLeadGen,
                    external_id: id.to_owned(),
                    announced: response.clone(),
                };
                let new = store
                    .queue_lead_fetch(project, &fetch, now)
                    .await
                    .map_err(|err| err.to_string())?;
                queued += usize::from(new);
            }
            if elements.len() < PAGE || !more(&listed, start + elements.len()) {
                break;
            }
            start += elements.len();
        }
    }
    Ok(queued)
}

/// Whether the listing's `paging.total` says there is more past `seen`.
fn more(listed: &Value, seen: usize) -> bool {
    match listed["paging"]["total"].as_u64() {
        Some(total) => usize::try_from(total).is_ok_and(|total| total > seen),
        // Without a total, a full page may be followed by another.
        None => true,
    }
}
