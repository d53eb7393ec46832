//! `integration ...`: connecting, changing and disconnecting a project's integrations.
//!
//! Settings given on the command line replace the stored ones; settings not given are kept,
//! so `--base-url` alone moves an integration without restating its credentials. A running
//! server's worker reads the settings for every job, so changes apply to the next delivery.

use chrono::Utc;
use leadtrack_core::Admin;
use leadtrack_core::integration::{
    Ga4Settings, GoogleAdsSettings, IntegrationSettings, Integrations, MetaSettings, Secret,
    WebhookSettings,
};
use leadtrack_core::key::GeneratedKey;
use leadtrack_core::types::IntegrationKind;
use serde_json::{Value, json};

use crate::Failure;
use crate::admin::project;
use crate::cli::IntegrationCommand;

/// The Graph API version of a Meta connection that names none.
const DEFAULT_META_API_VERSION: &str = "v23.0";

/// A command-line value where `""` means "none".
fn optional(value: Option<String>, current: Option<String>) -> Option<String> {
    match value {
        Some(text) if text.trim().is_empty() => None,
        Some(text) => Some(text.trim().to_owned()),
        None => current,
    }
}

/// A value the integration needs: given now, or stored already.
fn required(
    value: Option<String>,
    current: Option<&str>,
    flag: &str,
    name: &str,
) -> Result<String, Failure> {
    value
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .or_else(|| current.map(str::to_owned))
        .ok_or_else(|| Failure(format!("{flag} is needed to connect {name}")))
}

/// `integration ...`: connects, changes, disconnects or lists.
pub(crate) async fn integration_command<S: Admin>(
    store: &S,
    command: IntegrationCommand,
) -> Result<(), Failure> {
    let (target, kind) = match &command {
        IntegrationCommand::Ga4 { target, .. } => (target, IntegrationKind::Ga4),
        IntegrationCommand::Meta { target, .. } => (target, IntegrationKind::Meta),
        IntegrationCommand::GoogleAds { target, .. } => (target, IntegrationKind::GoogleAds),
        IntegrationCommand::Webhook { target, .. } => (target, IntegrationKind::Webhook),
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
    let (settings, generated_secret) = settings(command, &current)?;
    store
        .set_integration(project.id, settings, Utc::now())
        .await
        .map_err(Failure::store)?;
    let verb = if current.is_connected(kind) {
        "Updated"
    } else {
        "Connected"
    };
    say!("{verb} {kind} for project {}.", project.public_id);
    if let Some(secret) = generated_secret {
        say!("Webhook signing secret (shown only this once): {secret}");
    }
    Ok(())
}

/// The settings a command describes, merged over the stored ones; and the webhook secret
/// when one was generated.
fn settings(
    command: IntegrationCommand,
    current: &Integrations,
) -> Result<(IntegrationSettings, Option<String>), Failure> {
    Ok(match command {
        IntegrationCommand::Ga4 {
            target,
            measurement_id,
            api_secret,
            validate,
        } => {
            let old = current.ga4.as_ref();
            let settings = Ga4Settings {
                measurement_id: required(
                    measurement_id,
                    old.map(|s| s.measurement_id.as_str()),
                    "--measurement-id",
                    "GA4",
                )?,
                api_secret: Secret::new(required(
                    api_secret,
                    old.map(|s| s.api_secret.expose()),
                    "--api-secret",
                    "GA4",
                )?),
                validate: validate.or(old.map(|s| s.validate)).unwrap_or(false),
                base_url: optional(target.base_url, old.and_then(|s| s.base_url.clone())),
            };
            (IntegrationSettings::Ga4(settings), None)
        }
        IntegrationCommand::Meta {
            target,
            pixel_id,
            access_token,
            api_version,
            test_event_code,
        } => {
            let old = current.meta.as_ref();
            let settings = MetaSettings {
                pixel_id: required(
                    pixel_id,
                    old.map(|s| s.pixel_id.as_str()),
                    "--pixel-id",
                    "Meta",
                )?,
                access_token: Secret::new(required(
                    access_token,
                    old.map(|s| s.access_token.expose()),
                    "--access-token",
                    "Meta",
                )?),
                api_version: optional(api_version, old.map(|s| s.api_version.clone()))
                    .unwrap_or_else(|| DEFAULT_META_API_VERSION.to_owned()),
                test_event_code: optional(
                    test_event_code,
                    old.and_then(|s| s.test_event_code.clone()),
                ),
                base_url: optional(target.base_url, old.and_then(|s| s.base_url.clone())),
            };
            (IntegrationSettings::Meta(settings), None)
        }
        IntegrationCommand::GoogleAds {
            target,
            customer_id,
            login_customer_id,
            client_id,
            client_secret,
            refresh_token,
            token_url,
        } => {
            let old = current.google_ads.as_ref();
            let name = "Google Ads";
            let settings = GoogleAdsSettings {
                customer_id: required(
                    customer_id,
                    old.map(|s| s.customer_id.as_str()),
                    "--customer-id",
                    name,
                )?,
                login_customer_id: optional(
                    login_customer_id,
                    old.and_then(|s| s.login_customer_id.clone()),
                ),
                client_id: required(
                    client_id,
                    old.map(|s| s.client_id.as_str()),
                    "--client-id",
                    name,
                )?,
                client_secret: Secret::new(required(
                    client_secret,
                    old.map(|s| s.client_secret.expose()),
                    "--client-secret",
                    name,
                )?),
                refresh_token: Secret::new(required(
                    refresh_token,
                    old.map(|s| s.refresh_token.expose()),
                    "--refresh-token",
                    name,
                )?),
                token_url: optional(token_url, old.and_then(|s| s.token_url.clone())),
                base_url: optional(target.base_url, old.and_then(|s| s.base_url.clone())),
            };
            (IntegrationSettings::GoogleAds(settings), None)
        }
        IntegrationCommand::Webhook {
            target,
            url,
            secret,
        } => {
            let old = current.webhook.as_ref();
            let url = optional(url, old.map(|s| s.url.clone()))
                .or_else(|| target.base_url.clone().filter(|u| !u.trim().is_empty()))
                .ok_or_else(|| Failure("--url is needed to connect the webhook".to_owned()))?;
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                return Err(Failure(format!(
                    "the webhook URL {url:?} must start with https:// or http://"
                )));
            }
            let given = secret.filter(|s| !s.trim().is_empty());
            let (secret, generated) = match (given, old) {
                (Some(secret), _) => (secret, None),
                (None, Some(old)) => (old.secret.expose().to_owned(), None),
                (None, None) => {
                    let secret = format!(
                        "whsec_{}",
                        GeneratedKey::generate().key.trim_start_matches("lt_")
                    );
                    (secret.clone(), Some(secret))
                }
            };
            (
                IntegrationSettings::Webhook(WebhookSettings {
                    url,
                    secret: Secret::new(secret),
                }),
                generated,
            )
        }
        IntegrationCommand::List { .. } => {
            return Err(Failure("listing has no settings to store".to_owned()));
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
            "pixelId": s.pixel_id, "apiVersion": s.api_version, "testEventCode": s.test_event_code, "baseUrl": s.base_url,
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
