//! Reddit against a local mock of its Conversions API v3: the event its documentation asks
//! for (<https://ads-api.reddit.com/docs/v3/capi-migration>), one conversion however often
//! the lead is rated, and its answers sorted into retry or failure.

use crate::common::*;
use leadtrack_core::integration::{IntegrationSettings, RedditSettings, Secret};
use leadtrack_core::label::LabelMapping;
use leadtrack_core::types::{AttemptOutcome, DeliveryState, IntegrationKind};
use leadtrack_platforms::normalize::sha256_hex;
use leadtrack_platforms::testkit::{MockPlatform, MockResponse};
use serde_json::json;

const TOKEN: &str = "rd-conversion-access-token";
const PIXEL: &str = "a2_pixel42";

/// Reddit connected to its mock, and a label mapped to Reddit's `event` alone.
async fn setup(event: &str) -> OnePlatform {
    let answer = MockResponse::took_one(IntegrationKind::Reddit);
    let connect = |mock: &MockPlatform| {
        IntegrationSettings::Reddit(RedditSettings {
            pixel_id: PIXEL.into(),
            access_token: Secret::new(TOKEN),
            signed_in: None,
            test_id: None,
            base_url: Some(mock.url().to_owned()),
        })
    };
    let mapping = LabelMapping {
        reddit_event: Some(event.into()),
        ..LabelMapping::default()
    };
    OnePlatform::start(answer, connect, mapping).await
}

#[tokio::test]
async fn signed_in_reddit_sends_with_an_access_token_renewed_from_its_refresh_token() {
    use leadtrack_core::integration::SignedIn;
    use leadtrack_core::oauth::Provider;
    use leadtrack_platforms::testkit::sign_in::{self, MockSignIn};
    // Reddit's token endpoint wants the app's credentials in a Basic header: the mock
    // refuses any other.
    let reddit = MockSignIn::start_as(Provider::Reddit, "reddit-app", "reddit-secret", "").await;
    let token_url = reddit.endpoints().token;
    let answer = MockResponse::took_one(IntegrationKind::Reddit);
    let connect = |mock: &MockPlatform| {
        IntegrationSettings::Reddit(RedditSettings {
            pixel_id: PIXEL.into(),
            access_token: Secret::new(""),
            signed_in: Some(SignedIn {
                client_id: "reddit-app".into(),
                client_secret: Secret::new("reddit-secret"),
                refresh_token: Secret::new(sign_in::REFRESH_TOKEN),
                token_url: Some(token_url),
            }),
            test_id: None,
            base_url: Some(mock.url().to_owned()),
        })
    };
    let mapping = LabelMapping {
        reddit_event: Some("Lead".into()),
        ..LabelMapping::default()
    };
    let s = OnePlatform::start(answer, connect, mapping).await;
    let worker = worker(&s.f.store, fast());
    for email in ["one@example.com", "two@example.com"] {
        let lead = s.rated(json!({"userData": {"email": email}})).await;
        let record = s.f.run_until_done(&worker, lead).await;
        assert_eq!(
            delivery(&record, IntegrationKind::Reddit).0,
            DeliveryState::Delivered
        );
    }
    // One refresh, its token on both conversions.
    let renewed = reddit.token_requests();
    assert_eq!(renewed.len(), 1, "{renewed:?}");
    assert_eq!(renewed[0]["grant_type"], "refresh_token");
    let sent = s.mock.requests();
    assert_eq!(sent.len(), 2);
    for request in &sent {
        assert_eq!(
            request.header("authorization"),
            Some("Bearer mock-access-1")
        );
    }
}

fn lead() -> serde_json::Value {
    json!({
        "userData": {"email": " Al.ice+Apple@Example.Com ", "phone": "030 98765432"},
        "attributionData": {"rdt_cid": "3184742045291813272", "_rdt_uuid": "1677712978045.b8f7eb7d"},
        "deviceData": {"ipAddress": "203.0.113.9", "userAgent": "Mozilla/5.0 (Test)"},
        "uniqueIdentifier": "CRM-42"
    })
}

