//! Lead webhooks and their queue of events (`webhook_events`: one row per webhook and event
//! id, in states `queued`, `running`, then `delivered`, `failed` or `skipped`).
//!
//! Workers claim events with `SELECT … FOR UPDATE SKIP LOCKED` and lease them; recording an
//! attempt locks the event's row and checks the lease under that lock. Removing a webhook
//! locks its row first, and queuing events locks the rows of the webhooks it queues for
//! (`FOR KEY SHARE`), so an event is never queued for a webhook being removed.
use crate::Error;
use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::types::*;

use chrono::Duration;
use leadtrack_core::api::Rating;
use leadtrack_core::api::WebhookBody;
use leadtrack_core::crm::{CrmOptions, CrmRecord};
use leadtrack_core::integration::Secret;
use leadtrack_core::job::Lease;
use leadtrack_core::store::{Conflict, Entity, StoreError};
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::vault::{Vault, WEBHOOK_SECRET};
use leadtrack_core::webhook::{
    ClaimedWebhookEvent, LeadSync, NewWebhook, Webhook, WebhookAttempt, WebhookError, WebhookEvent,
    WebhookEvents, WebhookKind, WebhookStatus,
};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::lease::{due, new_lease};
use crate::rows::{self, all, one, run};
use crate::{admin, lookup};

/// The columns [`webhook`] reads, in order (of `webhooks`, which queries may alias `w`).
const WEBHOOK_COLUMNS: &str =
    "w.id, w.project_id, w.url, w.secret, w.events, w.created_at, w.kind, w.options";

/// A webhook from a row of [`WEBHOOK_COLUMNS`].
fn webhook(row: &Row, vault: &Vault) -> Result<Webhook, Error> {
    Ok(Webhook {
        id: row.try_get(0)?,
        project_id: ProjectId(row.try_get(1)?),
        url: row.try_get(2)?,
        secret: Secret::new(vault.open(WEBHOOK_SECRET, row.try_get(3)?)?),
        events: WebhookEvents::from_bits(row.try_get(4)?),
        created_at: from_millis(row.try_get(5)?),
        kind: rows::parse("webhooks.kind", row.try_get(6)?)?,
        crm: row
            .try_get::<_, Option<String>>(7)?
            .map(|json| {
                CrmOptions::from_json(&json).ok_or(Error::Corrupt {
                    column: "webhooks.options",
                    value: json,
                })
            })
            .transpose()?,
    })
}

/// The newest attempt a row names (`last_attempt_at`, `outcome`, `http_status`, `error`,
/// `retry_at`), if any.
fn attempt(row: &Row) -> Result<Option<WebhookAttempt>, Error> {
    let Some(at) = row.try_get::<_, Option<i64>>("last_attempt_at")? else {
        return Ok(None);
    };
    Ok(Some(WebhookAttempt {
        at: from_millis(at),
        outcome: rows::parse("webhook_events.outcome", row.try_get("outcome")?)?,
        http_status: row
            .try_get::<_, Option<i32>>("http_status")?
            .and_then(|status| u16::try_from(status).ok()),
        error: row.try_get("error")?,
        retry_at: row.try_get::<_, Option<i64>>("retry_at")?.map(from_millis),
    }))
}

/// What a refused webhook fails with.
fn invalid(err: WebhookError) -> Error {
    Error::Store(StoreError::Invalid(err.to_string()))
}

/// A `count(*)` column as a count.
fn count(column: &'static str, value: i64) -> Result<u64, Error> {
    u64::try_from(value).map_err(|_| Error::Corrupt {
        column,
        value: value.to_string(),
    })
}

