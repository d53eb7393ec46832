//! getLeads: the filters, the trigram search, sorts, pages and the counts of the inbox's
//! tabs, as the SQLite backend lists them (exports read in batches are [`crate::keyset`]'s).
//!
//! Every statement starts with the project (`project_id = $1`), so every plan is an index
//! search within it. A search reads `lead_search`, each lead's search text and status in a
//! narrow table of its own (see migration 2). A term that holds a trigram is matched with
//! `LIKE`, which the `pg_trgm` GIN index `lead_search_text` serves; a shorter one (or one
//! of punctuation only) with `strpos` on the project's texts. A search filtered by nothing
//! but statuses is counted in `lead_search` alone; pages, and counts with other filters,
//! read `leads` and look each lead's text up by its key. Text sorts ignore case as
//! SQLite's `NOCASE` does (A–Z only, then byte order):
//! `translate(column, 'A…Z', 'a…z') COLLATE "C"`, the expression of their indexes,
//! whatever the database's locale.

use deadpool_postgres::GenericClient;
use leadtrack_core::lead::{LeadPage, StoredLead};
use leadtrack_core::matching;
use leadtrack_core::request::LeadQuery;
use leadtrack_core::request::query::{Facet, FacetValue, SortDirection, SortField};
use leadtrack_core::store::per_status;
use leadtrack_core::store::sql::{self, Listed, NOT_SPAM};
use leadtrack_core::time::to_millis;
use leadtrack_core::types::{LeadStatus, ProjectId};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use crate::Error;
use crate::rows::{self, LEAD_COLUMNS, all, one};

/// A statement being written: its SQL and its parameters, each bound as the next `$n`.
#[derive(Default)]
pub(crate) struct Statement {
    /// The SQL so far.
    pub(crate) sql: String,
    /// The parameters bound so far, `$1` first.
    params: Vec<Box<dyn ToSql + Sync + Send>>,
}

impl Statement {
    /// Binds `value` as the next parameter, and returns its placeholder (`$n`).
    pub(crate) fn bind(&mut self, value: impl ToSql + Sync + Send + 'static) -> String {
        self.params.push(Box::new(value));
        format!("${}", self.params.len())
    }

    /// Appends `clause` to the SQL.
    pub(crate) fn push(&mut self, clause: &str) {
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
    pub(crate) async fn rows(&self, c: &impl GenericClient) -> Result<Vec<Row>, Error> {
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

/// The table a listing's WHERE clause is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Table {
    /// `leads`: a search looks each lead's text up in `lead_search` by its key.
    Leads,
    /// `lead_search` alone, which holds the project, the id, the status and the search
    /// text: for a query that filters by nothing else.
    Search,
}

impl Table {
    /// `lead_search` for a query that searches and filters by nothing but statuses
    /// (whose count needs no column of `leads`), else `leads`.
    fn for_count(query: &LeadQuery) -> Self {
        let others = LeadQuery {
            status: None,
            search: None,
            ..query.clone()
        };
        if query.search.is_some() && others.is_unfiltered() {
            Self::Search
        } else {
            Self::Leads
        }
    }

    /// The table's name.
    fn name(self) -> &'static str {
        match self {
            Self::Leads => "leads",
            Self::Search => "lead_search",
        }
    }
}

/// The WHERE clause of a listing on `table` (without `WHERE`) and its parameters; more may
/// be bound after it. The project is always `$1`.
pub(crate) fn filter(project: ProjectId, query: &LeadQuery, table: Table) -> Statement {
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
    } else {
        statement.push(&format!(" AND {NOT_SPAM}"));
    }
    for facet in query.facet_filters() {
        match facet.value {
            FacetValue::Text(value) => statement.and_equal(facet.column, Some(value)),
            FacetValue::Flag(exists) => {
                statement.push(&format!(" AND {} = {exists}", facet.column))
            }
        }
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
    for word in &query.q {
        let matches = if word.contains('\0') {
            // No lead's text holds a NUL (PostgreSQL's text cannot).
            "false".to_owned()
        } else if has_trigram(word) {
            let pattern = statement.bind(like_pattern(word));
            format!("q_text LIKE {pattern}")
        } else {
            let word = statement.bind(word.clone());
            format!("strpos(q_text, {word}) > 0")
        };
        statement.push(&format!(" AND {matches}"));
    }
    if let Some(term) = query.search.as_deref().map(search_term) {
        let matches = if term.contains('\0') {
            // No lead's text holds a NUL (PostgreSQL's text cannot).
            "false".to_owned()
        } else if has_trigram(&term) {
            let pattern = statement.bind(like_pattern(&term));
            format!("search_text LIKE {pattern}")
        } else {
            // No trigram to look up: each lead of the project is checked.
            let term = statement.bind(term);
            format!("strpos(search_text, {term}) > 0")
        };
        match table {
            Table::Search => statement.push(&format!(" AND {matches}")),
            Table::Leads => statement.push(&format!(
                " AND EXISTS (SELECT 1 FROM lead_search
                     WHERE lead_search.project_id = leads.project_id
                       AND lead_search.id = leads.id AND {matches})"
            )),
        }
    }
    if let Some(duplicates) = query.duplicates {
        statement.push(&format!(" AND {}", duplicates.condition()));
    }
    if let Some(assignee) = query.assignee {
        statement.push(&format!(" AND {}", assignee.condition()));
    }
    statement
}

