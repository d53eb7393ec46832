//! Connecting Google Ads by signing in, against a mock of Google's sign-in and the Google
//! Ads API (`leadtrack_platforms::testkit::google`): the consent asked with `state` and
//! PKCE, the code exchanged with the verifier, the grant kept, the account picked from the
//! API's list, and the integration saved with the grant; a refused consent, an answer with
//! a forged `state` and an answer to another session connect nothing.

use crate::common::*;
use leadtrack_core::integration::Secret;
use leadtrack_core::oauth::{OAuthApp, Provider};
use leadtrack_dashboard::Config;
use leadtrack_platforms::testkit::sign_in::{self, MockSignIn};
use warp::http::StatusCode;

const CLIENT_ID: &str = "leadtrack-test.apps.googleusercontent.com";
const CLIENT_SECRET: &str = "google-client-secret";
const DEVELOPER_TOKEN: &str = "google-developer-token";

async fn app_with_google() -> (App, MockSignIn) {
    app_signing_in_as(Provider::Google).await
}

/// Project alpha's integrations as stored.
async fn integrations_of(app: &App) -> leadtrack_core::integration::Integrations {
    app.store.integrations(app.alpha.id).await.unwrap()
}

/// The answer Google's consent page sends the browser back with (`allow` or `deny`).
async fn consent(to: &str, choice: &str) -> String {
    let page = reqwest::get(to).await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    let marker = format!("id=\"{choice}\" href=\"");
    let at = html.find(&marker).expect("the consent page's link") + marker.len();
    let link = &html[at..at + html[at..].find('"').unwrap()];
    link.replace("&amp;", "&")
}

/// The pending consent's cookie from a `Set-Cookie`.
fn consent_cookie(reply: &Reply) -> String {
    let set = reply.header("set-cookie").expect("a consent cookie");
    assert!(
        set.contains("HttpOnly") && set.contains("Path=/oauth/callback"),
        "{set}"
    );
    set.split(';').next().unwrap().to_owned()
}

