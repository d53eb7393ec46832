//! The project's own settings: its name, currency, phone region, the websites whose
//! browsers may send leads, how long it keeps leads and spam, and what a rating as `lost`
//! sends. Core's rules check them;
//! each problem is shown at its field.

use askama::Template;
use leadtrack_core::project::ProjectSettings;
use leadtrack_core::types::{Consent, ConsentStatus};
use leadtrack_core::{Admin, LeadStore, StoreError};
use warp::http::StatusCode;

use super::labels::{Connected, MappingForm};
use super::{Answer, Frame, Owner, Problems, notice, sentence};
use crate::Request;
use crate::render::{self, Layout};
use crate::routes::Settings;
use crate::session::Form;

/// The project form, as typed.
struct ProjectForm {
    name: String,
    currency: String,
    region: String,
    /// Origins separated by commas, spaces or lines.
    allowed_origins: String,
    /// Whole seconds, as typed.
    undo_window: String,
    /// Ratings made in the inbox are drafts until sent.
    review_ratings: bool,
    /// Days leads are kept, as typed; blank: for ever.
    retention_days: String,
    /// Days spam is kept, as typed.
    spam_retention_days: String,
    /// `granted`, `denied`, or blank for unknown.
    consent_ad_user_data: String,
    /// `granted`, `denied`, or blank for unknown.
    consent_ad_personalization: String,
    lost: MappingForm,
}

impl ProjectForm {
    fn read(form: &Form) -> Self {
        Self {
            name: form.get("name").to_owned(),
            currency: form.get("currency").to_owned(),
            region: form.get("region").to_owned(),
            allowed_origins: form.get("allowed_origins").to_owned(),
            undo_window: form.get("undo_window").to_owned(),
            review_ratings: form.get("review_ratings") == "on",
            retention_days: form.get("retention_days").to_owned(),
            spam_retention_days: form.get("spam_retention_days").to_owned(),
            consent_ad_user_data: form.get("consent_ad_user_data").to_owned(),
            consent_ad_personalization: form.get("consent_ad_personalization").to_owned(),
            lost: MappingForm::read(form),
        }
    }

    /// The lead retention the form asks for: blank keeps leads for ever; what is not a
    /// whole number of days is 0, which core refuses with its rule.
    fn retention_days(&self) -> Option<u32> {
        let days = self.retention_days.trim();
        (!days.is_empty()).then(|| days.parse().unwrap_or(0))
    }

    /// The spam retention the form asks for, as [`Self::retention_days`] reads it; blank
    /// keeps the project's.
    fn spam_retention_days(&self) -> Option<u32> {
        let days = self.spam_retention_days.trim();
        (!days.is_empty()).then(|| days.parse().unwrap_or(0))
    }

    /// The undo window the form asks for, if it is a whole number of seconds.
    fn undo_window_seconds(&self) -> Option<u32> {
        self.undo_window.trim().parse().ok()
    }

    /// The settings the form asks for; a consent choice that is neither `granted` nor
    /// `denied` (only a forged form sends one) is unknown, and an undo window that is not
    /// a number keeps the project's.
    fn settings(&self) -> ProjectSettings {
        let signal = |choice: &str| choice.parse::<ConsentStatus>().ok();
        let region = self.region.trim();
        ProjectSettings {
            name: Some(self.name.clone()),
            currency: Some(self.currency.trim().to_owned()),
            region: Some((!region.is_empty()).then(|| region.to_owned())),
            lost_mapping: Some(self.lost.mapping()),
            allowed_origins: Some(
                self.allowed_origins
                    .split(|c: char| c == ',' || c.is_whitespace())
                    .filter(|origin| !origin.is_empty())
                    .map(str::to_owned)
                    .collect(),
            ),
            default_consent: Some(Consent {
                ad_user_data: signal(&self.consent_ad_user_data),
                ad_personalization: signal(&self.consent_ad_personalization),
            }),
            undo_window_seconds: self.undo_window_seconds(),
            spam_rules: None,
            review_ratings: Some(self.review_ratings),
            retention_days: Some(self.retention_days()),
            spam_retention_days: self.spam_retention_days(),
        }
    }
}

/// A consent signal as the form's choice.
fn choice(signal: Option<ConsentStatus>) -> String {
    signal.map(|s| s.to_string()).unwrap_or_default()
}

/// The choices of a consent signal.
const CONSENT_CHOICES: &[(&str, &str)] = &[
    ("", "Not known (Google decides)"),
    ("granted", "Granted"),
    ("denied", "Denied"),
];

