//! `integration ...`: connecting, changing and disconnecting a project's integrations.
//!
//! Settings given on the command line replace the stored ones; settings not given are kept,
//! so `--base-url` alone moves an integration without restating its credentials. A running
//! server's worker reads the settings for every job, so changes apply to the next delivery.

use chrono::Utc;
use leadtrack_core::activity::ProjectActivity;
use leadtrack_core::integration::{Integrations, PLATFORMS, SettingsError, SettingsInput, Shown};
use leadtrack_core::project::Project;
use leadtrack_core::types::IntegrationKind;
use leadtrack_core::{Admin, LeadStore};
use leadtrack_platforms::check::{self, TestRequest, send_test};
use serde_json::{Map, Value};

use crate::Failure;
use crate::admin::{audit, project};
use crate::cli::ProjectListing;
use crate::cli::{ConnectCommand, IntegrationCommand};
use crate::mail::Links;
use crate::sources;

/// `integration ...`: connects, changes, disconnects or lists.
pub(crate) async fn integration_command<S: Admin + LeadStore>(
    store: &S,
    command: IntegrationCommand,
    links: &Links,
) -> Result<(), Failure> {
    let connect = match command {
        IntegrationCommand::MetaLeadAds {
            project: id,
            page_id,
            page_access_token,
            base_url,
            remove: _,
        } => {
            let project = project(store, &id).await?;
            let page = page_id.zip(page_access_token);
            return sources::meta_lead_ads(store, &project, (page, base_url), links).await;
        }
        IntegrationCommand::LinkedinLeadGen {
            project: id,
            accounts,
            remove: _,
        } => {
            let project = project(store, &id).await?;
            return sources::linkedin_lead_gen(store, &project, accounts).await;
        }
        IntegrationCommand::GoogleLeadForms {
            project: id,
            key,
            remove: _,
        } => {
            let project = project(store, &id).await?;
            return sources::google_lead_forms(store, &project, key, links).await;
        }
        IntegrationCommand::Connect(connect) => connect,
        IntegrationCommand::Test {
            project: id,
            kind,
            event,
            test_event_code,
            conversion_action,
        } => {
            let project = project(store, &id).await?;
            let request = TestRequest {
                event,
                test_event_code,
                conversion_action,
            };
            return test(store, &project, kind, &request).await;
        }
        IntegrationCommand::List(ProjectListing { project: id, json }) => {
            let project = project(store, &id).await?;
            let integrations = store
                .integrations(project.id)
                .await
                .map_err(Failure::store)?;
            print_integrations(&integrations, json);
            return Ok(());
        }
    };
    connect_command(store, connect).await
}

/// `integration PLATFORM ...`: connects, changes or disconnects one platform.
async fn connect_command<S: Admin + LeadStore>(
    store: &S,
    command: ConnectCommand,
) -> Result<(), Failure> {
    let kind = command.kind;
    let project = project(store, &command.target.project).await?;
    if command.target.disconnect {
        let removed = store
            .remove_integration(project.id, kind)
            .await
            .map_err(Failure::store)?;
        if removed {
            let event = ProjectActivity::IntegrationRemoved { integration: kind };
            audit(store, project.id, event).await?;
            say!("Disconnected {kind} from project {}.", project.public_id);
        } else {
            say!("{kind} was not connected to project {}.", project.public_id);
        }
        return Ok(());
    }
    let current = store
        .integrations(project.id)
        .await
        .map_err(Failure::store)?;
    let input = SettingsInput::from_given(kind, |name| command.given(name));
    let applied = input.apply(&current).map_err(failure)?;
    store
        .set_integration(project.id, applied.settings, Utc::now())
        .await
        .map_err(Failure::store)?;
    let event = ProjectActivity::IntegrationSaved { integration: kind };
    audit(store, project.id, event).await?;
    let verb = if current.is_connected(kind) {
        "Updated"
    } else {
        "Connected"
    };
    say!("{verb} {kind} for project {}.", project.public_id);
    if let Some(secret) = applied.generated_secret {
        say!(
            "Webhook signing secret (shown only this once): {}",
            secret.expose()
        );
    }
    Ok(())
}

/// `integration test`: one test event, and what the platform answered. Fails (exit 1)
/// when the platform did not accept it.
async fn test<S: Admin>(
    store: &S,
    project: &Project,
    kind: IntegrationKind,
    request: &TestRequest,
) -> Result<(), Failure> {
    let integrations = store
        .integrations(project.id)
        .await
        .map_err(Failure::store)?;
    let answer = send_test(&check::client(), project, &integrations, kind, request)
        .await
        .map_err(|err| Failure(format!("{err}; nothing was sent")))?;
    let status = answer
        .status
        .map_or_else(|| "no answer".to_owned(), |status| format!("HTTP {status}"));
    if answer.accepted {
        say!(
            "{kind} accepted the test event ({status}): {}",
            answer.detail
        );
        Ok(())
    } else {
        Err(Failure(format!(
            "{kind} did not accept the test event ({status}): {}",
            answer.detail
        )))
    }
}

/// A settings error in the command line's words: a missing setting is named by its option.
fn failure(err: SettingsError) -> Failure {
    match err {
        SettingsError::Missing {
            setting,
            integration,
        } => Failure(format!(
            "--{} is needed to connect {integration}",
            setting.replace('_', "-")
        )),
        other => Failure(other.to_string()),
    }
}

/// What is shown of a project's integrations: everything but the credentials, by the
/// settings' stored names (`customerId`), `null` where unset.
fn describe(integrations: &Integrations) -> Value {
    let described: Map<String, Value> = PLATFORMS
        .iter()
        .map(|platform| {
            let shown = integrations.shown(platform.kind).map(|fields| {
                let fields: Map<String, Value> = fields
                    .into_iter()
                    .map(|(field, shown)| {
                        let value = match shown {
                            Shown::Text(text) => text.map_or(Value::Null, Value::from),
                            Shown::Check(on) => Value::from(on),
                        };
                        (field.camel_name(), value)
                    })
                    .collect();
                Value::Object(fields)
            });
            (camel(platform.slug), shown.unwrap_or(Value::Null))
        })
        .collect();
    Value::Object(described)
}

/// A platform's key in `integration list --json` (`googleAds`).
fn camel(slug: &str) -> String {
    let mut parts = slug.split('-');
    let first = parts.next().unwrap_or_default().to_owned();
    parts.fold(first, |mut out, part| {
        let mut chars = part.chars();
        if let Some(c) = chars.next() {
            out.push(c.to_ascii_uppercase());
            out.push_str(chars.as_str());
        }
        out
    })
}

fn print_integrations(integrations: &Integrations, json: bool) {
    let described = describe(integrations);
    if json {
        say!("{described}");
        return;
    }
    for platform in &PLATFORMS {
        let name = platform.slug;
        match described[camel(name)].as_object() {
            None => say!("{name:<11} not connected"),
            Some(fields) => {
                let shown: Vec<String> = fields
                    .iter()
                    .filter(|(_, value)| !value.is_null())
                    .map(|(field, value)| {
                        format!(
                            "{field}={}",
                            value
                                .as_str()
                                .map_or_else(|| value.to_string(), str::to_owned)
                        )
                    })
                    .collect();
                say!("{name:<11} connected   {}", shown.join(" "));
            }
        }
    }
}
