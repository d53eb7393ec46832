//! Ad spend read from the platforms with the project's sign-ins (or TikTok's token), against
//! mocks of Google Ads' `googleAds:searchStream`, Meta's Insights, Microsoft Advertising's
//! Reporting API, LinkedIn's `adAnalytics` and TikTok's integrated report that check the
//! documented requests (`leadtrack_platforms::testkit::{sign_in, reports}`): every
//! campaign's days kept, a second read of the same days replacing them, and a source that
//! cannot be read saying why.

use chrono::{NaiveDate, Utc};
use leadtrack_core::integration::Secret;
use leadtrack_core::oauth::{OAuthApp, OAuthGrant, Provider};
use leadtrack_core::spend::{SpendPlatform, SpendSource};
use leadtrack_core::{Admin, Spending};
use leadtrack_forward::spend::sync_project;
use leadtrack_platforms::testkit::reports::{self, MockTiktokReports};
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
    for source in [
        SpendSource::new(SpendPlatform::GoogleAds, customer),
        SpendSource::new(SpendPlatform::Meta, ad_account),
    ] {
        store.set_spend_source(project.id, &source).await.unwrap();
    }

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

/// What a read kept of `day`: (source, campaign id, name, cost in micros, currency,
/// clicks, account).
async fn kept_on(
    store: &impl Spending,
    project: leadtrack_core::types::ProjectId,
    on: NaiveDate,
) -> Vec<(String, String, String, i64, String, Option<u64>, String)> {
    let kept = store.spend(project, on, on).await.unwrap();
    kept.into_iter()
        .map(|r| {
            let id = r.campaign_id.unwrap_or_default();
            (
                r.source,
                id,
                r.campaign,
                r.cost_micros,
                r.currency,
                r.clicks,
                r.account,
            )
        })
        .collect()
}

#[tokio::test]
async fn microsoft_linkedin_and_tiktok_spend_is_read_per_campaign_and_day() {
    let microsoft = MockSignIn::start_as(
        Provider::Microsoft,
        "client-1",
        "client-secret",
        "dev-token",
    )
    .await;
    let linkedin = MockSignIn::start_as(Provider::Linkedin, "client-1", "client-secret", "").await;
    let tiktok = MockTiktokReports::start().await;
    let apps = [
        app(Provider::Microsoft, &microsoft),
        app(Provider::Linkedin, &linkedin),
    ];
    let http = leadtrack_platforms::check::client(leadtrack_core::testkit::mock_targets());
    let (store, project) = crate::common::acme().await;
    for provider in [Provider::Microsoft, Provider::Linkedin] {
        let grant = OAuthGrant {
            provider,
            account: "ads-owner@example.com".into(),
            refresh_token: Secret::new(sign_in::REFRESH_TOKEN),
            granted_at: Utc::now(),
        };
        store
            .set_oauth_grant(project.id, provider, Some(&grant))
            .await
            .unwrap();
    }
    let (customer, account, ..) = sign_in::MICROSOFT_ACCOUNT;
    let (linkedin_account, ..) = sign_in::LINKEDIN_RULE;
    let (advertiser, _) = reports::TIKTOK_ADVERTISER;
    for source in [
        // Microsoft's reports are asked for at the Reporting API's own address.
        SpendSource {
            base_url: Some(microsoft.endpoints().api),
            ..SpendSource::new(
                SpendPlatform::MicrosoftAds,
                &format!("{account}:{customer}"),
            )
        },
        SpendSource::new(SpendPlatform::Linkedin, &linkedin_account.to_string()),
        SpendSource {
            base_url: Some(tiktok.url().to_owned()),
            access_token: Some(Secret::new(reports::TIKTOK_TOKEN)),
            ..SpendSource::new(SpendPlatform::Tiktok, advertiser)
        },
    ] {
        store.set_spend_source(project.id, &source).await.unwrap();
    }

    let read = sync_project(&store, (&apps, &http), &project, (day(4), 3))
        .await
        .unwrap();
    let outcomes: Vec<_> = read
        .iter()
        .map(|r| (r.platform, r.outcome.clone()))
        .collect();
    // Four days, two campaigns a day each (Microsoft's campaign that spent nothing left out).
    assert_eq!(
        outcomes,
        [
            (SpendPlatform::Linkedin, Ok(8)),
            (SpendPlatform::MicrosoftAds, Ok(8)),
            (SpendPlatform::Tiktok, Ok(8)),
        ]
    );
    let row = |source: &str,
               id: &str,
               name: &str,
               micros: i64,
               currency: &str,
               clicks: u64,
               account: &str| {
        (
            source.to_owned(),
            id.to_owned(),
            name.to_owned(),
            micros,
            currency.to_owned(),
            Some(clicks),
            account.to_owned(),
        )
    };
    let (li, ms) = (linkedin_account.to_string(), account.to_string());
    assert_eq!(
        kept_on(&store, project.id, day(2)).await,
        [
            row(
                "linkedin",
                "6101",
                "Decision makers",
                80_250_000,
                "EUR",
                19,
                &li
            ),
            row("linkedin", "6102", "Webinar", 15_000_000, "EUR", 4, &li),
            row(
                "microsoft",
                "9001",
                "Bing brand",
                12_500_000,
                "USD",
                40,
                &ms
            ),
            row(
                "microsoft",
                "9002",
                "Bing generic",
                7_250_000,
                "USD",
                11,
                &ms
            ),
            row(
                "tiktok",
                "1802",
                "Lookalikes",
                3_900_000,
                "GBP",
                12,
                advertiser
            ),
            row(
                "tiktok",
                "1801",
                "Spark ads",
                45_100_000,
                "GBP",
                310,
                advertiser
            ),
        ]
    );

    // A longer read: TikTok's by-day report is asked 30 days at a time, every page read;
    // the same days again replace what was kept.
    let before = tiktok.requests().len();
    let again = sync_project(&store, (&apps, &http), &project, (day(31), 40))
        .await
        .unwrap();
    assert!(again.iter().all(|r| r.outcome == Ok(2 * 41)), "{again:?}");
    let asked: Vec<(String, String, String)> = tiktok.requests()[before..]
        .iter()
        .filter(|query| query.contains_key("start_date"))
        .map(|q| {
            (
                q["start_date"].clone(),
                q["end_date"].clone(),
                q["page"].clone(),
            )
        })
        .collect();
    let window =
        |from: &str, to: &str, page: &str| (from.to_owned(), to.to_owned(), page.to_owned());
    assert_eq!(asked.len(), 6 + 3, "{asked:?}");
    assert_eq!(asked[0], window("2026-02-19", "2026-03-20", "1"));
    assert_eq!(asked[5], window("2026-02-19", "2026-03-20", "6"));
    assert_eq!(asked[6], window("2026-03-21", "2026-03-31", "1"));
    let all = store.spend(project.id, day(1), day(31)).await.unwrap();
    assert_eq!(all.len(), 3 * 2 * 31);

    // TikTok without its token says so.
    store
        .set_spend_source(
            project.id,
            &SpendSource::new(SpendPlatform::Tiktok, advertiser),
        )
        .await
        .unwrap();
    let without = sync_project(&store, (&apps, &http), &project, (day(4), 3))
        .await
        .unwrap();
    assert_eq!(
        without[2].outcome,
        Err(
            "no access token to read TikTok spend with: server spend connect tiktok --access-token"
                .into()
        )
    );
}
