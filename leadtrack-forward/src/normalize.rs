//! Normalising and hashing personal data before it leaves the service, per each platform's
//! rules. Values that already are SHA-256 hex digests pass through (lowercased), so callers
//! who hash on their side are not hashed twice.

use sha2::{Digest, Sha256};

/// Whose rules apply where the platforms differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rules {
    /// Google Analytics 4 and Google Ads: E.164 phones with `+`; Gmail addresses without the
    /// dots of their local part.
    Google,
    /// Meta: phones as digits with the country code and no `+`.
    Meta,
}

/// The lowercase hex SHA-256 of `text`.
pub fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// Whether `value` already is a SHA-256 hex digest.
pub fn is_sha256_hex(value: &str) -> bool {
    value.len() == 64 && value.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `value` hashed after `normalize`, or passed through when it is a digest already;
/// `None` when nothing is left to hash.
fn hash_with(value: &str, normalize: impl FnOnce(&str) -> Option<String>) -> Option<String> {
    let trimmed = value.trim();
    if is_sha256_hex(trimmed) {
        return Some(trimmed.to_ascii_lowercase());
    }
    normalize(trimmed).map(|normalized| sha256_hex(&normalized))
}

/// An email as the platforms want it hashed: trimmed, lowercased, no whitespace inside; for
/// Google, a Gmail address loses the dots of its local part.
pub fn email(value: &str, rules: Rules) -> Option<String> {
    let email: String = value
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_lowercase();
    if email.is_empty() {
        return None;
    }
    if rules == Rules::Google
        && let Some((local, domain)) = email.split_once('@')
        && matches!(domain, "gmail.com" | "googlemail.com")
    {
        return Some(format!("{}@{domain}", local.replace('.', "")));
    }
    Some(email)
}

/// A phone number with its country code: `+` and digits for Google, digits for Meta.
///
/// A number written with `+` or `00` carries its country code. Otherwise it is national:
/// its leading trunk zeros are dropped and `country_code` (digits, e.g. `49`) is put in front;
/// without a country code it is taken as already international.
pub fn phone(value: &str, country_code: Option<&str>, rules: Rules) -> Option<String> {
    let trimmed = value.trim();
    let digits: String = trimmed.chars().filter(char::is_ascii_digit).collect();
    let international = if trimmed.starts_with('+') {
        digits
    } else if let Some(rest) = digits.strip_prefix("00") {
        rest.to_owned()
    } else {
        match country_code {
            Some(code) => format!("{code}{}", digits.trim_start_matches('0')),
            None => digits,
        }
    };
    if international.len() < 4 {
        return None;
    }
    Some(match rules {
        Rules::Google => format!("+{international}"),
        Rules::Meta => international,
    })
}

/// A first or last name: trimmed and lowercased.
pub fn name(value: &str) -> Option<String> {
    let name = value.trim().to_lowercase();
    (!name.is_empty()).then_some(name)
}

/// The hash of an email (or the digest given).
pub fn hashed_email(value: &str, rules: Rules) -> Option<String> {
    hash_with(value, |v| email(v, rules))
}

/// The hash of a phone number (or the digest given).
pub fn hashed_phone(value: &str, country_code: Option<&str>, rules: Rules) -> Option<String> {
    hash_with(value, |v| phone(v, country_code, rules))
}

/// The hash of a name (or the digest given).
pub fn hashed_name(value: &str) -> Option<String> {
    hash_with(value, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Vectors from Meta's and Google's documentation (see the crate docs).
    const META_EMAIL: &str = "62a14e44f765419d10fea99367361a727c12365e2520f32218d505ed9aa0f62f";
    const META_PHONE: &str = "e323ec626319ca94ee8bff2e4c87cf613be6ea19919ed1364124e16807ab3176";
    const GOOGLE_PHONE: &str = "1e231c66011e7a2d867a9cfae267a6aff103cf4913640b6e71a99850fc0ffbc8";
    const MARY: &str = "6915771be1c5aa0c886870b6951b03d7eafc121fea0e80a5ea83beb7c449f4ec";

    #[test]
    fn emails_are_trimmed_and_lowercased_before_hashing() {
        assert_eq!(
            hashed_email("  John_Smith@Gmail.com ", Rules::Meta).as_deref(),
            Some(META_EMAIL)
        );
        assert_eq!(
            email("John.Smith@Gmail.com", Rules::Meta).as_deref(),
            Some("john.smith@gmail.com")
        );
        assert_eq!(
            email("John.Smith@Gmail.com", Rules::Google).as_deref(),
            Some("johnsmith@gmail.com")
        );
        assert_eq!(
            hashed_email("john.smith@gmail.com", Rules::Google).as_deref(),
            Some("3586de92bb3636d0885a12eff961429a32e4ebd764b96f50d85d016f9338d586")
        );
        assert_eq!(
            email("a.b@example.com", Rules::Google).as_deref(),
            Some("a.b@example.com")
        );
        assert_eq!(email(" \t", Rules::Meta), None);
    }

    #[test]
    fn phones_follow_each_platforms_format() {
        assert_eq!(
            phone("+1 (650) 555-1212", None, Rules::Meta).as_deref(),
            Some("16505551212")
        );
        assert_eq!(
            phone("+1 (650) 555-1212", None, Rules::Google).as_deref(),
            Some("+16505551212")
        );
        assert_eq!(
            hashed_phone("+1 650 555 1212", None, Rules::Meta).as_deref(),
            Some(META_PHONE)
        );
        assert_eq!(
            hashed_phone("+1 650-555-1212", None, Rules::Google).as_deref(),
            Some(GOOGLE_PHONE)
        );
        assert_eq!(
            phone("0044 20 7946 0958", None, Rules::Google).as_deref(),
            Some("+442079460958")
        );
        // National numbers take the project's country code, without their trunk zero.
        assert_eq!(
            phone("030 1234567", Some("49"), Rules::Meta).as_deref(),
            Some("49301234567")
        );
        assert_eq!(
            phone("(650) 555-1212", Some("1"), Rules::Google).as_deref(),
            Some("+16505551212")
        );
        assert_eq!(
            phone("+49 30 1234567", Some("1"), Rules::Meta).as_deref(),
            Some("49301234567")
        );
        assert_eq!(phone("call me", None, Rules::Meta), None);
    }

    #[test]
    fn names_are_trimmed_and_lowercased() {
        assert_eq!(hashed_name(" Mary ").as_deref(), Some(MARY));
        assert_eq!(name("ÉLODIE").as_deref(), Some("élodie"));
        assert_eq!(name("  "), None);
    }

    #[test]
    fn digests_pass_through() {
        let upper = META_EMAIL.to_ascii_uppercase();
        assert_eq!(
            hashed_email(&upper, Rules::Google).as_deref(),
            Some(META_EMAIL)
        );
        assert_eq!(
            hashed_phone(META_PHONE, Some("49"), Rules::Meta).as_deref(),
            Some(META_PHONE)
        );
        assert_eq!(hashed_name(MARY).as_deref(), Some(MARY));
        assert!(!is_sha256_hex(&META_EMAIL[..63]));
        assert!(!is_sha256_hex(&format!("{}g", &META_EMAIL[..63])));
    }
}