#[tokio::test]
async fn an_owner_connects_google_ads_by_signing_in_and_picking_the_account() {
    let (app, google) = app_with_google().await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let path = "/projects/alpha/settings/integrations";
    let page = app.get(path, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &["Connect with Google", "Or enter the credentials by hand"],
    );

    let asked = app
        .post_form(&owner, &format!("{path}/google-ads/sign-in"), &[])
        .await;
    assert_eq!(asked.status, StatusCode::SEE_OTHER, "{}", asked.text);
    let to = asked.header("location").unwrap().to_owned();
    assert!(to.starts_with(&google.endpoints().authorize), "{to}");
    assert!(to.contains("redirect_uri=http%3A%2F%2Fleads.test%2Foauth%2Fcallback"));
    let pending = consent_cookie(&asked);

    let back = consent(&to, "allow").await;
    let callback = back
        .strip_prefix(ORIGIN)
        .expect("back to this site")
        .to_owned();
    let landed = app.get(&callback, &format!("{owner}; {pending}")).await;
    assert_eq!(landed.status, StatusCode::SEE_OTHER, "{}", landed.text);
    assert_eq!(
        landed.header("location"),
        Some("/projects/alpha/settings/integrations?saved=google-ads-signed")
    );
    assert!(landed.header("set-cookie").unwrap().contains("Max-Age=0"));
    let exchanged = &google.token_requests()[0];
    assert_eq!(exchanged["grant_type"], "authorization_code");
    assert_eq!(
        exchanged["redirect_uri"],
        "http://leads.test/oauth/callback"
    );
    let grant = app
        .store
        .oauth_grant(app.alpha.id, Provider::Google)
        .await
        .unwrap()
        .expect("the grant is kept");
    assert_eq!(grant.account, sign_in::ACCOUNT);
    assert_eq!(grant.refresh_token.expose(), sign_in::REFRESH_TOKEN);

    // Signed in: the accounts are listed by name, to pick from.
    let page = app
        .get(&format!("{path}?saved=google-ads-signed"), &owner)
        .await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "Google Ads signed in: pick the account its conversions go to.",
            "Signed in with Google as <strong>ads-owner@example.com</strong>",
            "Acme Shop · 1234567890",
            "Acme Agency · 5550001111 (manager)",
        ],
    );
    let picked = app
        .post_form(
            &owner,
            &format!("{path}/google-ads/account"),
            &[("customer", "1234567890")],
        )
        .await;
    assert_eq!(
        picked.header("location"),
        Some("/projects/alpha/settings/integrations?saved=google-ads-connected")
    );
    let integrations = integrations_of(&app).await;
    let settings = integrations.google_ads.expect("Google Ads is connected");
    assert_eq!(settings.customer_id, "1234567890");
    assert_eq!(settings.client_id, CLIENT_ID);
    assert_eq!(settings.client_secret.expose(), CLIENT_SECRET);
    assert_eq!(settings.refresh_token.expose(), sign_in::REFRESH_TOKEN);
    assert_eq!(
        settings.token_url.as_deref(),
        Some(google.endpoints().token.as_str())
    );
    let page = app.get(path, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &["Connected as <strong>ads-owner@example.com</strong>"],
    );

    // Labels pick the account's conversion actions by name, and list them by name.
    let labels = "/projects/alpha/settings/labels";
    let page = app.get(labels, &owner).await;
    let action = "customers/1234567890/conversionActions/111";
    page.assert_shows(
        StatusCode::OK,
        &[
            "<select id=\"google_ads_action\" name=\"google_ads_action\"",
            &format!("<option value=\"{action}\">Qualified lead</option>"),
            "<option value=\"customers/1234567890/conversionActions/222\">Closed deal</option>",
        ],
    );
    let created = app
        .post_form(
            &owner,
            labels,
            &[("name", "Qualified"), ("google_ads_action", action)],
        )
        .await;
    assert_eq!(created.status, StatusCode::SEE_OTHER, "{}", created.text);
    let stored = app.store.labels(app.alpha.id).await.unwrap();
    let label = stored
        .iter()
        .find(|label| label.name == "Qualified")
        .unwrap();
    assert_eq!(label.mapping.google_ads_action.as_deref(), Some(action));
    let page = app.get(labels, &owner).await;
    page.assert_shows(StatusCode::OK, &["<code>Qualified lead</code>"]);
    assert!(!page.text.contains(&format!("<code>{action}</code>")));

    // Disconnecting forgets the grant too.
    app.post_form(&owner, &format!("{path}/google-ads/disconnect"), &[])
        .await;
    assert_eq!(
        app.store
            .oauth_grant(app.alpha.id, Provider::Google)
            .await
            .unwrap(),
        None
    );
    assert!(integrations_of(&app).await.google_ads.is_none());
}

#[tokio::test]
async fn a_refused_consent_or_a_forged_answer_connects_nothing() {
    let (app, google) = app_with_google().await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let path = "/projects/alpha/settings/integrations/google-ads/sign-in";
    let nothing = || async {
        assert_eq!(
            app.store
                .oauth_grant(app.alpha.id, Provider::Google)
                .await
                .unwrap(),
            None
        );
    };

    // Refused on Google's page: back with a clear message.
    let asked = app.post_form(&owner, path, &[]).await;
    let pending = consent_cookie(&asked);
    let back = consent(asked.header("location").unwrap(), "deny").await;
    let callback = back.strip_prefix(ORIGIN).unwrap().to_owned();
    let refused = app.get(&callback, &format!("{owner}; {pending}")).await;
    refused.assert_shows(
        StatusCode::OK,
        &["Google did not connect: access was not allowed. Nothing was connected."],
    );
    nothing().await;

    // A forged state: refused, nothing fetched.
    let asked = app.post_form(&owner, path, &[]).await;
    let pending = consent_cookie(&asked);
    let back = consent(asked.header("location").unwrap(), "allow").await;
    let state = back
        .split("state=")
        .nth(1)
        .unwrap()
        .split('&')
        .next()
        .unwrap()
        .to_owned();
    let forged = back.replace(&format!("state={state}"), "state=forged-state");
    let callback = forged.strip_prefix(ORIGIN).unwrap().to_owned();
    let refused = app.get(&callback, &format!("{owner}; {pending}")).await;
    refused.assert_shows(
        StatusCode::BAD_REQUEST,
        &["does not belong to a sign-in started here"],
    );
    nothing().await;

    // The right answer, without the consent's cookie (another browser), or in another
    // session of the same owner: refused too.
    let callback = back.strip_prefix(ORIGIN).unwrap().to_owned();
    let refused = app.get(&callback, &owner).await;
    refused.assert_shows(StatusCode::BAD_REQUEST, &["started in another browser"]);
    let other = app.session("owner@example.com", OWNER_PASSWORD).await;
    let refused = app.get(&callback, &format!("{other}; {pending}")).await;
    refused.assert_shows(
        StatusCode::BAD_REQUEST,
        &["does not belong to a sign-in started here"],
    );
    nothing().await;
    assert!(google.token_requests().is_empty(), "no code was exchanged");

    // Members may not start one.
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let denied = app.post_form(&member, path, &[]).await;
    assert_eq!(denied.status, StatusCode::FORBIDDEN);
}

