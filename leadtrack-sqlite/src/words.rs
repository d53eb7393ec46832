//! The one index of the leads' words (`lead_words`, migration 43), which serves `search` and
//! `q` alike, and its upkeep by the writer.
//!
//! A lead is stored without touching the index: the writer indexes new leads afterwards, in
//! id order and in batches of up to [`BATCH`], when it has no write waiting or at least every
//! [`LAG`] ([`Upkeep`]). Leads up to the mark `lead_words_state.indexed_to` are in the index;
//! a search checks those above it one by one (`listing.rs`), so a lead is found from its
//! first moment, and the index catches up after a restart on its own.
//!
//! The index keeps only which leads hold each trigram of their folded `q` text (`detail =
//! none`): a word of three characters or more is looked up by all its trigrams, and every
//! lead found is then checked for the word itself.

use std::time::{Duration, Instant};

use rusqlite::Connection;

use crate::rowid::index_rowid;
use crate::rows::Error;

/// Most leads indexed in one transaction: a few milliseconds of the writer's time, so that
/// writes waiting behind it are not held long.
const BATCH: i64 = 2_000;

/// Longest the index waits behind a writer that never runs out of writes.
const LAG: Duration = Duration::from_millis(200);

/// When the writer last brought the index up to date.
pub(crate) struct Upkeep {
    last: Instant,
}

impl Upkeep {
    /// Upkeep that has not run yet.
    pub(crate) fn new() -> Self {
        Self {
            last: Instant::now(),
        }
    }

    /// Indexes the leads stored since the last round, when the writer is `idle` or the
    /// index has waited [`LAG`]: at most [`BATCH`] of them, in their own transaction (a
    /// failure leaves the index as it was, to try again). Whether it indexed a whole batch,
    /// so that more may wait.
    pub(crate) fn run(&mut self, conn: &Connection, idle: bool) -> bool {
        if !idle && self.last.elapsed() < LAG {
            return false;
        }
        self.last = Instant::now();
        let started = Instant::now();
        match in_transaction(conn, |conn| catch_up(conn, BATCH)) {
            Ok(0) => false,
            Ok(indexed) => {
                metrics::counter!("leadtrack_sqlite_words_indexed_total").increment(indexed);
                metrics::histogram!("leadtrack_sqlite_words_index_duration_seconds")
                    .record(started.elapsed().as_secs_f64());
                indexed == BATCH as u64
            }
            Err(err) => {
                tracing::error!(error = %err, "could not update the search index");
                false
            }
        }
    }
}

/// Runs `f` in a transaction of its own, rolled back if it fails.
fn in_transaction<T>(
    conn: &Connection,
    f: impl FnOnce(&Connection) -> Result<T, Error>,
) -> Result<T, Error> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    match f(conn).and_then(|done| Ok(conn.execute_batch("COMMIT").map(|()| done)?)) {
        Ok(done) => Ok(done),
        Err(err) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(err)
        }
    }
}

/// The highest lead id in the index: every lead at or below it is indexed.
pub(crate) fn indexed_to(conn: &Connection) -> Result<i64, Error> {
    Ok(conn
        .prepare_cached("SELECT indexed_to FROM lead_words_state")?
        .query_row([], |row| row.get(0))?)
}

/// Indexes up to `most` of the leads above the mark, in id order, and moves the mark past
/// them. Returns how many it indexed.
pub(crate) fn catch_up(conn: &Connection, most: i64) -> Result<u64, Error> {
    let from = indexed_to(conn)?;
    let mut read = conn.prepare_cached(
        "SELECT id, project_id, q_text FROM leads WHERE id > ?1 ORDER BY id LIMIT ?2",
    )?;
    let mut insert =
        conn.prepare_cached("INSERT INTO lead_words (rowid, q_text) VALUES (?1, ?2)")?;
    let mut rows = read.query((from, most))?;
    let (mut last, mut indexed) = (from, 0);
    while let Some(row) = rows.next()? {
        let (id, project, text): (i64, i64, String) = (row.get(0)?, row.get(1)?, row.get(2)?);
        // A line break after the text, as after each of its lines, so that every two
        // characters begin a trigram ([`query`]).
        insert.execute((index_rowid(project, id), text + "\n"))?;
        (last, indexed) = (id, indexed + 1);
    }
    if indexed > 0 {
        conn.prepare_cached("UPDATE lead_words_state SET indexed_to = ?1")?
            .execute([last])?;
    }
    Ok(indexed)
}

/// Most trigrams a two-character word is looked up by: a word that begins more is common,
/// and is checked on each lead instead (or its page found along the inbox's order).
const MOST_BEGUN: usize = 400;

/// The index's query for `words` (folded, as the index's text is), every one required:
/// each word of three characters or more by all its trigrams; each word of two by the
/// trigrams it begins (every two characters of a lead's text begin one: the text is
/// indexed with a line break after it), read from the index's vocabulary, unless there are
/// more than [`MOST_BEGUN`]. `None` when no word is looked up: such words are checked on
/// each lead instead, as are a word of one character and one holding a NUL (which FTS5
/// would read as the query's end).
pub(crate) fn query<'a>(
    conn: &Connection,
    words: impl IntoIterator<Item = &'a str>,
) -> Result<Option<String>, Error> {
    let mut parts: Vec<String> = Vec::new();
    let mut add = |part: String| {
        if !parts.contains(&part) {
            parts.push(part);
        }
    };
    for word in words.into_iter().filter(|word| !word.contains('\0')) {
        let chars: Vec<char> = word.chars().collect();
        if chars.len() == 2 {
            if let Some(begun) = begun_by(conn, &chars)? {
                add(begun);
            }
            continue;
        }
        for gram in chars.windows(3) {
            add(quoted(&gram.iter().collect::<String>()));
        }
    }
    Ok((!parts.is_empty()).then(|| parts.join(" AND ")))
}

