//! TikTok against a local mock of its Events API: the CRM event its documentation asks for
//! (<https://ads.tiktok.com/help/article/how-to-postback-signals-through-events-api>),
//! one conversion however often the lead is rated, and its answer codes sorted into retry
//! or failure.

use crate::common::*;
use leadtrack_core::integration::{IntegrationSettings, Secret, TiktokSettings};
use leadtrack_core::label::LabelMapping;
use leadtrack_core::types::{AttemptOutcome, DeliveryState, IntegrationKind};
use leadtrack_platforms::normalize::sha256_hex;
use leadtrack_platforms::testkit::{MockPlatform, MockResponse, rules};
use serde_json::json;

const TOKEN: &str = "tt-events-access-token";
const EVENT_SET: &str = "7312345678901234567";

/// TikTok connected to its mock, and a label mapped to TikTok alone.
async fn setup() -> OnePlatform {
    let answer = MockResponse::took_one(IntegrationKind::Tiktok);
    let connect = |mock: &MockPlatform| {
        IntegrationSettings::Tiktok(TiktokSettings {
            event_set_id: EVENT_SET.into(),
            access_token: Secret::new(TOKEN),
            test_event_code: None,
            base_url: Some(mock.url().to_owned()),
        })
    };
    let mapping = LabelMapping {
        tiktok_event: Some("Qualified lead".into()),
        ..LabelMapping::default()
    };
    OnePlatform::start(answer, connect, mapping).await
}

fn lead() -> serde_json::Value {
    json!({
        "userData": {"email": " Mary.Jones@Example.COM ", "phone": "030 98765432"},
        "attributionData": {"ttclid": "E.C.P.tt-click-1", "_ttp": "2kQx-cookie"},
        "deviceData": {"ipAddress": "203.0.113.9", "userAgent": "Mozilla/5.0 (Test)"},
        "uniqueIdentifier": " CRM-42 "
    })
}

#[tokio::test]
async fn tiktok_receives_one_crm_event_with_hashed_identifiers() {
    let s = setup().await;
    let lead = s.rated(lead()).await;
    let record = s.f.run_until_done(&worker(&s.f.store, fast()), lead).await;
    assert_eq!(
        delivery(&record, IntegrationKind::Tiktok),
        (
            DeliveryState::Delivered,
            vec![(AttemptOutcome::Delivered, Some(200))]
        )
    );
    let sent = s.mock.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].method, "POST");
    assert_eq!(sent[0].path, "/open_api/v1.3/event/track/");
    assert_eq!(sent[0].header("access-token"), Some(TOKEN));
    assert_eq!(
        sent[0].json(),
        json!({
            "event_source": "crm",
            "event_source_id": EVENT_SET,
            "data": [{
                "event": "Qualified lead",
                "event_time": record.job.converted_at.timestamp(),
                "event_id": record.job.conversion_event_id.to_string(),
                "user": {
                    "email": sha256_hex("mary.jones@example.com"),
                    "phone": sha256_hex("+493098765432"),
                    "external_id": sha256_hex("crm-42"),
                    "ttclid": "E.C.P.tt-click-1",
                    "ttp": "2kQx-cookie",
                    "ip": "203.0.113.9",
                    "user_agent": "Mozilla/5.0 (Test)"
                },
                "properties": {"value": 49.99, "currency": "EUR"}
            }]
        })
    );

    // Rated again at another price: TikTok keeps the first value, so it hears nothing.
    s.rated_again_at_another_price(lead, IntegrationKind::Tiktok)
        .await;
}

