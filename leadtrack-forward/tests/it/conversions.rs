//! One identity per conversion, against the mock platforms: every platform receives the
//! conversion's id; a rating again with the same label and price sends nothing; a new
//! price is restated where the platform can (Google Ads, Microsoft Advertising, the
//! webhook) and skipped with the reason where it cannot; another label is its own
//! conversion; a retried restatement keeps the ids.

use crate::common::*;
use chrono::{DateTime, Utc};
use leadtrack_core::integration::{
    IntegrationSettings, LinkedinSettings, MicrosoftAdsSettings, PinterestSettings, RedditSettings,
    Secret, SnapchatSettings, TiktokSettings,
};
use leadtrack_core::job::JobRecord;
use leadtrack_core::label::{LabelMapping, NewLabel};
use leadtrack_core::types::{ConversionId, DeliveryAction, DeliveryState, IntegrationKind, LeadId};
use leadtrack_core::{Admin, LeadStore};
use leadtrack_platforms::testkit::{MockPlatform, MockResponse, Recorded};
use serde_json::{Value, json};

/// The fixture, with Microsoft Advertising, LinkedIn, TikTok, Reddit, Pinterest and Snapchat
/// connected too, and a label `Customer` mapped to all ten platforms.
struct Every {
    f: Fixture,
    microsoft: MockPlatform,
    linkedin: MockPlatform,
    tiktok: MockPlatform,
    reddit: MockPlatform,
    pinterest: MockPlatform,
    snapchat: MockPlatform,
    customer: ConversionId,
}

async fn every() -> Every {
    let f = fixture().await;
    let microsoft =
        MockPlatform::start(MockResponse::took_one(IntegrationKind::MicrosoftAds)).await;
    let linkedin = MockPlatform::start(MockResponse::json(
        200,
        json!({"elements": [{"status": 201}]}),
    ))
    .await;
    let tiktok = MockPlatform::start(MockResponse::took_one(IntegrationKind::Tiktok)).await;
    let reddit = MockPlatform::start(MockResponse::took_one(IntegrationKind::Reddit)).await;
    let pinterest = MockPlatform::start(MockResponse::took_one(IntegrationKind::Pinterest)).await;
    let snapchat = MockPlatform::start(MockResponse::took_one(IntegrationKind::Snapchat)).await;
    let token_url = Some(format!("{}/token", f.platforms.token.url()));
    for settings in [
        IntegrationSettings::MicrosoftAds(MicrosoftAdsSettings {
            customer_id: "1111".into(),
            account_id: "2222".into(),
            developer_token: Secret::new("ms-developer-token"),
            client_id: "ms-client".into(),
            client_secret: None,
            refresh_token: Secret::new("ms-refresh-token"),
            token_url: token_url.clone(),
            base_url: Some(microsoft.url().to_owned()),
        }),
        IntegrationSettings::Linkedin(LinkedinSettings {
            client_id: "li-client".into(),
            client_secret: Secret::new("li-client-secret"),
            refresh_token: Secret::new("li-refresh-token"),
            api_version: "202510".into(),
            token_url,
            base_url: Some(linkedin.url().to_owned()),
        }),
        IntegrationSettings::Tiktok(TiktokSettings {
            event_set_id: "7312345678901234567".into(),
            access_token: Secret::new("tt-access-token"),
            test_event_code: None,
            base_url: Some(tiktok.url().to_owned()),
        }),
        IntegrationSettings::Reddit(RedditSettings {
            pixel_id: "a2_pixel".into(),
            access_token: Secret::new("rd-access-token"),
            signed_in: None,
            test_id: None,
            base_url: Some(reddit.url().to_owned()),
        }),
        IntegrationSettings::Pinterest(PinterestSettings {
            ad_account_id: "549755885175".into(),
            access_token: Secret::new("pin-access-token"),
            signed_in: None,
            test: false,
            base_url: Some(pinterest.url().to_owned()),
        }),
        IntegrationSettings::Snapchat(SnapchatSettings {
            pixel_id: "snap-pixel".into(),
            access_token: Secret::new("snap-access-token"),
            base_url: Some(snapchat.url().to_owned()),
        }),
    ] {
        f.store
            .set_integration(f.project.id, settings, Utc::now())
            .await
            .unwrap();
    }
    let mapping = LabelMapping {
        ga4_event: Some("purchase".into()),
        meta_event: Some("Purchase".into()),
        google_ads_action: Some("987654".into()),
        microsoft_ads_conversion: Some("Offline purchase".into()),
        linkedin_conversion: Some("987".into()),
        tiktok_event: Some("Customer".into()),
        reddit_event: Some("Purchase".into()),
        pinterest_event: Some("checkout".into()),
        snapchat_event: Some("PURCHASE".into()),
        webhook: true,
    };
    let customer = f
        .store
        .create_label(
            f.project.id,
            NewLabel::done("Customer", mapping),
            Utc::now(),
        )
        .await
        .unwrap()
        .id;
    Every {
        f,
        microsoft,
        linkedin,
        tiktok,
        reddit,
        pinterest,
        snapchat,
        customer: ConversionId::Label(customer),
    }
}

