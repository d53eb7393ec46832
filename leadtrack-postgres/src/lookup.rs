//! Finding one lead: by id, or the newest lead with a `uniqueIdentifier`, email or phone (a
//! lead that is not spam first). A leaf: creating, rating and announcing leads use it.

use deadpool_postgres::GenericClient;
use leadtrack_core::lead::StoredLead;
use leadtrack_core::matching;
use leadtrack_core::store::sql::NOT_SPAM;
use leadtrack_core::store::{Entity, StoreError};
use leadtrack_core::types::{LeadIdentifier, ProjectId};

use crate::Error;
use crate::rows::{self, LEAD_COLUMNS, one};

fn lead_not_found() -> Error {
    Error::Store(StoreError::NotFound(Entity::Lead))
}

/// Finds a lead of the project by id, or the newest match of another identifier,
/// preferring a lead that is not spam to a newer spam one.
pub(crate) async fn find(
    c: &impl GenericClient,
    project: ProjectId,
    identifier: &LeadIdentifier,
) -> Result<StoredLead, Error> {
    let (column, key) = match identifier {
        LeadIdentifier::LeadId(id) => {
            let found = one(c, &find_sql("id", "true"), &[&project.0, &id.0]).await?;
            return rows::lead(&found.ok_or_else(lead_not_found)?);
        }
        LeadIdentifier::UniqueIdentifier(value) => ("unique_identifier", Some(value.clone())),
        LeadIdentifier::Email(email) => ("email_key", matching::email_key(email)),
        LeadIdentifier::Phone(phone) => ("phone_key", matching::phone_key(phone)),
    };
    let key = key.ok_or_else(lead_not_found)?;
    for condition in [NOT_SPAM, "true"] {
        if let Some(found) = one(c, &find_sql(column, condition), &[&project.0, &key]).await? {
            return rows::lead(&found);
        }
    }
    Err(lead_not_found())
}

/// The lookup of [`find`] by `column`: the newest lead of the project with the value that
/// meets `condition`.
fn find_sql(column: &str, condition: &str) -> String {
    format!(
        "SELECT {LEAD_COLUMNS} FROM leads WHERE project_id = $1 AND {column} = $2
           AND {condition}
         ORDER BY created_at DESC, id DESC LIMIT 1"
    )
}
