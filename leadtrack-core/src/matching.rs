//! The matching rules used everywhere a lead is found by email, phone or search text
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

/// The text a `search` term is looked for in: the searchable fields, lowercased, one per line.
///
/// A search term never contains a line break after [`search_term`], so a match never spans
/// two fields.
pub fn search_text<'a>(fields: impl IntoIterator<Item = Option<&'a str>>) -> String {
    fields
        .into_iter()
        .flatten()
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A `search` term as matched against [`search_text`]: trimmed, lowercased, line breaks
/// folded to spaces.
pub fn search_term(term: &str) -> String {
    term.trim().to_lowercase().replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn search_matches_within_one_field_only() {
        let text = search_text([Some("Ada"), None, Some("LOVELACE"), Some("ada@x.io")]);
        assert_eq!(text, "ada\nlovelace\nada@x.io");
        assert!(text.contains(&search_term(" LoveLace ")));
        assert!(!text.contains(&search_term("ada lovelace")));
    }
}
