//! Snapchat against a local mock of its Conversions API v3: the event its documentation
//! asks for (<https://developers.snap.com/api/marketing-api/Conversions-API/Parameters>),
//! one conversion however often the lead is rated, and its answers sorted into retry or
//! failure without its token, which travels in the query.

use crate::common::*;
use leadtrack_core::integration::{IntegrationSettings, Secret, SnapchatSettings};
use leadtrack_core::label::LabelMapping;
use leadtrack_core::types::{AttemptOutcome, DeliveryState, IntegrationKind};
use leadtrack_platforms::normalize::sha256_hex;
use leadtrack_platforms::testkit::{MockPlatform, MockResponse};
use serde_json::json;

const TOKEN: &str = "snap-capi-token-value";
const PIXEL: &str = "1ec32188-754e-4be2-8e55-c949a984a39f";

/// Snapchat connected to its mock, and a label mapped to Snapchat's `PURCHASE` alone.
async fn setup() -> OnePlatform {
    let answer = MockResponse::took_one(IntegrationKind::Snapchat);
    let connect = |mock: &MockPlatform| {
        IntegrationSettings::Snapchat(SnapchatSettings {
            pixel_id: PIXEL.into(),
            access_token: Secret::new(TOKEN),
            base_url: Some(mock.url().to_owned()),
        })
    };
    let mapping = LabelMapping {
        snapchat_event: Some("PURCHASE".into()),
        ..LabelMapping::default()
    };
    OnePlatform::start(answer, connect, mapping).await
}

fn lead() -> serde_json::Value {
    json!({
        "userData": {"email": " Mary.Jones@Example.COM ", "phone": "030 98765432"},
        "attributionData": {"ScCid": "sc-click-1", "_scid": "scid-cookie-1"},
        "deviceData": {"ipAddress": "203.0.113.9", "userAgent": "Mozilla/5.0 (Test)"}
    })
}

#[tokio::test]
async fn snapchat_receives_one_offline_event_with_hashed_identifiers() {
    let s = setup().await;
    let lead = s.rated(lead()).await;
    let record = s.f.run_until_done(&worker(&s.f.store, fast()), lead).await;
    assert_eq!(
        delivery(&record, IntegrationKind::Snapchat),
        (
            DeliveryState::Delivered,
            vec![(AttemptOutcome::Delivered, Some(200))]
        )
    );
    let sent = s.mock.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].path, format!("/v3/{PIXEL}/events"));
    assert_eq!(sent[0].query("access_token"), Some(TOKEN));
    assert_eq!(
        sent[0].json(),
        json!({"data": [{
            "event_name": "PURCHASE",
            "event_time": record.job.converted_at.timestamp_millis(),
            "action_source": "OFFLINE",
            "event_id": record.job.conversion_event_id.to_string(),
            "user_data": {
                "em": [sha256_hex("mary.jones@example.com")],
                "ph": [sha256_hex("493098765432")],
                "sc_click_id": "sc-click-1",
                "sc_cookie1": "scid-cookie-1",
                "client_ip_address": "203.0.113.9",
                "client_user_agent": "Mozilla/5.0 (Test)"
            },
            "custom_data": {"value": 49.99, "currency": "EUR"}
        }]})
    );

    // Rated again at another price: Snapchat keeps the first value, so it hears nothing.
    s.rated_again_at_another_price(lead, IntegrationKind::Snapchat)
        .await;
}

#[tokio::test]
async fn answers_retry_or_fail_by_status_and_never_show_the_token() {
    let s = setup().await;
    s.mock
        .push(MockResponse::json(503, json!({"status": "FAILED"})));
    let slowed = s.rated(lead()).await;
    let record =
        s.f.run_until_done(&worker(&s.f.store, fast()), slowed)
            .await;
    assert_eq!(
        delivery(&record, IntegrationKind::Snapchat),
        (
            DeliveryState::Delivered,
            vec![
                (AttemptOutcome::Retry, Some(503)),
                (AttemptOutcome::Delivered, Some(200))
            ]
        )
    );
    s.mock.push(MockResponse::json(
        400,
        json!({"status": "INVALID", "reason": format!("Insufficient PII for {TOKEN}")}),
    ));
    let refused = s.rated(another_person(1)).await;
    let record =
        s.f.run_until_done(&worker(&s.f.store, fast()), refused)
            .await;
    let (delivery, attempts) = delivery_of(&record, IntegrationKind::Snapchat);
    assert_eq!(delivery.state, DeliveryState::Failed);
    let error = attempts.last().and_then(|a| a.error.as_deref()).unwrap();
    assert!(error.starts_with("HTTP 400: "), "{error}");
    assert!(
        error.contains("Insufficient PII") && !error.contains(TOKEN),
        "{error}"
    );
}
