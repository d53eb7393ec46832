//! The audit log: what people did to the project beyond rating leads (exports, team and
//! integration changes, deleted leads, invitations), who, when, and from which address,
//! newest first, kept a year ([`leadtrack_core::activity::audit_retention`]).

use askama::Template;
use chrono::Utc;
use leadtrack_core::LeadStore;
use leadtrack_core::activity::{ProjectActivity, ProjectEvent};
use leadtrack_core::integration::Platform;
use warp::http::StatusCode;

use super::{Answer, Frame, Owner};
use crate::Request;
use crate::format;
use crate::render::{self, Layout};
use crate::routes::Settings;

/// Events per page.
const PAGE: u32 = 50;

/// An event as the log lists it.
struct Row {
    at: String,
    iso: String,
    by: String,
    what: String,
    address: String,
}

#[derive(Template)]
#[template(path = "settings/audit.html")]
struct AuditPage {
    layout: Layout,
    frame: Frame,
    rows: Vec<Row>,
    /// The address of the next, older page, if there is one.
    older: Option<String>,
    /// Whether this is a later page (offer the newest again).
    paged: bool,
}

/// What happened, in words.
fn describe(activity: &ProjectActivity) -> String {
    match activity {
        ProjectActivity::LeadDeleted { lead_id } => format!("Lead #{lead_id} deleted"),
        ProjectActivity::PersonErased { lead_ids } => {
            let ids: Vec<String> = lead_ids.iter().map(|id| format!("#{id}")).collect();
            match ids.as_slice() {
                [one] => format!("Erased a person's lead {one}"),
                all => format!("Erased a person's {} leads {}", all.len(), all.join(", ")),
            }
        }
        ProjectActivity::Exported { view } => {
            // The view's address, as its filters read: `status open, form contact`.
            let filters: Vec<String> = form_urlencoded::parse(view.as_bytes())
                .map(|(name, value)| format!("{name} {value}"))
                .collect();
            if filters.is_empty() {
                "Exported the inbox as CSV".to_owned()
            } else {
                format!("Exported the inbox as CSV ({})", filters.join(", "))
            }
        }
        ProjectActivity::Invited { email, role } => format!("Invited {email} as {role}"),
        ProjectActivity::InvitationRevoked { email } => {
            format!("Revoked the invitation of {email}")
        }
        ProjectActivity::InvitationAccepted { email, role } => {
            format!("{email} joined as {role}, invited")
        }
        ProjectActivity::RoleSet {
            email,
            from: None,
            to,
        } => format!("Added {email} as {to}"),
        ProjectActivity::RoleSet {
            email,
            from: Some(from),
            to,
        } => format!("Changed the role of {email} from {from} to {to}"),
        ProjectActivity::MemberRemoved { email } => format!("Removed {email}"),
        ProjectActivity::ChatChannelSaved { chat } => {
            format!("Set the {} channel for new leads", chat.title())
        }
        ProjectActivity::ChatChannelRemoved { chat } => {
            format!("Removed the {} channel", chat.title())
        }
        ProjectActivity::RoundRobinSet { members: 0, .. } => "Turned round-robin off".to_owned(),
        ProjectActivity::RoundRobinSet { members, forms } if forms.is_empty() => {
            format!("Set round-robin over {members} members, for every form")
        }
        ProjectActivity::RoundRobinSet { members, forms } => format!(
            "Set round-robin over {members} members, for the forms {}",
            forms.join(", ")
        ),
        ProjectActivity::ExportsAllowed {
            email,
            allowed: true,
        } => format!("Allowed {email} to export"),
        ProjectActivity::ExportsAllowed {
            email,
            allowed: false,
        } => format!("Stopped {email}'s exports"),
        ProjectActivity::IntegrationSaved { integration } => {
            format!("Connected or changed {}", Platform::of(*integration).title)
        }
        ProjectActivity::IntegrationRemoved { integration } => {
            format!("Disconnected {}", Platform::of(*integration).title)
        }
        ProjectActivity::LeadSourceSaved { source } => {
            format!("Set up or changed {}", source.title())
        }
        ProjectActivity::LeadSourceRemoved { source } => format!("Removed {}", source.title()),
        ProjectActivity::InboundHookSaved { name } => {
            format!("Set up or changed the inbound webhook {name}")
        }
        ProjectActivity::InboundHookRemoved { name } => {
            format!("Removed the inbound webhook {name}")
        }
        ProjectActivity::LeadsImported {
            file,
            imported,
            duplicates,
            bad,
        } => format!(
            "Imported {imported} leads from {file} ({duplicates} already there, {bad} bad rows)"
        ),
        ProjectActivity::SpendImported { file, rows, bad } => {
            format!("Imported {rows} rows of ad spend from {file} ({bad} bad rows)")
        }
        ProjectActivity::FxRatesSet { rates } if rates.is_empty() => {
            "Removed the currency rates".to_owned()
        }
        ProjectActivity::FxRatesSet { rates } => format!("Set the currency rates {rates}"),
    }
}

fn row(event: &ProjectEvent) -> Row {
    Row {
        at: format::exact(&event.at),
        iso: format::iso(&event.at),
        by: event
            .by
            .as_ref()
            .map_or_else(|| "leadtrack".to_owned(), ToString::to_string),
        what: describe(&event.activity),
        address: event
            .address
            .clone()
            .unwrap_or_else(|| "command line".to_owned()),
    }
}

/// `GET audit` (`?before=ID`: the events older than that one).
pub(super) async fn page<S: LeadStore>(store: &S, request: &Request, owner: Owner) -> Answer {
    let before = request
        .param("before")
        .and_then(|id| id.parse::<i64>().ok());
    let events = store
        .project_history(owner.project().id, before, PAGE + 1, Utc::now())
        .await
        .map_err(|e| owner.failure(e))?;
    let older = (events.len() > PAGE as usize)
        .then(|| events.get(PAGE as usize - 1))
        .flatten()
        .map(|last| {
            format!(
                "{}?before={}",
                owner.links().settings(Settings::Audit),
                last.id
            )
        });
    let rows = events.iter().take(PAGE as usize).map(row).collect();
    let (layout, frame) = owner.frame(Settings::Audit, None);
    Ok(render::page(
        StatusCode::OK,
        &AuditPage {
            layout,
            frame,
            rows,
            older,
            paged: before.is_some(),
        },
    ))
}
