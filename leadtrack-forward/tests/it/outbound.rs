//! The worker calls only the addresses the operator's rule allows: settings saved while an
//! address was allowed are refused again when sent, with the reason in the deliveries, and
//! a redirect is never followed.

use chrono::Utc;
use leadtrack_core::Admin;
use leadtrack_core::LeadWebhooks as _;
use leadtrack_core::integration::{IntegrationSettings, Secret, WebhookSettings};
use leadtrack_core::target::Targets;
use leadtrack_core::testkit::mock_targets;
use leadtrack_core::types::{AttemptOutcome, DeliveryState, IntegrationKind};
use leadtrack_core::webhook::{NewWebhook, WebhookEvents};
use leadtrack_forward::WorkerConfig;
use leadtrack_platforms::testkit::{MockPlatform, MockResponse};

use crate::common::*;

const LOOPBACK: &str = "the address is loopback (127.0.0.1); the server's operator can allow it";

#[tokio::test]
async fn an_address_allowed_when_saved_is_refused_when_sent_if_the_rule_now_refuses_it() {
    let f = fixture().await;
    let crm = MockPlatform::start(MockResponse::empty(200)).await;
    let hook = NewWebhook::new(
        &format!("{}/crm", crm.url()),
        &mock_targets(),
        None,
        WebhookEvents::all(),
    )
    .unwrap();
    f.store
        .create_webhook(f.project.id, hook, Utc::now())
        .await
        .unwrap();
    let lead = f.rated_lead(full_lead(), None).await;

    // This worker's operator allows http://, but no range: loopback is refused.
    let config = WorkerConfig {
        targets: Targets::new("", true).unwrap(),
        ..fast()
    };
    let worker = worker(&f.store, config);
    let job = f.run_until_done(&worker, lead).await;
    for kind in [
        IntegrationKind::Ga4,
        IntegrationKind::Meta,
        IntegrationKind::GoogleAds,
        IntegrationKind::Webhook,
    ] {
        let (delivery, attempts) = delivery_of(&job, kind);
        assert_eq!(delivery.state, DeliveryState::Failed, "{kind}");
        assert_eq!(attempts.len(), 1, "{kind}: refused for good, not retried");
        assert_eq!(attempts[0].outcome, AttemptOutcome::Failed);
        assert_eq!(attempts[0].http_status, None);
        assert_eq!(attempts[0].error.as_deref(), Some(LOOPBACK), "{kind}");
    }
    let p = &f.platforms;
    for mock in [&p.ga4, &p.meta, &p.token, &p.ads, &p.hook] {
        assert!(mock.requests().is_empty(), "{} was called", mock.url());
    }

    while worker.run_once().await.unwrap() {}
    let hooks = f.store.webhooks(f.project.id).await.unwrap();
    let last = hooks[0].last_attempt.as_ref().expect("an attempt");
    assert_eq!(
        (last.outcome, last.error.as_deref()),
        (AttemptOutcome::Failed, Some(LOOPBACK))
    );
    assert!(crm.requests().is_empty());
}

#[tokio::test]
async fn a_redirect_is_not_followed_to_an_address_that_is_not_allowed() {
    let f = fixture().await;
    let inside = MockPlatform::start(MockResponse::empty(200)).await;
    let moved = MockResponse::empty(307).with_header("Location", &format!("{}/x", inside.url()));
    let outside = MockPlatform::start_on("127.0.0.2", moved).await;
    let settings = IntegrationSettings::Webhook(WebhookSettings {
        url: format!("{}/hook", outside.url()),
        secret: Secret::new(WEBHOOK_SECRET),
    });
    f.store
        .set_integration(f.project.id, settings, Utc::now())
        .await
        .unwrap();
    let lead = f.rated_lead(full_lead(), None).await;

    // 127.0.0.2 is allowed; 127.0.0.1, where the redirect points, is not.
    let config = WorkerConfig {
        targets: Targets::new("127.0.0.2", true).unwrap(),
        ..fast()
    };
    let job = f.run_until_done(&worker(&f.store, config), lead).await;
    assert_eq!(
        delivery(&job, IntegrationKind::Webhook),
        (
            DeliveryState::Failed,
            vec![(AttemptOutcome::Failed, Some(307))]
        )
    );
    assert_eq!(outside.requests().len(), 1);
    assert!(inside.requests().is_empty(), "the redirect was followed");
}