/// Signs in with `provider`'s mock as the owner; returns the owner's session.
async fn sign_in_with(app: &App, provider: &str) -> String {
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let path = format!("/projects/alpha/settings/integrations/{provider}/sign-in");
    let asked = app.post_form(&owner, &path, &[]).await;
    let pending = consent_cookie(&asked);
    let back = consent(asked.header("location").unwrap(), "allow").await;
    let landed = app
        .get(
            back.strip_prefix(ORIGIN).unwrap(),
            &format!("{owner}; {pending}"),
        )
        .await;
    assert_eq!(landed.status, StatusCode::SEE_OTHER, "{}", landed.text);
    owner
}

async fn app_signing_in_as(provider: Provider) -> (App, MockSignIn) {
    let mock = MockSignIn::start_as(provider, CLIENT_ID, CLIENT_SECRET, DEVELOPER_TOKEN).await;
    let config = Config {
        oauth: vec![OAuthApp {
            provider,
            client_id: CLIENT_ID.to_owned(),
            client_secret: Secret::new(CLIENT_SECRET),
            developer_token: Some(Secret::new(DEVELOPER_TOKEN)),
            endpoints: mock.endpoints(),
        }],
        ..mocks_allowed()
    };
    (app_with(config).await, mock)
}

#[tokio::test]
async fn linkedin_is_connected_as_soon_as_the_owner_signs_in() {
    let (app, _linkedin) = app_signing_in_as(Provider::Linkedin).await;
    let owner = sign_in_with(&app, "linkedin").await;
    let integrations = integrations_of(&app).await;
    let settings = integrations.linkedin.expect("LinkedIn is connected");
    assert_eq!(settings.client_id, CLIENT_ID);
    assert_eq!(settings.refresh_token.expose(), sign_in::REFRESH_TOKEN);
    assert_eq!(
        settings.api_version,
        leadtrack_core::integration::DEFAULT_LINKEDIN_API_VERSION
    );
    // Labels pick a conversion rule of the member's ad accounts by name, and list it by
    // name.
    let labels = "/projects/alpha/settings/labels";
    let page = app.get(labels, &owner).await;
    let rule = "urn:lla:llaPartnerConversion:8801";
    page.assert_shows(
        StatusCode::OK,
        &[&format!(
            "<option value=\"{rule}\">Demo booked · Acme Sponsored</option>"
        )],
    );
    app.post_form(
        &owner,
        labels,
        &[("name", "Demo"), ("linkedin_conversion", rule)],
    )
    .await;
    let page = app.get(labels, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &["<code>Demo booked · Acme Sponsored</code>"],
    );
}

/// A LinkedIn sign-in given before leadtrack read spend lacks `r_ads_reporting`: after a
/// failed read, the Ad spend page offers to sign in again, which asks for it.
#[tokio::test]
async fn a_failed_read_of_spend_offers_to_sign_in_again_with_the_reporting_scope() {
    use leadtrack_core::spend::{SpendPlatform, SpendSource};
    let (app, _linkedin) = app_signing_in_as(Provider::Linkedin).await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let source = SpendSource::new(SpendPlatform::Linkedin, "507");
    app.store
        .set_spend_source(app.alpha.id, &source)
        .await
        .unwrap();
    let spend = "/projects/alpha/settings/spend";
    let again = "action=\"/projects/alpha/settings/integrations/linkedin/sign-in\"";
    let page = app.get(spend, &owner).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(!page.text.contains(again), "nothing failed yet");
    let failed = Some("LinkedIn answered HTTP 403: Not enough permissions");
    app.store
        .record_spend_sync(
            app.alpha.id,
            SpendPlatform::Linkedin,
            chrono::Utc::now(),
            failed,
        )
        .await
        .unwrap();
    let page = app.get(spend, &owner).await;
    page.assert_shows(StatusCode::OK, &[again, "Sign in with LinkedIn</button>"]);
    let asked = app
        .post_form(
            &owner,
            "/projects/alpha/settings/integrations/linkedin/sign-in",
            &[],
        )
        .await;
    let consent_url = asked.header("location").unwrap();
    assert!(consent_url.contains("r_ads_reporting"), "{consent_url}");
}

