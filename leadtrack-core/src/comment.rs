//! A lead's comments: the team's thread about it, apart from ratings. A comment never goes
//! to a platform. Its author may edit or delete it; the lead's history records that it was
//! written, edited or deleted (never its text, so that a deleted comment is gone), and its
//! `@name` mentions alert the members named ([`crate::mention`]).

use chrono::{DateTime, Utc};

use crate::account::Actor;
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn only_its_author_may_change_a_comment() {
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
