//! A lead's rowid in the words' index (`lead_words`, migration 43): its project above its
//! id, so that a search within a project reads only that project's part of the
//! index. A leaf: the search and the index upkeep use it.

/// The bits of an index rowid that hold the lead's id; the project is above them.
pub(crate) const LEAD_BITS: u32 = 36;

/// The lead's id in an index rowid: `rowid & LEAD_MASK`.
pub(crate) const LEAD_MASK: i64 = (1 << LEAD_BITS) - 1;

/// A lead's rowid in the words' index.
pub(crate) fn index_rowid(project: i64, id: i64) -> i64 {
    project << LEAD_BITS | id
}
