//! Secrets sealed at rest read back exactly, through every path that reads them: the
//! settings pages, the delivery worker's claims, and after a restart. (That the raw data
//! holds no secret is each backend's own test: only it can read its raw data.)

use super::*;

/// Every kind of secret reads back as given, before and after a restart.
pub async fn secrets_read_back_exactly_after_a_restart<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = keep_secrets(&store).await;
    assert_eq!(secrets_of(&store, &project).await, SECRETS);
    let store = backend.reopen(store).await;
    assert_eq!(secrets_of(&store, &project).await, SECRETS);
}

/// A refresh token the platform rotated is sealed like the rest.
pub async fn a_rotated_refresh_token_reads_back_after_a_restart<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = keep_secrets(&store).await;
    let settings = IntegrationSettings::Linkedin(LinkedinSettings {
        client_id: "client".to_owned(),
        client_secret: Secret::new("client-secret"),
        refresh_token: Secret::new("refresh-1"),
        api_version: "202510".to_owned(),
        token_url: None,
        base_url: None,
    });
    store
        .set_integration(project.id, settings, at(1))
        .await
        .unwrap();
    let (old, new) = (Secret::new("refresh-1"), Secret::new("refresh-2"));
    let kind = IntegrationKind::Linkedin;
    assert!(
        store
            .rotate_refresh_token(project.id, kind, &old, new, at(2))
            .await
            .unwrap()
    );
    let store = backend.reopen(store).await;
    let integrations = store.integrations(project.id).await.unwrap();
    let settings = integrations.linkedin.expect("LinkedIn");
    assert_eq!(settings.refresh_token.expose(), "refresh-2");
    assert_eq!(settings.client_secret.expose(), "client-secret");
}

/// A platform's grant by sign-in is kept per project and platform, replaced by a newer
/// one, read back after a restart, and forgotten.
pub async fn oauth_grants_are_kept_replaced_and_forgotten<B: Backend>(backend: &B) {
    use crate::oauth::{OAuthGrant, Provider};
    let store = backend.open().await;
    let (acme, other) = (
        project(&store, "acme").await,
        project(&store, "other").await,
    );
    let grant = |account: &str, token: &str| OAuthGrant {
        provider: Provider::Google,
        account: account.to_owned(),
        refresh_token: Secret::new(token),
        granted_at: at(1),
    };
    assert_eq!(
        store.oauth_grant(acme.id, Provider::Google).await.unwrap(),
        None
    );
    let first = grant("ada@example.com", "refresh-a");
    store
        .set_oauth_grant(acme.id, Provider::Google, Some(&first))
        .await
        .unwrap();
    let second = grant("grace@example.com", "refresh-b");
    store
        .set_oauth_grant(acme.id, Provider::Google, Some(&second))
        .await
        .unwrap();
    let store = backend.reopen(store).await;
    assert_eq!(
        store.oauth_grant(acme.id, Provider::Google).await.unwrap(),
        Some(second)
    );
    assert_eq!(
        store
            .oauth_grant(acme.id, Provider::Linkedin)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store.oauth_grant(other.id, Provider::Google).await.unwrap(),
        None
    );
    store
        .set_oauth_grant(acme.id, Provider::Google, None)
        .await
        .unwrap();
    assert_eq!(
        store.oauth_grant(acme.id, Provider::Google).await.unwrap(),
        None
    );
    let missing = store
        .set_oauth_grant(
            crate::types::ProjectId(999_999),
            Provider::Google,
            Some(&first),
        )
        .await;
    assert!(
        matches!(missing, Err(StoreError::NotFound(Entity::Project))),
        "{missing:?}"
    );
}

/// A lead source's settings are kept per project and kind, replaced, read back after a
/// restart, and removed.
pub async fn lead_sources_are_kept_replaced_and_removed<B: Backend>(backend: &B) {
    use crate::source::{LeadSource, SourceKind};
    let store = backend.open().await;
    let (acme, other) = (
        project(&store, "acme").await,
        project(&store, "other").await,
    );
    let kind = SourceKind::GoogleLeadForms;
    let source = |key: &str| LeadSource::GoogleLeadForms {
        key: Secret::new(key),
    };
    assert_eq!(store.lead_source(acme.id, kind).await.unwrap(), None);
    store
        .set_lead_source(acme.id, kind, Some(&source("key-a")))
        .await
        .unwrap();
    store
        .set_lead_source(acme.id, kind, Some(&source("key-b")))
        .await
        .unwrap();
    let store = backend.reopen(store).await;
    assert_eq!(
        store.lead_source(acme.id, kind).await.unwrap(),
        Some(source("key-b"))
    );
    assert_eq!(store.lead_source(other.id, kind).await.unwrap(), None);
    store.set_lead_source(acme.id, kind, None).await.unwrap();
    assert_eq!(store.lead_source(acme.id, kind).await.unwrap(), None);
    let missing = store
        .set_lead_source(
            crate::types::ProjectId(999_999),
            kind,
            Some(&source("key-c")),
        )
        .await;
    assert!(
        matches!(missing, Err(StoreError::NotFound(Entity::Project))),
        "{missing:?}"
    );
}
