//! A lead's page: everything it holds, where it came from, the rating form, and its
//! history with every delivery; and rating it, with the same rules as updateLeadStatus.

use askama::Template;
use chrono::Utc;
use leadtrack_core::account::Membership;
use leadtrack_core::activity::{Activity, LeadEvent};
use leadtrack_core::assignment::Assignee;
use leadtrack_core::channel;
use leadtrack_core::job::{FormRating, JobRecord, UndoTarget};
use leadtrack_core::label::ConversionLabel;
use leadtrack_core::lead::{LeadData, StoredLead};
use leadtrack_core::request::StatusUpdate;
use leadtrack_core::store::correction::{CONTACT_FIELDS, ContactCorrection};
use leadtrack_core::store::{Conflict, Entity};
use leadtrack_core::types::{
    Consent, ConsentStatus, ConversionId, DeliveryAction, DeliveryState, JobState, JsonObject,
    LeadId, LeadIdentifier, LeadStatus, Role,
};
use leadtrack_core::webhook::{LeadSync, WebhookKind};
use leadtrack_core::{Store, StoreError};
use serde_json::Value;
use uuid::Uuid;
use warp::http::StatusCode;
use warp::reply::Response;

use crate::comments::{CommentRow, first_touch_text};
use crate::format;
use crate::next_step;
use crate::rating::{
    Held, Rated, RatingChoice, choices, conversion_name, display_name, platform_name,
};
use crate::render::{self, Layout};
use crate::routes::{Leads, Links};
use crate::session::Form;
use crate::spam::SpamCard;
use crate::viewer::Viewer;

/// A `key: value` line of the lead's data.
pub(crate) struct Field {
    pub(crate) name: String,
    pub(crate) value: String,
    /// Where the value leads: `mailto:` an email, `tel:` a phone.
    pub(crate) href: Option<String>,
}

/// One touch of the channel path, as the timeline shows it.
pub(crate) struct TouchRow {
    pub(crate) label: String,
    pub(crate) campaign: Option<String>,
    pub(crate) at: Option<String>,
    pub(crate) landing_page: Option<String>,
}

/// A line of the history.
pub(crate) struct EventRow {
    pub(crate) at: String,
    pub(crate) at_iso: String,
    pub(crate) by: Option<String>,
    pub(crate) text: String,
}

/// A delivery of a job, as the history shows it.
pub(crate) struct DeliveryRow {
    pub(crate) platform: &'static str,
    /// "restatement" or "retraction"; `None` for the conversion itself.
    pub(crate) action: Option<&'static str>,
    pub(crate) state: String,
    pub(crate) attempts: usize,
    pub(crate) last: Option<String>,
    /// How many conversions the last attempt's request carried, when it carried more
    /// than this one.
    pub(crate) batch: Option<u32>,
    pub(crate) next: Option<String>,
}

/// How a lead stands in a CRM, as its page shows it.
pub(crate) struct CrmRow {
    pub(crate) name: &'static str,
    /// What the CRM calls the lead: its contact (person), lead and deal.
    pub(crate) ids: String,
    pub(crate) state: String,
    pub(crate) last: Option<String>,
}

impl CrmRow {
    fn of(sync: &LeadSync, now: chrono::DateTime<Utc>) -> Self {
        let contact = match sync.kind {
            WebhookKind::Pipedrive => "person",
            _ => "contact",
        };
        let record = &sync.record;
        let ids: Vec<String> = [
            (contact, &record.contact_id),
            ("lead", &record.crm_lead_id),
            ("deal", &record.deal_id),
        ]
        .into_iter()
        .filter_map(|(what, id)| Some(format!("{what} {}", id.as_ref()?)))
        .collect();
        let state = match (sync.pending, sync.failed) {
            (0, 0) => "synced".to_owned(),
            (0, failed) => format!("{failed} failed"),
            (pending, _) => format!("{pending} waiting"),
        };
        let last = sync.last_attempt.as_ref().map(|attempt| {
            let answer = attempt
                .error
                .clone()
                .or_else(|| attempt.http_status.map(|s| format!("HTTP {s}")))
                .unwrap_or_else(|| attempt.outcome.to_string());
            format!("{answer}, {}", format::relative(&attempt.at, now))
        });
        Self {
            name: sync.kind.crm().unwrap_or_default(),
            ids: if ids.is_empty() {
                "—".to_owned()
            } else {
                ids.join(" · ")
            },
            state,
            last,
        }
    }
}

