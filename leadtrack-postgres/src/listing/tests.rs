//! The listing's search terms.

use super::*;

#[test]
fn terms_with_a_trigram() {
    // A word bounded by a character that is no word character is padded: `a-b` has
    // the trigram "  b".
    for term in [
        "ada",
        "okafor",
        "lead1",
        "222-33",
        "a b",
        "a-b",
        "ada lovelace",
        "éabc",
    ] {
        assert!(has_trigram(term), "{term:?}");
    }
    for term in ["ab", "éd", "%", "---", "é-é", "éa", "aé", "ééé", ""] {
        assert!(!has_trigram(term), "{term:?}");
    }
}

#[test]
fn like_patterns_escape_wildcards() {
    assert_eq!(like_pattern("a%b_c\\d"), r"%a\%b\_c\\d%");
    assert_eq!(like_pattern("ada"), "%ada%");
}
