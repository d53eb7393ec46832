//! leadtrack's outgoing email: plain-text messages sent through an SMTP server with
//! [`lettre`]. A [`Mailer`] is made from the `--smtp-url` and `--mail-from` settings:
//! `smtp://host:port` (plain, or STARTTLS when the URL asks `?tls=required`) or
//! `smtps://host:port` (TLS), with `user:password@` when the server wants a login.
//!
//! Errors say what went wrong in words fit for a log or a terminal, never the URL (it may
//! hold a password).
//!
//! ```no_run
//! # async fn run() -> Result<(), leadtrack_mail::MailError> {
//! let mailer = leadtrack_mail::Mailer::new("smtp://127.0.0.1:2525", "leadtrack@example.com")?;
//! mailer.send("ada@example.com", "Hello", "A first message.").await?;
//! # Ok(()) }
//! ```

#![forbid(unsafe_code)]

use std::time::Duration;

use lettre::message::Body;
use lettre::message::Mailbox;
use lettre::message::header::{ContentTransferEncoding, ContentType};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

#[cfg(feature = "testkit")]
pub mod testkit;

/// How long a message may take to hand over, connection included.
const TIMEOUT: Duration = Duration::from_secs(20);

/// Why a message was not sent.
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    /// The SMTP URL does not parse.
    #[error("the SMTP URL is not smtp://[user:password@]host[:port] or smtps://…")]
    Url,
    /// An address (the sender's or a recipient's) is not an email address.
    #[error("{0:?} is not an email address")]
    Address(String),
    /// The SMTP server refused the message for good (a 5xx answer).
    #[error("the SMTP server refused the message: {0}")]
    Refused(String),
    /// The SMTP server could not be reached, or failed for now.
    #[error("the SMTP server could not take the message: {0}")]
    Unavailable(String),
}

/// Sends messages from one sender through one SMTP server.
#[derive(Clone)]
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl std::fmt::Debug for Mailer {
    /// Only the sender: the transport holds the server's credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailer").field("from", &self.from).finish()
    }
}

impl Mailer {
    /// A mailer through the server `smtp_url`, sending as `from` (`leads@example.com` or
    /// `leadtrack <leads@example.com>`).
    pub fn new(smtp_url: &str, from: &str) -> Result<Self, MailError> {
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(smtp_url)
            .map_err(|_| MailError::Url)?
            .timeout(Some(TIMEOUT))
            .build();
        Ok(Self {
            transport,
            from: mailbox(from)?,
        })
    }

    /// Sends a plain-text message to `to`.
    pub async fn send(&self, to: &str, subject: &str, body: &str) -> Result<(), MailError> {
        let message = Message::builder()
            .from(self.from.clone())
            .to(mailbox(to)?)
            .subject(subject)
            .header(ContentType::TEXT_PLAIN)
            .body(plain(body))
            .map_err(|err| MailError::Unavailable(err.to_string()))?;
        match self.transport.send(message).await {
            Ok(_) => Ok(()),
            Err(err) if err.is_permanent() => Err(MailError::Refused(err.to_string())),
            Err(err) => Err(MailError::Unavailable(err.to_string())),
        }
    }
}

/// A body as 7bit when it can be: ASCII, no NUL, lines within SMTP's 998 characters (RFC
/// 5322 section 2.1.1). Then a long link stays on one line as written, where lettre, which
/// keeps 7bit for lines under 76 characters, would break it with quoted-printable's `=`.
/// Anything else as lettre chooses.
fn plain(text: &str) -> Body {
    let seven_bit =
        text.is_ascii() && !text.contains('\0') && text.lines().all(|line| line.len() <= 998);
    if !seven_bit {
        return Body::new(text.to_owned());
    }
    let crlf = text.replace("\r\n", "\n").replace('\n', "\r\n");
    Body::dangerous_pre_encoded(crlf.into_bytes(), ContentTransferEncoding::SevenBit)
}

fn mailbox(address: &str) -> Result<Mailbox, MailError> {
    address
        .trim()
        .parse()
        .map_err(|_| MailError::Address(address.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::SmtpReceiver;

    #[tokio::test]
    async fn a_message_reaches_the_server_as_sent() {
        let receiver = SmtpReceiver::start(&["nobody@example.com"]).await;
        let mailer = Mailer::new(&receiver.url(), "leadtrack <leads@example.com>").unwrap();
        mailer
            .send(
                "ada@example.com",
                "Your invitation",
                "Follow this link: https://x.test/i/1",
            )
            .await
            .unwrap();
        let received = receiver.messages();
        assert_eq!(received.len(), 1);
        assert_eq!(received[0].from, "leads@example.com");
        assert_eq!(received[0].to, ["ada@example.com"]);
        assert!(
            received[0].data.contains("Subject: Your invitation"),
            "{}",
            received[0].data
        );
        assert_eq!(received[0].body(), "Follow this link: https://x.test/i/1");
        let refused = mailer.send("nobody@example.com", "Hi", "no").await;
        assert!(matches!(refused, Err(MailError::Refused(_))), "{refused:?}");
        assert_eq!(receiver.messages().len(), 1);
    }

    #[tokio::test]
    async fn bad_settings_and_unreachable_servers_are_said_without_the_url() {
        let url = "smtp://user:hunter2@";
        let err = Mailer::new("mailto:x", "a@example.com").unwrap_err();
        assert!(matches!(err, MailError::Url));
        assert!(matches!(
            Mailer::new("smtp://127.0.0.1:25", "not an address"),
            Err(MailError::Address(_))
        ));
        // A port nothing listens on.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let mailer = Mailer::new(&format!("{url}127.0.0.1:{port}"), "a@example.com").unwrap();
        let err = mailer.send("b@example.com", "Hi", "x").await.unwrap_err();
        assert!(matches!(err, MailError::Unavailable(_)), "{err:?}");
        assert!(!err.to_string().contains("hunter2"), "{err}");
        assert!(!format!("{mailer:?}").contains("hunter2"));
    }
}