#[tokio::test]
async fn microsoft_advertising_is_connected_to_the_account_picked_and_labels_pick_its_offline_goals()
 {
    let (app, microsoft) = app_signing_in_as(Provider::Microsoft).await;
    let owner = sign_in_with(&app, "microsoft-ads").await;
    let path = "/projects/alpha/settings/integrations";
    let (customer, account, name, number) = sign_in::MICROSOFT_ACCOUNT;
    let picked = format!("{customer}:{account}");
    let page = app.get(path, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "Signed in with Microsoft as",
            &format!("<option value=\"{picked}\">{name} · {number}</option>"),
        ],
    );
    assert!(integrations_of(&app).await.microsoft_ads.is_none());
    let given = app
        .post_form(
            &owner,
            &format!("{path}/microsoft-ads/account"),
            &[("account", &picked)],
        )
        .await;
    assert_eq!(
        given.header("location"),
        Some("/projects/alpha/settings/integrations?saved=microsoft-ads-connected")
    );
    let settings = integrations_of(&app).await.microsoft_ads.unwrap();
    assert_eq!(
        (settings.customer_id.as_str(), settings.account_id.as_str()),
        (customer.to_string().as_str(), account.to_string().as_str())
    );
    assert_eq!(settings.developer_token.expose(), DEVELOPER_TOKEN);
    assert_eq!(settings.refresh_token.expose(), sign_in::REFRESH_TOKEN);
    assert_eq!(
        settings.base_url.as_deref(),
        Some(microsoft.endpoints().api.as_str())
    );

    // Labels pick the account's active offline goals by name; a label named for one
    // sends that name.
    let labels = "/projects/alpha/settings/labels";
    let page = app.get(labels, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "<select id=\"microsoft_ads_conversion\" name=\"microsoft_ads_conversion\"",
            "<option value=\"Offline qualified\">Offline qualified</option><option value=\"Offline sale\">Offline sale</option>",
        ],
    );
    assert!(!page.text.contains("Old offline") && !page.text.contains("Newsletter"));
    let created = app
        .post_form(
            &owner,
            labels,
            &[
                ("name", "Sold"),
                ("microsoft_ads_conversion", "Offline sale"),
            ],
        )
        .await;
    assert_eq!(created.status, StatusCode::SEE_OTHER, "{}", created.text);
    let stored = app.store.labels(app.alpha.id).await.unwrap();
    let label = stored.iter().find(|label| label.name == "Sold").unwrap();
    assert_eq!(
        label.mapping.microsoft_ads_conversion.as_deref(),
        Some("Offline sale")
    );
}

#[tokio::test]
async fn microsoft_advertising_ids_may_still_be_typed() {
    let (app, _microsoft) = app_signing_in_as(Provider::Microsoft).await;
    let owner = sign_in_with(&app, "microsoft-ads").await;
    let path = "/projects/alpha/settings/integrations";
    let given = app
        .post_form(
            &owner,
            &format!("{path}/microsoft-ads/account"),
            &[("customer", "1234"), ("account", "5678")],
        )
        .await;
    assert_eq!(
        given.header("location"),
        Some("/projects/alpha/settings/integrations?saved=microsoft-ads-connected")
    );
    let settings = integrations_of(&app).await.microsoft_ads.unwrap();
    assert_eq!(
        (settings.customer_id.as_str(), settings.account_id.as_str()),
        ("1234", "5678")
    );
}

