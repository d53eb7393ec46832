//! Next steps ([`leadtrack_core::next_step`]) in the dashboard: the form that sets one or
//! marks it done (on the lead's page, and from an inbox row with `f`), how a step reads
//! ("due in 3 h", "overdue 2 days"), and the Due page: the steps due today or overdue,
//! everyone's or one's own, soonest first, each with Done.
//!
//! The form's time is the person's wall clock: the script adds their offset from UTC
//! (`offset`, minutes east) for the date they picked; without it the time is UTC, as the
//! dashboard's other times are.

use askama::Template;
use chrono::{DateTime, Duration, NaiveDateTime, Utc};
use leadtrack_core::Store;
use leadtrack_core::account::Membership;
use leadtrack_core::next_step::{DUE_LISTED, NextStep, due_by};
use leadtrack_core::types::{LeadId, LeadIdentifier, Role};
use warp::http::StatusCode;
use warp::reply::Response;

use crate::access::MemberForm;
use crate::rating::{Rated, display_name};
use crate::render::{self, Layout};
use crate::routes::{Leads, Links};
use crate::session::Form;
use crate::viewer::Viewer;
use crate::{Request, access, format};

/// The furthest a person's clock is from UTC, in minutes (UTC+14, UTC−12).
const MAX_OFFSET: i64 = 14 * 60;

/// A step as a page shows it.
pub(crate) struct Shown {
    /// "due in 3 h", "overdue 2 days".
    pub(crate) when: String,
    /// Its time exactly, in UTC.
    pub(crate) exact: String,
    /// Its time for `<time datetime>` and the form's script.
    pub(crate) iso: String,
    /// Its time as the form's field holds it, in UTC (the script shows it in local time).
    pub(crate) field: String,
    /// What to do.
    pub(crate) note: String,
    /// It is due.
    pub(crate) overdue: bool,
}

impl Shown {
    /// `step` at `now`.
    pub(crate) fn of(step: &NextStep, now: DateTime<Utc>) -> Self {
        let overdue = step.is_due(now);
        let when = if overdue {
            match now - step.at {
                late if late < Duration::minutes(1) => "due now".to_owned(),
                late => format!("overdue {}", format::span(late)),
            }
        } else {
            format!("due in {}", format::span(step.at - now))
        };
        Self {
            when,
            exact: format::exact(&step.at),
            iso: format::iso(&step.at),
            field: step.at.format("%Y-%m-%dT%H:%M").to_string(),
            note: step.note.clone(),
            overdue,
        }
    }
}

/// The step a form asks for: `at` (`2026-12-01T09:30`) on a clock `offset` minutes east
/// of UTC (none: UTC) and `note`; else what is wrong, in words.
pub(crate) fn read(form: &Form) -> Result<NextStep, String> {
    let at = form.get("at").trim();
    if at.is_empty() {
        return Err("Pick the day and time of the next step.".to_owned());
    }
    let local = NaiveDateTime::parse_from_str(at, "%Y-%m-%dT%H:%M")
        .or_else(|_| NaiveDateTime::parse_from_str(at, "%Y-%m-%dT%H:%M:%S"))
        .map_err(|_| "The day and time must look like 2026-12-01 09:30.".to_owned())?;
    let offset = match form.get("offset").trim() {
        "" => 0,
        text => text
            .parse::<i64>()
            .ok()
            .filter(|minutes| minutes.abs() <= MAX_OFFSET)
            .ok_or_else(|| "The time zone sent with the form is not one.".to_owned())?,
    };
    let at = local.and_utc() - Duration::minutes(offset);
    NextStep::new(at, form.get("note")).map_err(|problem| format!("Not saved: {problem}."))
}

/// `POST /projects/{projectId}/leads/{leadId}/next-step`: sets the lead's next step, or
/// with `done=1` marks it done; then back (`303`) to where the form was (`from`: the Due
/// page, `due-mine`, the inbox view `back`, else the lead's page).
pub(crate) async fn save<S: Store>(store: &S, member: MemberForm, id: LeadId) -> Response {
    let (viewer, membership, form) = member;
    let step = match form.get("done") {
        "1" => None,
        _ => match read(&form) {
            Ok(step) => Some(step),
            Err(problem) => {
                let status = StatusCode::BAD_REQUEST;
                return render::error(status, Some(&viewer), "Next step not saved", problem);
            }
        },
    };
    let project = &membership.project;
    let saved = store
        .set_next_step(project.id, id, step.as_ref(), &viewer.actor(), Utc::now())
        .await;
    match saved {
        Ok(()) => {}
        Err(leadtrack_core::StoreError::NotFound(_)) => return render::not_found(Some(&viewer)),
        Err(err) => return render::store_failure(err, Some(&viewer)),
    }
    let done = if step.is_some() {
        Rated::Planned
    } else {
        Rated::Followed
    };
    let links = Links::new(&project.public_id);
    render::redirect(&match form.get("from") {
        "due" => format!("{}?done={}", links.leads(Leads::Due), done.as_ref()),
        "due-mine" => format!(
            "{}?mine=yes&done={}",
            links.leads(Leads::Due),
            done.as_ref()
        ),
        "inbox" => format!("{}?{}", links.inbox(), form.get("back")),
        _ => format!("{}?done={}", links.lead(Leads::Lead, &id), done.as_ref()),
    })
}

/// One row of the Due page.
struct Row {
    lead: LeadId,
    name: String,
    assignee: String,
    shown: Shown,
}

