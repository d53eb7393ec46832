//! Past leads from a CSV file: its columns mapped to lead fields, each row checked by the
//! keyed route's rules and dated by its own `createdAt`. Rows that cannot be a lead are
//! reported with their line (the header is line 1) and skipped; the store skips duplicates
//! ([`crate::store::sql::import_duplicate`]).
//!
//! Imported leads count as created through the keyed route (route 2), and are history: they
//! are not announced to lead webhooks or alerts, and nothing is sent to the platforms until
//! someone rates one.

use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, Utc};
use csv::{ReaderBuilder, StringRecord};
use serde_json::Value;

use crate::lead::LeadData;
use crate::mapping::{self, FieldMap, MappedLead};

/// A row made into a lead, with its date.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportedLead {
    /// Its line in the file.
    pub line: u64,
    /// The lead.
    pub data: LeadData,
    /// When it was created, from the file (or the import's time, when no column has it).
    pub created_at: DateTime<Utc>,
}

/// A row that is not imported, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadRow {
    /// Its line in the file (the header is line 1).
    pub line: u64,
    /// Why, in words.
    pub reason: String,
}

/// What an import did, so far or in all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportCounts {
    /// Leads created.
    pub imported: u64,
    /// Rows skipped as leads already there (or earlier in the file).
    pub duplicates: u64,
}

impl std::ops::AddAssign for ImportCounts {
    fn add_assign(&mut self, other: Self) {
        self.imported += other.imported;
        self.duplicates += other.duplicates;
    }
}

/// A CSV file read for import: its header, and which column fills which field.
#[derive(Clone, Debug)]
pub struct ImportFile {
    text: String,
    delimiter: u8,
    headers: Vec<String>,
    /// `(target, column index)`, in mapping order.
    columns: Vec<(String, usize)>,
}

impl ImportFile {
    /// Reads `bytes` (UTF-8, comma-, semicolon- or tab-separated, as the header shows), its
    /// columns mapped by name where they are named like the contract's fields, and as
    /// `overrides` say (`TARGET=COLUMN`). The problem in words for a file that cannot be
    /// imported at all.
    pub fn read(bytes: Vec<u8>, overrides: &[FieldMap]) -> Result<Self, String> {
        let text = String::from_utf8(bytes).map_err(|_| {
            "the file is not UTF-8 text: save it as \"CSV UTF-8\" and try again".to_owned()
        })?;
        let delimiter = delimiter(text.lines().next().unwrap_or_default());
        let headers: Vec<String> = reader(&text, delimiter)
            .headers()
            .map_err(|err| format!("the header cannot be read: {err}"))?
            .iter()
            .map(|name| name.trim().to_owned())
            .collect();
        if headers.iter().all(String::is_empty) {
            return Err("the file has no header row".to_owned());
        }
        let mut mapped = mapping::overridden(&auto_mapping(&headers), overrides);
        mapped.retain(|pair| !pair.source.is_empty());
        let mut columns = Vec::new();
        for pair in mapped {
            let Some(index) = headers
                .iter()
                .position(|h| h.eq_ignore_ascii_case(&pair.source))
            else {
                return Err(format!(
                    "{} is mapped from \"{}\", which is not a column; the columns are {}",
                    pair.target,
                    pair.source,
                    headers.join(", ")
                ));
            };
            columns.push((pair.target, index));
        }
        if columns.is_empty() {
            return Err("no column is mapped to a lead field".to_owned());
        }
        Ok(Self {
            text,
            delimiter,
            headers,
            columns,
        })
    }

    /// The same file mapped anew: by name where columns are named like fields, and as
    /// `overrides` say (an override with an empty source unmaps its field).
    pub fn remap(&self, overrides: &[FieldMap]) -> Result<Self, String> {
        Self::read(self.text.clone().into_bytes(), overrides)
    }

    /// The columns' names.
    pub fn headers(&self) -> &[String] {
        &self.headers
    }

    /// The mapping in use, `TARGET=COLUMN`.
    pub fn mapping(&self) -> Vec<FieldMap> {
        self.columns
            .iter()
            .map(|(target, index)| FieldMap {
                target: target.clone(),
                source: self.headers[*index].clone(),
            })
            .collect()
    }

    /// How many rows the file has (not counting the header).
    pub fn rows(&self) -> usize {
        reader(&self.text, self.delimiter).records().count()
    }

