//! A lead's comments: the team's thread about it, apart from ratings. A comment never goes
//! to a platform. Its author may edit or delete it; the lead's history records that it was
//! written, edited or deleted (never its text, so that a deleted comment is gone), and its
//! `@name` mentions alert the members named.

use chrono::{DateTime, Utc};

use crate::account::{Actor, Member};
use crate::types::{LeadId, UserId};

/// The most characters a comment may have.
pub const MAX_COMMENT_CHARS: usize = 5_000;

/// A comment on a lead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comment {
    /// Its id.
    pub id: i64,
    /// The lead.
    pub lead: LeadId,
    /// Who wrote it.
    pub author: Actor,
    /// What it says.
    pub text: String,
    /// When it was written.
    pub created_at: DateTime<Utc>,
    /// When it was last edited.
    pub edited_at: Option<DateTime<Utc>>,
}

impl Comment {
    /// Whether `user` wrote it (and so may edit or delete it).
    pub fn is_by(&self, user: UserId) -> bool {
        author_id(&self.author) == Some(user)
    }
}

/// The user who may change what `actor` wrote: the person behind it; no one for an API key
/// or the admin commands.
pub fn author_id(actor: &Actor) -> Option<UserId> {
    match actor {
        Actor::User { id, .. } => Some(*id),
        Actor::ApiKey { .. } | Actor::Admin => None,
    }
}

/// A comment's text as accounts of people type it: trimmed, 1 to [`MAX_COMMENT_CHARS`]
/// characters.
pub fn comment_text(text: &str) -> Result<String, String> {
    let text = text.trim();
    match text.chars().count() {
        0 => Err("a comment cannot be empty".to_owned()),
        n if n > MAX_COMMENT_CHARS => Err(format!(
            "a comment must be at most {MAX_COMMENT_CHARS} characters"
        )),
        _ => Ok(text.to_owned()),
    }
}

/// The members a comment mentions: `@` followed by a member's name (in any case, the
/// longest name that fits, so `@Ada Lovelace` is Ada Lovelace and not another Ada) or by
/// the part of their email before the `@`. Each member once, in the order of `members`.
pub fn mentions<'a>(text: &str, members: &'a [Member]) -> Vec<&'a Member> {
    let lower = text.to_lowercase();
    let mentioned_at = |at: usize, member: &Member| {
        let rest = &lower[at + 1..];
        let local = member.user.email.split('@').next().unwrap_or_default();
        [member.user.name.to_lowercase(), local.to_lowercase()]
            .into_iter()
            .filter(|handle| !handle.is_empty())
            .filter(|handle| rest.starts_with(handle.as_str()))
            .map(|handle| handle.len())
            .max()
            .filter(|len| {
                // The name ends where a word ends: `@ada` is not `@adam`.
                !rest[*len..]
                    .chars()
                    .next()
                    .is_some_and(|next| next.is_alphanumeric())
            })
    };
    let mut named: Vec<&Member> = Vec::new();
    for (at, _) in lower.match_indices('@') {
        let best = members
            .iter()
            .filter_map(|member| mentioned_at(at, member).map(|len| (len, member)))
            .max_by_key(|(len, _)| *len);
        if let Some((_, member)) = best
            && !named.iter().any(|known| known.user.id == member.user.id)
        {
            named.push(member);
        }
    }
    members
        .iter()
        .filter(|member| named.iter().any(|known| known.user.id == member.user.id))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::account::{Preferences, User};
    use crate::types::Role;

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

    #[test]
    fn comments_are_trimmed_and_bounded() {
        assert_eq!(
            comment_text("  Called, no answer  ").unwrap(),
            "Called, no answer"
        );
        assert!(comment_text("   ").is_err());
        assert!(comment_text(&"x".repeat(MAX_COMMENT_CHARS)).is_ok());
        assert!(comment_text(&"x".repeat(MAX_COMMENT_CHARS + 1)).is_err());
    }

    #[test]
    fn mentions_name_members_by_name_or_email() {
        let team = [
            member(1, "Ada", "ada@example.com"),
            member(2, "Ada Lovelace", "lovelace@example.com"),
            member(3, "Grace Hopper", "grace@example.com"),
            member(4, "Adam", "adam@example.com"),
        ];
        let ids = |text: &str| -> Vec<i64> {
            mentions(text, &team).iter().map(|m| m.user.id.0).collect()
        };
        assert_eq!(ids("@ada lovelace, can you call?"), vec![2]);
        assert_eq!(ids("@Ada and @grace: ping @ADA"), vec![1, 3]);
        assert_eq!(ids("@Adam"), vec![4]);
        assert_eq!(ids("ada@example.com wrote"), Vec::<i64>::new());
        assert_eq!(ids("@nobody"), Vec::<i64>::new());
        let comment = Comment {
            id: 1,
            lead: LeadId(1),
            author: Actor::User {
                id: UserId(3),
                name: "Grace".into(),
            },
            text: "x".into(),
            created_at: DateTime::UNIX_EPOCH,
            edited_at: None,
        };
        assert!(comment.is_by(UserId(3)) && !comment.is_by(UserId(1)));
    }
}
