//! A lead's comments on its page: the thread, the form that adds one, and its author's edit
//! and delete; the time to its first touch; and the email that tells a member they were
//! mentioned (`@name`).
//!
//! | path under `/projects/{projectId}/leads/{leadId}` | what |
//! |---|---|
//! | `POST comments` | adds a comment (members and owners) |
//! | `POST comments/{id}` | its author changes it |
//! | `POST comments/{id}/delete` | its author deletes it |
//!
//! Each answers `303` to the lead's page, at its comments. A mention's email names the lead
//! (its name, form and first source: nothing more of its personal data), and links to its
//! page, which opens after sign-in; it is sent after the answer, on a task of its own.

use chrono::{DateTime, Utc};
use leadtrack_core::account::{Actor, Member};
use leadtrack_core::activity::{LeadEvent, first_touch};
use leadtrack_core::alert::LeadSummary;
use leadtrack_core::comment::Comment;
use leadtrack_core::lead::StoredLead;
use leadtrack_core::mention::{Mentions, mentions};
use leadtrack_core::store::Entity;
use leadtrack_core::types::{LeadId, LeadIdentifier};
use leadtrack_core::{Store, StoreError};
use warp::http::StatusCode;
use warp::reply::Response;

use crate::access::MemberForm;
use crate::routes::{Leads, Links};
use crate::viewer::Viewer;
use crate::{Config, Request, format, mail, render};

/// A comment as the thread shows it.
pub(crate) struct CommentRow {
    pub(crate) id: i64,
    pub(crate) author: String,
    pub(crate) text: String,
    pub(crate) at: String,
    pub(crate) at_iso: String,
    pub(crate) edited: bool,
    /// The viewer wrote it: they may edit or delete it.
    pub(crate) mine: bool,
}

impl CommentRow {
    /// The rows of `comments`, as `viewer` sees them.
    pub(crate) fn all(comments: &[Comment], viewer: &Viewer) -> Vec<Self> {
        comments
            .iter()
            .map(|comment| Self {
                id: comment.id,
                author: comment.author.to_string(),
                text: comment.text.clone(),
                at: format::exact(&comment.created_at),
                at_iso: format::iso(&comment.created_at),
                edited: comment.edited_at.is_some(),
                mine: comment.is_by(viewer.user.id),
            })
            .collect()
    }
}

/// How long the lead waited for a person, for its page's line of facts: `first touched
/// 12 min after it arrived, by Ada`, or `no one has touched it yet: waiting 3 h`.
pub(crate) fn first_touch_text(
    created_at: DateTime<Utc>,
    events: &[LeadEvent],
    now: DateTime<Utc>,
) -> String {
    match first_touch(events) {
        Some(touch) => {
            let by = touch
                .by
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default();
            let waited = format::span(touch.at - created_at);
            format!("first touched {waited} after it arrived, by {by}")
        }
        None => format!(
            "no one has touched it yet: waiting {}",
            format::span(now - created_at)
        ),
    }
}

/// The lead's page at its comments.
fn back(member: &MemberForm, lead: LeadId) -> Response {
    let project = &member.1.project.public_id;
    let page = Links::new(project).lead(Leads::Lead, &lead);
    render::redirect(&format!("{page}#comments"))
}

/// The answer to a store's refusal of a comment.
fn refused(viewer: &Viewer, err: StoreError) -> Response {
    match err {
        StoreError::Invalid(problem) => render::error(
            StatusCode::BAD_REQUEST,
            Some(viewer),
            "This comment was not saved",
            crate::settings::sentence(&problem),
        ),
        StoreError::NotFound(Entity::Lead | Entity::Comment) => render::not_found(Some(viewer)),
        err => render::store_failure(err, Some(viewer)),
    }
}

/// What the writer is told of `found`'s mentions that name nobody or several members, if
/// any do.
fn unclear(found: &Mentions<'_>) -> Option<String> {
    if found.all_clear() {
        return None;
    }
    let unknown = found
        .unknown
        .iter()
        .map(|written| format!("{written} is nobody in this project"));
    let ambiguous = found.ambiguous.iter().map(|(written, who)| {
        let names: Vec<&str> = who.iter().map(|m| m.user.name.as_str()).collect();
        format!("{written} could be {}", names.join(" or "))
    });
    let said: Vec<String> = unknown.chain(ambiguous).collect();
    Some(format!(
        "{}. Write more of the name, or save the comment as it is: nobody is told for those.",
        said.join("; ")
    ))
}

