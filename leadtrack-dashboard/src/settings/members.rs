//! Members: who may sign in to the project and with which role; inviting someone by email
//! (a one-use link, 72 hours, sent by email or shown to pass on), sending an invitation again
//! or revoking it; changing a role, allowing exports, removing a member. The store keeps the
//! last owner from being removed or demoted. Every change is recorded in the audit log.

use askama::Template;
use chrono::Utc;
use leadtrack_core::account::{Member, email_key};
use leadtrack_core::activity::ProjectActivity;
use leadtrack_core::link::{Invitation, LinkKind, LinkToken, NewInvitation};
use leadtrack_core::store::{Conflict, Entity};
use leadtrack_core::types::{Role, UserId};
use leadtrack_core::{Accounts, Store, StoreError};
use warp::http::StatusCode;
use warp::reply::Response;

use super::{Answer, Frame, Owner, Problems, notice};
use crate::routes::{Route, Settings};
use crate::session::Form;
use crate::{Config, Request, format, mail, render};

/// A member as the list shows them.
struct MemberRow {
    user_id: String,
    name: String,
    email: String,
    role: Role,
    disabled: bool,
    is_viewer: bool,
    /// A member (not an owner or a viewer): whether owners let them export.
    export: Option<bool>,
}

/// A pending invitation as the list shows it.
struct InvitationRow {
    id: i64,
    email: String,
    role: Role,
    invited_by: String,
    sent: String,
    /// When its link stops working, or `None` once it has.
    expires: Option<String>,
}

/// A link that was not sent by email, for the owner to pass on.
struct PassOn {
    email: String,
    url: String,
    /// Whether sending was tried and failed (rather than no mailer being set up).
    failed: bool,
}

/// A problem with one member's row: their user id and the sentence.
struct RowProblem {
    user_id: String,
    message: String,
}

#[derive(Template)]
#[template(path = "settings/members.html")]
struct MembersPage {
    layout: crate::render::Layout,
    frame: Frame,
    members: Vec<MemberRow>,
    invitations: Vec<InvitationRow>,
    pass_on: Option<PassOn>,
    roles: &'static [Role],
    email: String,
    role: Role,
    problems: Problems,
    row_problem: Option<RowProblem>,
}

const NOTICES: &[(&str, &str)] = &[
    (
        "invited",
        "Invitation sent. Its link works once, for 72 hours.",
    ),
    (
        "resent",
        "Invitation sent again with a new link; the old one no longer works.",
    ),
    ("revoked", "Invitation revoked: its link no longer works."),
    ("role", "Role changed."),
    ("export", "Exports changed."),
    (
        "removed",
        "Member removed: the project's pages are closed to them from now on.",
    ),
];

/// What the invite form holds, what went wrong with a form, and a link to pass on.
struct Outcome {
    email: String,
    role: Role,
    problems: Problems,
    row_problem: Option<RowProblem>,
    pass_on: Option<PassOn>,
}

impl Outcome {
    fn fresh() -> Self {
        Self {
            email: String::new(),
            role: Role::Member,
            problems: Problems::default(),
            row_problem: None,
            pass_on: None,
        }
    }

    fn row(user: UserId, message: String) -> Self {
        Self {
            row_problem: Some(RowProblem {
                user_id: user.to_string(),
                message,
            }),
            ..Self::fresh()
        }
    }
}

/// The project's members.
async fn members<S: Accounts>(store: &S, owner: &Owner) -> Result<Vec<Member>, Response> {
    store
        .members(owner.project().id)
        .await
        .map_err(|e| owner.failure(e))
}

/// The members page.
async fn members_page<S: Accounts>(
    store: &S,
    owner: &Owner,
    status: StatusCode,
    notice: Option<String>,
    outcome: Outcome,
) -> Answer {
    let members = members(store, owner).await?;
    let viewer = owner.viewer.user.id;
    let members = members
        .into_iter()
        .map(|member| MemberRow {
            user_id: member.user.id.to_string(),
            is_viewer: member.user.id == viewer,
            name: member.user.name,
            email: member.user.email,
            role: member.role,
            disabled: member.user.disabled,
            export: (member.role == Role::Member).then_some(member.can_export),
        })
        .collect();
    let now = Utc::now();
    let invitations = store
        .invitations(owner.project().id)
        .await
        .map_err(|e| owner.failure(e))?
        .into_iter()
        .map(|invitation| InvitationRow {
            id: invitation.id,
            sent: format::relative(&invitation.sent_at, now),
            expires: invitation
                .is_live(now)
                .then(|| format::exact(&invitation.expires_at())),
            email: invitation.email,
            role: invitation.role,
            invited_by: invitation.invited_by,
        })
        .collect();
    let (layout, frame) = owner.frame(Settings::Members, notice);
    Ok(render::page(
        status,
        &MembersPage {
            layout,
            frame,
            members,
            invitations,
            pass_on: outcome.pass_on,
            roles: &[Role::Viewer, Role::Member, Role::Owner],
            email: outcome.email,
            role: outcome.role,
            problems: outcome.problems,
            row_problem: outcome.row_problem,
        },
    ))
}