/// Adds a webhook to the project ([`LeadWebhooks::create_webhook`]). The project's row is
/// locked (`FOR NO KEY UPDATE`, which leads being created do not wait for) while its
/// webhooks are counted, so concurrent creates cannot pass [`MAX_WEBHOOKS`] together.
///
/// [`LeadWebhooks::create_webhook`]: leadtrack_core::LeadWebhooks::create_webhook
/// [`MAX_WEBHOOKS`]: leadtrack_core::webhook::MAX_WEBHOOKS
pub(crate) async fn create(
    c: &impl GenericClient,
    vault: &Vault,
    project: ProjectId,
    new: &NewWebhook,
    now: DateTime<Utc>,
) -> Result<Webhook, Error> {
    let found = one(
        c,
        "SELECT 1 FROM projects WHERE id = $1 FOR NO KEY UPDATE",
        &[&project.0],
    )
    .await?;
    if found.is_none() {
        return Err(admin::not_found(Entity::Project));
    }
    new.validate().map_err(invalid)?;
    let existing = one(
        c,
        "SELECT count(*) FROM webhooks WHERE project_id = $1 AND kind = $2",
        &[&project.0, &new.kind.as_ref()],
    )
    .await?;
    let existing = match existing {
        Some(row) => row.try_get::<_, i64>(0)?,
        None => 0,
    };
    new.fits(usize::try_from(existing).unwrap_or(usize::MAX))
        .map_err(invalid)?;
    let sql = format!(
        "INSERT INTO webhooks AS w
             (project_id, id, url, secret, events, created_at, kind, options)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         RETURNING {WEBHOOK_COLUMNS}"
    );
    let options = new.crm.as_ref().map(CrmOptions::to_json);
    let params: [&(dyn ToSql + Sync); 8] = [
        &project.0,
        &Uuid::new_v4(),
        &new.url,
        &vault.seal(WEBHOOK_SECRET, new.secret.expose()),
        &new.events.bits(),
        &to_millis(&now),
        &new.kind.as_ref(),
        &options,
    ];
    match one(c, &sql, &params).await? {
        Some(row) => webhook(&row, vault),
        None => Err(admin::not_found(Entity::Webhook)),
    }
}

/// Changes webhook `id` of the project ([`LeadWebhooks::update_webhook`](leadtrack_core::LeadWebhooks::update_webhook)).
pub(crate) async fn update(
    c: &impl GenericClient,
    vault: &Vault,
    (project, id): (ProjectId, Uuid),
    new: &NewWebhook,
) -> Result<Webhook, Error> {
    new.validate().map_err(invalid)?;
    let sql = format!(
        "UPDATE webhooks AS w SET url = $3, secret = $4, events = $5, options = $6
         WHERE w.project_id = $1 AND w.id = $2 AND w.kind = $7
         RETURNING {WEBHOOK_COLUMNS}"
    );
    let options = new.crm.as_ref().map(CrmOptions::to_json);
    let params: [&(dyn ToSql + Sync); 7] = [
        &project.0,
        &id,
        &new.url,
        &vault.seal(WEBHOOK_SECRET, new.secret.expose()),
        &new.events.bits(),
        &options,
        &new.kind.as_ref(),
    ];
    match one(c, &sql, &params).await? {
        Some(row) => webhook(&row, vault),
        None => Err(admin::not_found(Entity::Webhook)),
    }
}

/// The project's webhooks, oldest first (ties: in the order added), each with how its
/// deliveries stand, in one statement (one snapshot): the count of its events per state
/// (`webhook_events_state`), and its newest attempt, the latest `at` (ties: the event
/// queued last), read from `webhook_events_last`.
pub(crate) async fn list(
    c: &impl GenericClient,
    vault: &Vault,
    project: ProjectId,
) -> Result<Vec<WebhookStatus>, Error> {
    let sql = format!(
        "SELECT {WEBHOOK_COLUMNS}, n.pending, n.delivered, n.failed,
            l.last_attempt_at, l.outcome, l.http_status, l.error, l.retry_at
         FROM webhooks w
         CROSS JOIN LATERAL (
             SELECT count(*) FILTER (WHERE e.state IN ('queued', 'running')) AS pending,
                 count(*) FILTER (WHERE e.state = 'delivered') AS delivered,
                 count(*) FILTER (WHERE e.state NOT IN ('queued', 'running', 'delivered'))
                     AS failed
             FROM webhook_events e
             WHERE e.project_id = w.project_id AND e.webhook_id = w.id
         ) n
         LEFT JOIN LATERAL (
             SELECT e.last_attempt_at, e.outcome, e.http_status, e.error,
                 CASE WHEN e.state = 'queued' THEN e.due_at END AS retry_at
             FROM webhook_events e
             WHERE e.project_id = w.project_id AND e.webhook_id = w.id
               AND e.last_attempt_at IS NOT NULL
             ORDER BY e.last_attempt_at DESC, e.id DESC
             LIMIT 1
         ) l ON true
         WHERE w.project_id = $1
         ORDER BY w.created_at, w.seq"
    );
    let mut statuses = Vec::new();
    for row in all(c, &sql, &[&project.0]).await? {
        let last_attempt = attempt(&row)?;
        statuses.push(WebhookStatus {
            webhook: webhook(&row, vault)?,
            pending: count("webhook_events.pending", row.try_get("pending")?)?,
            delivered: count("webhook_events.delivered", row.try_get("delivered")?)?,
            failed: count("webhook_events.failed", row.try_get("failed")?)?,
            last_attempt,
        });
    }
    Ok(statuses)
}

