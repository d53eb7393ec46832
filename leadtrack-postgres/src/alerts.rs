//! Alerts: queued in the transaction that makes each due, taken once by the alert worker
//! (`FOR UPDATE SKIP LOCKED`: workers on several machines never take the same alert); and
//! each project's chat channels.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::alert::{AlertKind, ChatChannel, ChatKind, QueuedAlert, webhook_url};
use leadtrack_core::store::StoreError;
use leadtrack_core::target::Targets;
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::{LeadId, ProjectId};
use leadtrack_core::vault::{CHAT_CHANNEL_URL, Vault};

use crate::Error;
use crate::rows::{self, all, run};

/// Queues an alert of `kind` about the lead.
pub(crate) async fn enqueue(
    c: &impl GenericClient,
    (project, lead): (ProjectId, LeadId),
    kind: AlertKind,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    run(
        c,
        "INSERT INTO alert_queue (project_id, lead_id, kind, created_at) VALUES ($1, $2, $3, $4)",
        &[
            &project.0,
            &lead.0,
            &serde_json::to_string(&kind)?,
            &to_millis(&now),
        ],
    )
    .await?;
    Ok(())
}

/// [`leadtrack_core::JobQueue::take_alerts`].
pub(crate) async fn take(c: &impl GenericClient, limit: u32) -> Result<Vec<QueuedAlert>, Error> {
    let rows = all(
        c,
        "DELETE FROM alert_queue WHERE id IN (
             SELECT id FROM alert_queue ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
         RETURNING id, project_id, lead_id, kind, created_at",
        &[&i64::from(limit)],
    )
    .await?;
    let mut taken = Vec::with_capacity(rows.len());
    for row in rows {
        taken.push(QueuedAlert {
            id: row.try_get(0)?,
            project: ProjectId(row.try_get(1)?),
            lead: LeadId(row.try_get(2)?),
            kind: serde_json::from_str(row.try_get::<_, &str>(3)?)?,
            at: from_millis(row.try_get(4)?),
        });
    }
    taken.sort_unstable_by_key(|alert| alert.id);
    Ok(taken)
}

/// [`leadtrack_core::Admin::chat_channels`].
pub(crate) async fn channels(
    c: &impl GenericClient,
    vault: &Vault,
    project: ProjectId,
) -> Result<Vec<ChatChannel>, Error> {
    let rows = all(
        c,
        "SELECT kind, url FROM chat_channels WHERE project_id = $1",
        &[&project.0],
    )
    .await?;
    let mut found = Vec::with_capacity(rows.len());
    for row in rows {
        found.push(ChatChannel {
            kind: rows::parse("chat_channels.kind", row.try_get(0)?)?,
            url: vault.open(CHAT_CHANNEL_URL, row.try_get(1)?)?,
        });
    }
    found.sort_by_key(|channel| channel.kind as u8);
    Ok(found)
}

/// [`leadtrack_core::Admin::set_chat_channel`].
pub(crate) async fn set_channel(
    c: &impl GenericClient,
    vault: &Vault,
    project: ProjectId,
    kind: ChatKind,
    url: Option<&str>,
) -> Result<(), Error> {
    match url {
        None => {
            run(
                c,
                "DELETE FROM chat_channels WHERE project_id = $1 AND kind = $2",
                &[&project.0, &kind.as_ref()],
            )
            .await?;
        }
        Some(url) => {
            let url = webhook_url(url, &Targets::any())
                .map_err(|e| Error::Store(StoreError::Invalid(e)))?;
            run(
                c,
                "INSERT INTO chat_channels (project_id, kind, url) VALUES ($1, $2, $3)
                 ON CONFLICT (project_id, kind) DO UPDATE SET url = excluded.url",
                &[
                    &project.0,
                    &kind.as_ref(),
                    &vault.seal(CHAT_CHANNEL_URL, &url),
                ],
            )
            .await?;
        }
    }
    Ok(())
}
