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

/// Which comes first in a date written with the year last (`15/10/2026`, `10/15/2026`).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    strum::AsRefStr,
    strum::EnumString,
    strum::IntoStaticStr,
)]
#[strum(serialize_all = "kebab-case")]
pub enum DateOrder {
    /// As the file shows: day first when a date's first number is over 12 or it is written
    /// with dots (`15.10.2026`), month first when its second is; a date that could be
    /// either is refused, saying so.
    #[default]
    Auto,
    /// `15/10/2026`: the day, then the month.
    DayFirst,
    /// `10/15/2026`: the month, then the day.
    MonthFirst,
}

/// A CSV file read for import: its header, and which column fills which field.
#[derive(Clone, Debug)]
pub struct ImportFile {
    text: String,
    delimiter: u8,
    headers: Vec<String>,
    /// `(target, column index)`, in mapping order.
    columns: Vec<(String, usize)>,
    /// How its dates with the year last are read.
    date_order: DateOrder,
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
        let mut file = Self {
            text,
            delimiter,
            headers,
            columns,
            date_order: DateOrder::Auto,
        };
        file.date_order = file.shown_date_order();
        Ok(file)
    }

    /// The file with its dates read as `order` says; [`DateOrder::Auto`] reads them as the
    /// file shows.
    pub fn with_date_order(mut self, order: DateOrder) -> Self {
        self.date_order = match order {
            DateOrder::Auto => self.shown_date_order(),
            chosen => chosen,
        };
        self
    }

    /// How its dates with the year last are read.
    pub fn date_order(&self) -> DateOrder {
        self.date_order
    }

    /// The order the file's `createdAt` column shows, when its dates agree on one: a date
    /// whose first number is over 12, or written with dots, is day first; one whose second
    /// is, month first. [`DateOrder::Auto`] when none tells, or they disagree.
    fn shown_date_order(&self) -> DateOrder {
        let Some(column) = self
            .columns
            .iter()
            .find(|(target, _)| target == "createdAt")
        else {
            return DateOrder::Auto;
        };
        let (mut day_first, mut month_first) = (false, false);
        for record in reader(&self.text, self.delimiter).records().flatten() {
            match year_last(record.get(column.1).unwrap_or_default()).map(|d| d.shows()) {
                Some(Some(DateOrder::DayFirst)) => day_first = true,
                Some(Some(DateOrder::MonthFirst)) => month_first = true,
                _ => {}
            }
        }
        match (day_first, month_first) {
            (true, false) => DateOrder::DayFirst,
            (false, true) => DateOrder::MonthFirst,
            _ => DateOrder::Auto,
        }
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
            Some(text) => created_at(text, self.date_order)?,
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

/// A date written with the year last, as its numbers and separator: `15.10.2026 14:30`.
struct YearLast {
    first: u32,
    second: u32,
    year: i32,
    dots: bool,
    /// `HH:MM[:SS]` after it, if any.
    time: Option<chrono::NaiveTime>,
}

impl YearLast {
    /// The order this date shows by itself, if it does.
    fn shows(&self) -> Option<DateOrder> {
        match (self.first > 12, self.second > 12) {
            (true, false) => Some(DateOrder::DayFirst),
            (false, true) => Some(DateOrder::MonthFirst),
            _ if self.dots => Some(DateOrder::DayFirst),
            _ => None,
        }
    }

    /// The time it is, read in `order`.
    fn read(&self, order: DateOrder, text: &str) -> Result<DateTime<Utc>, String> {
        let order = match order {
            DateOrder::Auto if self.first == self.second => DateOrder::DayFirst,
            DateOrder::Auto => self.shows().ok_or_else(|| {
                let day = |day, month| {
                    NaiveDate::from_ymd_opt(self.year, month, day)
                        .map_or_else(String::new, |date| date.format("%-d %B").to_string())
                };
                format!(
                    "createdAt \"{text}\" could be {} or {} {}: say whether the day or the \
                     month comes first",
                    day(self.first, self.second),
                    day(self.second, self.first),
                    self.year
                )
            })?,
            chosen => chosen,
        };
        let (day, month) = match order {
            DateOrder::MonthFirst => (self.second, self.first),
            _ => (self.first, self.second),
        };
        let date = NaiveDate::from_ymd_opt(self.year, month, day)
            .ok_or_else(|| format!("createdAt \"{text}\" has no day {day} in month {month}"))?;
        Ok(date.and_time(self.time.unwrap_or_default()).and_utc())
    }
}

/// `text` as a date with the year last (`15/10/2026`, `15.10.2026 14:30`, `10-15-2026`),
/// if it is one.
fn year_last(text: &str) -> Option<YearLast> {
    let text = text.trim();
    let (date, time) = text.split_once(' ').unwrap_or((text, ""));
    let separator = date.chars().find(|c| matches!(c, '.' | '/' | '-'))?;
    let parts: Vec<&str> = date.split(separator).collect();
    let [first, second, year] = parts[..] else {
        return None;
    };
    if year.len() != 4 || first.len() > 2 || second.len() > 2 {
        return None;
    }
    let time = match time.trim() {
        "" => None,
        time => Some(
            chrono::NaiveTime::parse_from_str(time, "%H:%M:%S")
                .or_else(|_| chrono::NaiveTime::parse_from_str(time, "%H:%M"))
                .ok()?,
        ),
    };
    Some(YearLast {
        first: first.parse().ok()?,
        second: second.parse().ok()?,
        year: year.parse().ok()?,
        dots: separator == '.',
        time,
    })
}

/// A time as files write it: RFC 3339, `YYYY-MM-DD HH:MM[:SS]` and `YYYY-MM-DD` in UTC, or
/// a date with the year last ([`year_last`]) read in `order`, in UTC.
fn created_at(text: &str, order: DateOrder) -> Result<DateTime<Utc>, String> {
    let text = text.trim();
    if let Some(date) = year_last(text) {
        return date.read(order, text);
    }
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
        "createdAt \"{text}\" is not a date (2026-03-15T10:30:00Z, 2026-03-15 10:30:00 or \
         15.03.2026 10:30)"
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
                    "createdAt \"yesterday\" is not a date (2026-03-15T10:30:00Z, 2026-03-15 10:30:00 or 15.03.2026 10:30)"
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
                created_at(text, DateOrder::Auto).unwrap(),
                expected.parse::<DateTime<Utc>>().unwrap()
            );
        }
    }

    #[test]
    fn dates_with_the_year_last_are_read_as_the_file_shows_or_as_chosen() {
        let time = |text: &str| text.parse::<DateTime<Utc>>().unwrap();
        for (text, order, expected) in [
            ("15.10.2026", DateOrder::Auto, "2026-10-15T00:00:00Z"),
            ("05.10.2026 14:30", DateOrder::Auto, "2026-10-05T14:30:00Z"),
            (
                "15/10/2026 14:30:05",
                DateOrder::Auto,
                "2026-10-15T14:30:05Z",
            ),
            ("10/15/2026", DateOrder::Auto, "2026-10-15T00:00:00Z"),
            ("07/07/2026", DateOrder::Auto, "2026-07-07T00:00:00Z"),
            ("05/06/2026", DateOrder::DayFirst, "2026-06-05T00:00:00Z"),
            ("05/06/2026", DateOrder::MonthFirst, "2026-05-06T00:00:00Z"),
        ] {
            assert_eq!(
                created_at(text, order).unwrap(),
                time(expected),
                "{text} {order:?}"
            );
        }
        assert_eq!(
            created_at("05/06/2026", DateOrder::Auto).unwrap_err(),
            "createdAt \"05/06/2026\" could be 5 June or 6 May 2026: say whether the day or \
             the month comes first"
        );
        assert_eq!(
            created_at("31/02/2026", DateOrder::Auto).unwrap_err(),
            "createdAt \"31/02/2026\" has no day 31 in month 2"
        );
        // A file whose dates show the order reads its other dates that way.
        let file = "email,date\na@x.io,05/06/2025\nb@x.io,25/06/2025 09:00\n";
        let map = [FieldMap::parse("createdAt=date").unwrap()];
        let read = ImportFile::read(file.into(), &map).unwrap();
        assert_eq!(read.date_order(), DateOrder::DayFirst);
        let first = read.leads(now()).next().unwrap().unwrap();
        assert_eq!(first.created_at, time("2025-06-05T00:00:00Z"));
        let chosen = read.with_date_order(DateOrder::MonthFirst);
        let first = chosen.leads(now()).next().unwrap().unwrap();
        assert_eq!(first.created_at, time("2025-05-06T00:00:00Z"));
        let mixed = "email,date\na@x.io,25/06/2026\nb@x.io,06/25/2026\n";
        let read = ImportFile::read(mixed.into(), &map).unwrap();
        assert_eq!(read.date_order(), DateOrder::Auto, "they disagree");
    }
}
