//! Projects, API keys, conversion labels and integration settings.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::inbound::InboundHook;
use leadtrack_core::integration::{IntegrationSettings, Integrations, Secret};
use leadtrack_core::job::Attempt;
use leadtrack_core::key::{ApiKeyInfo, GeneratedKey, KeyHash, KeyRef};
use leadtrack_core::label::{ConversionLabel, LabelMapping, NewLabel, check_order};
use leadtrack_core::oauth::{OAuthGrant, Provider};
use leadtrack_core::project::{NewProject, Project, ProjectSettings};
use leadtrack_core::source::{LeadSource, SourceKind};
use leadtrack_core::store::{Conflict, Entity, StoreError, one_key};
use leadtrack_core::time::{from_millis, to_millis, truncate_to_millis};
use leadtrack_core::types::{IntegrationKind, ProjectId};
use leadtrack_core::vault::{INBOUND_HOOK, INTEGRATION_SETTINGS, LEAD_SOURCE, OAUTH_GRANT, Vault};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::Error;
use crate::rows::{self, ATTEMPT_COLUMNS, LABEL_COLUMNS, PROJECT_COLUMNS, all, one, run};

pub(crate) fn not_found(entity: Entity) -> Error {
    Error::Store(StoreError::NotFound(entity))
}

fn invalid(message: String) -> Error {
    Error::Store(StoreError::Invalid(message))
}

pub(crate) async fn authenticate(c: &impl GenericClient, key: &KeyHash) -> Result<Project, Error> {
    let sql = format!(
        "SELECT {PROJECT_COLUMNS} FROM projects WHERE id =
            (SELECT project_id FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL)"
    );
    match one(c, &sql, &[&&key.0[..]]).await? {
        Some(row) => rows::project(&row),
        None => Err(not_found(Entity::ApiKey)),
    }
}

pub(crate) async fn project_by_public_id(
    c: &impl GenericClient,
    public_id: &str,
) -> Result<Project, Error> {
    let sql = format!("SELECT {PROJECT_COLUMNS} FROM projects WHERE public_id = $1");
    match one(c, &sql, &[&public_id]).await? {
        Some(row) => rows::project(&row),
        None => Err(not_found(Entity::Project)),
    }
}

pub(crate) async fn project(c: &impl GenericClient, id: ProjectId) -> Result<Project, Error> {
    let sql = format!("SELECT {PROJECT_COLUMNS} FROM projects WHERE id = $1");
    match one(c, &sql, &[&id.0]).await? {
        Some(row) => rows::project(&row),
        None => Err(not_found(Entity::Project)),
    }
}

/// Creates a project; a public id already taken, also by a concurrent create, is a
/// conflict (the unique index decides).
pub(crate) async fn create_project(
    c: &impl GenericClient,
    new: &NewProject,
    now: DateTime<Utc>,
) -> Result<Project, Error> {
    let new = new.clone().validate().map_err(invalid)?;
    let lost_mapping = serde_json::to_string(&LabelMapping::default_lost())?;
    let sql = format!(
        "INSERT INTO projects (public_id, name, active, currency, lost_mapping, created_at)
         VALUES ($1, $2, true, $3, $4, $5)
         ON CONFLICT (public_id) DO NOTHING
         RETURNING {PROJECT_COLUMNS}"
    );
    let params: [&(dyn ToSql + Sync); 5] = [
        &new.public_id,
        &new.name,
        &new.currency,
        &lost_mapping,
        &to_millis(&now),
    ];
    match one(c, &sql, &params).await? {
        Some(row) => rows::project(&row),
        None => Err(Error::Store(StoreError::Conflict(Conflict::ProjectExists(
            new.public_id,
        )))),
    }
}

pub(crate) async fn projects(c: &impl GenericClient) -> Result<Vec<Project>, Error> {
    let sql = format!("SELECT {PROJECT_COLUMNS} FROM projects ORDER BY created_at, id");
    all(c, &sql, &[]).await?.iter().map(rows::project).collect()
}

