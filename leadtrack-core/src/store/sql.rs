//! SQL text that both backends build the same way.

/// The condition of a lead that is not spam: listings that name no status, lookups by a
/// value (which prefer such a lead), reports and duplicates see only these.
pub const NOT_SPAM: &str = "status <> 'spam'";

/// The condition of a lead event that is a rating with a label or `lost`
/// ([`crate::activity::Activity::Rated`], kept as JSON led by its `type`).
pub const RATED_EVENT: &str = "activity LIKE '{\"type\":\"rated\"%'";

/// The lookup of the lead a new lead duplicates ([`crate::lead::StoredLead::duplicate_of`])
/// by `column` (`email_key` or `phone_key`, as [`crate::lead::LeadKeys::person_keys`] gives
/// them), with the backend's placeholders for the project, the key and the start of the
/// window: the original of the project's newest lead, not spam, with the key, in the window.
pub fn duplicate_lookup(column: &str, [project, key, since]: [&str; 3]) -> String {
    format!(
        "SELECT coalesce(duplicate_of, id) FROM leads
         WHERE project_id = {project} AND {column} = {key} AND created_at >= {since}
           AND {NOT_SPAM}
         ORDER BY created_at DESC, id DESC LIMIT 1"
    )
}

/// The names of a project's forms, in order, at most [`FORM_NAMES`] of them, with the
/// backend's placeholder for the project: a walk along the `(project_id, form_name, ...)`
/// index that jumps from one name to the next, so it costs one index probe per form, not
/// one row per lead.
pub fn form_names(project: &str) -> String {
    format!(
        "WITH RECURSIVE forms (name, n) AS (
             SELECT min(form_name), 1 FROM leads WHERE project_id = {project}
             UNION ALL
             SELECT (SELECT min(form_name) FROM leads
                     WHERE project_id = {project} AND form_name > forms.name), n + 1
             FROM forms WHERE forms.name IS NOT NULL AND n < {FORM_NAMES}
         )
         SELECT name FROM forms WHERE name IS NOT NULL"
    )
}

/// How many form names [`form_names`] reads at most.
pub const FORM_NAMES: u32 = 200;

/// `columns` (a list separated by `", "`) each qualified by the table alias `table`, for a
/// select over a join: `qualified("id, name", "p")` is `"p.id, p.name"`.
pub fn qualified(columns: &str, table: &str) -> String {
    columns
        .split(", ")
        .map(|column| format!("{table}.{column}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::qualified;

    #[test]
    fn each_column_takes_the_alias() {
        assert_eq!(
            qualified("id, public_id, name", "p"),
            "p.id, p.public_id, p.name"
        );
        assert_eq!(qualified("id", "m"), "m.id");
    }
}
