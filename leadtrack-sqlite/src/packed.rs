//! A lead's data as `leads.data` stores it (migration 62): its JSON compressed with zstd
//! against a fixed dictionary, behind one byte that names the format.
//!
//! A lead's JSON is short (about 575 bytes from the load generator) and most of it is the
//! same keys and common values in every lead, which compression without a dictionary cannot
//! find in so little text (372 bytes). Against `packed/dictionary-1.json`, a lead written the
//! way the store writes one, with the contract's keys and common values but no one's data,
//! it takes about 250 bytes: 0.4 GB less at a million leads (`docs/performance.md`).
//!
//! The dictionary is part of the stored format: a stored lead can only be read with the
//! dictionary it was packed against, so `dictionary-1.json` never changes. A better one
//! would be a new format byte beside [`FORMAT_1`], read alongside it.
//!
//! SQL reads the data through [`register`]'s `lead_json(data)` (the report's view), and
//! the upgrade packs the leads stored before through `lead_pack(text)`.

use std::cell::RefCell;
use std::sync::LazyLock;

use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ValueRef};
use zstd::bulk::{Compressor, Decompressor};
use zstd::dict::{DecoderDictionary, EncoderDictionary};

/// The first byte of data packed with zstd against `dictionary-1.json`.
const FORMAT_1: u8 = 1;

/// zstd's level: its default, a few microseconds a lead.
const LEVEL: i32 = 3;

/// The largest JSON a stored lead unpacks to: far above any lead the API accepts, so that a
/// damaged frame cannot make a reader allocate without bound.
const MOST_BYTES: u64 = 16 << 20;

/// A lead written as the store writes one, with the contract's keys and common values.
static DICTIONARY_1: &[u8] = include_bytes!("packed/dictionary-1.json");

/// [`DICTIONARY_1`] prepared for packing, once a process.
static ENCODER_1: LazyLock<EncoderDictionary<'static>> =
    LazyLock::new(|| EncoderDictionary::copy(DICTIONARY_1, LEVEL));

/// [`DICTIONARY_1`] prepared for unpacking, once a process.
static DECODER_1: LazyLock<DecoderDictionary<'static>> =
    LazyLock::new(|| DecoderDictionary::copy(DICTIONARY_1));

thread_local! {
    // A context a thread, made once: making one loads the dictionary.
    static COMPRESSOR: RefCell<Option<Compressor<'static>>> = const { RefCell::new(None) };
    static DECOMPRESSOR: RefCell<Option<Decompressor<'static>>> = const { RefCell::new(None) };
}

/// Why stored data could not be packed or unpacked.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PackError {
    /// zstd refused: out of memory, or a damaged frame.
    #[error("zstd: {0}")]
    Zstd(#[from] std::io::Error),
    /// The first byte names no format this build reads.
    #[error("stored lead data of unknown format {0}")]
    Format(u8),
    /// The frame does not say how long its JSON is, or says too long.
    #[error("stored lead data of no or too large a length")]
    Length,
    /// The JSON unpacked is not UTF-8.
    #[error("stored lead data that is not UTF-8")]
    Utf8(#[from] std::string::FromUtf8Error),
}

/// `json` packed for `leads.data`.
pub(crate) fn pack(json: &str) -> Result<Vec<u8>, PackError> {
    COMPRESSOR.with_borrow_mut(|slot| {
        let compressor = match slot {
            Some(compressor) => compressor,
            None => slot.insert(Compressor::with_prepared_dictionary(&ENCODER_1)?),
        };
        // zstd leaves room past the frame (its bound), so the format byte costs no copy
        // to a new allocation.
        let mut packed = compressor.compress(json.as_bytes())?;
        packed.insert(0, FORMAT_1);
        Ok(packed)
    })
}

/// The JSON of `packed`, as [`pack`] made it.
pub(crate) fn unpack(packed: &[u8]) -> Result<String, PackError> {
    let (&format, frame) = packed.split_first().ok_or(PackError::Length)?;
    if format != FORMAT_1 {
        return Err(PackError::Format(format));
    }
    let length = match zstd::zstd_safe::get_frame_content_size(frame) {
        Ok(Some(length)) if length <= MOST_BYTES => length as usize,
        _ => return Err(PackError::Length),
    };
    let json = DECOMPRESSOR.with_borrow_mut(|slot| {
        let decompressor = match slot {
            Some(decompressor) => decompressor,
            None => slot.insert(Decompressor::with_prepared_dictionary(&DECODER_1)?),
        };
        decompressor.decompress(frame, length)
    })?;
    Ok(String::from_utf8(json)?)
}

/// A lead's JSON read from `leads.data`: unpacked as it is read.
pub(crate) struct Json(pub(crate) String);

impl FromSql for Json {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        unpack(value.as_blob()?)
            .map(Json)
            .map_err(|err| FromSqlError::Other(Box::new(err)))
    }
}