impl Every {
    /// Every platform's mock, by integration, in [`IntegrationKind`] order.
    fn mocks(&self) -> [(IntegrationKind, &MockPlatform); 10] {
        let p = &self.f.platforms;
        [
            (IntegrationKind::GoogleAds, &p.ads),
            (IntegrationKind::Ga4, &p.ga4),
            (IntegrationKind::Meta, &p.meta),
            (IntegrationKind::MicrosoftAds, &self.microsoft),
            (IntegrationKind::Linkedin, &self.linkedin),
            (IntegrationKind::Tiktok, &self.tiktok),
            (IntegrationKind::Reddit, &self.reddit),
            (IntegrationKind::Pinterest, &self.pinterest),
            (IntegrationKind::Snapchat, &self.snapchat),
            (IntegrationKind::Webhook, &p.hook),
        ]
    }

    /// How many requests each platform has had.
    fn counts(&self) -> Vec<usize> {
        self.mocks()
            .iter()
            .map(|(_, mock)| mock.requests().len())
            .collect()
    }

    /// Rates `lead` again and lets a worker deliver the job; the job.
    async fn rate(&self, lead: LeadId, conversion: ConversionId, price: i64) -> JobRecord {
        self.f.rate(lead, (conversion, price), Utc::now()).await;
        self.f
            .run_until_done(&worker(&self.f.store, fast()), lead)
            .await
    }
}

/// The conversion id `request` (to `kind`'s platform) carries.
fn conversion_id_of(kind: IntegrationKind, request: &Recorded) -> Value {
    let body = request.json();
    match kind {
        IntegrationKind::GoogleAds => body["events"][0]["transactionId"].clone(),
        IntegrationKind::Ga4 => body["events"][0]["params"]["transaction_id"].clone(),
        IntegrationKind::Meta
        | IntegrationKind::Tiktok
        | IntegrationKind::Pinterest
        | IntegrationKind::Snapchat => body["data"][0]["event_id"].clone(),
        IntegrationKind::Reddit => body["data"]["events"][0]["metadata"]["conversion_id"].clone(),
        IntegrationKind::Linkedin => body["elements"][0]["eventId"].clone(),
        IntegrationKind::Webhook => body["conversionEventId"].clone(),
        IntegrationKind::MicrosoftAds => Value::Null,
    }
}

fn lead_body() -> Value {
    let mut body = full_lead();
    body["attributionData"]["msclkid"] = json!("a1b2c3d4e5f60718293a4b5c6d7e8f90");
    body
}

