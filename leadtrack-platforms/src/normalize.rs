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
    /// Microsoft Advertising, LinkedIn and TikTok: emails trimmed and lowercased only, phones
    /// in E.164 with `+`.
    Plain,
    /// Reddit: every address loses the dots of its local part and a `+` with everything
    /// after it; phones in E.164 with `+`.
    Reddit,
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

/// An email as the platforms want it hashed: trimmed, lowercased, no whitespace inside.
///
/// For Google, a `gmail.com` or `googlemail.com` address also loses the dots of its local
/// part and a `+` with everything after it: Google's normalisation rules for user-provided
/// data ("Remove all periods (.) that precede the domain name in gmail.com and
/// googlemail.com email addresses"; "remove any characters after a plus sign"):
/// <https://developers.google.com/google-ads/api/docs/conversions/enhanced-conversions/web#normalize-and-hash>
/// and <https://developers.google.com/data-manager/api/devguides/concepts/formatting>.
///
/// For Reddit, every address does: Reddit's Conversions API canonicalises the local part
/// that way before hashing, whatever the domain ("remove dots in local part; remove
/// anything after +", <https://ads-api.reddit.com/docs/v3/>, Conversions API, match keys).
pub fn email(value: &str, rules: Rules) -> Option<String> {
    let email: String = value
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_lowercase();
    if email.is_empty() {
        return None;
    }
    if let Some((local, domain)) = email.split_once('@')
        && (rules == Rules::Reddit
            || (rules == Rules::Google && matches!(domain, "gmail.com" | "googlemail.com")))
    {
        let local = local.split_once('+').map_or(local, |(kept, _)| kept);
        return Some(format!("{}@{domain}", local.replace('.', "")));
    }
    Some(email)
}

/// A phone number in E.164 (`+493098765432`) for Google, or its digits (`493098765432`)
/// for Meta, as each documents; `None` when it is not a valid number.
///
/// libphonenumber reads it: a number written with `+`, `00`, or `region`'s international
/// prefix (`011` from the US) carries its country; any other is read as a national number of `region` (ISO 3166-1 alpha-2,
/// e.g. `DE`) by that country's own rules (Germany drops its trunk `0`, Italy keeps the `0` of `06`, Hungary's
/// trunk prefix is `06`), and `+49 (0)30 ...` loses the `(0)` written out of habit. A
/// number it cannot read, or that no numbering plan allows, is dropped: no match is better
/// than a match with someone else.
pub fn phone(value: &str, region: Option<&str>, rules: Rules) -> Option<String> {
    let region = region.and_then(|region| region.parse::<phonenumber::country::Id>().ok());
    let read = |region, text: &str| {
        phonenumber::parse(region, text)
            .ok()
            .filter(phonenumber::PhoneNumber::is_valid)
    };
    let value = value.trim();
    // A number with its country is read without the region: the region's rules would
    // apply to the other country's national part (its `(0)`).
    let number = if value.starts_with('+') {
        read(None, value)
    } else if let Some(international) = value.strip_prefix("00") {
        read(region, value).or_else(|| read(None, &format!("+{international}")))
    } else {
        read(region, value)
    }?;
    let e164 = number.format().mode(phonenumber::Mode::E164).to_string();
    Some(match rules {
        Rules::Google | Rules::Plain | Rules::Reddit => e164,
        Rules::Meta => e164.trim_start_matches('+').to_owned(),
    })
}

