//! Lead webhooks and their queue of events (`webhook_events`: one row per webhook and event
//! id, in states `queued`, `running`, then `delivered`, `failed` or `skipped`).

use chrono::{DateTime, Duration, Utc};
use leadtrack_core::api::{Rating, WebhookBody};
use leadtrack_core::crm::{CrmOptions, CrmRecord};
use leadtrack_core::integration::Secret;
use leadtrack_core::job::Lease;
use leadtrack_core::store::{Conflict, Entity, StoreError};
use leadtrack_core::time::{from_millis, to_millis, truncate_to_millis};
use leadtrack_core::types::{LeadId, LeadIdentifier, ProjectId};
use leadtrack_core::vault::{Vault, WEBHOOK_SECRET};
use leadtrack_core::webhook::{
    ClaimedWebhookEvent, LeadSync, NewWebhook, Webhook, WebhookAttempt, WebhookError, WebhookEvent,
    WebhookEvents, WebhookKind, WebhookStatus,
};
use rusqlite::{Connection, OptionalExtension, Row};
use uuid::Uuid;

use crate::rows::{self, Error};
use crate::{admin, lookup};

const WEBHOOK_COLUMNS: &str = "id, project_id, url, secret, events, created_at, kind, options";

fn webhook(row: &Row<'_>, vault: &Vault) -> Result<Webhook, Error> {
    Ok(Webhook {
        id: rows::parse("webhooks.id", row.get(0)?)?,
        project_id: ProjectId(row.get(1)?),
        url: row.get(2)?,
        secret: Secret::new(vault.open(WEBHOOK_SECRET, &row.get::<_, String>(3)?)?),
        events: WebhookEvents::from_bits(row.get(4)?),
        created_at: from_millis(row.get(5)?),
        kind: rows::parse("webhooks.kind", row.get(6)?)?,
        crm: row
            .get::<_, Option<String>>(7)?
            .map(|json| {
                CrmOptions::from_json(&json).ok_or(Error::Corrupt {
                    column: "webhooks.options",
                    value: json,
                })
            })
            .transpose()?,
    })
}

fn invalid(err: WebhookError) -> Error {
    Error::Store(StoreError::Invalid(err.to_string()))
}

pub(crate) fn create(
    conn: &Connection,
    vault: &Vault,
    project: ProjectId,
    new: NewWebhook,
    now: DateTime<Utc>,
) -> Result<Webhook, Error> {
    admin::project(conn, project)?;
    new.validate().map_err(invalid)?;
    let count: i64 = conn
        .prepare_cached("SELECT count(*) FROM webhooks WHERE project_id = ?1 AND kind = ?2")?
        .query_row((project.0, new.kind.as_ref()), |row| row.get(0))?;
    new.fits(usize::try_from(count).unwrap_or(usize::MAX))
        .map_err(invalid)?;
    let hook = Webhook {
        id: Uuid::new_v4(),
        project_id: project,
        url: new.url,
        secret: new.secret,
        events: new.events,
        created_at: truncate_to_millis(now),
        kind: new.kind,
        crm: new.crm,
    };
    conn.prepare_cached(
        "INSERT INTO webhooks (id, project_id, url, secret, events, created_at, kind, options)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute((
        hook.id.to_string(),
        project.0,
        &hook.url,
        vault.seal(WEBHOOK_SECRET, hook.secret.expose()),
        hook.events.bits(),
        to_millis(&hook.created_at),
        hook.kind.as_ref(),
        hook.crm.as_ref().map(CrmOptions::to_json),
    ))?;
    Ok(hook)
}

/// Changes webhook `id` of the project ([`LeadWebhooks::update_webhook`](leadtrack_core::LeadWebhooks::update_webhook)).
pub(crate) fn update(
    conn: &Connection,
    vault: &Vault,
    (project, id): (ProjectId, Uuid),
    new: NewWebhook,
) -> Result<Webhook, Error> {
    new.validate().map_err(invalid)?;
    let changed = conn
        .prepare_cached(
            "UPDATE webhooks SET url = ?3, secret = ?4, events = ?5, options = ?6
             WHERE project_id = ?1 AND id = ?2 AND kind = ?7",
        )?
        .execute((
            project.0,
            id.to_string(),
            &new.url,
            vault.seal(WEBHOOK_SECRET, new.secret.expose()),
            new.events.bits(),
            new.crm.as_ref().map(CrmOptions::to_json),
            new.kind.as_ref(),
        ))?;
    if changed == 0 {
        return Err(Error::Store(StoreError::NotFound(Entity::Webhook)));
    }
    by_id(conn, vault, &id.to_string())
}

