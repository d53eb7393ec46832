//! How new leads are given out: the project's round-robin rule. New leads (of the forms
//! ticked, or of every form) go in turn to the members ticked, skipping those who cannot
//! take leads now (disabled, or viewers); the store takes the turns as leads arrive.

use askama::Template;
use leadtrack_core::Store;
use leadtrack_core::activity::ProjectActivity;
use leadtrack_core::assignment::{Assignee, RoundRobin};
use leadtrack_core::matching::form_key;
use leadtrack_core::store::Listed;
use leadtrack_core::types::UserId;
use warp::http::StatusCode;

use super::{Answer, Frame, Owner, notice, ticked};
use crate::Request;
use crate::assignees::takers;
use crate::render::{self, Layout};
use crate::routes::Settings;
use crate::session::Form;

/// A checkbox of the form: its value, its words, and whether it is ticked.
struct Choice {
    value: String,
    name: String,
    ticked: bool,
}

#[derive(Template)]
#[template(path = "settings/assignment.html")]
struct AssignmentPage {
    layout: Layout,
    frame: Frame,
    /// The rule is on.
    on: bool,
    /// The members who may take leads.
    members: Vec<Choice>,
    /// The project's forms (each case variant once).
    forms: Vec<Choice>,
    problem: Option<String>,
}

const NOTICES: &[(&str, &str)] = &[
    (
        "saved",
        "Round-robin saved: new leads are given out in turn.",
    ),
    ("off", "Round-robin is off: new leads wait unassigned."),
];

/// The page for `rule` (as saved, or as typed), with `problem` at its form.
async fn assignment_page<S: Store>(
    store: &S,
    owner: &Owner,
    (status, notice): (StatusCode, Option<String>),
    rule: Option<&RoundRobin>,
    problem: Option<String>,
) -> Answer {
    let project = owner.project().id;
    let people: Vec<Assignee> = takers(store, project).await.map_err(|e| owner.failure(e))?;
    let known = store
        .listed_values(project, Listed::FormName)
        .await
        .map_err(|e| owner.failure(e))?;
    let in_rule = |user: UserId| rule.is_some_and(|rule| rule.members.contains(&user));
    let members = people
        .into_iter()
        .map(|person| Choice {
            value: person.id.0.to_string(),
            ticked: in_rule(person.id),
            name: person.name,
        })
        .collect();
    let mut forms: Vec<Choice> = Vec::new();
    let chosen = rule.map(|rule| rule.forms.as_slice()).unwrap_or_default();
    for name in &known {
        let key = form_key(name);
        if !forms.iter().any(|form| form.value == key) {
            let ticked = chosen.contains(&key);
            forms.push(Choice {
                value: key,
                name: name.clone(),
                ticked,
            });
        }
    }
    let (layout, frame) = owner.frame(Settings::Assignment, notice);
    let page = AssignmentPage {
        layout,
        frame,
        on: rule.is_some(),
        members,
        forms,
        problem,
    };
    Ok(render::page(status, &page))
}

/// `GET assignment`.
pub(super) async fn page<S: Store>(store: &S, request: &Request, owner: Owner) -> Answer {
    let rule = store
        .round_robin(owner.project().id)
        .await
        .map_err(|e| owner.failure(e))?;
    let notice = notice(request, NOTICES);
    assignment_page(store, &owner, (StatusCode::OK, notice), rule.as_ref(), None).await
}

/// `POST assignment`: turns the rule on with the members and forms ticked (`member`,
/// `form`), or off (`on` unticked); records it in the audit log.
pub(super) async fn save<S: Store>(store: &S, (owner, form): (Owner, Form)) -> Answer {
    let members: Vec<UserId> = form
        .all("member")
        .filter_map(|id| id.parse().ok().map(UserId))
        .collect();
    let rule = RoundRobin::new(form.all("form"), &members);
    let on = ticked(&form, "on");
    if on && rule.members.is_empty() {
        let problem = "Tick the members who take turns, or turn round-robin off.".to_owned();
        let status = (StatusCode::BAD_REQUEST, None);
        return assignment_page(store, &owner, status, Some(&rule), Some(problem)).await;
    }
    let rule = on.then_some(rule);
    let project = owner.project().id;
    store
        .set_round_robin(project, rule.as_ref())
        .await
        .map_err(|e| owner.failure(e))?;
    let activity = ProjectActivity::RoundRobinSet {
        members: rule.as_ref().map_or(0, |rule| rule.members.len()),
        forms: rule
            .as_ref()
            .map(|rule| rule.forms.clone())
            .unwrap_or_default(),
    };
    owner.record(store, activity).await?;
    Ok(owner.redirect(Settings::Assignment, Some(if on { "saved" } else { "off" })))
}