pub(crate) async fn update_project(
    c: &impl GenericClient,
    id: ProjectId,
    settings: &ProjectSettings,
) -> Result<Project, Error> {
    // Locked, so that concurrent changes apply one after the other.
    let sql = format!("SELECT {PROJECT_COLUMNS} FROM projects WHERE id = $1 FOR UPDATE");
    let mut project = match one(c, &sql, &[&id.0]).await? {
        Some(row) => rows::project(&row)?,
        None => return Err(not_found(Entity::Project)),
    };
    settings.clone().apply(&mut project).map_err(invalid)?;
    run(
        c,
        "UPDATE projects SET name = $2, currency = $3, region = $4, lost_mapping = $5,
            allowed_origins = $6, default_consent = $7, undo_window_seconds = $8,
            spam_rules = $9, review_ratings = $10, retention_days = $11,
            spam_retention_days = $12
         WHERE id = $1",
        &[
            &id.0,
            &project.name,
            &project.currency,
            &project.region,
            &serde_json::to_string(&project.lost_mapping)?,
            &serde_json::to_string(&project.allowed_origins)?,
            &serde_json::to_string(&project.default_consent)?,
            &i32::try_from(project.undo_window_seconds).unwrap_or(i32::MAX),
            &serde_json::to_string(&project.spam_rules)?,
            &project.review_ratings,
            &project
                .retention
                .days
                .map(|days| i32::try_from(days).unwrap_or(i32::MAX)),
            &i32::try_from(project.retention.spam_days).unwrap_or(i32::MAX),
        ],
    )
    .await?;
    Ok(project)
}

pub(crate) async fn set_project_active(
    c: &impl GenericClient,
    id: ProjectId,
    active: bool,
) -> Result<Project, Error> {
    let sql = format!("UPDATE projects SET active = $2 WHERE id = $1 RETURNING {PROJECT_COLUMNS}");
    match one(c, &sql, &[&id.0, &active]).await? {
        Some(row) => rows::project(&row),
        None => Err(not_found(Entity::Project)),
    }
}

pub(crate) async fn insert_api_key(
    c: &impl GenericClient,
    project_id: ProjectId,
    key: &GeneratedKey,
    now: DateTime<Utc>,
) -> Result<ApiKeyInfo, Error> {
    project(c, project_id).await?;
    run(
        c,
        "INSERT INTO api_keys (project_id, key_hash, prefix, created_at) VALUES ($1, $2, $3, $4)",
        &[
            &project_id.0,
            &&key.hash.0[..],
            &key.prefix,
            &to_millis(&now),
        ],
    )
    .await?;
    Ok(ApiKeyInfo {
        prefix: key.prefix.clone(),
        created_at: truncate_to_millis(now),
        revoked_at: None,
    })
}

/// The columns [`key_info`] reads.
const KEY_COLUMNS: &str = "id, prefix, created_at, revoked_at";

fn key_info(row: &Row) -> Result<(i64, ApiKeyInfo), Error> {
    Ok((
        row.try_get(0)?,
        ApiKeyInfo {
            prefix: row.try_get(1)?,
            created_at: from_millis(row.try_get(2)?),
            revoked_at: row.try_get::<_, Option<i64>>(3)?.map(from_millis),
        },
    ))
}

pub(crate) async fn api_keys(
    c: &impl GenericClient,
    project: ProjectId,
) -> Result<Vec<ApiKeyInfo>, Error> {
    let sql =
        format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE project_id = $1 ORDER BY created_at, id");
    all(c, &sql, &[&project.0])
        .await?
        .iter()
        .map(|row| Ok(key_info(row)?.1))
        .collect()
}

pub(crate) async fn revoke_api_key(
    c: &impl GenericClient,
    project: ProjectId,
    key: &KeyRef,
    now: DateTime<Utc>,
) -> Result<ApiKeyInfo, Error> {
    let found = match key {
        KeyRef::Hash(hash) => {
            let sql = format!(
                "SELECT {KEY_COLUMNS} FROM api_keys WHERE project_id = $1 AND key_hash = $2
                 FOR UPDATE"
            );
            all(c, &sql, &[&project.0, &&hash.0[..]]).await?
        }
        KeyRef::Prefix(prefix) => {
            let sql = format!(
                "SELECT {KEY_COLUMNS} FROM api_keys
                 WHERE project_id = $1 AND left(prefix, length($2)) = $2 FOR UPDATE"
            );
            all(c, &sql, &[&project.0, prefix]).await?
        }
    };
    let matches = found.iter().map(key_info).collect::<Result<Vec<_>, _>>()?;
    let (id, mut info) = one_key(key, matches)?;
    if info.revoked_at.is_none() {
        run(
            c,
            "UPDATE api_keys SET revoked_at = $2 WHERE id = $1",
            &[&id, &to_millis(&now)],
        )
        .await?;
        info.revoked_at = Some(truncate_to_millis(now));
    }
    Ok(info)
}