    /// The first `count` rows as they are in the file, for a preview.
    pub fn sample(&self, count: usize) -> Vec<Vec<String>> {
        reader(&self.text, self.delimiter)
            .records()
            .take(count)
            .map(|record| match record {
                Ok(record) => record.iter().map(str::to_owned).collect(),
                Err(_) => Vec::new(),
            })
            .collect()
    }

    /// Each row as a lead, or why it is not one, in file order; rows dated later than
    /// `now` (allowing a day for time zones) are bad.
    pub fn leads(
        &self,
        now: DateTime<Utc>,
    ) -> impl Iterator<Item = Result<ImportedLead, BadRow>> + '_ {
        reader(&self.text, self.delimiter)
            .into_records()
            .map(move |record| match record {
                Ok(record) => {
                    let line = record.position().map_or(0, |p| p.line());
                    self.lead(&record, now)
                        .map_err(|reason| BadRow { line, reason })
                }
                Err(err) => Err(BadRow {
                    line: err.position().map_or(0, |p| p.line()),
                    reason: format!("the row cannot be read: {err}"),
                }),
            })
    }

    /// One record as a lead: the mapped columns fill their fields, the others are kept in
    /// `formData` under their names.
    fn lead(&self, record: &StringRecord, now: DateTime<Utc>) -> Result<ImportedLead, String> {
        let mut lead = MappedLead::default();
        for (target, index) in &self.columns {
            lead.set(target, record.get(*index).unwrap_or_default());
        }
        for (index, value) in record.iter().enumerate() {
            let mapped = self.columns.iter().any(|(_, at)| *at == index);
            match self.headers.get(index) {
                Some(name) if !mapped && !name.is_empty() && !value.trim().is_empty() => {
                    lead.keep(name, Value::String(value.trim().to_owned()));
                }
                _ => {}
            }
        }
        let created_at = match &lead.created_at {
            Some(text) => created_at(text)?,
            None if self.columns.iter().any(|(target, _)| target == "createdAt") => {
                return Err("createdAt is empty".to_owned());
            }
            None => now,
        };
        if created_at > now + Duration::days(1) {
            return Err(format!("createdAt \"{created_at}\" is in the future"));
        }
        let parsed = lead.lead().map_err(|err| match err.errors.first() {
            Some(field) => format!("{}: {}", field.field, field.message),
            None => err.message,
        })?;
        Ok(ImportedLead {
            line: record.position().map_or(0, |p| p.line()),
            data: parsed.data,
            created_at,
        })
    }
}

/// The columns named like a field ([`mapping::target`]), mapped to it; of two named like
/// one field (`Telefon` and `Mobil`), the first.
fn auto_mapping(headers: &[String]) -> Vec<FieldMap> {
    let mut mapped: Vec<FieldMap> = Vec::new();
    for header in headers {
        let Some(target) = mapping::target(header) else {
            continue;
        };
        if !mapped.iter().any(|pair| pair.target == target) {
            mapped.push(FieldMap {
                target: target.to_owned(),
                source: header.clone(),
            });
        }
    }
    mapped
}

/// The separator the header line uses: the most frequent of `,`, `;` and tab.
fn delimiter(header: &str) -> u8 {
    [b',', b';', b'\t']
        .into_iter()
        .max_by_key(|d| header.bytes().filter(|b| b == d).count())
        .unwrap_or(b',')
}

/// A reader of `text`, its first row the header; rows may be shorter or longer.
fn reader(text: &str, delimiter: u8) -> csv::Reader<&[u8]> {
    ReaderBuilder::new()
        .delimiter(delimiter)
        .flexible(true)
        .from_reader(text.as_bytes())
}

