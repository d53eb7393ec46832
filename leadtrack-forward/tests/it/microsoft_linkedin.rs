//! Microsoft Advertising and LinkedIn against local mock platforms: the exact requests their
//! documentation asks for, OAuth refresh-token grants, and errors sorted into retry or fail.

use crate::common::*;
use chrono::Utc;
use leadtrack_core::Admin;
use leadtrack_core::integration::{
    IntegrationSettings, LinkedinSettings, MicrosoftAdsSettings, Secret,
};
use leadtrack_core::label::{LabelMapping, NewLabel};
use leadtrack_core::types::{AttemptOutcome, ConversionId, DeliveryState, IntegrationKind};
use leadtrack_platforms::normalize::sha256_hex;
use leadtrack_platforms::testkit::{MockPlatform, MockResponse};
use serde_json::json;

const MS_DEVELOPER_TOKEN: &str = "ms-developer-token-value";
const MS_REFRESH_TOKEN: &str = "ms-refresh-token-value";
const LI_CLIENT_SECRET: &str = "li-client-secret-value";
const LI_REFRESH_TOKEN: &str = "li-refresh-token-value";

/// The shared fixture, with Microsoft Advertising and LinkedIn connected to their own
/// mocks (and a token endpoint for both), and a label mapped to those two only.
struct Setup {
    f: Fixture,
    microsoft: MockPlatform,
    linkedin: MockPlatform,
    tokens: MockPlatform,
    label: uuid::Uuid,
}

async fn setup() -> Setup {
    let f = fixture().await;
    let microsoft =
        MockPlatform::start(MockResponse::took_one(IntegrationKind::MicrosoftAds)).await;
    let linkedin = MockPlatform::start(MockResponse::json(
        200,
        json!({"elements": [{"status": 201}]}),
    ))
    .await;
    let tokens = MockPlatform::start(MockResponse::json(
        200,
        json!({"access_token": "access-1", "expires_in": 3600, "token_type": "Bearer"}),
    ))
    .await;
    for settings in [
        IntegrationSettings::MicrosoftAds(MicrosoftAdsSettings {
            customer_id: "1111".into(),
            account_id: "2222".into(),
            developer_token: Secret::new(MS_DEVELOPER_TOKEN),
            client_id: "ms-client".into(),
            client_secret: None,
            refresh_token: Secret::new(MS_REFRESH_TOKEN),
            token_url: Some(format!("{}/ms-token", tokens.url())),
            base_url: Some(microsoft.url().to_owned()),
        }),
        IntegrationSettings::Linkedin(LinkedinSettings {
            client_id: "li-client".into(),
            client_secret: Secret::new(LI_CLIENT_SECRET),
            refresh_token: Secret::new(LI_REFRESH_TOKEN),
            api_version: "202510".into(),
            token_url: Some(format!("{}/li-token", tokens.url())),
            base_url: Some(linkedin.url().to_owned()),
        }),
    ] {
        f.store
            .set_integration(f.project.id, settings, Utc::now())
            .await
            .unwrap();
    }
    let label = f
        .store
        .create_label(
            f.project.id,
            NewLabel {
                name: "Customer".into(),
                mark_as_done: true,
                mapping: LabelMapping {
                    microsoft_ads_conversion: Some("Offline purchase".into()),
                    linkedin_conversion: Some("987".into()),
                    ..LabelMapping::default()
                },
            },
            Utc::now(),
        )
        .await
        .unwrap()
        .id;
    Setup {
        f,
        microsoft,
        linkedin,
        tokens,
        label,
    }
}

fn lead() -> serde_json::Value {
    json!({
        "userData": {"email": " Mary.Jones+ads@GoogleMail.com", "phone": "030 98765432"},
        "attributionData": {"msclkid": "a1b2c3d4e5f60718293a4b5c6d7e8f90", "li_fat_id": "df3b7a2c-1d4e-4f5a-9b6c-0e1f2a3b4c5d"}
    })
}