pub(crate) async fn create_label(
    c: &impl GenericClient,
    project_id: ProjectId,
    new: &NewLabel,
    now: DateTime<Utc>,
) -> Result<ConversionLabel, Error> {
    project(c, project_id).await?;
    let new = new.clone().validate().map_err(invalid)?;
    let label = ConversionLabel {
        id: Uuid::new_v4(),
        project_id,
        name: new.name,
        mark_as_done: new.mark_as_done,
        mapping: new.mapping,
        created_at: truncate_to_millis(now),
        archived: false,
    };
    // Last in the project's order; the project's row, locked, keeps two new labels from
    // taking one place.
    run(
        c,
        "SELECT 1 FROM projects WHERE id = $1 FOR UPDATE",
        &[&project_id.0],
    )
    .await?;
    run(
        c,
        "INSERT INTO labels (id, project_id, name, mark_as_done, mapping, created_at, position)
         VALUES ($1, $2, $3, $4, $5, $6,
             (SELECT coalesce(max(position) + 1, 0) FROM labels WHERE project_id = $2))",
        &[
            &label.id,
            &project_id.0,
            &label.name,
            &label.mark_as_done,
            &serde_json::to_string(&label.mapping)?,
            &to_millis(&now),
        ],
    )
    .await?;
    Ok(label)
}

pub(crate) async fn labels(
    c: &impl GenericClient,
    project: ProjectId,
) -> Result<Vec<ConversionLabel>, Error> {
    let sql = format!(
        "SELECT {LABEL_COLUMNS} FROM labels WHERE project_id = $1 ORDER BY position, created_at, id"
    );
    all(c, &sql, &[&project.0])
        .await?
        .iter()
        .map(rows::label)
        .collect()
}

pub(crate) async fn label(
    c: &impl GenericClient,
    project: ProjectId,
    id: Uuid,
) -> Result<ConversionLabel, Error> {
    let sql = format!("SELECT {LABEL_COLUMNS} FROM labels WHERE project_id = $1 AND id = $2");
    match one(c, &sql, &[&project.0, &id]).await? {
        Some(row) => rows::label(&row),
        None => Err(not_found(Entity::Label)),
    }
}

pub(crate) async fn update_label(
    c: &impl GenericClient,
    project: ProjectId,
    id: Uuid,
    changed: &NewLabel,
) -> Result<ConversionLabel, Error> {
    let changed = changed.clone().validate().map_err(invalid)?;
    let sql = format!(
        "UPDATE labels SET name = $3, mark_as_done = $4, mapping = $5
         WHERE project_id = $1 AND id = $2 RETURNING {LABEL_COLUMNS}"
    );
    let params: [&(dyn ToSql + Sync); 5] = [
        &project.0,
        &id,
        &changed.name,
        &changed.mark_as_done,
        &serde_json::to_string(&changed.mapping)?,
    ];
    match one(c, &sql, &params).await? {
        Some(row) => rows::label(&row),
        None => Err(not_found(Entity::Label)),
    }
}

/// Archives the label, or restores it.
pub(crate) async fn set_label_archived(
    c: &impl GenericClient,
    project: ProjectId,
    id: Uuid,
    archived: bool,
) -> Result<ConversionLabel, Error> {
    let sql = format!(
        "UPDATE labels SET archived = $3 WHERE project_id = $1 AND id = $2 RETURNING {LABEL_COLUMNS}"
    );
    match one(c, &sql, &[&project.0, &id, &archived]).await? {
        Some(row) => rows::label(&row),
        None => Err(not_found(Entity::Label)),
    }
}

