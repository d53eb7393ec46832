//! The matching rules used everywhere a lead is found by email, phone or search term
//! (CONTRACT.md section 4). Stores keep the normalised forms beside the lead and compare
//! normalised query values against them, so every backend matches alike.

/// Email as matched: trimmed and lowercased. `None` when nothing is left.
pub fn email_key(email: &str) -> Option<String> {
    let key = email.trim().to_lowercase();
    (!key.is_empty()).then_some(key)
}

/// Phone as matched: spaces, `-`, `.`, `(` and `)` removed. `None` when nothing is left.
pub fn phone_key(phone: &str) -> Option<String> {
    let key: String = phone
        .chars()
        .filter(|c| !(c.is_whitespace() || matches!(c, '-' | '.' | '(' | ')')))
        .collect();
    (!key.is_empty()).then_some(key)
}

/// A `search` term as matched: trimmed and lowercased. A lead matches when the term is a
/// substring of one of its [`crate::lead::LeadKeys::searchable`] fields.
pub fn search_term(term: &str) -> String {
    term.trim().to_lowercase()
}

/// A form name as the `form` filter matches it: lowercased, so that "Contact" and
/// "contact" are one form.
pub fn form_key(form_name: &str) -> String {
    form_name.to_lowercase()
}

/// Text as a `q` search matches it: lowercased, with accents and other marks dropped
/// (Unicode's compatibility decomposition, NFKD, then no combining marks: "Müller" is
/// "muller"), and the letters that decompose to nothing plainer written as people type
/// them ("ß" is "ss", "ø" is "o", "ł" is "l").
pub fn fold(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    use unicode_normalization::char::is_combining_mark;
    let mut folded = String::with_capacity(text.len());
    for c in text.nfkd().filter(|c| !is_combining_mark(*c)) {
        match c {
            'ß' | 'ẞ' => folded.push_str("ss"),
            'æ' | 'Æ' => folded.push_str("ae"),
            'œ' | 'Œ' => folded.push_str("oe"),
            'þ' | 'Þ' => folded.push_str("th"),
            'ø' | 'Ø' => folded.push('o'),
            'ł' | 'Ł' => folded.push('l'),
            'đ' | 'Đ' => folded.push('d'),
            'ı' => folded.push('i'),
            c => folded.extend(c.to_lowercase()),
        }
    }
    folded
}

/// The words of a `q` search, [`fold`]ed: a lead matches when each is a substring of its
/// [`crate::store::q_text`]. A search that is a phone number is one word, its
/// [`national_number`], so that however it is spaced, and with or without its country code,
/// it finds the lead's number (whose `q` text holds its [`phone_digits`]).
pub fn q_words(q: &str) -> Vec<String> {
    if let Some(national) = phone_digits(q).and_then(|_| national_number(q)) {
        return vec![national];
    }
    fold(q).split_whitespace().map(str::to_owned).collect()
}

/// The fewest digits a text needs to be read as a phone number: fewer is a year, a postcode
/// or a price, searched as words.
const PHONE_DIGITS: usize = 7;

/// A phone number's digits, when `text` is one: digits (at least `PHONE_DIGITS`) with
/// nothing else than white space, `+`, `-`, `.`, `/`, `(` and `)`. `None` for any other
/// text, which is searched as it is written.
pub fn phone_digits(text: &str) -> Option<String> {
    let text = text.trim();
    let punctuation = |c: char| c.is_whitespace() || matches!(c, '+' | '-' | '.' | '/' | '(' | ')');
    if !text.chars().all(|c| c.is_ascii_digit() || punctuation(c)) {
        return None;
    }
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    (digits.len() >= PHONE_DIGITS).then_some(digits)
}

/// The number a phone number has within its country (its "national significant number",
/// ITU-T E.164): without the country code when it is written in the international form
/// (`+49 151 …` or `0049 151 …`), and without the trunk prefix `0` when written nationally
/// (`0151 …`). Both forms of one number give the same digits, which are a substring of the
/// [`phone_digits`] of either. `None` when `text` is no phone number.
pub fn national_number(text: &str) -> Option<String> {
    let digits = phone_digits(text)?;
    let international = text.trim().starts_with('+') || digits.starts_with("00");
    let number = if international {
        let digits = digits.trim_start_matches('0');
        &digits[country_code_len(digits).min(digits.len())..]
    } else {
        digits.as_str()
    };
    Some(number.trim_start_matches('0').to_owned())
}

