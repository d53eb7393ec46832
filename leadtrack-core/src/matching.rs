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
/// [`crate::store::q_text`].
pub fn q_words(q: &str) -> Vec<String> {
    fold(q).split_whitespace().map(str::to_owned).collect()
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
