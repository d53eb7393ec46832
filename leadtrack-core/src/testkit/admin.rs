//! Administration: projects, API keys, labels and integrations.

use chrono::Duration;
use serde_json::json;
use uuid::Uuid;

use super::{
    Backend, all_integrations, all_kinds, all_mapped, assert_not_found, at, by, create, label,
    project, update, webhook,
};
use crate::integration::{IntegrationSettings, Secret, WebhookSettings};
use crate::job::Attempt;
use crate::key::{KeyHash, KeyRef};
use crate::label::{LabelMapping, NewLabel};
use crate::project::{NewProject, ProjectSettings};
use crate::store::{Admin, Conflict, Entity, JobQueue, LeadStore, StoreError};
use crate::types::{AttemptOutcome, Consent, ConsentStatus, ConversionId, IntegrationKind};

/// Projects: created with a given or generated id, unique ids, validated settings,
/// deactivation.
pub async fn project_administration<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p1 = project(&store, "acme").await;
    assert_eq!(
        (p1.public_id.as_str(), p1.currency.as_str(), p1.active),
        ("acme", "EUR", true)
    );
    assert_eq!(p1.lost_mapping, LabelMapping::default_lost());
    let generated = store
        .create_project(
            NewProject {
                public_id: None,
                name: " Second ".into(),
                currency: None,
            },
            at(1),
        )
        .await
        .unwrap();
    assert!(generated.public_id.starts_with("prj_"));
    assert_eq!(
        (generated.name.as_str(), generated.currency.as_str()),
        ("Second", "USD")
    );

    let duplicate = store
        .create_project(
            NewProject {
                public_id: Some("acme".into()),
                name: "Again".into(),
                currency: None,
            },
            at(2),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(duplicate, StoreError::Conflict(Conflict::ProjectExists(_))),
        "{duplicate}"
    );
    for (id, currency) in [(Some("bad id"), None), (Some("ok"), Some("euro"))] {
        let err = store
            .create_project(
                NewProject {
                    public_id: id.map(str::to_owned),
                    name: "X".into(),
                    currency: currency.map(str::to_owned),
                },
                at(2),
            )
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::Invalid(_)), "{err}");
    }
    let listed: Vec<String> = store
        .projects()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.public_id)
        .collect();
    assert_eq!(listed, ["acme".to_owned(), generated.public_id.clone()]);

    let updated = store
        .update_project(
            p1.id,
            ProjectSettings {
                currency: Some("GBP".into()),
                region: Some(Some("gb".into())),
                default_consent: Some(Consent {
                    ad_user_data: Some(ConsentStatus::Denied),
                    ad_personalization: None,
                }),
                lost_mapping: Some(LabelMapping {
                    meta_event: Some("Lost".into()),
                    ..LabelMapping::default()
                }),
                ..ProjectSettings::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        (updated.currency.as_str(), updated.region.as_deref()),
        ("GBP", Some("GB"))
    );
    assert_eq!(
        store
            .project("acme")
            .await
            .unwrap()
            .default_consent
            .ad_user_data,
        Some(ConsentStatus::Denied)
    );
    let err = store
        .update_project(
            p1.id,
            ProjectSettings {
                region: Some(Some("UK".into())),
                ..ProjectSettings::default()
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Invalid(_)), "{err}");

    let inactive = store.set_project_active(p1.id, false).await.unwrap();
    assert!(!inactive.active);
    let found = store.project("acme").await.unwrap();
    assert_eq!(found, inactive);
    assert_eq!(store.project_by_public_id("acme").await.unwrap(), found);
    assert_eq!(found.lost_mapping.meta_event.as_deref(), Some("Lost"));
    assert_not_found(store.project("nope").await, Entity::Project);
    assert_not_found(store.project_by_public_id("nope").await, Entity::Project);
}