/// What `@` offers while typing: each member's handle (their name, or their email's part
/// before the `@` when another member has the same name) and name.
pub(crate) fn mentionable(members: &[Member]) -> Vec<(String, String)> {
    let key = |member: &Member| leadtrack_core::matching::fold(member.user.name.trim());
    members
        .iter()
        .filter(|member| !member.user.disabled)
        .map(|member| {
            let shared = members.iter().filter(|m| key(m) == key(member)).count() > 1;
            let local = member.user.email.split('@').next().unwrap_or_default();
            let handle = match shared || member.user.name.trim().is_empty() {
                true => local.to_owned(),
                false => member.user.name.trim().to_owned(),
            };
            (handle, member.user.name.clone())
        })
        .collect()
}

/// The comment a form posts when its writer is to see it again first: its text, and
/// what its mentions lack (a mention that names nobody, or several, unless they chose to
/// save it as it is).
pub(crate) async fn held_back<S: Store>(
    store: &S,
    (viewer, membership, form): &MemberForm,
) -> Result<Option<(String, String)>, Response> {
    if form.get("anyway") == "1" {
        return Ok(None);
    }
    let members = store
        .members(membership.project.id)
        .await
        .map_err(|err| render::store_failure(err, Some(viewer)))?;
    let problem = unclear(&mentions(form.get("text"), &members));
    Ok(problem.map(|problem| (form.get("text").to_owned(), problem)))
}

/// `POST comments`: adds the comment, and tells the members it mentions.
pub(crate) async fn add<S: Store + Clone>(
    store: &S,
    (config, request): (&Config, &Request),
    member: MemberForm,
    lead: LeadId,
) -> Response {
    let (viewer, membership, form) = &member;
    let project = &membership.project;
    let author = viewer.actor();
    let added = store
        .add_comment(project.id, lead, &author, form.get("text"), Utc::now())
        .await;
    let comment = match added {
        Ok(comment) => comment,
        Err(err) => return refused(viewer, err),
    };
    let link = format!(
        "{}{}",
        mail::site(config, request),
        Links::new(&project.public_id).lead(Leads::Lead, &lead)
    );
    let (store, config, project_name) = (store.clone(), config.clone(), project.name.clone());
    let project_id = project.id;
    tokio::spawn(async move {
        let told = tell_mentioned(
            &store,
            &config,
            (project_id, &project_name),
            &comment,
            &link,
        );
        if let Err(err) = told.await {
            tracing::warn!(error = %err, "mentions were not sent");
        }
    });
    back(&member, lead)
}

/// Emails each member `comment` mentions (but its author) that they were.
async fn tell_mentioned<S: Store>(
    store: &S,
    config: &Config,
    (project, project_name): (leadtrack_core::ProjectId, &str),
    comment: &Comment,
    link: &str,
) -> Result<(), StoreError> {
    let members = store.members(project).await?;
    let named: Vec<&Member> = mentions(&comment.text, &members)
        .named
        .into_iter()
        .filter(|member| !comment.is_by(member.user.id) && !member.user.disabled)
        .collect();
    if named.is_empty() {
        return Ok(());
    }
    let lead = store
        .find_lead(project, &LeadIdentifier::LeadId(comment.lead))
        .await?;
    for member in named {
        let message = mention(
            &member.user.email,
            &comment.author,
            (project_name, &lead),
            link,
        );
        mail::deliver(config, &message).await;
    }
    Ok(())
}

/// The email telling `to` that `author` mentioned them on `lead`: its name, form and first
/// source, and the link; not the comment (it may say more than a message should carry).
fn mention(
    to: &str,
    author: &Actor,
    (project, lead): (&str, &StoredLead),
    link: &str,
) -> mail::Message {
    let about = LeadSummary::of(lead, link.to_owned()).line();
    mail::Message {
        to: to.to_owned(),
        subject: format!("{author} mentioned you on a lead in {project}"),
        body: format!(
            "{author} mentioned you in a comment on a lead in {project} ({about}).\n\n\
             Read it and answer here (after signing in):\n\n{link}\n"
        ),
    }
}

/// `POST comments/{id}`: its author changes it.
pub(crate) async fn edit<S: Store>(
    store: &S,
    member: MemberForm,
    (lead, id): (LeadId, i64),
) -> Response {
    let (viewer, membership, form) = &member;
    let edited = store
        .edit_comment(
            membership.project.id,
            (lead, id),
            &viewer.actor(),
            form.get("text"),
            Utc::now(),
        )
        .await;
    match edited {
        Ok(_) => back(&member, lead),
        Err(err) => refused(viewer, err),
    }
}

/// `POST comments/{id}/delete`: its author deletes it.
pub(crate) async fn delete<S: Store>(
    store: &S,
    member: MemberForm,
    (lead, id): (LeadId, i64),
) -> Response {
    let (viewer, membership, _) = &member;
    let deleted = store
        .delete_comment(
            membership.project.id,
            (lead, id),
            &viewer.actor(),
            Utc::now(),
        )
        .await;
    match deleted {
        Ok(()) => back(&member, lead),
        Err(err) => refused(viewer, err),
    }
}