#[tokio::test]
async fn a_client_account_under_a_manager_is_picked_and_reached_through_it() {
    let (app, _google) = app_with_google().await;
    let owner = sign_in_with(&app, "google-ads").await;
    let path = "/projects/alpha/settings/integrations";
    let (client, name) = sign_in::MANAGED_CLIENT;
    let manager = sign_in::CUSTOMERS[1].0;
    let picked = format!("{client}:{manager}");
    let page = app.get(path, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[&format!(
            "<option value=\"{picked}\">{name} · {client} (through manager {manager})</option>"
        )],
    );
    app.post_form(
        &owner,
        &format!("{path}/google-ads/account"),
        &[("customer", &picked)],
    )
    .await;
    let settings = integrations_of(&app).await.google_ads.unwrap();
    assert_eq!(settings.customer_id, client);
    assert_eq!(settings.login_customer_id.as_deref(), Some(manager));
    // Its conversion actions are listed through the manager (the mock refuses them
    // without its login-customer-id).
    let page = app.get("/projects/alpha/settings/labels", &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[&format!(
            "<option value=\"customers/{client}/conversionActions/111\">Qualified lead</option>"
        )],
    );
}

#[tokio::test]
async fn meta_is_connected_to_the_pixel_picked_with_a_long_lived_token() {
    let (app, meta) = app_signing_in_as(Provider::Meta).await;
    let owner = sign_in_with(&app, "meta").await;
    // The code for a short-lived token, that one for the long-lived one.
    let asked = meta.token_requests();
    assert!(asked[0].contains_key("code") && asked[0]["code_verifier"].len() >= 43);
    assert_eq!(asked[1]["grant_type"], "fb_exchange_token");
    let grant = app
        .store
        .oauth_grant(app.alpha.id, Provider::Meta)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(grant.account, sign_in::META_NAME);
    let path = "/projects/alpha/settings/integrations";
    let page = app.get(path, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "Signed in with Meta as <strong>Ada Marketer</strong>",
            "<option value=\"999\">Acme Pixel · Acme Ads</option>",
        ],
    );
    let picked = app
        .post_form(&owner, &format!("{path}/meta/account"), &[("pixel", "999")])
        .await;
    assert_eq!(
        picked.header("location"),
        Some("/projects/alpha/settings/integrations?saved=meta-connected")
    );
    let settings = integrations_of(&app).await.meta.unwrap();
    assert_eq!(settings.pixel_id, "999");
    assert_eq!(settings.access_token.expose(), sign_in::META_TOKEN);
    assert_eq!(
        settings.base_url.as_deref(),
        Some(meta.endpoints().api.as_str())
    );
}

/// Signs in with `provider` (the mock refuses a consent without Reddit's `permanent`
/// duration or Pinterest's comma-separated scopes, and a token request without Basic
/// credentials), picks the ad account listed, and answers the settings stored.
async fn connect_by_picking_the_ad_account(
    provider: Provider,
    slug: &str,
    (id, name): (&str, &str),
) -> (App, MockSignIn, leadtrack_core::integration::Integrations) {
    let (app, mock) = app_signing_in_as(provider).await;
    let owner = sign_in_with(&app, slug).await;
    let asked = mock.token_requests();
    assert_eq!(asked[0]["grant_type"], "authorization_code");
    assert!(!asked[0].contains_key("client_secret"), "{:?}", asked[0]);
    let path = "/projects/alpha/settings/integrations";
    let page = app.get(path, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            &format!("Signed in with {} as", provider.name()),
            &format!("<option value=\"{id}\">{name} · {id}</option>"),
        ],
    );
    let picked = app
        .post_form(
            &owner,
            &format!("{path}/{slug}/account"),
            &[("ad_account", id)],
        )
        .await;
    assert_eq!(
        picked.header("location"),
        Some(format!("/projects/alpha/settings/integrations?saved={slug}-connected").as_str())
    );
    let page = app.get(path, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[&format!("Sign in with {} again", provider.name())],
    );
    let integrations = integrations_of(&app).await;
    (app, mock, integrations)
}

/// What a sign-in with `mock` leaves an integration whose tokens expire.
fn signed_in_by(mock: &MockSignIn) -> leadtrack_core::integration::SignedIn {
    leadtrack_core::integration::SignedIn {
        client_id: CLIENT_ID.to_owned(),
        client_secret: Secret::new(CLIENT_SECRET),
        refresh_token: Secret::new(sign_in::REFRESH_TOKEN),
        token_url: Some(mock.endpoints().token),
    }
}

