//! Status updates: the 409 rule under concurrency, `open`, and missing leads and labels.

use chrono::Duration;
use futures_util::future::join_all;
use serde_json::json;
use uuid::Uuid;

use super::{Backend, at, by, create, label, lead_by_id, project, update};
use crate::label::LabelMapping;
use crate::request::StatusUpdate;
use crate::store::{Conflict, Entity, JobQueue, LeadStore, StoreError};
use crate::types::{ConversionId, JobState, LeadId, LeadIdentifier, LeadStatus};

/// 32 concurrent label updates on one lead: exactly one queues a job, the other 31 get
/// `Conflict::JobPending`.
pub async fn concurrent_label_updates_queue_exactly_one_job<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let label_id = label(&store, &project, true, LabelMapping::default()).await;
    let lead = create(
        &store,
        &project,
        json!({"userData": {"email": "a@x.io"}}),
        0,
    )
    .await;
    let results = join_all((0..32).map(|i| {
        let store = store.clone();
        let conversion = if i % 2 == 0 {
            ConversionId::Label(label_id)
        } else {
            ConversionId::Lost
        };
        async move {
            store
                .update_status(project.id, &update(lead.lead_id, conversion), &by(), at(1))
                .await
        }
    }))
    .await;
    let mut queued = 0;
    for result in results {
        match result {
            Ok(change) => {
                assert!(change.job.is_some());
                queued += 1;
            }
            Err(StoreError::Conflict(Conflict::JobPending { lead_id })) => {
                assert_eq!(lead_id, lead.lead_id);
            }
            Err(other) => panic!("unexpected error: {other}"),
        }
    }
    assert_eq!(queued, 1);
    let jobs = store.lead_jobs(project.id, lead.lead_id).await.unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].job.state, JobState::Queued);
    assert_eq!(
        lead_by_id(&store, &project, lead.lead_id).await.status,
        LeadStatus::Pending
    );
}

/// `open` applies price and note, cancels a job no worker has started, and lets the next
/// rating queue a new job.
pub async fn open_cancels_a_queued_job_and_applies_price_and_note<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let label_id = label(&store, &project, true, LabelMapping::default()).await;
    let lead = create(
        &store,
        &project,
        json!({"userData": {"email": "a@x.io"}}),
        0,
    )
    .await;
    let queued = store
        .update_status(
            project.id,
            &update(lead.lead_id, ConversionId::Label(label_id)),
            &by(),
            at(1),
        )
        .await
        .unwrap();
    let open = StatusUpdate {
        price: Some(1200),
        note: Some(Some("reopened".to_owned())),
        ..update(lead.lead_id, ConversionId::Open)
    };
    let change = store
        .update_status(project.id, &open, &by(), at(2))
        .await
        .unwrap();
    assert_eq!(change.job, None);
    assert!(change.warnings.is_empty());
    let stored = lead_by_id(&store, &project, lead.lead_id).await;
    assert_eq!(stored.status, LeadStatus::Open);
    assert_eq!(stored.price, Some(1200));
    assert_eq!(stored.note.as_deref(), Some("reopened"));
    assert_eq!(
        stored.conversion_id,
        Some(ConversionId::Label(label_id)),
        "open is not a label"
    );

    let jobs = store.lead_jobs(project.id, lead.lead_id).await.unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(Some(jobs[0].job.id), queued.job);
    assert_eq!(jobs[0].job.state, JobState::Cancelled);
    assert!(
        store
            .claim_job(at(10), Duration::minutes(1))
            .await
            .unwrap()
            .is_none()
    );

    let again = store
        .update_status(
            project.id,
            &update(lead.lead_id, ConversionId::Lost),
            &by(),
            at(3),
        )
        .await
        .unwrap();
    assert!(again.job.is_some(), "a cancelled job no longer blocks");
    let cleared = StatusUpdate {
        note: Some(None),
        ..update(lead.lead_id, ConversionId::Open)
    };
    store
        .update_status(project.id, &cleared, &by(), at(4))
        .await
        .unwrap();
    let stored = lead_by_id(&store, &project, lead.lead_id).await;
    assert_eq!(stored.note, None);
    assert_eq!(stored.price, Some(1200), "price is kept when not given");
}

/// A job a worker has started is not cancelled by `open`; when it finishes, the lead stays
/// `open`. While it runs, another rating conflicts.
pub async fn open_leaves_a_started_job_running_and_the_lead_open<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let label_id = label(&store, &project, true, LabelMapping::default()).await;
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
            &update(lead.lead_id, ConversionId::Label(label_id)),
            &by(),
            at(1),
        )
        .await
        .unwrap();
    let claimed = store
        .claim_job(at(1), Duration::minutes(5))
        .await
        .unwrap()
        .expect("a due job");
    store
        .update_status(
            project.id,
            &update(lead.lead_id, ConversionId::Open),
            &by(),
            at(2),
        )
        .await
        .unwrap();
    let conflict = store
        .update_status(
            project.id,
            &update(lead.lead_id, ConversionId::Lost),
            &by(),
            at(2),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(conflict, StoreError::Conflict(Conflict::JobPending { .. })),
        "{conflict}"
    );
    let status = store
        .finish_job(claimed.job.id, claimed.lease.token, at(3))
        .await
        .unwrap();
    assert_eq!(status, LeadStatus::Open);
    assert_eq!(
        lead_by_id(&store, &project, lead.lead_id).await.status,
        LeadStatus::Open
    );
    let jobs = store.lead_jobs(project.id, lead.lead_id).await.unwrap();
    assert_eq!(jobs[0].job.state, JobState::Done);
}

/// Unknown leads and labels are reported as not found, and nothing changes.
pub async fn status_updates_report_missing_leads_and_labels<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let lead = create(
        &store,
        &project,
        json!({"userData": {"email": "a@x.io"}}),
        0,
    )
    .await;
    let missing = store
        .update_status(
            project.id,
            &update(LeadId(lead.lead_id.0 + 1000), ConversionId::Open),
            &by(),
            at(1),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(missing, StoreError::NotFound(Entity::Lead)),
        "{missing}"
    );
    let by_email = StatusUpdate {
        identifier: LeadIdentifier::Email("nobody@x.io".into()),
        ..update(LeadId(0), ConversionId::Lost)
    };
    let missing = store
        .update_status(project.id, &by_email, &by(), at(1))
        .await
        .unwrap_err();
    assert!(
        matches!(missing, StoreError::NotFound(Entity::Lead)),
        "{missing}"
    );
    let unknown_label = StatusUpdate {
        price: Some(99),
        ..update(lead.lead_id, ConversionId::Label(Uuid::new_v4()))
    };
    let missing = store
        .update_status(project.id, &unknown_label, &by(), at(1))
        .await
        .unwrap_err();
    assert!(
        matches!(missing, StoreError::NotFound(Entity::Label)),
        "{missing}"
    );
    let stored = lead_by_id(&store, &project, lead.lead_id).await;
    assert_eq!(
        (stored.status, stored.price),
        (LeadStatus::Open, None),
        "nothing changed"
    );
    assert!(
        store
            .lead_jobs(project.id, lead.lead_id)
            .await
            .unwrap()
            .is_empty()
    );
}
