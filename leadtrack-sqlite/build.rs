//! Makes the schema's migration list from `migrations/`: every `NNNN_name.sql`, numbered
//! from 1 without a gap, becomes one entry of `MIGRATIONS` (`src/schema.rs`), in order.
//!
//! A migration that keeps counts per facet states its facets once, in a comment line
//! (`-- facets: form_name form_key ...` and `-- flags: has_gclid ...`), and writes
//! `{{facet_rows TABLE}}`, `{{facet_values ROW}}` and `{{facet_columns [ROW]}}` where each
//! trigger needs the whole list; this expands them. The SQL a reviewer reads is then the
//! statement once, not seventeen copies of it.
//!
//! The last migration's lists are also written as `facets.rs`, the constants the writer
//! counts new leads by (`src/counts.rs`), so that the list is stated in one place.

use std::fmt::Write as _;
use std::path::Path;
use std::{env, fs};

fn main() {
    let dir = Path::new("migrations");
    println!("cargo::rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = fs::read_dir(dir)
        .expect("migrations/ exists")
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "sql"))
        .collect();
    files.sort();

    let out = Path::new(&env::var("OUT_DIR").expect("cargo sets OUT_DIR")).to_owned();
    let mut list = String::from("&[\n");
    let mut latest = None;
    for (index, file) in files.iter().enumerate() {
        let name = file.file_name().unwrap().to_str().expect("UTF-8 file name");
        let number: usize = name
            .split('_')
            .next()
            .and_then(|digits| digits.parse().ok())
            .unwrap_or_else(|| panic!("{name}: a migration is named NNNN_name.sql"));
        assert_eq!(
            number,
            index + 1,
            "{name}: migrations are numbered from 1 without a gap"
        );
        let sql = fs::read_to_string(file).expect("readable migration");
        let facets = Facets::of(&sql);
        let expanded = facets
            .as_ref()
            .map_or(sql.clone(), |facets| facets.expand(&sql));
        latest = facets.or(latest);
        let target = out.join(name);
        fs::write(&target, expanded).expect("writable OUT_DIR");
        writeln!(
            list,
            "    include_str!({:?}),",
            target.display().to_string()
        )
        .unwrap();
    }
    list.push(']');
    fs::write(out.join("migrations.rs"), list).expect("writable OUT_DIR");
    let facets = latest.expect("a migration names the facets");
    fs::write(out.join("facets.rs"), facets.constants()).expect("writable OUT_DIR");
}

/// The facets a migration counts by: text columns, and flags (integers counted as text).
struct Facets {
    text: Vec<String>,
    flags: Vec<String>,
}

impl Facets {
    /// The facets a migration's `-- facets:` and `-- flags:` lines name, if it has them.
    fn of(sql: &str) -> Option<Self> {
        let words = |prefix: &str| -> Option<Vec<String>> {
            let line = sql.lines().find_map(|line| line.strip_prefix(prefix))?;
            Some(line.split_whitespace().map(str::to_owned).collect())
        };
        Some(Self {
            text: words("-- facets:")?,
            flags: words("-- flags:").unwrap_or_default(),
        })
    }

    /// Every column, text first, as `ROW.column` (or bare without a row).
    fn columns(&self, row: Option<&str>) -> Vec<String> {
        let prefix = row.map(|row| format!("{row}.")).unwrap_or_default();
        self.text
            .iter()
            .chain(&self.flags)
            .map(|column| format!("{prefix}{column}"))
            .collect()
    }

    /// The value a facet counts: the text column, or the flag as text.
    fn value(&self, column: &str, row: &str) -> String {
        if self.flags.iter().any(|flag| flag == column) {
            format!("CAST({row}{column} AS TEXT)")
        } else {
            format!("{row}{column}")
        }
    }

    /// The lists as Rust constants.
    fn constants(&self) -> String {
        format!(
            "/// The text columns the kept counts count by (the last migration's `-- facets:`).\n\
             pub(crate) const FACETS: &[&str] = &{:?};\n\
             /// The flags the kept counts count by, as text (its `-- flags:`).\n\
             pub(crate) const FLAGS: &[&str] = &{:?};\n",
            self.text, self.flags
        )
    }

    /// `sql` with each placeholder replaced by its list.
    fn expand(&self, sql: &str) -> String {
        let mut out = String::new();
        let mut rest = sql;
        while let Some(start) = rest.find("{{") {
            let end = start
                + rest[start..]
                    .find("}}")
                    .expect("a placeholder ends with }}");
            out.push_str(&rest[..start]);
            let inside = rest[start + 2..end].trim();
            let (kind, rest_of) = inside.split_once(' ').unwrap_or((inside, ""));
            let arg = Some(rest_of.trim()).filter(|arg| !arg.is_empty());
            out.push_str(&match (kind, arg) {
                // The table may be followed by a condition: `leads WHERE ...`.
                ("facet_rows", Some(table)) => self.rows(table),
                ("facet_values", Some(row)) => self.values(row),
                ("facet_columns", row) => {
                    let status = row.map_or("status".to_owned(), |row| format!("{row}.status"));
                    let mut all = vec![status];
                    all.extend(self.columns(row));
                    all.join(", ")
                }
                _ => panic!("unknown placeholder {{{{{}}}}}", &rest[start + 2..end]),
            });
            rest = &rest[end + 2..];
        }
        out.push_str(rest);
        out
    }

    /// One `SELECT project_id, status, facet, value FROM table` per facet, in a UNION ALL.
    fn rows(&self, table: &str) -> String {
        self.columns(None)
            .iter()
            .map(|column| {
                let value = self.value(column, "");
                format!(
                    "SELECT project_id, status, '{column}' AS facet, {value} AS value FROM {table}"
                )
            })
            .collect::<Vec<_>>()
            .join(" UNION ALL\n    ")
    }

    /// One `SELECT facet, value` of `row` (`new` or `old`) per facet, in a UNION ALL.
    fn values(&self, row: &str) -> String {
        self.columns(None)
            .iter()
            .map(|column| {
                let value = self.value(column, &format!("{row}."));
                format!("SELECT '{column}' AS facet, {value} AS value")
            })
            .collect::<Vec<_>>()
            .join(" UNION ALL\n        ")
    }
}
