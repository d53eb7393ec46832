//! Connecting a platform by signing in with it: the integrations card's **Connect with
//! Google** button, the platform's answer at `/oauth/callback`, and the account picked
//! afterwards.
//!
//! The flow is OAuth 2.0's authorization code grant with PKCE ([`leadtrack_core::oauth`]).
//! What the answer is checked against (the `state`, the PKCE verifier, the project, and
//! the session that asked) waits in a short-lived `HttpOnly` cookie, so any server behind
//! a load balancer can take the answer; the answer is accepted only with the same `state`
//! (compared in constant time) and in the same session, from an owner of the project.

use chrono::Utc;
use cookie::{Cookie, SameSite};
use leadtrack_core::Store;
use leadtrack_core::activity::ProjectActivity;
use leadtrack_core::integration::{
    DEFAULT_LINKEDIN_API_VERSION, DEFAULT_META_API_VERSION, GoogleAdsSettings, IntegrationSettings,
    Integrations, LinkedinSettings, MetaSettings, MicrosoftAdsSettings, PinterestSettings,
    RedditSettings, Secret, SignedIn,
};
use leadtrack_core::oauth::{OAuthApp, OAuthGrant, Provider};
use leadtrack_platforms::{oauth, sign_in};
use subtle::ConstantTimeEq;
use warp::http::{HeaderValue, StatusCode, header};
use warp::reply::Response;

use super::{Answer, Owner, owner_page};
use crate::render;
use crate::routes::{Route, Settings};
use crate::session::{self, Form};
use crate::{Config, Request};

/// The cookie holding a consent under way.
const COOKIE: &str = "lt_oauth";

/// How long a consent may take, in seconds.
const CONSENT_SECONDS: i64 = 600;

/// A consent under way, as its cookie holds it.
struct Pending {
    provider: Provider,
    state: String,
    verifier: String,
    /// The anti-forgery token of the session that asked: the answer must come back to it.
    session: String,
    project: String,
}

impl Pending {
    /// `provider.state.verifier.session.project`: every part but the project is base64url
    /// or hex (no dots), and the project's public id comes last, whole.
    fn to_cookie(&self) -> String {
        format!(
            "{}.{}.{}.{}.{}",
            self.provider, self.state, self.verifier, self.session, self.project
        )
    }

    fn from_cookie(value: &str) -> Option<Self> {
        let mut parts = value.splitn(5, '.');
        Some(Self {
            provider: parts.next()?.parse().ok()?,
            state: parts.next()?.to_owned(),
            verifier: parts.next()?.to_owned(),
            session: parts.next()?.to_owned(),
            project: parts.next().filter(|p| !p.is_empty())?.to_owned(),
        })
    }
}

/// The operator's application for `provider`, if the server has one.
pub(crate) fn app(config: &Config, provider: Provider) -> Option<&OAuthApp> {
    config.oauth.iter().find(|app| app.provider == provider)
}

/// The redirect URI: the public URL's, else this request's own origin.
fn redirect_uri(config: &Config, request: &Request) -> Option<String> {
    let origin = session::public_origin(request, config)?;
    Some(format!("{origin}{}", Route::OAuthCallback.path()))
}

