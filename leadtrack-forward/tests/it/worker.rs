//! The worker against local mock platforms: exact payloads, retries, permanent failures,
//! timeouts, OAuth token handling, crashes, shutdown, and what `lead_jobs` records.

use std::time::Duration;

use crate::common::*;
use chrono::Utc;
use leadtrack_core::activity::Activity;
use leadtrack_core::integration::{IntegrationSettings, MetaActionSource, MetaSettings, Secret};
use leadtrack_core::project::ProjectSettings;
use leadtrack_core::request::StatusUpdate;
use leadtrack_core::testkit::data;
use leadtrack_core::types::{
    AttemptOutcome, Consent, ConsentStatus, ConversionId, DeliveryState, IntegrationKind, JobState,
    LeadIdentifier, LeadStatus,
};
use leadtrack_core::{Admin, LeadStore};
use leadtrack_forward::{RetryPolicy, WorkerConfig};
use leadtrack_platforms::normalize::sha256_hex;
use leadtrack_platforms::testkit::MockResponse;
use leadtrack_platforms::webhook;
use serde_json::json;

#[tokio::test]
async fn every_platform_receives_its_exact_payload_and_the_lead_is_rated() {
    let f = fixture().await;
    let lead = f.rated_lead(full_lead(), None).await;
    let record = f.run_until_done(&worker(&f.store, fast()), lead).await;
    let event_id = record.job.event_id.to_string();
    let created = record.job.created_at;

    let ga4 = f.platforms.ga4.requests();
    assert_eq!(ga4.len(), 1);
    assert_eq!(
        (ga4[0].method.as_str(), ga4[0].path.as_str()),
        ("POST", "/mp/collect")
    );
    assert_eq!(ga4[0].query("measurement_id"), Some("G-TEST123"));
    assert_eq!(ga4[0].query("api_secret"), Some(GA4_SECRET));
    assert_eq!(
        ga4[0].json(),
        json!({
            "client_id": "123456789.1700000000",
            "timestamp_micros": created.timestamp_micros(),
            "user_data": {
                "sha256_email_address": [sha256_hex("adalovelace@gmail.com")],
                "sha256_phone_number": [sha256_hex("+49301234567")]
            },
            "events": [{"name": "qualify_lead", "params": {
                "session_id": 1_700_000_123_i64, "value": 49.99, "currency": "EUR", "transaction_id": event_id
            }}]
        })
    );

    let meta = f.platforms.meta.requests();
    assert_eq!(meta.len(), 1);
    assert_eq!(meta[0].path, "/v23.0/1234567890/events");
    assert_eq!(meta[0].query("access_token"), Some(META_TOKEN));
    assert_eq!(
        meta[0].json(),
        json!({
            "data": [{
                "event_name": "QualifiedLead",
                "event_time": created.timestamp(),
                "action_source": "other",
                "event_id": event_id,
                "user_data": {
                    "em": [sha256_hex("ada.lovelace@gmail.com")],
                    "ph": [sha256_hex("49301234567")],
                    "fn": [sha256_hex("ada")],
                    "ln": [sha256_hex("lovelace")],
                    "fbp": "fb.1.1700000000000.987654321",
                    "fbc": "fb.1.1700000001000.TESTFBCLID",
                    "client_ip_address": "203.0.113.9",
                    "client_user_agent": "Mozilla/5.0 (Test)"
                },
                "custom_data": {"value": 49.99, "currency": "EUR"}
            }],
            "test_event_code": "TEST123"
        })
    );

    let token = f.platforms.token.requests();
    assert_eq!(token.len(), 1);
    assert_eq!(token[0].path, "/token");
    assert_eq!(
        token[0].header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    assert_eq!(
        token[0].form(),
        form(&format!(
            "grant_type=refresh_token&client_id=ads-client&client_secret={ADS_CLIENT_SECRET}&refresh_token={ADS_REFRESH_TOKEN}"
        ))
    );
    let ads = f.platforms.ads.requests();
    assert_eq!(ads.len(), 1);
    assert_eq!(ads[0].path, "/v1/events:ingest");
    assert_eq!(ads[0].header("authorization"), Some("Bearer ya29.first"));
    assert_eq!(
        ads[0].json(),
        json!({
            "destinations": [{
                "operatingAccount": {"accountType": "GOOGLE_ADS", "accountId": "1234567890"},
                "productDestinationId": "987654"
            }],
            "encoding": "HEX",
            "events": [{
                "transactionId": event_id,
                "eventTimestamp": leadtrack_core::time::format(&created),
                "eventSource": "WEB",
                "adIdentifiers": {"gclid": "TESTGCLID"},
                "conversionValue": 49.99,
                "currency": "EUR",
                "userData": {"userIdentifiers": [
                    {"emailAddress": sha256_hex("adalovelace@gmail.com")},
                    {"phoneNumber": sha256_hex("+49301234567")}
                ]}
            }]
        })
    );

    let hook = f.platforms.hook.requests();
    assert_eq!(hook.len(), 1);
    assert_eq!(hook[0].path, "/hooks/leadtrack");
    assert_eq!(
        hook[0].header(webhook::EVENT_HEADER),
        Some(event_id.as_str())
    );
    let body = hook[0].json();
    assert_eq!(body["type"], "lead.converted");
    assert_eq!(body["id"], event_id);
    assert_eq!(body["jobId"], record.job.id.0);
    assert_eq!(body["occurredAt"], leadtrack_core::time::format(&created));
    assert_eq!(body["conversionId"], f.label.to_string());
    assert_eq!(
        body["label"],
        json!({"id": f.label, "name": "Qualified", "markAsDone": true})
    );
    assert_eq!(
        (body["price"].as_i64(), body["currency"].as_str()),
        (Some(4999), Some("EUR"))
    );
    assert_eq!(
        (body["lead"]["id"].as_i64(), body["lead"]["email"].as_str()),
        (Some(lead.0), Some("Ada.Lovelace@Gmail.com"))
    );
    let timestamp = hook[0].assert_signed(WEBHOOK_SECRET);
    assert!((Utc::now().timestamp() - timestamp).abs() < 60);

    assert_eq!(f.status(lead).await, LeadStatus::Rated);
    // The fixture connects these four (Microsoft and LinkedIn have their own tests).
    for kind in [
        IntegrationKind::GoogleAds,
        IntegrationKind::Ga4,
        IntegrationKind::Meta,
        IntegrationKind::Webhook,
    ] {
        let (state, attempts) = delivery(&record, kind);
        assert_eq!(state, DeliveryState::Delivered, "{kind}");
        assert_eq!(attempts.len(), 1, "{kind}");
        assert_eq!(attempts[0].0, AttemptOutcome::Delivered);
    }
    assert_eq!(delivery(&record, IntegrationKind::Ga4).1[0].1, Some(204));
}

/// The documented normalisation rules, end to end: what a lead holds as sent by older tags
/// and people, and what each platform receives.
#[tokio::test]
async fn raw_cookie_values_and_written_numbers_reach_each_platform_in_its_documented_form() {
    let f = fixture().await;
    let meta = |action_source| MetaSettings {
        pixel_id: "1234567890".into(),
        access_token: Secret::new(META_TOKEN),
        api_version: "v23.0".into(),
        test_event_code: None,
        action_source,
        base_url: Some(f.platforms.meta.url().to_owned()),
    };
    f.store
        .set_integration(
            f.project.id,
            IntegrationSettings::Meta(meta(MetaActionSource::Website)),
            Utc::now(),
        )
        .await
        .unwrap();
    let lead = f
        .rated_lead(
            json!({
                "userData": {"email": " Mary.Jones+ads@GoogleMail.com", "phone": "+49 (0)30 98765432"},
                "attributionData": {"gclid": "GCL.1731000000.Cj0KCQiA-raw", "cid": "GA1.1.123.456",
                                    "fbc": "IwAR2F4-dbP0l7Mn"},
                "deviceData": {"userAgent": "Mozilla/5.0 (Test)"},
                "lt_channelflow": r#"[{"t":1731000000000,"ch":{"s":"google","m":"cpc"},"lp":"https://shop.example/a"},{"t":1731000100000,"ch":{"s":"facebook","m":"cpc"},"lp":"https://shop.example/offer?fbclid=IwAR2F4-dbP0l7Mn"}]"#
            }),
            None,
        )
        .await;
    let record = f.run_until_done(&worker(&f.store, fast()), lead).await;
    let created = f
        .store
        .find_lead(f.project.id, &LeadIdentifier::LeadId(lead))
        .await
        .unwrap()
        .created_at;

    // Google: Gmail without dots and the plus suffix; E.164 without the (0).
    let ga4 = f.platforms.ga4.requests()[0].json();
    assert_eq!(ga4["client_id"], "123.456");
    assert_eq!(
        ga4["user_data"],
        json!({
            "sha256_email_address": [sha256_hex("maryjones@googlemail.com")],
            "sha256_phone_number": [sha256_hex("+493098765432")]
        })
    );
    let ads = f.platforms.ads.requests()[0].json();
    assert_eq!(
        ads["events"][0]["adIdentifiers"],
        json!({"gclid": "Cj0KCQiA-raw"})
    );
    assert_eq!(
        ads["events"][0]["userData"]["userIdentifiers"],
        json!([
            {"emailAddress": sha256_hex("maryjones@googlemail.com")},
            {"phoneNumber": sha256_hex("+493098765432")}
        ])
    );
    // Meta: the address as written (lowercased), digits with the country code, the bare
    // fbclid as fb.1.<when the lead arrived>.<fbclid>, and the page of a website event.
    let event = &f.platforms.meta.requests()[0].json()["data"][0];
    assert_eq!(event["action_source"], "website");
    assert_eq!(
        event["event_source_url"],
        "https://shop.example/offer?fbclid=IwAR2F4-dbP0l7Mn"
    );
    assert_eq!(
        event["user_data"]["em"],
        json!([sha256_hex("mary.jones+ads@googlemail.com")])
    );
    assert_eq!(
        event["user_data"]["ph"],
        json!([sha256_hex("493098765432")])
    );
    assert_eq!(
        event["user_data"]["fbc"],
        format!("fb.1.{}.IwAR2F4-dbP0l7Mn", created.timestamp_millis())
    );
    assert_eq!(record.job.state, JobState::Done);

    // An Italian number keeps its 0; a number no plan allows is not sent at all.
    let f = fixture().await;
    f.store
        .update_project(
            f.project.id,
            ProjectSettings {
                region: Some(Some("IT".into())),
                ..ProjectSettings::default()
            },
        )
        .await
        .unwrap();
    // Two people, so that the second is no duplicate of the first.
    for (email, phone) in [("a@b.it", "06 6982 1234"), ("c@d.it", "12345")] {
        let lead = f
            .rated_lead(
                json!({"userData": {"email": email, "phone": phone},
                       "attributionData": {"gclid": "G", "cid": "1.2", "fbclid": "F"}}),
                None,
            )
            .await;
        f.run_until_done(&worker(&f.store, fast()), lead).await;
    }
    let ga4 = f.platforms.ga4.requests();
    assert_eq!(
        ga4[0].json()["user_data"]["sha256_phone_number"],
        json!([sha256_hex("+390669821234")])
    );
    assert_eq!(ga4[1].json()["user_data"].get("sha256_phone_number"), None);
    let meta = f.platforms.meta.requests();
    assert_eq!(
        meta[0].json()["data"][0]["user_data"]["ph"],
        json!([sha256_hex("390669821234")])
    );
    assert_eq!(meta[1].json()["data"][0]["user_data"].get("ph"), None);
    assert_eq!(meta[1].json()["data"][0]["action_source"], "other");
}

/// Consent, as the lead gives it or else as the project's default: Google hears it, and a
/// denied `adUserData` sends Google click ids only.
#[tokio::test]
async fn consent_reaches_google_and_denied_user_data_sends_click_ids_only() {
    let f = fixture().await;
    f.store
        .update_project(
            f.project.id,
            ProjectSettings {
                default_consent: Some(Consent {
                    ad_user_data: Some(ConsentStatus::Granted),
                    ad_personalization: Some(ConsentStatus::Denied),
                }),
                ..ProjectSettings::default()
            },
        )
        .await
        .unwrap();
    // Two people, so that the second is no duplicate of the first.
    let mut denied = another_person(1);
    denied["consent"] = json!({"adUserData": "denied"});
    for body in [denied, full_lead()] {
        let lead = f.rated_lead(body, None).await;
        f.run_until_done(&worker(&f.store, fast()), lead).await;
    }
    let ga4 = f.platforms.ga4.requests();
    let ads = f.platforms.ads.requests();
    let meta = f.platforms.meta.requests();
    assert_eq!((ga4.len(), ads.len(), meta.len()), (2, 2, 2));

    // The lead's own signal wins; the project's fills the one it does not give.
    let (ga4_denied, ads_denied) = (ga4[0].json(), ads[0].json()["events"][0].clone());
    assert_eq!(
        ga4_denied["consent"],
        json!({"ad_user_data": "DENIED", "ad_personalization": "DENIED"})
    );
    assert_eq!(ga4_denied.get("user_data"), None);
    assert_eq!(ga4_denied["client_id"], "123456789.1700000000");
    assert_eq!(
        ads_denied["consent"],
        json!({"adUserData": "CONSENT_DENIED", "adPersonalization": "CONSENT_DENIED"})
    );
    assert_eq!(ads_denied.get("userData"), None);
    assert_eq!(ads_denied["adIdentifiers"], json!({"gclid": "TESTGCLID"}));

    let (ga4_default, ads_default) = (ga4[1].json(), ads[1].json()["events"][0].clone());
    assert_eq!(
        ga4_default["consent"],
        json!({"ad_user_data": "GRANTED", "ad_personalization": "DENIED"})
    );
    assert_eq!(
        ga4_default["user_data"]["sha256_email_address"],
        json!([sha256_hex("adalovelace@gmail.com")])
    );
    assert_eq!(
        ads_default["consent"],
        json!({"adUserData": "CONSENT_GRANTED", "adPersonalization": "CONSENT_DENIED"})
    );
    assert_eq!(
        ads_default["userData"]["userIdentifiers"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    // Meta is not Google: its consent rules are the advertiser's, and it gets the lead.
    assert_eq!(
        meta[0].json()["data"][0]["user_data"]["em"],
        json!([sha256_hex("ada1.lovelace@gmail.com")])
    );
}

#[tokio::test]
async fn retry_after_is_honoured_the_event_id_is_stable_and_delivered_platforms_are_not_resent() {
    let f = fixture().await;
    f.platforms.hook.push(
        MockResponse::json(429, json!({"error": "slow down"})).with_header("Retry-After", "1"),
    );
    let lead = f.rated_lead(full_lead(), None).await;
    let record = f.run_until_done(&worker(&f.store, fast()), lead).await;

    let hook = f.platforms.hook.requests();
    assert_eq!(hook.len(), 2);
    assert_eq!(
        hook[0].header(webhook::EVENT_HEADER),
        hook[1].header(webhook::EVENT_HEADER)
    );
    assert_eq!(hook[0].json()["id"], hook[1].json()["id"]);
    assert!(
        hook[1].received - hook[0].received >= Duration::from_millis(950),
        "Retry-After: 1 was honoured"
    );
    let (state, attempts) = delivery(&record, IntegrationKind::Webhook);
    assert_eq!(
        (state, attempts),
        (
            DeliveryState::Delivered,
            vec![
                (AttemptOutcome::Retry, Some(429)),
                (AttemptOutcome::Delivered, Some(200))
            ]
        )
    );
    let webhook_attempts = attempts_of(&record, IntegrationKind::Webhook);
    let retry_at = webhook_attempts[0].retry_at.unwrap();
    assert!(retry_at - webhook_attempts[0].at >= chrono::Duration::milliseconds(1000));
    assert_eq!(
        webhook_attempts[0].error.as_deref(),
        Some(r#"HTTP 429: {"error":"slow down"}"#)
    );
    for mock in [&f.platforms.ga4, &f.platforms.meta, &f.platforms.ads] {
        assert_eq!(
            mock.requests().len(),
            1,
            "a delivered conversion is never sent again"
        );
    }
    assert_eq!(f.status(lead).await, LeadStatus::Rated);
}

#[tokio::test]
async fn server_errors_are_retried_and_client_errors_fail_at_once() {
    let f = fixture().await;
    f.platforms.meta.push(MockResponse::json(
        500,
        json!({"error": {"message": "Service temporarily unavailable", "code": 2}}),
    ));
    f.platforms
        .ga4
        .set_default(MockResponse::json(400, json!({"error": "bad request"})));
    f.platforms.ads.push(MockResponse::json(
        503,
        json!({"error": {"code": 503, "status": "UNAVAILABLE", "message": "try later"}}),
    ));
    let lead = f.rated_lead(full_lead(), None).await;
    let record = f.run_until_done(&worker(&f.store, fast()), lead).await;

    assert_eq!(
        delivery(&record, IntegrationKind::Meta),
        (
            DeliveryState::Delivered,
            vec![
                (AttemptOutcome::Retry, Some(500)),
                (AttemptOutcome::Delivered, Some(200))
            ]
        )
    );
    assert_eq!(
        delivery(&record, IntegrationKind::GoogleAds),
        (
            DeliveryState::Delivered,
            vec![
                (AttemptOutcome::Retry, Some(503)),
                (AttemptOutcome::Delivered, Some(200))
            ]
        )
    );
    assert_eq!(
        delivery(&record, IntegrationKind::Ga4),
        (
            DeliveryState::Failed,
            vec![(AttemptOutcome::Failed, Some(400))]
        )
    );
    assert_eq!(f.platforms.ga4.requests().len(), 1, "a 400 is not retried");
    let ads_error = &attempts_of(&record, IntegrationKind::GoogleAds)[0];
    assert_eq!(
        ads_error.error.as_deref(),
        Some("HTTP 503: UNAVAILABLE try later")
    );
    // Every delivery ended, one of them failed for good: the job is done and the lead rated.
    assert_eq!(f.status(lead).await, LeadStatus::Rated);

    // The lead's history has the rating, by whoever rated, then every attempt in order.
    let history = f.store.lead_activity(f.project.id, lead).await.unwrap();
    assert!(matches!(history[0].activity, Activity::Created));
    assert!(
        matches!(history[1].activity, Activity::Rated { job_id, .. } if job_id == record.job.id)
    );
    assert_eq!(history[1].by, Some(rater()));
    for (delivery, attempts) in &record.deliveries {
        let recorded: Vec<_> = history
            .iter()
            .filter_map(|event| match &event.activity {
                Activity::Delivery {
                    integration,
                    outcome,
                    http_status,
                    error,
                    ..
                } if *integration == delivery.integration => {
                    assert_eq!(event.by, None, "deliveries are the service's");
                    Some((*outcome, *http_status, error.clone(), event.at))
                }
                _ => None,
            })
            .collect();
        let made: Vec<_> = attempts
            .iter()
            .map(|a| (a.outcome, a.http_status, a.error.clone(), a.at))
            .collect();
        assert_eq!(recorded, made, "{}", delivery.integration);
    }
}

#[tokio::test]
async fn meta_error_codes_decide_between_retry_and_failure() {
    let f = fixture().await;
    f.platforms.meta.push(MockResponse::json(400, json!({"error": {"message": "User request limit reached", "type": "OAuthException", "code": 17, "fbtrace_id": "x"}})));
    f.platforms.meta.push(MockResponse::json(400, json!({"error": {"message": format!("Invalid OAuth access token {META_TOKEN}"), "type": "OAuthException", "code": 190, "fbtrace_id": "y"}})));
    let lead = f.rated_lead(full_lead(), None).await;
    let record = f.run_until_done(&worker(&f.store, fast()), lead).await;
    assert_eq!(
        delivery(&record, IntegrationKind::Meta),
        (
            DeliveryState::Failed,
            vec![
                (AttemptOutcome::Retry, Some(400)),
                (AttemptOutcome::Failed, Some(400))
            ]
        )
    );
    let attempts = attempts_of(&record, IntegrationKind::Meta);
    assert_eq!(
        attempts[0].error.as_deref(),
        Some("Meta error 17: User request limit reached")
    );
    assert_eq!(
        attempts[1].error.as_deref(),
        Some("Meta error 190: Invalid OAuth access token ***")
    );
}

#[tokio::test]
async fn slow_platforms_time_out_and_are_retried() {
    let f = fixture().await;
    f.platforms
        .hook
        .push(MockResponse::json(200, json!({})).delayed(Duration::from_secs(3)));
    let lead = f.rated_lead(full_lead(), None).await;
    let config = WorkerConfig {
        request_timeout: Duration::from_millis(500),
        ..fast()
    };
    let record = f.run_until_done(&worker(&f.store, config), lead).await;
    let attempts = attempts_of(&record, IntegrationKind::Webhook);
    assert_eq!(attempts.len(), 2);
    assert_eq!(
        (
            attempts[0].outcome,
            attempts[0].http_status,
            attempts[0].error.as_deref()
        ),
        (AttemptOutcome::Retry, None, Some("timed out"))
    );
    assert_eq!(attempts[1].outcome, AttemptOutcome::Delivered);
}

#[tokio::test]
async fn retries_stop_at_the_attempt_limit() {
    let f = fixture().await;
    f.platforms.hook.set_default(MockResponse::empty(502));
    let lead = f.rated_lead(full_lead(), None).await;
    let config = WorkerConfig {
        retry: RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(50),
            multiplier: 2,
            jitter: false,
            ..RetryPolicy::default()
        },
        ..fast()
    };
    let record = f.run_until_done(&worker(&f.store, config), lead).await;
    assert_eq!(
        delivery(&record, IntegrationKind::Webhook),
        (
            DeliveryState::Failed,
            vec![
                (AttemptOutcome::Retry, Some(502)),
                (AttemptOutcome::Retry, Some(502)),
                (AttemptOutcome::Failed, Some(502))
            ]
        )
    );
    let attempts = attempts_of(&record, IntegrationKind::Webhook);
    assert_eq!(
        attempts[2].error.as_deref(),
        Some("HTTP 502:  (gave up after 3 attempts)")
    );
    // The waits doubled: 50 ms, then 100 ms.
    let first = attempts[0].retry_at.unwrap() - attempts[0].at;
    let second = attempts[1].retry_at.unwrap() - attempts[1].at;
    assert_eq!(
        (first.num_milliseconds(), second.num_milliseconds()),
        (50, 100)
    );
    assert_eq!(f.platforms.hook.requests().len(), 3);
    assert_eq!(f.status(lead).await, LeadStatus::Rated);
}

#[tokio::test]
async fn google_tokens_are_cached_and_refreshed_once_on_401() {
    let f = fixture().await;
    let w = worker(&f.store, fast());
    let first = f.rated_lead(full_lead(), None).await;
    f.run_until_done(&w, first).await;
    let second = f.rated_lead(another_person(1), None).await;
    f.run_until_done(&w, second).await;
    assert_eq!(
        f.platforms.token.requests().len(),
        1,
        "the token is cached between jobs"
    );
    assert_eq!(f.platforms.ads.requests().len(), 2);

    f.platforms.ads.push(MockResponse::json(
        401,
        json!({"error": {"code": 401, "status": "UNAUTHENTICATED", "message": "expired"}}),
    ));
    f.platforms.token.push(MockResponse::json(
        200,
        json!({"access_token": "ya29.second", "expires_in": 3599}),
    ));
    let third = f.rated_lead(another_person(2), None).await;
    let record = f.run_until_done(&w, third).await;
    assert_eq!(f.platforms.token.requests().len(), 2, "refreshed once");
    let ads = f.platforms.ads.requests();
    assert_eq!(ads.len(), 4);
    assert_eq!(ads[2].header("authorization"), Some("Bearer ya29.first"));
    assert_eq!(ads[3].header("authorization"), Some("Bearer ya29.second"));
    assert_eq!(
        delivery(&record, IntegrationKind::GoogleAds),
        (
            DeliveryState::Delivered,
            vec![(AttemptOutcome::Delivered, Some(200))]
        )
    );
}

#[tokio::test]
async fn concurrent_deliveries_share_one_token_refresh() {
    let f = fixture().await;
    f.platforms.token.set_default(
        MockResponse::json(
            200,
            json!({"access_token": "ya29.first", "expires_in": 3599}),
        )
        .delayed(Duration::from_millis(300)),
    );
    let mut leads = Vec::new();
    for _ in 0..6 {
        leads.push(f.rated_lead(full_lead(), None).await);
    }
    let w = worker(
        &f.store,
        WorkerConfig {
            concurrency: 6,
            ..fast()
        },
    );
    // Six delivery loops at once, as `serve` runs them.
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(w.run(async {
        let _ = stopped.await;
    }));
    for lead in leads {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while f.job(lead).await.job.state != JobState::Done {
            assert!(
                std::time::Instant::now() < deadline,
                "the jobs did not finish"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let _ = stop.send(());
    running.await.unwrap();
    assert_eq!(f.platforms.ads.requests().len(), 6);
    assert_eq!(
        f.platforms.token.requests().len(),
        1,
        "six deliveries at once asked for one token"
    );
}

#[tokio::test]
async fn a_rejected_refresh_token_fails_for_good_without_leaking_it() {
    let f = fixture().await;
    f.platforms.token.set_default(MockResponse::json(400, json!({"error": "invalid_grant", "error_description": format!("Token {ADS_REFRESH_TOKEN} has been expired or revoked.")})));
    let lead = f.rated_lead(full_lead(), None).await;
    let record = f.run_until_done(&worker(&f.store, fast()), lead).await;
    let attempts = attempts_of(&record, IntegrationKind::GoogleAds);
    assert_eq!(attempts.len(), 1);
    assert_eq!(
        (attempts[0].outcome, attempts[0].http_status),
        (AttemptOutcome::Failed, Some(400))
    );
    let error = attempts[0].error.as_deref().unwrap();
    assert!(
        error.starts_with("OAuth token refresh: HTTP 400") && error.contains("invalid_grant"),
        "{error}"
    );
    assert!(!error.contains(ADS_REFRESH_TOKEN), "{error}");
    assert!(f.platforms.ads.requests().is_empty());
}

#[tokio::test]
async fn ga4_validation_mode_fails_on_validation_messages() {
    let f = fixture_with(true).await;
    f.platforms.ga4.set_default(MockResponse::json(200, json!({"validationMessages": [{
        "fieldPath": "events", "description": "Event at index: [0] has invalid name [qualify-lead].", "validationCode": "NAME_INVALID"
    }]})));
    let lead = f.rated_lead(full_lead(), None).await;
    let record = f.run_until_done(&worker(&f.store, fast()), lead).await;
    assert_eq!(f.platforms.ga4.requests()[0].path, "/debug/mp/collect");
    let attempts = attempts_of(&record, IntegrationKind::Ga4);
    assert_eq!(attempts[0].outcome, AttemptOutcome::Failed);
    assert_eq!(
        attempts[0].error.as_deref(),
        Some(
            "GA4 validation: NAME_INVALID events: Event at index: [0] has invalid name [qualify-lead]."
        )
    );
}

#[tokio::test]
async fn leads_without_the_data_a_platform_needs_are_skipped_with_a_reason() {
    let f = fixture().await;
    let lead = f
        .rated_lead(json!({"userData": {"firstName": "Nobody"}}), None)
        .await;
    let record = f.run_until_done(&worker(&f.store, fast()), lead).await;
    for kind in [
        IntegrationKind::GoogleAds,
        IntegrationKind::Ga4,
        IntegrationKind::Meta,
    ] {
        let (found, attempts) = delivery_of(&record, kind);
        assert_eq!(found.state, DeliveryState::Skipped, "{kind}");
        assert!(attempts.is_empty() && found.detail.is_some(), "{kind}");
    }
    assert_eq!(
        delivery(&record, IntegrationKind::Webhook).0,
        DeliveryState::Delivered
    );
    assert!(
        f.platforms.ga4.requests().is_empty()
            && f.platforms.meta.requests().is_empty()
            && f.platforms.ads.requests().is_empty()
    );
}

#[tokio::test]
async fn lost_follows_the_lost_mapping_and_ends_lost() {
    let f = fixture().await;
    let lead = f.rated_lead(full_lead(), Some(ConversionId::Lost)).await;
    let record = f.run_until_done(&worker(&f.store, fast()), lead).await;
    assert_eq!(
        record.deliveries.len(),
        1,
        "by default only the webhook hears of lost leads"
    );
    let hook = f.platforms.hook.requests();
    assert_eq!(
        (
            hook[0].json()["type"].as_str(),
            hook[0].json()["label"].is_null()
        ),
        (Some("lead.lost"), true)
    );
    assert_eq!(f.status(lead).await, LeadStatus::Lost);
}

#[tokio::test]
async fn a_worker_killed_mid_delivery_is_taken_over_with_the_same_event_id() {
    let f = fixture().await;
    f.platforms
        .hook
        .push(MockResponse::json(200, json!({})).delayed(Duration::from_secs(30)));
    let lead = f.rated_lead(full_lead(), None).await;
    let config = WorkerConfig {
        lease: Duration::from_secs(1),
        ..fast()
    };
    let doomed = worker(&f.store, config.clone());
    let running = tokio::spawn(async move { doomed.run_once().await });
    let seen = f.platforms.hook.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(seen.len(), 1, "the first worker reached the webhook");
    running.abort();
    let _ = running.await;
    let midway = f.job(lead).await;
    assert_eq!(
        midway.job.state,
        JobState::Running,
        "nothing was recorded for the killed delivery"
    );

    let record = f.run_until_done(&worker(&f.store, config), lead).await;
    let hook = f.platforms.hook.requests();
    assert_eq!(hook.len(), 2);
    assert_eq!(
        hook[0].header(webhook::EVENT_HEADER),
        hook[1].header(webhook::EVENT_HEADER),
        "receivers can deduplicate"
    );
    let meta = f.platforms.meta.requests();
    assert_eq!(
        meta.iter()
            .map(|r| r.json()["data"][0]["event_id"].clone())
            .collect::<Vec<_>>()
            .len(),
        meta.len()
    );
    assert!(
        meta.iter()
            .all(|r| r.json()["data"][0]["event_id"] == json!(record.job.event_id.to_string()))
    );
    assert_eq!(
        delivery(&record, IntegrationKind::Webhook),
        (
            DeliveryState::Delivered,
            vec![(AttemptOutcome::Delivered, Some(200))]
        )
    );
    assert_eq!(f.status(lead).await, LeadStatus::Rated);
}

#[tokio::test]
async fn shutdown_lets_deliveries_in_flight_finish() {
    let f = fixture().await;
    f.platforms
        .hook
        .push(MockResponse::json(200, json!({})).delayed(Duration::from_millis(800)));
    let lead = f.rated_lead(full_lead(), None).await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(worker(&f.store, fast()).run(async {
        let _ = stopped.await;
    }));
    assert_eq!(
        f.platforms
            .hook
            .wait_for(1, Duration::from_secs(10))
            .await
            .len(),
        1
    );
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the worker stops")
        .unwrap();
    let record = f.job(lead).await;
    assert_eq!(
        record.job.state,
        JobState::Done,
        "the delivery in flight finished"
    );
    assert_eq!(f.status(lead).await, LeadStatus::Rated);
}

#[tokio::test]
async fn a_lead_reset_to_open_while_delivered_stays_open() {
    let f = fixture().await;
    f.platforms
        .hook
        .push(MockResponse::json(200, json!({})).delayed(Duration::from_millis(500)));
    let lead = f.rated_lead(full_lead(), None).await;
    let w = worker(&f.store, fast());
    let running = tokio::spawn(async move { w.run_once().await });
    f.platforms.hook.wait_for(1, Duration::from_secs(10)).await;
    let open = StatusUpdate {
        identifier: LeadIdentifier::LeadId(lead),
        conversion_id: ConversionId::Open,
        price: None,
        note: None,
    };
    f.store
        .update_status(f.project.id, &open, &rater(), Utc::now())
        .await
        .unwrap();
    running.await.unwrap().unwrap();
    assert_eq!(f.job(lead).await.job.state, JobState::Done);
    assert_eq!(f.status(lead).await, LeadStatus::Open);
}

#[tokio::test]
async fn clicks_older_than_90_days_are_not_sent_to_google_ads() {
    let f = fixture().await;
    let long_ago = Utc::now() - chrono::Duration::days(91);
    let lead = f
        .store
        .create_lead(f.project.id, data(full_lead()), long_ago)
        .await
        .unwrap()
        .lead_id;
    let update = StatusUpdate {
        identifier: LeadIdentifier::LeadId(lead),
        conversion_id: ConversionId::Label(f.label),
        price: None,
        note: None,
    };
    let change = f
        .store
        .update_status(f.project.id, &update, &rater(), Utc::now())
        .await
        .unwrap();
    assert_eq!(
        change
            .warnings
            .iter()
            .map(|w| (w.integration, w.field.as_str()))
            .collect::<Vec<_>>(),
        [(IntegrationKind::GoogleAds, "gclid")]
    );
    let record = f.run_until_done(&worker(&f.store, fast()), lead).await;
    let (ads, attempts) = delivery_of(&record, IntegrationKind::GoogleAds);
    assert_eq!(ads.state, DeliveryState::Skipped);
    assert!(attempts.is_empty());
    assert!(
        ads.detail
            .as_deref()
            .unwrap()
            .contains("older than 90 days"),
        "{:?}",
        ads.detail
    );
    assert!(f.platforms.ads.requests().is_empty() && f.platforms.token.requests().is_empty());
    assert_eq!(
        delivery(&record, IntegrationKind::Meta).0,
        DeliveryState::Delivered,
        "other platforms still get it"
    );
}
