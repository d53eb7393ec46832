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
