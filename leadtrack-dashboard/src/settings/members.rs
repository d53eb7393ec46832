//! Members: who may sign in to the project and with which role; adding an existing user by
//! email, changing a role, removing a member. The store keeps the last owner from being
//! removed or demoted.

use askama::Template;
use chrono::Utc;
use leadtrack_core::account::Member;
use leadtrack_core::store::{Conflict, Entity};
use leadtrack_core::types::{Role, UserId};
use leadtrack_core::{Accounts, StoreError};
use warp::http::StatusCode;
use warp::reply::Response;

use super::{Answer, Area, Frame, Owner, Problems, notice};
use crate::Request;
use crate::render;
use crate::session::Form;

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
    roles: &'static [Role],
    email: String,
    role: Role,
    problems: Problems,
    row_problem: Option<RowProblem>,
}

const NOTICES: &[(&str, &str)] = &[
    (
        "added",
        "Member added. They see the project when they next load a page.",
    ),
    ("role", "Role changed."),
    ("export", "Exports changed."),
    (
        "removed",
        "Member removed: the project's pages are closed to them from now on.",
    ),
];

/// What the add form holds, and what went wrong with a form.
struct Outcome {
    email: String,
    role: Role,
    problems: Problems,
    row_problem: Option<RowProblem>,
}

impl Outcome {
    fn fresh() -> Self {
        Self {
            email: String::new(),
            role: Role::Member,
            problems: Problems::default(),
            row_problem: None,
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
    let (layout, frame) = owner.frame(Area::Members, notice);
    Ok(render::page(
        status,
        &MembersPage {
            layout,
            frame,
            members,
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

/// `POST members`: adds an existing user, by email, with a role.
pub(super) async fn add<S: Accounts>(store: &S, (owner, form): (Owner, Form)) -> Answer {
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
    if email.is_empty() {
        outcome
            .problems
            .add("email", "Enter the email of the person to add.");
    }
    let refuse = |status, outcome| members_page(store, &owner, status, None, outcome);
    if !outcome.problems.is_empty() {
        return refuse(StatusCode::BAD_REQUEST, outcome).await;
    }
    let user = match store.user_by_email(&email).await {
        Ok(user) => user,
        Err(StoreError::NotFound(Entity::User)) => {
            outcome.problems.add(
                "email",
                "No one has an account with this email. An administrator creates accounts \
                 with `server user create --email EMAIL`; then add them here.",
            );
            return refuse(StatusCode::BAD_REQUEST, outcome).await;
        }
        Err(err) => return Err(owner.failure(err)),
    };
    let current = members(store, &owner).await?;
    if let Some(member) = current.iter().find(|m| m.user.id == user.id) {
        let message = format!(
            "{} is already a member ({}). Change their role in the list above.",
            member.user.email, member.role
        );
        outcome.problems.add("email", message);
        return refuse(StatusCode::CONFLICT, outcome).await;
    }
    let role = outcome.role;
    match store
        .add_member(owner.project().id, user.id, role, Utc::now())
        .await
    {
        Ok(()) => {
            tracing::info!(user = %owner.viewer.user.id, member = %user.id, %role, "member added");
            Ok(owner.redirect("members", Some("added")))
        }
        Err(err) => Err(owner.failure(err)),
    }
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
pub(super) async fn change_role<S: Accounts>(
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
    match store
        .add_member(owner.project().id, id, role, Utc::now())
        .await
    {
        // Owners who made themselves members can no longer see Settings.
        Ok(()) if id == owner.viewer.user.id && role != Role::Owner => Ok(render::redirect(
            &format!("/projects/{}/leads", owner.project().public_id),
        )),
        Ok(()) => {
            tracing::info!(user = %owner.viewer.user.id, member = %id, %role, "role changed");
            Ok(owner.redirect("members", Some("role")))
        }
        Err(err) => refused(store, &owner, &member, err).await,
    }
}

/// `POST members/{userId}/remove`: ends a membership.
pub(super) async fn remove<S: Accounts>(
    store: &S,
    (owner, _): (Owner, Form),
    user: &str,
) -> Answer {
    let member = member(store, &owner, user).await?;
    let id = member.user.id;
    match store.remove_member(owner.project().id, id).await {
        Ok(_) if id == owner.viewer.user.id => Ok(render::redirect("/")),
        Ok(_) => {
            tracing::info!(user = %owner.viewer.user.id, member = %id, "member removed");
            Ok(owner.redirect("members", Some("removed")))
        }
        Err(err) => refused(store, &owner, &member, err).await,
    }
}

/// `POST members/{userId}/export`: lets a member export the project's leads
/// (`allowed=yes`), or no longer.
pub(super) async fn export<S: Accounts>(
    store: &S,
    (owner, form): (Owner, Form),
    user: &str,
) -> Answer {
    let member = member(store, &owner, user).await?;
    let allowed = form.get("allowed") == "yes";
    let id = member.user.id;
    match store.set_export(owner.project().id, id, allowed).await {
        Ok(()) => {
            tracing::info!(user = %owner.viewer.user.id, member = %id, allowed, "exports changed");
            Ok(owner.redirect("members", Some("export")))
        }
        Err(err) => Err(owner.failure(err)),
    }
}