#[tokio::test]
async fn each_platform_receives_its_documented_request_with_a_fresh_token() {
    let s = setup().await;
    let lead =
        s.f.rated_lead(lead(), Some(ConversionId::Label(s.label)))
            .await;
    let record = s.f.run_until_done(&worker(&s.f.store, fast()), lead).await;
    let event_id = record.job.event_id.to_string();
    let at = record.job.created_at;
    for kind in [IntegrationKind::MicrosoftAds, IntegrationKind::Linkedin] {
        assert_eq!(
            delivery(&record, kind),
            (
                DeliveryState::Delivered,
                vec![(
                    AttemptOutcome::Delivered,
                    Some(if kind == IntegrationKind::Linkedin {
                        201
                    } else {
                        200
                    })
                )]
            ),
            "{kind}"
        );
    }

    // Microsoft: the refresh-token grant with the Advertising scope, no secret for a
    // public client; then the offline conversion with the account headers.
    let tokens = s.tokens.requests();
    let ms_grant = tokens.iter().find(|r| r.path == "/ms-token").unwrap();
    assert_eq!(
        ms_grant.form(),
        form(&format!(
            "grant_type=refresh_token&client_id=ms-client&refresh_token={MS_REFRESH_TOKEN}&scope=https%3A%2F%2Fads.microsoft.com%2Fmsads.manage+offline_access"
        ))
    );
    let ms = s.microsoft.requests();
    assert_eq!(ms.len(), 1);
    assert_eq!(
        ms[0].path,
        "/CampaignManagement/v13/OfflineConversions/Apply"
    );
    assert_eq!(ms[0].header("authorization"), Some("Bearer access-1"));
    assert_eq!(ms[0].header("developertoken"), Some(MS_DEVELOPER_TOKEN));
    assert_eq!(ms[0].header("customerid"), Some("1111"));
    assert_eq!(ms[0].header("customeraccountid"), Some("2222"));
    assert_eq!(
        ms[0].json(),
        json!({"OfflineConversions": [{
            "ConversionName": "Offline purchase",
            "ConversionTime": leadtrack_core::time::format(&at),
            "MicrosoftClickId": "a1b2c3d4e5f60718293a4b5c6d7e8f90",
            "ConversionValue": 49.99,
            "ConversionCurrencyCode": "EUR",
            "HashedEmailAddress": sha256_hex("mary.jones+ads@googlemail.com"),
            "HashedPhoneNumber": sha256_hex("+493098765432")
        }]})
    );

    // LinkedIn: the grant with the client secret; the versioned headers of a batch; the
    // URN made from the id, milliseconds, the amount as a string, the event id.
    let li_grant = tokens.iter().find(|r| r.path == "/li-token").unwrap();
    assert_eq!(
        li_grant.form(),
        form(&format!(
            "grant_type=refresh_token&client_id=li-client&client_secret={LI_CLIENT_SECRET}&refresh_token={LI_REFRESH_TOKEN}"
        ))
    );
    let li = s.linkedin.requests();
    assert_eq!(li.len(), 1);
    assert_eq!(li[0].path, "/rest/conversionEvents");
    assert_eq!(li[0].header("authorization"), Some("Bearer access-1"));
    assert_eq!(li[0].header("linkedin-version"), Some("202510"));
    assert_eq!(li[0].header("x-restli-protocol-version"), Some("2.0.0"));
    assert_eq!(li[0].header("x-restli-method"), Some("BATCH_CREATE"));
    assert_eq!(
        li[0].json()["elements"][0],
        json!({
            "conversion": "urn:lla:llaPartnerConversion:987",
            "conversionHappenedAt": at.timestamp_millis(),
            "user": {"userIds": [
                {"idType": "SHA256_EMAIL", "idValue": sha256_hex("mary.jones+ads@googlemail.com")},
                {"idType": "LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID", "idValue": "df3b7a2c-1d4e-4f5a-9b6c-0e1f2a3b4c5d"}
            ]},
            "eventId": event_id,
            "conversionValue": {"currencyCode": "EUR", "amount": "49.99"}
        })
    );
}

