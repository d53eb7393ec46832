//! Projects, API keys, conversion labels and integration settings.

use chrono::{DateTime, Utc};
use leadtrack_core::inbound::InboundHook;
use leadtrack_core::integration::{IntegrationSettings, Integrations, Secret};
use leadtrack_core::job::Attempt;
use leadtrack_core::key::{ApiKeyInfo, GeneratedKey, KeyHash, KeyRef};
use leadtrack_core::label::{ConversionLabel, LabelMapping, NewLabel, check_order};
use leadtrack_core::oauth::{OAuthGrant, Provider};
use leadtrack_core::project::{NewProject, Project, ProjectSettings};
use leadtrack_core::source::{LeadSource, SourceKind};
use leadtrack_core::store::{Conflict, Entity, StoreError, one_key};
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::{IntegrationKind, ProjectId};
use leadtrack_core::vault::{INBOUND_HOOK, INTEGRATION_SETTINGS, LEAD_SOURCE, OAUTH_GRANT, Vault};
use rusqlite::{Connection, OptionalExtension};
use uuid::Uuid;

use crate::rows::{self, ATTEMPT_COLUMNS, Error, LABEL_COLUMNS, PROJECT_COLUMNS};

fn invalid(message: String) -> Error {
    Error::Store(StoreError::Invalid(message))
}

fn not_found(entity: Entity) -> Error {
    Error::Store(StoreError::NotFound(entity))
}

pub(crate) fn create_project(
    conn: &Connection,
    new: NewProject,
    now: DateTime<Utc>,
) -> Result<Project, Error> {
    let new = new.validate().map_err(invalid)?;
    match project_by_public_id(conn, &new.public_id) {
        Err(Error::Store(StoreError::NotFound(_))) => {}
        Err(err) => return Err(err),
        Ok(_) => {
            return Err(Error::Store(StoreError::Conflict(Conflict::ProjectExists(
                new.public_id,
            ))));
        }
    }
    let lost_mapping = serde_json::to_string(&LabelMapping::default_lost())?;
    conn.prepare_cached(
        "INSERT INTO projects (public_id, name, active, currency, lost_mapping, created_at)
         VALUES (?1, ?2, 1, ?3, ?4, ?5)",
    )?
    .execute((
        &new.public_id,
        &new.name,
        &new.currency,
        &lost_mapping,
        to_millis(&now),
    ))?;
    project(conn, ProjectId(conn.last_insert_rowid()))
}

pub(crate) fn projects(conn: &Connection) -> Result<Vec<Project>, Error> {
    conn.prepare_cached(&format!(
        "SELECT {PROJECT_COLUMNS} FROM projects ORDER BY created_at, id"
    ))?
    .query_and_then([], rows::project)?
    .collect()
}

pub(crate) fn project(conn: &Connection, id: ProjectId) -> Result<Project, Error> {
    conn.prepare_cached(&format!(
        "SELECT {PROJECT_COLUMNS} FROM projects WHERE id = ?1"
    ))?
    .query_and_then([id.0], rows::project)?
    .next()
    .ok_or_else(|| not_found(Entity::Project))?
}

pub(crate) fn project_by_public_id(conn: &Connection, public_id: &str) -> Result<Project, Error> {
    conn.prepare_cached(&format!(
        "SELECT {PROJECT_COLUMNS} FROM projects WHERE public_id = ?1"
    ))?
    .query_and_then([public_id], rows::project)?
    .next()
    .ok_or_else(|| not_found(Entity::Project))?
}

pub(crate) fn update_project(
    conn: &Connection,
    id: ProjectId,
    settings: ProjectSettings,
) -> Result<Project, Error> {
    let mut project = project(conn, id)?;
    settings.apply(&mut project).map_err(invalid)?;
    conn.prepare_cached(
        "UPDATE projects SET name = ?2, currency = ?3, region = ?4, lost_mapping = ?5,
            allowed_origins = ?6, default_consent = ?7, undo_window_seconds = ?8,
            spam_rules = ?9, review_ratings = ?10, retention_days = ?11,
            spam_retention_days = ?12
         WHERE id = ?1",
    )?
    .execute((
        id.0,
        &project.name,
        &project.currency,
        &project.region,
        serde_json::to_string(&project.lost_mapping)?,
        serde_json::to_string(&project.allowed_origins)?,
        serde_json::to_string(&project.default_consent)?,
        project.undo_window_seconds,
        serde_json::to_string(&project.spam_rules)?,
        project.review_ratings,
        project.retention.days,
        project.retention.spam_days,
    ))?;
    Ok(project)
}

