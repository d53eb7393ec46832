//! Leads: create with deduplication, lookup, and the filtered, sorted, paged listing.

use chrono::{DateTime, Utc};
use leadtrack_core::activity::Activity;
use leadtrack_core::lead::{CreatedLead, LeadData, LeadPage, StoredLead};
use leadtrack_core::matching;
use leadtrack_core::request::LeadQuery;
use leadtrack_core::request::query::{SortDirection, SortField};
use leadtrack_core::store::{Entity, StoreError};
use leadtrack_core::time::to_millis;
use leadtrack_core::types::{LeadId, LeadIdentifier, LeadStatus, ProjectId};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, ToSql, params_from_iter};

use crate::activity;
use crate::rows::{self, Error, LEAD_COLUMNS};

/// Creates a lead, or merges into the project's lead with the same event id, and records
/// `created` or `merged` in its history. Runs in the writer's transaction, so concurrent
/// creates are serialised and the unique index on `(project_id, unique_event_id)` backs the
/// rule.
pub(crate) fn create(
    conn: &Connection,
    project: ProjectId,
    data: LeadData,
    now: DateTime<Utc>,
) -> Result<CreatedLead, Error> {
    if let Some(event_id) = data.unique_event_id() {
        let existing = conn
            .prepare_cached(
                "SELECT id, data FROM leads WHERE project_id = ?1 AND unique_event_id = ?2",
            )?
            .query_row((project.0, event_id), |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
            })
            .optional()?;
        if let Some((id, stored)) = existing {
            let mut merged: LeadData = serde_json::from_str(&stored)?;
            merged.merge(data);
            write_data(conn, Some(id), project, &merged, now)?;
            activity::record(conn, project, LeadId(id), now, None, &Activity::Merged)?;
            return Ok(CreatedLead {
                lead_id: LeadId(id),
                unique_identifier: merged.unique_identifier,
                created: false,
            });
        }
    }
    let id = write_data(conn, None, project, &data, now)?;
    activity::record(conn, project, LeadId(id), now, None, &Activity::Created)?;
    Ok(CreatedLead {
        lead_id: LeadId(id),
        unique_identifier: data.unique_identifier,
        created: true,
    })
}

/// Inserts a new lead (`id` `None`) or rewrites an existing lead's data with the columns
/// derived from it. Returns the lead's id.
fn write_data(
    conn: &Connection,
    id: Option<i64>,
    project: ProjectId,
    data: &LeadData,
    now: DateTime<Utc>,
) -> Result<i64, Error> {
    let keys = data.keys();
    let search_text = search_text(&keys.searchable);
    let json = serde_json::to_string(data)?;
    let now = to_millis(&now);
    let form_name = data.form_name();
    let (first_name, last_name) = (data.user("firstName"), data.user("lastName"));
    let (email, phone) = (data.user("email"), data.user("phone"));
    let company_name = data.user("companyName");
    let unique_event_id = data.unique_event_id();
    let mut params: Vec<(&str, &dyn ToSql)> = vec![
        (":project_id", &project.0),
        (":now", &now),
        (":data", &json),
        (":form_name", &form_name),
        (":first_name", &first_name),
        (":last_name", &last_name),
        (":email", &email),
        (":phone", &phone),
        (":company_name", &company_name),
        (":unique_identifier", &data.unique_identifier),
        (":unique_event_id", &unique_event_id),
        (":email_key", &keys.email),
        (":phone_key", &keys.phone),
        (":search_text", &search_text),
        (":has_gclid", &keys.has_gclid),
        (":has_cid", &keys.has_cid),
        (":has_fbp", &keys.has_fbp),
        (":has_fbc", &keys.has_fbc),
    ];
    if let Some(id) = &id {
        params.push((":id", id));
        conn.prepare_cached(
            "UPDATE leads SET updated_at = :now, data = :data, form_name = :form_name,
                first_name = :first_name, last_name = :last_name, email = :email,
                phone = :phone, company_name = :company_name,
                unique_identifier = :unique_identifier, unique_event_id = :unique_event_id,
                email_key = :email_key, phone_key = :phone_key, search_text = :search_text,
                has_gclid = :has_gclid, has_cid = :has_cid, has_fbp = :has_fbp,
                has_fbc = :has_fbc
             WHERE id = :id AND project_id = :project_id",
        )?
        .execute(params.as_slice())?;
        Ok(*id)
    } else {
        let status = LeadStatus::Open.as_ref();
        params.push((":status", &status));
        conn.prepare_cached(
            "INSERT INTO leads (project_id, status, created_at, updated_at, data, form_name,
                first_name, last_name, email, phone, company_name, unique_identifier,
                unique_event_id, email_key, phone_key, search_text, has_gclid, has_cid,
                has_fbp, has_fbc)
             VALUES (:project_id, :status, :now, :now, :data, :form_name, :first_name,
                :last_name, :email, :phone, :company_name, :unique_identifier,
                :unique_event_id, :email_key, :phone_key, :search_text, :has_gclid, :has_cid,
                :has_fbp, :has_fbc)",
        )?
        .execute(params.as_slice())?;
        Ok(conn.last_insert_rowid())
    }
}