/// Keys authenticate their project until revoked, by whole key or by prefix.
pub async fn api_keys_authenticate_until_revoked<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let first = store.issue_api_key(project.id, at(0)).await.unwrap();
    let second = store.issue_api_key(project.id, at(1)).await.unwrap();
    assert_ne!(first.key, second.key);
    let authenticates = |key: String| {
        let store = store.clone();
        async move {
            match store.authenticate(&KeyHash::of(&key)).await {
                Ok(_) => true,
                Err(StoreError::NotFound(Entity::ApiKey)) => false,
                Err(err) => panic!("authenticate failed: {err}"),
            }
        }
    };
    assert!(authenticates(first.key.clone()).await);
    assert!(authenticates(second.key.clone()).await);
    assert!(!authenticates(format!("{}x", first.key)).await);
    assert!(
        !authenticates(first.info.prefix.clone()).await,
        "a prefix is not a key"
    );

    let revoked = store
        .revoke_api_key(project.id, &KeyRef::parse(&first.info.prefix), at(2))
        .await
        .unwrap();
    assert_eq!(revoked.revoked_at, Some(at(2)));
    assert!(!authenticates(first.key.clone()).await);
    assert!(authenticates(second.key.clone()).await);
    store
        .revoke_api_key(project.id, &KeyRef::parse(&second.key), at(3))
        .await
        .unwrap();
    assert!(!authenticates(second.key).await);

    let listed = store.api_keys(project.id).await.unwrap();
    assert_eq!(listed.len(), 2);
    assert!(listed.iter().all(|key| key.revoked_at.is_some()));
    let ambiguous = store
        .revoke_api_key(project.id, &KeyRef::parse("lt_"), at(4))
        .await
        .unwrap_err();
    assert!(
        matches!(ambiguous, StoreError::Conflict(Conflict::AmbiguousKey(_))),
        "{ambiguous}"
    );
    let unknown = store
        .revoke_api_key(project.id, &KeyRef::parse("lt_zzzzzzzz"), at(4))
        .await
        .unwrap_err();
    assert!(
        matches!(unknown, StoreError::NotFound(Entity::ApiKey)),
        "{unknown}"
    );

    // A deactivated project's keys still name it: the caller answers 403, not 401.
    let third = store.issue_api_key(project.id, at(5)).await.unwrap();
    store.set_project_active(project.id, false).await.unwrap();
    let found = store.authenticate(&KeyHash::of(&third.key)).await.unwrap();
    assert!(!found.active);
}

/// Labels are created, listed and found per project; integrations are connected, replaced
/// and disconnected.
pub async fn labels_and_integrations<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let created = store
        .create_label(
            project.id,
            NewLabel::done(" Customer ", all_mapped()),
            at(1),
        )
        .await
        .unwrap();
    assert_eq!(
        (created.name.as_str(), created.mark_as_done),
        ("Customer", true)
    );
    assert_eq!(
        store.label(project.id, created.id).await.unwrap(),
        created.clone()
    );
    assert_eq!(store.labels(project.id).await.unwrap(), [created]);
    let err = store
        .create_label(
            project.id,
            NewLabel {
                name: " ".into(),
                mark_as_done: false,
                mapping: LabelMapping::default(),
            },
            at(1),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Invalid(_)), "{err}");

    for settings in all_integrations() {
        store
            .set_integration(project.id, settings, at(1))
            .await
            .unwrap();
    }
    let integrations = store.integrations(project.id).await.unwrap();
    assert_eq!(integrations.connected(), all_kinds());
    let replaced = WebhookSettings {
        url: "https://other.example.com".into(),
        ..webhook()
    };
    store
        .set_integration(
            project.id,
            IntegrationSettings::Webhook(replaced.clone()),
            at(2),
        )
        .await
        .unwrap();
    assert_eq!(
        store.integrations(project.id).await.unwrap().webhook,
        Some(replaced)
    );
    assert!(
        store
            .remove_integration(project.id, IntegrationKind::Meta)
            .await
            .unwrap()
    );
    assert!(
        !store
            .remove_integration(project.id, IntegrationKind::Meta)
            .await
            .unwrap()
    );
    let left = store.integrations(project.id).await.unwrap().connected();
    assert_eq!(
        left,
        [
            IntegrationKind::GoogleAds,
            IntegrationKind::Ga4,
            IntegrationKind::MicrosoftAds,
            IntegrationKind::Linkedin,
            IntegrationKind::Tiktok,
            IntegrationKind::Reddit,
            IntegrationKind::Pinterest,
            IntegrationKind::Snapchat,
            IntegrationKind::Webhook
        ]
    );
}

