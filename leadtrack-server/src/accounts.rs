//! The `user` and `member` commands: the people who sign in to the dashboard, and their
//! roles in projects.

use std::io::BufRead;

use chrono::Utc;
use clap::Subcommand;
use leadtrack_core::account::{Actor, NewUser, Password, User};
use leadtrack_core::activity::ProjectActivity;
use leadtrack_core::link::{AccountLink, LinkKind, LinkToken, NewInvitation};
use leadtrack_core::store::Entity;
use leadtrack_core::types::Role;
use leadtrack_core::{Accounts, Store, StoreError};
use serde_json::{Value, json};

use crate::Failure;
use crate::admin::{audit, print_json, project};
use crate::listing::ProjectListing;
use crate::mail::Links;

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

/// The user with this email, or a failure that says how to find one.
async fn user<S: Accounts>(store: &S, email: &str) -> Result<User, Failure> {
    store.user_by_email(email).await.map_err(|err| match err {
        StoreError::NotFound(Entity::User) => Failure(format!(
            "no user with email {email:?}; `server user list` shows the users"
        )),
        other => Failure::store(other),
    })
}

/// The password to set: the first line of standard input, or a generated one (which the
/// caller prints once).
fn password(from_stdin: bool) -> Result<(Password, bool), Failure> {
    if !from_stdin {
        return Ok((Password::generate(), true));
    }
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|err| {
            Failure(format!(
                "cannot read the password from standard input: {err}"
            ))
        })?;
    let line = line.trim_end_matches(['\n', '\r']);
    Ok((Password::new(line).map_err(Failure)?, false))
}

/// Argon2id hashing takes tens of milliseconds of CPU: off the async threads.
async fn hash_off_thread<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(work)
        .await
        .expect("password hashing does not panic")
}

fn user_json(user: &User) -> Value {
    json!({
        "userId": user.id.0,
        "email": user.email,
        "name": user.name,
        "disabled": user.disabled,
        "createdAt": leadtrack_core::time::format(&user.created_at),
    })
}

/// `user ...`
pub(crate) async fn user_command<S: Accounts>(
    store: &S,
    command: UserCommand,
    links: &Links,
) -> Result<(), Failure> {
    match command {
        UserCommand::Create {
            email,
            name,
            password_stdin,
            json,
        } => {
            let (password, generated) = password(password_stdin)?;
            let new = {
                let password = password.clone();
                hash_off_thread(move || NewUser::new(&email, name.as_deref(), &password)).await
            }
            .map_err(Failure)?;
            let user = store
                .create_user(new, Utc::now())
                .await
                .map_err(Failure::store)?;
            let shown = generated.then(|| password.expose().to_owned());
            if json {
                let mut value = user_json(&user);
                value["password"] = json!(shown);
                print_json(&value);
            } else {
                say!(
                    "Created user {} ({}), id {}",
                    user.email,
                    user.name,
                    user.id
                );
                if let Some(password) = shown {
                    say!("  password: {password}");
                    say!("The password is shown only this once.");
                }
                say!(
                    "Add them to a project: server member add --project ID --email {}",
                    user.email
                );
            }
        }
        UserCommand::List { json } => {
            let users = store.users().await.map_err(Failure::store)?;
            if json {
                print_json(&Value::Array(users.iter().map(user_json).collect()));
            } else if users.is_empty() {
                say!("No users yet: `server user create --email EMAIL` creates one.");
            } else {
                say!("{:<6} {:<9} {:<32} NAME", "ID", "STATUS", "EMAIL");
                for user in users {
                    let status = if user.disabled { "disabled" } else { "active" };
                    say!(
                        "{:<6} {status:<9} {:<32} {}",
                        user.id,
                        user.email,
                        user.name
                    );
                }
            }
        }
        UserCommand::SetPassword {
            email,
            password_stdin,
            json,
        } => {
            let user = user(store, &email).await?;
            let (password, generated) = password(password_stdin)?;
            let hash = {
                let password = password.clone();
                hash_off_thread(move || password.hash()).await
            };
            store
                .set_password(user.id, &hash)
                .await
                .map_err(Failure::store)?;
            let shown = generated.then(|| password.expose().to_owned());
            if json {
                print_json(&json!({"userId": user.id.0, "email": user.email, "password": shown}));
            } else {
                say!(
                    "New password set for {}; their sessions have ended.",
                    user.email
                );
                if let Some(password) = shown {
                    say!("  password: {password}");
                    say!("The password is shown only this once.");
                }
            }
        }
        UserCommand::ResetLink { email, json } => {
            let user = user(store, &email).await?;
            let token = LinkToken::generate();
            store
                .issue_link(
                    user.id,
                    &AccountLink::PasswordReset,
                    &token.hash(),
                    Utc::now(),
                )
                .await
                .map_err(Failure::store)?;
            let url = LinkKind::PasswordReset.url(&links.public_url(), &token);
            let body = format!(
                "Hello {},\n\nFollow this link to choose a new password for your leadtrack \
                 account:\n\n{url}\n\nThe link works once, for one hour, and signs you out \
                 everywhere else.\n",
                user.name
            );
            let sent = send(links, &user.email, "Reset your leadtrack password", &body).await?;
            print_link(&url, sent, &user.email, json);
        }
        UserCommand::Disable { email, json } => set_disabled(store, &email, true, json).await?,
        UserCommand::Enable { email, json } => set_disabled(store, &email, false, json).await?,
    }
    Ok(())
}