#[tokio::test]
async fn reddit_is_connected_to_the_ad_account_picked_with_a_refresh_token() {
    let (_, id, name) = sign_in::REDDIT_ACCOUNT;
    let (app, mock, integrations) =
        connect_by_picking_the_ad_account(Provider::Reddit, "reddit", (id, name)).await;
    let settings = integrations.reddit.expect("Reddit is connected");
    assert_eq!(settings.pixel_id, id);
    assert_eq!(
        settings.access_token.expose(),
        "",
        "no access token is stored"
    );
    assert_eq!(settings.signed_in, Some(signed_in_by(&mock)));
    assert_eq!(settings.base_url, Some(mock.endpoints().api));

    // Saving the form keeps the sign-in; a token typed in replaces it.
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let path = "/projects/alpha/settings/integrations/reddit";
    app.post_form(&owner, path, &[("pixel_id", id), ("test_id", "t2_test")])
        .await;
    let kept = integrations_of(&app).await.reddit.unwrap();
    assert_eq!(kept.test_id.as_deref(), Some("t2_test"));
    assert_eq!(kept.signed_in, Some(signed_in_by(&mock)));
    app.post_form(
        &owner,
        path,
        &[("pixel_id", id), ("access_token", "typed-token")],
    )
    .await;
    let typed = integrations_of(&app).await.reddit.unwrap();
    assert_eq!(typed.access_token.expose(), "typed-token");
    assert_eq!(typed.signed_in, None);
}

#[tokio::test]
async fn pinterest_is_connected_to_the_ad_account_picked_with_a_refresh_token() {
    let (id, name) = sign_in::PINTEREST_ACCOUNT;
    let (_app, mock, integrations) =
        connect_by_picking_the_ad_account(Provider::Pinterest, "pinterest", (id, name)).await;
    let settings = integrations.pinterest.expect("Pinterest is connected");
    assert_eq!(settings.ad_account_id, id);
    assert_eq!(settings.signed_in, Some(signed_in_by(&mock)));
    assert!(!settings.test);
}

#[tokio::test]
async fn signing_in_to_a_connected_platform_renews_its_credentials_and_keeps_its_account() {
    let (app, _google) = app_with_google().await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let path = "/projects/alpha/settings/integrations/google-ads";
    let by_hand = app
        .post_form(
            &owner,
            path,
            &[
                ("customer_id", "123-456-7890"),
                ("login_customer_id", "555-000-1111"),
                ("client_id", "pasted-client"),
                ("client_secret", "pasted-secret"),
                ("refresh_token", "pasted-refresh"),
            ],
        )
        .await;
    assert_eq!(by_hand.status, StatusCode::SEE_OTHER, "{}", by_hand.text);
    let page = app
        .get("/projects/alpha/settings/integrations", &owner)
        .await;
    page.assert_shows(StatusCode::OK, &["Connect with Google"]);

    sign_in_with(&app, "google-ads").await;
    let settings = integrations_of(&app).await.google_ads.unwrap();
    // The account stays as it was given; the credentials are the sign-in's.
    assert_eq!(settings.customer_id, "123-456-7890");
    assert_eq!(settings.login_customer_id.as_deref(), Some("555-000-1111"));
    assert_eq!(settings.client_id, CLIENT_ID);
    assert_eq!(settings.refresh_token.expose(), sign_in::REFRESH_TOKEN);
    let page = app
        .get("/projects/alpha/settings/integrations", &owner)
        .await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "Connected as <strong>ads-owner@example.com</strong>",
            "Sign in with Google again",
        ],
    );
}

/// Project alpha's lead source of `kind`.
async fn source_of(
    app: &App,
    kind: leadtrack_core::source::SourceKind,
) -> Option<leadtrack_core::source::LeadSource> {
    app.store.lead_source(app.alpha.id, kind).await.unwrap()
}