pub(crate) fn set_project_active(
    conn: &Connection,
    id: ProjectId,
    active: bool,
) -> Result<Project, Error> {
    let changed = conn
        .prepare_cached("UPDATE projects SET active = ?2 WHERE id = ?1")?
        .execute((id.0, active))?;
    if changed == 0 {
        return Err(not_found(Entity::Project));
    }
    project(conn, id)
}

pub(crate) fn insert_api_key(
    conn: &Connection,
    project_id: ProjectId,
    key: &GeneratedKey,
    now: DateTime<Utc>,
) -> Result<ApiKeyInfo, Error> {
    project(conn, project_id)?;
    conn.prepare_cached(
        "INSERT INTO api_keys (project_id, key_hash, prefix, created_at) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute((project_id.0, &key.hash.0[..], &key.prefix, to_millis(&now)))?;
    Ok(ApiKeyInfo {
        prefix: key.prefix.clone(),
        created_at: leadtrack_core::time::truncate_to_millis(now),
        revoked_at: None,
    })
}

fn key_info(row: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, ApiKeyInfo)> {
    Ok((
        row.get(0)?,
        ApiKeyInfo {
            prefix: row.get(1)?,
            created_at: from_millis(row.get(2)?),
            revoked_at: row.get::<_, Option<i64>>(3)?.map(from_millis),
        },
    ))
}

pub(crate) fn api_keys(conn: &Connection, project: ProjectId) -> Result<Vec<ApiKeyInfo>, Error> {
    conn.prepare_cached(
        "SELECT id, prefix, created_at, revoked_at FROM api_keys
         WHERE project_id = ?1 ORDER BY created_at, id",
    )?
    .query_map([project.0], key_info)?
    .map(|row| Ok(row?.1))
    .collect()
}

pub(crate) fn revoke_api_key(
    conn: &Connection,
    project: ProjectId,
    key: &KeyRef,
    now: DateTime<Utc>,
) -> Result<ApiKeyInfo, Error> {
    let matches: Vec<(i64, ApiKeyInfo)> = match key {
        KeyRef::Hash(hash) => conn
            .prepare_cached(
                "SELECT id, prefix, created_at, revoked_at FROM api_keys
                 WHERE project_id = ?1 AND key_hash = ?2",
            )?
            .query_map((project.0, &hash.0[..]), key_info)?
            .collect::<Result<_, _>>()?,
        KeyRef::Prefix(prefix) => conn
            .prepare_cached(
                "SELECT id, prefix, created_at, revoked_at FROM api_keys
                 WHERE project_id = ?1 AND substr(prefix, 1, length(?2)) = ?2",
            )?
            .query_map((project.0, prefix), key_info)?
            .collect::<Result<_, _>>()?,
    };
    let (id, mut info) = one_key(key, matches)?;
    if info.revoked_at.is_none() {
        conn.prepare_cached("UPDATE api_keys SET revoked_at = ?2 WHERE id = ?1")?
            .execute((id, to_millis(&now)))?;
        info.revoked_at = Some(leadtrack_core::time::truncate_to_millis(now));
    }
    Ok(info)
}

pub(crate) fn authenticate(conn: &Connection, key: &KeyHash) -> Result<Project, Error> {
    conn.prepare_cached(&format!(
        "SELECT {PROJECT_COLUMNS} FROM projects WHERE id =
            (SELECT project_id FROM api_keys WHERE key_hash = ?1 AND revoked_at IS NULL)"
    ))?
    .query_and_then([&key.0[..]], rows::project)?
    .next()
    .ok_or_else(|| not_found(Entity::ApiKey))?
}

pub(crate) fn create_label(
    conn: &Connection,
    project_id: ProjectId,
    new: NewLabel,
    now: DateTime<Utc>,
) -> Result<ConversionLabel, Error> {
    project(conn, project_id)?;
    let new = new.validate().map_err(invalid)?;
    let label = ConversionLabel {
        id: Uuid::new_v4(),
        project_id,
        name: new.name,
        mark_as_done: new.mark_as_done,
        mapping: new.mapping,
        created_at: leadtrack_core::time::truncate_to_millis(now),
        archived: false,
    };
    // Last in the project's order.
    conn.prepare_cached(
        "INSERT INTO labels (id, project_id, name, mark_as_done, mapping, created_at, position)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6,
             (SELECT coalesce(max(position) + 1, 0) FROM labels WHERE project_id = ?2))",
    )?
    .execute((
        label.id.to_string(),
        project_id.0,
        &label.name,
        label.mark_as_done,
        serde_json::to_string(&label.mapping)?,
        to_millis(&now),
    ))?;
    Ok(label)
}

