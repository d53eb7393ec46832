//! The words' index's part in a listing: which of a query's words it looks up, the leads
//! it finds for them (with those above its mark), its counts, and its ids read once.

use leadtrack_core::request::LeadQuery;
use leadtrack_core::request::query::AssigneeFilter;
use leadtrack_core::types::{LeadStatus, ProjectId};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};

use crate::clauses::{filter, search_term};
use crate::rowid::{LEAD_BITS, LEAD_MASK};
use crate::rows::Error;
use crate::words::{self, Column, Lookup};

/// How a listing's words find their leads: through the words' index, asked `query`, and
/// the leads above its mark (`indexed_to`) besides.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Words {
    /// The index's query; `None` when it holds no lead with the words.
    pub(super) query: Option<String>,
    /// The ids the index gave for `query` when they were read already, in order, which
    /// the listing reads instead of asking the index again.
    found: Option<Vec<i64>>,
    /// Whether the index alone tells which leads hold every word.
    whole: bool,
    indexed_to: i64,
}

impl Words {
    /// The index's part in `query`'s listing: `None` when it looks up none of its words,
    /// which is then listed by its filters.
    pub(super) fn of(
        conn: &Connection,
        project: ProjectId,
        query: &LeadQuery,
    ) -> Result<Option<Self>, Error> {
        if few_of_a_member(conn, project, query)? {
            return Ok(None);
        }
        let term = query.search.as_deref().map(search_term);
        // A `q` word that many of the newest leads hold is checked on each lead: a word of
        // two characters always (its page is soon found in order, and the index's
        // vocabulary would read every lead that holds it to say which trigrams it begins),
        // a longer one when another word is looked up (reading the index for a word most
        // leads hold cost more than checking it on the other word's matches).
        let common = common_words(conn, project, &query.q)?;
        let any_rare = common.iter().any(|common| !common);
        let rare: Vec<&str> = query
            .q
            .iter()
            .zip(&common)
            .filter(|(word, common)| !**common || (word.chars().count() != 2 && !any_rare))
            .map(|(word, _)| word.as_str())
            .collect();
        let q = words::lookup(conn, Column::Q, rare.iter().copied())?;
        let search = words::lookup(conn, Column::Search, term.as_deref())?;
        let (mut parts, mut whole, mut nothing) = (Vec::new(), rare.len() == query.q.len(), false);
        for (lookup, words) in [(q, query.q.len()), (search, usize::from(term.is_some()))] {
            match lookup {
                Lookup::Unused => whole &= words == 0,
                Lookup::Nothing => nothing = true,
                Lookup::Query(part, all) => {
                    parts.push(part);
                    whole &= all;
                }
            }
        }
        if parts.is_empty() && !nothing {
            return Ok(None);
        }
        Ok(Some(Self {
            query: (!nothing).then(|| parts.join(" AND ")),
            found: None,
            whole,
            indexed_to: words::indexed_to(conn)?,
        }))
    }

    /// `SELECT {columns}` of the project's leads that the index finds (or that are above
    /// its mark) and `filter` passes, with the parameters of the lookup; the filter's
    /// follow. The lookup (or the ids it gave already, [`Self::read_once`]) drives (CROSS
    /// JOIN) and each lead is read by id, so a LIMIT stops the index's reading too.
    pub(super) fn hits(
        &self,
        project: ProjectId,
        columns: &str,
        filter: &str,
    ) -> (String, Vec<SqlValue>) {
        let (mut found, mut params) = (String::new(), Vec::new());
        if let Some(ids) = &self.found {
            found = "SELECT value AS id FROM json_each(?) UNION ALL ".to_owned();
            let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
            params = vec![SqlValue::Text(format!("[{}]", ids.join(",")))];
        } else if let Some(query) = &self.query {
            found = format!(
                "SELECT rowid & {} AS id FROM lead_words
                 WHERE lead_words MATCH ? AND rowid BETWEEN ? AND ? UNION ALL ",
                LEAD_MASK
            );
            let (low, high) = project_rowids(project);
            params = vec![
                SqlValue::Text(query.clone()),
                SqlValue::Integer(low),
                SqlValue::Integer(high),
            ];
        }
        params.push(SqlValue::Integer(self.indexed_to));
        let sql = format!(
            "SELECT {columns} FROM ({found}SELECT id FROM leads WHERE id > ?) AS hits
             CROSS JOIN leads ON leads.id = hits.id WHERE {filter}"
        );
        (sql, params)
    }

    /// How many of the project's leads the index finds, counted in the index alone.
    fn in_index(&self, conn: &Connection, project: ProjectId) -> Result<u64, Error> {
        let Some(matched) = &self.query else {
            return Ok(0);
        };
        let (low, high) = project_rowids(project);
        let found: i64 = conn
            .prepare_cached(
                "SELECT count(*) FROM lead_words
                 WHERE lead_words MATCH ?1 AND rowid BETWEEN ?2 AND ?3",
            )?
            .query_row((matched, low, high), |row| row.get(0))?;
        Ok(u64::try_from(found).unwrap_or_default())
    }

    /// These words with the ids of the project's leads the index finds, read once, when
    /// they are at most `most`; `None` when there are more.
    pub(super) fn read_once(
        &self,
        conn: &Connection,
        project: ProjectId,
        most: u64,
    ) -> Result<Option<Self>, Error> {
        match self.ids(conn, project, most, 0)? {
            Some(ids) if ids.len() as u64 > most => Ok(None),
            ids => Ok(Some(self.with_ids(ids))),
        }
    }