/// `user disable` and `user enable`.
async fn set_disabled<S: Accounts>(
    store: &S,
    email: &str,
    disabled: bool,
    json: bool,
) -> Result<(), Failure> {
    let user = user(store, email).await?;
    let user = store
        .set_user_disabled(user.id, disabled)
        .await
        .map_err(Failure::store)?;
    if json {
        print_json(&user_json(&user));
    } else if disabled {
        say!(
            "Disabled {}: they cannot sign in, and their sessions have ended.",
            user.email
        );
    } else {
        say!("Enabled {}: they can sign in again.", user.email);
    }
    Ok(())
}

/// Sends a message when an SMTP server is set: whether it was sent. A refusal fails the
/// command (the link is made, and works, all the same).
async fn send(links: &Links, to: &str, subject: &str, body: &str) -> Result<bool, Failure> {
    let Some(mailer) = links.mailer()? else {
        return Ok(false);
    };
    match mailer.send(to, subject, body).await {
        Ok(()) => Ok(true),
        Err(err) => {
            eprintln!("warning: {err}; pass the link on yourself");
            Ok(false)
        }
    }
}

/// Prints a link a command made, as the last line (`--json`: `{"url": ...}`).
fn print_link(url: &str, sent: bool, to: &str, json: bool) {
    if json {
        print_json(&json!({"url": url, "emailed": sent}));
        return;
    }
    if sent {
        say!("Emailed the link to {to}. It works once:");
    } else {
        say!("No email was sent: pass this link on to {to}. It works once:");
    }
    say!("{url}");
}

/// `member ...`
pub(crate) async fn member_command<S: Store>(
    store: &S,
    command: MemberCommand,
    links: &Links,
) -> Result<(), Failure> {
    match command {
        MemberCommand::Invite {
            project: id,
            email,
            role,
            json,
        } => invite(store, links, (&id, &email, role), json).await?,
        MemberCommand::Add {
            project: id,
            email,
            role,
            json,
        } => add_member(store, (&id, &email, role), json).await?,
        MemberCommand::List(ProjectListing { project: id, json }) => {
            let project = project(store, &id).await?;
            let members = store.members(project.id).await.map_err(Failure::store)?;
            if json {
                let list: Vec<_> = members
                    .iter()
                    .map(|m| json!({"email": m.user.email, "name": m.user.name, "role": m.role}))
                    .collect();
                print_json(&json!(list));
            } else if members.is_empty() {
                say!(
                    "Project {id} has no members: `server member add --project {id} --email EMAIL`."
                );
            } else {
                say!("{:<8} {:<32} NAME", "ROLE", "EMAIL");
                for member in members {
                    say!(
                        "{:<8} {:<32} {}",
                        member.role,
                        member.user.email,
                        member.user.name
                    );
                }
            }
        }
        MemberCommand::Remove {
            project: id,
            email,
            json,
        } => {
            let project = project(store, &id).await?;
            let user = user(store, &email).await?;
            let removed = store
                .remove_member(project.id, user.id)
                .await
                .map_err(Failure::store)?;
            if !removed {
                return Err(Failure(format!(
                    "{} is not a member of project {id}",
                    user.email
                )));
            }
            let event = ProjectActivity::MemberRemoved {
                email: user.email.clone(),
            };
            audit(store, project.id, event).await?;
            if json {
                print_json(&json!({"projectId": id, "email": user.email, "removed": true}));
            } else {
                say!("{} is no longer a member of project {id}.", user.email);
            }
        }
    }
    Ok(())
}

/// `member invite`: an invitation by email (or its link printed) to join `id` as `role`.
async fn invite<S: Store>(
    store: &S,
    links: &Links,
    (id, email, role): (&str, &str, Role),
    json: bool,
) -> Result<(), Failure> {
    let project = project(store, id).await?;
    let invitation = NewInvitation::new(email, role, &Actor::Admin).map_err(Failure)?;
    let token = LinkToken::generate();
    let sent = store
        .invite(project.id, &invitation, &token.hash(), Utc::now())
        .await
        .map_err(Failure::store)?;
    let invited = ProjectActivity::Invited {
        email: sent.email.clone(),
        role,
    };
    audit(store, project.id, invited).await?;
    let url = LinkKind::Invitation.url(&links.public_url(), &token);
    let body = format!(
        "You are invited to join {} on leadtrack as {role}.\n\nFollow this link to set \
         up your account (or sign in) and join:\n\n{url}\n\nThe link works once, for \
         72 hours.\n",
        project.name
    );
    let subject = format!("You are invited to {} on leadtrack", project.name);
    let emailed = send(links, &sent.email, &subject, &body).await?;
    print_link(&url, emailed, &sent.email, json);
    Ok(())
}

/// `member add`: an existing user made a member of `id` as `role`, or their role changed.
async fn add_member<S: Store>(
    store: &S,
    (id, email, role): (&str, &str, Role),
    json: bool,
) -> Result<(), Failure> {
    let project = project(store, id).await?;
    let user = user(store, email).await?;
    let before = store
        .members(project.id)
        .await
        .map_err(Failure::store)?
        .into_iter()
        .find(|member| member.user.id == user.id)
        .map(|member| member.role);
    store
        .add_member(project.id, user.id, role, Utc::now())
        .await
        .map_err(Failure::store)?;
    if before != Some(role) {
        let event = ProjectActivity::RoleSet {
            email: user.email.clone(),
            from: before,
            to: role,
        };
        audit(store, project.id, event).await?;
    }
    if json {
        print_json(&json!({"projectId": id, "email": user.email, "role": role}));
    } else {
        say!("{} is now {role} of project {id}.", user.email);
    }
    Ok(())
}