/// The `search_text` column a lead's searchable fields are kept in: one per line, so that
/// `instr` and the trigram index never match across two fields (a search term has its line
/// breaks folded to spaces, see [`search_term`]).
fn search_text(searchable: &[String]) -> String {
    searchable.join("\n")
}

/// A `search` term as looked for in [`search_text`].
fn search_term(term: &str) -> String {
    matching::search_term(term).replace(['\n', '\r'], " ")
}

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
    let sql = format!(
        "SELECT {LEAD_COLUMNS} FROM leads WHERE project_id = ?1 AND {column} = ?2
         ORDER BY created_at DESC, id DESC LIMIT 1"
    );
    conn.prepare_cached(&sql)?
        .query_and_then((project.0, value), rows::lead)?
        .next()
        .ok_or_else(lead_not_found)?
}

/// A page of the project's leads matching `query`, and how many match in all.
pub(crate) fn list(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
) -> Result<LeadPage, Error> {
    let (filter, mut params) = filter(project, query);
    let total: i64 = if query.is_unfiltered() {
        conn.prepare_cached("SELECT total FROM lead_counts WHERE project_id = ?1")?
            .query_row([project.0], |row| row.get(0))
            .optional()?
            .unwrap_or(0)
    } else {
        conn.prepare_cached(&format!("SELECT count(*) FROM leads WHERE {filter}"))?
            .query_row(params_from_iter(&params), |row| row.get(0))?
    };
    let total = u64::try_from(total).unwrap_or_default();
    if query.offset() >= total {
        return Ok(LeadPage {
            leads: Vec::new(),
            total,
        });
    }
    params.push(SqlValue::Integer(i64::from(query.limit)));
    params.push(SqlValue::Integer(
        i64::try_from(query.offset()).unwrap_or(i64::MAX),
    ));
    let sql = format!(
        "SELECT {LEAD_COLUMNS} FROM leads WHERE {filter} ORDER BY {} LIMIT ? OFFSET ?",
        order_by(query)
    );
    let leads = conn
        .prepare_cached(&sql)?
        .query_and_then(params_from_iter(&params), rows::lead)?
        .collect::<Result<_, _>>()?;
    Ok(LeadPage { leads, total })
}

/// The WHERE clause of a listing and its parameters. Always starts with the project, so
/// every plan is an index search within it.
pub(crate) fn filter(project: ProjectId, query: &LeadQuery) -> (String, Vec<SqlValue>) {
    let mut sql = String::from("project_id = ?");
    let mut params = vec![SqlValue::Integer(project.0)];
    let mut equals = |sql: &mut String, column: &str, value: Option<String>| {
        match value {
            Some(value) => {
                sql.push_str(&format!(" AND {column} = ?"));
                params.push(SqlValue::Text(value));
            }
            // A filter value that normalises to nothing matches nothing.
            None => sql.push_str(" AND 0"),
        }
    };
    if let Some(statuses) = &query.status {
        if statuses.is_empty() {
            sql.push_str(" AND 0");
        } else {
            let list: Vec<String> = statuses
                .iter()
                .map(|s| format!("'{}'", s.as_ref()))
                .collect();
            sql.push_str(&format!(" AND status IN ({})", list.join(", ")));
        }
    }
    if let Some(form_name) = &query.form_name {
        equals(&mut sql, "form_name", Some(form_name.clone()));
    }
    if let Some(id) = &query.unique_identifier {
        equals(&mut sql, "unique_identifier", Some(id.clone()));
    }
    if let Some(email) = &query.email {
        equals(&mut sql, "email_key", matching::email_key(email));
    }
    if let Some(phone) = &query.phone {
        equals(&mut sql, "phone_key", matching::phone_key(phone));
    }
    if let Some(from) = &query.created_from {
        sql.push_str(" AND created_at >= ?");
        params.push(SqlValue::Integer(to_millis(from)));
    }
    if let Some(to) = &query.created_to {
        sql.push_str(" AND created_at <= ?");
        params.push(SqlValue::Integer(to_millis(to)));
    }
    if let Some(term) = &query.search {
        let term = search_term(term);
        // Terms of three characters or more are looked up in the trigram index; `instr`
        // then keeps exactly the leads a scan would find.
        if term.chars().count() >= 3 {
            sql.push_str(" AND id IN (SELECT rowid FROM leads_search WHERE leads_search MATCH ?)");
            params.push(SqlValue::Text(format!("\"{}\"", term.replace('"', "\"\""))));
        }
        sql.push_str(" AND instr(search_text, ?) > 0");
        params.push(SqlValue::Text(term));
    }
    for (column, exists) in [
        ("has_gclid", query.gclid_exists),
        ("has_cid", query.cid_exists),
        ("has_fbp", query.fbp_exists),
        ("has_fbc", query.fbc_exists),
    ] {
        if let Some(exists) = exists {
            sql.push_str(&format!(" AND {column} = {}", i32::from(exists)));
        }
    }
    (sql, params)
}