    /// The first `most` + 1 ids above `above` of the project's leads the index finds, in
    /// order (the index reads them fastest that way); `None` when it holds no lead with
    /// the words.
    pub(super) fn ids(
        &self,
        conn: &Connection,
        project: ProjectId,
        most: u64,
        above: i64,
    ) -> Result<Option<Vec<i64>>, Error> {
        let Some(matched) = &self.query else {
            return Ok(None);
        };
        let (low, high) = project_rowids(project);
        let ids = conn
            .prepare_cached(&format!(
                "SELECT rowid & {LEAD_MASK} FROM lead_words
                 WHERE lead_words MATCH ?1 AND rowid BETWEEN ?2 AND ?3 LIMIT ?4"
            ))?
            .query_map(
                (
                    matched,
                    low | (above.clamp(-1, LEAD_MASK - 1) + 1),
                    high,
                    i64::try_from(most + 1).unwrap_or(i64::MAX),
                ),
                |row| row.get(0),
            )?
            .collect::<Result<_, _>>()?;
        Ok(Some(ids))
    }

    /// These words with `ids` (`None`: none) as the ids the index gave, read instead of
    /// asking it again.
    pub(super) fn with_ids(&self, ids: Option<Vec<i64>>) -> Self {
        Self {
            found: ids,
            ..self.clone()
        }
    }

    /// The ids read once ([`Self::read_once`]), in order.
    pub(super) fn read(&self) -> Option<&[i64]> {
        self.found.as_deref()
    }

    /// How many of the project's leads hold the words of `query`, a `search` that filters
    /// by nothing else (but the statuses listed by default), when the index alone tells:
    /// its matches, less the spam leads among them, and the leads above its mark that
    /// match, checked one by one.
    pub(super) fn count(
        &self,
        conn: &Connection,
        project: ProjectId,
        query: &LeadQuery,
    ) -> Result<Option<u64>, Error> {
        let others = LeadQuery {
            search: None,
            ..query.clone()
        };
        if !self.whole || !others.is_unfiltered() {
            return Ok(None);
        }
        let in_index = i64::try_from(self.in_index(conn, project)?).unwrap_or(i64::MAX);
        // Less its spam (few, through their status's index); and the leads above the mark
        // that are listed (fewer, by id), each checked.
        let spam = LeadQuery {
            status: Some(vec![LeadStatus::Spam]),
            ..query.clone()
        };
        let counted = |query: &LeadQuery, by_id: bool, above: &str| -> Result<i64, Error> {
            let (filter, mut params) = filter(project, query, by_id);
            params.push(SqlValue::Integer(self.indexed_to));
            Ok(conn
                .prepare_cached(&format!(
                    "SELECT count(*) FROM leads WHERE {filter} AND id {above} ?"
                ))?
                .query_row(params_from_iter(&params), |row| row.get(0))?)
        };
        let spam_in_index = counted(&spam, false, "<=")?;
        let listed_above = counted(query, true, ">")?;
        Ok(u64::try_from(in_index - spam_in_index + listed_above).ok())
    }
}

/// How many of the project's newest leads tell whether a `q` word is common
/// ([`common_words`]).
const GLANCED: i64 = 200;

/// Which of the `q` words are common: held in their `q` text by one in twenty of the
/// project's [`GLANCED`] newest leads for a word of two characters (whose lookup reads the
/// index's vocabulary), by one in four for a longer one. A longer word is checked on a
/// rarer word's matches instead of read from the index only when that many leads hold
/// it: at a million leads, a surname in one lead in twenty was read from the index beside
/// a first name in 6.6 ms, and checked on the first name's 17,721 matches in 40 ms. Those
/// leads are read only when it can matter: for a word of two characters, or more than one
/// word.
fn common_words(
    conn: &Connection,
    project: ProjectId,
    words: &[String],
) -> Result<Vec<bool>, Error> {
    if words.len() < 2 && words.iter().all(|word| word.chars().count() != 2) {
        return Ok(vec![false; words.len()]);
    }
    let texts: Vec<String> = conn
        .prepare_cached(
            "SELECT q_text FROM leads WHERE project_id = ?1
             ORDER BY created_at DESC, id DESC LIMIT ?2",
        )?
        .query_map((project.0, GLANCED), |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    Ok(words
        .iter()
        .map(|word| {
            let holding = texts
                .iter()
                .filter(|text| text.contains(word.as_str()))
                .count();
            let share = if word.chars().count() == 2 { 20 } else { 4 };
            holding as i64 * share >= GLANCED
        })
        .collect())
}

/// Fewest leads of a member whose listing is found through the words' index: fewer are
/// read through their own index (`leads_assigned`) and each checked for the words, at
/// most a millisecond or two, where a word can have thousands of matches to check for the
/// member (the Mine tab's count beside every search).
pub(super) const MEMBER_FEW: i64 = 2_000;

/// How many leads a member holds, up to a limit: in their own index alone.
pub(super) const MEMBERS_LEADS: &str = "SELECT count(*) FROM (SELECT 1 FROM leads
    WHERE project_id = ?1 AND assigned_to = ?2 LIMIT ?3)";

/// Whether `query` searches a member's leads, and they are fewer than [`MEMBER_FEW`].
fn few_of_a_member(
    conn: &Connection,
    project: ProjectId,
    query: &LeadQuery,
) -> Result<bool, Error> {
    let Some(AssigneeFilter::User(user)) = query.assignee else {
        return Ok(false);
    };
    if query.q.is_empty() && query.search.is_none() {
        return Ok(false);
    }
    let theirs: i64 = conn
        .prepare_cached(MEMBERS_LEADS)?
        .query_row((project.0, user.0, MEMBER_FEW), |row| row.get(0))?;
    Ok(theirs < MEMBER_FEW)
}

/// The range of the words' index rowids of the project's leads.
pub(super) fn project_rowids(project: ProjectId) -> (i64, i64) {
    let low = project.0 << LEAD_BITS;
    (low, low | LEAD_MASK)
}