#[tokio::test]
async fn errors_are_sorted_into_retry_or_failure_without_credentials() {
    let s = setup().await;
    // Microsoft: an internal error (code 0) is retried; an invalid click id fails for good.
    s.microsoft.push(MockResponse::json(
        200,
        json!({"PartialErrors": [{"Code": 0, "ErrorCode": "InternalError", "Message": "try later", "Index": 0}]}),
    ));
    s.microsoft.push(MockResponse::json(
        200,
        json!({"PartialErrors": [{"Code": 5604, "ErrorCode": "OfflineConversionMicrosoftClickIdInvalid", "Message": "bad click id", "Index": 0}]}),
    ));
    // LinkedIn: throttled, then a 400 that names a field.
    s.linkedin.push(MockResponse::json(
        429,
        json!({"status": 429, "message": "slow down"}),
    ));
    s.linkedin.push(MockResponse::json(
        400,
        json!({"status": 400, "serviceErrorCode": 100, "message": "Invalid conversion"}),
    ));
    let lead =
        s.f.rated_lead(lead(), Some(ConversionId::Label(s.label)))
            .await;
    let record = s.f.run_until_done(&worker(&s.f.store, fast()), lead).await;
    assert_eq!(
        delivery(&record, IntegrationKind::MicrosoftAds),
        (
            DeliveryState::Failed,
            vec![
                (AttemptOutcome::Retry, Some(200)),
                (AttemptOutcome::Failed, Some(200))
            ]
        )
    );
    assert_eq!(
        delivery(&record, IntegrationKind::Linkedin),
        (
            DeliveryState::Failed,
            vec![
                (AttemptOutcome::Retry, Some(429)),
                (AttemptOutcome::Failed, Some(400))
            ]
        )
    );
    let ms = attempts_of(&record, IntegrationKind::MicrosoftAds);
    assert_eq!(
        ms[1].error.as_deref(),
        Some("HTTP 200: 5604 OfflineConversionMicrosoftClickIdInvalid: bad click id")
    );
    let li = attempts_of(&record, IntegrationKind::Linkedin);
    assert!(
        li[1]
            .error
            .as_deref()
            .unwrap()
            .contains("Invalid conversion")
    );
    let recorded = format!("{:?}", record.deliveries);
    for secret in [
        MS_DEVELOPER_TOKEN,
        MS_REFRESH_TOKEN,
        LI_CLIENT_SECRET,
        LI_REFRESH_TOKEN,
    ] {
        assert!(!recorded.contains(secret));
    }
}

#[tokio::test]
async fn an_expired_token_is_refreshed_once_and_leads_without_ids_are_skipped() {
    let s = setup().await;
    s.microsoft.push(MockResponse::json(
        401,
        json!({"Type": "AdApiFaultDetail", "Errors": [{"Code": 109, "ErrorCode": "AuthenticationTokenExpired", "Message": "expired"}]}),
    ));
    let first =
        s.f.rated_lead(lead(), Some(ConversionId::Label(s.label)))
            .await;
    let record = s.f.run_until_done(&worker(&s.f.store, fast()), first).await;
    assert_eq!(
        delivery(&record, IntegrationKind::MicrosoftAds).0,
        DeliveryState::Delivered
    );
    let ms_grants = s
        .tokens
        .requests()
        .iter()
        .filter(|r| r.path == "/ms-token")
        .count();
    assert_eq!(ms_grants, 2, "the rejected token was replaced once");

    // No msclkid: Microsoft is skipped with a reason; an email is enough for LinkedIn.
    let second =
        s.f.rated_lead(
            json!({"userData": {"email": "b@example.com"}}),
            Some(ConversionId::Label(s.label)),
        )
        .await;
    let record =
        s.f.run_until_done(&worker(&s.f.store, fast()), second)
            .await;
    let (skipped, _) = delivery_of(&record, IntegrationKind::MicrosoftAds);
    assert_eq!(skipped.state, DeliveryState::Skipped);
    assert!(skipped.detail.as_deref().unwrap().contains("msclkid"));
    assert_eq!(
        delivery(&record, IntegrationKind::Linkedin).0,
        DeliveryState::Delivered
    );
    let last = s.linkedin.requests().pop().unwrap().json();
    assert_eq!(
        last["elements"][0]["user"]["userIds"],
        json!([{"idType": "SHA256_EMAIL", "idValue": sha256_hex("b@example.com")}])
    );
}

