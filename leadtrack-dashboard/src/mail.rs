//! The messages the dashboard sends, each carrying a one-use link
//! ([`leadtrack_core::link`]): an invitation, a password reset, an email confirmation; and
//! where their links point.
//!
//! A message that could not be sent (no mailer, or the SMTP server failed) is never lost in
//! silence: the page that made it shows its link to pass on, except a password reset, whose
//! link only the account's mailbox may see.

use leadtrack_core::link::{LinkKind, LinkToken};
use leadtrack_core::types::Role;

use crate::{Config, Request, session};

/// A message to send.
pub(crate) struct Message {
    /// The recipient.
    pub(crate) to: String,
    /// Its subject.
    pub(crate) subject: String,
    /// Its plain text.
    pub(crate) body: String,
}

/// What became of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// The SMTP server took it.
    Sent,
    /// No mailer is set up.
    NoMailer,
    /// The SMTP server refused it or could not be reached (logged).
    Failed,
}

/// Sends `message`, saying what became of it. Only the failure's kind is logged, never the
/// recipient or the message.
pub(crate) async fn deliver(config: &Config, message: &Message) -> Delivery {
    let Some(mailer) = &config.mailer else {
        return Delivery::NoMailer;
    };
    match mailer
        .send(&message.to, &message.subject, &message.body)
        .await
    {
        Ok(()) => Delivery::Sent,
        Err(err) => {
            tracing::warn!(error = %err, "a message was not sent");
            Delivery::Failed
        }
    }
}

/// The site's address for links: the configured public URL, else this request's origin.
pub(crate) fn site(config: &Config, request: &Request) -> String {
    match &config.public_url {
        Some(url) => url.trim_end_matches('/').to_owned(),
        None => session::own_origin(request, config).unwrap_or_else(|| "http://localhost".into()),
    }
}

/// The absolute URL of a link of `kind` with `token`.
pub(crate) fn link(
    config: &Config,
    request: &Request,
    kind: LinkKind,
    token: &LinkToken,
) -> String {
    kind.url(&site(config, request), token)
}

/// How long a link of `kind` works, in words.
fn lifetime(kind: LinkKind) -> String {
    match kind.lifetime().num_hours() {
        1 => "one hour".to_owned(),
        hours => format!("{hours} hours"),
    }
}

/// An invitation of `to` to the project `project` as `role`, by `by`.
pub(crate) fn invitation(to: &str, project: &str, role: Role, by: &str, url: &str) -> Message {
    Message {
        to: to.to_owned(),
        subject: format!("{by} invited you to {project} on leadtrack"),
        body: format!(
            "{by} invited you to join {project} on leadtrack as {article} {role}.\n\n\
             Follow this link to set up your account (or sign in) and join:\n\n{url}\n\n\
             The link works once, for {}. If you did not expect it, ignore this message.\n",
            lifetime(LinkKind::Invitation),
            article = if role == Role::Owner { "an" } else { "a" },
        ),
    }
}

/// A password reset for the account of `to`.
pub(crate) fn password_reset(to: &str, name: &str, url: &str) -> Message {
    Message {
        to: to.to_owned(),
        subject: "Reset your leadtrack password".to_owned(),
        body: format!(
            "Hello {name},\n\nSomeone, hopefully you, asked to reset the password of your \
             leadtrack account. Follow this link to choose a new one:\n\n{url}\n\n\
             The link works once, for {}. Setting a new password signs you out everywhere \
             else. If you did not ask for it, ignore this message: your password stays as \
             it is.\n",
            lifetime(LinkKind::PasswordReset)
        ),
    }
}

/// The confirmation of `to` as the new email of the account of `name`.
pub(crate) fn email_change(to: &str, name: &str, url: &str) -> Message {
    Message {
        to: to.to_owned(),
        subject: "Confirm your new email for leadtrack".to_owned(),
        body: format!(
            "Hello {name},\n\nFollow this link to make {to} the email of your leadtrack \
             account:\n\n{url}\n\nThe link works once, for {}. Until then, you sign in with \
             your current email.\n",
            lifetime(LinkKind::EmailChange)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_link_and_how_long_it_works() {
        let invite = invitation(
            "ada@example.com",
            "Acme",
            Role::Owner,
            "Grace",
            "https://x/i/1",
        );
        assert_eq!(invite.subject, "Grace invited you to Acme on leadtrack");
        assert!(invite.body.contains("as an owner.") && invite.body.contains("for 72 hours"));
        assert!(invite.body.contains("\n\nhttps://x/i/1\n\n"));
        let reset = password_reset("ada@example.com", "Ada", "https://x/r/1");
        assert!(reset.body.contains("for one hour") && reset.body.starts_with("Hello Ada,"));
        let change = email_change("new@example.com", "Ada", "https://x/e/1");
        assert!(change.body.contains("make new@example.com the email"));
        assert!(change.body.contains("for 24 hours"));
    }
}