/// A conversion job, as the history shows it.
pub(crate) struct JobRow {
    /// Whether an owner may send its failed deliveries again (the lead's newest job,
    /// ended, with a delivery failed for good).
    pub(crate) retryable: bool,
    pub(crate) what: String,
    /// The note typed with the rating.
    pub(crate) note: Option<String>,
    pub(crate) state: String,
    pub(crate) rated_by: Option<String>,
    pub(crate) at: String,
    pub(crate) deliveries: Vec<DeliveryRow>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn data_reads_as_lines_for_people() {
        assert_eq!(humanize("companyName"), "Company name");
        assert_eq!(humanize("email"), "email");
        assert_eq!(humanize("utm_source"), "utm_source");
        let object: JsonObject = serde_json::from_value(json!({
            "formName": "Contact",
            "message": "Hi",
            "formFields": {"budget": "2000", "empty": ""},
            "wp": [{"field_1": "a"}, {"field_2": 2}]
        }))
        .unwrap();
        let lines: Vec<(String, String)> = fields(&object, &["formName"])
            .into_iter()
            .map(|f| (f.name, f.value))
            .collect();
        assert_eq!(
            lines,
            [
                ("message".to_owned(), "Hi".to_owned()),
                ("budget".to_owned(), "2000".to_owned()),
                ("field_1".to_owned(), "a".to_owned()),
                ("field_2".to_owned(), "2".to_owned()),
            ]
        );
    }
}