/// The `Set-Cookie` of a consent under way (`value`), or the one that removes it.
fn cookie(value: Option<&Pending>, secure: bool) -> HeaderValue {
    let (value, age) = match value {
        Some(pending) => (pending.to_cookie(), CONSENT_SECONDS),
        None => (String::new(), 0),
    };
    let cookie = Cookie::build((COOKIE, value))
        .max_age(cookie::time::Duration::seconds(age))
        .path(Route::OAuthCallback.path())
        .http_only(true)
        // Lax: the platform's answer is a top-level navigation, which Lax cookies go with.
        .same_site(SameSite::Lax)
        .secure(secure)
        .build();
    HeaderValue::from_str(&cookie.to_string()).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The consent under way the request's cookie holds.
fn pending(request: &Request) -> Option<Pending> {
    session::cookie(request, COOKIE).and_then(|value| Pending::from_cookie(&value))
}

/// `POST integrations/{kind}/sign-in`: off to the platform's consent page.
pub(super) async fn start(
    config: &Config,
    request: &Request,
    (owner, _): (Owner, Form),
    slug: &str,
) -> Answer {
    let provider = leadtrack_core::integration::Platform::by_slug(slug)
        .and_then(|platform| Provider::of(platform.kind));
    let Some(app) = provider.and_then(|provider| app(config, provider)) else {
        return Ok(owner.not_found());
    };
    let Some(redirect) = redirect_uri(config, request) else {
        return Ok(owner.not_found());
    };
    let asked = match oauth::authorize(app, &redirect) {
        Ok(asked) => asked,
        Err(reason) => {
            tracing::warn!(provider = %app.provider, %reason, "a consent request could not be made");
            let said = format!("{} cannot be connected: {reason}.", app.provider.name());
            let viewer = Some(&owner.viewer);
            return Err(render::error(
                StatusCode::BAD_GATEWAY,
                viewer,
                "Nothing was connected",
                said,
            ));
        }
    };
    let pending = Pending {
        provider: app.provider,
        state: asked.state,
        verifier: asked.verifier,
        session: owner.viewer.csrf(),
        project: owner.project().public_id.clone(),
    };
    let mut response = render::redirect(&asked.url);
    let secure = session::is_https(request, config);
    response
        .headers_mut()
        .insert(header::SET_COOKIE, cookie(Some(&pending), secure));
    Ok(response)
}

/// `GET /oauth/callback`: the platform's answer. A code is exchanged for the refresh token,
/// kept as the project's grant; a refusal, or an answer that is not to this session's
/// consent, connects nothing and says why.
pub(crate) async fn callback<S: Store>(store: &S, config: &Config, request: &Request) -> Response {
    let secure = session::is_https(request, config);
    let mut response = answer(store, config, request).await.unwrap_or_else(|r| r);
    response
        .headers_mut()
        .append(header::SET_COOKIE, cookie(None, secure));
    response
}

async fn answer<S: Store>(store: &S, config: &Config, request: &Request) -> Answer {
    let refused = |message: &str| {
        render::error(
            StatusCode::BAD_REQUEST,
            None,
            "Nothing was connected",
            message.to_owned(),
        )
    };
    let Some(pending) = pending(request) else {
        return Err(refused(
            "This sign-in has expired, or was started in another browser. Start again from the project's Settings > Integrations.",
        ));
    };
    let owner = owner_page(store, config, request, &pending.project).await?;
    let state = request.param("state").unwrap_or_default();
    let same_state: bool = state.as_bytes().ct_eq(pending.state.as_bytes()).into();
    let same_session: bool = owner
        .viewer
        .csrf()
        .as_bytes()
        .ct_eq(pending.session.as_bytes())
        .into();
    if !same_state || !same_session {
        tracing::warn!(user = %owner.viewer.user.id, "an OAuth answer with a state of no consent under way refused");
        return Err(refused(
            "The platform's answer does not belong to a sign-in started here. Start again from Settings > Integrations.",
        ));
    }
    let kind = pending.provider.integration();
    let slug = leadtrack_core::integration::Platform::of(kind).slug;
    let name = pending.provider.name();
    if let Some(error) = request.param("error") {
        let said = match error.as_str() {
            "access_denied" => "access was not allowed".to_owned(),
            other => format!("{name} said {other:?}"),
        };
        let notice = format!("{name} did not connect: {said}. Nothing was connected.");
        return super::integrations::page_with(store, &owner, StatusCode::OK, notice).await;
    }
    let (Some(app), Some(redirect), Some(code)) = (
        app(config, pending.provider),
        redirect_uri(config, request),
        request.param("code"),
    ) else {
        return Err(refused("The platform's answer holds no code."));
    };
    let exchanged =
        sign_in::exchange(owner.outbound(), app, &code, &pending.verifier, &redirect).await;
    let consent = match exchanged {
        Ok(consent) => consent,
        Err(reason) => {
            tracing::warn!(provider = %pending.provider, %reason, "an OAuth code exchange failed");
            let notice = format!("{name} did not connect: {reason}. Nothing was connected.");
            return super::integrations::page_with(store, &owner, StatusCode::BAD_GATEWAY, notice)
                .await;
        }
    };
    let grant = OAuthGrant {
        provider: pending.provider,
        account: consent.account,
        refresh_token: consent.refresh_token,
        granted_at: Utc::now(),
    };
    store
        .set_oauth_grant(owner.project().id, pending.provider, Some(&grant))
        .await
        .map_err(|e| owner.failure(e))?;
    tracing::info!(user = %owner.viewer.user.id, provider = %pending.provider, "signed in with a platform");
    // LinkedIn needs nothing more (its conversions name their rule), nor does a platform
    // connected already (its account stays): connected with the new credentials at once.
    if connect_with(store, &owner, app, &Form::default()).await? {
        return Ok(owner.redirect(Settings::Integrations, Some(&format!("{slug}-connected"))));
    }
    Ok(owner.redirect(Settings::Integrations, Some(&format!("{slug}-signed"))))
}

/// The integration a grant connects once its account is known: Google Ads to the customer
/// picked (`customer`, `ID` or `ID:MANAGER` for a client reached through its manager),
/// Microsoft Advertising to the account picked (`account`, `CUSTOMER:ACCOUNT`) or given
/// (`customer` and `account`), Meta to the pixel picked, LinkedIn at once (its conversions
/// name their rule). An account not given is the connected integration's, so that signing
/// in again (Meta's token lasts 60 days) renews the credentials and keeps the rest. `None`
/// while an account is missing.
fn settings_of(
    app: &OAuthApp,
    grant: OAuthGrant,
    form: &Form,
    current: &Integrations,
) -> Option<IntegrationSettings> {
    // The ids picked or typed in `name` (`1234`, or `1234:5678` from a picker), digits
    // only; none when blank.
    let given = |name: &str| -> Vec<String> {
        let digits = |id: &str| id.chars().filter(char::is_ascii_digit).collect::<String>();
        let ids: Vec<String> = form.get(name).split(':').map(digits).collect();
        if ids.iter().all(String::is_empty) {
            Vec::new()
        } else {
            ids
        }
    };
    // The id given in `name`, else the stored one.
    let id = |name: &str, stored: Option<&String>| -> Option<String> {
        given(name)
            .into_iter()
            .next()
            .filter(|id| !id.is_empty())
            .or_else(|| stored.cloned())
    };
    let overridden_api =
        (app.endpoints.api != app.provider.endpoints().api).then(|| app.endpoints.api.clone());
    let token_url = (app.endpoints.token != app.provider.endpoints().token)
        .then(|| app.endpoints.token.clone());
    let (client_id, client_secret) = (app.client_id.clone(), app.client_secret.clone());
    Some(match app.provider {
        Provider::Google => {
            let stored = current.google_ads.as_ref();
            let customer_id = id("customer", stored.map(|s| &s.customer_id))?;
            // The manager picked with it; else one stored stays for the same customer.
            let picked_via = given("customer")
                .get(1)
                .cloned()
                .filter(|id| !id.is_empty());
            let kept_via = stored
                .filter(|s| s.customer_id == customer_id)
                .and_then(|s| s.login_customer_id.clone());
            IntegrationSettings::GoogleAds(GoogleAdsSettings {
                login_customer_id: picked_via.or(kept_via),
                customer_id,
                client_id,
                client_secret,
                refresh_token: grant.refresh_token,
                token_url,
                base_url: stored.and_then(|s| s.base_url.clone()),
            })
        }
        Provider::Microsoft => {
            let stored = current.microsoft_ads.as_ref();
            let (customer_id, account_id) = match given("account")[..] {
                [ref customer, ref account] if !customer.is_empty() && !account.is_empty() => {
                    (customer.clone(), account.clone())
                }
                _ => (
                    id("customer", stored.map(|s| &s.customer_id))?,
                    id("account", stored.map(|s| &s.account_id))?,
                ),
            };
            IntegrationSettings::MicrosoftAds(MicrosoftAdsSettings {
                customer_id,
                account_id,
                developer_token: app.developer_token.clone()?,
                client_id,
                client_secret: Some(client_secret),
                refresh_token: grant.refresh_token,
                token_url,
                // Conversions go where the goals were listed from: a stand-in's API also
                // takes the conversions.
                base_url: stored.and_then(|s| s.base_url.clone()).or(overridden_api),
            })
        }
        Provider::Meta => {
            let stored = current.meta.as_ref();
            IntegrationSettings::Meta(MetaSettings {
                pixel_id: id("pixel", stored.map(|s| &s.pixel_id))?,
                access_token: grant.refresh_token,
                api_version: DEFAULT_META_API_VERSION.to_owned(),
                test_event_code: stored.and_then(|s| s.test_event_code.clone()),
                action_source: stored.map(|s| s.action_source).unwrap_or_default(),
                base_url: overridden_api,
            })
        }
        Provider::Linkedin => IntegrationSettings::Linkedin(LinkedinSettings {
            client_id,
            client_secret,
            refresh_token: grant.refresh_token,
            api_version: DEFAULT_LINKEDIN_API_VERSION.to_owned(),
            token_url,
            base_url: current.linkedin.as_ref().and_then(|s| s.base_url.clone()),
        }),
        Provider::Reddit | Provider::Pinterest => {
            let signed_in = SignedIn {
                client_id,
                client_secret,
                refresh_token: grant.refresh_token,
                token_url,
            };
            let picked = form.get("ad_account");
            return signed_in_settings((app.provider, overridden_api), signed_in, picked, current);
        }
    })
}

/// Reddit's or Pinterest's settings with a sign-in's credentials, for the ad account
/// picked (Reddit's id is its pixel's), else the connected one's; the rest as connected.
/// Conversions go where the accounts were listed from when that is not the platform's own
/// API (`api`): a stand-in's API also takes the conversions.
fn signed_in_settings(
    (provider, api): (Provider, Option<String>),
    signed_in: SignedIn,
    picked: &str,
    current: &Integrations,
) -> Option<IntegrationSettings> {
    // Reddit's ids are `a2_` and letters and digits, Pinterest's digits.
    let picked = Some(picked.trim())
        .filter(|id| !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    // The access token a sign-in renews is never stored.
    let access_token = Secret::new("");
    Some(match provider {
        Provider::Reddit => {
            let stored = current.reddit.as_ref();
            IntegrationSettings::Reddit(RedditSettings {
                pixel_id: picked
                    .map(str::to_owned)
                    .or(stored.map(|s| s.pixel_id.clone()))?,
                access_token,
                signed_in: Some(signed_in),
                test_id: stored.and_then(|s| s.test_id.clone()),
                base_url: stored.and_then(|s| s.base_url.clone()).or(api),
            })
        }
        _ => {
            let stored = current.pinterest.as_ref();
            let picked = picked.filter(|id| id.chars().all(|c| c.is_ascii_digit()));
            IntegrationSettings::Pinterest(PinterestSettings {
                ad_account_id: picked
                    .map(str::to_owned)
                    .or(stored.map(|s| s.ad_account_id.clone()))?,
                access_token,
                signed_in: Some(signed_in),
                test: stored.is_some_and(|s| s.test),
                base_url: stored.and_then(|s| s.base_url.clone()).or(api),
            })
        }
    })
}

/// Connects the integration of `app`'s platform with the project's grant and what `form`
/// names, when that is enough; whether it did.
async fn connect_with<S: Store>(
    store: &S,
    owner: &Owner,
    app: &OAuthApp,
    form: &Form,
) -> Result<bool, Response> {
    let project = owner.project().id;
    let grant = store
        .oauth_grant(project, app.provider)
        .await
        .map_err(|e| owner.failure(e))?;
    let current = store
        .integrations(project)
        .await
        .map_err(|e| owner.failure(e))?;
    let Some(settings) = grant.and_then(|grant| settings_of(app, grant, form, &current)) else {
        return Ok(false);
    };
    let integration = settings.kind();
    store
        .set_integration(project, settings, Utc::now())
        .await
        .map_err(|e| owner.failure(e))?;
    if !current.is_connected(integration) && form.get("send_labels") == "on" {
        let connect = leadtrack_core::store::connect::send_labels_to(store, project, integration);
        connect.await.map_err(|e| owner.failure(e))?;
    }
    owner
        .record(store, ProjectActivity::IntegrationSaved { integration })
        .await?;
    Ok(true)
}

/// `POST integrations/{kind}/account`: connects the platform to the account picked (or
/// given), with the signed-in grant and the server's application.
pub(super) async fn pick_account<S: Store>(
    store: &S,
    (owner, form): (Owner, Form),
    slug: &str,
) -> Answer {
    let provider = leadtrack_core::integration::Platform::by_slug(slug)
        .and_then(|platform| Provider::of(platform.kind));
    let Some(app) = owner
        .oauth
        .iter()
        .find(|app| Some(app.provider) == provider)
        .cloned()
    else {
        return Ok(owner.not_found());
    };
    if connect_with(store, &owner, &app, &form).await? {
        Ok(owner.redirect(Settings::Integrations, Some(&format!("{slug}-connected"))))
    } else {
        Ok(owner.redirect(Settings::Integrations, None))
    }
}
