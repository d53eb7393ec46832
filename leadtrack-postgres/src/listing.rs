//! getLeads: the filters, the trigram search, sorts, pages, the counts of the inbox's tabs,
//! and exports read in batches (keyset pagination), as the SQLite backend lists them.
//!
//! Every statement starts with the project (`project_id = $1`), so every plan is an index
//! search within it. A search term that holds a trigram is matched with `LIKE`, which the
//! `pg_trgm` GIN index `leads_search` serves; a shorter one (or one of punctuation only)
//! with `strpos` on the project's leads. Text sorts order by `lower(column) COLLATE "C"`,
//! the expression of their indexes.

use deadpool_postgres::GenericClient;
use leadtrack_core::lead::{LeadPage, StoredLead};
use leadtrack_core::matching;
use leadtrack_core::request::query::{SortDirection, SortField, SortKey};
use leadtrack_core::request::{Cursor, LeadQuery};
use leadtrack_core::store::StoreError;
use leadtrack_core::time::to_millis;
use leadtrack_core::types::{LeadStatus, ProjectId};
use strum::VariantArray;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use crate::Error;
use crate::rows::{self, LEAD_COLUMNS, all, one};

/// A statement being written: its SQL and its parameters, each bound as the next `$n`.
#[derive(Default)]
struct Statement {
    /// The SQL so far.
    sql: String,
    /// The parameters bound so far, `$1` first.
    params: Vec<Box<dyn ToSql + Sync + Send>>,
}

impl Statement {
    /// Binds `value` as the next parameter, and returns its placeholder (`$n`).
    fn bind(&mut self, value: impl ToSql + Sync + Send + 'static) -> String {
        self.params.push(Box::new(value));
        format!("${}", self.params.len())
    }

    /// Appends `clause` to the SQL.
    fn push(&mut self, clause: &str) {
        self.sql.push_str(clause);
    }

    /// ` AND {column} = $n`, binding `value`. A value that normalises to nothing matches no
    /// lead, and so does one holding a NUL: PostgreSQL's text holds none.
    fn and_equal(&mut self, column: &str, value: Option<String>) {
        match value.filter(|value| !value.contains('\0')) {
            Some(value) => {
                let value = self.bind(value);
                self.push(&format!(" AND {column} = {value}"));
            }
            None => self.push(" AND false"),
        }
    }

    /// The parameters, as the client takes them.
    fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.params
            .iter()
            .map(|param| param.as_ref() as &(dyn ToSql + Sync))
            .collect()
    }

    /// The rows of the statement.
    async fn rows(&self, c: &impl GenericClient) -> Result<Vec<Row>, Error> {
        all(c, &self.sql, &self.params()).await
    }
}

/// A `search` term as looked for in `search_text`: core's rule, with its line breaks
/// folded to spaces (the text holds one field per line, so a term never spans two).
fn search_term(term: &str) -> String {
    matching::search_term(term).replace(['\n', '\r'], " ")
}

/// Whether `pg_trgm` surely finds a trigram in the pattern `'%term%'`, so that the trigram
/// index narrows the search down. It reads the pattern's words (runs of alphanumeric
/// characters), padded with two spaces before and one after where a character that is no
/// word character (not a wildcard) bounds them, and takes the trigrams of those of three
/// characters or more. Only ASCII letters and digits are taken for word characters, and
/// only ASCII others for bounds: whether a character beyond ASCII is a word character
/// depends on the database's locale, and guessing wrong either way could send a pattern
/// without a trigram to the index, whose every entry would then be read.
fn has_trigram(term: &str) -> bool {
    let chars: Vec<char> = term.chars().collect();
    let mut start = 0;
    while start < chars.len() {
        let word = chars[start..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric())
            .count();
        if word == 0 {
            start += 1;
            continue;
        }
        let end = start + word;
        // The word's neighbours: ASCII ones are no word characters (the word is maximal).
        let bounded_before = start
            .checked_sub(1)
            .and_then(|before| chars.get(before))
            .is_some_and(char::is_ascii);
        let bounded_after = chars.get(end).is_some_and(char::is_ascii);
        let padded = word + 2 * usize::from(bounded_before) + usize::from(bounded_after);
        if padded >= 3 {
            return true;
        }
        start = end;
    }
    false
}

