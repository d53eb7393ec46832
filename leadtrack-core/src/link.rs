//! One-use links sent by email: invitations to a project, password resets and email
//! confirmations.
//!
//! - A link's secret is 256 random bits in its URL; a store keeps only its SHA-256, so a
//!   copy of the database opens nothing.
//! - A link lasts [`LinkKind::lifetime`]: an invitation 72 hours, a password reset one hour,
//!   an email confirmation a day. It works once: a store checks that it is live and takes it
//!   in one write, so two clicks cannot both succeed.
//! - A new link of a kind replaces the one before it: the latest invitation of an email to a
//!   project, the latest reset or confirmation of a user, is the only one that works. A
//!   reset asked for again within [`RESET_KEPT_FOR`] of the last makes no new link: the
//!   one already sent still works, and nobody can void it by asking again.

use std::fmt;

use crate::account::{Actor, HexSecret, NewUser, email_key, validate_email};
use crate::types::{ProjectId, Role, UserId};
use chrono::{DateTime, Duration, Utc};

/// How long a sent password-reset link stays the one that works, however often a reset is
/// asked for again.
pub const RESET_KEPT_FOR: Duration = Duration::minutes(15);

/// A link's secret as its URL holds it: 64 hex digits. Never logged or stored.
#[derive(Clone, PartialEq, Eq)]
pub struct LinkToken(HexSecret);

impl LinkToken {
    /// A fresh token of 256 random bits.
    pub fn generate() -> Self {
        Self(HexSecret::generate())
    }

    /// A token from a URL, when it has the right shape.
    pub fn parse(text: &str) -> Option<Self> {
        HexSecret::parse(text).map(Self)
    }

    /// The token, for the URL.
    pub fn expose(&self) -> &str {
        self.0.expose()
    }

    /// What the store keeps and finds the link by.
    pub fn hash(&self) -> LinkHash {
        LinkHash(self.0.sha256())
    }
}

impl fmt::Debug for LinkToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LinkToken(***)")
    }
}

/// The SHA-256 of a link's token: all a store keeps of it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinkHash(pub [u8; 32]);

impl fmt::Debug for LinkHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LinkHash(***)")
    }
}

/// What a link does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, strum::AsRefStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum LinkKind {
    /// Joins a project: sets up an account, or signs in to one, and becomes a member.
    Invitation,
    /// Sets a new password.
    PasswordReset,
    /// Confirms a new email for an account.
    EmailChange,
}

impl LinkKind {
    /// How long a link of this kind works after it was made.
    pub fn lifetime(self) -> Duration {
        match self {
            Self::Invitation => Duration::hours(72),
            Self::PasswordReset => Duration::hours(1),
            Self::EmailChange => Duration::hours(24),
        }
    }

    /// The dashboard's path for links of this kind; the token follows it.
    pub fn path(self) -> &'static str {
        match self {
            Self::Invitation => "/invitations/",
            Self::PasswordReset => "/password/reset/",
            Self::EmailChange => "/profile/email/",
        }
    }

    /// The absolute URL of the link with `token`, on the site at `public_url` (no trailing
    /// slash).
    pub fn url(self, public_url: &str, token: &LinkToken) -> String {
        format!(
            "{}{}{}",
            public_url.trim_end_matches('/'),
            self.path(),
            token.expose()
        )
    }
}

/// A pending invitation to a project.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invitation {
    /// Its id within the store.
    pub id: i64,
    /// The project it joins.
    pub project: ProjectId,
    /// Who is invited, as the owner typed it.
    pub email: String,
    /// The role they get.
    pub role: Role,
    /// Who invited them, as [`Actor`]'s display reads.
    pub invited_by: String,
    /// When the current link was made (an invitation sent again gets a new one).
    pub sent_at: DateTime<Utc>,
}

impl Invitation {
    /// When its link stops working.
    pub fn expires_at(&self) -> DateTime<Utc> {
        self.sent_at + LinkKind::Invitation.lifetime()
    }

    /// Whether its link still works at `now`.
    pub fn is_live(&self, now: DateTime<Utc>) -> bool {
        now < self.expires_at()
    }