/// The ORDER BY of a listing: the sort key with nulls last, then the id, both in the
/// requested direction. Text sorts ignore ASCII case.
pub(crate) fn order_by(query: &LeadQuery) -> String {
    let key = match query.sort.field {
        SortField::CreatedAt => "created_at",
        SortField::FirstName => "first_name COLLATE NOCASE",
        SortField::LastName => "last_name COLLATE NOCASE",
        SortField::Email => "email COLLATE NOCASE",
        SortField::Price => "price",
        SortField::Status => "status",
    };
    let direction = match query.sort.direction {
        SortDirection::Asc => "ASC",
        SortDirection::Desc => "DESC",
    };
    format!("{key} {direction} NULLS LAST, id {direction}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use leadtrack_core::request::query::Sort;
    use strum::VariantArray;

    /// Every listing's plan reaches leads through an index on the project: no query scans
    /// the table, so no query reads another project's leads.
    #[test]
    fn every_filter_and_sort_searches_within_the_project() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::schema::migrate(&mut conn).unwrap();
        let base = LeadQuery::default;
        let mut queries = vec![
            base(),
            LeadQuery {
                status: Some(vec![LeadStatus::Open, LeadStatus::Rated]),
                ..base()
            },
            LeadQuery {
                form_name: Some("Contact".into()),
                ..base()
            },
            LeadQuery {
                unique_identifier: Some("crm-1".into()),
                ..base()
            },
            LeadQuery {
                email: Some("a@x.io".into()),
                ..base()
            },
            LeadQuery {
                phone: Some("+1 555".into()),
                ..base()
            },
            LeadQuery {
                created_from: Some(Utc::now()),
                created_to: Some(Utc::now()),
                ..base()
            },
            LeadQuery {
                search: Some("ada".into()),
                ..base()
            },
            LeadQuery {
                gclid_exists: Some(true),
                fbc_exists: Some(false),
                ..base()
            },
        ];
        for &field in SortField::VARIANTS {
            for direction in [SortDirection::Asc, SortDirection::Desc] {
                queries.push(LeadQuery {
                    sort: Sort { field, direction },
                    ..base()
                });
            }
        }
        for query in queries {
            let (filter, params) = filter(ProjectId(1), &query);
            let count = format!("SELECT count(*) FROM leads WHERE {filter}");
            let mut page_params = params.clone();
            page_params.extend([SqlValue::Integer(10), SqlValue::Integer(0)]);
            let page = format!(
                "SELECT {LEAD_COLUMNS} FROM leads WHERE {filter} ORDER BY {} LIMIT ? OFFSET ?",
                order_by(&query)
            );
            for (sql, params) in [(count, params), (page, page_params)] {
                let plan: Vec<String> = conn
                    .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                    .unwrap()
                    .query_map(params_from_iter(&params), |row| row.get::<_, String>(3))
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap();
                // Every step on the leads table searches an index within the project (or
                // looks up single rows by id); the trigram index is searched by MATCH.
                let mut on_leads = 0;
                for step in &plan {
                    if step.contains("leads_search") {
                        assert!(
                            step.contains("VIRTUAL TABLE INDEX 0:M"),
                            "{query:?}: {step}"
                        );
                    } else if step.contains("leads") {
                        on_leads += 1;
                        let confined = step.starts_with("SEARCH leads USING")
                            && (step.contains("(project_id=?") || step.contains("(rowid=?)"));
                        assert!(confined, "{query:?} is not confined to the project: {step}");
                    }
                }
                assert!(on_leads > 0, "{sql}: {plan:?}");
            }
        }
    }
}