/// A label is changed in place (same id), by the rules of new labels, and only through its
/// own project.
pub async fn labels_are_edited_within_their_project<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p1 = project(&store, "p1").await;
    let p2 = project(&store, "p2").await;
    let id = label(&store, &p1, false, LabelMapping::default()).await;
    let changed = NewLabel::done(" Customer ", all_mapped());
    let updated = store
        .update_label(p1.id, id, changed.clone())
        .await
        .unwrap();
    assert_eq!(
        (updated.id, updated.name.as_str(), updated.mark_as_done),
        (id, "Customer", true)
    );
    assert_eq!(updated.mapping, all_mapped());
    assert_eq!(store.label(p1.id, id).await.unwrap(), updated);
    assert_eq!(
        store.labels(p1.id).await.unwrap(),
        std::slice::from_ref(&updated)
    );

    let blank = NewLabel {
        name: "  ".into(),
        ..changed.clone()
    };
    let err = store.update_label(p1.id, id, blank).await.unwrap_err();
    assert!(matches!(err, StoreError::Invalid(_)), "{err}");
    assert_not_found(
        store.update_label(p2.id, id, changed.clone()).await,
        Entity::Label,
    );
    assert_not_found(
        store.update_label(p1.id, Uuid::new_v4(), changed).await,
        Entity::Label,
    );
    assert_eq!(
        store.label(p1.id, id).await.unwrap(),
        updated,
        "refused changes change nothing"
    );
}

/// Labels keep the order owners give them (a new one comes last); an archived label is
/// kept, listed as archived, and still rates a lead through the API; a label never used is
/// deleted, one that was used is not.
pub async fn labels_are_ordered_archived_and_deleted_only_unused<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p = project(&store, "p1").await;
    let other = project(&store, "p2").await;
    let mut made = Vec::new();
    for (name, minute) in [("A", 1), ("B", 1), ("C", 2)] {
        let new = NewLabel::done(name, LabelMapping::webhook_only());
        made.push(store.create_label(p.id, new, at(minute)).await.unwrap());
    }
    let names = |labels: Vec<crate::label::ConversionLabel>| {
        labels.into_iter().map(|l| l.name).collect::<Vec<_>>()
    };
    assert_eq!(names(store.labels(p.id).await.unwrap()), ["A", "B", "C"]);
    let [a, b, c] = [made[0].id, made[1].id, made[2].id];
    let reordered = store.reorder_labels(p.id, &[c, a, b]).await.unwrap();
    assert_eq!(names(reordered), ["C", "A", "B"]);
    for wrong in [vec![c, a], vec![c, a, b, b], vec![c, a, Uuid::new_v4()]] {
        let refused = store.reorder_labels(p.id, &wrong).await;
        assert!(
            matches!(refused, Err(StoreError::Invalid(_))),
            "{refused:?}"
        );
    }
    let new = NewLabel::done("D", LabelMapping::webhook_only());
    let d = store.create_label(p.id, new, at(3)).await.unwrap().id;
    assert_eq!(
        names(store.labels(p.id).await.unwrap()),
        ["C", "A", "B", "D"]
    );

    let archived = store.set_label_archived(p.id, b, true).await.unwrap();
    assert!(archived.archived);
    assert_eq!(store.label(p.id, b).await.unwrap(), archived);
    assert_not_found(
        store.set_label_archived(other.id, b, true).await,
        Entity::Label,
    );
    let lead = create(&store, &p, json!({"userData": {"email": "a@x.io"}}), 3).await;
    let rated = update(lead.lead_id, ConversionId::Label(b));
    store
        .update_status(p.id, &rated, &by(), at(4))
        .await
        .unwrap();

    let used = store.delete_label(p.id, b).await;
    assert!(
        matches!(used, Err(StoreError::Conflict(Conflict::LabelInUse))),
        "{used:?}"
    );
    assert_not_found(store.delete_label(other.id, d).await, Entity::Label);
    store.delete_label(p.id, d).await.unwrap();
    assert_not_found(store.delete_label(p.id, d).await, Entity::Label);
    let restored = store.set_label_archived(p.id, b, false).await.unwrap();
    assert!(!restored.archived);
    let kept = store.labels(p.id).await.unwrap();
    assert_eq!(names(kept), ["C", "A", "B"]);
}