pub(crate) fn labels(conn: &Connection, project: ProjectId) -> Result<Vec<ConversionLabel>, Error> {
    conn.prepare_cached(&format!(
        "SELECT {LABEL_COLUMNS} FROM labels WHERE project_id = ?1
         ORDER BY position, created_at, id"
    ))?
    .query_and_then([project.0], rows::label)?
    .collect()
}

pub(crate) fn label(
    conn: &Connection,
    project: ProjectId,
    id: Uuid,
) -> Result<ConversionLabel, Error> {
    conn.prepare_cached(&format!(
        "SELECT {LABEL_COLUMNS} FROM labels WHERE project_id = ?1 AND id = ?2"
    ))?
    .query_and_then((project.0, id.to_string()), rows::label)?
    .next()
    .ok_or_else(|| not_found(Entity::Label))?
}

pub(crate) fn update_label(
    conn: &Connection,
    project: ProjectId,
    id: Uuid,
    changed: NewLabel,
) -> Result<ConversionLabel, Error> {
    let mut label = label(conn, project, id)?;
    let changed = changed.validate().map_err(invalid)?;
    conn.prepare_cached(
        "UPDATE labels SET name = ?3, mark_as_done = ?4, mapping = ?5
         WHERE project_id = ?1 AND id = ?2",
    )?
    .execute((
        project.0,
        id.to_string(),
        &changed.name,
        changed.mark_as_done,
        serde_json::to_string(&changed.mapping)?,
    ))?;
    label.name = changed.name;
    label.mark_as_done = changed.mark_as_done;
    label.mapping = changed.mapping;
    Ok(label)
}

/// Archives the label, or restores it.
pub(crate) fn set_label_archived(
    conn: &Connection,
    project: ProjectId,
    id: Uuid,
    archived: bool,
) -> Result<ConversionLabel, Error> {
    conn.prepare_cached("UPDATE labels SET archived = ?3 WHERE project_id = ?1 AND id = ?2")?
        .execute((project.0, id.to_string(), archived))?;
    label(conn, project, id)
}

/// Deletes the label if no lead, job or draft has it.
pub(crate) fn delete_label(conn: &Connection, project: ProjectId, id: Uuid) -> Result<(), Error> {
    label(conn, project, id)?;
    let used: bool = conn
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM leads WHERE project_id = ?1 AND conversion_id = ?2)
                 OR EXISTS (SELECT 1 FROM jobs WHERE project_id = ?1 AND conversion_id = ?2)
                 OR EXISTS (SELECT 1 FROM rating_drafts
                            WHERE project_id = ?1 AND conversion_id = ?2)",
        )?
        .query_row((project.0, id.to_string()), |row| row.get(0))?;
    if used {
        return Err(Error::Store(StoreError::Conflict(Conflict::LabelInUse)));
    }
    conn.prepare_cached("DELETE FROM labels WHERE project_id = ?1 AND id = ?2")?
        .execute((project.0, id.to_string()))?;
    Ok(())
}

/// Puts the project's labels in `order`.
pub(crate) fn reorder_labels(
    conn: &Connection,
    project: ProjectId,
    order: &[Uuid],
) -> Result<Vec<ConversionLabel>, Error> {
    let known: Vec<Uuid> = labels(conn, project)?.iter().map(|l| l.id).collect();
    check_order(&known, order).map_err(invalid)?;
    let mut place =
        conn.prepare_cached("UPDATE labels SET position = ?3 WHERE project_id = ?1 AND id = ?2")?;
    for (position, id) in (0_i64..).zip(order) {
        place.execute((project.0, id.to_string(), position))?;
    }
    labels(conn, project)
}

/// The integrations the project has connected, by kind alone: what planning a rating needs,
/// read without opening their sealed settings.
pub(crate) fn connected(
    conn: &Connection,
    project: ProjectId,
) -> Result<Vec<IntegrationKind>, Error> {
    conn.prepare_cached("SELECT kind FROM integrations WHERE project_id = ?1")?
        .query_and_then([project.0], |row| {
            rows::parse("integrations.kind", row.get(0)?)
        })?
        .collect()
}

