//! A lead's history: every change recorded, in order, with who made it; who rated a job.

use chrono::Duration;
use serde_json::json;

use crate::account::Actor;
use crate::activity::Activity;
use crate::job::Attempt;
use crate::store::{Admin, Entity, JobQueue, LeadStore};
use crate::types::{AttemptOutcome, ConversionId, IntegrationKind, LeadId, UserId};

use super::{Backend, assert_not_found, at, by, create, project, update, webhook, webhook_label};

/// Creation, a merge, a rating by a user, a delivery and a reset by a key are recorded in
/// order, each with who did it; the job remembers who rated; other projects see nothing.
pub async fn lead_history_records_every_change_and_who_made_it<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let other = project(&store, "p2").await;
    let project = project(&store, "p1").await;
    store
        .set_integration(
            project.id,
            crate::integration::IntegrationSettings::Webhook(webhook()),
            at(0),
        )
        .await
        .unwrap();
    let label_id = webhook_label(&store, &project).await;
    let body = json!({"userData": {"email": "a@x.io"}, "formData": {"uniqueEventId": "e1"}});
    let lead = create(&store, &project, body.clone(), 0).await.lead_id;
    create(&store, &project, body, 1).await;

    let ada = Actor::User {
        id: UserId(1),
        name: "Ada Lovelace".into(),
    };
    let mut rated = update(lead, ConversionId::Label(label_id));
    rated.price = Some(2500);
    rated.note = Some(Some("signed".into()));
    let change = store
        .update_status(project.id, &rated, &ada, at(2))
        .await
        .unwrap();
    let job = change.job.expect("a job was queued");
    let claimed = store
        .claim_job(at(3), Duration::minutes(5))
        .await
        .unwrap()
        .expect("the job is due");
    let attempt = Attempt {
        integration: IntegrationKind::Webhook,
        at: at(3),
        outcome: AttemptOutcome::Delivered,
        http_status: Some(200),
        error: None,
        retry_at: None,
        batch: None,
    };
    store
        .record_attempt(job, claimed.lease.token, &attempt)
        .await
        .unwrap();
    store
        .finish_job(job, claimed.lease.token, at(3))
        .await
        .unwrap();
    let mut reopened = update(lead, ConversionId::Open);
    reopened.note = Some(None);
    store
        .update_status(project.id, &reopened, &by(), at(4))
        .await
        .unwrap();

    let events = store.lead_activity(project.id, lead).await.unwrap();
    let seen: Vec<_> = events
        .iter()
        .map(|e| (e.at, e.by.clone(), e.activity.clone()))
        .collect();
    assert_eq!(
        seen,
        [
            (at(0), None, Activity::Created),
            (at(1), None, Activity::Merged),
            (
                at(2),
                Some(ada.clone()),
                Activity::Rated {
                    conversion_id: ConversionId::Label(label_id),
                    label: Some("Qualified".into()),
                    price: Some(2500),
                    note: Some("signed".into()),
                    job_id: job,
                }
            ),
            (
                at(2),
                Some(ada.clone()),
                Activity::Note {
                    note: "signed".into(),
                    job_id: job,
                }
            ),
            (
                at(3),
                None,
                Activity::Delivery {
                    job_id: job,
                    integration: IntegrationKind::Webhook,
                    outcome: AttemptOutcome::Delivered,
                    http_status: Some(200),
                    error: None,
                }
            ),
            (
                at(4),
                Some(by()),
                Activity::Reopened {
                    price: None,
                    note: None
                }
            ),
        ]
    );
    let jobs = store.lead_jobs(project.id, lead).await.unwrap();
    assert_eq!(jobs[0].job.rated_by, Some(ada));
    assert!(
        store
            .lead_activity(other.id, lead)
            .await
            .unwrap()
            .is_empty()
    );
    assert_not_found(
        store
            .find_lead(other.id, &crate::types::LeadIdentifier::LeadId(lead))
            .await,
        Entity::Lead,
    );
    assert!(
        store
            .lead_activity(project.id, LeadId(i64::MAX))
            .await
            .unwrap()
            .is_empty()
    );
}

/// Each lead's newest rating (a label or `lost`; a reset is not one), when and by whom; a
/// lead never rated, or of another project, has none.
pub async fn the_newest_rating_of_each_lead_is_found<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let acme = project(&store, "acme").await;
    let other = project(&store, "other").await;
    let label = webhook_label(&store, &acme).await;
    let ada = create(&store, &acme, json!({"userData": {"email": "ada@x.io"}}), 0).await;
    let bob = create(&store, &acme, json!({"userData": {"email": "bob@x.io"}}), 0).await;
    let cy = create(&store, &other, json!({"userData": {"email": "cy@x.io"}}), 0).await;
    let olive = Actor::User {
        id: UserId(7),
        name: "Olive".to_owned(),
    };
    let rate = |lead: LeadId, conversion: ConversionId, who: Actor, minute: i64| {
        let store = store.clone();
        async move {
            store
                .update_status(acme.id, &update(lead, conversion), &who, at(minute))
                .await
                .unwrap();
        }
    };
    rate(ada.lead_id, ConversionId::Label(label), by(), 1).await;
    rate(ada.lead_id, ConversionId::Open, by(), 2).await;
    rate(ada.lead_id, ConversionId::Lost, olive.clone(), 3).await;
    let leads = [ada.lead_id, bob.lead_id, cy.lead_id];
    let found = store.last_ratings(acme.id, &leads).await.unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    let (lead, event) = &found[0];
    assert_eq!(
        (*lead, event.at, event.by.clone()),
        (ada.lead_id, at(3), Some(olive))
    );
    assert!(matches!(
        event.activity,
        Activity::Rated {
            conversion_id: ConversionId::Lost,
            ..
        }
    ));
    assert!(store.last_ratings(acme.id, &[]).await.unwrap().is_empty());
}