/// An attempt of the suite: `outcome` at `minute`, with an HTTP status.
fn attempt(kind: IntegrationKind, minute: i64, outcome: AttemptOutcome, status: u16) -> Attempt {
    Attempt {
        integration: kind,
        at: at(minute),
        outcome,
        http_status: Some(status),
        error: (outcome != AttemptOutcome::Delivered).then(|| format!("HTTP {status}")),
        retry_at: None,
        batch: None,
    }
}

/// The newest attempt per integration is the one with the latest time (ties: the one
/// recorded last), across the project's jobs and never another project's.
pub async fn last_attempts_are_the_newest_per_integration<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p1 = project(&store, "p1").await;
    let p2 = project(&store, "p2").await;
    let quiet = project(&store, "quiet").await;
    for project in [&p1, &p2] {
        for settings in all_integrations() {
            store
                .set_integration(project.id, settings, at(0))
                .await
                .unwrap();
        }
    }
    assert!(store.last_attempts(p1.id).await.unwrap().is_empty());
    let lead =
        json!({"userData": {"email": "a@x.io"}, "attributionData": {"gclid": "G", "cid": "1.2"}});
    let mut jobs = Vec::new();
    for project in [&p1, &p1, &p2] {
        let label_id = label(&store, project, true, all_mapped()).await;
        let created = create(&store, project, lead.clone(), 0).await;
        let rated = update(created.lead_id, ConversionId::Label(label_id));
        store
            .update_status(project.id, &rated, &by(), at(1))
            .await
            .unwrap();
        let claimed = store
            .claim_job(at(1), Duration::minutes(60))
            .await
            .unwrap()
            .expect("a due job");
        jobs.push((claimed.job.id, claimed.lease.token));
    }
    use AttemptOutcome::{Delivered, Failed, Retry};
    use IntegrationKind::{Ga4, GoogleAds, Meta, Webhook};
    let recorded = [
        (0, attempt(Ga4, 2, Delivered, 204)),
        (0, attempt(Meta, 4, Failed, 400)),
        // Recorded later, but made earlier: not the newest.
        (1, attempt(Meta, 3, Delivered, 200)),
        (0, attempt(Webhook, 5, Retry, 503)),
        // At the same time: the one recorded last is the newest.
        (1, attempt(Webhook, 5, Delivered, 200)),
        (2, attempt(Webhook, 9, Failed, 410)),
        (2, attempt(GoogleAds, 9, Delivered, 200)),
    ];
    for (job, attempt) in &recorded {
        let (id, lease) = jobs[*job];
        store.record_attempt(id, lease, attempt).await.unwrap();
    }
    assert_eq!(
        store.last_attempts(p1.id).await.unwrap(),
        [
            recorded[0].1.clone(),
            recorded[1].1.clone(),
            recorded[4].1.clone()
        ],
        "Ga4, Meta, Webhook in kind order; Google Ads never tried in p1"
    );
    assert_eq!(
        store.last_attempts(p2.id).await.unwrap(),
        [recorded[6].1.clone(), recorded[5].1.clone()]
    );
    assert!(store.last_attempts(quiet.id).await.unwrap().is_empty());
}

/// Allowed browser origins: none at first, set checked and in lowercase, kept through
/// reads, cleared by an empty list; an invalid origin changes nothing.
pub async fn allowed_origins_are_kept_with_the_project<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p1 = project(&store, "acme").await;
    assert!(p1.allowed_origins.is_empty());
    let set = |origins: &[&str]| ProjectSettings {
        allowed_origins: Some(origins.iter().map(|o| (*o).to_owned()).collect()),
        ..ProjectSettings::default()
    };
    let updated = store
        .update_project(
            p1.id,
            set(&["https://Shop.example", "http://localhost:8080"]),
        )
        .await
        .unwrap();
    let expected = ["https://shop.example", "http://localhost:8080"];
    assert_eq!(updated.allowed_origins, expected);
    assert_eq!(
        store
            .project_by_public_id("acme")
            .await
            .unwrap()
            .allowed_origins,
        expected
    );
    assert_eq!(
        store.project("acme").await.unwrap().allowed_origins,
        expected
    );
    assert_eq!(store.projects().await.unwrap()[0].allowed_origins, expected);

    let err = store
        .update_project(p1.id, set(&["https://ok.example", "not an origin"]))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Invalid(_)), "{err}");
    assert_eq!(
        store.project("acme").await.unwrap().allowed_origins,
        expected
    );

    let cleared = store.update_project(p1.id, set(&[])).await.unwrap();
    assert!(cleared.allowed_origins.is_empty());
    assert!(
        store
            .project("acme")
            .await
            .unwrap()
            .allowed_origins
            .is_empty()
    );
}

