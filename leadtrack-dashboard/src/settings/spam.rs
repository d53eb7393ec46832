//! The project's spam settings: its held budget, the addresses and email domains it
//! trusts, and the domains, addresses and words it blocks. Core's rules check them; each
//! problem is shown at its field.

use askama::Template;
use leadtrack_core::Admin;
use leadtrack_core::project::ProjectSettings;
use leadtrack_core::spam::{SpamRules, SpamRulesInput, networks_text};
use warp::http::StatusCode;
use warp::reply::Response;

use super::{Answer, Frame, Owner, Problems, notice, sentence};
use crate::Request;
use crate::render::{self, Layout};
use crate::routes::Settings;
use crate::session::Form;

/// The form's fields, in order: name, and the input it sets.
const FIELDS: [&str; 6] = [
    "held_budget",
    "trusted_addresses",
    "trusted_domains",
    "blocked_domains",
    "blocked_addresses",
    "blocked_words",
];

/// The spam form, as typed: each field's text, in [`FIELDS`] order.
struct SpamForm {
    held_budget: String,
    trusted_addresses: String,
    trusted_domains: String,
    blocked_domains: String,
    blocked_addresses: String,
    blocked_words: String,
}

impl SpamForm {
    fn read(form: &Form) -> Self {
        let text = |name: &str| form.get(name).to_owned();
        Self {
            held_budget: text("held_budget"),
            trusted_addresses: text("trusted_addresses"),
            trusted_domains: text("trusted_domains"),
            blocked_domains: text("blocked_domains"),
            blocked_addresses: text("blocked_addresses"),
            blocked_words: text("blocked_words"),
        }
    }

    fn of(rules: &SpamRules) -> Self {
        Self {
            held_budget: rules.held_budget.to_string(),
            trusted_addresses: networks_text(&rules.trusted_addresses),
            trusted_domains: rules.trusted_domains.join("\n"),
            blocked_domains: rules.blocked_domains.join("\n"),
            blocked_addresses: networks_text(&rules.blocked_addresses),
            blocked_words: rules.blocked_words.join("\n"),
        }
    }

    /// The input of field `name` alone (all of them for `None`); a budget that is no
    /// number is one no project can have.
    fn input(&self, name: Option<&str>) -> SpamRulesInput {
        let wanted = |field: &str| name.is_none_or(|name| name == field);
        let text = |field: &str, value: &String| wanted(field).then(|| value.clone());
        SpamRulesInput {
            held_budget: wanted("held_budget")
                .then(|| self.held_budget.trim().parse().unwrap_or(u32::MAX)),
            trusted_addresses: text("trusted_addresses", &self.trusted_addresses),
            trusted_domains: text("trusted_domains", &self.trusted_domains),
            blocked_domains: text("blocked_domains", &self.blocked_domains),
            blocked_addresses: text("blocked_addresses", &self.blocked_addresses),
            blocked_words: text("blocked_words", &self.blocked_words),
        }
    }
}

#[derive(Template)]
#[template(path = "settings/spam.html")]
struct SpamPage {
    layout: Layout,
    frame: Frame,
    form: SpamForm,
    problems: Problems,
}

const NOTICES: &[(&str, &str)] = &[("saved", "Spam settings saved.")];

fn spam_page(
    owner: &Owner,
    status: StatusCode,
    notice: Option<String>,
    form: SpamForm,
    problems: Problems,
) -> Response {
    let (layout, frame) = owner.frame(Settings::Spam, notice);
    let page = SpamPage {
        layout,
        frame,
        form,
        problems,
    };
    render::page(status, &page)
}

/// `GET spam`.
pub(super) fn page(request: &Request, owner: Owner) -> Response {
    let form = SpamForm::of(&owner.project().spam_rules);
    let notice = notice(request, NOTICES);
    spam_page(&owner, StatusCode::OK, notice, form, Problems::default())
}

/// `POST spam`: saves the settings, or shows each field's problem.
pub(super) async fn save<S: Admin>(store: &S, (owner, form): (Owner, Form)) -> Answer {
    let typed = SpamForm::read(&form);
    let rules = &owner.project().spam_rules;
    // Each field checked alone finds every problem and the field it belongs to.
    let mut problems = Problems::default();
    for field in FIELDS {
        if let Err(message) = typed.input(Some(field)).apply(rules) {
            problems.add(field, sentence(&message));
        }
    }
    let changed = match typed.input(None).apply(rules) {
        Ok(changed) if problems.is_empty() => changed,
        _ => {
            let status = StatusCode::BAD_REQUEST;
            return Ok(spam_page(&owner, status, None, typed, problems));
        }
    };
    let settings = ProjectSettings {
        spam_rules: changed,
        ..ProjectSettings::default()
    };
    match store.update_project(owner.project().id, settings).await {
        Ok(_) => Ok(owner.redirect(Settings::Spam, Some("saved"))),
        Err(err) => Err(owner.failure(err)),
    }
}