#[tokio::test]
async fn google_lead_forms_take_a_key_and_show_the_webhook_url() {
    use leadtrack_core::source::{LeadSource, SourceKind};
    let app = app_with(mocks_allowed()).await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let path = "/projects/alpha/settings/sources";
    let page = app.get(path, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "Google Ads lead forms",
            "http://leads.test/webhooks/google/lead-forms/alpha",
            "Meta Lead Ads",
            "http://leads.test/webhooks/meta/leadgen",
            "LinkedIn Lead Gen Forms",
        ],
    );
    let short = app
        .post_form(
            &owner,
            &format!("{path}/google-lead-forms"),
            &[("key", "short")],
        )
        .await;
    short.assert_shows(
        StatusCode::BAD_REQUEST,
        &["The key has 16 to 200 characters."],
    );
    assert_eq!(source_of(&app, SourceKind::GoogleLeadForms).await, None);
    let key = "a-key-of-24-characters-x";
    let saved = app
        .post_form(
            &owner,
            &format!("{path}/google-lead-forms"),
            &[("key", key)],
        )
        .await;
    assert_eq!(
        saved.header("location"),
        Some("/projects/alpha/settings/sources?saved=google-lead-forms-saved")
    );
    assert_eq!(
        source_of(&app, SourceKind::GoogleLeadForms).await,
        Some(LeadSource::GoogleLeadForms {
            key: Secret::new(key)
        })
    );
    let page = app.get(path, &owner).await;
    page.assert_shows(StatusCode::OK, &["Taking leads", "Replace the key"]);
    assert!(!page.text.contains(key), "the key is never shown again");
    app.post_form(&owner, &format!("{path}/google-lead-forms/remove"), &[])
        .await;
    assert_eq!(source_of(&app, SourceKind::GoogleLeadForms).await, None);
    let audit = app.get("/projects/alpha/settings/audit", &owner).await;
    audit.assert_shows(
        StatusCode::OK,
        &[
            "Set up or changed Google Ads lead forms",
            "Removed Google Ads lead forms",
        ],
    );

    // Only owners.
    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    let denied = app.get(path, &member).await;
    assert_eq!(denied.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_facebook_page_is_picked_and_subscribed_with_its_own_token() {
    use leadtrack_core::source::{LeadSource, SourceKind};
    let (app, meta) = app_signing_in_as(Provider::Meta).await;
    let owner = sign_in_with(&app, "meta").await;
    let path = "/projects/alpha/settings/sources";
    let (page_id, name, token) = sign_in::META_PAGE;
    let page = app.get(path, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[&format!(
            "<option value=\"{page_id}\">{name} · {page_id}</option>"
        )],
    );
    assert!(!page.text.contains(token), "page tokens stay on the server");
    let unknown = app
        .post_form(&owner, &format!("{path}/meta-lead-ads"), &[("page", "999")])
        .await;
    unknown.assert_shows(
        StatusCode::BAD_REQUEST,
        &["Meta did not connect the page: the page is not one the signed-in person manages."],
    );
    let picked = app
        .post_form(
            &owner,
            &format!("{path}/meta-lead-ads"),
            &[("page", page_id)],
        )
        .await;
    assert_eq!(
        picked.header("location"),
        Some("/projects/alpha/settings/sources?saved=meta-lead-ads-saved")
    );
    assert_eq!(
        source_of(&app, SourceKind::MetaLeadAds).await,
        Some(LeadSource::MetaLeadAds {
            page_id: page_id.to_owned(),
            page_access_token: Secret::new(token),
            base_url: Some(meta.endpoints().api),
        })
    );
    let page = app.get(path, &owner).await;
    page.assert_shows(StatusCode::OK, &[&format!("Page {page_id}")]);
}

#[tokio::test]
async fn linkedin_ad_accounts_are_ticked_to_read_their_lead_gen_forms() {
    use leadtrack_core::source::{LeadSource, SourceKind};
    let (app, _linkedin) = app_signing_in_as(Provider::Linkedin).await;
    let owner = sign_in_with(&app, "linkedin").await;
    let path = "/projects/alpha/settings/sources";
    let (account, name, ..) = sign_in::LINKEDIN_RULE;
    let page = app.get(path, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[&format!(
            "<input type=\"checkbox\" name=\"account\" value=\"{account}\"> {name} · {account}"
        )],
    );
    let bad = app
        .post_form(
            &owner,
            &format!("{path}/linkedin-lead-gen"),
            &[("accounts", "acme")],
        )
        .await;
    bad.assert_shows(StatusCode::BAD_REQUEST, &["is not an ad account"]);
    let saved = app
        .post_form(
            &owner,
            &format!("{path}/linkedin-lead-gen"),
            &[("account", &account.to_string()), ("accounts", "42, 507")],
        )
        .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.text);
    assert_eq!(
        source_of(&app, SourceKind::LinkedinLeadGen).await,
        Some(LeadSource::LinkedinLeadGen {
            accounts: vec!["42".to_owned(), account.to_string()]
        })
    );
    let page = app.get(path, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "Reading 2 accounts",
            &format!("value=\"{account}\" checked"),
        ],
    );
}
