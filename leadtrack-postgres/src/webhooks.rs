//! Lead webhooks.
use crate::Error;
use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::types::*;

use chrono::Duration;
use leadtrack_core::api::Rating;
use leadtrack_core::api::WebhookBody;
use leadtrack_core::time::to_millis;
use leadtrack_core::webhook::WebhookEvents;
use leadtrack_core::webhook::{
    ClaimedWebhookEvent, NewWebhook, Webhook, WebhookAttempt, WebhookEvent, WebhookStatus,
};
use uuid::Uuid;

use crate::rows::{all, run};
use crate::{admin, leads};

pub(crate) async fn create(
    c: &impl GenericClient,
    project: ProjectId,
    new: &NewWebhook,
    now: DateTime<Utc>,
) -> Result<Webhook, Error> {
    todo!()
}
pub(crate) async fn list(
    c: &impl GenericClient,
    project: ProjectId,
) -> Result<Vec<WebhookStatus>, Error> {
    todo!()
}
pub(crate) async fn remove(
    c: &impl GenericClient,
    project: ProjectId,
    id: Uuid,
) -> Result<bool, Error> {
    todo!()
}
/// Queues `event` (id `event_id`, at `now`) about `lead` for every webhook of the project
/// subscribed to it, with the lead as it is now; part of the transaction that made the
/// change. A project without such a webhook costs one indexed lookup.
pub(crate) async fn enqueue(
    c: &impl GenericClient,
    project: ProjectId,
    lead: LeadId,
    event: WebhookEvent,
    event_id: Uuid,
    rating: Option<Rating<'_>>,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let hooks = all(
        c,
        "SELECT id FROM webhooks WHERE project_id = $1 AND events & $2 != 0",
        &[&project.0, &WebhookEvents::from_iter([event]).bits()],
    )
    .await?;
    if hooks.is_empty() {
        return Ok(());
    }
    let project_row = admin::project(c, project).await?;
    let stored = leads::find(c, project, &LeadIdentifier::LeadId(lead)).await?;
    let body = WebhookBody::new(event, event_id, now, &project_row, &stored, rating).to_json();
    let now = to_millis(&now);
    crate::listen::notify(c).await?;
    for hook in hooks {
        let hook: Uuid = hook.try_get(0)?;
        run(
            c,
            "INSERT INTO webhook_events (project_id, webhook_id, event_id, event, lead_id,
                occurred_at, body, state, due_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, 'queued', $6)
             ON CONFLICT (project_id, webhook_id, event_id) DO NOTHING",
            &[
                &project.0,
                &hook,
                &event_id,
                &event.as_ref(),
                &lead.0,
                &now,
                &body,
            ],
        )
        .await?;
    }
    Ok(())
}
pub(crate) async fn claim(
    c: &impl GenericClient,
    now: DateTime<Utc>,
    lease_for: Duration,
) -> Result<Option<ClaimedWebhookEvent>, Error> {
    todo!()
}
pub(crate) async fn record_attempt(
    c: &impl GenericClient,
    id: i64,
    lease: Uuid,
    attempt: &WebhookAttempt,
) -> Result<(), Error> {
    todo!()
}
