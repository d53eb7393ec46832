//! `@` mentions in comments: who a comment names, and which of its mentions name nobody or
//! more than one member, so that the writer is told before saving rather than the mention
//! being dropped. Names are compared as `q` compares text ([`crate::matching::fold`]: any
//! case, accents or none), so `@maria` and `@María` are María García.

use crate::account::Member;
use crate::matching::fold;

/// What the mentions of a text name.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Mentions<'a> {
    /// The members named, each once, in the order of the members given.
    pub named: Vec<&'a Member>,
    /// Mentions that name no member, as written (`@bob`).
    pub unknown: Vec<String>,
    /// Mentions that fit several members, as written, with those members.
    pub ambiguous: Vec<(String, Vec<&'a Member>)>,
}

impl Mentions<'_> {
    /// Whether every mention names exactly one member.
    pub fn all_clear(&self) -> bool {
        self.unknown.is_empty() && self.ambiguous.is_empty()
    }
}

/// The shortest start of a name a mention may be: `@m` would name half the team.
const SHORTEST_PREFIX: usize = 2;

/// The mentions of `text` among `members`. An `@` starts a mention unless a letter or digit
/// comes right before it (an email address). Tried in turn, the first that fits wins:
/// - a member's whole name, or the part of their email before the `@` (the longest that
///   fits, ending where a word ends: `@Ada Lovelace` is Ada Lovelace, not another Ada);
/// - a member's first name (`@maria`);
/// - the start of any word of a member's name or of that email part, of at least
///   `SHORTEST_PREFIX` characters (`@lov`).
///
/// A step that fits several members makes the mention ambiguous.
pub fn mentions<'a>(text: &str, members: &'a [Member]) -> Mentions<'a> {
    let handles: Vec<Handles> = members.iter().map(Handles::of).collect();
    let mut found = Mentions::default();
    let mut named: Vec<usize> = Vec::new();
    for rest in starts(text) {
        let folded = fold(rest);
        let word: String = folded.chars().take_while(|c| is_word(*c)).collect();
        if word.is_empty() {
            continue;
        }
        let written = format!(
            "@{}",
            rest.chars().take_while(|c| is_word(*c)).collect::<String>()
        );
        let fits = whole(&handles, &folded)
            .or_else(|| several(&handles, |h| h.first == word))
            .or_else(|| {
                let prefix = word.chars().count() >= SHORTEST_PREFIX;
                several(&handles, |h| {
                    prefix && h.words.iter().any(|w| w.starts_with(&word))
                })
            });
        match fits.as_deref() {
            None | Some([]) => found.unknown.push(written),
            Some([one]) => named.push(*one),
            Some(many) => {
                let who = many.iter().map(|i| &members[*i]).collect();
                found.ambiguous.push((written, who));
            }
        }
    }
    found.named = (0..members.len())
        .filter(|i| named.contains(i))
        .map(|i| &members[i])
        .collect();
    found
}

/// What a member may be mentioned by, folded.
struct Handles {
    /// Their whole name, and their email's part before the `@`.
    whole: [String; 2],
    /// The first word of their name.
    first: String,
    /// Every word of their name, and that email part.
    words: Vec<String>,
}

impl Handles {
    fn of(member: &Member) -> Self {
        let name = fold(member.user.name.trim());
        let local = fold(member.user.email.split('@').next().unwrap_or_default());
        let words: Vec<String> = name
            .split(|c: char| !is_word(c))
            .filter(|word| !word.is_empty())
            .map(str::to_owned)
            .chain(Some(local.clone()).filter(|local| !local.is_empty()))
            .collect();
        Self {
            first: words.first().cloned().unwrap_or_default(),
            whole: [name, local],
            words,
        }
    }
}

/// The text after each `@` that starts a mention.
fn starts(text: &str) -> impl Iterator<Item = &str> {
    text.match_indices('@').filter_map(move |(at, _)| {
        let before = text[..at].chars().next_back();
        (!before.is_some_and(char::is_alphanumeric)).then(|| &text[at + 1..])
    })
}

