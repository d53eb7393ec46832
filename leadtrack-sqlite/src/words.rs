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
    /// failure leaves the index as it was, to try again).
    pub(crate) fn run(&mut self, conn: &Connection, idle: bool) {
        if !idle && self.last.elapsed() < LAG {
            return;
        }
        self.last = Instant::now();
        let started = Instant::now();
        match in_transaction(conn, |conn| catch_up(conn, BATCH)) {
            Ok(0) => {}
            Ok(indexed) => {
                metrics::counter!("leadtrack_sqlite_words_indexed_total").increment(indexed);
                metrics::histogram!("leadtrack_sqlite_words_index_duration_seconds")
                    .record(started.elapsed().as_secs_f64());
            }
            Err(err) => tracing::error!(error = %err, "could not update the search index"),
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
        insert.execute((index_rowid(project, id), text))?;
        (last, indexed) = (id, indexed + 1);
    }
    if indexed > 0 {
        conn.prepare_cached("UPDATE lead_words_state SET indexed_to = ?1")?
            .execute([last])?;
    }
    Ok(indexed)
}

/// The index's query for `words` (folded, as the index's text is): every trigram of each
/// word of three characters or more, all required. `None` when no word has one: such words
/// are checked on each lead instead. A word holding a NUL, which FTS5 would read as the
/// query's end, is left to that check too.
pub(crate) fn query<'a>(words: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut grams: Vec<String> = Vec::new();
    for word in words.into_iter().filter(|word| !word.contains('\0')) {
        let chars: Vec<char> = word.chars().collect();
        for gram in chars.windows(3) {
            let gram: String = gram.iter().collect();
            let quoted = format!("\"{}\"", gram.replace('"', "\"\""));
            if !grams.contains(&quoted) {
                grams.push(quoted);
            }
        }
    }
    (!grams.is_empty()).then(|| grams.join(" AND "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_asks_for_every_trigram_of_the_long_words_once() {
        assert_eq!(
            query(["okafor", "jo", "kaf"]).as_deref(),
            Some(r#""oka" AND "kaf" AND "afo" AND "for""#)
        );
        assert_eq!(query(["a\"bc"]).as_deref(), Some(r#""a""b" AND """bc""#));
        assert_eq!(query(["jo", "k"]), None);
        assert_eq!(query(["ab\0cd"]), None);
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
                .query_map([query([word]).unwrap()], |row| row.get(0))
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