/// Gives `conn` the SQL functions `lead_json(data)`, the JSON of a stored lead's data, and
/// `lead_pack(json)`, the data stored for a JSON text.
pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8
        | FunctionFlags::SQLITE_DETERMINISTIC
        | FunctionFlags::SQLITE_INNOCUOUS;
    // The report's view reads up to three fields of a lead for each of its two touches, one
    // after the other: the last lead's JSON is kept, so that it is unpacked once.
    let last: RefCell<Option<(Vec<u8>, String)>> = RefCell::new(None);
    conn.create_scalar_function("lead_json", 1, flags, move |ctx| {
        let packed = ctx.get_raw(0).as_blob()?;
        let mut last = last.borrow_mut();
        if let Some((_, json)) = last.as_ref().filter(|(seen, _)| seen.as_slice() == packed) {
            return Ok(json.clone());
        }
        let json = unpack(packed).map_err(user_error)?;
        *last = Some((packed.to_vec(), json.clone()));
        Ok(json)
    })?;
    conn.create_scalar_function("lead_pack", 1, flags, |ctx| {
        pack(ctx.get_raw(0).as_str()?).map_err(user_error)
    })
}

fn user_error(err: PackError) -> rusqlite::Error {
    rusqlite::Error::UserFunctionError(Box::new(err))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a lead's JSON packs to today unpacks the same way forever: the dictionary and the
    /// format are part of every stored lead.
    #[test]
    fn data_packed_by_the_first_format_unpacks_to_its_json() {
        let json = r#"{"formData":{"formName":"Contact","message":"call me"},"userData":{"firstName":"Ada","email":"ada@gmail.com"},"attributionData":{"utm_source":"google","utm_medium":"cpc","gclid":"abc"},"deviceData":{},"channelFlow":null,"uniqueIdentifier":null}"#;
        let packed = pack(json).unwrap();
        assert_eq!(packed[0], FORMAT_1);
        assert!(packed.len() < json.len() / 2, "{} bytes", packed.len());
        assert_eq!(unpack(&packed).unwrap(), json);
        // Packed by this build once and kept: a changed dictionary or format fails here.
        let kept: &[u8] = &[
            1, 40, 181, 47, 253, 32, 244, 165, 1, 0, 136, 99, 97, 108, 108, 32, 109, 101, 65, 100,
            97, 97, 100, 97, 97, 98, 99, 125, 10, 0, 110, 133, 2, 171, 98, 128, 218, 2, 1, 89, 228,
            57, 149, 229, 23, 40, 93, 150, 160, 195, 108, 134, 134, 217, 24, 64, 4, 99, 230, 48, 5,
            16,
        ];
        assert_eq!(unpack(kept).unwrap(), json);
    }

    /// Damaged or foreign data is an error, never a panic or an allocation without bound.
    #[test]
    fn damaged_data_is_an_error() {
        let packed = pack(r#"{"formData":{}}"#).unwrap();
        assert!(matches!(unpack(&[]), Err(PackError::Length)));
        assert!(matches!(unpack(&[2, 0]), Err(PackError::Format(2))));
        assert!(matches!(unpack(b"{\"a\":1}"), Err(PackError::Format(b'{'))));
        assert!(unpack(&packed[..packed.len() - 2]).is_err());
        // A frame whose header claims a terabyte is refused before anything is allocated.
        let mut huge = vec![FORMAT_1, 0x28, 0xb5, 0x2f, 0xfd, 0xe0];
        huge.extend_from_slice(&(1_u64 << 40).to_le_bytes());
        assert!(matches!(unpack(&huge), Err(PackError::Length)));
    }

    /// The SQL functions pack and unpack as the Rust ones do, and refuse what is not theirs.
    #[test]
    fn sql_reads_packed_data_through_lead_json() {
        let conn = Connection::open_in_memory().unwrap();
        register(&conn).unwrap();
        let json: String = conn
            .query_row(
                "SELECT lead_json(lead_pack('{\"userData\":{\"email\":\"a@b.io\"}}')) ->> '$.userData.email'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(json, "a@b.io");
        assert!(
            conn.query_row("SELECT lead_json(x'0200')", [], |row| row
                .get::<_, String>(0))
                .is_err()
        );
    }
}