/// The country or region libphonenumber takes as the main one of a calling code (`49`:
/// `DE`, `1`: `US`, `44`: `GB`), whose national numbering the others sharing it follow.
pub fn region_of_calling_code(code: &str) -> Option<&'static str> {
    let code: u16 = code.trim().trim_start_matches('+').parse().ok()?;
    let countries = phonenumber::metadata::DATABASE.by_code(&code)?;
    let main = countries
        .iter()
        .find(|country| country.is_main_country_for_code() || countries.len() == 1)?;
    leadtrack_core::project::PHONE_REGIONS
        .into_iter()
        .find(|region| *region == main.id())
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
pub fn hashed_phone(value: &str, region: Option<&str>, rules: Rules) -> Option<String> {
    hash_with(value, |v| phone(v, region, rules))
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
        // Google's example: dots and a plus suffix go from Gmail addresses only.
        assert_eq!(
            email("Mary.Jones+ads@GoogleMail.com", Rules::Google).as_deref(),
            Some("maryjones@googlemail.com")
        );
        assert_eq!(
            email("Mary.Jones+ads@GoogleMail.com", Rules::Meta).as_deref(),
            Some("mary.jones+ads@googlemail.com")
        );
        assert_eq!(
            email("mary.jones+ads@example.com", Rules::Google).as_deref(),
            Some("mary.jones+ads@example.com")
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
        // Reddit's canonical form, its own example: both hash alike.
        assert_eq!(
            email("Al.ice+Apple@Example.Com", Rules::Reddit).as_deref(),
            Some("alice@example.com")
        );
        assert_eq!(
            hashed_email("alice@example.com", Rules::Reddit).as_deref(),
            Some("ff8d9819fc0e12bf0d24892e45987e249a28dce836a85cad60e28eaaa8c6d976")
        );
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
            phone("0044 20 7183 8750", None, Rules::Google).as_deref(),
            Some("+442071838750")
        );
        // National numbers are read by the project's region's own rules.
        let national = [
            ("030 1234567", "DE", "+49301234567"),
            ("(650) 555-1212", "US", "+16505551212"),
            ("+49 30 1234567", "US", "+49301234567"),
            ("0049 30 98765432", "FR", "+493098765432"),
            // From the US, 011 dials abroad.
            ("011 49 30 98765432", "US", "+493098765432"),
            // The `(0)` written after the country code is not part of the number.
            ("+49 (0)30 98765432", "DE", "+493098765432"),
            ("+49 (0)30 98765432", "IT", "+493098765432"),
            // Italy keeps the leading 0 of its fixed lines; Hungary's trunk prefix is 06.
            ("06 6982 1234", "IT", "+390669821234"),
            ("+39 06 69821234", "DE", "+390669821234"),
            ("06 1 234 5678", "HU", "+3612345678"),
            ("8 (495) 123-45-67", "RU", "+74951234567"),
            ("07400 123456", "GB", "+447400123456"),
        ];
        for (written, region, e164) in national {
            assert_eq!(
                phone(written, Some(region), Rules::Google).as_deref(),
                Some(e164),
                "{written} in {region}"
            );
            assert_eq!(
                phone(written, Some(region), Rules::Meta).as_deref(),
                Some(&e164[1..]),
                "{written} in {region}"
            );
        }
        // Without a region a national number cannot be read; nor can a number too short.
        assert_eq!(phone("030 1234567", None, Rules::Google), None);
        assert_eq!(phone("12", Some("DE"), Rules::Google), None);
        assert_eq!(phone("+49 12", None, Rules::Google), None);
        assert_eq!(phone("call me", None, Rules::Meta), None);
    }

    /// The examples of Google's formatting guide for the Data Manager API,
    /// <https://developers.google.com/data-manager/api/devguides/concepts/formatting>, with
    /// the hashes its "send audience members" guide gives for them.
    #[test]
    fn googles_documented_examples_hash_as_documented() {
        let vectors = [
            (
                "cloudy.sanfrancisco+shopping@gmail.com",
                "223ebda6f6889b1494551ba902d9d381daf2f642bae055888e96343d53e9f9c4",
            ),
            (
                "cloudySanFrancisco@GMAIL.com",
                "223ebda6f6889b1494551ba902d9d381daf2f642bae055888e96343d53e9f9c4",
            ),
            (
                "dana@example.com",
                "07e2f1394b0ea80e2adca010ea8318df697001a005ba7452720edda4b0ce57b3",
            ),
        ];
        for (email, hash) in vectors {
            assert_eq!(
                hashed_email(email, Rules::Google).as_deref(),
                Some(hash),
                "{email}"
            );
        }
        assert_eq!(
            email("user.name+NYC@Example.com", Rules::Google).as_deref(),
            Some("user.name+nyc@example.com"),
            "only Gmail addresses lose dots and suffixes"
        );
        assert_eq!(
            hashed_phone("+1-800-555-0100", None, Rules::Google).as_deref(),
            Some("fb4f73a6ec5fdb7077d564cdd22c3554b43ce49168550c3b12c547b78c517b30")
        );
    }

    #[test]
    fn calling_codes_name_their_main_region() {
        let main = [
            ("49", "DE"),
            ("+1", "US"),
            ("44", "GB"),
            ("7", "RU"),
            ("39", "IT"),
        ];
        for (code, region) in main {
            assert_eq!(region_of_calling_code(code), Some(region), "{code}");
        }
        assert_eq!(region_of_calling_code("999"), None);
        assert_eq!(region_of_calling_code("DE"), None);
    }

    #[test]
    fn core_knows_every_region_libphonenumber_numbers() {
        let mut known: Vec<&str> = phonenumber::metadata::DATABASE
            .iter()
            .map(|country| country.id())
            .filter(|id| id.len() == 2)
            .collect();
        known.sort_unstable();
        assert_eq!(known, leadtrack_core::project::PHONE_REGIONS);
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
            hashed_phone(META_PHONE, Some("DE"), Rules::Meta).as_deref(),
            Some(META_PHONE)
        );
        assert_eq!(hashed_name(MARY).as_deref(), Some(MARY));
        assert!(!is_sha256_hex(&META_EMAIL[..63]));
        assert!(!is_sha256_hex(&format!("{}g", &META_EMAIL[..63])));
    }
}