/// Deletes the label if no lead, job or draft has it. The label's row is locked first, so
/// that a rating with it waits for the deletion and then finds no label.
pub(crate) async fn delete_label(
    c: &impl GenericClient,
    project: ProjectId,
    id: Uuid,
) -> Result<(), Error> {
    let locked = one(
        c,
        "SELECT 1 FROM labels WHERE project_id = $1 AND id = $2 FOR UPDATE",
        &[&project.0, &id],
    )
    .await?;
    if locked.is_none() {
        return Err(not_found(Entity::Label));
    }
    let used = one(
        c,
        "SELECT 1 WHERE EXISTS (SELECT 1 FROM leads WHERE project_id = $1 AND conversion_id = $2)
             OR EXISTS (SELECT 1 FROM jobs WHERE project_id = $1 AND conversion_id = $2)
             OR EXISTS (SELECT 1 FROM rating_drafts WHERE project_id = $1 AND conversion_id = $2)",
        &[&project.0, &id.to_string()],
    )
    .await?;
    if used.is_some() {
        return Err(Error::Store(StoreError::Conflict(Conflict::LabelInUse)));
    }
    run(
        c,
        "DELETE FROM labels WHERE project_id = $1 AND id = $2",
        &[&project.0, &id],
    )
    .await?;
    Ok(())
}

/// Puts the project's labels in `order`.
pub(crate) async fn reorder_labels(
    c: &impl GenericClient,
    project: ProjectId,
    order: &[Uuid],
) -> Result<Vec<ConversionLabel>, Error> {
    let known: Vec<Uuid> = labels(c, project).await?.iter().map(|l| l.id).collect();
    check_order(&known, order).map_err(invalid)?;
    let positions: Vec<i64> = (0..).take(order.len()).collect();
    run(
        c,
        "UPDATE labels SET position = placed.position
         FROM unnest($2::uuid[], $3::bigint[]) AS placed (id, position)
         WHERE labels.project_id = $1 AND labels.id = placed.id",
        &[&project.0, &order, &positions],
    )
    .await?;
    labels(c, project).await
}

/// The integrations the project has connected, by kind alone: what planning a rating needs,
/// read without opening their sealed settings.
pub(crate) async fn connected(
    c: &impl GenericClient,
    project: ProjectId,
) -> Result<Vec<IntegrationKind>, Error> {
    let rows = all(
        c,
        "SELECT kind FROM integrations WHERE project_id = $1",
        &[&project.0],
    )
    .await?;
    rows.iter()
        .map(|row| rows::parse("integrations.kind", row.try_get(0)?))
        .collect()
}

pub(crate) async fn integrations(
    c: &impl GenericClient,
    vault: &Vault,
    project: ProjectId,
) -> Result<Integrations, Error> {
    let mut integrations = Integrations::default();
    let rows = all(
        c,
        "SELECT settings FROM integrations WHERE project_id = $1",
        &[&project.0],
    )
    .await?;
    for row in rows {
        let json = vault.open(INTEGRATION_SETTINGS, row.try_get(0)?)?;
        integrations.set(serde_json::from_str::<IntegrationSettings>(&json)?);
    }
    Ok(integrations)
}

pub(crate) async fn set_integration(
    c: &impl GenericClient,
    vault: &Vault,
    project_id: ProjectId,
    settings: &IntegrationSettings,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    project(c, project_id).await?;
    run(
        c,
        "INSERT INTO integrations (project_id, kind, settings, updated_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (project_id, kind) DO UPDATE SET settings = $3, updated_at = $4",
        &[
            &project_id.0,
            &settings.kind().as_ref(),
            &vault.seal(INTEGRATION_SETTINGS, &serde_json::to_string(settings)?),
            &to_millis(&now),
        ],
    )
    .await?;
    Ok(())
}

/// Keeps a refresh token the platform issued in place of `old` (see
/// [`IntegrationSettings::rotate_refresh_token`]). The row is locked while it is read and
/// rewritten, so a reconnection in between is never overwritten.
/// [`leadtrack_core::Admin::oauth_grant`].
pub(crate) async fn oauth_grant(
    c: &impl GenericClient,
    vault: &Vault,
    project: ProjectId,
    provider: Provider,
) -> Result<Option<OAuthGrant>, Error> {
    let row = one(
        c,
        "SELECT credentials FROM oauth_grants WHERE project_id = $1 AND provider = $2",
        &[&project.0, &provider.as_ref()],
    )
    .await?;
    match row {
        Some(row) => Ok(Some(serde_json::from_str(
            &vault.open(OAUTH_GRANT, row.try_get(0)?)?,
        )?)),
        None => Ok(None),
    }
}