#[tokio::test]
async fn answer_codes_are_sorted_into_retry_or_failure_without_the_token() {
    let s = setup().await;
    // Too many requests (in a 200 answer, as TikTok gives its codes): tried again.
    s.mock.push(MockResponse::json(
        200,
        json!({"code": 40100, "message": "Too many requests", "request_id": "r1"}),
    ));
    let slowed = s.rated(lead()).await;
    let record =
        s.f.run_until_done(&worker(&s.f.store, fast()), slowed)
            .await;
    assert_eq!(
        delivery(&record, IntegrationKind::Tiktok),
        (
            DeliveryState::Delivered,
            vec![
                (AttemptOutcome::Retry, Some(200)),
                (AttemptOutcome::Delivered, Some(200))
            ]
        )
    );
    let sent = s.mock.requests();
    assert_eq!(
        sent[0].json()["data"],
        sent[1].json()["data"],
        "the same event"
    );

    // A refused token: failed for good, in TikTok's words, the token masked.
    s.mock.push(MockResponse::json(
        200,
        json!({"code": 40105, "message": format!("Access token {TOKEN} is invalid"), "request_id": "r2"}),
    ));
    let refused = s.rated(another_person(1)).await;
    let record =
        s.f.run_until_done(&worker(&s.f.store, fast()), refused)
            .await;
    let (delivery, attempts) = delivery_of(&record, IntegrationKind::Tiktok);
    assert_eq!(delivery.state, DeliveryState::Failed);
    assert_eq!(
        attempts.last().and_then(|a| a.error.as_deref()),
        Some("TikTok error 40105: Access token *** is invalid")
    );
}

#[tokio::test]
async fn a_lead_tiktok_cannot_match_is_skipped_with_the_reason() {
    let s = setup().await;
    let lead = s
        .rated(json!({"userData": {"firstName": "Ada"}, "attributionData": {"fbp": "fb.1.2.3"}}))
        .await;
    let record = s.f.run_until_done(&worker(&s.f.store, fast()), lead).await;
    let (delivery, _) = delivery_of(&record, IntegrationKind::Tiktok);
    assert_eq!(delivery.state, DeliveryState::Skipped);
    assert_eq!(
        delivery.detail.as_deref(),
        Some(
            "The lead has no email, phone, TikTok click id (ttclid) or TikTok cookie (_ttp), so TikTok cannot match the conversion to a person"
        )
    );
    assert!(s.mock.requests().is_empty());
}

#[tokio::test]
async fn a_batch_tiktok_refuses_for_one_event_is_halved_until_that_event_is_alone() {
    let s = setup().await;
    let accepted = rules::tiktok(&s.mock);
    let mut people: Vec<serde_json::Value> = (0..4).map(another_person).collect();
    people[1]["userData"]["email"] = json!(rules::REFUSED);
    let mut leads = Vec::new();
    for person in people {
        leads.push(s.rated(person).await);
    }
    assert!(worker(&s.f.store, fast()).run_once().await.unwrap());

    // The four refused; of their halves the first refused (its two then go alone) and the
    // second taken.
    let sizes: Vec<usize> = s
        .mock
        .requests()
        .iter()
        .map(|r| r.json()["data"].as_array().map_or(0, Vec::len))
        .collect();
    assert_eq!(sizes, [4, 2, 1, 1, 2]);
    let mut records = Vec::new();
    for &lead in &leads {
        records.push(s.f.job(lead).await);
    }
    let mut good: Vec<String> = [0, 2, 3]
        .iter()
        .map(|&n| records[n].job.conversion_event_id.to_string())
        .collect();
    good.sort();
    let mut took = accepted.lock().unwrap().clone();
    took.sort();
    assert_eq!(took, good, "each good conversion once");
    for (n, record) in records.iter().enumerate() {
        let state = delivery(record, IntegrationKind::Tiktok).0;
        match n {
            1 => assert_eq!(state, DeliveryState::Failed),
            _ => assert_eq!(state, DeliveryState::Delivered),
        }
    }
    let refused = &attempts_of(&records[1], IntegrationKind::Tiktok)[0];
    assert_eq!(
        refused.error.as_deref(),
        Some("TikTok error 40002: Invalid value for user.email")
    );
    assert_eq!(refused.batch.unwrap().size, 1, "the bad event ends alone");
}