/// The length of the country calling code `digits` begins with. The codes are prefix-free
/// (ITU-T E.164 Annex, "List of ITU-T Recommendation E.164 assigned country codes"): `1` and
/// `7` have one digit, the two-digit codes are listed here, and every other code has three.
fn country_code_len(digits: &str) -> usize {
    const TWO_DIGITS: [&str; 44] = [
        "20", "27", "30", "31", "32", "33", "34", "36", "39", "40", "41", "43", "44", "45", "46",
        "47", "48", "49", "51", "52", "53", "54", "55", "56", "57", "58", "60", "61", "62", "63",
        "64", "65", "66", "81", "82", "84", "86", "90", "91", "92", "93", "94", "95", "98",
    ];
    if digits.starts_with(['1', '7']) {
        1
    } else if TWO_DIGITS.iter().any(|code| digits.starts_with(code)) {
        2
    } else {
        3
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_drops_case_and_accents_as_people_type() {
        for (text, folded) in [
            ("Müller", "muller"),
            ("JOSÉ Núñez", "jose nunez"),
            ("Straße", "strasse"),
            ("Søren Łukasz", "soren lukasz"),
            ("ﬁle", "file"),
            ("Ærø", "aero"),
            ("東京", "東京"),
        ] {
            assert_eq!(fold(text), folded, "{text}");
        }
        assert_eq!(q_words("  Jonas   KAYA "), ["jonas", "kaya"]);
        assert!(q_words(" \t ").is_empty());
    }

    #[test]
    fn a_phone_number_is_searched_by_its_national_number_however_written() {
        for written in [
            "+49 151 1234 5678",
            "+4915112345678",
            "0049 151 12345678",
            "015112345678",
            "0151 1234 5678",
            "(0151) 1234-5678",
            "0151/12345678",
            " +49 (0)151 1234 5678 ",
        ] {
            assert_eq!(q_words(written), ["15112345678"], "{written}");
        }
        // Country codes of one, two and three digits.
        assert_eq!(q_words("+1 (415) 555-0100"), ["4155550100"]);
        assert_eq!(q_words("+44 20 7946 0958"), ["2079460958"]);
        assert_eq!(q_words("+353 1 234 5678"), ["12345678"]);
        // Short digit runs and mixed text stay words.
        assert_eq!(q_words("2026 10"), ["2026", "10"]);
        assert_eq!(q_words("Kaya 0151 1234"), ["kaya", "0151", "1234"]);
        assert_eq!(q_words("+49 151"), ["+49", "151"]);
    }

    #[test]
    fn a_lead_s_number_keeps_its_digits_which_hold_every_written_form() {
        let lead = phone_digits("+49 151 1234 5678").unwrap();
        assert_eq!(lead, "4915112345678");
        let national = phone_digits("0151 1234 5678").unwrap();
        for search in ["+4915112345678", "015112345678", "151 1234 5678"] {
            let word = national_number(search).unwrap();
            assert!(lead.contains(&word) && national.contains(&word), "{search}");
        }
        assert_eq!(phone_digits("call after 5"), None);
        assert_eq!(phone_digits("123 45"), None);
    }

    #[test]
    fn email_ignores_case_and_surrounding_space() {
        assert_eq!(
            email_key("  Ada.Lovelace@Example.COM "),
            Some("ada.lovelace@example.com".into())
        );
        assert_eq!(email_key("   "), None);
    }

    #[test]
    fn phone_ignores_punctuation_and_spaces() {
        assert_eq!(
            phone_key("+49 (30) 123-45.67"),
            Some("+4930123 4567".replace(' ', ""))
        );
        assert_eq!(phone_key("+49 30 1234567"), phone_key("+49-30-123.4567"));
        assert_ne!(phone_key("+4930"), phone_key("004930"));
        assert_eq!(phone_key(" - "), None);
    }

    #[test]
    fn search_terms_ignore_case_and_surrounding_space() {
        assert_eq!(search_term(" LoveLace "), "lovelace");
    }
}
