//! No credential reaches a log line or a recorded error.

use crate::common::*;
use chrono::Utc;
use leadtrack_core::Admin;
use leadtrack_core::LeadWebhooks as _;
use leadtrack_core::integration::{
    IntegrationSettings, LinkedinSettings, MicrosoftAdsSettings, Secret,
};
use leadtrack_core::label::NewLabel;
use leadtrack_core::testkit::capture_logs;
use leadtrack_core::webhook::{NewWebhook, WebhookEvents};
use leadtrack_platforms::testkit::{MockPlatform, MockResponse};
use serde_json::json;
use tracing::Level;

const MS_DEVELOPER_TOKEN: &str = "ms-developer-token-secret";
const MS_CLIENT_SECRET: &str = "ms-client-secret-value";
const MS_REFRESH_TOKEN: &str = "ms-refresh-token-secret";
const LI_CLIENT_SECRET: &str = "li-client-secret-value";
const LI_REFRESH_TOKEN: &str = "li-refresh-token-secret";
const LEAD_WEBHOOK_SECRET: &str = "whsec_lead_webhook_secret";

#[tokio::test]
async fn no_secret_reaches_a_log_line_or_a_recorded_error() {
    let captured = capture_logs(Level::TRACE);

    let f = fixture().await;
    f.platforms.meta.push(MockResponse::json(
        400,
        json!({"error": {"message": format!("bad token {META_TOKEN}"), "code": 190}}),
    ));
    f.platforms
        .ga4
        .push(MockResponse::json(500, json!({"echo": GA4_SECRET})));
    f.platforms
        .hook
        .push(MockResponse::json(500, json!({"echo": WEBHOOK_SECRET})));
    f.platforms
        .token
        .push(MockResponse::json(500, json!({"echo": ADS_CLIENT_SECRET})));
    let _platforms = connect_echoing_microsoft_and_linkedin(&f).await;
    let receiver = add_echoing_lead_webhook(&f).await;
    let mut body = full_lead();
    body["attributionData"]["msclkid"] = json!("M");
    let lead = f.rated_lead(body, None).await;
    let worker = worker(&f.store, fast());
    let record = f.run_until_done(&worker, lead).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while receiver.requests().len() < 3 {
        assert!(
            std::time::Instant::now() < deadline,
            "the lead webhook got its events"
        );
        if !worker.run_once().await.unwrap() {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }
    let webhook_errors: Vec<String> = f
        .store
        .webhooks(f.project.id)
        .await
        .unwrap()
        .iter()
        .filter_map(|s| s.last_attempt.as_ref()?.error.clone())
        .collect();

    let logs = captured.text();
    assert!(
        logs.contains("delivery attempt"),
        "the worker logged: {logs}"
    );
    let recorded: Vec<String> = record
        .deliveries
        .iter()
        .flat_map(|(_, a)| a.iter().filter_map(|a| a.error.clone()))
        .collect();
    assert!(recorded.len() >= 6, "{recorded:?}");
    assert!(
        logs.contains("webhook event attempt"),
        "the worker logged: {logs}"
    );
    let more = [
        MS_DEVELOPER_TOKEN,
        MS_CLIENT_SECRET,
        MS_REFRESH_TOKEN,
        LI_CLIENT_SECRET,
        LI_REFRESH_TOKEN,
        LEAD_WEBHOOK_SECRET,
    ];
    for secret in SECRETS.into_iter().chain(more) {
        assert!(!logs.contains(secret), "{secret} in the logs");
        assert!(
            recorded.iter().all(|e| !e.contains(secret)),
            "{secret} in {recorded:?}"
        );
        assert!(
            webhook_errors.iter().all(|e| !e.contains(secret)),
            "{secret} in {webhook_errors:?}"
        );
    }
    assert!(
        !logs.contains("Ada.Lovelace@Gmail.com"),
        "no personal data in the logs either"
    );
}

/// Microsoft Advertising and LinkedIn connected, and mapped by the fixture's label: one's
/// platform and the other's token endpoint echo the credentials they were sent. The mock
/// servers, which stop when dropped.
async fn connect_echoing_microsoft_and_linkedin(f: &Fixture) -> [MockPlatform; 3] {
    let microsoft =
        MockPlatform::start(MockResponse::json(200, json!({"PartialErrors": []}))).await;
    microsoft.push(MockResponse::json(
        500,
        json!({"Errors": [{"Code": 0, "Message": format!("echo {MS_DEVELOPER_TOKEN}")}]}),
    ));
    // LinkedIn's token endpoint, and its API (which answers the same 200).
    let li_tokens = MockPlatform::start(MockResponse::json(
        200,
        json!({"access_token": "access", "expires_in": 3600}),
    ))
    .await;
    li_tokens.push(MockResponse::json(
        500,
        json!({"echo": [LI_CLIENT_SECRET, LI_REFRESH_TOKEN]}),
    ));
    let ms_tokens = MockPlatform::start(MockResponse::json(
        200,
        json!({"access_token": "access", "expires_in": 3600}),
    ))
    .await;
    for settings in [
        IntegrationSettings::MicrosoftAds(MicrosoftAdsSettings {
            customer_id: "1".into(),
            account_id: "2".into(),
            developer_token: Secret::new(MS_DEVELOPER_TOKEN),
            client_id: "ms".into(),
            client_secret: Some(Secret::new(MS_CLIENT_SECRET)),
            refresh_token: Secret::new(MS_REFRESH_TOKEN),
            token_url: Some(ms_tokens.url().to_owned()),
            base_url: Some(microsoft.url().to_owned()),
        }),
        IntegrationSettings::Linkedin(LinkedinSettings {
            client_id: "li".into(),
            client_secret: Secret::new(LI_CLIENT_SECRET),
            refresh_token: Secret::new(LI_REFRESH_TOKEN),
            api_version: "202510".into(),
            token_url: Some(li_tokens.url().to_owned()),
            base_url: Some(li_tokens.url().to_owned()),
        }),
    ] {
        f.store
            .set_integration(f.project.id, settings, Utc::now())
            .await
            .unwrap();
    }
    let mut label = f.store.label(f.project.id, f.label).await.unwrap();
    label.mapping.microsoft_ads_conversion = Some("Goal".into());
    label.mapping.linkedin_conversion = Some("1".into());
    f.store
        .update_label(
            f.project.id,
            f.label,
            NewLabel {
                name: label.name,
                mark_as_done: label.mark_as_done,
                mapping: label.mapping,
            },
        )
        .await
        .unwrap();
    [microsoft, li_tokens, ms_tokens]
}

/// A lead webhook whose receiver echoes its secret once; the receiver.
async fn add_echoing_lead_webhook(f: &Fixture) -> MockPlatform {
    let receiver = MockPlatform::start(MockResponse::empty(200)).await;
    receiver.push(MockResponse::json(
        500,
        json!({"echo": LEAD_WEBHOOK_SECRET}),
    ));
    let hook = NewWebhook::new(
        receiver.url(),
        &leadtrack_core::testkit::mock_targets(),
        Some(Secret::new(LEAD_WEBHOOK_SECRET)),
        WebhookEvents::all(),
    )
    .unwrap();
    f.store
        .create_webhook(f.project.id, hook, Utc::now())
        .await
        .unwrap();
    receiver
}