/// `GET members`.
pub(super) async fn page<S: Accounts>(store: &S, request: &Request, owner: Owner) -> Answer {
    let notice = notice(request, NOTICES);
    members_page(store, &owner, StatusCode::OK, notice, Outcome::fresh()).await
}

/// `POST members`: invites someone by email with a role, and sends them the link (or shows
/// it, when it could not be sent).
pub(super) async fn invite<S: Store>(
    store: &S,
    config: &Config,
    request: &Request,
    (owner, form): (Owner, Form),
) -> Answer {
    let email = form.get("email").trim().to_owned();
    let role = form.get("role").parse::<Role>();
    let mut outcome = Outcome {
        email: email.clone(),
        role: *role.as_ref().unwrap_or(&Role::Member),
        ..Outcome::fresh()
    };
    if role.is_err() {
        outcome.problems.add("role", "Pick a role.");
    }
    let invitation = NewInvitation::new(&email, outcome.role, &owner.viewer.actor());
    if invitation.is_err() {
        outcome
            .problems
            .add("email", "Enter the email of the person to invite.");
    }
    let refuse = |status, outcome| members_page(store, &owner, status, None, outcome);
    let (Ok(invitation), true) = (invitation, outcome.problems.is_empty()) else {
        return refuse(StatusCode::BAD_REQUEST, outcome).await;
    };
    let current = members(store, &owner).await?;
    let key = email_key(&invitation.email);
    if let Some(member) = current.iter().find(|m| email_key(&m.user.email) == key) {
        let message = format!(
            "{} is already a member ({}). Change their role in the list above.",
            member.user.email, member.role
        );
        outcome.problems.add("email", message);
        return refuse(StatusCode::CONFLICT, outcome).await;
    }
    let token = LinkToken::generate();
    let sent = store
        .invite(owner.project().id, &invitation, &token.hash(), Utc::now())
        .await
        .map_err(|e| owner.failure(e))?;
    let invited = ProjectActivity::Invited {
        email: sent.email.clone(),
        role: sent.role,
    };
    owner.record(store, invited).await?;
    tracing::info!(user = %owner.viewer.user.id, role = %sent.role, "invitation made");
    deliver(store, config, request, &owner, &sent, &token, "invited").await
}

/// Sends an invitation's link; `303` with `saved` when it went, else the page with the link
/// to pass on.
async fn deliver<S: Accounts>(
    store: &S,
    config: &Config,
    request: &Request,
    owner: &Owner,
    invitation: &Invitation,
    token: &LinkToken,
    saved: &str,
) -> Answer {
    let url = mail::link(config, request, LinkKind::Invitation, token);
    let message = mail::invitation(
        &invitation.email,
        &owner.project().name,
        invitation.role,
        &owner.viewer.user.name,
        &url,
    );
    let failed = match mail::deliver(config, &message).await {
        mail::Delivery::Sent => return Ok(owner.redirect(Settings::Members, Some(saved))),
        mail::Delivery::NoMailer => false,
        mail::Delivery::Failed => true,
    };
    let outcome = Outcome {
        pass_on: Some(PassOn {
            email: invitation.email.clone(),
            url,
            failed,
        }),
        ..Outcome::fresh()
    };
    members_page(store, owner, StatusCode::CREATED, None, outcome).await
}

/// `POST members/invitations/{id}/resend`: a new link (the old one stops working), sent
/// again.
pub(super) async fn resend<S: Store>(
    store: &S,
    config: &Config,
    request: &Request,
    (owner, _): (Owner, Form),
    id: &str,
) -> Answer {
    let id = id.parse::<i64>().map_err(|_| owner.not_found())?;
    let token = LinkToken::generate();
    let renewed = store
        .renew_invitation(owner.project().id, id, &token.hash(), Utc::now())
        .await;
    let sent = match renewed {
        Ok(sent) => sent,
        Err(StoreError::NotFound(Entity::Invitation)) => return Err(owner.not_found()),
        Err(err) => return Err(owner.failure(err)),
    };
    let invited = ProjectActivity::Invited {
        email: sent.email.clone(),
        role: sent.role,
    };
    owner.record(store, invited).await?;
    deliver(store, config, request, &owner, &sent, &token, "resent").await
}