/// The distinct values of a column among the project's leads, in order.
pub(crate) async fn listed_values(
    c: &impl GenericClient,
    project: ProjectId,
    listed: Listed,
) -> Result<Vec<String>, Error> {
    let sql = sql::distinct_values(listed, "$1");
    all(c, &sql, &[&project.0])
        .await?
        .iter()
        .map(|row| Ok(row.try_get(0)?))
        .collect()
}

/// The counts per status of the leads matching `query` but for its status: from the kept
/// counts when nothing else filters, else in one grouped pass.
pub(crate) async fn status_counts(
    c: &impl GenericClient,
    project: ProjectId,
    query: &LeadQuery,
) -> Result<Vec<(LeadStatus, u64)>, Error> {
    let any_status = query.any_status();
    let rows = if any_status.only_statuses().is_some() {
        all(
            c,
            "SELECT status, sum(total)::bigint FROM lead_status_totals
             WHERE project_id = $1 GROUP BY status",
            &[&project.0],
        )
        .await?
    } else if let Some(facet) = any_status.only_facet() {
        facet_counts(c, project, &facet).await?
    } else {
        let table = Table::for_count(&any_status);
        let mut statement = filter(project, &any_status, table);
        let limit = bound(&mut statement, query);
        statement.sql = format!(
            "SELECT status, count(*) FROM (SELECT status FROM {} WHERE {}{limit}) AS matches
             GROUP BY status",
            table.name(),
            statement.sql
        );
        statement.rows(c).await?
    };
    let counted = rows
        .iter()
        .map(|row| Ok((row.try_get::<_, &str>(0)?, row.try_get::<_, i64>(1)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    Ok(per_status(&counted))
}

/// The kept counts of the project's leads with `facet`'s value, per status, each summed
/// over its slots. A click id's absence is counted as its presence is: the facet's value
/// is the flag.
async fn facet_counts(
    c: &impl GenericClient,
    project: ProjectId,
    facet: &Facet,
) -> Result<Vec<Row>, Error> {
    let value = match &facet.value {
        FacetValue::Text(value) => value.clone(),
        FacetValue::Flag(flag) => flag.to_string(),
    };
    all(
        c,
        "SELECT status, sum(total)::bigint FROM lead_facet_totals
         WHERE project_id = $1 AND facet = $2 AND value = $3 GROUP BY status",
        &[&project.0, &facet.column, &value],
    )
    .await
}

/// How many of the project's leads are in `statuses`, from the counts the trigger keeps,
/// each summed over its slots.
async fn kept_total(
    c: &impl GenericClient,
    project: ProjectId,
    statuses: &[LeadStatus],
) -> Result<i64, Error> {
    // A status listed twice counts once.
    let mut names: Vec<String> = statuses
        .iter()
        .map(|status| status.as_ref().to_owned())
        .collect();
    names.sort_unstable();
    names.dedup();
    let row = one(
        c,
        "SELECT coalesce(sum(total), 0)::bigint FROM lead_status_totals
         WHERE project_id = $1 AND status = ANY($2)",
        &[&project.0, &names],
    )
    .await?;
    Ok(match row {
        Some(row) => row.try_get(0)?,
        None => 0,
    })
}

/// A page of the project's leads matching `query`, and how many match in all (exactly).
///
/// The total comes from the kept counts when only the status filters (or nothing does),
/// and is counted otherwise; a page past the end is not read.
/// Whether the total of `query` is a count of its matches (it filters by more than
/// statuses), which costs about what reading its page does.
pub(crate) fn counts_matches(query: &LeadQuery) -> bool {
    query.only_statuses().is_none() && query.only_facet().is_none()
}

/// A page and its total on one connection, one after the other: for a total that is a
/// kept count, which a second connection would not make sooner.
pub(crate) async fn list(
    c: &impl GenericClient,
    project: ProjectId,
    query: &LeadQuery,
) -> Result<LeadPage, Error> {
    let total = total(c, project, query).await?;
    let leads = if query.offset() >= total {
        Vec::new()
    } else {
        page(c, project, query).await?
    };
    Ok(LeadPage {
        leads,
        total,
        total_is_lower_bound: !query.counted_all(total),
    })
}

/// The number of leads `query` matches: a kept count when it filters by nothing but
/// statuses, else a count of the matches.
pub(crate) async fn total(
    c: &impl GenericClient,
    project: ProjectId,
    query: &LeadQuery,
) -> Result<u64, Error> {
    let total = if let Some(statuses) = query.only_statuses() {
        kept_total(c, project, statuses).await?
    } else if let Some(facet) = query.only_facet() {
        let statuses = query.statuses();
        let mut total = 0;
        for row in facet_counts(c, project, &facet).await? {
            let status: &str = row.try_get(0)?;
            if statuses.iter().any(|s| s.as_ref() == status) {
                total += row.try_get::<_, i64>(1)?;
            }
        }
        total
    } else {
        let count = count_statement(project, query, Part::All);
        match one(c, &count.sql, &count.params()).await? {
            Some(row) => row.try_get(0)?,
            None => 0,
        }
    };
    Ok(u64::try_from(total).unwrap_or_default())
}

/// The page of leads `query` asks for. A sort whose key a lead may lack lists the leads
/// with one first, then those without (by id), in both directions: read as two parts, each
/// in the order of an index, the second only when the page reaches it.
pub(crate) async fn page(
    c: &impl GenericClient,
    project: ProjectId,
    query: &LeadQuery,
) -> Result<Vec<StoredLead>, Error> {
    let read = |statement: Statement| async move {
        statement
            .rows(c)
            .await?
            .iter()
            .map(rows::lead)
            .collect::<Result<Vec<_>, Error>>()
    };
    let (_, nullable) = sort_key(query.sort.field);
    let (limit, offset) = (
        i64::from(query.limit),
        i64::try_from(query.offset()).unwrap_or(i64::MAX),
    );
    if !nullable {
        return read(page_statement(project, query, Part::All, limit, offset)).await;
    }
    let mut leads = read(page_statement(project, query, Part::Keyed, limit, offset)).await?;
    let found = i64::try_from(leads.len()).unwrap_or(i64::MAX);
    if found == limit {
        return Ok(leads);
    }
    // The page reaches past the leads with a key: how many there are, when this page
    // shows none of them, fixes where in the others it starts.
    let keyed = if found > 0 || offset == 0 {
        offset + found
    } else {
        let count = count_statement(project, query, Part::Keyed);
        match one(c, &count.sql, &count.params()).await? {
            Some(row) => row.try_get(0)?,
            None => 0,
        }
    };
    let rest = read(page_statement(
        project,
        query,
        Part::Unkeyed,
        limit - found,
        (offset - keyed).max(0),
    ))
    .await?;
    leads.extend(rest);
    Ok(leads)
}

/// Which of a listing's leads a statement reads, by whether they have the sort's key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    /// Every lead (the sort's key is never missing).
    All,
    /// The leads with the key, in its order.
    Keyed,
    /// The leads without, in the order of their ids.
    Unkeyed,
}

/// The count of the leads `query` matches (of `part` of them), when no kept count
/// answers it.
fn count_statement(project: ProjectId, query: &LeadQuery, part: Part) -> Statement {
    // A part is told by the sort's key, which only `leads` holds.
    let table = match part {
        Part::All => Table::for_count(query),
        Part::Keyed | Part::Unkeyed => Table::Leads,
    };
    let mut statement = filter(project, query, table);
    restrict(&mut statement, query, part);
    let limit = bound(&mut statement, query);
    statement.sql = format!(
        "SELECT count(*) FROM (SELECT 1 FROM {} WHERE {}{limit}) AS matches",
        table.name(),
        statement.sql
    );
    statement
}

/// The LIMIT that stops a count of `query`'s matches where [`LeadQuery::counted`] says,
/// bound to `statement`: empty when every match is counted.
fn bound(statement: &mut Statement, query: &LeadQuery) -> String {
    match query.counted() {
        Some(bound) => {
            let bound = statement.bind(i64::try_from(bound).unwrap_or(i64::MAX));
            format!(" LIMIT {bound}")
        }
        None => String::new(),
    }
}

/// `limit` leads of `part` of those `query` matches, from `offset` on.
fn page_statement(
    project: ProjectId,
    query: &LeadQuery,
    part: Part,
    limit: i64,
    offset: i64,
) -> Statement {
    let mut statement = filter(project, query, Table::Leads);
    restrict(&mut statement, query, part);
    let (key, _) = sort_key(query.sort.field);
    let direction = direction(query);
    let order = match part {
        Part::All | Part::Keyed => format!("{key} {direction}, id {direction}"),
        Part::Unkeyed => format!("id {direction}"),
    };
    let limit = statement.bind(limit);
    let offset = statement.bind(offset);
    statement.sql = format!(
        "SELECT {LEAD_COLUMNS} FROM leads WHERE {} ORDER BY {order} LIMIT {limit} OFFSET {offset}",
        statement.sql
    );
    statement
}

/// Narrows `statement` to `part` of the leads, by the sort's key.
fn restrict(statement: &mut Statement, query: &LeadQuery, part: Part) {
    let (key, _) = sort_key(query.sort.field);
    match part {
        Part::All => {}
        Part::Keyed => statement.push(&format!(" AND {key} IS NOT NULL")),
        Part::Unkeyed => statement.push(&format!(" AND {key} IS NULL")),
    }
}

/// `$text` with A–Z folded to a–z (and nothing else, as SQLite's `NOCASE`), as the text
/// sorts' indexes hold it (`schema.rs`).
macro_rules! nocase {
    ($text:expr) => {
        concat!(
            "translate(",
            $text,
            ", 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
        )
    };
}

/// `text` (SQL) with A–Z folded to a–z, as [`nocase!`] writes it: for a bound value.
pub(crate) fn nocase(text: &str) -> String {
    format!(nocase!("{}"), text)
}

/// A sort field's key as listings sort by it, and whether a lead may lack one. Names
/// ignore case, by the expression of their indexes; emails sort by their matching key, as
/// on SQLite; both compared byte by byte.
pub(crate) fn sort_key(field: SortField) -> (&'static str, bool) {
    match field {
        SortField::CreatedAt => ("created_at", false),
        SortField::FirstName => (concat!(nocase!("first_name"), r#" COLLATE "C""#), true),
        SortField::LastName => (concat!(nocase!("last_name"), r#" COLLATE "C""#), true),
        SortField::Email => (r#"email_key COLLATE "C""#, true),
        SortField::Price => ("price", true),
        SortField::Status => ("status", false),
    }
}

/// The query's direction, as SQL writes it.
pub(crate) fn direction(query: &LeadQuery) -> &'static str {
    match query.sort.direction {
        SortDirection::Asc => "ASC",
        SortDirection::Desc => "DESC",
    }
}

#[cfg(test)]
mod tests;

#[cfg(all(test, leadtrack_postgres))]
mod plans;