#[tokio::test]
async fn reddit_receives_one_event_with_its_match_keys_and_conversion_id() {
    let s = setup("Purchase").await;
    let lead = s.rated(lead()).await;
    let record = s.f.run_until_done(&worker(&s.f.store, fast()), lead).await;
    assert_eq!(
        delivery(&record, IntegrationKind::Reddit),
        (
            DeliveryState::Delivered,
            vec![(AttemptOutcome::Delivered, Some(200))]
        )
    );
    let sent = s.mock.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].path,
        format!("/api/v3/pixels/{PIXEL}/conversion_events")
    );
    assert_eq!(
        sent[0].header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert_eq!(
        sent[0].json(),
        json!({"data": {"events": [{
            "event_at": record.job.converted_at.timestamp_millis(),
            "action_source": "OTHER",
            "type": {"tracking_type": "PURCHASE"},
            "click_id": "3184742045291813272",
            "user": {
                // Reddit's own example: alice@example.com, however written.
                "email": "ff8d9819fc0e12bf0d24892e45987e249a28dce836a85cad60e28eaaa8c6d976",
                "phone_number": sha256_hex("+493098765432"),
                "external_id": sha256_hex("CRM-42"),
                "uuid": "1677712978045.b8f7eb7d",
                "ip_address": "203.0.113.9",
                "user_agent": "Mozilla/5.0 (Test)"
            },
            "metadata": {
                "conversion_id": record.job.conversion_event_id.to_string(),
                "value": 49.99,
                "currency": "EUR"
            }
        }]}})
    );

    // Rated again at another price: Reddit keeps the first value, so it hears nothing.
    s.rated_again_at_another_price(lead, IntegrationKind::Reddit)
        .await;
}

#[tokio::test]
async fn a_custom_event_goes_by_its_name_and_answers_retry_or_fail_by_status() {
    let s = setup("Qualified lead").await;
    s.mock.push(MockResponse::json(
        429,
        json!({"error": "Too many requests/events within timeframe."}),
    ));
    let slowed = s.rated(lead()).await;
    let record =
        s.f.run_until_done(&worker(&s.f.store, fast()), slowed)
            .await;
    assert_eq!(
        delivery(&record, IntegrationKind::Reddit),
        (
            DeliveryState::Delivered,
            vec![
                (AttemptOutcome::Retry, Some(429)),
                (AttemptOutcome::Delivered, Some(200))
            ]
        )
    );
    let sent = s.mock.requests();
    assert_eq!(
        sent[1].json()["data"]["events"][0]["type"],
        json!({"tracking_type": "CUSTOM", "custom_event_name": "Qualified lead"})
    );
    assert_eq!(sent[0].json(), sent[1].json(), "the same event again");

    s.mock.push(MockResponse::json(
        401,
        json!({"error": format!("UNAUTHORIZED {TOKEN}")}),
    ));
    let refused = s.rated(another_person(1)).await;
    let record =
        s.f.run_until_done(&worker(&s.f.store, fast()), refused)
            .await;
    let (delivery, attempts) = delivery_of(&record, IntegrationKind::Reddit);
    assert_eq!(delivery.state, DeliveryState::Failed);
    let error = attempts.last().and_then(|a| a.error.as_deref()).unwrap();
    assert!(error.starts_with("HTTP 401: "), "{error}");
    assert!(!error.contains(TOKEN), "{error}");
}

#[tokio::test]
async fn a_lead_reddit_cannot_match_is_skipped_with_the_reason() {
    let s = setup("Lead").await;
    let lead = s
        .rated(json!({"userData": {"firstName": "Ada"}, "attributionData": {"ttclid": "T"}}))
        .await;
    let record = s.f.run_until_done(&worker(&s.f.store, fast()), lead).await;
    let (delivery, _) = delivery_of(&record, IntegrationKind::Reddit);
    assert_eq!(delivery.state, DeliveryState::Skipped);
    assert_eq!(
        delivery.detail.as_deref(),
        Some(
            "The lead has no email, phone, Reddit click id (rdt_cid) or Reddit cookie (_rdt_uuid), so Reddit cannot match the conversion to a person"
        )
    );
    assert!(s.mock.requests().is_empty());
}