/// The index's query for the leads holding the two characters `pair`: any of the trigrams
/// they begin, `None` when more than [`MOST_BEGUN`] do. When none does, a trigram no text
/// holds (a lead above the index's mark may still hold the pair: those are checked).
fn begun_by(conn: &Connection, pair: &[char]) -> Result<Option<String>, Error> {
    let from: String = pair.iter().collect();
    // The first string past every trigram that begins with the pair: its second character
    // one higher (a surrogate's gap, or past the last character, is never a trigram's).
    let next = char::from_u32(u32::from(pair[1]) + 1).unwrap_or(char::MAX);
    let until: String = [pair[0], next].iter().collect();
    let terms: Vec<String> = conn
        .prepare_cached(
            "SELECT term FROM lead_words_terms WHERE term >= ?1 AND term < ?2 LIMIT ?3",
        )?
        .query_map((&from, &until, MOST_BEGUN as i64 + 1), |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    Ok(match terms.len() {
        0 => Some(quoted("\u{1}\u{1}\u{1}")),
        n if n > MOST_BEGUN => None,
        _ => {
            let terms: Vec<String> = terms.iter().map(|term| quoted(term)).collect();
            Some(format!("({})", terms.join(" OR ")))
        }
    })
}

/// A term of the index's query language: `term` between double quotes, each of its own
/// doubled.
fn quoted(term: &str) -> String {
    format!("\"{}\"", term.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Long words by every trigram, once; two-character words by the trigrams they begin
    /// in the index (none: a trigram no text holds; too many: not looked up); one-character
    /// words and NULs not at all.
    #[test]
    fn a_query_asks_for_every_trigram_of_the_long_words_and_those_short_ones_begin() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::schema::migrate(&mut conn).unwrap();
        let mut text = String::new();
        for c in (0..=MOST_BEGUN as u32).filter_map(|n| char::from_u32(0x4e00 + n)) {
            text.push_str(&format!("xy{c} "));
        }
        text.push_str("jonas\nkaya");
        conn.execute(
            "INSERT INTO lead_words (rowid, q_text) VALUES (1, ?1)",
            [text + "\n"],
        )
        .unwrap();
        let query = |words: &[&str]| query(&conn, words.iter().copied()).unwrap();
        assert_eq!(
            query(&["okafor", "jo", "kaf", "k"]).as_deref(),
            Some(r#""oka" AND "kaf" AND "afo" AND "for" AND ("jon")"#)
        );
        assert_eq!(query(&["ya"]).as_deref(), Some("(\"ya\n\")"));
        assert_eq!(query(&["a", "on"]).as_deref(), Some(r#"("ona")"#));
        assert_eq!(query(&["zz"]).as_deref(), Some("\"\u{1}\u{1}\u{1}\""));
        assert_eq!(query(&["xy"]), None, "xy begins more than the most");
        assert_eq!(query(&["a\"bc"]).as_deref(), Some(r#""a""b" AND """bc""#));
        assert_eq!(query(&["j", "k"]), None);
        assert_eq!(query(&["ab\0cd"]), None);
    }

    /// New leads are indexed above the mark and in order; an indexed lead's change and
    /// deletion reach the index at once; and a lead above the mark is not touched.
    #[test]
    fn the_index_follows_the_mark_and_the_triggers() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::schema::migrate(&mut conn).unwrap();
        conn.execute_batch(
            "PRAGMA foreign_keys = OFF;
             INSERT INTO leads (id, project_id, status, created_at, updated_at, data,
                 search_text, has_gclid, has_cid, has_fbp, has_fbc, q_text)
             VALUES (1, 1, 'open', 0, 0, '{}', '', 0, 0, 0, 0, 'ada lovelace'),
                    (2, 2, 'open', 0, 0, '{}', '', 0, 0, 0, 0, 'ada byron'),
                    (3, 1, 'open', 0, 0, '{}', '', 0, 0, 0, 0, 'grace hopper');",
        )
        .unwrap();
        let found = |conn: &Connection, word: &str| -> Vec<i64> {
            conn.prepare("SELECT rowid FROM lead_words WHERE lead_words MATCH ?1 ORDER BY rowid")
                .unwrap()
                .query_map([query(conn, [word]).unwrap().unwrap()], |row| row.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        assert_eq!(found(&conn, "ada"), Vec::<i64>::new());
        assert_eq!(catch_up(&conn, 2).unwrap(), 2);
        assert_eq!(indexed_to(&conn).unwrap(), 2);
        assert_eq!(found(&conn, "ada"), [index_rowid(1, 1), index_rowid(2, 2)]);
        // Lead 3 is above the mark: its change waits for the catch-up, which reads it.
        conn.execute("UPDATE leads SET q_text = 'grace kay' WHERE id = 3", [])
            .unwrap();
        assert_eq!(catch_up(&conn, 10).unwrap(), 1);
        assert_eq!(found(&conn, "kay"), [index_rowid(1, 3)]);
        assert_eq!(found(&conn, "hopper"), Vec::<i64>::new());
        // Indexed leads follow their changes at once.
        conn.execute("UPDATE leads SET q_text = 'ada king' WHERE id = 1", [])
            .unwrap();
        conn.execute("DELETE FROM leads WHERE id = 2", []).unwrap();
        assert_eq!(found(&conn, "ada"), [index_rowid(1, 1)]);
        assert_eq!(found(&conn, "king"), [index_rowid(1, 1)]);
        assert_eq!(found(&conn, "lovelace"), Vec::<i64>::new());
        assert_eq!(catch_up(&conn, 10).unwrap(), 0);
    }
}
