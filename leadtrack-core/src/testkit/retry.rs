//! Failed deliveries tried again: a lead's, or an integration's since a time, as one job
//! per lead with the same conversion, and never beside an unfinished job.

use serde_json::json;

use super::{
    Backend, at, by, create, deliver_all, project, settle_all, update, webhook, webhook_label,
};
use crate::activity::Activity;
use crate::integration::IntegrationSettings;
use crate::job::RetryTarget;
use crate::project::Project;
use crate::store::{Admin, JobQueue, LeadStore};
use crate::types::{
    AttemptOutcome, ConversionId, DeliveryAction, DeliveryState, IntegrationKind, LeadId,
    LeadStatus,
};

/// Project `p1` with the webhook connected, and a label that sends to it.
async fn hooked_project<S: Admin>(store: &S) -> (Project, ConversionId) {
    let project = project(store, "p1").await;
    let hook = IntegrationSettings::Webhook(webhook());
    store
        .set_integration(project.id, hook, at(0))
        .await
        .unwrap();
    let customer = ConversionId::Label(webhook_label(store, &project).await);
    (project, customer)
}

/// A lead created and rated `conversion` at minute `minute`, its job queued.
async fn rated_lead<S: LeadStore>(
    store: &S,
    project: &Project,
    conversion: ConversionId,
    minute: i64,
) -> LeadId {
    let body = json!({"userData": {"email": format!("{minute}@x.io")}});
    let lead = create(store, project, body, minute).await.lead_id;
    let rating = update(lead, conversion);
    store
        .update_status(project.id, &rating, &by(), at(minute))
        .await
        .unwrap();
    lead
}

/// A rated lead whose webhook delivery failed for good at minute `minute`.
async fn failed_lead<S: LeadStore + JobQueue>(
    store: &S,
    project: &Project,
    conversion: ConversionId,
    minute: i64,
) -> LeadId {
    let lead = rated_lead(store, project, conversion, minute).await;
    settle_all(store, minute, AttemptOutcome::Failed).await;
    lead
}

/// A lead's failed deliveries go again in a job of the same conversion: the lead is
/// pending until it ends, its history says so, and no second retry joins the first.
/// An integration's failures since a time go again for each lead whose newest job has one.
pub async fn failed_deliveries_are_retried_as_the_same_conversion<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let (project, customer) = hooked_project(&store).await;
    let early = failed_lead(&store, &project, customer, 1).await;
    let late = failed_lead(&store, &project, ConversionId::Lost, 10).await;
    assert_eq!(
        store
            .find_lead(project.id, &crate::types::LeadIdentifier::LeadId(early))
            .await
            .unwrap()
            .status,
        LeadStatus::Rated
    );

    let queued = store
        .retry_failed(project.id, RetryTarget::Lead(early), &by(), at(20))
        .await
        .unwrap();
    assert_eq!(queued.len(), 1);
    let jobs = store.lead_jobs(project.id, early).await.unwrap();
    let (retry, failed) = (&jobs[0], &jobs[1]);
    assert_eq!(Some(retry.job.id), queued.first().copied());
    assert_ne!(retry.job.event_id, failed.job.event_id, "a job of its own");
    assert_eq!(
        (
            retry.job.conversion_event_id,
            retry.job.converted_at,
            retry.job.price
        ),
        (failed.job.conversion_event_id, at(1), failed.job.price)
    );
    let plan: Vec<_> = retry
        .deliveries
        .iter()
        .map(|(d, _)| (d.integration, d.action, d.state))
        .collect();
    assert_eq!(
        plan,
        [(
            IntegrationKind::Webhook,
            DeliveryAction::Send,
            DeliveryState::Pending
        )]
    );
    let history = store.lead_activity(project.id, early).await.unwrap();
    assert_eq!(
        history.last().unwrap().activity,
        Activity::Retried {
            job_id: retry.job.id
        }
    );
    let again = store
        .retry_failed(project.id, RetryTarget::Lead(early), &by(), at(21))
        .await
        .unwrap();
    assert!(again.is_empty(), "not beside an unfinished job");
    deliver_all(&store, 22).await;

    let since = |minute| RetryTarget::Integration {
        kind: IntegrationKind::Webhook,
        since: at(minute),
    };
    let queued = store
        .retry_failed(project.id, since(5), &by(), at(30))
        .await
        .unwrap();
    assert_eq!(
        queued.len(),
        1,
        "only the lost lead's failure is that recent"
    );
    let jobs = store.lead_jobs(project.id, late).await.unwrap();
    assert_eq!(Some(jobs[0].job.id), queued.first().copied());
    assert_eq!(jobs[0].job.conversion_id, ConversionId::Lost);
    let other = project_two(&store).await;
    let elsewhere = store
        .retry_failed(other.id, since(0), &by(), at(31))
        .await
        .unwrap();
    assert!(
        elsewhere.is_empty(),
        "another project's failures are its own"
    );
}