/// How `lead` stands in each CRM the project syncs to, in one statement
/// ([`LeadWebhooks::lead_syncs`](leadtrack_core::LeadWebhooks::lead_syncs)).
pub(crate) async fn lead_syncs(
    c: &impl GenericClient,
    project: ProjectId,
    lead: LeadId,
) -> Result<Vec<LeadSync>, Error> {
    let sql = "SELECT w.kind, r.contact_id, r.crm_lead_id, r.deal_id, n.pending, n.failed,
            l.last_attempt_at, l.outcome, l.http_status, l.error, l.retry_at
         FROM webhooks w
         LEFT JOIN crm_records r ON r.webhook_id = w.id AND r.lead_id = $2
         CROSS JOIN LATERAL (
             SELECT count(*) FILTER (WHERE e.state IN ('queued', 'running')) AS pending,
                 count(*) FILTER (WHERE e.state NOT IN ('queued', 'running', 'delivered'))
                     AS failed
             FROM webhook_events e
             WHERE e.project_id = w.project_id AND e.webhook_id = w.id AND e.lead_id = $2
         ) n
         LEFT JOIN LATERAL (
             SELECT e.last_attempt_at, e.outcome, e.http_status, e.error,
                 CASE WHEN e.state = 'queued' THEN e.due_at END AS retry_at
             FROM webhook_events e
             WHERE e.project_id = w.project_id AND e.webhook_id = w.id AND e.lead_id = $2
               AND e.last_attempt_at IS NOT NULL
             ORDER BY e.last_attempt_at DESC, e.id DESC
             LIMIT 1
         ) l ON true
         WHERE w.project_id = $1 AND w.kind IN ('hubspot', 'pipedrive')
         ORDER BY w.created_at, w.seq";
    let mut syncs = Vec::new();
    for row in all(c, sql, &[&project.0, &lead.0]).await? {
        syncs.push(LeadSync {
            kind: rows::parse("webhooks.kind", row.try_get("kind")?)?,
            record: CrmRecord {
                contact_id: row.try_get("contact_id")?,
                crm_lead_id: row.try_get("crm_lead_id")?,
                deal_id: row.try_get("deal_id")?,
            },
            pending: count("webhook_events.pending", row.try_get("pending")?)?,
            failed: count("webhook_events.failed", row.try_get("failed")?)?,
            last_attempt: attempt(&row)?,
        });
    }
    Ok(syncs)
}

/// What the CRM of sync `webhook` calls `lead` ([`LeadWebhooks::crm_record`](leadtrack_core::LeadWebhooks::crm_record)).
pub(crate) async fn crm_record(
    c: &impl GenericClient,
    webhook: Uuid,
    lead: LeadId,
) -> Result<CrmRecord, Error> {
    let found = one(
        c,
        "SELECT contact_id, crm_lead_id, deal_id FROM crm_records
         WHERE webhook_id = $1 AND lead_id = $2",
        &[&webhook, &lead.0],
    )
    .await?;
    Ok(match found {
        Some(row) => CrmRecord {
            contact_id: row.try_get(0)?,
            crm_lead_id: row.try_get(1)?,
            deal_id: row.try_get(2)?,
        },
        None => CrmRecord::default(),
    })
}

