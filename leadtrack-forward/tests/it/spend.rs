//! Ad spend read from the platforms with the project's sign-ins, against mocks of Google
//! Ads' `googleAds:searchStream` and Meta's Insights that check the documented request
//! (`leadtrack_platforms::testkit::sign_in`): every campaign's days kept, a second read of
//! the same days replacing them, and a source that cannot be read saying why.

use chrono::{NaiveDate, Utc};
use leadtrack_core::integration::Secret;
use leadtrack_core::oauth::{OAuthApp, OAuthGrant, Provider};
use leadtrack_core::spend::SpendPlatform;
use leadtrack_core::{Admin, Spending};
use leadtrack_forward::spend::sync_project;
use leadtrack_platforms::testkit::sign_in::{self, MockSignIn};

fn day(day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 3, day).unwrap()
}

/// The server's application for `provider`, at `mock`.
fn app(provider: Provider, mock: &MockSignIn) -> OAuthApp {
    OAuthApp {
        provider,
        client_id: "client-1".into(),
        client_secret: Secret::new("client-secret"),
        developer_token: Some(Secret::new("dev-token")),
        endpoints: mock.endpoints(),
    }
}

#[tokio::test]
async fn spend_is_read_per_campaign_and_day_and_a_second_read_replaces_it() {
    let google = MockSignIn::start("client-1", "client-secret", "dev-token").await;
    let meta = MockSignIn::start_as(Provider::Meta, "client-1", "client-secret", "").await;
    meta.issue(sign_in::META_TOKEN);
    let apps = [app(Provider::Google, &google), app(Provider::Meta, &meta)];
    let http = leadtrack_platforms::check::client(leadtrack_core::testkit::mock_targets());
    let (store, project) = crate::common::acme().await;
    for (provider, token) in [
        (Provider::Google, sign_in::REFRESH_TOKEN),
        (Provider::Meta, sign_in::META_TOKEN),
    ] {
        let grant = OAuthGrant {
            provider,
            account: "ads-owner@example.com".into(),
            refresh_token: Secret::new(token),
            granted_at: Utc::now(),
        };
        store
            .set_oauth_grant(project.id, provider, Some(&grant))
            .await
            .unwrap();
    }
    let (customer, ..) = sign_in::CUSTOMERS[0];
    let (ad_account, ..) = sign_in::META_PIXEL;
    store
        .set_spend_source(project.id, SpendPlatform::GoogleAds, Some(customer))
        .await
        .unwrap();
    store
        .set_spend_source(project.id, SpendPlatform::Meta, Some(ad_account))
        .await
        .unwrap();

    let read = sync_project(&store, (&apps, &http), &project, (day(4), 3))
        .await
        .unwrap();
    let outcomes: Vec<_> = read
        .iter()
        .map(|r| (r.platform, r.outcome.clone(), r.days))
        .collect();
    // Four days, two campaigns each (Google's campaign that spent nothing left out); Meta
    // one day a page.
    assert_eq!(
        outcomes,
        [
            (SpendPlatform::GoogleAds, Ok(8), (day(1), day(4))),
            (SpendPlatform::Meta, Ok(8), (day(1), day(4))),
        ]
    );
    let kept = store.spend(project.id, day(1), day(4)).await.unwrap();
    let first_day: Vec<_> = kept
        .iter()
        .filter(|r| r.date == day(1))
        .map(|r| {
            (
                r.source.as_str(),
                r.campaign_id.as_deref(),
                r.campaign.as_str(),
                r.cost_micros,
                r.currency.as_str(),
                r.clicks,
                r.account.as_str(),
            )
        })
        .collect();
    assert_eq!(
        first_day,
        [
            (
                "google",
                Some("111"),
                "Brand search",
                184_050_000,
                "USD",
                Some(91),
                customer
            ),
            (
                "google",
                Some("222"),
                "Competitors",
                64_000_000,
                "USD",
                Some(30),
                customer
            ),
            (
                "meta",
                Some("2386"),
                "Retargeting",
                20_000_000,
                "EUR",
                Some(12),
                ad_account
            ),
            (
                "meta",
                Some("2385"),
                "Spring Sale",
                132_450_000,
                "EUR",
                Some(241),
                ad_account
            ),
        ]
    );

    // The same days again replace what was kept; a source whose sign-in is gone says so
    // and keeps its rows.
    store
        .set_oauth_grant(project.id, Provider::Meta, None)
        .await
        .unwrap();
    let again = sync_project(&store, (&apps, &http), &project, (day(4), 3))
        .await
        .unwrap();
    assert_eq!(again[0].outcome, Ok(8));
    assert_eq!(
        again[1].outcome,
        Err("nobody signed in with Meta in this project: Settings › Integrations, Connect with Meta".into())
    );
    assert_eq!(
        store.spend(project.id, day(1), day(4)).await.unwrap().len(),
        16
    );
    let sources = store.spend_sources(project.id).await.unwrap();
    assert_eq!(sources[0].error, None);
    assert!(sources[0].synced_at.is_some());
    assert_eq!(
        sources[1].error.as_deref(),
        Some(
            "nobody signed in with Meta in this project: Settings › Integrations, Connect with Meta"
        )
    );
}