async fn project_two<S: Admin>(store: &S) -> Project {
    project(store, "p2").await
}

/// The deliveries of leads' last conversions that failed, for good or until their next
/// attempt, are listed by lead and for the project, the newest first, until a retry or a
/// new rating replaces them; delivered ones and other projects' never are.
pub async fn troubled_deliveries_are_listed_until_a_new_job_replaces_them<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let (project, customer) = hooked_project(&store).await;
    let failed = failed_lead(&store, &project, customer, 1).await;
    let retrying = rated_lead(&store, &project, customer, 2).await;
    let claimed = store
        .claim_job(at(2), chrono::Duration::minutes(5))
        .await
        .unwrap()
        .expect("a due job");
    let attempt = crate::job::Attempt {
        integration: IntegrationKind::Webhook,
        at: at(2),
        outcome: AttemptOutcome::Retry,
        http_status: Some(503),
        error: Some("HTTP 503: unavailable".to_owned()),
        retry_at: Some(at(4)),
        batch: None,
    };
    let lease = claimed.lease.token;
    store
        .record_attempt(claimed.job.id, lease, &attempt)
        .await
        .unwrap();
    store
        .reschedule_job(claimed.job.id, lease, at(4))
        .await
        .unwrap();
    let delivered = rated_lead(&store, &project, customer, 3).await;
    deliver_all(&store, 3).await;
    let unrated = create(
        &store,
        &project,
        json!({"userData": {"email": "u@x.io"}}),
        3,
    )
    .await;

    let seen = |troubles: Vec<crate::job::Trouble>| -> Vec<_> {
        troubles
            .into_iter()
            .map(|t| {
                let d = t.delivery;
                (t.job.lead_id, d.integration, d.state, d.attempts, d.detail)
            })
            .collect()
    };
    let webhook = IntegrationKind::Webhook;
    let retrying_row = (
        retrying,
        webhook,
        DeliveryState::Pending,
        1,
        Some("HTTP 503: unavailable".to_owned()),
    );
    let failed_row = (
        failed,
        webhook,
        DeliveryState::Failed,
        1,
        Some("HTTP 410: gone".to_owned()),
    );
    let leads = [unrated.lead_id, delivered, failed, retrying];
    let by_lead = store.lead_troubles(project.id, &leads).await.unwrap();
    assert_eq!(seen(by_lead), [failed_row.clone(), retrying_row.clone()]);
    let listed = store.troubles(project.id).await.unwrap();
    assert_eq!(seen(listed), [retrying_row.clone(), failed_row]);
    assert_eq!(store.troubled_leads(project.id).await.unwrap(), 2);

    // A retry is a new last job: nothing failed in it yet.
    store
        .retry_failed(project.id, RetryTarget::Lead(failed), &by(), at(5))
        .await
        .unwrap();
    let listed = store.troubles(project.id).await.unwrap();
    assert_eq!(seen(listed), [retrying_row]);
    let other = project_two(&store).await;
    assert!(store.troubles(other.id).await.unwrap().is_empty());
    assert_eq!(store.troubled_leads(project.id).await.unwrap(), 1);
    assert_eq!(store.troubled_leads(other.id).await.unwrap(), 0);
    let theirs = store.lead_troubles(other.id, &leads).await.unwrap();
    assert!(theirs.is_empty(), "another project's leads are not found");
}
