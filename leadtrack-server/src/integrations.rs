//! `integration ...`: connecting, changing and disconnecting a project's integrations.
//!
//! Settings given on the command line replace the stored ones; settings not given are kept,
//! so `--base-url` alone moves an integration without restating its credentials. A running
//! server's worker reads the settings for every job, so changes apply to the next delivery.

use chrono::Utc;
use leadtrack_core::Admin;
use leadtrack_core::integration::{
    Ga4Input, GoogleAdsInput, Integrations, LinkedinInput, MetaInput, MicrosoftAdsInput, Secret,
    SettingsError, SettingsInput, WebhookInput,
};
use leadtrack_core::project::Project;
use leadtrack_core::types::IntegrationKind;
use leadtrack_forward::check::{self, TestRequest, send_test};
use serde_json::{Value, json};

use crate::Failure;
use crate::admin::project;
use crate::cli::IntegrationCommand;

/// `integration ...`: connects, changes, disconnects or lists.
pub(crate) async fn integration_command<S: Admin>(
    store: &S,
    command: IntegrationCommand,
) -> Result<(), Failure> {
    let (target, kind) = match &command {
        IntegrationCommand::Ga4 { target, .. } => (target, IntegrationKind::Ga4),
        IntegrationCommand::Meta { target, .. } => (target, IntegrationKind::Meta),
        IntegrationCommand::GoogleAds { target, .. } => (target, IntegrationKind::GoogleAds),
        IntegrationCommand::MicrosoftAds { target, .. } => (target, IntegrationKind::MicrosoftAds),
        IntegrationCommand::Linkedin { target, .. } => (target, IntegrationKind::Linkedin),
        IntegrationCommand::Webhook { target, .. } => (target, IntegrationKind::Webhook),
        IntegrationCommand::Test {
            project: id,
            kind,
            event,
            test_event_code,
            conversion_action,
        } => {
            let project = project(store, id).await?;
            let request = TestRequest {
                event: event.clone(),
                test_event_code: test_event_code.clone(),
                conversion_action: conversion_action.clone(),
            };
            return test(store, &project, *kind, &request).await;
        }
        IntegrationCommand::List { project: id, json } => {
            let project = project(store, id).await?;
            let integrations = store
                .integrations(project.id)
                .await
                .map_err(Failure::store)?;
            print_integrations(&integrations, *json);
            return Ok(());
        }
    };
    let project = project(store, &target.project).await?;
    if target.disconnect {
        let removed = store
            .remove_integration(project.id, kind)
            .await
            .map_err(Failure::store)?;
        if removed {
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
    let applied = input(command)?.apply(&current).map_err(failure)?;
    store
        .set_integration(project.id, applied.settings, Utc::now())
        .await
        .map_err(Failure::store)?;
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

/// The settings a command gives, to be merged over the stored ones.
fn input(command: IntegrationCommand) -> Result<SettingsInput, Failure> {
    Ok(match command {
        IntegrationCommand::Ga4 {
            target,
            measurement_id,
            api_secret,
            validate,
        } => SettingsInput::Ga4(Ga4Input {
            measurement_id,
            api_secret: api_secret.map(Secret::new),
            validate,
            base_url: target.base_url,
        }),
        IntegrationCommand::Meta {
            target,
            pixel_id,
            access_token,
            api_version,
            test_event_code,
            action_source,
        } => SettingsInput::Meta(MetaInput {
            pixel_id,
            access_token: access_token.map(Secret::new),
            api_version,
            test_event_code,
            action_source,
            base_url: target.base_url,
        }),
        IntegrationCommand::GoogleAds {
            target,
            customer_id,
            login_customer_id,
            client_id,
            client_secret,
            refresh_token,
            token_url,
        } => SettingsInput::GoogleAds(GoogleAdsInput {
            customer_id,
            login_customer_id,
            client_id,
            client_secret: client_secret.map(Secret::new),
            refresh_token: refresh_token.map(Secret::new),
            token_url,
            base_url: target.base_url,
        }),
        IntegrationCommand::MicrosoftAds {
            target,
            customer_id,
            account_id,
            developer_token,
            client_id,
            client_secret,
            refresh_token,
            token_url,
        } => SettingsInput::MicrosoftAds(MicrosoftAdsInput {
            customer_id,
            account_id,
            developer_token: developer_token.map(Secret::new),
            client_id,
            client_secret: client_secret.map(Secret::new),
            refresh_token: refresh_token.map(Secret::new),
            token_url,
            base_url: target.base_url,
        }),
        IntegrationCommand::Linkedin {
            target,
            client_id,
            client_secret,
            refresh_token,
            api_version,
            token_url,
        } => SettingsInput::Linkedin(LinkedinInput {
            client_id,
            client_secret: client_secret.map(Secret::new),
            refresh_token: refresh_token.map(Secret::new),
            api_version,
            token_url,
            base_url: target.base_url,
        }),
        IntegrationCommand::Webhook {
            target,
            url,
            secret,
        } => SettingsInput::Webhook(WebhookInput {
            url,
            secret: secret.map(Secret::new),
            base_url: target.base_url,
        }),
        IntegrationCommand::List { .. } | IntegrationCommand::Test { .. } => {
            return Err(Failure("this command has no settings to store".to_owned()));
        }
    })
}

/// What is shown of a project's integrations: everything but the credentials.
fn describe(integrations: &Integrations) -> Value {
    json!({
        "googleAds": integrations.google_ads.as_ref().map(|s| json!({
            "customerId": s.customer_id, "loginCustomerId": s.login_customer_id, "clientId": s.client_id,
            "tokenUrl": s.token_url, "baseUrl": s.base_url,
        })),
        "ga4": integrations.ga4.as_ref().map(|s| json!({
            "measurementId": s.measurement_id, "validate": s.validate, "baseUrl": s.base_url,
        })),
        "meta": integrations.meta.as_ref().map(|s| json!({
            "pixelId": s.pixel_id, "apiVersion": s.api_version, "testEventCode": s.test_event_code,
            "actionSource": s.action_source, "baseUrl": s.base_url,
        })),
        "microsoftAds": integrations.microsoft_ads.as_ref().map(|s| json!({
            "customerId": s.customer_id, "accountId": s.account_id, "clientId": s.client_id,
            "tokenUrl": s.token_url, "baseUrl": s.base_url,
        })),
        "linkedin": integrations.linkedin.as_ref().map(|s| json!({
            "clientId": s.client_id, "apiVersion": s.api_version, "tokenUrl": s.token_url,
            "baseUrl": s.base_url,
        })),
        "webhook": integrations.webhook.as_ref().map(|s| json!({"url": s.url})),
    })
}

fn print_integrations(integrations: &Integrations, json: bool) {
    let described = describe(integrations);
    if json {
        say!("{described}");
        return;
    }
    for (name, key) in [
        ("google-ads", "googleAds"),
        ("ga4", "ga4"),
        ("meta", "meta"),
        ("microsoft-ads", "microsoftAds"),
        ("linkedin", "linkedin"),
        ("webhook", "webhook"),
    ] {
        match described[key].as_object() {
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