/// The webhook `id`. Errors: [`Entity::Webhook`] not found.
fn by_id(conn: &Connection, vault: &Vault, id: &str) -> Result<Webhook, Error> {
    conn.prepare_cached(&format!(
        "SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE id = ?1"
    ))?
    .query_and_then([id], |row| webhook(row, vault))?
    .next()
    .transpose()?
    .ok_or(Error::Store(StoreError::NotFound(Entity::Webhook)))
}

pub(crate) fn list(
    conn: &Connection,
    vault: &Vault,
    project: ProjectId,
) -> Result<Vec<WebhookStatus>, Error> {
    let hooks: Vec<Webhook> = conn
        .prepare_cached(&format!(
            "SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE project_id = ?1 ORDER BY created_at, rowid"
        ))?
        .query_and_then([project.0], |row| webhook(row, vault))?
        .collect::<Result<_, _>>()?;
    let mut statuses = Vec::with_capacity(hooks.len());
    for hook in hooks {
        let (pending, delivered, failed, last_attempt) = standing(conn, hook.id, None)?;
        statuses.push(WebhookStatus {
            webhook: hook,
            pending,
            delivered,
            failed,
            last_attempt,
        });
    }
    Ok(statuses)
}

/// How the events of webhook `id` stand (those of `lead` alone, when given): waiting,
/// delivered, failed, and the newest attempt.
fn standing(
    conn: &Connection,
    id: Uuid,
    lead: Option<LeadId>,
) -> Result<(u64, u64, u64, Option<WebhookAttempt>), Error> {
    let (id, lead) = (id.to_string(), lead.map(|lead| lead.0));
    let (mut pending, mut delivered, mut failed) = (0, 0, 0);
    let counts = conn
        .prepare_cached(
            "SELECT state, count(*) FROM webhook_events
             WHERE webhook_id = ?1 AND (?2 IS NULL OR lead_id = ?2) GROUP BY state",
        )?
        .query_map((&id, lead), |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    for (state, count) in counts {
        let count = u64::try_from(count).unwrap_or_default();
        match state.as_str() {
            "queued" | "running" => pending += count,
            "delivered" => delivered += count,
            _ => failed += count,
        }
    }
    let last_attempt = conn
        .prepare_cached(
            "SELECT last_attempt_at, outcome, http_status, error,
                CASE WHEN state = 'queued' THEN due_at END
             FROM webhook_events
             WHERE webhook_id = ?1 AND (?2 IS NULL OR lead_id = ?2) AND last_attempt_at IS NOT NULL
             ORDER BY last_attempt_at DESC, id DESC LIMIT 1",
        )?
        .query_and_then((&id, lead), |row| -> Result<WebhookAttempt, Error> {
            Ok(WebhookAttempt {
                at: from_millis(row.get(0)?),
                outcome: rows::parse("webhook_events.outcome", row.get(1)?)?,
                http_status: row.get(2)?,
                error: row.get(3)?,
                retry_at: row.get::<_, Option<i64>>(4)?.map(from_millis),
            })
        })?
        .next()
        .transpose()?;
    Ok((pending, delivered, failed, last_attempt))
}

/// How `lead` stands in each CRM the project syncs to ([`LeadWebhooks::lead_syncs`](leadtrack_core::LeadWebhooks::lead_syncs)).
pub(crate) fn lead_syncs(
    conn: &Connection,
    project: ProjectId,
    lead: LeadId,
) -> Result<Vec<LeadSync>, Error> {
    let syncs = conn
        .prepare_cached(
            "SELECT id, kind FROM webhooks
             WHERE project_id = ?1 AND kind IN ('hubspot', 'pipedrive') ORDER BY created_at, rowid",
        )?
        .query_and_then([project.0], |row| -> Result<(Uuid, WebhookKind), Error> {
            Ok((
                rows::parse("webhooks.id", row.get(0)?)?,
                rows::parse("webhooks.kind", row.get(1)?)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let mut stood = Vec::with_capacity(syncs.len());
    for (id, kind) in syncs {
        let (pending, _, failed, last_attempt) = standing(conn, id, Some(lead))?;
        stood.push(LeadSync {
            kind,
            record: crm_record(conn, id, lead)?,
            pending,
            failed,
            last_attempt,
        });
    }
    Ok(stood)
}

/// What the CRM of sync `webhook` calls `lead` ([`LeadWebhooks::crm_record`](leadtrack_core::LeadWebhooks::crm_record)).
pub(crate) fn crm_record(
    conn: &Connection,
    webhook: Uuid,
    lead: LeadId,
) -> Result<CrmRecord, Error> {
    let found = conn
        .prepare_cached(
            "SELECT contact_id, crm_lead_id, deal_id FROM crm_records
             WHERE webhook_id = ?1 AND lead_id = ?2",
        )?
        .query_row((webhook.to_string(), lead.0), |row| {
            Ok(CrmRecord {
                contact_id: row.get(0)?,
                crm_lead_id: row.get(1)?,
                deal_id: row.get(2)?,
            })
        })
        .optional()?;
    Ok(found.unwrap_or_default())
}

/// Records what the CRM of sync `webhook` calls `lead`.
pub(crate) fn save_crm_record(
    conn: &Connection,
    webhook: Uuid,
    lead: LeadId,
    record: &CrmRecord,
) -> Result<(), Error> {
    conn.prepare_cached(
        "INSERT INTO crm_records (webhook_id, lead_id, contact_id, crm_lead_id, deal_id)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (webhook_id, lead_id) DO UPDATE SET contact_id = excluded.contact_id,
             crm_lead_id = excluded.crm_lead_id, deal_id = excluded.deal_id",
    )?
    .execute((
        webhook.to_string(),
        lead.0,
        &record.contact_id,
        &record.crm_lead_id,
        &record.deal_id,
    ))?;
    Ok(())
}

pub(crate) fn remove(conn: &Connection, project: ProjectId, id: Uuid) -> Result<bool, Error> {
    let id = id.to_string();
    let found = conn
        .prepare_cached("SELECT 1 FROM webhooks WHERE id = ?1 AND project_id = ?2")?
        .query_row((&id, project.0), |_| Ok(()))
        .optional()?;
    if found.is_none() {
        return Ok(false);
    }
    conn.prepare_cached("DELETE FROM webhook_events WHERE webhook_id = ?1")?
        .execute([&id])?;
    conn.prepare_cached("DELETE FROM crm_records WHERE webhook_id = ?1")?
        .execute([&id])?;
    conn.prepare_cached("DELETE FROM webhooks WHERE id = ?1")?
        .execute([&id])?;
    Ok(true)
}

/// Queues `event` (id `event_id`, at `now`) about `lead` for every webhook of the project
/// subscribed to it, with the lead as it is now; part of the transaction that made the
/// change. A project without such a webhook costs one indexed lookup.
pub(crate) fn enqueue(
    conn: &Connection,
    project: ProjectId,
    lead: LeadId,
    event: WebhookEvent,
    event_id: Uuid,
    rating: Option<Rating<'_>>,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let hooks: Vec<(String, String)> = conn
        .prepare_cached("SELECT id, kind FROM webhooks WHERE project_id = ?1 AND events & ?2 != 0")?
        .query_map(
            (project.0, WebhookEvents::from_iter([event]).bits()),
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?
        .collect::<Result<_, _>>()?;
    if hooks.is_empty() {
        return Ok(());
    }
    let project_row = admin::project(conn, project)?;
    let stored = lookup::find(conn, project, &LeadIdentifier::LeadId(lead))?;
    let body = WebhookBody::new(event, event_id, now, &project_row, &stored, rating).to_json();
    let now = to_millis(&now);
    let mut insert = conn.prepare_cached(
        "INSERT INTO webhook_events (webhook_id, event_id, event, lead_id, occurred_at, body,
            state, due_at, crm)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'queued', ?5, ?7)
         ON CONFLICT (webhook_id, event_id) DO NOTHING",
    )?;
    let event_id = event_id.to_string();
    for (hook, kind) in hooks {
        let kind: WebhookKind = rows::parse("webhooks.kind", kind)?;
        let crm = kind.crm().is_some();
        insert.execute((&hook, &event_id, event.as_ref(), lead.0, now, &body, crm))?;
    }
    Ok(())
}

/// Leases the delivery due soonest of a webhook that posts: a queued one due by `now`, or
/// a running one whose lease has lapsed (its worker died).
pub(crate) fn claim(
    conn: &Connection,
    vault: &Vault,
    now: DateTime<Utc>,
    lease_for: Duration,
) -> Result<Option<ClaimedWebhookEvent>, Error> {
    let Some(id) = rows::due(conn, ("webhook_events", "crm = 0"), to_millis(&now))? else {
        return Ok(None);
    };
    Ok(lease(conn, vault, &[id], now, lease_for)?.pop())
}

/// Leases the due deliveries of the CRM sync due soonest that no worker holds (none of its
/// deliveries running on a live lease): as many as its kind claims together, in the order
/// their events were queued. The store's one writer makes the check and the lease one step.
pub(crate) fn claim_sync(
    conn: &Connection,
    vault: &Vault,
    now: DateTime<Utc>,
    lease_for: Duration,
) -> Result<Vec<ClaimedWebhookEvent>, Error> {
    let free = "crm = 1 AND NOT EXISTS (SELECT 1 FROM webhook_events r
        WHERE r.webhook_id = e.webhook_id AND r.state = 'running' AND r.lease_expires_at > ?1)";
    let Some(id) = rows::due(conn, ("webhook_events e", free), to_millis(&now))? else {
        return Ok(Vec::new());
    };
    let (webhook, kind) = conn
        .prepare_cached(
            "SELECT w.id, w.kind FROM webhook_events e JOIN webhooks w ON w.id = e.webhook_id
             WHERE e.id = ?1",
        )?
        .query_row([id], |row| Ok((row.get::<_, String>(0)?, row.get(1)?)))?;
    let kind: WebhookKind = rows::parse("webhooks.kind", kind)?;
    let ids: Vec<i64> = conn
        .prepare_cached(
            "SELECT id FROM webhook_events
             WHERE webhook_id = ?1
               AND ((state = 'queued' AND due_at <= ?2)
                 OR (state = 'running' AND lease_expires_at <= ?2))
             ORDER BY id LIMIT ?3",
        )?
        .query_map(
            (
                webhook,
                to_millis(&now),
                kind.claimed_together().unwrap_or(1),
            ),
            |row| row.get(0),
        )?
        .collect::<Result<_, _>>()?;
    lease(conn, vault, &ids, now, lease_for)
}

/// Leases the deliveries `ids` (of one webhook) to one worker until `now + lease_for`,
/// and reads them with their webhook as it is now.
fn lease(
    conn: &Connection,
    vault: &Vault,
    ids: &[i64],
    now: DateTime<Utc>,
    lease_for: Duration,
) -> Result<Vec<ClaimedWebhookEvent>, Error> {
    let lease = Lease {
        token: Uuid::new_v4(),
        expires_at: truncate_to_millis(now + lease_for),
    };
    let mut claimed = Vec::with_capacity(ids.len());
    let mut hook: Option<Webhook> = None;
    for &id in ids {
        conn.prepare_cached(
            "UPDATE webhook_events SET state = 'running', lease_token = ?2, lease_expires_at = ?3
             WHERE id = ?1",
        )?
        .execute((id, lease.token.to_string(), to_millis(&lease.expires_at)))?;
        let (hook_id, event, event_id, lead, occurred_at, attempts, body) = conn
            .prepare_cached(
                "SELECT webhook_id, event, event_id, lead_id, occurred_at, attempts, body
                 FROM webhook_events WHERE id = ?1",
            )?
            .query_row([id], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, i64>(3)?,
                    row.get::<_, i64>(4)?,
                    row.get::<_, u32>(5)?,
                    row.get::<_, String>(6)?,
                ))
            })?;
        // The deliveries are of one webhook: it is read once.
        let webhook = match &hook {
            Some(hook) => hook.clone(),
            None => hook.insert(by_id(conn, vault, &hook_id)?).clone(),
        };
        claimed.push(ClaimedWebhookEvent {
            id,
            lease,
            webhook,
            event: rows::parse("webhook_events.event", event)?,
            event_id: rows::parse("webhook_events.event_id", event_id)?,
            lead_id: LeadId(lead),
            occurred_at: from_millis(occurred_at),
            attempts,
            body,
        });
    }
    Ok(claimed)
}