/// The members whose whole name or email part `folded` begins with, ending where a word
/// ends: those of the longest such handle.
fn whole(handles: &[Handles], folded: &str) -> Option<Vec<usize>> {
    let fit = |handle: &String| {
        let rest = folded.strip_prefix(handle.as_str())?;
        let ends = !rest.chars().next().is_some_and(is_word);
        (!handle.is_empty() && ends).then_some(handle.len())
    };
    let lengths: Vec<Option<usize>> = handles
        .iter()
        .map(|h| h.whole.iter().filter_map(fit).max())
        .collect();
    let longest = lengths.iter().flatten().max()?;
    Some(
        (0..handles.len())
            .filter(|i| lengths[*i] == Some(*longest))
            .collect(),
    )
}

/// The members `fits`, or `None` when none does.
fn several(handles: &[Handles], fits: impl Fn(&Handles) -> bool) -> Option<Vec<usize>> {
    let found: Vec<usize> = (0..handles.len()).filter(|i| fits(&handles[*i])).collect();
    (!found.is_empty()).then_some(found)
}

/// A character of a name's word: letters, digits, `.`, `_` and `-` (as in email parts).
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '.' | '_' | '-')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::account::{Preferences, User};
    use crate::types::{Role, UserId};
    use chrono::DateTime;

    fn member(id: i64, name: &str, email: &str) -> Member {
        Member {
            user: User {
                id: UserId(id),
                email: email.into(),
                name: name.into(),
                disabled: false,
                created_at: DateTime::UNIX_EPOCH,
                preferences: Preferences::default(),
            },
            role: Role::Member,
            can_export: false,
            alerts: Default::default(),
        }
    }

    fn team() -> [Member; 6] {
        [
            member(1, "Ada", "ada@example.com"),
            member(2, "Ada Lovelace", "lovelace@example.com"),
            member(3, "Grace Hopper", "grace@example.com"),
            member(4, "Adam", "adam@example.com"),
            member(5, "María García", "mgarcia@example.com"),
            member(6, "Mario Rossi", "mario.rossi@example.com"),
        ]
    }

    fn ids(found: &Mentions<'_>) -> Vec<i64> {
        found.named.iter().map(|m| m.user.id.0).collect()
    }

    #[test]
    fn whole_names_and_email_parts_name_members_the_longest_first() {
        let team = team();
        let named = |text: &str| ids(&mentions(text, &team));
        assert_eq!(named("@ada lovelace, can you call?"), [2]);
        assert_eq!(named("@Ada and @grace: ping @ADA"), [1, 3]);
        assert_eq!(named("@Adam"), [4]);
        assert_eq!(named("@mario.rossi"), [6]);
        assert_eq!(named("ada@example.com wrote"), Vec::<i64>::new());
    }

    #[test]
    fn first_names_and_unique_starts_name_members_whatever_the_accents() {
        let team = team();
        let found = mentions("@maria and @María, then @hopper and @lov", &team);
        assert_eq!(ids(&found), [2, 3, 5]);
        assert!(found.all_clear(), "{found:?}");
    }

    #[test]
    fn unknown_and_ambiguous_mentions_are_reported_as_written() {
        let team = team();
        let found = mentions("@bob, @Mar and @g: see @grace", &team);
        assert_eq!(ids(&found), [3]);
        assert_eq!(found.unknown, ["@bob", "@g"]);
        let ambiguous: Vec<(&str, Vec<i64>)> = found
            .ambiguous
            .iter()
            .map(|(written, who)| (written.as_str(), who.iter().map(|m| m.user.id.0).collect()))
            .collect();
        assert_eq!(ambiguous, [("@Mar", vec![5, 6])]);
        assert!(!found.all_clear());
        assert!(mentions("no mention, a@b.c", &team).all_clear());
    }
}
