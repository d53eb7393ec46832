//! Installing the capture script on a website: the snippet for this server, short
//! WordPress and Google Tag Manager steps, and a test lead to see one arrive.

use askama::Template;
use chrono::Utc;
use leadtrack_core::LeadStore;
use leadtrack_core::request::{CreateRoute, NewLead};

use super::{Answer, Frame, Owner};
use crate::render::{self, Layout};
use crate::routes::{Leads, Settings};
use crate::session::{self, Form};
use crate::{Config, Request};
use warp::http::StatusCode;
use warp::reply::Response;

/// The test lead: created through the contract's own parser, recognisable by its form name
/// and its email on a domain reserved for examples. It has no click ids, so rating it sends
/// nothing to Google.
const TEST_LEAD: &[u8] = br#"{
    "formData": {
        "formName": "leadtrack test lead",
        "formMessage": "Sent from Settings, Install, to check that leads arrive."
    },
    "userData": {"firstName": "Test", "lastName": "Lead", "email": "test-lead@leadtrack.example"}
}"#;

#[derive(Template)]
#[template(path = "settings/install.html")]
struct InstallPage {
    layout: Layout,
    frame: Frame,
    script: String,
    origin: String,
}

/// `GET install`.
pub(super) fn page(config: &Config, request: &Request, owner: Owner) -> Response {
    let origin = session::own_origin(request, config).unwrap_or_default();
    let script = format!(
        r#"<script src="{origin}/leadtrack.js" data-project-id="{}" async></script>"#,
        owner.project().public_id
    );
    let (layout, frame) = owner.frame(Settings::Install, None);
    render::page(
        StatusCode::OK,
        &InstallPage {
            layout,
            frame,
            script,
            origin,
        },
    )
}

/// `POST install/test-lead`: creates a test lead and goes to it.
pub(super) async fn test_lead<S: LeadStore>(store: &S, (owner, _): (Owner, Form)) -> Answer {
    let lead = NewLead::parse(TEST_LEAD, CreateRoute::Server).expect("the test lead is valid");
    let project = owner.project();
    let created = store
        .create_lead(project.id, lead.data, Utc::now())
        .await
        .map_err(|e| owner.failure(e))?;
    tracing::info!(user = %owner.viewer.user.id, lead = %created.lead_id, "test lead created");
    Ok(render::redirect(
        &owner.links().lead(Leads::Lead, &created.lead_id),
    ))
}
