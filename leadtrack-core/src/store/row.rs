//! A lead's row as backends store it.

use crate::lead::{LeadData, LeadKeys};

/// A lead's row as a backend stores it: its data as JSON and every value derived from it
/// (match keys, search text, the first and last touch of its channel path), built before
/// the write so that a store's transaction spends its time on SQL alone.
#[derive(Clone, Debug)]
pub struct LeadRow {
    /// The lead's data.
    pub data: LeadData,
    /// `data` as JSON, as stored.
    pub json: String,
    /// The searchable fields, one per line, so that a substring search never matches
    /// across two fields (a search term has its line breaks folded to spaces, see
    /// [`crate::matching::search_term`]).
    pub search_text: String,
    /// The normalised values the lead is matched and filtered by.
    pub keys: LeadKeys,
    /// The first touch's source, medium and campaign, then the last touch's
    /// ([`crate::report::touch_columns`]).
    pub touches: [Option<String>; 6],
}

impl LeadRow {
    /// The row of `data`.
    pub fn of(data: LeadData) -> Result<Self, serde_json::Error> {
        let keys = data.keys();
        let touches = crate::channel::touches(&data);
        let touches =
            crate::report::touch_columns(&touches).map(|column| column.map(str::to_owned));
        Ok(Self {
            json: serde_json::to_string(&data)?,
            search_text: keys.searchable.join("\n"),
            touches,
            keys,
            data,
        })
    }
}
