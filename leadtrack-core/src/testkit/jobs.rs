//! The job queue: planned deliveries and warnings, the lifecycle, lapsed leases.

use chrono::Duration;
use serde_json::json;
use uuid::Uuid;

use super::{
    Backend, all_kinds, all_mapped, at, by, connected_project, create, label, lead_by_id, project,
    update, webhook, webhook_label,
};
use crate::integration::IntegrationSettings;
use crate::job::{Attempt, Batch, QueueDepth, QueueDepths};
use crate::label::LabelMapping;
use crate::request::StatusUpdate;
use crate::store::{Admin, Conflict, JobQueue, LeadStore, LeadWebhooks, StoreError};
use crate::types::{
    AttemptOutcome, ConversionId, DeliveryState, IntegrationKind, JobState, LeadStatus,
};
use crate::webhook::{NewWebhook, WebhookEvents};

/// Queuing plans one delivery per connected and mapped integration; those the lead lacks
/// data for are skipped, with the response's warnings.
pub async fn queued_jobs_plan_deliveries_and_warnings<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = connected_project(&store).await;
    let label_id = label(&store, &project, true, all_mapped()).await;
    let complete = create(
        &store,
        &project,
        json!({"userData": {"email": "a@x.io"},
               "attributionData": {"gclid": "G", "cid": "1.2", "msclkid": "M"}}),
        0,
    )
    .await;
    let bare = create(
        &store,
        &project,
        json!({"userData": {"firstName": "Ada"}}),
        0,
    )
    .await;

    let change = store
        .update_status(
            project.id,
            &update(complete.lead_id, ConversionId::Label(label_id)),
            &by(),
            at(1),
        )
        .await
        .unwrap();
    assert!(change.warnings.is_empty());
    let jobs = store.lead_jobs(project.id, complete.lead_id).await.unwrap();
    let states: Vec<(IntegrationKind, DeliveryState)> = jobs[0]
        .deliveries
        .iter()
        .map(|(d, _)| (d.integration, d.state))
        .collect();
    assert_eq!(
        states,
        all_kinds()
            .into_iter()
            .map(|kind| (kind, DeliveryState::Pending))
            .collect::<Vec<_>>()
    );
    assert_eq!(jobs[0].job.final_status, LeadStatus::Rated);

    let change = store
        .update_status(
            project.id,
            &update(bare.lead_id, ConversionId::Label(label_id)),
            &by(),
            at(1),
        )
        .await
        .unwrap();
    let warned: Vec<(IntegrationKind, &str)> = change
        .warnings
        .iter()
        .map(|w| (w.integration, w.field.as_str()))
        .collect();
    assert_eq!(
        warned,
        [
            (IntegrationKind::GoogleAds, "gclid"),
            (IntegrationKind::Ga4, "cid"),
            (IntegrationKind::Meta, "user_data"),
            (IntegrationKind::MicrosoftAds, "msclkid"),
            (IntegrationKind::Linkedin, "user_data"),
            (IntegrationKind::Tiktok, "user_data"),
            (IntegrationKind::Reddit, "user_data"),
            (IntegrationKind::Pinterest, "user_data"),
            (IntegrationKind::Snapchat, "user_data")
        ]
    );
    assert!(change.warnings.iter().all(|w| w.timestamp == at(1)));
    let jobs = store.lead_jobs(project.id, bare.lead_id).await.unwrap();
    let states: Vec<DeliveryState> = jobs[0].deliveries.iter().map(|(d, _)| d.state).collect();
    assert_eq!(
        states,
        [
            DeliveryState::Skipped,
            DeliveryState::Skipped,
            DeliveryState::Skipped,
            DeliveryState::Skipped,
            DeliveryState::Skipped,
            DeliveryState::Skipped,
            DeliveryState::Skipped,
            DeliveryState::Skipped,
            DeliveryState::Skipped,
            DeliveryState::Pending
        ]
    );
    assert!(
        jobs[0].deliveries[0]
            .0
            .detail
            .as_deref()
            .is_some_and(|d| d.contains("click id"))
    );

    // `lost` follows the project's lost mapping: by default only the webhook.
    let lost_lead = create(
        &store,
        &project,
        json!({"userData": {"email": "l@x.io"}}),
        0,
    )
    .await;
    let change = store
        .update_status(
            project.id,
            &update(lost_lead.lead_id, ConversionId::Lost),
            &by(),
            at(1),
        )
        .await
        .unwrap();
    assert!(change.warnings.is_empty());
    let jobs = store
        .lead_jobs(project.id, lost_lead.lead_id)
        .await
        .unwrap();
    let kinds: Vec<IntegrationKind> = jobs[0]
        .deliveries
        .iter()
        .map(|(d, _)| d.integration)
        .collect();
    assert_eq!(kinds, [IntegrationKind::Webhook]);
    assert_eq!(jobs[0].job.final_status, LeadStatus::Lost);
    assert_eq!(jobs[0].job.conversion_id, ConversionId::Lost);
}

