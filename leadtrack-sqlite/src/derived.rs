//! The data derived from the leads (the words' index, the kept counts per status, hour and
//! facet) checked against a rebuild from the leads themselves: what a restart after a crash
//! must reach on its own ([`crate::SqliteStore::check_derived`]).

use rusqlite::Connection;

use crate::counts::{self, Tally};
use crate::rows::Error;
use crate::words;

/// How the derived data differs from a rebuild: one line per difference, none when it
/// matches. It is compared up to its mark (the leads above it are not indexed nor counted
/// yet, by design), the words' index entry by entry.
pub(crate) fn check(conn: &Connection) -> Result<Vec<String>, Error> {
    let mut differences = Vec::new();
    let (extra, missing) = compare_words(conn)?;
    if extra + missing > 0 {
        differences.push(format!(
            "the words' index has {extra} entries a rebuild lacks and lacks {missing}"
        ));
    }
    let counted_to = words::indexed_to(conn)?;
    for Tally {
        table,
        key,
        sums,
        select,
    } in counts::TALLIES.iter()
    {
        let kept = format!(
            "SELECT {key}, {} FROM {table} WHERE total <> 0",
            sums.join(", ")
        );
        let differ: i64 = conn.query_row(
            &format!(
                "SELECT (SELECT count(*) FROM ({kept} EXCEPT {select}))
                      + (SELECT count(*) FROM ({select} EXCEPT {kept}))"
            ),
            (0, counted_to),
            |row| row.get(0),
        )?;
        if differ > 0 {
            differences.push(format!("{table} differs from a recount in {differ} rows"));
        }
    }
    Ok(differences)
}

/// The entries (trigram, lead, column, place) of the words' index that a rebuild of it from the leads up
/// to its mark lacks, and those it lacks: the rebuild is a temporary index, compared
/// through both indexes' vocabularies.
fn compare_words(conn: &Connection) -> Result<(i64, i64), Error> {
    let indexed_to = words::indexed_to(conn)?;
    conn.execute_batch(
        "INSERT INTO lead_words (lead_words) VALUES ('integrity-check');
         CREATE VIRTUAL TABLE temp.words_rebuilt USING fts5 (
             search_text, q_text, content = '', tokenize = 'trigram case_sensitive 1'
         );
         CREATE VIRTUAL TABLE temp.words_live_terms
             USING fts5vocab (main, lead_words, instance);
         CREATE VIRTUAL TABLE temp.words_rebuilt_terms
             USING fts5vocab (temp, words_rebuilt, instance);",
    )?;
    let compared = (|| {
        conn.execute(
            "INSERT INTO temp.words_rebuilt (rowid, search_text, q_text)
             SELECT project_id << 36 | id, search_text || char(10),
                 indexed_q_text(search_text, q_text) || char(10)
             FROM leads WHERE id <= ?1",
            [indexed_to],
        )?;
        let count = |a: &str, b: &str| -> Result<i64, Error> {
            Ok(conn.query_row(
                &format!(
                    "SELECT count(*) FROM (SELECT term, doc, col, offset FROM temp.{a}
                     EXCEPT SELECT term, doc, col, offset FROM temp.{b})"
                ),
                [],
                |row| row.get(0),
            )?)
        };
        Ok((
            count("words_live_terms", "words_rebuilt_terms")?,
            count("words_rebuilt_terms", "words_live_terms")?,
        ))
    })();
    conn.execute_batch(
        "DROP TABLE temp.words_live_terms;
         DROP TABLE temp.words_rebuilt_terms;
         DROP TABLE temp.words_rebuilt;",
    )?;
    compared
}

/// How many leads the words' index has not reached yet.
pub(crate) fn words_behind(conn: &Connection) -> Result<u64, Error> {
    let behind: i64 = conn.query_row(
        "SELECT count(*) FROM leads WHERE id > (SELECT indexed_to FROM lead_words_state)",
        [],
        |row| row.get(0),
    )?;
    Ok(u64::try_from(behind).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rebuilt index matches the kept one, and a change made behind the index's back (a
    /// lead's text written without its trigger) shows.
    #[test]
    fn a_difference_from_a_rebuild_shows() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::schema::migrate(&mut conn).unwrap();
        crate::rows::insert_test_leads(
            &conn,
            &[
                (1, 1, "open", 0, "", "ada lovelace"),
                (2, 1, "rated", 7_200_000, "", "grace hopper"),
                (3, 2, "open", 0, "", "kay"),
            ],
        );
        words::catch_up(&conn, 2).unwrap();
        assert_eq!(check(&conn).unwrap(), Vec::<String>::new());
        assert_eq!(words_behind(&conn).unwrap(), 1);
        conn.execute_batch(
            "DROP TRIGGER lead_words_update;
             UPDATE leads SET q_text = 'ada king' WHERE id = 1;
             UPDATE lead_status_counts SET total = 5 WHERE status = 'rated';",
        )
        .unwrap();
        // Of the 7 trigrams of "ada king\n" the index lacks the 5 past "ada " ("a k" to
        // "ng\n"), and keeps the 9 of the 11 of "ada lovelace\n" that "ada king" lacks.
        assert_eq!(
            check(&conn).unwrap(),
            [
                "the words' index has 9 entries a rebuild lacks and lacks 5",
                "lead_status_counts differs from a recount in 2 rows",
            ]
        );
    }
}
