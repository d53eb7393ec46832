//! Drafts ([`leadtrack_core::draft`]): one per lead, kept with the project, discarded by any
//! rating of the lead ([`discard`], called in the rating's own transaction).

use deadpool_postgres::GenericClient;
use leadtrack_core::draft::Draft;
use leadtrack_core::store::{Entity, StoreError};
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::{LeadId, ProjectId};

use crate::Error;
use crate::rows::{self, all, one, run};

/// Keeps `draft` as its lead's draft, in place of any it had.
pub(crate) async fn save(
    c: &impl GenericClient,
    project: ProjectId,
    draft: &Draft,
) -> Result<(), Error> {
    let lead = &draft.lead_id.0;
    let found = one(
        c,
        "SELECT 1 FROM leads WHERE project_id = $1 AND id = $2",
        &[&project.0, lead],
    )
    .await?;
    if found.is_none() {
        return Err(Error::Store(StoreError::NotFound(Entity::Lead)));
    }
    run(
        c,
        "INSERT INTO rating_drafts (project_id, lead_id, conversion_id, price, actor, at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (project_id, lead_id) DO UPDATE SET conversion_id = excluded.conversion_id,
             price = excluded.price, actor = excluded.actor, at = excluded.at",
        &[
            &project.0,
            lead,
            &draft.conversion_id.to_string(),
            &draft.price,
            &serde_json::to_string(&draft.by)?,
            &to_millis(&draft.at),
        ],
    )
    .await?;
    Ok(())
}

/// Drops the lead's draft; whether it had one.
pub(crate) async fn discard(
    c: &impl GenericClient,
    project: ProjectId,
    lead: LeadId,
) -> Result<bool, Error> {
    let sql = "DELETE FROM rating_drafts WHERE project_id = $1 AND lead_id = $2";
    Ok(run(c, sql, &[&project.0, &lead.0]).await? > 0)
}

/// The project's drafts, oldest first.
pub(crate) async fn list(c: &impl GenericClient, project: ProjectId) -> Result<Vec<Draft>, Error> {
    let sql = "SELECT lead_id, conversion_id, price, actor, at FROM rating_drafts
               WHERE project_id = $1 ORDER BY at, lead_id";
    all(c, sql, &[&project.0])
        .await?
        .iter()
        .map(|row| {
            Ok(Draft {
                lead_id: LeadId(row.try_get(0)?),
                conversion_id: rows::parse("rating_drafts.conversion_id", row.try_get(1)?)?,
                price: row.try_get(2)?,
                by: serde_json::from_str(row.try_get::<_, &str>(3)?)?,
                at: from_millis(row.try_get(4)?),
            })
        })
        .collect()
}
