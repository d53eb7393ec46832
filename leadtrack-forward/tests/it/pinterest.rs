//! Pinterest against a local mock of its API for Conversions: the event its documentation
//! asks for (<https://developers.pinterest.com/docs/api/v5/events-create>), one conversion
//! however often the lead is rated, and its answers sorted into retry or failure.

use crate::common::*;
use leadtrack_core::integration::{IntegrationSettings, PinterestSettings, Secret, SignedIn};
use leadtrack_core::label::LabelMapping;
use leadtrack_core::oauth::Provider;
use leadtrack_core::types::{AttemptOutcome, DeliveryState, IntegrationKind};
use leadtrack_platforms::normalize::sha256_hex;
use leadtrack_platforms::testkit::sign_in::{self, MockSignIn};
use leadtrack_platforms::testkit::{MockPlatform, MockResponse};
use serde_json::json;

const TOKEN: &str = "pina_conversion-token";
const ACCOUNT: &str = "549755885175";

/// Pinterest connected to its mock (in test mode when `test`; with a sign-in's refresh
/// token instead of a token when `signed_in`), and a label mapped to Pinterest's
/// `checkout` alone.
async fn setup(test: bool, signed_in: Option<SignedIn>) -> OnePlatform {
    let connect = |mock: &MockPlatform| {
        IntegrationSettings::Pinterest(PinterestSettings {
            ad_account_id: ACCOUNT.into(),
            access_token: Secret::new(if signed_in.is_some() { "" } else { TOKEN }),
            signed_in,
            test,
            base_url: Some(mock.url().to_owned()),
        })
    };
    let mapping = LabelMapping {
        pinterest_event: Some("checkout".into()),
        ..LabelMapping::default()
    };
    OnePlatform::start(
        MockResponse::took_one(IntegrationKind::Pinterest),
        connect,
        mapping,
    )
    .await
}

fn lead() -> serde_json::Value {
    json!({
        "userData": {"email": " Mary.Jones@Example.COM ", "phone": "030 98765432"},
        "attributionData": {"_epik": "dj0yJnU9cGluLWNsaWNr"},
        "deviceData": {"ipAddress": "203.0.113.9", "userAgent": "Mozilla/5.0 (Test)"},
        "uniqueIdentifier": "CRM-42"
    })
}

#[tokio::test]
async fn pinterest_receives_one_offline_event_with_hashed_identifiers() {
    let s = setup(false, None).await;
    let lead = s.rated(lead()).await;
    let record = s.f.run_until_done(&worker(&s.f.store, fast()), lead).await;
    assert_eq!(
        delivery(&record, IntegrationKind::Pinterest),
        (
            DeliveryState::Delivered,
            vec![(AttemptOutcome::Delivered, Some(200))]
        )
    );
    let sent = s.mock.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].path, format!("/v5/ad_accounts/{ACCOUNT}/events"));
    assert_eq!(sent[0].query("test"), None, "a real conversion");
    assert_eq!(
        sent[0].header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert_eq!(
        sent[0].json(),
        json!({"data": [{
            "event_name": "checkout",
            "action_source": "offline",
            "event_time": record.job.converted_at.timestamp(),
            "event_id": record.job.conversion_event_id.to_string(),
            "user_data": {
                "em": [sha256_hex("mary.jones@example.com")],
                "ph": [sha256_hex("493098765432")],
                "external_id": [sha256_hex("CRM-42")],
                "click_id": "dj0yJnU9cGluLWNsaWNr",
                "client_ip_address": "203.0.113.9",
                "client_user_agent": "Mozilla/5.0 (Test)"
            },
            "custom_data": {"value": "49.99", "currency": "EUR"}
        }]})
    );

    // Rated again at another price: Pinterest keeps the first value, so it hears nothing.
    s.rated_again_at_another_price(lead, IntegrationKind::Pinterest)
        .await;
}

#[tokio::test]
async fn test_mode_marks_each_request_and_answers_retry_or_fail() {
    // Signed in: Pinterest's token endpoint wants the app's credentials in a Basic header,
    // and the mock refuses any other.
    let pinterest = MockSignIn::start_as(Provider::Pinterest, "pin-app", "pin-secret", "").await;
    let signed_in = SignedIn {
        client_id: "pin-app".into(),
        client_secret: Secret::new("pin-secret"),
        refresh_token: Secret::new(sign_in::REFRESH_TOKEN),
        token_url: Some(pinterest.endpoints().token),
    };
    let s = setup(true, Some(signed_in)).await;
    s.mock.push(MockResponse::json(
        429,
        json!({"code": 8, "message": "Rate limited"}),
    ));
    let slowed = s.rated(lead()).await;
    let record =
        s.f.run_until_done(&worker(&s.f.store, fast()), slowed)
            .await;
    assert_eq!(
        delivery(&record, IntegrationKind::Pinterest),
        (
            DeliveryState::Delivered,
            vec![
                (AttemptOutcome::Retry, Some(429)),
                (AttemptOutcome::Delivered, Some(200))
            ]
        )
    );
    let sent = s.mock.requests();
    assert!(sent.iter().all(|r| r.query("test") == Some("true")));
    // One token, renewed once from the refresh token, for both tries.
    assert_eq!(pinterest.token_requests().len(), 1);
    assert!(
        sent.iter()
            .all(|r| r.header("authorization") == Some("Bearer mock-access-1"))
    );
    assert_eq!(sent[0].json(), sent[1].json(), "the same event again");

    // An event Pinterest refuses fails in its words.
    s.mock.push(MockResponse::json(
        422,
        json!({"num_events_received": 1, "num_events_processed": 0,
               "events": [{"status": "failed", "error_message": "Invalid event_time", "warning_message": null}]}),
    ));
    let refused = s.rated(another_person(1)).await;
    let record =
        s.f.run_until_done(&worker(&s.f.store, fast()), refused)
            .await;
    let (delivery, attempts) = delivery_of(&record, IntegrationKind::Pinterest);
    assert_eq!(delivery.state, DeliveryState::Failed);
    assert_eq!(
        attempts.last().and_then(|a| a.error.as_deref()),
        Some("Pinterest refused the event: Invalid event_time")
    );
}

#[tokio::test]
async fn a_lead_pinterest_cannot_match_is_skipped_with_the_reason() {
    let s = setup(false, None).await;
    let lead = s
        .rated(json!({"userData": {"firstName": "Ada"}, "attributionData": {"ttclid": "T"}}))
        .await;
    let record = s.f.run_until_done(&worker(&s.f.store, fast()), lead).await;
    let (delivery, _) = delivery_of(&record, IntegrationKind::Pinterest);
    assert_eq!(delivery.state, DeliveryState::Skipped);
    assert_eq!(
        delivery.detail.as_deref(),
        Some(
            "The lead has no email, phone or Pinterest click id (epik, or its _epik cookie), so Pinterest cannot match the conversion to a person"
        )
    );
    assert!(s.mock.requests().is_empty());
}