#[tokio::test]
async fn a_conversion_is_sent_once_and_restated_where_the_platform_can() {
    let s = every().await;
    let lead = s.f.rated_lead(lead_body(), Some(s.customer)).await;
    let first = s.f.run_until_done(&worker(&s.f.store, fast()), lead).await;
    let id = first.job.conversion_event_id;
    assert_eq!(id, first.job.event_id, "the first job names the conversion");
    assert_eq!(s.counts(), [1; 10]);
    for (kind, mock) in s.mocks() {
        if kind != IntegrationKind::MicrosoftAds {
            assert_eq!(
                conversion_id_of(kind, &mock.requests()[0]),
                json!(id),
                "{kind}"
            );
        }
    }

    // The same label at the same price: nothing leaves, and each delivery says why.
    let again = s.rate(lead, s.customer, 4999).await;
    assert_eq!(s.counts(), [1; 10], "no platform hears of it twice");
    for (delivery, attempts) in &again.deliveries {
        assert_eq!(
            (delivery.action, delivery.state, attempts.len()),
            (DeliveryAction::Send, DeliveryState::Skipped, 0)
        );
        let detail = delivery.detail.as_deref().unwrap();
        assert!(detail.starts_with("Already sent on "), "{detail}");
    }

    // A new price, with Google Ads failing once: restated where the platform can.
    s.f.platforms.ads.push(MockResponse::empty(503));
    let repriced = s.rate(lead, s.customer, 7500).await;
    assert_eq!(s.counts(), [3, 1, 1, 2, 1, 1, 1, 1, 1, 2]);
    assert_restated(&s, &first, &repriced);

    // Another label is a conversion of its own, sent to every platform it maps.
    let qualified = s.rate(lead, ConversionId::Label(s.f.label), 7500).await;
    let stage = qualified.job.conversion_event_id;
    assert_ne!(stage, id);
    assert_eq!(s.counts(), [4, 2, 2, 2, 1, 1, 1, 1, 1, 3]);
    for (kind, mock) in s.mocks() {
        if matches!(
            kind,
            IntegrationKind::MicrosoftAds
                | IntegrationKind::Linkedin
                | IntegrationKind::Tiktok
                | IntegrationKind::Reddit
                | IntegrationKind::Pinterest
                | IntegrationKind::Snapchat
        ) {
            continue;
        }
        let last = mock.requests().pop().unwrap();
        assert_eq!(conversion_id_of(kind, &last), json!(stage), "{kind}");
    }
}

