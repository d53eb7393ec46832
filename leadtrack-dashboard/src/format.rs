//! How values read on a page: money, times relative and exact, and prices typed by people.

use chrono::{DateTime, Utc};

/// Cents as a decimal amount with thousands separators: `150000` is `1,500.00`.
pub(crate) fn money(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let cents = cents.unsigned_abs();
    let whole = (cents / 100).to_string();
    let mut grouped = String::new();
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    format!("{sign}{grouped}.{:02}", cents % 100)
}

/// A price as a person types it (`1500`, `1,500.5`, `1500.50`) in cents; `None` when it is
/// not a non-negative amount with at most two decimals.
pub(crate) fn parse_price(text: &str) -> Option<i64> {
    let text: String = text
        .trim()
        .chars()
        .filter(|c| *c != ',' && *c != ' ')
        .collect();
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(fraction) || fraction.len() > 2 {
        return None;
    }
    let cents = format!("{fraction:0<2}").parse::<i64>().ok()?;
    whole
        .parse::<i64>()
        .ok()?
        .checked_mul(100)?
        .checked_add(cents)
}

/// A time as an ISO 8601 attribute value, for `<time datetime>`.
pub(crate) fn iso(at: &DateTime<Utc>) -> String {
    leadtrack_core::time::format(at)
}

/// A time exactly, for people: `2026-03-15 10:30 UTC`.
pub(crate) fn exact(at: &DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M UTC").to_string()
}

/// How long ago `at` was at `now`: `just now`, `5 min ago`, `3 h ago`, `2 days ago`, then
/// the date.
pub(crate) fn relative(at: &DateTime<Utc>, now: DateTime<Utc>) -> String {
    let seconds = (now - *at).num_seconds();
    match seconds {
        s if s < 60 => "just now".to_owned(),
        s if s < 3_600 => format!("{} min ago", s / 60),
        s if s < 86_400 => format!("{} h ago", s / 3_600),
        s if s < 7 * 86_400 => {
            let days = s / 86_400;
            format!("{days} day{} ago", if days == 1 { "" } else { "s" })
        }
        _ => at.format("%Y-%m-%d").to_string(),
    }
}

/// A span of time, for people: `40 s`, `12 min`, `3 h 5 min`, `2 days 4 h`.
pub(crate) fn span(span: chrono::Duration) -> String {
    let seconds = span.num_seconds().max(0);
    let (days, hours, minutes) = (
        seconds / 86_400,
        seconds % 86_400 / 3_600,
        seconds % 3_600 / 60,
    );
    match (days, hours, minutes) {
        (0, 0, 0) => format!("{seconds} s"),
        (0, 0, minutes) => format!("{minutes} min"),
        (0, hours, 0) => format!("{hours} h"),
        (0, hours, minutes) => format!("{hours} h {minutes} min"),
        (1, 0, _) => "1 day".to_owned(),
        (1, hours, _) => format!("1 day {hours} h"),
        (days, 0, _) => format!("{days} days"),
        (days, hours, _) => format!("{days} days {hours} h"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Duration, TimeZone};

    #[test]
    fn spans_read_in_the_largest_units_that_matter() {
        for (seconds, read) in [
            (40, "40 s"),
            (12 * 60 + 5, "12 min"),
            (3 * 3_600, "3 h"),
            (3 * 3_600 + 5 * 60, "3 h 5 min"),
            (86_400 + 60, "1 day"),
            (2 * 86_400 + 4 * 3_600, "2 days 4 h"),
        ] {
            assert_eq!(span(Duration::seconds(seconds)), read, "{seconds}");
        }
    }

    #[test]
    fn money_reads_with_separators_and_two_decimals() {
        assert_eq!(money(0), "0.00");
        assert_eq!(money(5), "0.05");
        assert_eq!(money(150_000), "1,500.00");
        assert_eq!(money(123_456_789), "1,234,567.89");
        assert_eq!(money(-1_050), "-10.50");
    }

    #[test]
    fn prices_are_typed_as_people_type_them() {
        for (text, cents) in [
            ("1500", 150_000),
            ("1,500.5", 150_050),
            (" 1500.50 ", 150_050),
            ("0.99", 99),
            ("7.", 700),
        ] {
            assert_eq!(parse_price(text), Some(cents), "{text}");
        }
        for bad in [
            "",
            "-5",
            "1.234",
            "abc",
            ".5",
            "1e3",
            "99999999999999999999",
        ] {
            assert_eq!(parse_price(bad), None, "{bad}");
        }
    }

    #[test]
    fn times_read_relative_then_as_dates() {
        let now = Utc.with_ymd_and_hms(2026, 3, 15, 12, 0, 0).unwrap();
        for (ago, text) in [
            (Duration::seconds(30), "just now"),
            (Duration::minutes(5), "5 min ago"),
            (Duration::hours(3), "3 h ago"),
            (Duration::days(1), "1 day ago"),
            (Duration::days(6), "6 days ago"),
            (Duration::days(30), "2026-02-13"),
        ] {
            assert_eq!(relative(&(now - ago), now), text);
        }
        assert_eq!(exact(&now), "2026-03-15 12:00 UTC");
    }
}