/// A refresh token the platform rotated replaces the stored one, only while the stored one
/// is the token it was issued for, and only in that project's integration.
pub async fn rotated_refresh_tokens_are_kept_unless_reconnected<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let acme = project(&store, "acme").await;
    let other = project(&store, "other").await;
    for settings in all_integrations() {
        for id in [acme.id, other.id] {
            store
                .set_integration(id, settings.clone(), at(0))
                .await
                .unwrap();
        }
    }
    let stored = |id| {
        let store = &store;
        async move {
            store
                .integrations(id)
                .await
                .unwrap()
                .microsoft_ads
                .unwrap()
                .refresh_token
        }
    };
    let kind = IntegrationKind::MicrosoftAds;
    let first = stored(acme.id).await;
    let rotated = Secret::new("ms-refresh-2");
    assert!(
        store
            .rotate_refresh_token(acme.id, kind, &first, rotated.clone(), at(1))
            .await
            .unwrap()
    );
    assert_eq!(stored(acme.id).await, rotated);
    assert_eq!(
        stored(other.id).await,
        first,
        "another project keeps its own"
    );
    // A late rotation of the first token loses to the newer one.
    let late = Secret::new("ms-refresh-late");
    assert!(
        !store
            .rotate_refresh_token(acme.id, kind, &first, late, at(2))
            .await
            .unwrap()
    );
    assert_eq!(stored(acme.id).await, rotated);
    // Integrations without refresh tokens, or not connected, are left alone.
    assert!(
        !store
            .rotate_refresh_token(
                acme.id,
                IntegrationKind::Ga4,
                &first,
                rotated.clone(),
                at(3)
            )
            .await
            .unwrap()
    );
    store
        .remove_integration(acme.id, IntegrationKind::Linkedin)
        .await
        .unwrap();
    assert!(
        !store
            .rotate_refresh_token(acme.id, IntegrationKind::Linkedin, &first, rotated, at(3))
            .await
            .unwrap()
    );
    assert!(
        store
            .integrations(acme.id)
            .await
            .unwrap()
            .linkedin
            .is_none()
    );
}

/// Connecting a platform makes every label send there what the platform recommends (the
/// customer's event for a label that marks leads done, the step's for one that does not),
/// keeps what a label already sends there, and changes no other project's labels.
pub async fn connecting_a_platform_sends_every_label_there<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let acme = project(&store, "acme").await;
    let other = project(&store, "other").await;
    let add = |project, new: NewLabel| {
        let store = store.clone();
        async move { store.create_label(project, new, at(0)).await.unwrap() }
    };
    let customer = add(acme.id, NewLabel::done("Customer", LabelMapping::default())).await;
    let step = NewLabel {
        mark_as_done: false,
        ..NewLabel::done("Qualified", LabelMapping::default())
    };
    let qualified = add(acme.id, step).await;
    let own = LabelMapping {
        ga4_event: Some("booked_call".to_owned()),
        ..LabelMapping::default()
    };
    let booked = add(acme.id, NewLabel::done("Booked", own)).await;
    let theirs = add(other.id, NewLabel::done("Theirs", LabelMapping::default())).await;

    let changed = crate::store::connect::send_labels_to(&store, acme.id, IntegrationKind::Ga4)
        .await
        .unwrap();
    assert_eq!(changed, ["Customer", "Qualified"]);
    let event = |id, project| {
        let store = store.clone();
        async move { store.label(project, id).await.unwrap().mapping.ga4_event }
    };
    assert_eq!(
        event(customer.id, acme.id).await.as_deref(),
        Some("close_convert_lead")
    );
    assert_eq!(
        event(qualified.id, acme.id).await.as_deref(),
        Some("qualify_lead")
    );
    assert_eq!(
        event(booked.id, acme.id).await.as_deref(),
        Some("booked_call")
    );
    assert_eq!(event(theirs.id, other.id).await, None);
    let none = crate::store::connect::send_labels_to(&store, acme.id, IntegrationKind::GoogleAds)
        .await
        .unwrap();
    assert!(
        none.is_empty(),
        "a Google Ads action is the owner's to pick"
    );
}