/// [`leadtrack_core::Admin::set_oauth_grant`].
pub(crate) async fn set_oauth_grant(
    c: &impl GenericClient,
    vault: &Vault,
    project_id: ProjectId,
    provider: Provider,
    grant: Option<&OAuthGrant>,
) -> Result<(), Error> {
    project(c, project_id).await?;
    match grant {
        Some(grant) => {
            let sealed = vault.seal(OAUTH_GRANT, &serde_json::to_string(grant)?);
            run(
                c,
                "INSERT INTO oauth_grants (project_id, provider, credentials) VALUES ($1, $2, $3)
                 ON CONFLICT (project_id, provider) DO UPDATE SET credentials = $3",
                &[&project_id.0, &provider.as_ref(), &sealed],
            )
            .await?
        }
        None => {
            run(
                c,
                "DELETE FROM oauth_grants WHERE project_id = $1 AND provider = $2",
                &[&project_id.0, &provider.as_ref()],
            )
            .await?
        }
    };
    Ok(())
}

/// [`leadtrack_core::Admin::lead_source`].
pub(crate) async fn lead_source(
    c: &impl GenericClient,
    vault: &Vault,
    project: ProjectId,
    kind: SourceKind,
) -> Result<Option<LeadSource>, Error> {
    let row = one(
        c,
        "SELECT settings FROM lead_sources WHERE project_id = $1 AND kind = $2",
        &[&project.0, &kind.as_ref()],
    )
    .await?;
    match row {
        Some(row) => Ok(Some(serde_json::from_str(
            &vault.open(LEAD_SOURCE, row.try_get(0)?)?,
        )?)),
        None => Ok(None),
    }
}

/// [`leadtrack_core::Admin::save_inbound_hook`].
pub(crate) async fn save_inbound_hook(
    c: &impl GenericClient,
    vault: &Vault,
    hook: &InboundHook,
) -> Result<(), Error> {
    project(c, hook.project).await?;
    let sealed = vault.seal(INBOUND_HOOK, &hook.settings());
    let saved = run(
        c,
        "INSERT INTO inbound_hooks (id, project_id, settings, created_at)
         VALUES ($1, $2, $3, $4)
         ON CONFLICT (id) DO UPDATE SET settings = $3 WHERE inbound_hooks.project_id = $2",
        &[
            &hook.id,
            &hook.project.0,
            &sealed,
            &to_millis(&hook.created_at),
        ],
    )
    .await?;
    if saved == 0 {
        return Err(StoreError::NotFound(Entity::Webhook).into());
    }
    Ok(())
}

/// [`leadtrack_core::Admin::inbound_hooks`], or the one `id` names.
pub(crate) async fn inbound_hooks(
    c: &impl GenericClient,
    vault: &Vault,
    (project, id): (Option<ProjectId>, Option<&str>),
) -> Result<Vec<InboundHook>, Error> {
    let rows = all(
        c,
        "SELECT id, project_id, created_at, settings FROM inbound_hooks
         WHERE ($1::bigint IS NULL OR project_id = $1) AND ($2::text IS NULL OR id = $2)
         ORDER BY created_at, id",
        &[&project.map(|p| p.0), &id],
    )
    .await?;
    rows.iter()
        .map(|row| {
            let clear = (
                row.try_get::<_, String>(0)?,
                ProjectId(row.try_get(1)?),
                from_millis(row.try_get(2)?),
            );
            let settings = vault.open(INBOUND_HOOK, row.try_get(3)?)?;
            Ok(InboundHook::from_row(clear, &settings)?)
        })
        .collect()
}

/// [`leadtrack_core::Admin::remove_inbound_hook`].
pub(crate) async fn remove_inbound_hook(
    c: &impl GenericClient,
    project: ProjectId,
    id: &str,
) -> Result<bool, Error> {
    let removed = run(
        c,
        "DELETE FROM inbound_hooks WHERE project_id = $1 AND id = $2",
        &[&project.0, &id],
    )
    .await?;
    Ok(removed > 0)
}