    /// Checks that an account with `email` may take it: only the invitee's own (in any
    /// case), so that a forwarded link cannot join someone else's account.
    pub fn check_account(&self, email: &str) -> Result<(), String> {
        if email_key(email) == email_key(&self.email) {
            Ok(())
        } else {
            Err(format!("the invitation is for {}", self.email))
        }
    }
}

/// An invitation to make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewInvitation {
    /// The invitee's email, checked.
    pub email: String,
    /// Their role.
    pub role: Role,
    /// Who invites them.
    pub invited_by: String,
}

impl NewInvitation {
    /// An invitation of `email` with `role`, by `by`. Errors: an email accounts refuse.
    pub fn new(email: &str, role: Role, by: &Actor) -> Result<Self, String> {
        Ok(Self {
            email: validate_email(email)?,
            role,
            invited_by: by.to_string(),
        })
    }
}

/// Who takes an invitation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Acceptance {
    /// Someone new, with the account they set up (its email must be the invitation's).
    NewAccount(NewUser),
    /// The user who already has the invitation's email, signed in.
    Existing(UserId),
}

/// A link about a user's own account.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AccountLink {
    /// Sets a new password.
    PasswordReset,
    /// Makes `email`, checked, the account's email.
    EmailChange {
        /// The new email.
        email: String,
    },
}

impl AccountLink {
    /// A change of email to `email`. Errors: an email accounts refuse.
    pub fn email_change(email: &str) -> Result<Self, String> {
        Ok(Self::EmailChange {
            email: validate_email(email)?,
        })
    }

    /// Its kind.
    pub fn kind(&self) -> LinkKind {
        match self {
            Self::PasswordReset => LinkKind::PasswordReset,
            Self::EmailChange { .. } => LinkKind::EmailChange,
        }
    }

    /// The email it confirms, if it confirms one.
    pub fn email(&self) -> Option<&str> {
        match self {
            Self::PasswordReset => None,
            Self::EmailChange { email } => Some(email),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn tokens_are_256_bits_kept_as_their_hash() {
        let token = LinkToken::generate();
        assert_eq!(token.expose().len(), 64);
        assert_eq!(LinkToken::parse(token.expose()), Some(token.clone()));
        assert_eq!(
            LinkToken::parse(&token.expose().to_ascii_uppercase()),
            Some(token.clone())
        );
        assert_eq!(LinkToken::parse("abc"), None);
        assert_eq!(LinkToken::parse(&"z".repeat(64)), None);
        assert_ne!(LinkToken::generate(), token);
        assert_eq!(token.hash(), token.clone().hash());
        assert!(!format!("{token:?} {:?}", token.hash()).contains(token.expose()));
    }

    #[test]
    fn links_last_72_hours_an_hour_or_a_day() {
        let token = LinkToken::parse(&"ab".repeat(32)).unwrap();
        let url = LinkKind::Invitation.url("https://leads.example.com/", &token);
        assert_eq!(
            url,
            format!("https://leads.example.com/invitations/{}", "ab".repeat(32))
        );
        let sent = Utc.with_ymd_and_hms(2026, 3, 1, 9, 0, 0).unwrap();
        let invitation = Invitation {
            id: 1,
            project: ProjectId(1),
            email: "ada@example.com".into(),
            role: Role::Member,
            invited_by: "Grace".into(),
            sent_at: sent,
        };
        assert!(invitation.is_live(sent + Duration::hours(72) - Duration::seconds(1)));
        assert!(!invitation.is_live(sent + Duration::hours(72)));
        assert_eq!(LinkKind::PasswordReset.lifetime(), Duration::hours(1));
        assert_eq!(LinkKind::EmailChange.lifetime(), Duration::hours(24));
    }

    #[test]
    fn invitations_and_email_changes_take_only_emails() {
        let by = Actor::Admin;
        let invitation = NewInvitation::new(" Ada@Example.com ", Role::Viewer, &by).unwrap();
        assert_eq!(invitation.email, "Ada@Example.com");
        assert_eq!(invitation.invited_by, "the admin commands");
        assert!(NewInvitation::new("ada", Role::Member, &by).is_err());
        assert!(AccountLink::email_change("a b@x.io").is_err());
        let change = AccountLink::email_change("new@example.com").unwrap();
        assert_eq!(
            (change.kind(), change.email()),
            (LinkKind::EmailChange, Some("new@example.com"))
        );
        assert_eq!(AccountLink::PasswordReset.email(), None);
    }
}