/// Records what the CRM of sync `webhook` calls `lead`.
pub(crate) async fn save_crm_record(
    c: &impl GenericClient,
    webhook: Uuid,
    lead: LeadId,
    record: &CrmRecord,
) -> Result<(), Error> {
    run(
        c,
        "INSERT INTO crm_records (webhook_id, lead_id, contact_id, crm_lead_id, deal_id)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (webhook_id, lead_id) DO UPDATE SET contact_id = excluded.contact_id,
             crm_lead_id = excluded.crm_lead_id, deal_id = excluded.deal_id",
        &[
            &webhook,
            &lead.0,
            &record.contact_id,
            &record.crm_lead_id,
            &record.deal_id,
        ],
    )
    .await?;
    Ok(())
}

/// Removes a webhook of the project and its events; `false` when the project has no such
/// webhook. The webhook's row is locked first: a worker holding one of its events finishes
/// its statement first, and an event being queued for it waits, then finds it gone.
pub(crate) async fn remove(
    c: &impl GenericClient,
    project: ProjectId,
    id: Uuid,
) -> Result<bool, Error> {
    let found = one(
        c,
        "SELECT 1 FROM webhooks WHERE project_id = $1 AND id = $2 FOR UPDATE",
        &[&project.0, &id],
    )
    .await?;
    if found.is_none() {
        return Ok(false);
    }
    run(
        c,
        "DELETE FROM webhook_events WHERE project_id = $1 AND webhook_id = $2",
        &[&project.0, &id],
    )
    .await?;
    run(c, "DELETE FROM crm_records WHERE webhook_id = $1", &[&id]).await?;
    run(
        c,
        "DELETE FROM webhooks WHERE project_id = $1 AND id = $2",
        &[&project.0, &id],
    )
    .await?;
    Ok(true)
}

/// Queues `event` (id `event_id`, at `now`) about `lead` for every webhook of the project
/// subscribed to it, with the lead as it is now; part of the transaction that made the
/// change. A project without such a webhook costs one indexed lookup. Whether an event was
/// queued (for the workers to be told, once the transaction commits).
///
/// The webhooks' rows are locked (`FOR KEY SHARE`, as the events' foreign key would lock
/// them anyway) as they are found: a webhook being removed is waited for, then passed over,
/// instead of failing the insert of its event on the foreign key.
pub(crate) async fn enqueue(
    c: &impl GenericClient,
    project: ProjectId,
    lead: LeadId,
    event: WebhookEvent,
    event_id: Uuid,
    rating: Option<Rating<'_>>,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    let hooks = all(
        c,
        "SELECT id, kind FROM webhooks WHERE project_id = $1 AND events & $2 != 0
         FOR KEY SHARE",
        &[&project.0, &WebhookEvents::from_iter([event]).bits()],
    )
    .await?;
    if hooks.is_empty() {
        return Ok(false);
    }
    let project_row = admin::project(c, project).await?;
    let stored = lookup::find(c, project, &LeadIdentifier::LeadId(lead)).await?;
    let body = WebhookBody::new(event, event_id, now, &project_row, &stored, rating).to_json();
    let now = to_millis(&now);
    for hook in hooks {
        let (id, kind): (Uuid, String) = (hook.try_get(0)?, hook.try_get(1)?);
        let kind: WebhookKind = rows::parse("webhooks.kind", kind)?;
        run(
            c,
            "INSERT INTO webhook_events (project_id, webhook_id, event_id, event, lead_id,
                occurred_at, body, state, due_at, crm)
             VALUES ($1, $2, $3, $4, $5, $6, $7, 'queued', $6, $8)
             ON CONFLICT (project_id, webhook_id, event_id) DO NOTHING",
            &[
                &project.0,
                &id,
                &event_id,
                &event.as_ref(),
                &lead.0,
                &now,
                &body,
                &kind.crm().is_some(),
            ],
        )
        .await?;
    }
    Ok(true)
}

