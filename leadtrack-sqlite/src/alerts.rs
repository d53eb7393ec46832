//! Alerts: queued in the write that makes each due, taken once by the alert worker; and
//! each project's chat channels.

use chrono::{DateTime, Utc};
use leadtrack_core::alert::{AlertKind, ChatChannel, ChatKind, QueuedAlert, webhook_url};
use leadtrack_core::store::StoreError;
use leadtrack_core::target::Targets;
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::{LeadId, ProjectId};
use leadtrack_core::vault::{CHAT_CHANNEL_URL, Vault};
use rusqlite::Connection;

use crate::rows::{self, Error};

/// Queues an alert of `kind` about the lead.
pub(crate) fn enqueue(
    conn: &Connection,
    (project, lead): (ProjectId, LeadId),
    kind: AlertKind,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    conn.prepare_cached(
        "INSERT INTO alert_queue (project_id, lead_id, kind, created_at) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute((
        project.0,
        lead.0,
        serde_json::to_string(&kind)?,
        to_millis(&now),
    ))?;
    Ok(())
}

/// [`leadtrack_core::JobQueue::take_alerts`]: deleted as they are read, in the writer's
/// transaction.
pub(crate) fn take(conn: &Connection, limit: u32) -> Result<Vec<QueuedAlert>, Error> {
    conn.prepare_cached(
        "DELETE FROM alert_queue WHERE id IN (SELECT id FROM alert_queue ORDER BY id LIMIT ?1)
         RETURNING id, project_id, lead_id, kind, created_at",
    )?
    .query_and_then([limit], |row| {
        Ok(QueuedAlert {
            id: row.get(0)?,
            project: ProjectId(row.get(1)?),
            lead: LeadId(row.get(2)?),
            kind: serde_json::from_str(&row.get::<_, String>(3)?)?,
            at: from_millis(row.get(4)?),
        })
    })?
    .collect::<Result<Vec<_>, Error>>()
    .map(|mut taken| {
        taken.sort_unstable_by_key(|alert| alert.id);
        taken
    })
}

/// [`leadtrack_core::Admin::chat_channels`].
pub(crate) fn channels(
    conn: &Connection,
    vault: &Vault,
    project: ProjectId,
) -> Result<Vec<ChatChannel>, Error> {
    let mut found: Vec<ChatChannel> = conn
        .prepare_cached("SELECT kind, url FROM chat_channels WHERE project_id = ?1")?
        .query_and_then([project.0], |row| {
            Ok::<_, Error>(ChatChannel {
                kind: rows::parse("chat_channels.kind", row.get(0)?)?,
                url: vault.open(CHAT_CHANNEL_URL, &row.get::<_, String>(1)?)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    found.sort_by_key(|channel| channel.kind as u8);
    Ok(found)
}

/// [`leadtrack_core::Admin::set_chat_channel`].
pub(crate) fn set_channel(
    conn: &Connection,
    vault: &Vault,
    project: ProjectId,
    kind: ChatKind,
    url: Option<&str>,
) -> Result<(), Error> {
    match url {
        None => {
            conn.prepare_cached("DELETE FROM chat_channels WHERE project_id = ?1 AND kind = ?2")?
                .execute((project.0, kind.as_ref()))?;
        }
        Some(url) => {
            let url = webhook_url(url, &Targets::any())
                .map_err(|e| Error::Store(StoreError::Invalid(e)))?;
            conn.prepare_cached(
                "INSERT INTO chat_channels (project_id, kind, url) VALUES (?1, ?2, ?3)
                 ON CONFLICT (project_id, kind) DO UPDATE SET url = excluded.url",
            )?
            .execute((
                project.0,
                kind.as_ref(),
                vault.seal(CHAT_CHANNEL_URL, &url),
            ))?;
        }
    }
    Ok(())
}
