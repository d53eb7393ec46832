//! The SQL of a listing's query: its WHERE clause with its parameters, and its order.
//! Pages, counts and export batches ([`crate::keyset`]) all filter and sort by these.

use leadtrack_core::matching;
use leadtrack_core::request::LeadQuery;
use leadtrack_core::request::query::{AssigneeFilter, FacetValue, SortDirection, SortField};
use leadtrack_core::store::sql::NOT_SPAM;
use leadtrack_core::time::to_millis;
use leadtrack_core::types::ProjectId;
use rusqlite::types::Value as SqlValue;

/// A `search` term as looked for in a lead's `search_text`.
pub(crate) fn search_term(term: &str) -> String {
    matching::search_term(term).replace(['\n', '\r'], " ")
}

/// The WHERE clause of a listing and its parameters. Always starts with the project, so
/// every plan is an index search within it; `by_words` when the words' index drives (the
/// listing's `Words::hits`), whose leads the other columns then only check (a `+` keeps
/// SQLite from walking, say, every open lead of the project to test each against the few
/// found). The words are checked on each lead.
pub(crate) fn filter(
    project: ProjectId,
    query: &LeadQuery,
    by_words: bool,
) -> (String, Vec<SqlValue>) {
    // A member's leads are few: found through their own index (`leads_assigned`), which
    // SQLite, without statistics, would pass over for a range of dates or a status.
    let by_assignee = matches!(query.assignee, Some(AssigneeFilter::User(_)));
    let column = |name: &str| {
        if by_words || by_assignee && name != "project_id" {
            format!("+{name}")
        } else {
            name.to_owned()
        }
    };
    let mut sql = format!("{} = ?", column("project_id"));
    let mut params = vec![SqlValue::Integer(project.0)];
    let mut equals = |sql: &mut String, name: &str, value: Option<String>| {
        match value {
            Some(value) => {
                sql.push_str(&format!(" AND {} = ?", column(name)));
                params.push(SqlValue::Text(value));
            }
            // A filter value that normalises to nothing matches nothing.
            None => sql.push_str(" AND 0"),
        }
    };
    match &query.status {
        Some(statuses) if statuses.is_empty() => sql.push_str(" AND 0"),
        Some(statuses) => {
            let list: Vec<String> = statuses
                .iter()
                .map(|s| format!("'{}'", s.as_ref()))
                .collect();
            sql.push_str(&format!(
                " AND {} IN ({})",
                column("status"),
                list.join(", ")
            ));
        }
        None => sql.push_str(&format!(" AND {}", column(NOT_SPAM))),
    }
    for facet in query.facet_filters() {
        match facet.value {
            FacetValue::Text(value) => equals(&mut sql, facet.column, Some(value)),
            FacetValue::Flag(exists) => {
                sql.push_str(&format!(
                    " AND {} = {}",
                    column(facet.column),
                    i32::from(exists)
                ));
            }
        }
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
        sql.push_str(&format!(" AND {} >= ?", column("created_at")));
        params.push(SqlValue::Integer(to_millis(from)));
    }
    if let Some(to) = &query.created_to {
        sql.push_str(&format!(" AND {} <= ?", column("created_at")));
        params.push(SqlValue::Integer(to_millis(to)));
    }
    if let Some(term) = &query.search {
        sql.push_str(" AND instr(search_text, ?) > 0");
        params.push(SqlValue::Text(search_term(term)));
    }
    for word in &query.q {
        sql.push_str(" AND instr(q_text, ?) > 0");
        params.push(SqlValue::Text(word.clone()));
    }
    if let Some(duplicates) = query.duplicates {
        sql.push_str(&format!(" AND {}", column(&duplicates.condition())));
    }
    if let Some(assignee) = query.assignee {
        let condition = assignee.condition();
        match by_words {
            true => sql.push_str(&format!(" AND +{condition}")),
            false => sql.push_str(&format!(" AND {condition}")),
        }
    }
    (sql, params)
}

/// A sort field's column, and its key as listings sort by it: names ignore ASCII case, as
/// their indexes do; emails sort by their matching key (trimmed, lowercased), whose index
/// also finds a person's leads, so that no index of its own is written with each lead.
pub(crate) fn sort_key(field: SortField) -> (&'static str, &'static str) {
    match field {
        SortField::CreatedAt => ("created_at", "created_at"),
        SortField::FirstName => ("first_name", "first_name COLLATE NOCASE"),
        SortField::LastName => ("last_name", "last_name COLLATE NOCASE"),
        SortField::Email => ("email_key", "email_key"),
        SortField::Price => ("price", "price"),
        SortField::Status => ("status", "status"),
    }
}

/// The query's direction, as SQL writes it.
pub(crate) fn direction(query: &LeadQuery) -> &'static str {
    match query.sort.direction {
        SortDirection::Asc => "ASC",
        SortDirection::Desc => "DESC",
    }
}

/// The ORDER BY of a listing: the sort key with nulls last, then the id, both in the
/// requested direction.
pub(crate) fn order_by(query: &LeadQuery) -> String {
    let (_, key) = sort_key(query.sort.field);
    let direction = direction(query);
    format!("{key} {direction} NULLS LAST, id {direction}")
}