#[derive(Template)]
#[template(path = "settings/project.html")]
struct ProjectPage {
    layout: Layout,
    frame: Frame,
    public_id: String,
    active: bool,
    connected: Connected,
    form: ProjectForm,
    problems: Problems,
    /// What the retention rule's last run did, in words.
    retention_run: String,
}

const NOTICES: &[(&str, &str)] = &[("saved", "Project settings saved.")];

/// The project page, with its form as given.
async fn project_page<S: Admin + LeadStore>(
    store: &S,
    owner: &Owner,
    status: StatusCode,
    notice: Option<String>,
    form: ProjectForm,
    problems: Problems,
) -> Answer {
    let project = owner.project();
    let integrations = store
        .integrations(project.id)
        .await
        .map_err(|e| owner.failure(e))?;
    let (layout, frame) = owner.frame(Settings::Project, notice);
    Ok(render::page(
        status,
        &ProjectPage {
            layout,
            frame,
            public_id: project.public_id.clone(),
            active: project.active,
            connected: Connected::of(store, owner, &integrations).await?,
            form,
            problems,
            retention_run: match project.retention.last_run {
                Some((at, taken)) => format!(
                    "The rule last ran {}, and erased or deleted {taken} {}.",
                    crate::format::exact(&at),
                    if taken == 1 { "lead" } else { "leads" }
                ),
                None => "The rule has not run yet: the worker runs it once a day.".to_owned(),
            },
        },
    ))
}

/// `GET project`.
pub(super) async fn page<S: Admin + LeadStore>(
    store: &S,
    request: &Request,
    owner: Owner,
) -> Answer {
    let project = owner.project();
    let form = ProjectForm {
        name: project.name.clone(),
        currency: project.currency.clone(),
        region: project.region.clone().unwrap_or_default(),
        allowed_origins: project.allowed_origins.join(", "),
        undo_window: project.undo_window_seconds.to_string(),
        review_ratings: project.review_ratings,
        retention_days: project
            .retention
            .days
            .map(|days| days.to_string())
            .unwrap_or_default(),
        spam_retention_days: project.retention.spam_days.to_string(),
        consent_ad_user_data: choice(project.default_consent.ad_user_data),
        consent_ad_personalization: choice(project.default_consent.ad_personalization),
        lost: MappingForm::of(&project.lost_mapping),
    };
    let notice = notice(request, NOTICES);
    project_page(
        store,
        &owner,
        StatusCode::OK,
        notice,
        form,
        Problems::default(),
    )
    .await
}

/// `POST project`: saves the settings, or shows each field's problem.
pub(super) async fn save<S: Admin + LeadStore>(store: &S, (owner, form): (Owner, Form)) -> Answer {
    let typed = ProjectForm::read(&form);
    let settings = typed.settings();
    // Core applies settings all or nothing and names the first problem; applying each
    // field's change alone finds every problem and the field it belongs to.
    let none = ProjectSettings::default;
    let changes = [
        (
            "name",
            ProjectSettings {
                name: settings.name.clone(),
                ..none()
            },
        ),
        (
            "currency",
            ProjectSettings {
                currency: settings.currency.clone(),
                ..none()
            },
        ),
        (
            "region",
            ProjectSettings {
                region: settings.region.clone(),
                ..none()
            },
        ),
        (
            "allowed_origins",
            ProjectSettings {
                allowed_origins: settings.allowed_origins.clone(),
                ..none()
            },
        ),
        (
            "retention_days",
            ProjectSettings {
                retention_days: settings.retention_days,
                ..none()
            },
        ),
        (
            "spam_retention_days",
            ProjectSettings {
                spam_retention_days: settings.spam_retention_days,
                ..none()
            },
        ),
        (
            "undo_window",
            ProjectSettings {
                // A window typed but not a number is one no project can have.
                undo_window_seconds: (!typed.undo_window.trim().is_empty())
                    .then(|| typed.undo_window_seconds().unwrap_or(u32::MAX)),
                ..none()
            },
        ),
    ];
    let mut problems = typed.lost.problems();
    for (field, change) in changes {
        if let Err(message) = change.apply(&mut owner.project().clone()) {
            problems.add(field, sentence(&message));
        }
    }
    if !problems.is_empty() {
        let status = StatusCode::BAD_REQUEST;
        return project_page(store, &owner, status, None, typed, problems).await;
    }
    match store.update_project(owner.project().id, settings).await {
        Ok(_) => Ok(owner.redirect(Settings::Project, Some("saved"))),
        Err(StoreError::Invalid(message)) => {
            let problems = Problems::one("", sentence(&message));
            let status = StatusCode::BAD_REQUEST;
            project_page(store, &owner, status, None, typed, problems).await
        }
        Err(err) => Err(owner.failure(err)),
    }
}