/// Leases the event delivery due soonest of a webhook that posts: a queued one due by
/// `now`, or a running one whose lease has lapsed (its worker died). Concurrent claims take
/// different deliveries ([`due`]).
pub(crate) async fn claim(
    c: &impl GenericClient,
    vault: &Vault,
    now: DateTime<Utc>,
    lease_for: Duration,
) -> Result<Option<ClaimedWebhookEvent>, Error> {
    let Some((project, id)) = due(c, ("webhook_events", "NOT crm"), to_millis(&now)).await? else {
        return Ok(None);
    };
    let lease = new_lease(now, lease_for)?;
    let leased = all(
        c,
        "UPDATE webhook_events SET state = 'running', lease_token = $3, lease_expires_at = $4
         WHERE project_id = $1 AND id = $2
         RETURNING id, webhook_id, event, event_id, lead_id, occurred_at, attempts, body",
        &[&project, &id, &lease.token, &to_millis(&lease.expires_at)],
    )
    .await?;
    Ok(claimed(c, vault, project, lease, &leased).await?.pop())
}

/// Leases the due deliveries of the CRM sync due soonest that no worker holds (none of its
/// deliveries running on a live lease): as many as its kind claims together, in the order
/// their events were queued. The sync's webhook row is locked while it is checked and
/// leased, so two claims never both take one sync; a sync another claim is leasing is left
/// to it. The lock (`NO KEY UPDATE`) does not hold back a lead's events queued meanwhile,
/// which share the row (`KEY SHARE`; the two do not conflict,
/// <https://www.postgresql.org/docs/current/explicit-locking.html#LOCKING-ROWS>).
pub(crate) async fn claim_sync(
    c: &impl GenericClient,
    vault: &Vault,
    now: DateTime<Utc>,
    lease_for: Duration,
) -> Result<Vec<ClaimedWebhookEvent>, Error> {
    let now_ms = to_millis(&now);
    let free = "crm AND NOT EXISTS (SELECT 1 FROM webhook_events r
        WHERE r.project_id = webhook_events.project_id AND r.webhook_id = webhook_events.webhook_id
          AND r.state = 'running' AND r.lease_expires_at > $1)";
    let Some((project, id)) = due(c, ("webhook_events", free), now_ms).await? else {
        return Ok(Vec::new());
    };
    let sync = one(
        c,
        "SELECT w.id, w.kind FROM webhook_events e
         JOIN webhooks w ON w.project_id = e.project_id AND w.id = e.webhook_id
         WHERE e.project_id = $1 AND e.id = $2
         FOR NO KEY UPDATE OF w SKIP LOCKED",
        &[&project, &id],
    )
    .await?;
    let Some(sync) = sync else {
        return Ok(Vec::new());
    };
    let (webhook, kind): (Uuid, String) = (sync.try_get(0)?, sync.try_get(1)?);
    let kind: WebhookKind = rows::parse("webhooks.kind", kind)?;
    // Read again under the lock: a claim that held it has committed its lease.
    let held = one(
        c,
        "SELECT 1 FROM webhook_events WHERE project_id = $1 AND webhook_id = $2
           AND state = 'running' AND lease_expires_at > $3 LIMIT 1",
        &[&project, &webhook, &now_ms],
    )
    .await?;
    if held.is_some() {
        return Ok(Vec::new());
    }
    let lease = new_lease(now, lease_for)?;
    let limit = i64::from(kind.claimed_together().unwrap_or(1));
    let mut leased = all(
        c,
        // Picked once (materialized): a subquery in the WHERE may run again per row and,
        // seeing the rows it just leased as no longer due, pick more than the limit.
        "WITH picked AS MATERIALIZED (
             SELECT id FROM webhook_events
             WHERE project_id = $1 AND webhook_id = $2
               AND ((state = 'queued' AND due_at <= $3)
                 OR (state = 'running' AND lease_expires_at <= $3))
             ORDER BY id LIMIT $6
             FOR UPDATE)
         UPDATE webhook_events e
         SET state = 'running', lease_token = $4, lease_expires_at = $5
         FROM picked WHERE e.project_id = $1 AND e.id = picked.id
         RETURNING e.id, e.webhook_id, e.event, e.event_id, e.lead_id, e.occurred_at,
                   e.attempts, e.body",
        &[
            &project,
            &webhook,
            &now_ms,
            &lease.token,
            &to_millis(&lease.expires_at),
            &limit,
        ],
    )
    .await?;
    leased.sort_by_key(|row| row.try_get::<_, i64>(0).unwrap_or_default());
    claimed(c, vault, project, lease, &leased).await
}