pub(crate) fn integrations(
    conn: &Connection,
    vault: &Vault,
    project: ProjectId,
) -> Result<Integrations, Error> {
    let mut integrations = Integrations::default();
    let settings = conn
        .prepare_cached("SELECT settings FROM integrations WHERE project_id = ?1")?
        .query_map([project.0], |row| row.get::<_, String>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    for sealed in settings {
        let json = vault.open(INTEGRATION_SETTINGS, &sealed)?;
        integrations.set(serde_json::from_str::<IntegrationSettings>(&json)?);
    }
    Ok(integrations)
}

pub(crate) fn set_integration(
    conn: &Connection,
    vault: &Vault,
    project_id: ProjectId,
    settings: IntegrationSettings,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    project(conn, project_id)?;
    conn.prepare_cached(
        "INSERT INTO integrations (project_id, kind, settings, updated_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (project_id, kind) DO UPDATE SET settings = ?3, updated_at = ?4",
    )?
    .execute((
        project_id.0,
        settings.kind().as_ref(),
        vault.seal(INTEGRATION_SETTINGS, &serde_json::to_string(&settings)?),
        to_millis(&now),
    ))?;
    Ok(())
}

/// Keeps a refresh token the platform issued in place of `old` (see
/// [`IntegrationSettings::rotate_refresh_token`]), in the writer's transaction, so a
/// reconnection in between is never overwritten.
pub(crate) fn rotate_refresh_token(
    conn: &Connection,
    vault: &Vault,
    project: ProjectId,
    kind: IntegrationKind,
    old: &Secret,
    new: Secret,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    let stored: Option<String> = conn
        .prepare_cached("SELECT settings FROM integrations WHERE project_id = ?1 AND kind = ?2")?
        .query_row((project.0, kind.as_ref()), |row| row.get(0))
        .optional()?;
    let Some(stored) = stored else {
        return Ok(false);
    };
    let mut settings: IntegrationSettings =
        serde_json::from_str(&vault.open(INTEGRATION_SETTINGS, &stored)?)?;
    if !settings.rotate_refresh_token(old, new) {
        return Ok(false);
    }
    conn.prepare_cached(
        "UPDATE integrations SET settings = ?3, updated_at = ?4 WHERE project_id = ?1 AND kind = ?2",
    )?
    .execute((
        project.0,
        kind.as_ref(),
        vault.seal(INTEGRATION_SETTINGS, &serde_json::to_string(&settings)?),
        to_millis(&now),
    ))?;
    Ok(true)
}

/// [`leadtrack_core::Admin::oauth_grant`].
pub(crate) fn oauth_grant(
    conn: &Connection,
    vault: &Vault,
    project: ProjectId,
    provider: Provider,
) -> Result<Option<OAuthGrant>, Error> {
    let sealed: Option<String> = conn
        .prepare_cached(
            "SELECT credentials FROM oauth_grants WHERE project_id = ?1 AND provider = ?2",
        )?
        .query_row((project.0, provider.as_ref()), |row| row.get(0))
        .optional()?;
    match sealed {
        Some(sealed) => Ok(Some(serde_json::from_str(
            &vault.open(OAUTH_GRANT, &sealed)?,
        )?)),
        None => Ok(None),
    }
}

/// [`leadtrack_core::Admin::set_oauth_grant`].
pub(crate) fn set_oauth_grant(
    conn: &Connection,
    vault: &Vault,
    project_id: ProjectId,
    provider: Provider,
    grant: Option<&OAuthGrant>,
) -> Result<(), Error> {
    project(conn, project_id)?;
    match grant {
        Some(grant) => conn
            .prepare_cached(
                "INSERT INTO oauth_grants (project_id, provider, credentials) VALUES (?1, ?2, ?3)
                 ON CONFLICT (project_id, provider) DO UPDATE SET credentials = ?3",
            )?
            .execute((
                project_id.0,
                provider.as_ref(),
                vault.seal(OAUTH_GRANT, &serde_json::to_string(grant)?),
            ))?,
        None => conn
            .prepare_cached("DELETE FROM oauth_grants WHERE project_id = ?1 AND provider = ?2")?
            .execute((project_id.0, provider.as_ref()))?,
    };
    Ok(())
}

/// [`leadtrack_core::Admin::lead_source`].
pub(crate) fn lead_source(
    conn: &Connection,
    vault: &Vault,
    project: ProjectId,
    kind: SourceKind,
) -> Result<Option<LeadSource>, Error> {
    let sealed: Option<String> = conn
        .prepare_cached("SELECT settings FROM lead_sources WHERE project_id = ?1 AND kind = ?2")?
        .query_row((project.0, kind.as_ref()), |row| row.get(0))
        .optional()?;
    match sealed {
        Some(sealed) => Ok(Some(serde_json::from_str(
            &vault.open(LEAD_SOURCE, &sealed)?,
        )?)),
        None => Ok(None),
    }
}

/// [`leadtrack_core::Admin::save_inbound_hook`].
pub(crate) fn save_inbound_hook(
    conn: &Connection,
    vault: &Vault,
    hook: &InboundHook,
) -> Result<(), Error> {
    project(conn, hook.project)?;
    let saved = conn
        .prepare_cached(
            "INSERT INTO inbound_hooks (id, project_id, settings, created_at)
             VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (id) DO UPDATE SET settings = ?3 WHERE project_id = ?2",
        )?
        .execute((
            &hook.id,
            hook.project.0,
            vault.seal(INBOUND_HOOK, &hook.settings()),
            to_millis(&hook.created_at),
        ))?;
    if saved == 0 {
        return Err(StoreError::NotFound(Entity::Webhook).into());
    }
    Ok(())
}

/// [`leadtrack_core::Admin::inbound_hooks`], or the one `id` names.
pub(crate) fn inbound_hooks(
    conn: &Connection,
    vault: &Vault,
    (project, id): (Option<ProjectId>, Option<&str>),
) -> Result<Vec<InboundHook>, Error> {
    conn.prepare_cached(
        "SELECT id, project_id, created_at, settings FROM inbound_hooks
         WHERE (?1 IS NULL OR project_id = ?1) AND (?2 IS NULL OR id = ?2)
         ORDER BY created_at, id",
    )?
    .query_and_then((project.map(|p| p.0), id), |row| {
        let clear = (
            row.get::<_, String>(0)?,
            ProjectId(row.get(1)?),
            from_millis(row.get(2)?),
        );
        let sealed: String = row.get(3)?;
        Ok(InboundHook::from_row(
            clear,
            &vault.open(INBOUND_HOOK, &sealed)?,
        )?)
    })?
    .collect()
}

/// [`leadtrack_core::Admin::remove_inbound_hook`].
pub(crate) fn remove_inbound_hook(
    conn: &Connection,
    project: ProjectId,
    id: &str,
) -> Result<bool, Error> {
    let removed = conn
        .prepare_cached("DELETE FROM inbound_hooks WHERE project_id = ?1 AND id = ?2")?
        .execute((project.0, id))?;
    Ok(removed > 0)
}

/// [`leadtrack_core::Admin::lead_sources_routed`].
pub(crate) fn lead_sources_routed(
    conn: &Connection,
    vault: &Vault,
    kind: SourceKind,
    routing: &str,
) -> Result<Vec<(ProjectId, LeadSource)>, Error> {
    conn.prepare_cached(
        "SELECT project_id, settings FROM lead_sources WHERE kind = ?1 AND routing = ?2
         ORDER BY project_id",
    )?
    .query_and_then((kind.as_ref(), routing), |row| {
        let sealed: String = row.get(1)?;
        let source = serde_json::from_str(&vault.open(LEAD_SOURCE, &sealed)?)?;
        Ok((ProjectId(row.get(0)?), source))
    })?
    .collect()
}

/// [`leadtrack_core::Admin::set_lead_source`].
pub(crate) fn set_lead_source(
    conn: &Connection,
    vault: &Vault,
    project_id: ProjectId,
    kind: SourceKind,
    source: Option<&LeadSource>,
) -> Result<(), Error> {
    project(conn, project_id)?;
    match source {
        Some(source) => conn
            .prepare_cached(
                "INSERT INTO lead_sources (project_id, kind, settings, routing)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (project_id, kind) DO UPDATE SET settings = ?3, routing = ?4",
            )?
            .execute((
                project_id.0,
                kind.as_ref(),
                vault.seal(LEAD_SOURCE, &serde_json::to_string(source)?),
                source.routing(),
            ))?,
        None => conn
            .prepare_cached("DELETE FROM lead_sources WHERE project_id = ?1 AND kind = ?2")?
            .execute((project_id.0, kind.as_ref()))?,
    };
    Ok(())
}

pub(crate) fn remove_integration(
    conn: &Connection,
    project: ProjectId,
    kind: IntegrationKind,
) -> Result<bool, Error> {
    let removed = conn
        .prepare_cached("DELETE FROM integrations WHERE project_id = ?1 AND kind = ?2")?
        .execute((project.0, kind.as_ref()))?;
    Ok(removed > 0)
}

/// Read from `last_attempts`, which a trigger keeps (see the schema): no scan of the
/// project's jobs.
pub(crate) fn last_attempts(conn: &Connection, project: ProjectId) -> Result<Vec<Attempt>, Error> {
    let mut attempts: Vec<Attempt> = conn
        .prepare_cached(&format!(
            "SELECT {ATTEMPT_COLUMNS} FROM last_attempts l JOIN attempts a ON a.id = l.attempt_id
             WHERE l.project_id = ?1"
        ))?
        .query_and_then([project.0], rows::attempt)?
        .collect::<Result<_, _>>()?;
    attempts.sort_by_key(|attempt| attempt.integration);
    Ok(attempts)
}