#[tokio::test]
async fn a_refresh_token_the_platform_rotates_is_kept_and_used_next() {
    let s = setup().await;
    s.tokens.push(MockResponse::json(
        200,
        json!({"access_token": "access-1", "expires_in": 3600, "refresh_token": "ms-refresh-rotated"}),
    ));
    let first =
        s.f.rated_lead(lead(), Some(ConversionId::Label(s.label)))
            .await;
    let w = worker(&s.f.store, fast());
    s.f.run_until_done(&w, first).await;
    let stored = s.f.store.integrations(s.f.project.id).await.unwrap();
    let rotated = stored.microsoft_ads.unwrap().refresh_token;
    let linkedin = stored.linkedin.unwrap().refresh_token;
    // Which platform's grant got the rotating answer depends on which asked first.
    assert!(
        [rotated.expose(), linkedin.expose()].contains(&"ms-refresh-rotated"),
        "the rotated token is stored"
    );
    let (kept, grant_path, stale) = if rotated.expose() == "ms-refresh-rotated" {
        (rotated, "/ms-token", MS_REFRESH_TOKEN)
    } else {
        (linkedin, "/li-token", LI_REFRESH_TOKEN)
    };
    assert_eq!(kept.expose(), "ms-refresh-rotated");

    // The next refresh of that platform presents the rotated token, not the first one
    // (another person's conversion: the same person's would be the same conversion).
    let mut other = lead();
    other["userData"] = json!({"email": "ann.lee@example.com", "phone": "030 11223344"});
    let second =
        s.f.rated_lead(other, Some(ConversionId::Label(s.label)))
            .await;
    s.f.run_until_done(&worker(&s.f.store, fast()), second)
        .await;
    let grants: Vec<String> = s
        .tokens
        .requests()
        .iter()
        .filter(|r| r.path == grant_path)
        .map(|r| r.text())
        .collect();
    assert_eq!(grants.len(), 2, "{grants:?}");
    assert!(grants[0].contains(&format!("refresh_token={stale}")));
    assert!(grants[1].contains("refresh_token=ms-refresh-rotated"));
}

#[tokio::test]
async fn one_request_carries_several_conversions_and_each_gets_its_own_answer() {
    let s = setup().await;
    // Microsoft names the conversion it could not apply by its index; LinkedIn answers
    // each element with its own status.
    s.microsoft.push(MockResponse::json(
        200,
        json!({"PartialErrors": [{"Code": 5604, "ErrorCode": "OfflineConversionMicrosoftClickIdInvalid", "Message": "bad click id", "Index": 1}]}),
    ));
    s.linkedin.push(MockResponse::json(
        200,
        json!({"elements": [
            {"status": 400, "error": {"message": "conversionHappenedAt is too old"}},
            {"status": 201}]}),
    ));
    let mut leads = Vec::new();
    for n in 0..2 {
        let mut body = lead();
        body["userData"]["email"] = json!(format!("person{n}@example.com"));
        leads.push(
            s.f.rated_lead(body, Some(ConversionId::Label(s.label)))
                .await,
        );
    }
    assert!(worker(&s.f.store, fast()).run_once().await.unwrap());
    assert_eq!(s.microsoft.requests().len(), 1);
    assert_eq!(s.linkedin.requests().len(), 1);
    let conversions = s.microsoft.requests()[0].json();
    assert_eq!(
        conversions["OfflineConversions"].as_array().unwrap().len(),
        2
    );
    let (first, second) = (s.f.job(leads[0]).await, s.f.job(leads[1]).await);
    assert_eq!(
        [
            delivery(&first, IntegrationKind::MicrosoftAds),
            delivery(&second, IntegrationKind::MicrosoftAds),
            delivery(&first, IntegrationKind::Linkedin),
            delivery(&second, IntegrationKind::Linkedin),
        ],
        [
            (
                DeliveryState::Delivered,
                vec![(AttemptOutcome::Delivered, Some(200))]
            ),
            (
                DeliveryState::Failed,
                vec![(AttemptOutcome::Failed, Some(200))]
            ),
            (
                DeliveryState::Failed,
                vec![(AttemptOutcome::Failed, Some(400))]
            ),
            (
                DeliveryState::Delivered,
                vec![(AttemptOutcome::Delivered, Some(201))]
            ),
        ]
    );
    assert_eq!(
        attempts_of(&second, IntegrationKind::MicrosoftAds)[0]
            .error
            .as_deref(),
        Some("HTTP 200: 5604 OfflineConversionMicrosoftClickIdInvalid: bad click id")
    );
    assert_eq!(
        attempts_of(&first, IntegrationKind::Linkedin)[0]
            .error
            .as_deref(),
        Some(r#"HTTP 400: {"message":"conversionHappenedAt is too old"}"#)
    );
    let batch = attempts_of(&first, IntegrationKind::Linkedin)[0]
        .batch
        .unwrap();
    assert_eq!(batch.size, 2);
    assert_eq!(
        attempts_of(&second, IntegrationKind::Linkedin)[0].batch,
        Some(batch)
    );
}
