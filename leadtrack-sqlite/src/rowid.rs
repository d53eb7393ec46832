//! A lead's rowid in the search indexes (`leads_search`, `leads_q`, `leads_q_grams`): its
//! project above its id (migration 14), so that a search within a project reads only that
//! project's part of each index. A leaf: the search and the index upkeep use it.

/// The bits of an index rowid that hold the lead's id; the project is above them.
pub(crate) const LEAD_BITS: u32 = 36;

/// A lead's rowid in the search indexes.
pub(crate) fn index_rowid(project: i64, id: i64) -> i64 {
    project << LEAD_BITS | id
}
