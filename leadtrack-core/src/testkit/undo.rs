//! Ratings made through a form: held for the undo window, saved once per form, and undone
//! (one lead, or a whole bulk rating) back to what the lead was, until a worker takes them.

use chrono::Duration;
use serde_json::json;
use uuid::Uuid;

use super::{Backend, at, by, create, deliver_all, project, update, webhook_label};
use crate::activity::Activity;
use crate::integration::IntegrationSettings;
use crate::job::{FormRating, PriorRating, UndoTarget};
use crate::project::Project;
use crate::store::{Admin, Conflict, JobQueue, LeadStore, StoreError};
use crate::types::{ConversionId, JobState, LeadId, LeadIdentifier, LeadStatus};

/// A form with a fresh token, held ten seconds.
fn form() -> FormRating {
    FormRating {
        token: Uuid::new_v4(),
        hold: Duration::seconds(10),
    }
}

/// The lead's rating as it stands.
async fn rating_of<S: LeadStore>(store: &S, project: &Project, lead: LeadId) -> PriorRating {
    let found = store
        .find_lead(project.id, &LeadIdentifier::LeadId(lead))
        .await;
    PriorRating::of(&found.unwrap())
}

/// Undoes `target` of `project` at `when`; the leads restored.
async fn undo<S: LeadStore>(
    store: &S,
    project: &Project,
    target: UndoTarget,
    when: chrono::DateTime<chrono::Utc>,
) -> Vec<LeadId> {
    let mut undone = store.undo(project.id, target, &by(), when).await.unwrap();
    undone.sort();
    undone
}

/// Rates `lead` with `conversion` (price and note given) through `form` at `minute`.
async fn rate_via<S: LeadStore>(
    store: &S,
    project: &Project,
    (lead, conversion): (LeadId, ConversionId),
    form: Option<FormRating>,
    minute: i64,
) -> Result<(), StoreError> {
    let mut update = update(lead, conversion);
    update.price = Some(2500);
    update.note = Some(Some("call back".to_owned()));
    let by = by();
    let rated = store.update_status_from(project.id, &update, &by, at(minute), form);
    rated.await.map(|_| ())
}

/// A rating through a form waits out its window; the same form again is refused; an undo
/// inside the window cancels the job and gives the lead back its status, label, price
/// and note, with `undone` in its history; once a worker has taken a job, nothing is undone.
pub async fn a_held_rating_is_saved_once_and_undone_to_what_the_lead_was<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let hook = IntegrationSettings::Webhook(super::webhook());
    store
        .set_integration(project.id, hook, at(0))
        .await
        .unwrap();
    let customer = ConversionId::Label(webhook_label(&store, &project).await);
    let lead = create(
        &store,
        &project,
        json!({"userData": {"email": "a@x.io"}}),
        0,
    )
    .await
    .lead_id;
    rate_via(&store, &project, (lead, customer), None, 1)
        .await
        .unwrap();
    deliver_all(&store, 2).await;
    let before = rating_of(&store, &project, lead).await;
    assert_eq!(before.status, LeadStatus::Rated);

    let held = form();
    rate_via(&store, &project, (lead, ConversionId::Lost), Some(held), 3)
        .await
        .unwrap();
    let due = store.claim_job(at(3) + Duration::seconds(9), Duration::minutes(5));
    assert!(
        due.await.unwrap().is_none(),
        "nothing leaves inside the window"
    );
    let again = rate_via(&store, &project, (lead, ConversionId::Lost), Some(held), 3).await;
    assert!(
        matches!(again, Err(StoreError::Conflict(Conflict::AlreadySaved { lead_id })) if lead_id == lead),
        "{again:?}"
    );

    let undone = undo(&store, &project, UndoTarget::Lead(lead), at(3)).await;
    assert_eq!(undone, [lead]);
    assert_eq!(rating_of(&store, &project, lead).await, before);
    let jobs = store.lead_jobs(project.id, lead).await.unwrap();
    assert_eq!(jobs[0].job.state, JobState::Cancelled);
    let history = store.lead_activity(project.id, lead).await.unwrap();
    let last = &history.last().unwrap().activity;
    assert_eq!(
        last,
        &Activity::Undone {
            job_id: jobs[0].job.id
        }
    );
    let nothing = undo(&store, &project, UndoTarget::Lead(lead), at(4)).await;
    assert!(nothing.is_empty(), "an undone rating is gone");

    // Past the window a worker takes the job: too late to undo.
    rate_via(
        &store,
        &project,
        (lead, ConversionId::Lost),
        Some(form()),
        5,
    )
    .await
    .unwrap();
    let left = store.claim_job(at(5) + Duration::seconds(10), Duration::minutes(5));
    assert!(left.await.unwrap().is_some());
    let late = undo(&store, &project, UndoTarget::Lead(lead), at(6)).await;
    assert!(late.is_empty());
    assert_eq!(
        rating_of(&store, &project, lead).await.status,
        LeadStatus::Pending
    );
}

/// A bulk rating shares its form's token: one undo takes back every lead of it, and only
/// those.
pub async fn one_undo_takes_back_a_whole_bulk_rating<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let customer = ConversionId::Label(webhook_label(&store, &project).await);
    let mut leads = Vec::new();
    for n in 0..3 {
        let body = json!({"userData": {"email": format!("{n}@x.io")}});
        leads.push(create(&store, &project, body, 0).await.lead_id);
    }
    let bulk = form();
    for lead in &leads[..2] {
        rate_via(&store, &project, (*lead, customer), Some(bulk), 1)
            .await
            .unwrap();
    }
    rate_via(&store, &project, (leads[2], customer), Some(form()), 1)
        .await
        .unwrap();
    let undone = undo(&store, &project, UndoTarget::Form(bulk.token), at(1)).await;
    assert_eq!(undone, leads[..2]);
    for (lead, status) in
        leads
            .iter()
            .zip([LeadStatus::Open, LeadStatus::Open, LeadStatus::Pending])
    {
        assert_eq!(rating_of(&store, &project, *lead).await.status, status);
    }
    let other = project_two(&store).await;
    let elsewhere = undo(&store, &other, UndoTarget::Form(bulk.token), at(1)).await;
    assert!(
        elsewhere.is_empty(),
        "another project's form undoes nothing"
    );
}

async fn project_two<S: Admin>(store: &S) -> Project {
    project(store, "p2").await
}