#[derive(Template)]
#[template(path = "lead.html")]
struct LeadPage {
    layout: Layout,
    /// Who it is assigned to: the name, or empty for nobody.
    assignee: String,
    /// It is assigned to the viewer.
    mine: bool,
    /// Whom it can be assigned to: `(user id, name, whether it is theirs)`.
    takers: Vec<(String, String, bool)>,
    /// The team's thread about the lead.
    comments: Vec<CommentRow>,
    /// The comment form's text, sent back unsaved, and why.
    comment_draft: Option<(String, String)>,
    /// The contact correction's fields: `(userData name, label, value)`.
    contact_form: Vec<(&'static str, String, String)>,
    /// Its problem, when it was sent back.
    contact_problem: Option<String>,
    /// Who may be mentioned, as `@` suggests them while typing: `(handle, name)`.
    mentionable: Vec<(String, String)>,
    /// How long it waited for a person's first touch.
    first_touch: String,
    /// Its next step.
    next_step: Option<next_step::Shown>,
    /// The viewer may rate the lead and sort out spam (not a viewer).
    can_rate: bool,
    project_id: String,
    lead_id: LeadId,
    heading: String,
    status: LeadStatus,
    conversion: Option<String>,
    price: Option<String>,
    note: Option<String>,
    created_exact: String,
    created_iso: String,
    contact: Vec<Field>,
    form_name: Option<String>,
    form_fields: Vec<Field>,
    attribution: Vec<Field>,
    /// Google's consent signals: the lead's, else the project's default (marked so).
    consent: Vec<Field>,
    touches: Vec<TouchRow>,
    choices: Vec<RatingChoice>,
    selected: String,
    price_input: String,
    note_input: String,
    currency: String,
    problem: Option<String>,
    notice: Option<String>,
    /// The rating waiting out its undo window, if one is.
    held: Option<Held>,
    /// The rating form's one-time token.
    form_token: String,
    events: Vec<EventRow>,
    jobs: Vec<JobRow>,
    /// How the lead stands in each CRM the project syncs to.
    crm: Vec<CrmRow>,
    /// Spam, and the same person's other leads.
    spam: SpamCard,
    /// Whether the viewer owns the project (and may delete the lead).
    owner: bool,
    /// `Erased on DATE by NAME`, when the lead's person was erased.
    erased: Option<String>,
    csrf: String,
}

/// What the rating form holds when the page is shown again.
#[derive(Default)]
pub(crate) struct Rating {
    pub(crate) selected: String,
    pub(crate) price: String,
    pub(crate) note: String,
    pub(crate) problem: Option<String>,
    /// How the last form went, as the page's `?done=` names it.
    pub(crate) done: Option<Rated>,
    /// A comment sent back unsaved: its text, and what its mentions lack.
    pub(crate) comment: Option<(String, String)>,
    /// A contact correction sent back unsaved: what was typed, and its problem.
    pub(crate) contact: Option<(ContactCorrection, String)>,
}

/// Each consent signal the lead gives, or its project gives by default, for people.
fn consent_fields(given: Consent, default: Consent) -> Vec<Field> {
    let word = |status| match status {
        ConsentStatus::Granted => "Granted",
        ConsentStatus::Denied => "Denied",
    };
    [
        ("Ad user data", given.ad_user_data, default.ad_user_data),
        (
            "Ad personalization",
            given.ad_personalization,
            default.ad_personalization,
        ),
    ]
    .into_iter()
    .filter_map(|(name, given, default)| {
        let value = match (given, default) {
            (Some(status), _) => word(status).to_owned(),
            (None, Some(status)) => format!("{} (project default)", word(status)),
            (None, None) => return None,
        };
        Some(Field {
            name: name.to_owned(),
            value,
            href: None,
        })
    })
    .collect()
}

/// A JSON value as one line of text.
fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A property name for people: `companyName` reads `Company name`; other names stay.
fn humanize(name: &str) -> String {
    if !name.chars().any(|c| c.is_ascii_uppercase()) || name.contains(['_', '-', ' ']) {
        return name.to_owned();
    }
    let mut words = String::new();
    for (i, c) in name.chars().enumerate() {
        if i == 0 {
            words.extend(c.to_uppercase());
        } else if c.is_ascii_uppercase() {
            words.push(' ');
            words.extend(c.to_lowercase());
        } else {
            words.push(c);
        }
    }
    words
}

/// The object's properties as lines, nested objects (`formFields`) opened one level, the
/// WordPress plugin's list of one-key objects too.
fn fields(object: &JsonObject, skip: &[&str]) -> Vec<Field> {
    let mut lines = Vec::new();
    for (name, value) in object
        .iter()
        .filter(|(name, _)| !skip.contains(&name.as_str()))
    {
        let nested: Vec<(&String, &Value)> = match value {
            Value::Object(inner) => inner.iter().collect(),
            Value::Array(items) if items.iter().all(Value::is_object) => items
                .iter()
                .filter_map(Value::as_object)
                .flat_map(|inner| inner.iter())
                .collect(),
            _ => Vec::new(),
        };
        if nested.is_empty() {
            lines.push((humanize(name), text(value)));
        } else {
            lines.extend(
                nested
                    .into_iter()
                    .map(|(inner, value)| (humanize(inner), text(value))),
            );
        }
    }
    lines
        .into_iter()
        .filter(|(_, value)| !value.is_empty())
        .map(|(name, value)| Field {
            name,
            value,
            href: None,
        })
        .collect()
}

/// The lead's contact details as lines, its email and phone as links to write or call.
fn contact(user: &JsonObject) -> Vec<Field> {
    let mut lines = fields(user, &[]);
    for line in &mut lines {
        line.href = match line.name.as_str() {
            "email" => Some(format!("mailto:{}", line.value.trim())),
            "phone" => Some(format!(
                "tel:{}",
                line.value
                    .chars()
                    .filter(|c| c.is_ascii_digit() || *c == '+')
                    .collect::<String>()
            )),
            _ => None,
        };
    }
    lines
}

/// Whether the history `events` has a `note` of `rated`'s job.
fn events_note(events: &[LeadEvent], rated: &LeadEvent) -> bool {
    let Activity::Rated { job_id, .. } = rated.activity else {
        return false;
    };
    events
        .iter()
        .any(|event| matches!(event.activity, Activity::Note { job_id: of, .. } if of == job_id))
}

fn event_text(
    event: &LeadEvent,
    events: &[LeadEvent],
    (labels, currency): (&[ConversionLabel], &str),
) -> String {
    match &event.activity {
        Activity::Created => "Lead created".to_owned(),
        Activity::Erased => "Erased at the person's request: what stays names nobody".to_owned(),
        Activity::Merged => "Another submission of the same form was merged in".to_owned(),
        Activity::ContactCorrected { fields } => format!("Corrected the {}", and_list(fields)),
        Activity::NextStep { due_at, note } if note.is_empty() => {
            format!("Set the next step for {}", format::exact(due_at))
        }
        Activity::NextStep { due_at, note } => {
            format!("Set the next step for {}: “{note}”", format::exact(due_at))
        }
        Activity::NextStepDone => "Marked the next step done".to_owned(),
        Activity::Rated {
            conversion_id,
            label,
            price,
            note,
            ..
        } => {
            let name = label
                .clone()
                .unwrap_or_else(|| conversion_name(*conversion_id, labels));
            let mut text = format!("Rated {name}");
            if let Some(price) = price {
                text.push_str(&format!(", {} {currency}", format::money(*price)));
            }
            // A rating from before `note` events carries its note itself.
            let has_own_note = events_note(events, event);
            if let (Some(note), false) = (note, has_own_note) {
                text.push_str(&format!(": “{note}”"));
            }
            text
        }
        Activity::Note { note, .. } => format!("Note with the rating: “{note}”"),
        Activity::Undone { .. } => "Rating undone before anything was sent".to_owned(),
        Activity::Retried { .. } => "Failed deliveries queued again".to_owned(),
        Activity::Spam { reason } => format!("Held as spam: {reason}"),
        Activity::NotSpam => "Taken out of spam".to_owned(),
        Activity::Commented { .. } => "Commented".to_owned(),
        Activity::CommentEdited { .. } => "Edited a comment".to_owned(),
        Activity::CommentDeleted { .. } => "Deleted a comment".to_owned(),
        Activity::Assigned { assignee } => match (assignee, &event.by) {
            (Some(assignee), None) => format!("Assigned to {} in turn", assignee.name),
            (Some(assignee), _) => format!("Assigned to {}", assignee.name),
            (None, _) => "Unassigned".to_owned(),
        },
        Activity::Reopened { note, .. } => match note {
            Some(note) => format!("Reset to open: “{note}”"),
            None => "Reset to open".to_owned(),
        },
        Activity::Delivery {
            integration,
            outcome,
            http_status,
            error,
            ..
        } => {
            let mut text = format!("{}: {outcome}", platform_name(*integration));
            if let Some(status) = http_status {
                text.push_str(&format!(" (HTTP {status})"));
            }
            if let Some(error) = error {
                text.push_str(&format!(", {error}"));
            }
            text
        }
    }
}

/// A job as the Conversions list shows it: its label with the price and the note typed
/// with the rating (from the lead's `events`), who rated it, when, and each platform.
fn job_row(
    record: &JobRecord,
    (labels, events, currency): (&[ConversionLabel], &[LeadEvent], &str),
) -> JobRow {
    let job = &record.job;
    let note = events.iter().find_map(|event| match &event.activity {
        Activity::Rated { job_id, note, .. } if *job_id == job.id => note.clone(),
        _ => None,
    });
    let mut what = conversion_name(job.conversion_id, labels);
    if let Some(price) = job.price {
        what.push_str(&format!(", {} {currency}", format::money(price)));
    }
    JobRow {
        retryable: job.state == JobState::Done
            && record
                .deliveries
                .iter()
                .any(|(delivery, _)| delivery.state == DeliveryState::Failed),
        what,
        note,
        state: job.state.to_string(),
        rated_by: job.rated_by.as_ref().map(ToString::to_string),
        at: format::exact(&job.created_at),
        deliveries: record
            .deliveries
            .iter()
            .map(|(delivery, attempts)| DeliveryRow {
                platform: platform_name(delivery.integration),
                action: match delivery.action {
                    DeliveryAction::Send => None,
                    DeliveryAction::Restate => Some("restatement"),
                    DeliveryAction::Retract => Some("retraction"),
                },
                state: delivery.state.to_string(),
                attempts: attempts.len(),
                last: delivery.detail.clone().or_else(|| {
                    attempts
                        .last()
                        .and_then(|a| a.http_status.map(|s| format!("HTTP {s}")))
                }),
                batch: attempts
                    .last()
                    .and_then(|a| a.batch)
                    .map(|batch| batch.size)
                    .filter(|&size| size > 1),
                next: delivery.next_attempt_at.as_ref().map(format::exact),
            })
            .collect(),
    }
}

/// The people the lead page offers to assign the lead to, `(user id, name, theirs)`: those
/// who may take leads, and its assignee if they no longer may (so the page says the truth).
fn assign_options(takers: &[Assignee], assignee: Option<&Assignee>) -> Vec<(String, String, bool)> {
    let mut people: Vec<&Assignee> = takers.iter().collect();
    if let Some(assignee) = assignee.filter(|a| !takers.iter().any(|t| t.id == a.id)) {
        people.push(assignee);
    }
    people
        .into_iter()
        .map(|person| {
            let theirs = assignee.is_some_and(|a| a.id == person.id);
            (person.id.0.to_string(), person.name.clone(), theirs)
        })
        .collect()
}

/// `items` as people list them: "a", "a and b", "a, b and c".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The contact form's fields: `(userData name, label, value)`, as stored or as typed.
fn contact_form(
    data: &leadtrack_core::lead::LeadData,
    typed: Option<&ContactCorrection>,
) -> Vec<(&'static str, String, String)> {
    CONTACT_FIELDS
        .iter()
        .enumerate()
        .map(|(at, (field, name))| {
            let value = match typed {
                Some(typed) => typed.value(at).to_owned(),
                None => data.user(field).unwrap_or_default().to_owned(),
            };
            let mut label = name.to_string();
            label[..1].make_ascii_uppercase();
            (*field, label, value)
        })
        .collect()
}

/// The lead's page with the rating form as `rating` says.
pub(crate) async fn page<S: Store>(
    store: &S,
    viewer: &Viewer,
    membership: &Membership,
    lead_id: LeadId,
    status: StatusCode,
    rating: Rating,
) -> Response {
    let project = &membership.project;
    let freed = rating.done == Some(Rated::Freed);
    let found = async {
        let lead = store
            .find_lead(project.id, &LeadIdentifier::LeadId(lead_id))
            .await?;
        let labels = store.labels(project.id).await?;
        let integrations = store.integrations(project.id).await?;
        let events = store.lead_activity(project.id, lead_id).await?;
        let jobs = store.lead_jobs(project.id, lead_id).await?;
        let syncs = store.lead_syncs(project.id, lead_id).await?;
        let comments = store.comments(project.id, lead_id).await?;
        let takers = crate::assignees::takers(store, project.id).await?;
        let members = store.members(project.id).await?;
        let step = store.next_steps(project.id, &[lead_id]).await?.pop();
        let standing = |other: &StoredLead| standing(other, &labels);
        let spam = SpamCard::of(store, membership, (&lead, freed), standing).await?;
        let team = (events, comments, takers, members, step);
        Ok::<_, StoreError>((lead, labels, integrations, team, (jobs, syncs), spam))
    };
    let (lead, labels, integrations, team, (jobs, syncs), spam) = match found.await {
        Ok(found) => found,
        Err(StoreError::NotFound(Entity::Lead)) => return render::not_found(Some(viewer)),
        Err(err) => return render::store_failure(err, Some(viewer)),
    };
    let (events, comments, takers, members, step) = team;
    let data = &lead.data;
    let currency = project.currency.clone();
    let now = Utc::now();
    let held = jobs.first().and_then(|record| {
        Held::of(
            record,
            conversion_name(record.job.conversion_id, &labels),
            now,
        )
    });
    let notice = rating.done.map(|done| done.notice(&jobs));
    let (assignee, mine) = crate::assignees::shown(lead.assignee.as_ref(), viewer.user.id);
    let page = LeadPage {
        layout: Layout::for_project(display_name(&lead), viewer, membership, "leads"),
        assignee,
        mine,
        takers: assign_options(&takers, lead.assignee.as_ref()),
        comments: CommentRow::all(&comments, viewer),
        comment_draft: rating.comment,
        contact_form: contact_form(data, rating.contact.as_ref().map(|(typed, _)| typed)),
        contact_problem: rating.contact.map(|(_, problem)| problem),
        mentionable: crate::comments::mentionable(&members),
        first_touch: first_touch_text(lead.created_at, &events, now),
        next_step: step.map(|(_, step)| next_step::Shown::of(&step, now)),
        project_id: project.public_id.clone(),
        lead_id,
        heading: display_name(&lead),
        status: lead.status,
        conversion: lead.conversion_id.map(|id| conversion_name(id, &labels)),
        price: lead
            .price
            .map(|cents| format!("{} {currency}", format::money(cents))),
        note: lead.note.clone(),
        created_exact: format::exact(&lead.created_at),
        created_iso: format::iso(&lead.created_at),
        contact: contact(&data.user_data),
        form_name: data.form_name().map(str::to_owned),
        form_fields: fields(&data.form_data, &["formName", "uniqueEventId"]),
        attribution: fields(&data.attribution_data, &[]),
        consent: consent_fields(data.consent, project.default_consent),
        touches: touch_rows(data),
        choices: choices(&lead, &labels, &integrations, &project.lost_mapping),
        // A rated lead's form starts at its rating and price; a form sent back with a
        // problem keeps what was typed.
        selected: match rating.selected.is_empty() && rating.problem.is_none() {
            true => lead
                .conversion_id
                .map(|id| id.to_string())
                .unwrap_or_default(),
            false => rating.selected,
        },
        price_input: match rating.price.is_empty() && rating.problem.is_none() {
            true => lead.price.map(format::money).unwrap_or_default(),
            false => rating.price,
        },
        note_input: rating.note,
        currency: currency.clone(),
        problem: rating.problem,
        notice,
        held,
        form_token: Uuid::new_v4().to_string(),
        events: event_rows(&events, (&labels, &currency)),
        jobs: job_rows(&jobs, (&labels, &events, &currency), membership.role),
        crm: syncs.iter().map(|sync| CrmRow::of(sync, now)).collect(),
        spam,
        owner: membership.role == Role::Owner,
        erased: erased_line(&events),
        can_rate: membership.role.allows(Role::Member),
        csrf: viewer.csrf(),
    };
    render::page(status, &page)
}

/// The lead's touches (first and last), as the page lists them.
fn touch_rows(data: &LeadData) -> Vec<TouchRow> {
    channel::touches(data)
        .into_iter()
        .map(|touch| TouchRow {
            label: touch.label(),
            campaign: touch.campaign.clone(),
            at: touch.at.as_ref().map(format::exact),
            landing_page: touch.landing_page.clone(),
        })
        .collect()
}

/// The lead's history, newest first, its ratings named by `labels` in `currency`.
fn event_rows(
    events: &[LeadEvent],
    (labels, currency): (&[ConversionLabel], &str),
) -> Vec<EventRow> {
    events
        .iter()
        .rev()
        .map(|event| EventRow {
            at: format::exact(&event.at),
            at_iso: format::iso(&event.at),
            by: event.by.as_ref().map(ToString::to_string),
            text: event_text(event, events, (labels, currency)),
        })
        .collect()
}

/// The lead's deliveries, newest first; only the newest may be retried, by an owner.
fn job_rows(
    jobs: &[JobRecord],
    named: (&[ConversionLabel], &[LeadEvent], &str),
    role: Role,
) -> Vec<JobRow> {
    jobs.iter()
        .enumerate()
        .map(|(i, record)| {
            let mut row = job_row(record, named);
            row.retryable &= i == 0 && role == Role::Owner;
            row
        })
        .collect()
}

/// `Erased on DATE by NAME` of a lead whose history says its person was erased.
fn erased_line(events: &[LeadEvent]) -> Option<String> {
    let erased = events
        .iter()
        .find(|event| event.activity == Activity::Erased)?;
    let by = erased
        .by
        .as_ref()
        .map_or_else(|| "the service".to_owned(), ToString::to_string);
    Some(format!(
        "Erased on {} by {by}, at the person's request. What stays names nobody.",
        erased.at.format("%-d %b %Y")
    ))
}

/// Where a lead stands, as the same person's other leads are listed: its status, and its
/// rating when it has one.
fn standing(lead: &StoredLead, labels: &[ConversionLabel]) -> String {
    match lead.conversion_id {
        Some(id) => format!("{} · {}", lead.status, conversion_name(id, labels)),
        None => lead.status.to_string(),
    }
}

/// Undoes the lead's rating if it has not left yet.
pub(crate) async fn undo<S: Store>(
    store: &S,
    viewer: &Viewer,
    membership: &Membership,
    lead_id: LeadId,
) -> Result<Rated, StoreError> {
    let target = UndoTarget::Lead(lead_id);
    let undone = store
        .undo(membership.project.id, target, &viewer.actor(), Utc::now())
        .await?;
    Ok(if undone.is_empty() {
        Rated::Late
    } else {
        Rated::Undone
    })
}

/// Applies a rating form to the lead: the same rules as updateLeadStatus, by the viewer.
/// `Err` with the problem to show at the form, and its status.
pub(crate) async fn rate<S: Store>(
    store: &S,
    viewer: &Viewer,
    membership: &Membership,
    lead_id: LeadId,
    form: &Form,
) -> Result<Rated, (StatusCode, String)> {
    let token = form.get("form").parse().unwrap_or_else(|_| Uuid::new_v4());
    rate_as(store, viewer, membership, lead_id, form, token).await
}

/// [`rate`], through the form with one-time token `token`.
pub(crate) async fn rate_as<S: Store>(
    store: &S,
    viewer: &Viewer,
    membership: &Membership,
    lead_id: LeadId,
    form: &Form,
    token: Uuid,
) -> Result<Rated, (StatusCode, String)> {
    let update = update_of(lead_id, form)?;
    apply(store, (viewer, membership), &update, token).await
}

/// The rating a form asks of lead `lead_id`; `Err` with the problem of the form.
pub(crate) fn update_of(
    lead_id: LeadId,
    form: &Form,
) -> Result<StatusUpdate, (StatusCode, String)> {
    let conversion_id: ConversionId = form.get("conversionId").trim().parse().map_err(|_| {
        (
            StatusCode::BAD_REQUEST,
            "Pick a rating: a label, Lost or Open.".to_owned(),
        )
    })?;
    let price_text = form.get("price").trim();
    let price = if price_text.is_empty() {
        None
    } else {
        Some(format::parse_price(price_text).ok_or_else(|| {
            (
                StatusCode::BAD_REQUEST,
                "The price must be an amount like 1500 or 1,500.50.".to_owned(),
            )
        })?)
    };
    let note = form.get("note").trim();
    Ok(StatusUpdate {
        identifier: LeadIdentifier::LeadId(lead_id),
        conversion_id,
        price,
        note: (!note.is_empty()).then(|| Some(note.to_owned())),
    })
}

/// Applies `update` by the viewer, through a form with one-time token `token` (its
/// rating waits out the project's undo window).
pub(crate) async fn apply<S: Store>(
    store: &S,
    (viewer, membership): (&Viewer, &Membership),
    update: &StatusUpdate,
    token: Uuid,
) -> Result<Rated, (StatusCode, String)> {
    let rated = store
        .update_status_from(
            membership.project.id,
            update,
            &viewer.actor(),
            Utc::now(),
            Some(FormRating {
                token,
                hold: chrono::Duration::seconds(i64::from(membership.project.undo_window_seconds)),
            }),
        )
        .await;
    if rated.as_ref().is_ok_and(|change| change.job.is_some()) {
        leadtrack_http::metrics::rating_queued(&membership.project.public_id);
    }
    match rated {
        Ok(change) if change.job.is_none() => Ok(Rated::Reset),
        Ok(change) if change.warnings.is_empty() => Ok(Rated::Queued),
        Ok(_) => Ok(Rated::Partly),
        Err(StoreError::Conflict(Conflict::AlreadySaved { .. })) => Ok(Rated::Already),
        Err(StoreError::Conflict(Conflict::JobPending { .. })) => Err((
            StatusCode::CONFLICT,
            "This lead's last rating is still being sent. Rate it again once its deliveries \
             have ended, or reset it to Open first if they have not started."
                .to_owned(),
        )),
        Err(StoreError::NotFound(Entity::Label)) => Err((
            StatusCode::BAD_REQUEST,
            "That label no longer exists. Reload the page.".to_owned(),
        )),
        Err(StoreError::NotFound(Entity::Lead)) => Err((StatusCode::NOT_FOUND, String::new())),
        Err(err) => {
            tracing::error!(error = %err, "rating a lead failed");
            Err((
                StatusCode::INTERNAL_SERVER_ERROR,
                "Something went wrong on our side; nothing was changed. Try again.".to_owned(),
            ))
        }
    }
}
