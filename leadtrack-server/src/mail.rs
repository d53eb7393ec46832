//! Outgoing email from the command line: its settings (`--smtp-url`, `--mail-from`,
//! `--public-url`), the mailer they name, the address links point to, and `server mail test`.

use clap::{Args, Subcommand};
use leadtrack_mail::Mailer;

use crate::Failure;

/// Outgoing email: the SMTP server, the sender, and the address links in messages point to.
#[derive(Debug, Args)]
#[command(next_help_heading = "Mail")]
pub(crate) struct MailArgs {
    /// The SMTP server messages are sent through: `smtp://[user:password@]host[:port]`
    /// (plain; `?tls=required` for STARTTLS) or `smtps://...` (TLS). Without it, nothing is
    /// emailed.
    #[arg(long, global = true, env = "LEADTRACK_SMTP_URL", value_name = "URL")]
    pub(crate) smtp_url: Option<String>,

    /// The sender of every message: `leads@example.com` or `leadtrack <leads@example.com>`.
    #[arg(
        long,
        global = true,
        env = "LEADTRACK_MAIL_FROM",
        value_name = "ADDRESS"
    )]
    pub(crate) mail_from: Option<String>,

    /// The dashboard's address as people reach it (`https://leads.example.com`), which
    /// links in messages point to; without it, `http://` and the address of `serve`.
    #[arg(long, global = true, env = "LEADTRACK_PUBLIC_URL", value_name = "URL")]
    pub(crate) public_url: Option<String>,
}

/// `mail ...`.
#[derive(Debug, Subcommand)]
pub(crate) enum MailCommand {
    /// Send one test message through the SMTP server; fails (exit 1) if it refuses it.
    Test {
        /// The recipient.
        #[arg(long, value_name = "ADDRESS")]
        to: String,
    },
}

/// The mailer `--smtp-url` and `--mail-from` name; `None` without an SMTP server.
pub(crate) fn mailer(settings: &MailArgs) -> Result<Option<Mailer>, Failure> {
    let Some(url) = settings.smtp_url.as_deref() else {
        return Ok(None);
    };
    let Some(from) = settings.mail_from.as_deref() else {
        return Err(Failure(
            "--smtp-url needs --mail-from (LEADTRACK_MAIL_FROM): the sender of every message"
                .to_owned(),
        ));
    };
    Mailer::new(url, from)
        .map(Some)
        .map_err(|err| Failure(err.to_string()))
}

/// Where links in messages point: `--public-url`, else `http://` and the address `serve`
/// listens on.
pub(crate) fn public_url(settings: &MailArgs, addr: &str) -> String {
    match settings.public_url.as_deref() {
        Some(url) => url.trim_end_matches('/').to_owned(),
        None => format!("http://{addr}"),
    }
}

/// The mail settings and the address `serve` listens on: what commands that make a link
/// need to send it, and to say where it points.
#[derive(Debug)]
pub(crate) struct Links {
    /// `--smtp-url`, `--mail-from`, `--public-url`.
    pub(crate) settings: MailArgs,
    /// The address `serve` listens on (or would).
    pub(crate) addr: String,
}

impl Links {
    /// The mailer, if an SMTP server is set.
    pub(crate) fn mailer(&self) -> Result<Option<Mailer>, Failure> {
        mailer(&self.settings)
    }

    /// Where links point.
    pub(crate) fn public_url(&self) -> String {
        public_url(&self.settings, &self.addr)
    }
}

/// `server mail test --to ADDRESS`: sends one message, and says where it went.
pub(crate) async fn test(settings: &MailArgs, addr: &str, to: &str) -> Result<(), Failure> {
    let Some(mailer) = mailer(settings)? else {
        return Err(Failure(
            "no SMTP server: set --smtp-url (LEADTRACK_SMTP_URL) and --mail-from".to_owned(),
        ));
    };
    let body = format!(
        "This message from leadtrack reached you: its email works.\n\n\
         Links in its messages point to {}.",
        public_url(settings, addr)
    );
    mailer
        .send(to, "leadtrack: a test message", &body)
        .await
        .map_err(|err| Failure(err.to_string()))?;
    println!("sent a test message to {to}");
    Ok(())
}