/// What `repriced` sent: Google Ads the same event with the new value (twice, the retry
/// keeping the transaction id), Microsoft a `Restate` adjustment naming the first
/// rating's time, the webhook `restated: true` with the same conversion id; GA4, Meta and
/// LinkedIn nothing, with the reason.
fn assert_restated(s: &Every, first: &JobRecord, repriced: &JobRecord) {
    let id = json!(first.job.conversion_event_id);
    let first_time = leadtrack_core::time::format(&first.job.converted_at);
    let ads = s.f.platforms.ads.requests();
    for retry in &ads[1..] {
        let event = &retry.json()["events"][0];
        assert_eq!(
            (&event["transactionId"], &event["conversionValue"]),
            (&id, &json!(75.0))
        );
        assert_eq!(event["eventTimestamp"], json!(first_time));
    }
    let ms = s.microsoft.requests().pop().unwrap();
    assert_eq!(
        ms.path,
        "/CampaignManagement/v13/OfflineConversionAdjustments/Apply"
    );
    let adjustment = &ms.json()["OfflineConversionAdjustments"][0];
    let adjusted_at: DateTime<Utc> = adjustment["AdjustmentTime"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(adjusted_at >= first.job.converted_at);
    assert_eq!(
        ms.json(),
        json!({"OfflineConversionAdjustments": [{
            "AdjustmentCurrencyCode": "EUR",
            "AdjustmentTime": adjustment["AdjustmentTime"],
            "AdjustmentType": "Restate",
            "AdjustmentValue": 75.0,
            "ConversionName": "Offline purchase",
            "ConversionTime": first_time,
            "MicrosoftClickId": "a1b2c3d4e5f60718293a4b5c6d7e8f90"
        }]})
    );
    let hook = s.f.platforms.hook.requests().pop().unwrap().json();
    assert_eq!(
        (
            &hook["conversionEventId"],
            &hook["restated"],
            &hook["price"],
            &hook["occurredAt"]
        ),
        (&id, &json!(true), &json!(7500), &json!(first_time))
    );
    assert_eq!(
        hook["id"],
        json!(repriced.job.event_id),
        "the job's own event id"
    );
    for (delivery, _) in &repriced.deliveries {
        let restates = matches!(
            delivery.integration,
            IntegrationKind::GoogleAds | IntegrationKind::MicrosoftAds | IntegrationKind::Webhook
        );
        let state = if restates {
            DeliveryState::Delivered
        } else {
            DeliveryState::Skipped
        };
        assert_eq!(
            (delivery.action, delivery.state),
            (DeliveryAction::Restate, state),
            "{}",
            delivery.integration
        );
    }
}

#[tokio::test]
async fn past_a_platforms_window_for_event_times_its_own_rule_applies() {
    let f = fixture().await;
    let lead = f
        .store
        .create_lead(
            f.project.id,
            leadtrack_core::testkit::data(full_lead()),
            Utc::now(),
        )
        .await
        .unwrap()
        .lead_id;
    let rated_at = Utc::now() - chrono::Duration::days(8);
    f.rate(lead, (ConversionId::Label(f.label), 100), rated_at)
        .await;
    let record = f.run_until_done(&worker(&f.store, fast()), lead).await;
    // Meta refuses events older than 7 days: skipped, with the reason.
    let (meta, _) = delivery_of(&record, IntegrationKind::Meta);
    assert_eq!(meta.state, DeliveryState::Skipped);
    assert!(
        meta.detail
            .as_deref()
            .unwrap()
            .contains("more than 7 days ago")
    );
    assert!(f.platforms.meta.requests().is_empty());
    // GA4 takes timestamps up to 72 hours old: past that the event goes without one.
    let ga4 = f.platforms.ga4.requests()[0].json();
    assert_eq!(ga4["timestamp_micros"], Value::Null, "{ga4}");
    // Google Ads keeps the conversion's own time.
    let ads = f.platforms.ads.requests()[0].json();
    assert_eq!(
        ads["events"][0]["eventTimestamp"],
        json!(leadtrack_core::time::format(&record.job.converted_at))
    );
}

#[tokio::test]
async fn lost_after_a_label_retracts_it_where_the_platform_can() {
    let s = every().await;
    let lead = s.f.rated_lead(lead_body(), Some(s.customer)).await;
    let first = s.f.run_until_done(&worker(&s.f.store, fast()), lead).await;
    let customer_id = json!(first.job.conversion_event_id);
    let first_time = leadtrack_core::time::format(&first.job.converted_at);
    assert_eq!(s.counts(), [1; 10]);

    // The project's `lost` sends to the webhook alone (the default).
    let lost = s.rate(lead, ConversionId::Lost, 4999).await;
    assert_eq!(
        s.counts(),
        [1, 1, 1, 2, 1, 1, 1, 1, 1, 3],
        "Microsoft once, the webhook twice"
    );
    let ms = s.microsoft.requests().pop().unwrap();
    assert_eq!(
        ms.path,
        "/CampaignManagement/v13/OfflineConversionAdjustments/Apply"
    );
    let adjustment = &ms.json()["OfflineConversionAdjustments"][0];
    assert_eq!(
        ms.json(),
        json!({"OfflineConversionAdjustments": [{
            "AdjustmentTime": adjustment["AdjustmentTime"],
            "AdjustmentType": "Retract",
            "ConversionName": "Offline purchase",
            "ConversionTime": first_time,
            "MicrosoftClickId": "a1b2c3d4e5f60718293a4b5c6d7e8f90"
        }]})
    );
    let hooks = s.f.platforms.hook.requests();
    let (own, withdrawn) = (hooks[1].json(), hooks[2].json());
    assert_eq!(
        (&own["type"], &own["conversionId"], own.get("retracted")),
        (&json!("lead.lost"), &json!("lost"), None)
    );
    assert_eq!(
        own["conversionEventId"],
        json!(lost.job.conversion_event_id)
    );
    assert_eq!(
        (
            &withdrawn["conversionEventId"],
            &withdrawn["retracted"],
            &withdrawn["label"]["name"]
        ),
        (&customer_id, &json!(true), &json!("Customer"))
    );
    assert_ne!(withdrawn["id"], own["id"], "each post its own event id");
    let ads = delivery_of(&lost, IntegrationKind::GoogleAds).0.clone();
    assert_eq!(
        (ads.action, ads.state),
        (DeliveryAction::Retract, DeliveryState::Skipped)
    );
    let reason = ads.detail.unwrap();
    assert_eq!(
        reason,
        "Google Ads cannot retract a conversion: it keeps Customer"
    );

    // Rated Customer again after the retraction: the platforms that withdrew it hear it
    // again, as the same conversion; the others already have it.
    let again = s.rate(lead, s.customer, 4999).await;
    assert_eq!(again.job.conversion_event_id, first.job.conversion_event_id);
    for (delivery, _) in &again.deliveries {
        let resent = matches!(
            delivery.integration,
            IntegrationKind::MicrosoftAds | IntegrationKind::Webhook
        );
        let state = if resent {
            DeliveryState::Delivered
        } else {
            DeliveryState::Skipped
        };
        assert_eq!(delivery.state, state, "{}", delivery.integration);
    }
}

#[tokio::test]
async fn each_platform_that_takes_many_events_gets_one_request_and_answers_per_event() {
    let s = every().await;
    // Pinterest answers for each event; it refuses the second.
    s.pinterest.set_default(MockResponse::json(
        200,
        json!({"num_events_received": 3, "num_events_processed": 2, "events": [
            {"status": "processed"},
            {"status": "failed", "error_message": "event_time is in the future"},
            {"status": "processed"}]}),
    ));
    let (mut leads, mut clicks) = (Vec::new(), Vec::new());
    for n in 0..3 {
        let mut body = another_person(n);
        let click = format!("a1b2c3d4e5f60718293a4b5c6d7e8f9{n}");
        body["attributionData"]["msclkid"] = json!(click);
        clicks.push(json!(click));
        leads.push(s.f.rated_lead(body, Some(s.customer)).await);
    }
    assert!(worker(&s.f.store, fast()).run_once().await.unwrap());

    // In IntegrationKind order: Google Ads, GA4, Meta, Microsoft, LinkedIn, TikTok, Reddit,
    // Pinterest, Snapchat, the webhook. GA4 and the webhook take one event a request.
    assert_eq!(s.counts(), [1, 3, 1, 1, 1, 1, 1, 1, 1, 3]);
    let mut ids = Vec::new();
    for &lead in &leads {
        ids.push(json!(
            s.f.job(lead).await.job.conversion_event_id.to_string()
        ));
    }
    for (kind, mock) in s.mocks() {
        let requests = mock.requests();
        if requests.len() != 1 {
            continue;
        }
        let body = requests[0].json();
        let events = match kind {
            IntegrationKind::GoogleAds => &body["events"],
            IntegrationKind::Reddit => &body["data"]["events"],
            IntegrationKind::Linkedin => &body["elements"],
            IntegrationKind::MicrosoftAds => &body["OfflineConversions"],
            _ => &body["data"],
        };
        let sent: Vec<Value> = events
            .as_array()
            .unwrap()
            .iter()
            .map(|event| match kind {
                IntegrationKind::GoogleAds => event["transactionId"].clone(),
                IntegrationKind::Reddit => event["metadata"]["conversion_id"].clone(),
                IntegrationKind::Linkedin => event["eventId"].clone(),
                // Microsoft knows a conversion by its click id, goal and time.
                IntegrationKind::MicrosoftAds => event["MicrosoftClickId"].clone(),
                _ => event["event_id"].clone(),
            })
            .collect();
        let expected = match kind {
            IntegrationKind::MicrosoftAds => clicks.clone(),
            _ => ids.clone(),
        };
        assert_eq!(
            sent, expected,
            "{kind}: the three conversions in one request"
        );
    }
    let pinterest: Vec<DeliveryState> = {
        let mut states = Vec::new();
        for &lead in &leads {
            let job = s.f.job(lead).await;
            states.push(delivery_of(&job, IntegrationKind::Pinterest).0.state);
        }
        states
    };
    assert_eq!(
        pinterest,
        [
            DeliveryState::Delivered,
            DeliveryState::Failed,
            DeliveryState::Delivered
        ]
    );
    let refused = s.f.job(leads[1]).await;
    assert_eq!(
        delivery_of(&refused, IntegrationKind::Pinterest)
            .0
            .detail
            .as_deref(),
        Some("Pinterest refused the event: event_time is in the future")
    );
}