/// A time as files write it: RFC 3339, or `YYYY-MM-DD HH:MM[:SS]` and `YYYY-MM-DD` in
/// UTC.
fn created_at(text: &str) -> Result<DateTime<Utc>, String> {
    let text = text.trim();
    if let Ok(time) = DateTime::parse_from_rfc3339(text) {
        return Ok(time.with_timezone(&Utc));
    }
    for format in [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(time) = NaiveDateTime::parse_from_str(text, format) {
            return Ok(time.and_utc());
        }
    }
    if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(date.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc());
    }
    Err(format!(
        "createdAt \"{text}\" is not a date (2026-03-15T10:30:00Z or 2026-03-15 10:30:00)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The file's mapping as `TARGET=COLUMN` pairs.
    fn mapped(file: &ImportFile) -> Vec<String> {
        let pairs = file.mapping();
        pairs
            .iter()
            .map(|p| format!("{}={}", p.target, p.source))
            .collect()
    }

    fn now() -> DateTime<Utc> {
        "2026-06-01T00:00:00Z".parse().unwrap()
    }

    #[test]
    fn columns_named_like_fields_map_themselves_and_the_rest_is_kept() {
        let file =
            "Email;FirstName;createdAt;Notes\nada@example.com;Ada;2026-01-02 03:04:05;called\n";
        let file = ImportFile::read(file.into(), &[]).unwrap();
        assert_eq!(
            mapped(&file),
            ["email=Email", "firstName=FirstName", "createdAt=createdAt"]
        );
        let leads: Vec<_> = file.leads(now()).collect();
        let lead = leads[0].as_ref().unwrap();
        assert_eq!(lead.line, 2);
        assert_eq!(
            lead.created_at,
            "2026-01-02T03:04:05Z".parse::<DateTime<Utc>>().unwrap()
        );
        assert_eq!(lead.data.user_data["email"], json!("ada@example.com"));
        assert_eq!(lead.data.form_data["Notes"], json!("called"));
    }

    #[test]
    fn a_german_export_maps_itself_and_the_first_of_two_phones_wins() {
        let file = "Vorname,Nachname,Telefon,Mobil\nAda,Lovelace,+49 30 1,+49 151 2\n";
        let file = ImportFile::read(file.into(), &[]).unwrap();
        assert_eq!(
            mapped(&file),
            ["firstName=Vorname", "lastName=Nachname", "phone=Telefon"]
        );
        let leads: Vec<_> = file.leads(now()).collect();
        let lead = leads[0].as_ref().unwrap();
        assert_eq!(lead.data.user_data["phone"], json!("+49 30 1"));
        assert_eq!(lead.data.form_data["Mobil"], json!("+49 151 2"));
    }

    #[test]
    fn bad_rows_say_their_line_and_why() {
        let file = "e-mail,when,id\n\
                    ada@example.com,2026-01-02,1\n\
                    ,2026-01-02,2\n\
                    bob@example.com,yesterday,3\n\
                    \"multi\nline\"@example.com,2027-01-01,4\n\
                    cy@example.com,,5\n";
        let map = [
            FieldMap::parse("email=E-Mail").unwrap(),
            FieldMap::parse("createdAt=when").unwrap(),
        ];
        let file = ImportFile::read(file.into(), &map).unwrap();
        assert_eq!(file.rows(), 5);
        let bad: Vec<BadRow> = file.leads(now()).filter_map(Result::err).collect();
        let said: Vec<(u64, &str)> = bad.iter().map(|b| (b.line, b.reason.as_str())).collect();
        assert_eq!(
            said,
            [
                (
                    3,
                    "At least one of userData or attributionData must contain data"
                ),
                (
                    4,
                    "createdAt \"yesterday\" is not a date (2026-03-15T10:30:00Z or 2026-03-15 10:30:00)"
                ),
                (5, "createdAt \"2027-01-01 00:00:00 UTC\" is in the future"),
                (7, "createdAt is empty"),
            ]
        );
    }

    #[test]
    fn a_file_that_cannot_be_imported_says_why() {
        let err = ImportFile::read("a,b\n1,2\n".into(), &[]).unwrap_err();
        assert_eq!(err, "no column is mapped to a lead field");
        let map = [FieldMap::parse("email=mail").unwrap()];
        let err = ImportFile::read("a,b\n".into(), &map).unwrap_err();
        assert_eq!(
            err,
            "email is mapped from \"mail\", which is not a column; the columns are a, b"
        );
        let err = ImportFile::read(vec![0xff, 0xfe, b'a'], &[]).unwrap_err();
        assert!(err.starts_with("the file is not UTF-8 text"));
    }

    #[test]
    fn dates_are_read_in_the_usual_forms() {
        for (text, expected) in [
            ("2026-03-15T10:30:00+02:00", "2026-03-15T08:30:00Z"),
            ("2026-03-15 10:30", "2026-03-15T10:30:00Z"),
            ("2026-03-15T10:30:00.250", "2026-03-15T10:30:00.250Z"),
            ("2026-03-15", "2026-03-15T00:00:00Z"),
        ] {
            assert_eq!(
                created_at(text).unwrap(),
                expected.parse::<DateTime<Utc>>().unwrap()
            );
        }
    }
}