/// A project with every integration, a label mapped to GA4 and the webhook, and a lead
/// with a GA4 client id rated with it (price 42.00) at minute 1: a job for GA4 and the
/// webhook, due at once.
struct Rated<S> {
    store: S,
    project: crate::project::Project,
    label_id: uuid::Uuid,
    lead: crate::lead::CreatedLead,
    change: crate::job::StatusChange,
}

async fn rated<S: crate::store::Store>(store: S) -> Rated<S> {
    let project = connected_project(&store).await;
    let mapping = LabelMapping {
        ga4_event: Some("qualify".into()),
        webhook: true,
        ..LabelMapping::default()
    };
    let label_id = label(&store, &project, true, mapping).await;
    let lead = create(
        &store,
        &project,
        json!({"userData": {"email": "a@x.io"}, "attributionData": {"cid": "1.2"}}),
        0,
    )
    .await;
    let priced = StatusUpdate {
        price: Some(4200),
        ..update(lead.lead_id, ConversionId::Label(label_id))
    };
    let change = store
        .update_status(project.id, &priced, &by(), at(1))
        .await
        .unwrap();
    Rated {
        store,
        project,
        label_id,
        lead,
        change,
    }
}

/// The due job claimed at minute 1, GA4's delivery recorded as delivered (in a batch of 3)
/// and the webhook's as to retry at minute 12: the claim, and the two attempts.
async fn delivered_to_ga4_webhook_to_retry<S: crate::store::Store>(
    store: &S,
) -> (crate::job::ClaimedJob, Attempt, Attempt) {
    let claimed = store
        .claim_job(at(1), Duration::minutes(5))
        .await
        .unwrap()
        .expect("due job");
    let delivered = Attempt {
        integration: IntegrationKind::Ga4,
        at: at(2),
        outcome: AttemptOutcome::Delivered,
        http_status: Some(204),
        error: None,
        retry_at: None,
        batch: Some(Batch {
            id: Uuid::from_u128(0xba7c),
            size: 3,
        }),
    };
    let retry = Attempt {
        integration: IntegrationKind::Webhook,
        at: at(2),
        outcome: AttemptOutcome::Retry,
        http_status: Some(503),
        error: Some("HTTP 503".into()),
        retry_at: Some(at(12)),
        batch: None,
    };
    for attempt in [&delivered, &retry] {
        store
            .record_attempt(claimed.job.id, claimed.lease.token, attempt)
            .await
            .unwrap();
    }
    (claimed, delivered, retry)
}

/// The worker's claim: nothing before the job is due, then the job with everything a
/// delivery needs, leased, and nothing more while the lease holds.
pub async fn job_queue_claims_a_due_job_with_what_a_delivery_needs<B: Backend>(backend: &B) {
    let Rated {
        store,
        label_id,
        lead,
        change,
        ..
    } = rated(backend.open().await).await;
    assert!(
        store
            .claim_job(at(0), Duration::minutes(5))
            .await
            .unwrap()
            .is_none(),
        "not due yet"
    );

    let claimed = store
        .claim_job(at(1), Duration::minutes(5))
        .await
        .unwrap()
        .expect("due job");
    assert_eq!(Some(claimed.job.id), change.job);
    assert_eq!(
        (claimed.job.state, claimed.job.price),
        (JobState::Running, Some(4200))
    );
    assert_eq!(claimed.job.created_at, at(1));
    assert_eq!(claimed.lead.id, lead.lead_id);
    assert_eq!(claimed.lead.data.attribution("cid"), Some("1.2"));
    assert_eq!(claimed.lease.expires_at, at(6));
    assert_eq!(claimed.project.public_id, "p1");
    assert_eq!(claimed.label.as_ref().map(|l| l.id), Some(label_id));
    assert_eq!(claimed.mapping().ga4_event.as_deref(), Some("qualify"));
    assert_eq!(claimed.integrations.connected(), all_kinds());
    let kinds: Vec<IntegrationKind> = claimed.deliveries.iter().map(|d| d.integration).collect();
    assert_eq!(kinds, [IntegrationKind::Ga4, IntegrationKind::Webhook]);
    assert!(
        store
            .claim_job(at(2), Duration::minutes(5))
            .await
            .unwrap()
            .is_none(),
        "leased"
    );
}