#[derive(Template)]
#[template(path = "due.html")]
struct DuePage<'a> {
    layout: Layout,
    links: Links<'a>,
    rows: Vec<Row>,
    mine: bool,
    /// How many are due: everyone's, the viewer's.
    counts: (usize, usize),
    listed: u32,
    can_plan: bool,
    csrf: String,
    notice: Option<String>,
}

/// `GET /projects/{projectId}/leads/due` (`?mine=yes`: the viewer's own).
pub(crate) async fn page<S: Store>(store: &S, request: &Request, public_id: &str) -> Response {
    let (viewer, membership) =
        match access::project_page(store, request, public_id, Role::Viewer).await {
            Ok(found) => found,
            Err(response) => return response,
        };
    let mine = request.param("mine").is_some_and(|value| value == "yes");
    match rows(store, (&viewer, &membership), mine, Utc::now()).await {
        Ok((rows, counts)) => {
            let notice = crate::query_param(&request.query, "done")
                .and_then(|done| done.parse::<Rated>().ok())
                .filter(|done| matches!(done, Rated::Planned | Rated::Followed))
                .map(|done| done.notice(&[]));
            let page = DuePage {
                layout: Layout::for_project("Due", &viewer, &membership, "leads"),
                links: Links::new(&membership.project.public_id),
                rows,
                mine,
                counts,
                listed: DUE_LISTED,
                can_plan: membership.role.allows(Role::Member),
                csrf: viewer.csrf(),
                notice,
            };
            render::page(StatusCode::OK, &page)
        }
        Err(err) => render::store_failure(err, Some(&viewer)),
    }
}

/// The page's rows (the viewer's own, with `mine`), and how many are due: everyone's and
/// the viewer's.
async fn rows<S: Store>(
    store: &S,
    (viewer, membership): (&Viewer, &Membership),
    mine: bool,
    now: DateTime<Utc>,
) -> Result<(Vec<Row>, (usize, usize)), leadtrack_core::StoreError> {
    let project = membership.project.id;
    let by = due_by(now);
    let everyone = store.due_steps(project, by, None).await?;
    let own = store.due_steps(project, by, Some(viewer.user.id)).await?;
    let counts = (everyone.len(), own.len());
    let members = store.members(project).await?;
    let mut rows = Vec::new();
    for due in if mine { own } else { everyone } {
        let found = store
            .find_lead(project, &LeadIdentifier::LeadId(due.lead))
            .await;
        let name = match found {
            Ok(lead) => display_name(&lead),
            // Deleted since the list was read.
            Err(leadtrack_core::StoreError::NotFound(_)) => continue,
            Err(err) => return Err(err),
        };
        let assignee = match due.assignee {
            Some(id) if id == viewer.user.id => "You".to_owned(),
            Some(id) => members
                .iter()
                .find(|member| member.user.id == id)
                .map_or_else(String::new, |member| member.user.name.clone()),
            None => String::new(),
        };
        rows.push(Row {
            lead: due.lead,
            name,
            assignee,
            shown: Shown::of(&due.step, now),
        });
    }
    Ok((rows, counts))
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn form(pairs: &[(&str, &str)]) -> Form {
        Form::of(pairs)
    }

    #[test]
    fn a_time_is_read_on_the_persons_clock() {
        let read_at = |pairs: &[(&str, &str)]| read(&form(pairs)).map(|step| step.at);
        let utc = Utc.with_ymd_and_hms(2026, 12, 1, 9, 30, 0).unwrap();
        assert_eq!(read_at(&[("at", "2026-12-01T09:30")]), Ok(utc));
        // Berlin in winter is an hour east of UTC: 10:30 there is 09:30 UTC.
        assert_eq!(
            read_at(&[("at", "2026-12-01T10:30"), ("offset", "60")]),
            Ok(utc)
        );
        assert_eq!(
            read_at(&[("at", "2026-12-01T01:30:00"), ("offset", "-480")]),
            Ok(utc)
        );
        assert_eq!(
            read_at(&[("at", "")]),
            Err("Pick the day and time of the next step.".to_owned())
        );
        assert_eq!(
            read_at(&[("at", "tomorrow")]),
            Err("The day and time must look like 2026-12-01 09:30.".to_owned())
        );
        assert_eq!(
            read_at(&[("at", "2026-12-01T09:30"), ("offset", "9000")]),
            Err("The time zone sent with the form is not one.".to_owned())
        );
        let long = "x".repeat(201);
        let note = read(&form(&[("at", "2026-12-01T09:30"), ("note", &long)]));
        assert_eq!(
            note,
            Err("Not saved: a next step's note must be at most 200 characters.".to_owned())
        );
    }

    #[test]
    fn a_step_says_how_far_off_it_is() {
        let now = Utc.with_ymd_and_hms(2026, 12, 1, 9, 0, 0).unwrap();
        let when = |minutes: i64| {
            let step = NextStep::new(now + Duration::minutes(minutes), "").unwrap();
            let shown = Shown::of(&step, now);
            (shown.when, shown.overdue)
        };
        assert_eq!(when(90), ("due in 1 h 30 min".to_owned(), false));
        assert_eq!(when(0), ("due now".to_owned(), true));
        assert_eq!(when(-2 * 24 * 60), ("overdue 2 days".to_owned(), true));
        let step = NextStep::new(now, "Call").unwrap();
        assert_eq!(Shown::of(&step, now).field, "2026-12-01T09:00");
    }
}
