//! What the integration pages read from the platforms while a person waits: the client with
//! short timeouts, the project's grant from signing in, and the accounts a sign-in card
//! offers. A leaf: the integrations page, the sign-in flow, the labels' and the sources'
//! pickers use it.

use leadtrack_core::Admin;
use leadtrack_core::oauth::{OAuthApp, OAuthGrant, Provider};
use leadtrack_core::types::IntegrationKind;
use leadtrack_platforms::google_ads::{self, AdsAccount};
use leadtrack_platforms::meta::{self, MetaPixel};
use leadtrack_platforms::microsoft_ads::{self, MicrosoftAccount};
use leadtrack_platforms::{AdAccount, pinterest, reddit};
use warp::reply::Response;

use super::Owner;

/// What a card shows of signing in: who did, and the accounts to pick from.
pub(super) struct SignInCard {
    /// "Google".
    pub(super) provider: &'static str,
    /// Who signed in, once someone did.
    pub(super) account: Option<String>,
    /// The Google Ads accounts to pick from, once signed in and not yet connected.
    pub(super) accounts: Vec<AdsAccount>,
    /// Meta's pixels to pick from, once signed in and not yet connected.
    pub(super) pixels: Vec<MetaPixel>,
    /// The Microsoft Advertising accounts to pick from, once signed in and not yet
    /// connected.
    pub(super) microsoft_accounts: Vec<MicrosoftAccount>,
    /// Reddit's or Pinterest's ad accounts to pick from, once signed in and not yet
    /// connected.
    pub(super) ad_accounts: Vec<AdAccount>,
    /// Why the accounts could not be listed.
    pub(super) problem: Option<String>,
}

/// The sign-in part of `kind`'s card, when the server has an application for it.
pub(super) async fn card<S: Admin>(
    store: &S,
    owner: &Owner,
    kind: IntegrationKind,
    connected: bool,
) -> Result<Option<SignInCard>, Response> {
    let Some(provider) = Provider::of(kind) else {
        return Ok(None);
    };
    let Some((app, grant)) = app_and_grant(store, owner, provider).await? else {
        return Ok(None);
    };
    let mut card = SignInCard {
        provider: provider.name(),
        account: grant.as_ref().map(|grant| grant.account.clone()),
        accounts: Vec::new(),
        pixels: Vec::new(),
        microsoft_accounts: Vec::new(),
        ad_accounts: Vec::new(),
        problem: None,
    };
    let (Some(grant), false) = (&grant, connected) else {
        return Ok(Some(card));
    };
    let http = owner.outbound();
    let listed = match provider {
        Provider::Google => google_ads::accounts(http, app, grant)
            .await
            .map(|accounts| card.accounts = accounts),
        Provider::Meta => meta::pixels(http, app, grant)
            .await
            .map(|pixels| card.pixels = pixels),
        Provider::Microsoft => microsoft_ads::accounts(http, app, grant)
            .await
            .map(|accounts| card.microsoft_accounts = accounts),
        Provider::Reddit => reddit::ad_accounts(http, app, grant)
            .await
            .map(|accounts| card.ad_accounts = accounts),
        Provider::Pinterest => pinterest::ad_accounts(http, app, grant)
            .await
            .map(|accounts| card.ad_accounts = accounts),
        Provider::Linkedin => Ok(()),
    };
    card.problem = listed.err();
    Ok(Some(card))
}

/// The server's application for `provider` and the project's grant, when the project
/// signed in with it: what the pickers list accounts, rules and pages with.
pub(super) async fn signed_in<'a, S: Admin>(
    store: &S,
    owner: &'a Owner,
    provider: Provider,
) -> Result<Option<(&'a OAuthApp, OAuthGrant)>, Response> {
    let found = app_and_grant(store, owner, provider).await?;
    Ok(found.and_then(|(app, grant)| Some((app, grant?))))
}

/// The server's application for `provider`, when it has one, and the project's grant from
/// signing in with it, if any.
async fn app_and_grant<'a, S: Admin>(
    store: &S,
    owner: &'a Owner,
    provider: Provider,
) -> Result<Option<(&'a OAuthApp, Option<OAuthGrant>)>, Response> {
    let Some(app) = owner.oauth.iter().find(|app| app.provider == provider) else {
        return Ok(None);
    };
    let grant = store
        .oauth_grant(owner.project().id, provider)
        .await
        .map_err(|e| owner.failure(e))?;
    Ok(Some((app, grant)))
}

/// A platform's list, or none (the field or card is then typed) when it cannot be had.
pub(super) fn listed<T>(what: &str, found: Result<Vec<T>, String>) -> Vec<T> {
    found.unwrap_or_else(|reason| {
        tracing::warn!(%reason, "{what} could not be listed");
        Vec::new()
    })
}
