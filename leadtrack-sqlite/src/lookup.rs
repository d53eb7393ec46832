//! Finding one lead: by id, or the newest lead with a `uniqueIdentifier`, email or phone (a
//! lead that is not spam first). A leaf: creating, rating and announcing leads use it.

use leadtrack_core::lead::StoredLead;
use leadtrack_core::matching;
use leadtrack_core::store::sql::NOT_SPAM;
use leadtrack_core::store::{Entity, StoreError};
use leadtrack_core::types::{LeadIdentifier, ProjectId};
use rusqlite::Connection;
use rusqlite::types::Value as SqlValue;

use crate::rows::{self, Error, LEAD_COLUMNS};

fn lead_not_found() -> Error {
    Error::Store(StoreError::NotFound(Entity::Lead))
}

/// Finds a lead of the project by id, or the newest match of another identifier.
pub(crate) fn find(
    conn: &Connection,
    project: ProjectId,
    identifier: &LeadIdentifier,
) -> Result<StoredLead, Error> {
    let (column, value) = match identifier {
        LeadIdentifier::LeadId(id) => ("id", SqlValue::Integer(id.0)),
        LeadIdentifier::UniqueIdentifier(value) => {
            ("unique_identifier", SqlValue::Text(value.clone()))
        }
        LeadIdentifier::Email(email) => match matching::email_key(email) {
            Some(key) => ("email_key", SqlValue::Text(key)),
            None => return Err(lead_not_found()),
        },
        LeadIdentifier::Phone(phone) => match matching::phone_key(phone) {
            Some(key) => ("phone_key", SqlValue::Text(key)),
            None => return Err(lead_not_found()),
        },
    };
    // An id finds any lead; a value prefers a lead that is not spam to a newer spam one.
    let passes: &[&str] = if column == "id" {
        &["1"]
    } else {
        &[NOT_SPAM, "1"]
    };
    for condition in passes {
        let found = conn
            .prepare_cached(&find_sql(column, condition))?
            .query_and_then((project.0, &value), rows::lead)?
            .next()
            .transpose()?;
        if let Some(lead) = found {
            return Ok(lead);
        }
    }
    Err(lead_not_found())
}

/// The lookup of [`find`] by `column`: the newest lead of the project with the value that
/// meets `condition`.
fn find_sql(column: &str, condition: &str) -> String {
    format!(
        "SELECT {LEAD_COLUMNS} FROM leads WHERE project_id = ?1 AND {column} = ?2
           AND {condition}
         ORDER BY created_at DESC, id DESC LIMIT 1"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lookup by any identifier is one search of its index (partial indexes included:
    /// `= ?` implies the value is there), newest first without sorting.
    #[test]
    fn lookups_search_one_index_without_sorting() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::schema::migrate(&mut conn).unwrap();
        for (column, index) in [
            ("unique_identifier", "leads_identifier"),
            ("email_key", "leads_email_key"),
            ("phone_key", "leads_phone_key"),
        ] {
            let sql = find_sql(column, NOT_SPAM);
            let plan: Vec<String> = conn
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                .unwrap()
                .query_map((1, "x"), |row| row.get::<_, String>(3))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            let plan = crate::rows::without_assignee(plan);
            assert_eq!(
                plan,
                [format!(
                    "SEARCH leads USING INDEX {index} (project_id=? AND {column}=?)"
                )],
                "{column}"
            );
        }
    }
}