/// [`leadtrack_core::Admin::lead_sources_routed`].
pub(crate) async fn lead_sources_routed(
    c: &impl GenericClient,
    vault: &Vault,
    kind: SourceKind,
    routing: &str,
) -> Result<Vec<(ProjectId, LeadSource)>, Error> {
    let rows = c
        .query(
            "SELECT project_id, settings FROM lead_sources WHERE kind = $1 AND routing = $2
             ORDER BY project_id",
            &[&kind.as_ref(), &routing],
        )
        .await?;
    rows.iter()
        .map(|row| {
            let source = serde_json::from_str(&vault.open(LEAD_SOURCE, row.try_get(1)?)?)?;
            Ok((ProjectId(row.try_get(0)?), source))
        })
        .collect()
}

/// [`leadtrack_core::Admin::set_lead_source`].
pub(crate) async fn set_lead_source(
    c: &impl GenericClient,
    vault: &Vault,
    project_id: ProjectId,
    kind: SourceKind,
    source: Option<&LeadSource>,
) -> Result<(), Error> {
    project(c, project_id).await?;
    match source {
        Some(source) => {
            let sealed = vault.seal(LEAD_SOURCE, &serde_json::to_string(source)?);
            run(
                c,
                "INSERT INTO lead_sources (project_id, kind, settings, routing)
                 VALUES ($1, $2, $3, $4)
                 ON CONFLICT (project_id, kind) DO UPDATE SET settings = $3, routing = $4",
                &[&project_id.0, &kind.as_ref(), &sealed, &source.routing()],
            )
            .await?
        }
        None => {
            run(
                c,
                "DELETE FROM lead_sources WHERE project_id = $1 AND kind = $2",
                &[&project_id.0, &kind.as_ref()],
            )
            .await?
        }
    };
    Ok(())
}

pub(crate) async fn rotate_refresh_token(
    c: &impl GenericClient,
    vault: &Vault,
    project: ProjectId,
    kind: IntegrationKind,
    old: &Secret,
    new: &Secret,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    let stored = one(
        c,
        "SELECT settings FROM integrations WHERE project_id = $1 AND kind = $2 FOR UPDATE",
        &[&project.0, &kind.as_ref()],
    )
    .await?;
    let Some(stored) = stored else {
        return Ok(false);
    };
    let mut settings: IntegrationSettings =
        serde_json::from_str(&vault.open(INTEGRATION_SETTINGS, stored.try_get(0)?)?)?;
    if !settings.rotate_refresh_token(old, new.clone()) {
        return Ok(false);
    }
    run(
        c,
        "UPDATE integrations SET settings = $3, updated_at = $4 WHERE project_id = $1 AND kind = $2",
        &[
            &project.0,
            &kind.as_ref(),
            &vault.seal(INTEGRATION_SETTINGS, &serde_json::to_string(&settings)?),
            &to_millis(&now),
        ],
    )
    .await?;
    Ok(true)
}

pub(crate) async fn remove_integration(
    c: &impl GenericClient,
    project: ProjectId,
    kind: IntegrationKind,
) -> Result<bool, Error> {
    let removed = run(
        c,
        "DELETE FROM integrations WHERE project_id = $1 AND kind = $2",
        &[&project.0, &kind.as_ref()],
    )
    .await?;
    Ok(removed > 0)
}

/// Read from `last_attempts`, which recording an attempt keeps: no scan of the project's
/// jobs.
pub(crate) async fn last_attempts(
    c: &impl GenericClient,
    project: ProjectId,
) -> Result<Vec<Attempt>, Error> {
    let sql = format!(
        "SELECT {ATTEMPT_COLUMNS} FROM last_attempts l
         JOIN attempts a ON a.project_id = l.project_id AND a.id = l.attempt_id
         WHERE l.project_id = $1"
    );
    let mut attempts = all(c, &sql, &[&project.0])
        .await?
        .iter()
        .map(|row| rows::attempt(row, 0))
        .collect::<Result<Vec<_>, _>>()?;
    attempts.sort_by_key(|attempt| attempt.integration);
    Ok(attempts)
}