/// Attempts recorded under the lease; a retry reschedules the job, which ends the lease, and
/// the job comes back when due with each delivery where it stood.
pub async fn job_queue_records_attempts_and_reschedules_retries<B: Backend>(backend: &B) {
    let Rated { store, .. } = rated(backend.open().await).await;
    let (claimed, delivered, _) = delivered_to_ga4_webhook_to_retry(&store).await;
    let unfinished = store
        .finish_job(claimed.job.id, claimed.lease.token, at(2))
        .await
        .unwrap_err();
    assert!(matches!(unfinished, StoreError::Invalid(_)), "{unfinished}");
    store
        .reschedule_job(claimed.job.id, claimed.lease.token, at(12))
        .await
        .unwrap();
    let stale = store
        .record_attempt(claimed.job.id, claimed.lease.token, &delivered)
        .await
        .unwrap_err();
    assert!(
        matches!(stale, StoreError::Conflict(Conflict::LeaseLost(_))),
        "{stale}"
    );
    assert!(
        store
            .claim_job(at(11), Duration::minutes(5))
            .await
            .unwrap()
            .is_none()
    );

    let again = store
        .claim_job(at(12), Duration::minutes(5))
        .await
        .unwrap()
        .expect("due again");
    assert_eq!(again.job.id, claimed.job.id);
    assert_ne!(again.lease.token, claimed.lease.token);
    assert_eq!(
        again.job.event_id, claimed.job.event_id,
        "the event id is stable"
    );
    let states: Vec<(DeliveryState, u32)> = again
        .deliveries
        .iter()
        .map(|d| (d.state, d.attempts))
        .collect();
    assert_eq!(
        states,
        [(DeliveryState::Delivered, 1), (DeliveryState::Pending, 1)]
    );
    assert_eq!(again.deliveries[1].next_attempt_at, Some(at(12)));
}

/// A job whose deliveries all ended finishes, the lead takes its final status, the job's
/// history keeps every attempt, and the lead may be rated again.
pub async fn job_queue_finishes_a_job_and_the_lead_takes_its_status<B: Backend>(backend: &B) {
    let Rated {
        store,
        project,
        lead,
        ..
    } = rated(backend.open().await).await;
    let (again, ga4, retry) = delivered_to_ga4_webhook_to_retry(&store).await;
    let webhook_done = Attempt {
        at: at(12),
        outcome: AttemptOutcome::Delivered,
        http_status: Some(200),
        error: None,
        retry_at: None,
        batch: None,
        ..retry
    };
    store
        .record_attempt(again.job.id, again.lease.token, &webhook_done)
        .await
        .unwrap();
    let status = store
        .finish_job(again.job.id, again.lease.token, at(13))
        .await
        .unwrap();
    assert_eq!(status, LeadStatus::Rated);
    assert_eq!(
        lead_by_id(&store, &project, lead.lead_id).await.status,
        LeadStatus::Rated
    );

    let jobs = store.lead_jobs(project.id, lead.lead_id).await.unwrap();
    assert_eq!(jobs[0].job.state, JobState::Done);
    assert_eq!(jobs[0].job.finished_at, Some(at(13)));
    let (webhook_delivery, webhook_attempts) = &jobs[0].deliveries[1];
    assert_eq!(webhook_delivery.state, DeliveryState::Delivered);
    let outcomes: Vec<(AttemptOutcome, Option<u16>)> = webhook_attempts
        .iter()
        .map(|a| (a.outcome, a.http_status))
        .collect();
    assert_eq!(
        outcomes,
        [
            (AttemptOutcome::Retry, Some(503)),
            (AttemptOutcome::Delivered, Some(200))
        ]
    );
    assert_eq!(webhook_attempts[0].retry_at, Some(at(12)));
    assert_eq!(
        jobs[0].deliveries[0].1,
        [ga4],
        "ga4 was sent once, in its batch"
    );
    assert_eq!(webhook_attempts[1].batch, None);
    assert!(
        store
            .claim_job(at(100), Duration::minutes(5))
            .await
            .unwrap()
            .is_none()
    );

    // The next rating may be queued now the job is done.
    let next = store
        .update_status(
            project.id,
            &update(lead.lead_id, ConversionId::Lost),
            &by(),
            at(14),
        )
        .await
        .unwrap();
    assert!(next.job.is_some());
}

