//! Connecting a platform by signing in: a consent's code exchanged for a refresh token
//! (RFC 6749 section 4.1.3, with PKCE's verifier, RFC 7636 section 4.5) through `oauth2`,
//! and who signed in.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use leadtrack_core::integration::Secret;
use leadtrack_core::oauth::{OAuthApp, Provider};
use leadtrack_outbound::Outbound;
use oauth2::{AuthorizationCode, PkceCodeVerifier, RedirectUrl};

use crate::api::failure;
use crate::meta;
use crate::oauth::{self, Consent, Exchange};

/// Exchanges the code a consent returned for its refresh token. The error is for people,
/// without any credential.
pub async fn exchange(
    http: &Outbound,
    app: &OAuthApp,
    code: &str,
    verifier: &str,
    redirect_uri: &str,
) -> Result<Consent, String> {
    if app.provider == Provider::Meta {
        return meta::exchange(http, app, (code, verifier), redirect_uri).await;
    }
    let secret = app.client_secret.expose();
    let redirect = RedirectUrl::new(redirect_uri.to_owned())
        .map_err(|_| "the redirect address is not a URL".to_owned())?;
    let auth = app.provider.client_auth();
    let client = oauth::client(&app.endpoints.token, &app.client_id, Some(secret), auth)?
        .set_redirect_uri(redirect);
    let exchange = Exchange::new(http);
    let tokens = client
        .exchange_code(AuthorizationCode::new(code.to_owned()))
        .set_pkce_verifier(PkceCodeVerifier::new(verifier.to_owned()))
        .request_async(&exchange)
        .await
        .map_err(|_| {
            let failed = exchange.failure("the token endpoint", &[secret, code, verifier]);
            failure(&failed)
        })?;
    let refresh_token = tokens.refresh_token.ok_or_else(|| {
        format!(
            "{} gave no refresh token; remove leadtrack's access in your account's security settings, then connect again",
            app.provider.name()
        )
    })?;
    Ok(Consent {
        account: tokens
            .id_token
            .as_deref()
            .and_then(signed_in)
            .unwrap_or_else(|| format!("your {} account", app.provider.name())),
        refresh_token: Secret::new(refresh_token.into_secret()),
    })
}

/// Who an ID token names: its `email`, else its `sub`. The token came straight from the
/// token endpoint over TLS, which OpenID Connect Core (section 3.1.3.7) accepts in place of
/// checking its signature.
fn signed_in(id_token: &str) -> Option<String> {
    let payload = id_token.split('.').nth(1)?;
    let claims: serde_json::Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
    claims
        .get("email")
        .or_else(|| claims.get("sub"))
        .and_then(|value| value.as_str())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_token_names_who_signed_in() {
        let claims = URL_SAFE_NO_PAD.encode(br#"{"sub":"123","email":"ada@example.com"}"#);
        assert_eq!(
            signed_in(&format!("e30.{claims}.sig")).as_deref(),
            Some("ada@example.com")
        );
        let sub = URL_SAFE_NO_PAD.encode(br#"{"sub":"123"}"#);
        assert_eq!(signed_in(&format!("e30.{sub}.")).as_deref(), Some("123"));
        assert_eq!(signed_in("not a token"), None);
    }
}