/// `POST members/invitations/{id}/revoke`.
pub(super) async fn revoke<S: Store>(store: &S, (owner, _): (Owner, Form), id: &str) -> Answer {
    let id = id.parse::<i64>().map_err(|_| owner.not_found())?;
    let revoked = match store.revoke_invitation(owner.project().id, id).await {
        Ok(revoked) => revoked,
        Err(StoreError::NotFound(Entity::Invitation)) => return Err(owner.not_found()),
        Err(err) => return Err(owner.failure(err)),
    };
    let event = ProjectActivity::InvitationRevoked {
        email: revoked.email,
    };
    owner.record(store, event).await?;
    Ok(owner.redirect(Settings::Members, Some("revoked")))
}

/// The member `user` names in the owner's project; `404` when there is none.
async fn member<S: Accounts>(store: &S, owner: &Owner, user: &str) -> Result<Member, Response> {
    let id = user.parse::<i64>().map_err(|_| owner.not_found())?;
    members(store, owner)
        .await?
        .into_iter()
        .find(|member| member.user.id == UserId(id))
        .ok_or_else(|| owner.not_found())
}

/// The answer to a refused change of `member`: the store's last-owner rule in words.
async fn refused<S: Accounts>(
    store: &S,
    owner: &Owner,
    member: &Member,
    err: StoreError,
) -> Answer {
    match err {
        StoreError::Conflict(Conflict::LastOwner) => {
            let message = format!(
                "{} is the project's last owner: nothing was changed. Make another member \
                 an owner first.",
                member.user.name
            );
            let outcome = Outcome::row(member.user.id, message);
            members_page(store, owner, StatusCode::CONFLICT, None, outcome).await
        }
        err => Err(owner.failure(err)),
    }
}

/// `POST members/{userId}`: changes a member's role.
pub(super) async fn change_role<S: Store>(
    store: &S,
    (owner, form): (Owner, Form),
    user: &str,
) -> Answer {
    let member = member(store, &owner, user).await?;
    let Ok(role) = form.get("role").parse::<Role>() else {
        let outcome = Outcome::row(member.user.id, "Pick a role.".to_owned());
        return members_page(store, &owner, StatusCode::BAD_REQUEST, None, outcome).await;
    };
    let id = member.user.id;
    let changed = store
        .add_member(owner.project().id, id, role, Utc::now())
        .await;
    if changed.is_ok() && role != member.role {
        let event = ProjectActivity::RoleSet {
            email: member.user.email.clone(),
            from: Some(member.role),
            to: role,
        };
        owner.record(store, event).await?;
    }
    match changed {
        // Owners who made themselves members can no longer see Settings.
        Ok(()) if id == owner.viewer.user.id && role != Role::Owner => {
            Ok(render::redirect(&owner.links().inbox()))
        }
        Ok(()) => {
            tracing::info!(user = %owner.viewer.user.id, member = %id, %role, "role changed");
            Ok(owner.redirect(Settings::Members, Some("role")))
        }
        Err(err) => refused(store, &owner, &member, err).await,
    }
}

/// `POST members/{userId}/remove`: ends a membership.
pub(super) async fn remove<S: Store>(store: &S, (owner, _): (Owner, Form), user: &str) -> Answer {
    let member = member(store, &owner, user).await?;
    let id = member.user.id;
    let removed = store.remove_member(owner.project().id, id).await;
    if let Ok(true) = removed {
        let event = ProjectActivity::MemberRemoved {
            email: member.user.email.clone(),
        };
        owner.record(store, event).await?;
    }
    match removed {
        Ok(_) if id == owner.viewer.user.id => Ok(render::redirect(&Route::Projects.path())),
        Ok(_) => {
            tracing::info!(user = %owner.viewer.user.id, member = %id, "member removed");
            Ok(owner.redirect(Settings::Members, Some("removed")))
        }
        Err(err) => refused(store, &owner, &member, err).await,
    }
}

/// `POST members/{userId}/export`: lets a member export the project's leads
/// (`allowed=yes`), or no longer.
pub(super) async fn export<S: Store>(
    store: &S,
    (owner, form): (Owner, Form),
    user: &str,
) -> Answer {
    let member = member(store, &owner, user).await?;
    let allowed = form.get("allowed") == "yes";
    let id = member.user.id;
    match store.set_export(owner.project().id, id, allowed).await {
        Ok(()) => {
            let event = ProjectActivity::ExportsAllowed {
                email: member.user.email.clone(),
                allowed,
            };
            owner.record(store, event).await?;
            tracing::info!(user = %owner.viewer.user.id, member = %id, allowed, "exports changed");
            Ok(owner.redirect(Settings::Members, Some("export")))
        }
        Err(err) => Err(owner.failure(err)),
    }
}
