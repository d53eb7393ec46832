//! The one index of the leads' words (`lead_words`, migration 43), which serves `search` and
//! `q` alike, and its upkeep by the writer.
//!
//! A lead is stored without touching the index: the writer indexes new leads afterwards, in
//! id order and in batches of up to [`BATCH`], when it has no write waiting or at least every
//! [`LAG`] ([`Upkeep`]). Leads up to the mark `lead_words_state.indexed_to` are in the index;
//! a search checks those above it one by one (`listing.rs`), so a lead is found from its
//! first moment, and the index catches up after a restart on its own. The kept counts
//! (`counts.rs`) are written in the same batches, up to the same mark.
//!
//! The index holds two columns as trigrams with their places: each lead's search text, and
//! the words of its folded `q` text that are not whole words of its search text
//! ([`indexed_q_text`]; a name or an email is in both texts, and held once). A word of
//! three characters or more is the phrase of its trigrams, which matches exactly the leads
//! whose column holds it; a `q` word is looked up in both columns ([`lookup`]).

use std::time::{Duration, Instant};

use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;

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

/// Indexes up to `most` of the leads above the mark, in id order, adds them to the kept
/// counts ([`crate::counts::add`]), and moves the mark past them. Returns how many it
/// indexed.
pub(crate) fn catch_up(conn: &Connection, most: i64) -> Result<u64, Error> {
    let from = indexed_to(conn)?;
    let mut read = conn.prepare_cached(
        "SELECT id, project_id, search_text, q_text FROM leads WHERE id > ?1
         ORDER BY id LIMIT ?2",
    )?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO lead_words (rowid, search_text, q_text) VALUES (?1, ?2, ?3)",
    )?;
    let mut rows = read.query((from, most))?;
    let (mut last, mut indexed) = (from, 0);
    while let Some(row) = rows.next()? {
        let (id, project): (i64, i64) = (row.get(0)?, row.get(1)?);
        let (search, q): (String, String) = (row.get(2)?, row.get(3)?);
        let q = indexed_q_text(&search, &q);
        // A line break after each text, as after each of its lines, so that every two
        // characters begin a trigram ([`lookup`]).
        insert.execute((index_rowid(project, id), search + "\n", q + "\n"))?;
        (last, indexed) = (id, indexed + 1);
    }
    if indexed > 0 {
        crate::counts::add(conn, from, last)?;
        conn.prepare_cached("UPDATE lead_words_state SET indexed_to = ?1")?
            .execute([last])?;
    }
    Ok(indexed)
}

/// The `q` text the words' index holds of a lead: the words of `q_text` (one a line) that
/// are not whole words of `search_text`. A `q` word within a word left out is within the
/// search text, so the index finds it there ([`lookup`]); the lead's own `q_text` stays
/// whole, and its words are checked there. About a sixth of the index at a million leads
/// (`docs/performance.md`).
pub(crate) fn indexed_q_text(search_text: &str, q_text: &str) -> String {
    let mut kept = String::with_capacity(q_text.len());
    for word in q_text.split('\n') {
        if word.is_empty() || search_text.split_whitespace().any(|held| held == word) {
            continue;
        }
        if !kept.is_empty() {
            kept.push('\n');
        }
        kept.push_str(word);
    }
    kept
}

/// Gives `conn` the SQL function `indexed_q_text(search_text, q_text)` ([`indexed_q_text`]),
/// which the index's trigger and its rebuild use.
pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8
        | FunctionFlags::SQLITE_DETERMINISTIC
        | FunctionFlags::SQLITE_INNOCUOUS;
    conn.create_scalar_function("indexed_q_text", 2, flags, |ctx| {
        Ok(indexed_q_text(
            ctx.get_raw(0).as_str()?,
            ctx.get_raw(1).as_str()?,
        ))
    })
}

/// What a listing's words are looked up in.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Column {
    /// The lowercased fields `search` reads (`leads.search_text`), the index's column of
    /// the same name.
    Search,
    /// The folded text `q` reads (`leads.q_text`): the index's `q_text` and `search_text`
    /// columns, between which it holds each word once ([`indexed_q_text`]).
    Q,
}