/// The `LIKE` pattern of the leads whose text contains `term`: `%`, `_` and `\` escaped
/// (with `\`, `LIKE`'s default escape), between two `%`.
fn like_pattern(term: &str) -> String {
    let mut pattern = String::with_capacity(term.len() + 2);
    pattern.push('%');
    for c in term.chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// The WHERE clause of a listing (without `WHERE`) and its parameters; more may be bound
/// after it. The project is always `$1`.
fn filter(project: ProjectId, query: &LeadQuery) -> Statement {
    let mut statement = Statement::default();
    let project = statement.bind(project.0);
    statement.push(&format!("project_id = {project}"));
    if let Some(statuses) = &query.status {
        // Written as literals (they are the enumeration's names), in one order, so that
        // one status is an equality the index `leads_status` serves in creation order.
        let mut names: Vec<&str> = statuses.iter().map(LeadStatus::as_ref).collect();
        names.sort_unstable();
        names.dedup();
        if names.is_empty() {
            statement.push(" AND false");
        } else {
            let list: Vec<String> = names.iter().map(|name| format!("'{name}'")).collect();
            statement.push(&format!(" AND status IN ({})", list.join(", ")));
        }
    }
    if let Some(form_name) = &query.form_name {
        statement.and_equal("form_name", Some(form_name.clone()));
    }
    if let Some(id) = &query.unique_identifier {
        statement.and_equal("unique_identifier", Some(id.clone()));
    }
    if let Some(email) = &query.email {
        statement.and_equal("email_key", matching::email_key(email));
    }
    if let Some(phone) = &query.phone {
        statement.and_equal("phone_key", matching::phone_key(phone));
    }
    if let Some(from) = &query.created_from {
        let from = statement.bind(to_millis(from));
        statement.push(&format!(" AND created_at >= {from}"));
    }
    if let Some(to) = &query.created_to {
        let to = statement.bind(to_millis(to));
        statement.push(&format!(" AND created_at <= {to}"));
    }
    if let Some(term) = query.search.as_deref().map(search_term) {
        if term.contains('\0') {
            // No lead's text holds a NUL (PostgreSQL's text cannot).
            statement.push(" AND false");
        } else if has_trigram(&term) {
            let pattern = statement.bind(like_pattern(&term));
            statement.push(&format!(" AND search_text LIKE {pattern}"));
        } else {
            // No trigram to look up: each lead of the project is checked.
            let term = statement.bind(term);
            statement.push(&format!(" AND strpos(search_text, {term}) > 0"));
        }
    }
    for (column, exists) in [
        ("has_gclid", query.gclid_exists),
        ("has_cid", query.cid_exists),
        ("has_fbp", query.fbp_exists),
        ("has_fbc", query.fbc_exists),
        ("has_msclkid", query.msclkid_exists),
        ("has_li_fat_id", query.li_fat_id_exists),
    ] {
        if let Some(exists) = exists {
            statement.push(&format!(" AND {column} = {exists}"));
        }
    }
    statement
}

/// The counts per status of the leads matching `query` but for its status: from the kept
/// counts when nothing else filters, else in one grouped pass.
pub(crate) async fn status_counts(
    c: &impl GenericClient,
    project: ProjectId,
    query: &LeadQuery,
) -> Result<Vec<(LeadStatus, u64)>, Error> {
    let any_status = LeadQuery {
        status: None,
        ..query.clone()
    };
    let rows = if any_status.is_unfiltered() {
        all(
            c,
            "SELECT status, sum(total)::bigint FROM lead_status_counts
             WHERE project_id = $1 GROUP BY status",
            &[&project.0],
        )
        .await?
    } else {
        let mut statement = filter(project, &any_status);
        statement.sql = format!(
            "SELECT status, count(*) FROM leads WHERE {} GROUP BY status",
            statement.sql
        );
        statement.rows(c).await?
    };
    let counted = rows
        .iter()
        .map(|row| Ok((row.try_get::<_, &str>(0)?, row.try_get::<_, i64>(1)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    Ok(LeadStatus::VARIANTS
        .iter()
        .map(|status| {
            let total = counted
                .iter()
                .find(|(name, _)| *name == status.as_ref())
                .map_or(0, |(_, total)| *total);
            (*status, u64::try_from(total).unwrap_or_default())
        })
        .collect())
}

/// How many of the project's leads are in `statuses` (all of them for `None`), from the
/// counts the trigger keeps, each summed over its slots.
async fn kept_total(
    c: &impl GenericClient,
    project: ProjectId,
    statuses: Option<&[LeadStatus]>,
) -> Result<i64, Error> {
    let row = match statuses {
        None => {
            one(
                c,
                "SELECT coalesce(sum(total), 0)::bigint FROM lead_status_counts
                 WHERE project_id = $1",
                &[&project.0],
            )
            .await?
        }
        Some(statuses) => {
            // A status listed twice counts once.
            let mut names: Vec<String> = statuses
                .iter()
                .map(|status| status.as_ref().to_owned())
                .collect();
            names.sort_unstable();
            names.dedup();
            one(
                c,
                "SELECT coalesce(sum(total), 0)::bigint FROM lead_status_counts
                 WHERE project_id = $1 AND status = ANY($2)",
                &[&project.0, &names],
            )
            .await?
        }
    };
    Ok(match row {
        Some(row) => row.try_get(0)?,
        None => 0,
    })
}

/// A page of the project's leads matching `query`, and how many match in all (exactly).
///
/// The total comes from the kept counts when only the status filters (or nothing does),
/// and is counted otherwise; a page past the end is not read.
pub(crate) async fn list(
    c: &impl GenericClient,
    project: ProjectId,
    query: &LeadQuery,
) -> Result<LeadPage, Error> {
    let mut statement = filter(project, query);
    let total = if query.is_unfiltered() {
        kept_total(c, project, None).await?
    } else if let Some(statuses) = query.only_statuses() {
        kept_total(c, project, Some(statuses)).await?
    } else {
        let sql = format!("SELECT count(*) FROM leads WHERE {}", statement.sql);
        match one(c, &sql, &statement.params()).await? {
            Some(row) => row.try_get(0)?,
            None => 0,
        }
    };
    let total = u64::try_from(total).unwrap_or_default();
    if query.offset() >= total {
        return Ok(LeadPage {
            leads: Vec::new(),
            total,
        });
    }
    let limit = statement.bind(i64::from(query.limit));
    let offset = statement.bind(i64::try_from(query.offset()).unwrap_or(i64::MAX));
    statement.sql = format!(
        "SELECT {LEAD_COLUMNS} FROM leads WHERE {} ORDER BY {} LIMIT {limit} OFFSET {offset}",
        statement.sql,
        order_by(query)
    );
    let leads = statement
        .rows(c)
        .await?
        .iter()
        .map(rows::lead)
        .collect::<Result<_, _>>()?;
    Ok(LeadPage { leads, total })
}

/// A sort field's key as listings sort by it, and whether a lead may lack one. Text sorts
/// ignore case, by the expression of their indexes.
fn sort_key(field: SortField) -> (&'static str, bool) {
    match field {
        SortField::CreatedAt => ("created_at", false),
        SortField::FirstName => (r#"lower(first_name) COLLATE "C""#, true),
        SortField::LastName => (r#"lower(last_name) COLLATE "C""#, true),
        SortField::Email => (r#"lower(email) COLLATE "C""#, true),
        SortField::Price => ("price", true),
        SortField::Status => ("status", false),
    }
}

/// The query's direction, as SQL writes it.
fn direction(query: &LeadQuery) -> &'static str {
    match query.sort.direction {
        SortDirection::Asc => "ASC",
        SortDirection::Desc => "DESC",
    }
}

/// The ORDER BY of a listing: the sort key with nulls last, then the id, both in the
/// requested direction. A key no lead lacks has no `NULLS LAST`, which would keep an index
/// read backwards (nulls first) from serving a descending order.
fn order_by(query: &LeadQuery) -> String {
    let (key, nullable) = sort_key(query.sort.field);
    let direction = direction(query);
    let nulls = if nullable { " NULLS LAST" } else { "" };
    format!("{key} {direction}{nulls}, id {direction}")
}

/// A cursor's key, as the sort's column holds it (a lead without one has none).
enum CursorKey {
    /// A time in milliseconds, or a price.
    Integer(i64),
    /// A text, or a status's name.
    Text(String),
}

/// A cursor's key for a sort by `field`; `None` for a lead without one, which stands in
/// the part of the order after the leads with one.
fn cursor_key(cursor: &Cursor, field: SortField) -> Result<Option<CursorKey>, Error> {
    let invalid = |message: &str| Error::Store(StoreError::Invalid(message.to_owned()));
    Ok(match (&cursor.key, field) {
        (SortKey::CreatedAt(at), SortField::CreatedAt) => Some(CursorKey::Integer(to_millis(at))),
        (SortKey::Text(value), SortField::FirstName | SortField::LastName | SortField::Email) => {
            match value {
                None => None,
                // No lead's text holds a NUL (PostgreSQL's text cannot): the cursor is not
                // after one of them.
                Some(value) if value.contains('\0') => {
                    return Err(invalid("the cursor's key holds a NUL character"));
                }
                Some(value) => Some(CursorKey::Text(value.clone())),
            }
        }
        (SortKey::Price(price), SortField::Price) => price.map(CursorKey::Integer),
        (SortKey::Status(status), SortField::Status) => {
            Some(CursorKey::Text(status.as_ref().to_owned()))
        }
        _ => return Err(invalid("the cursor is not of the query's sort field")),
    })
}

/// A batch of the project's leads matching `query`, strictly after `after` in its order
/// (keyset pagination); `limit` and `page` of the query do not apply. The order is
/// [`order_by`]'s: the leads with a sort key first, then those without one; each part is
/// read from the cursor on through the sort's index (a row comparison on the key and the
/// id), so a batch costs the same wherever it starts.
pub(crate) async fn export(
    c: &impl GenericClient,
    project: ProjectId,
    query: &LeadQuery,
    after: Option<&Cursor>,
    limit: u32,
) -> Result<Vec<StoredLead>, Error> {
    let cursor = match after {
        None => None,
        Some(cursor) => Some((cursor_key(cursor, query.sort.field)?, cursor.id.0)),
    };
    let (key, nullable) = sort_key(query.sort.field);
    let direction = direction(query);
    let beyond = match query.sort.direction {
        SortDirection::Asc => ">",
        SortDirection::Desc => "<",
    };
    let wanted = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut leads = Vec::new();
    // The part with keys, unless the cursor is already past it.
    if !matches!(cursor, Some((None, _))) {
        let mut statement = filter(project, query);
        if nullable {
            statement.push(&format!(" AND {key} IS NOT NULL"));
        }
        if let Some((Some(value), id)) = &cursor {
            let value = match value {
                CursorKey::Integer(value) => statement.bind(*value),
                // Lowercased as the column's key is.
                CursorKey::Text(value) => format!("lower({})", statement.bind(value.clone())),
            };
            let id = statement.bind(*id);
            statement.push(&format!(" AND ({key}, id) {beyond} ({value}, {id})"));
        }
        let limit = statement.bind(i64::from(limit));
        statement.sql = format!(
            "SELECT {LEAD_COLUMNS} FROM leads WHERE {} ORDER BY {key} {direction}, id {direction} LIMIT {limit}",
            statement.sql
        );
        for row in statement.rows(c).await? {
            leads.push(rows::lead(&row)?);
        }
    }
    // Then the part without: only text and price sorts have one.
    if nullable && leads.len() < wanted {
        let mut statement = filter(project, query);
        statement.push(&format!(" AND {key} IS NULL"));
        if let Some((None, id)) = &cursor {
            let id = statement.bind(*id);
            statement.push(&format!(" AND id {beyond} {id}"));
        }
        let rest = i64::try_from(wanted - leads.len()).unwrap_or(i64::MAX);
        let limit = statement.bind(rest);
        statement.sql = format!(
            "SELECT {LEAD_COLUMNS} FROM leads WHERE {} ORDER BY id {direction} LIMIT {limit}",
            statement.sql
        );
        for row in statement.rows(c).await? {
            leads.push(rows::lead(&row)?);
        }
    }
    Ok(leads)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_with_a_trigram() {
        // A word bounded by a character that is no word character is padded: `a-b` has
        // the trigram "  b".
        for term in [
            "ada",
            "okafor",
            "lead1",
            "222-33",
            "a b",
            "a-b",
            "ada lovelace",
            "éabc",
        ] {
            assert!(has_trigram(term), "{term:?}");
        }
        for term in ["ab", "éd", "%", "---", "é-é", "éa", "aé", "ééé", ""] {
            assert!(!has_trigram(term), "{term:?}");
        }
    }

    #[test]
    fn like_patterns_escape_wildcards() {
        assert_eq!(like_pattern("a%b_c\\d"), r"%a\%b\_c\\d%");
        assert_eq!(like_pattern("ada"), "%ada%");
    }
}