/// The claimed deliveries `leased` (of one webhook), with the webhook as it is now.
async fn claimed(
    c: &impl GenericClient,
    vault: &Vault,
    project: i64,
    lease: Lease,
    leased: &[Row],
) -> Result<Vec<ClaimedWebhookEvent>, Error> {
    let Some(first) = leased.first() else {
        return Ok(Vec::new());
    };
    let hook_id: Uuid = first.try_get(1)?;
    let sql =
        format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks w WHERE w.project_id = $1 AND w.id = $2");
    let hook = match one(c, &sql, &[&project, &hook_id]).await? {
        Some(row) => webhook(&row, vault)?,
        None => return Err(admin::not_found(Entity::Webhook)),
    };
    leased
        .iter()
        .map(|row| {
            let attempts: i32 = row.try_get(6)?;
            Ok(ClaimedWebhookEvent {
                id: row.try_get(0)?,
                lease,
                webhook: hook.clone(),
                event: rows::parse("webhook_events.event", row.try_get(2)?)?,
                event_id: row.try_get(3)?,
                lead_id: LeadId(row.try_get(4)?),
                occurred_at: from_millis(row.try_get(5)?),
                attempts: u32::try_from(attempts).map_err(|_| Error::Corrupt {
                    column: "webhook_events.attempts",
                    value: attempts.to_string(),
                })?,
                body: row.try_get(7)?,
            })
        })
        .collect()
}

/// Records an attempt on a claimed event delivery (named by its id alone) and releases
/// the lease: a retry is queued again, due at its `retry_at`; any other outcome ends the
/// delivery, and a delivered one's body is dropped. The delivery's row is locked while the
/// lease is checked. Errors: [`Conflict::WebhookLeaseLost`]; [`Entity::Webhook`] not found
/// when the delivery is gone; [`StoreError::Invalid`] for a retry without its time.
pub(crate) async fn record_attempt(
    c: &impl GenericClient,
    id: i64,
    lease: Uuid,
    attempt: &WebhookAttempt,
) -> Result<(), Error> {
    let held = one(
        c,
        "SELECT project_id, state, lease_token FROM webhook_events WHERE id = $1 FOR UPDATE",
        &[&id],
    )
    .await?
    .ok_or_else(|| admin::not_found(Entity::Webhook))?;
    let project: i64 = held.try_get(0)?;
    let state: &str = held.try_get(1)?;
    let token: Option<Uuid> = held.try_get(2)?;
    if state != "running" || token != Some(lease) {
        return Err(Error::Store(StoreError::Conflict(
            Conflict::WebhookLeaseLost(id),
        )));
    }
    let (state, due_at) = attempt.next_state().ok_or_else(|| {
        Error::Store(StoreError::Invalid(
            "a retry needs the time to retry at".to_owned(),
        ))
    })?;
    let due_at = due_at.as_ref().map(to_millis);
    // A delivered body is not needed again: only the record of the delivery stays.
    run(
        c,
        "UPDATE webhook_events SET state = $3, attempts = attempts + 1,
            due_at = coalesce($4, due_at), lease_token = NULL, lease_expires_at = NULL,
            last_attempt_at = $5, outcome = $6, http_status = $7, error = $8,
            body = CASE WHEN $3 = 'delivered' THEN '' ELSE body END
         WHERE project_id = $1 AND id = $2",
        &[
            &project,
            &id,
            &state,
            &due_at,
            &to_millis(&attempt.at),
            &attempt.outcome.as_ref(),
            &attempt.http_status.map(i32::from),
            &attempt.error,
        ],
    )
    .await?;
    Ok(())
}
