//! The user and member commands.

use super::ProjectListing;
use clap::Subcommand;
use leadtrack_core::types::Role;

/// `user ...`
#[derive(Debug, Subcommand)]
pub(crate) enum UserCommand {
    /// Create a user; prints a generated password once unless --password-stdin.
    Create {
        /// The email they sign in with.
        #[arg(long)]
        email: String,
        /// The name shown for what they do (default: the email's local part).
        #[arg(long)]
        name: Option<String>,
        /// Read the password from the first line of standard input.
        #[arg(long)]
        password_stdin: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List users.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Set a new password (generated unless --password-stdin); ends the user's sessions.
    SetPassword {
        /// The user's email.
        #[arg(long)]
        email: String,
        /// Read the password from the first line of standard input.
        #[arg(long)]
        password_stdin: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Make a one-use password-reset link (valid one hour) and email it when an SMTP server
    /// is set; prints the link as the last line.
    ResetLink {
        /// The user's email.
        #[arg(long)]
        email: String,
        /// Print JSON: `{"url": ...}`.
        #[arg(long)]
        json: bool,
    },
    /// Disable a user: they cannot sign in, and their sessions end.
    Disable {
        /// The user's email.
        #[arg(long)]
        email: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Enable a disabled user.
    Enable {
        /// The user's email.
        #[arg(long)]
        email: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `member ...`
#[derive(Debug, Subcommand)]
pub(crate) enum MemberCommand {
    /// Make a user a member of a project, or change their role.
    Add {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The user's email.
        #[arg(long)]
        email: String,
        /// `owner` (manages keys, integrations, labels, members, settings), `member` (sees,
        /// rates and exports leads) or `viewer` (sees leads and reports).
        #[arg(long, default_value = "member", value_name = "owner|member|viewer")]
        role: Role,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Invite someone by email: a one-use link (valid 72 hours) to set up their account (or
    /// sign in) and join, emailed when an SMTP server is set; prints the link as the last
    /// line. Inviting an email again replaces its link.
    Invite {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The invitee's email.
        #[arg(long)]
        email: String,
        /// The role they get.
        #[arg(long, default_value = "member", value_name = "owner|member|viewer")]
        role: Role,
        /// Print JSON: `{"url": ...}`.
        #[arg(long)]
        json: bool,
    },
    /// List a project's members.
    List(ProjectListing),
    /// Remove a user from a project.
    Remove {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The user's email.
        #[arg(long)]
        email: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}
