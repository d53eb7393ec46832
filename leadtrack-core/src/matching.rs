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
    fn search_terms_ignore_case_and_surrounding_space() {
        assert_eq!(search_term(" LoveLace "), "lovelace");
    }
}