impl Column {
    /// The index's column, when the lookup reads one alone.
    fn alone(self) -> Option<&'static str> {
        match self {
            Self::Search => Some("search_text"),
            Self::Q => None,
        }
    }

    /// The filter of the index's columns that begins the lookup's query: none for `q`, whose
    /// words are looked up in both of the index's columns (a filter naming both cost a
    /// tenth more time in the index).
    fn filter(self) -> &'static str {
        match self {
            Self::Search => "{search_text} : ",
            Self::Q => "",
        }
    }

    /// Whether the leads the index finds for `word` all hold it. A `q` word found in the
    /// search text may not be in the `q` text, which holds a phone number's digits alone,
    /// and folds letters the search text only lowercases: a word of a phone's digits and
    /// punctuation (`5-67`), and one that is not ASCII (a Greek final sigma, say), are
    /// checked on each lead. An ASCII word within a lowercased word is within its folded
    /// form, whose other letters fold apart from it.
    fn finds_exactly(self, word: &str) -> bool {
        let phone_punctuation = |c: char| matches!(c, '+' | '-' | '.' | '/' | '(' | ')');
        let phone_like = word.chars().any(phone_punctuation)
            && word
                .chars()
                .all(|c| c.is_ascii_digit() || phone_punctuation(c));
        matches!(self, Self::Search) || (word.is_ascii() && !phone_like)
    }
}

/// What the index can tell of a listing's words in one column.
#[derive(Debug, PartialEq)]
pub(crate) enum Lookup {
    /// Nothing: no word is one it looks up (none, or each of one character, or of two that
    /// begin more than [`MOST_BEGUN`] trigrams), so each is checked on every lead.
    Unused,
    /// No lead it holds has them all: a word of two characters begins no trigram there.
    Nothing,
    /// The query that finds the leads holding the words it looks up (and, for a `q` word
    /// [`Column::finds_exactly`] doubts, some that hold it only in their search text), and
    /// whether the index alone tells which leads hold all the words.
    Query(String, bool),
}

/// Most trigrams a two-character word is looked up by: a word that begins more is common,
/// and is checked on each lead instead (its page found along the inbox's order).
const MOST_BEGUN: usize = 400;

/// What the index tells of `words` (as `column` holds them: lowercased, or folded), every
/// one required: each word of three characters or more is the phrase of its trigrams;
/// each of two, any of the trigrams it begins in the index's columns that `column` reads,
/// from the index's vocabulary. A word of one character, one holding a NUL (which FTS5
/// would read as the query's end), and one of two that begins more than [`MOST_BEGUN`]
/// trigrams are not looked up.
pub(crate) fn lookup<'a>(
    conn: &Connection,
    column: Column,
    words: impl IntoIterator<Item = &'a str>,
) -> Result<Lookup, Error> {
    let (mut parts, mut whole) = (Vec::new(), true);
    for word in words {
        whole &= column.finds_exactly(word);
        let length = word.chars().count();
        let part = match word.contains('\0') {
            true => None,
            false if length >= 3 => Some(quoted(word)),
            false if length == 2 => match begun_by(conn, column, word)? {
                Some(terms) if terms.is_empty() => return Ok(Lookup::Nothing),
                Some(terms) => Some(format!("({})", terms.join(" OR "))),
                None => None,
            },
            false => None,
        };
        match part {
            Some(part) if !parts.contains(&part) => parts.push(part),
            Some(_) => {}
            None => whole = false,
        }
    }
    Ok(match parts.is_empty() {
        true => Lookup::Unused,
        false => Lookup::Query(
            format!("{}({})", column.filter(), parts.join(" AND ")),
            whole,
        ),
    })
}

