//! Timestamps as the contract writes them: UTC, RFC 3339, milliseconds, `Z`.

use chrono::{DateTime, SecondsFormat, TimeZone, Utc};

/// Formats `t` as `2026-03-15T10:30:00.000Z`.
pub fn format(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Milliseconds since the Unix epoch, the resolution every store keeps.
pub fn to_millis(t: &DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

/// The instant `ms` milliseconds after the Unix epoch (clamped to chrono's range).
pub fn from_millis(ms: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(ms)
        .single()
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// `t` truncated to whole milliseconds, so values compare equal after a store round trip.
pub fn truncate_to_millis(t: DateTime<Utc>) -> DateTime<Utc> {
    from_millis(to_millis(&t))
}

/// How long a `Retry-After` header value asks to wait at `now`: delay-seconds or an
/// HTTP-date (RFC 9110 section 10.2.3). `None` for anything else; a date in the past is no
/// wait at all.
pub fn parse_retry_after(value: &str, now: DateTime<Utc>) -> Option<std::time::Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(std::time::Duration::from_secs(seconds));
    }
    let at = DateTime::parse_from_rfc2822(value).ok()?;
    Some((at.with_timezone(&Utc) - now).to_std().unwrap_or_default())
}

/// Serde adapter: `#[serde(with = "leadtrack_core::time::rfc3339_millis")]`.
pub mod rfc3339_millis {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the timestamp in the contract's format.
    pub fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::format(t))
    }

    /// Reads any RFC 3339 timestamp.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        let text = String::deserialize(d)?;
        DateTime::parse_from_rfc3339(&text)
            .map(|t| t.with_timezone(&Utc))
            .map_err(serde::de::Error::custom)
    }
}

/// Serde adapter for optional timestamps.
pub mod rfc3339_millis_option {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the timestamp in the contract's format, or `null`.
    pub fn serialize<S: Serializer>(t: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => s.serialize_str(&super::format(t)),
            None => s.serialize_none(),
        }
    }

    /// Reads an RFC 3339 timestamp or `null`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DateTime<Utc>>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|text| {
                DateTime::parse_from_rfc3339(&text)
                    .map(|t| t.with_timezone(&Utc))
                    .map_err(serde::de::Error::custom)
            })
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_with_milliseconds_and_z() {
        let t = Utc.with_ymd_and_hms(2026, 3, 15, 10, 30, 0).unwrap();
        assert_eq!(format(&t), "2026-03-15T10:30:00.000Z");
        let t = from_millis(1_773_570_600_123);
        assert_eq!(format(&t), "2026-03-15T10:30:00.123Z");
        assert_eq!(to_millis(&t), 1_773_570_600_123);
    }

    #[test]
    fn truncation_drops_sub_millisecond_digits() {
        let t = DateTime::parse_from_rfc3339("2026-03-15T10:30:00.123456789Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(format(&truncate_to_millis(t)), "2026-03-15T10:30:00.123Z");
    }

    #[test]
    fn retry_after_is_seconds_or_an_http_date() {
        let now = Utc.with_ymd_and_hms(2026, 3, 15, 10, 30, 0).unwrap();
        let secs = std::time::Duration::from_secs;
        assert_eq!(parse_retry_after(" 120 ", now), Some(secs(120)));
        assert_eq!(
            parse_retry_after("Sun, 15 Mar 2026 10:35:00 GMT", now),
            Some(secs(300))
        );
        assert_eq!(
            parse_retry_after("Sun, 15 Mar 2026 10:00:00 GMT", now),
            Some(secs(0))
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-5", now), None);
    }
}
