//! The `q` search's index of short words. A word of one or two characters has no trigram,
//! so the trigram index `leads_q` cannot find it, and without help every lead of the
//! project would be read to check it. So each lead's `q` text is also indexed by the
//! distinct strings of one and two characters it holds (its grams), one token each, in
//! `leads_q_grams` (migration 40): a short word is in the text exactly when its gram is
//! among the lead's.
//!
//! The index stores only which leads hold a token (`detail = none`), under the same rowids
//! as `leads_q` (the project above the lead's id), and is written here with the lead's row
//! (SQL cannot split text into grams); a deleted lead leaves it by trigger.

use rusqlite::Connection;

use crate::rowid::index_rowid;
use crate::rows::Error;

/// Appends a gram's token: its UTF-8 bytes in hex, which FTS5's `ascii` tokenizer keeps
/// whole whatever the characters (punctuation, other scripts, NUL). Written in place: a
/// lead's insert makes a few hundred.
fn push_token(out: &mut String, gram: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for byte in gram.bytes() {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
}

/// The indexed text of a lead's `q` text: the token of each of its grams, once. Grams with
/// white space are left out: a `q` word never holds any.
pub(crate) fn of_text(q_text: &str) -> String {
    let chars: Vec<(usize, char)> = q_text.char_indices().collect();
    let mut grams: Vec<&str> = Vec::with_capacity(chars.len() * 2);
    for (i, &(start, c)) in chars.iter().enumerate() {
        if c.is_whitespace() {
            continue;
        }
        let one = start + c.len_utf8();
        grams.push(&q_text[start..one]);
        if let Some(&(_, next)) = chars.get(i + 1).filter(|(_, next)| !next.is_whitespace()) {
            grams.push(&q_text[start..one + next.len_utf8()]);
        }
    }
    grams.sort_unstable();
    grams.dedup();
    let mut text = String::with_capacity(grams.len() * 5);
    for gram in grams {
        if !text.is_empty() {
            text.push(' ');
        }
        push_token(&mut text, gram);
    }
    text
}

/// The index's query for the words of a `q` search that are too short for a trigram (one
/// or two characters), every one required; `None` when it has none.
pub(crate) fn query(words: &[String]) -> Option<String> {
    let tokens: Vec<String> = words
        .iter()
        .filter(|word| is_short(word))
        .map(|word| {
            let mut quoted = String::from("\"");
            push_token(&mut quoted, word);
            quoted.push('"');
            quoted
        })
        .collect();
    (!tokens.is_empty()).then(|| tokens.join(" AND "))
}

/// Whether a `q` word is one this index finds (and the trigram index cannot).
pub(crate) fn is_short(word: &str) -> bool {
    (1..3).contains(&word.chars().count())
}

/// Indexes a lead's `q` text: `replaced` when the lead was indexed before (its old grams
/// leave first).
pub(crate) fn index(
    conn: &Connection,
    (project, id): (i64, i64),
    q_text: &str,
    replaced: bool,
) -> Result<(), Error> {
    let rowid = index_rowid(project, id);
    if replaced {
        conn.prepare_cached("DELETE FROM leads_q_grams WHERE rowid = ?1")?
            .execute([rowid])?;
    }
    conn.prepare_cached("INSERT INTO leads_q_grams (rowid, grams) VALUES (?1, ?2)")?
        .execute((rowid, of_text(q_text)))?;
    Ok(())
}

/// Indexes the leads stored before the index (migration 40), a thousand at a time.
pub(crate) fn backfill(conn: &Connection) -> Result<(), Error> {
    let mut after = 0_i64;
    loop {
        let batch: Vec<(i64, i64, String)> = conn
            .prepare_cached(
                "SELECT id, project_id, q_text FROM leads WHERE id > ?1 ORDER BY id LIMIT 1000",
            )?
            .query_map([after], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
            .collect::<Result<_, _>>()?;
        let Some(&(last, _, _)) = batch.last() else {
            return Ok(());
        };
        after = last;
        for (id, project, q_text) in batch {
            index(conn, (project, id), &q_text, false)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_indexed_by_each_string_of_one_or_two_characters_once() {
        // "ab\nab ü": a, b, ab (once), ü; nothing across a line or a space.
        assert_eq!(of_text("ab\nab ü"), "61 6162 62 c3bc");
        assert_eq!(of_text(""), "");
        assert_eq!(of_text("東京"), "e4baac e69db1 e69db1e4baac");
    }

    #[test]
    fn only_short_words_are_queried_and_all_of_them_are_required() {
        let words = |list: &[&str]| list.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            query(&words(&["jo", "kaya", "k"])).as_deref(),
            Some("\"6a6f\" AND \"6b\"")
        );
        assert_eq!(query(&words(&["kaya"])), None);
        assert!(is_short("東京") && !is_short("abc") && !is_short(""));
    }
}