pub(crate) fn record_attempt(
    conn: &Connection,
    id: i64,
    token: Uuid,
    attempt: &WebhookAttempt,
) -> Result<(), Error> {
    let held: Option<(String, Option<String>)> = conn
        .prepare_cached("SELECT state, lease_token FROM webhook_events WHERE id = ?1")?
        .query_row([id], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?;
    match held {
        None => return Err(Error::Store(StoreError::NotFound(Entity::Webhook))),
        Some((state, Some(lease))) if state == "running" && lease == token.to_string() => {}
        Some(_) => {
            return Err(Error::Store(StoreError::Conflict(
                Conflict::WebhookLeaseLost(id),
            )));
        }
    }
    let (state, due_at) = attempt.next_state().ok_or_else(|| {
        Error::Store(StoreError::Invalid(
            "a retry needs the time to retry at".to_owned(),
        ))
    })?;
    let due_at = due_at.as_ref().map(to_millis);
    // A delivered body is not needed again: only the record of the delivery stays.
    conn.prepare_cached(
        "UPDATE webhook_events SET state = ?2, attempts = attempts + 1,
            due_at = coalesce(?3, due_at), lease_token = NULL, lease_expires_at = NULL,
            last_attempt_at = ?4, outcome = ?5, http_status = ?6, error = ?7,
            body = CASE WHEN ?2 = 'delivered' THEN '' ELSE body END
         WHERE id = ?1",
    )?
    .execute((
        id,
        state,
        due_at,
        to_millis(&attempt.at),
        attempt.outcome.as_ref(),
        attempt.http_status,
        &attempt.error,
    ))?;
    Ok(())
}
