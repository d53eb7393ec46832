//! A person's data on request (GDPR article 15, CCPA's access requests): every lead of the
//! project the person is named by (as an erasure finds them, [`crate::store::erasure`]),
//! each with its history, comments, conversions (what was sent where, when) and assignee,
//! as one JSON document ([`PersonExport`](crate::privacy::PersonExport)). The API, the
//! command line and the dashboard all build it here, from a store's reads. docs/privacy.md
//! documents the shape.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::api::{EventView, JobView, Lead};
use crate::project::Project;
use crate::store::{LeadStore, StoreResult};
use crate::types::LeadIdentifier;

/// Everything kept about a person in one project.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PersonExport {
    /// When the document was made.
    #[serde(with = "crate::time::rfc3339_millis")]
    pub exported_at: DateTime<Utc>,
    /// The project's public id.
    pub project_id: String,
    /// How the person was named: `{"email": "..."}`, `{"phone": ...}`, `{"leadId": ...}` or
    /// `{"uniqueIdentifier": ...}`.
    pub person: serde_json::Value,
    /// Their leads, oldest first.
    pub leads: Vec<ExportedLead>,
}

/// One lead of the person, with everything of it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportedLead {
    /// The lead as getLead returns it (its assignee included).
    pub lead: Lead,
    /// Its history, oldest first, as getLeadActivity lists it (assignments included).
    pub activity: Vec<EventView>,
    /// The team's comments on it, oldest first.
    pub comments: Vec<ExportedComment>,
    /// Its conversions as getLeadJobs lists them: what was sent to which platform, when,
    /// and what it answered.
    pub conversions: Vec<JobView>,
}

/// A comment, as the export shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportedComment {
    /// When it was written.
    #[serde(with = "crate::time::rfc3339_millis")]
    pub at: DateTime<Utc>,
    /// Who wrote it.
    pub by: String,
    /// What it says.
    pub text: String,
}

/// The export of the person `who` names in `project`, made `now`. A person with no lead
/// left (none, or erased) has an empty `leads`.
pub async fn export<S: LeadStore + ?Sized>(
    store: &S,
    project: &Project,
    who: &LeadIdentifier,
    now: DateTime<Utc>,
) -> StoreResult<PersonExport> {
    let mut leads = Vec::new();
    for id in store.person_leads(project.id, who).await? {
        let stored = store
            .find_lead(project.id, &LeadIdentifier::LeadId(id))
            .await?;
        let events = store.lead_activity(project.id, id).await?;
        let comments = store.comments(project.id, id).await?;
        let jobs = store.lead_jobs(project.id, id).await?;
        leads.push(ExportedLead {
            lead: Lead::from(&stored),
            activity: events.iter().map(EventView::from).collect(),
            comments: comments
                .iter()
                .map(|comment| ExportedComment {
                    at: comment.created_at,
                    by: comment.author.to_string(),
                    text: comment.text.clone(),
                })
                .collect(),
            conversions: jobs.iter().map(JobView::from).collect(),
        });
    }
    Ok(PersonExport {
        exported_at: now,
        project_id: project.public_id.clone(),
        person: named(who),
        leads,
    })
}

/// How `who` names the person, as the export says it.
fn named(who: &LeadIdentifier) -> serde_json::Value {
    match who {
        LeadIdentifier::LeadId(id) => serde_json::json!({"leadId": id}),
        LeadIdentifier::UniqueIdentifier(value) => {
            serde_json::json!({"uniqueIdentifier": value})
        }
        LeadIdentifier::Email(email) => serde_json::json!({"email": email}),
        LeadIdentifier::Phone(phone) => serde_json::json!({"phone": phone}),
    }
}