/// A worker that dies holding a job loses it when the lease lapses: another claims it, and
/// the first can no longer act on it.
pub async fn lapsed_leases_are_claimed_again<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let lead = create(
        &store,
        &project,
        json!({"userData": {"email": "a@x.io"}}),
        0,
    )
    .await;
    store
        .update_status(
            project.id,
            &update(lead.lead_id, ConversionId::Lost),
            &by(),
            at(1),
        )
        .await
        .unwrap();
    let first = store
        .claim_job(at(1), Duration::minutes(1))
        .await
        .unwrap()
        .expect("due");
    assert!(
        store
            .claim_job(at(1) + Duration::seconds(59), Duration::minutes(1))
            .await
            .unwrap()
            .is_none()
    );
    let second = store
        .claim_job(at(2), Duration::minutes(1))
        .await
        .unwrap()
        .expect("lease lapsed");
    assert_eq!(second.job.id, first.job.id);
    assert_eq!(
        second.job.started_at,
        Some(at(1)),
        "first pick-up time is kept"
    );
    let err = store
        .finish_job(first.job.id, first.lease.token, at(2))
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Conflict(Conflict::LeaseLost(_))),
        "{err}"
    );
    let status = store
        .finish_job(second.job.id, second.lease.token, at(3))
        .await
        .unwrap();
    assert_eq!(status, LeadStatus::Lost);
}

/// The queue's depth counts waiting and leased conversion jobs and lead webhook events, and
/// how long the first due of each has been due.
pub async fn queue_depth_counts_waiting_and_leased_deliveries<B: Backend>(backend: &B) {
    let store = backend.open().await;
    assert_eq!(
        store.queue_depth(at(0)).await.unwrap(),
        QueueDepths::default()
    );
    let project = project(&store, "p1").await;
    store
        .set_integration(project.id, IntegrationSettings::Webhook(webhook()), at(0))
        .await
        .unwrap();
    let new = NewWebhook::new(
        "https://crm.example/hook",
        &crate::target::Targets::default(),
        None,
        WebhookEvents::all(),
    )
    .unwrap();
    store.create_webhook(project.id, new, at(0)).await.unwrap();
    let label_id = webhook_label(&store, &project).await;
    for i in 0..3 {
        let body = json!({"userData": {"email": format!("u{i}@x.io")}});
        let lead = create(&store, &project, body, i).await;
        store
            .update_status(
                project.id,
                &update(lead.lead_id, ConversionId::Label(label_id)),
                &by(),
                at(10 + i),
            )
            .await
            .unwrap();
    }
    let depth = |queued, running, minutes| QueueDepth {
        queued,
        running,
        oldest_due_for: Duration::minutes(minutes),
    };

    // Before anything is due, and once the first job has waited ten minutes.
    let before = store
        .queue_depth(at(10) - Duration::seconds(1))
        .await
        .unwrap();
    assert_eq!(before.jobs, depth(3, 0, 0), "queued, none due yet");
    let depths = store.queue_depth(at(20)).await.unwrap();
    assert_eq!(depths.jobs, depth(3, 0, 10));
    // Three lead.created events, the first due at 0; no lead.converted before a job leaves.
    assert_eq!(depths.webhook_events, depth(3, 0, 20));

    store
        .claim_job(at(20), Duration::minutes(5))
        .await
        .unwrap()
        .expect("a due job");
    let depths = store.queue_depth(at(20)).await.unwrap();
    assert_eq!(depths.jobs, depth(2, 1, 9));
    assert_eq!(depths.webhook_events, depth(4, 0, 20), "its lead.converted");
    store
        .claim_webhook_event(at(20), Duration::minutes(5))
        .await
        .unwrap()
        .expect("a due event");
    assert_eq!(
        store.queue_depth(at(20)).await.unwrap().webhook_events,
        depth(3, 1, 19)
    );
}