/// The trigrams the two characters `pair` begin in `column`'s columns of the index, quoted;
/// `None` when more than [`MOST_BEGUN`] do.
fn begun_by(conn: &Connection, column: Column, pair: &str) -> Result<Option<Vec<String>>, Error> {
    let chars: Vec<char> = pair.chars().collect();
    // The first string past every trigram that begins with the pair: its second character
    // one higher (a surrogate's gap, or past the last character, is never a trigram's).
    let next = char::from_u32(u32::from(chars[1]) + 1).unwrap_or(char::MAX);
    let until: String = [chars[0], next].iter().collect();
    let terms: Vec<String> = conn
        .prepare_cached(
            "SELECT DISTINCT term FROM lead_words_terms
             WHERE term >= ?1 AND term < ?2 AND (?3 IS NULL OR col = ?3) LIMIT ?4",
        )?
        .query_map(
            (pair, &until, column.alone(), MOST_BEGUN as i64 + 1),
            |row| row.get::<_, String>(0),
        )?
        .map(|term| term.map(|term| quoted(&term)))
        .collect::<Result<_, _>>()?;
    Ok((terms.len() <= MOST_BEGUN).then_some(terms))
}

/// A phrase of the index's query language: `text` between double quotes, each of its own
/// doubled (the trigram tokenizer makes the phrase of its trigrams).
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Long words as phrases, once; two-character words by the trigrams they begin in
    /// their column (none: nothing; too many: not looked up); one-character words and NULs
    /// not at all.
    #[test]
    fn a_lookup_asks_for_phrases_and_the_trigrams_short_words_begin() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::schema::migrate(&mut conn).unwrap();
        let mut q = String::new();
        for c in (0..=MOST_BEGUN as u32).filter_map(|n| char::from_u32(0x4e00 + n)) {
            q.push_str(&format!("xy{c} "));
        }
        q.push_str("jonas\nkaya\n");
        conn.execute(
            "INSERT INTO lead_words (rowid, search_text, q_text) VALUES (1, 'ana\n', ?1)",
            [q],
        )
        .unwrap();
        let lookup = |column, words: &[&str]| lookup(&conn, column, words.iter().copied()).unwrap();
        let query = |text: &str, whole| Lookup::Query(text.to_owned(), whole);
        assert_eq!(
            lookup(Column::Q, &["okafor", "jo", "okafor", "k"]),
            query(r#"("okafor" AND ("jon"))"#, false)
        );
        assert_eq!(
            lookup(Column::Q, &["ya", "on"]),
            query("((\"ya\n\") AND (\"ona\"))", true)
        );
        assert_eq!(
            lookup(Column::Search, &["an"]),
            query(r#"{search_text} : (("ana"))"#, true)
        );
        // A `q` word's pair begins trigrams in both columns, each once.
        assert_eq!(
            lookup(Column::Q, &["na", "an"]),
            query("((\"na\n\" OR \"nas\") AND (\"ana\"))", true)
        );
        assert_eq!(lookup(Column::Search, &["ya"]), Lookup::Nothing);
        assert_eq!(
            lookup(Column::Q, &["xy"]),
            Lookup::Unused,
            "xy begins too many"
        );
        assert_eq!(lookup(Column::Q, &["a\"bc"]), query(r#"("a""bc")"#, true));
        // Found in the search text, a phone's digits with punctuation and a word that is
        // not ASCII may be missing from the `q` text: each lead is checked.
        for (word, exactly) in [("5-67", false), ("(0)1", false), ("567", true)] {
            let phrase = format!("(\"{word}\")");
            assert_eq!(
                lookup(Column::Q, &[word]),
                query(&phrase, exactly),
                "{word}"
            );
        }
        assert_eq!(lookup(Column::Q, &["οδος"]), query(r#"("οδος")"#, false));
        assert_eq!(
            lookup(Column::Search, &["5-67"]),
            query(r#"{search_text} : ("5-67")"#, true)
        );
        assert_eq!(lookup(Column::Q, &["j", "k"]), Lookup::Unused);
        assert_eq!(lookup(Column::Q, &["ab\0cd"]), Lookup::Unused);
        assert_eq!(lookup(Column::Q, &[]), Lookup::Unused);
    }

    /// The index's `q` column holds the `q` words that are not whole words of the search
    /// text: a name or an email once, a phone's digits, folded letters and the other fields'
    /// words beside it.
    #[test]
    fn the_q_column_holds_what_the_search_text_lacks() {
        let search = "jonas\nmüller\nj@x.io\n+49 (0)151 1234-5678\nbig co";
        let q = "jonas\nmuller\nj@x.io\n49015112345678\nbig\nco\ncall\nbig-co";
        assert_eq!(
            indexed_q_text(search, q),
            "muller\n49015112345678\ncall\nbig-co"
        );
        assert_eq!(indexed_q_text("ada", "ada"), "");
        assert_eq!(indexed_q_text("", ""), "");
        assert_eq!(
            indexed_q_text("ada lovelace", "ada lovelace"),
            "ada lovelace"
        );
    }

    /// New leads are indexed above the mark and in order; an indexed lead's change and
    /// deletion reach the index at once; and a lead above the mark is not touched.
    #[test]
    fn the_index_follows_the_mark_and_the_triggers() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::schema::migrate(&mut conn).unwrap();
        crate::rows::insert_test_leads(
            &conn,
            &[
                (1, 1, "open", 0, "ada", "ada lovelace"),
                (2, 2, "open", 0, "ada", "ada byron"),
                (3, 1, "open", 0, "grace", "grace hopper"),
            ],
        );
        let found = |conn: &Connection, column, word: &str| -> Vec<i64> {
            let Lookup::Query(query, _) = lookup(conn, column, [word]).unwrap() else {
                panic!("{word} is looked up");
            };
            conn.prepare("SELECT rowid FROM lead_words WHERE lead_words MATCH ?1 ORDER BY rowid")
                .unwrap()
                .query_map([query], |row| row.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        assert_eq!(found(&conn, Column::Q, "ada"), Vec::<i64>::new());
        assert_eq!(catch_up(&conn, 2).unwrap(), 2);
        assert_eq!(indexed_to(&conn).unwrap(), 2);
        let both = [index_rowid(1, 1), index_rowid(2, 2)];
        assert_eq!(found(&conn, Column::Q, "ada"), both);
        assert_eq!(found(&conn, Column::Search, "ada"), both);
        assert_eq!(found(&conn, Column::Search, "lovelace"), Vec::<i64>::new());
        // Lead 1's `q` word "ada" is its search text: the `q` column holds the rest alone.
        let in_q_column = |conn: &Connection, phrase: &str| -> i64 {
            conn.query_row(
                "SELECT count(*) FROM lead_words WHERE lead_words MATCH ?1",
                [format!("{{q_text}} : \"{phrase}\"")],
                |row| row.get(0),
            )
            .unwrap()
        };
        conn.execute(
            "UPDATE leads SET q_text = 'ada' || char(10) || 'lovelace' WHERE id = 1",
            [],
        )
        .unwrap();
        assert_eq!(in_q_column(&conn, "ada"), 1, "lead 2's q text is one word");
        assert_eq!(in_q_column(&conn, "lovelace"), 1);
        assert_eq!(found(&conn, Column::Q, "ada"), both);
        // Lead 3 is above the mark: its change waits for the catch-up, which reads it.
        conn.execute("UPDATE leads SET q_text = 'grace kay' WHERE id = 3", [])
            .unwrap();
        assert_eq!(catch_up(&conn, 10).unwrap(), 1);
        assert_eq!(found(&conn, Column::Q, "kay"), [index_rowid(1, 3)]);
        assert_eq!(found(&conn, Column::Q, "hopper"), Vec::<i64>::new());
        // Indexed leads follow their changes at once.
        conn.execute(
            "UPDATE leads SET q_text = 'ada king', search_text = 'king' WHERE id = 1",
            [],
        )
        .unwrap();
        conn.execute("DELETE FROM leads WHERE id = 2", []).unwrap();
        assert_eq!(found(&conn, Column::Q, "ada"), [index_rowid(1, 1)]);
        assert_eq!(found(&conn, Column::Search, "king"), [index_rowid(1, 1)]);
        assert_eq!(found(&conn, Column::Search, "ada"), Vec::<i64>::new());
        assert_eq!(found(&conn, Column::Q, "lovelace"), Vec::<i64>::new());
        assert_eq!(catch_up(&conn, 10).unwrap(), 0);
    }
}
