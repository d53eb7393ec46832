//! Creating and finding leads: deduplication, the matching rules, project isolation and
//! durability.

use futures_util::future::join_all;
use serde_json::{Value, json};

use super::{
    Backend, assert_not_found, at, attributed, by, create, data, found, ids, label, lead_by_id,
    project, update, webhook, webhook_label,
};
use crate::integration::IntegrationSettings;
use crate::key::{KeyHash, KeyRef};
use crate::label::LabelMapping;
use crate::lead::CreatedLead;
use crate::request::{CreateRoute, LeadQuery, StatusUpdate};
use crate::store::{Admin, Entity, JobQueue, LeadStore, LeadWebhooks, StoreError};
use crate::types::{ConversionId, LeadId, LeadIdentifier, LeadStatus};

/// 64 concurrent creates with one `uniqueEventId` make one lead: one "created", 63
/// "updated", and every submission's fields merged in.
pub async fn concurrent_creates_with_one_event_id_make_one_lead<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let results = join_all((0..64).map(|i| {
        let store = store.clone();
        let body = json!({
            "userData": {"email": "ada@example.com", format!("field{i}"): format!("value{i}")},
            "formData": {"uniqueEventId": "evt-1", "formName": "Contact"},
        });
        async move { store.create_lead(project.id, data(body), at(i)).await }
    }))
    .await;
    let results: Vec<CreatedLead> = results.into_iter().map(|r| r.expect("create")).collect();
    assert_eq!(
        results.iter().filter(|r| r.created).count(),
        1,
        "exactly one create"
    );
    assert_eq!(results.iter().filter(|r| !r.created).count(), 63);
    let id = results[0].lead_id;
    assert!(
        results.iter().all(|r| r.lead_id == id),
        "every create names the one lead"
    );

    let page = store
        .list_leads(project.id, &LeadQuery::default())
        .await
        .unwrap();
    assert_eq!(page.total, 1);
    let lead = &page.leads[0];
    for i in 0..64 {
        assert_eq!(
            lead.data.user(&format!("field{i}")),
            Some(format!("value{i}").as_str())
        );
    }
    assert_eq!(lead.data.user("email"), Some("ada@example.com"));
}

/// A deduplicated create merges objects key by key, replaces `channelFlow` and
/// `uniqueIdentifier` when given, and never changes status, price, note, createdAt or
/// conversionId.
pub async fn deduplicated_creates_merge_and_keep_what_the_service_manages<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let lead_label = label(&store, &project, false, LabelMapping::default()).await;
    let first = create(
        &store,
        &project,
        json!({
            "userData": {"email": "ada@example.com", "firstName": "Ada"},
            "attributionData": {"gclid": "G1"},
            "formData": {"uniqueEventId": "evt-1", "formName": "Contact", "a": 1},
            "deviceData": {"ipAddress": "192.0.2.1", "userAgent": "UA-1"},
            "channelFlow": "first",
            "uniqueIdentifier": "crm-1",
        }),
        0,
    )
    .await;
    assert!(first.created);
    assert_eq!(first.unique_identifier.as_deref(), Some("crm-1"));
    let rated = StatusUpdate {
        price: Some(5000),
        note: Some(Some("called".to_owned())),
        ..update(first.lead_id, ConversionId::Label(lead_label))
    };
    store
        .update_status(project.id, &rated, &by(), at(1))
        .await
        .unwrap();

    let second = create(
        &store,
        &project,
        json!({
            "userData": {"firstName": "Augusta", "phone": "+44 20 7946 0958"},
            "attributionData": {"fbp": "fb.1.2.3"},
            "formData": {"uniqueEventId": "evt-1", "b": 2},
            "deviceData": {"userAgent": "UA-2"},
            "channelFlow": "second",
        }),
        5,
    )
    .await;
    assert!(!second.created);
    assert_eq!(second.lead_id, first.lead_id);
    assert_eq!(
        second.unique_identifier.as_deref(),
        Some("crm-1"),
        "kept when not given"
    );

    let lead = lead_by_id(&store, &project, first.lead_id).await;
    assert_eq!(
        Value::Object(lead.data.user_data.clone()),
        json!({"email": "ada@example.com", "firstName": "Augusta", "phone": "+44 20 7946 0958"})
    );
    assert_eq!(
        Value::Object(lead.data.attribution_data.clone()),
        json!({"gclid": "G1", "fbp": "fb.1.2.3"})
    );
    assert_eq!(
        Value::Object(lead.data.form_data.clone()),
        json!({"uniqueEventId": "evt-1", "formName": "Contact", "a": 1, "b": 2})
    );
    assert_eq!(
        lead.data.device_data.ip_address.as_deref(),
        Some("192.0.2.1")
    );
    assert_eq!(lead.data.device_data.user_agent.as_deref(), Some("UA-2"));
    assert_eq!(lead.data.channel_flow.as_deref(), Some("second"));
    assert_eq!(lead.status, LeadStatus::Pending);
    assert_eq!(lead.price, Some(5000));
    assert_eq!(lead.note.as_deref(), Some("called"));
    assert_eq!(lead.created_at, at(0));
    assert_eq!(lead.conversion_id, Some(ConversionId::Label(lead_label)));

    let third = create(
        &store,
        &project,
        json!({"userData": {"email": "x@example.com"}, "formData": {"uniqueEventId": "evt-1"}, "uniqueIdentifier": "crm-2"}),
        6,
    )
    .await;
    assert_eq!(
        third.unique_identifier.as_deref(),
        Some("crm-2"),
        "replaced when given"
    );
    // The merged values are what lookups and filters see.
    let by_phone = found(
        store
            .find_lead(project.id, &LeadIdentifier::Phone("+442079460958".into()))
            .await,
        Entity::Lead,
    );
    assert_eq!(by_phone.map(|l| l.id), Some(first.lead_id));
    let by_email = found(
        store
            .find_lead(project.id, &LeadIdentifier::Email("x@example.com".into()))
            .await,
        Entity::Lead,
    );
    assert_eq!(by_email.map(|l| l.id), Some(first.lead_id));
    let old_email = found(
        store
            .find_lead(project.id, &LeadIdentifier::Email("ada@example.com".into()))
            .await,
        Entity::Lead,
    );
    assert_eq!(old_email, None, "the old email was replaced");
    let search = |term: &str| {
        let store = store.clone();
        let query = LeadQuery {
            search: Some(term.to_owned()),
            ..LeadQuery::default()
        };
        async move { ids(&store.list_leads(project.id, &query).await.unwrap().leads) }
    };
    assert_eq!(
        search("x@example").await,
        [first.lead_id],
        "search sees the merged data"
    );
    assert_eq!(search("ada@example").await, []);
    assert_eq!(search("augusta").await, [first.lead_id]);
}

/// The same event id in another project, or a different event id, makes a new lead; no
/// event id never deduplicates.
pub async fn event_ids_deduplicate_within_a_project_only<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p1 = project(&store, "p1").await;
    let p2 = project(&store, "p2").await;
    let body = |event: &str| json!({"userData": {"email": "a@x.io"}, "formData": {"uniqueEventId": event}});
    let a = create(&store, &p1, body("e1"), 0).await;
    let b = create(&store, &p2, body("e1"), 0).await;
    let c = create(&store, &p1, body("e2"), 0).await;
    let d = create(&store, &p1, json!({"userData": {"email": "a@x.io"}}), 0).await;
    let e = create(&store, &p1, json!({"userData": {"email": "a@x.io"}}), 0).await;
    assert!(a.created && b.created && c.created && d.created && e.created);
    let all = [a.lead_id, b.lead_id, c.lead_id, d.lead_id, e.lead_id];
    let mut unique = all.to_vec();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), 5, "five distinct leads: {all:?}");
    assert!(all.iter().all(|id| id.0 > 0));
}

/// Lookups by uniqueIdentifier, email and phone return the most recently created match
/// (ties: the higher id); email ignores case and surrounding space, phone ignores spaces,
/// `-`, `.`, `(` and `)`; uniqueIdentifier is exact.
pub async fn lookups_pick_the_newest_match_by_the_matching_rules<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let body = json!({"userData": {"email": "Ada@Example.com", "phone": "+1 (555) 010-0000"}, "uniqueIdentifier": "crm-1"});
    let newest = create(&store, &project, body.clone(), 30).await;
    let oldest = create(&store, &project, body.clone(), 10).await;
    let tie_low = create(
        &store,
        &project,
        json!({"userData": {"email": "tie@x.io"}}),
        20,
    )
    .await;
    let tie_high = create(
        &store,
        &project,
        json!({"userData": {"email": "tie@x.io"}}),
        20,
    )
    .await;
    assert!(tie_high.lead_id > tie_low.lead_id);
    assert_ne!(oldest.lead_id, newest.lead_id);

    let find = |identifier: LeadIdentifier| {
        let store = store.clone();
        async move { found(store.find_lead(project.id, &identifier).await, Entity::Lead).map(|l| l.id) }
    };
    for identifier in [
        LeadIdentifier::Email("ada@example.com".into()),
        LeadIdentifier::Email("  ADA@EXAMPLE.COM ".into()),
        LeadIdentifier::Phone("+15550100000".into()),
        LeadIdentifier::Phone("+1 555.010.0000".into()),
        LeadIdentifier::UniqueIdentifier("crm-1".into()),
    ] {
        assert_eq!(
            find(identifier.clone()).await,
            Some(newest.lead_id),
            "{identifier:?}"
        );
    }
    assert_eq!(
        find(LeadIdentifier::Email("tie@x.io".into())).await,
        Some(tie_high.lead_id)
    );
    assert_eq!(
        find(LeadIdentifier::UniqueIdentifier("CRM-1".into())).await,
        None
    );
    assert_eq!(find(LeadIdentifier::Phone("5550100000".into())).await, None);
    assert_eq!(
        find(LeadIdentifier::Email("ada@example.co".into())).await,
        None
    );
    assert_eq!(
        find(LeadIdentifier::LeadId(oldest.lead_id)).await,
        Some(oldest.lead_id)
    );
    assert_eq!(find(LeadIdentifier::LeadId(LeadId(i64::MAX))).await, None);
}

/// Nothing of one project is visible or changeable through another.
pub async fn projects_are_isolated<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p1 = project(&store, "p1").await;
    let p2 = project(&store, "p2").await;
    let body =
        json!({"userData": {"email": "same@x.io", "phone": "+1 555"}, "uniqueIdentifier": "crm"});
    let lead1 = create(&store, &p1, body.clone(), 0).await.lead_id;
    let lead2 = create(&store, &p2, body, 0).await.lead_id;
    let label1 = label(&store, &p1, true, LabelMapping::default()).await;

    for identifier in [
        LeadIdentifier::LeadId(lead1),
        LeadIdentifier::Email("same@x.io".into()),
        LeadIdentifier::Phone("+1 555".into()),
        LeadIdentifier::UniqueIdentifier("crm".into()),
    ] {
        let found = found(store.find_lead(p2.id, &identifier).await, Entity::Lead).map(|l| l.id);
        assert_eq!(
            found,
            Some(lead2).filter(|_| !matches!(identifier, LeadIdentifier::LeadId(_)))
        );
    }
    let listed = store
        .list_leads(p2.id, &LeadQuery::default())
        .await
        .unwrap();
    assert_eq!(ids(&listed.leads), [lead2]);
    let err = store
        .update_status(p2.id, &update(lead1, ConversionId::Lost), &by(), at(1))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound(Entity::Lead)), "{err}");
    let err = store
        .update_status(
            p2.id,
            &update(lead2, ConversionId::Label(label1)),
            &by(),
            at(1),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound(Entity::Label)), "{err}");
    assert_not_found(store.label(p2.id, label1).await, Entity::Label);
    assert!(store.labels(p2.id).await.unwrap().is_empty());

    store
        .update_status(p1.id, &update(lead1, ConversionId::Lost), &by(), at(1))
        .await
        .unwrap();
    assert!(store.lead_jobs(p2.id, lead1).await.unwrap().is_empty());
    assert_eq!(store.lead_jobs(p1.id, lead1).await.unwrap().len(), 1);
    assert_eq!(
        lead_by_id(&store, &p2, lead2).await.status,
        LeadStatus::Open
    );

    let key1 = store.issue_api_key(p1.id, at(0)).await.unwrap();
    let key2 = store.issue_api_key(p2.id, at(0)).await.unwrap();
    let owner = |key: String| {
        let store = store.clone();
        async move {
            found(store.authenticate(&KeyHash::of(&key)).await, Entity::ApiKey).map(|p| p.public_id)
        }
    };
    assert_eq!(owner(key1.key.clone()).await.as_deref(), Some("p1"));
    assert_eq!(owner(key2.key.clone()).await.as_deref(), Some("p2"));
    let err = store
        .revoke_api_key(p2.id, &KeyRef::parse(&key1.key), at(1))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound(Entity::ApiKey)), "{err}");
    assert_eq!(owner(key1.key).await.as_deref(), Some("p1"), "still valid");

    store
        .set_integration(p1.id, IntegrationSettings::Webhook(webhook()), at(0))
        .await
        .unwrap();
    assert!(
        store
            .integrations(p2.id)
            .await
            .unwrap()
            .connected()
            .is_empty()
    );
}

/// A write acknowledged before the store is closed is there after it is reopened; the
/// store is ready as soon as it is open, and again once reopened.
pub async fn acknowledged_writes_survive_a_reopen<B: Backend>(backend: &B) {
    let store = backend.open().await;
    store.ready().await.expect("an open store is ready");
    let project = project(&store, "p1").await;
    let key = store.issue_api_key(project.id, at(0)).await.unwrap();
    let label_id = webhook_label(&store, &project).await;
    store
        .set_integration(project.id, IntegrationSettings::Webhook(webhook()), at(0))
        .await
        .unwrap();
    let created = join_all((0..20).map(|i| {
        let store = store.clone();
        let body = json!({"userData": {"email": format!("u{i}@x.io")}, "formData": {"uniqueEventId": format!("e{i}")}});
        async move { store.create_lead(project.id, data(body), at(i)).await.unwrap() }
    }))
    .await;
    let rated = StatusUpdate {
        price: Some(700),
        ..update(created[0].lead_id, ConversionId::Label(label_id))
    };
    store
        .update_status(project.id, &rated, &by(), at(30))
        .await
        .unwrap();

    let store = backend.reopen(store).await;
    store.ready().await.expect("a reopened store is ready");
    let page = store
        .list_leads(project.id, &LeadQuery::default())
        .await
        .unwrap();
    assert_eq!(page.total, 20);
    let lead = lead_by_id(&store, &project, created[0].lead_id).await;
    assert_eq!((lead.status, lead.price), (LeadStatus::Pending, Some(700)));
    assert_eq!(lead.data.user("email"), Some("u0@x.io"));
    let authenticated = store.authenticate(&KeyHash::of(&key.key)).await.unwrap();
    assert_eq!(authenticated.id, project.id);
    assert_eq!(
        store.label(project.id, label_id).await.unwrap().id,
        label_id
    );
    assert!(
        store
            .integrations(project.id)
            .await
            .unwrap()
            .webhook
            .is_some()
    );
    let jobs = store.lead_jobs(project.id, lead.id).await.unwrap();
    assert_eq!(jobs.len(), 1);
    // Deduplication still holds across the restart.
    let again = store
        .create_lead(
            project.id,
            data(json!({"userData": {"phone": "1"}, "formData": {"uniqueEventId": "e3"}})),
            at(40),
        )
        .await
        .unwrap();
    assert_eq!((again.lead_id, again.created), (created[3].lead_id, false));
}

/// A browser create merges only into leads the browser route created: with the event id
/// of a server-created lead it makes a new lead and leaves the server's untouched. Browser
/// creates still deduplicate among themselves (also concurrently), and a server create
/// merges into its own route's lead first.
pub async fn browser_creates_never_merge_into_server_leads<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let body = |email: &str, uid: Option<&str>| {
        let mut body = json!({
            "userData": {"email": email},
            "formData": {"uniqueEventId": "evt-1"},
        });
        if let Some(uid) = uid {
            body["uniqueIdentifier"] = json!(uid);
        }
        data(body)
    };
    let server = store
        .create_lead_via(
            project.id,
            CreateRoute::Server,
            body("owner@example.com", Some("crm-1")),
            at(0),
        )
        .await
        .unwrap();
    assert!(server.created);

    let browsers = join_all((0..8).map(|i| {
        let store = store.clone();
        let data = body("attacker@evil.example", None);
        async move {
            store
                .create_lead_via(project.id, CreateRoute::Browser, data, at(1 + i))
                .await
                .unwrap()
        }
    }))
    .await;
    assert_eq!(browsers.iter().filter(|r| r.created).count(), 1);
    let browser = browsers.iter().find(|r| r.created).unwrap();
    assert_ne!(browser.lead_id, server.lead_id);
    assert!(browsers.iter().all(|r| r.lead_id == browser.lead_id));
    assert!(browsers.iter().all(|r| r.unique_identifier.is_none()));

    let kept = lead_by_id(&store, &project, server.lead_id).await;
    assert_eq!(kept.data.user("email"), Some("owner@example.com"));
    assert_eq!(kept.data.unique_identifier.as_deref(), Some("crm-1"));
    let page = store
        .list_leads(project.id, &LeadQuery::default())
        .await
        .unwrap();
    assert_eq!(page.total, 2);

    // The server route merges into the lead it created, not the browser's.
    let again = store
        .create_lead(project.id, body("owner2@example.com", None), at(20))
        .await
        .unwrap();
    assert_eq!((again.lead_id, again.created), (server.lead_id, false));
    let browser_lead = lead_by_id(&store, &project, browser.lead_id).await;
    assert_eq!(
        browser_lead.data.user("email"),
        Some("attacker@evil.example")
    );

    // With only a browser lead of an event id, a server create merges into it, as before.
    let browser_only = store
        .create_lead_via(
            project.id,
            CreateRoute::Browser,
            data(json!({"userData": {"email": "b@x.io"}, "formData": {"uniqueEventId": "evt-2"}})),
            at(30),
        )
        .await
        .unwrap();
    let merged = store
        .create_lead(
            project.id,
            data(json!({"userData": {"phone": "1"}, "formData": {"uniqueEventId": "evt-2"}})),
            at(31),
        )
        .await
        .unwrap();
    assert_eq!(
        (merged.lead_id, merged.created),
        (browser_only.lead_id, false)
    );
    // The lead stays a browser lead: later browser submissions still merge into it.
    let later = store
        .create_lead_via(
            project.id,
            CreateRoute::Browser,
            data(json!({"userData": {"firstName": "B"}, "formData": {"uniqueEventId": "evt-2"}})),
            at(32),
        )
        .await
        .unwrap();
    assert_eq!(
        (later.lead_id, later.created),
        (browser_only.lead_id, false)
    );
}

/// Deleting a lead takes everything of it (its history, jobs, deliveries and attempts, its
/// webhook events) and leaves its id, who and when in the project's history; a lead whose
/// conversion may still be on its way, another project's and an unknown one are refused.
pub async fn a_deleted_lead_leaves_only_its_id_in_the_projects_history<B: Backend>(backend: &B) {
    use crate::activity::ProjectActivity;
    use crate::webhook::{NewWebhook, WebhookEvents};

    let store = backend.open().await;
    let p = project(&store, "p").await;
    let hook = NewWebhook::new(
        "https://crm.example/h",
        &crate::target::Targets::default(),
        None,
        WebhookEvents::parse_list("lead.created").unwrap(),
    );
    store
        .create_webhook(p.id, hook.unwrap(), at(0))
        .await
        .unwrap();
    store
        .set_integration(p.id, IntegrationSettings::Webhook(webhook()), at(0))
        .await
        .unwrap();
    let label = webhook_label(&store, &p).await;
    let gone = create(&store, &p, json!({"userData": {"email": "gone@x.io"}}), 1)
        .await
        .lead_id;
    let kept = create(&store, &p, json!({"userData": {"email": "kept@x.io"}}), 2)
        .await
        .lead_id;
    let rated = update(gone, ConversionId::Label(label));
    let job = store
        .update_status(p.id, &rated, &by(), at(3))
        .await
        .unwrap()
        .job
        .unwrap();
    let refused = store.delete_lead(p.id, gone, &attributed(), at(4)).await;
    assert!(
        matches!(refused, Err(StoreError::Conflict(_))),
        "{refused:?}"
    );
    super::deliver(&store, job, 5).await;

    let other = project(&store, "other").await;
    let theirs = store
        .delete_lead(other.id, gone, &attributed(), at(6))
        .await;
    assert_not_found(theirs, Entity::Lead);
    store
        .delete_lead(p.id, gone, &attributed(), at(6))
        .await
        .unwrap();
    assert_not_found(
        store.find_lead(p.id, &LeadIdentifier::LeadId(gone)).await,
        Entity::Lead,
    );
    assert_not_found(
        store.delete_lead(p.id, gone, &attributed(), at(7)).await,
        Entity::Lead,
    );
    assert!(store.lead_jobs(p.id, gone).await.unwrap().is_empty());
    assert!(store.lead_activity(p.id, gone).await.unwrap().is_empty());
    assert!(
        store.last_attempts(p.id).await.unwrap().is_empty(),
        "its attempt is gone too"
    );
    let listed = store.list_leads(p.id, &LeadQuery::default()).await.unwrap();
    assert_eq!(ids(&listed.leads), [kept]);
    assert_eq!(listed.total, 1);
    let queued = store
        .queue_depth(at(100))
        .await
        .unwrap()
        .webhook_events
        .queued;
    assert_eq!(
        queued, 1,
        "only the kept lead's lead.created is left to send"
    );
    let history = store.project_history(p.id, None, 10, at(7)).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(
        history[0].activity,
        ProjectActivity::LeadDeleted { lead_id: gone }
    );
    assert_eq!(
        (
            history[0].at,
            history[0].by.clone(),
            history[0].address.clone()
        ),
        (at(6), Some(by()), attributed().address)
    );
    assert!(
        store
            .project_history(other.id, None, 10, at(7))
            .await
            .unwrap()
            .is_empty()
    );
}

/// A member corrects a lead's contact details: the lead is found by its new email and
/// phone (as a new lead's, normalised), matched again with the person's earlier lead, and
/// its history says who changed which fields; a correction that changes nothing changes
/// nothing, a bad email is refused, and another project's lead is not found.
pub async fn a_corrected_contact_is_found_and_matched_as_a_new_lead_is<B: Backend>(backend: &B) {
    use crate::activity::Activity;
    use crate::store::correction::ContactCorrection;
    let store = backend.open().await;
    let p1 = project(&store, "p1").await;
    let p2 = project(&store, "p2").await;
    let body = json!({"userData": {"firstName": "Ada", "email": "ada@x.io", "phone": "+49 151 9999 0000"}});
    let ada = create(&store, &p1, body, 0).await.lead_id;
    let body = json!({"userData": {"firstName": "Ad", "email": "typo@x.io"}, "formData": {"message": "Hi"}});
    let typo = create(&store, &p1, body, 5).await.lead_id;
    assert_eq!(lead_by_id(&store, &p1, typo).await.duplicate_of, None);
    let member = crate::account::Actor::User {
        id: crate::types::UserId(9),
        name: "Mo".into(),
    };
    let correct = ContactCorrection::new;

    let changed = store
        .correct_contact(
            p1.id,
            typo,
            &correct(["Ada", "", " ADA@x.io", "0151 1234 5678", ""]),
            &member,
            at(9),
        )
        .await
        .unwrap();
    assert!(changed);
    let corrected = lead_by_id(&store, &p1, typo).await;
    assert_eq!(
        (
            corrected.data.user("firstName"),
            corrected.data.user("email")
        ),
        (Some("Ada"), Some("ADA@x.io"))
    );
    assert_eq!(
        corrected.data.form_data.get("message"),
        Some(&Value::from("Hi"))
    );
    assert_eq!(
        corrected.duplicate_of,
        Some(ada),
        "the same person as Ada's first lead"
    );
    assert!(lead_by_id(&store, &p1, ada).await.duplicated);
    let email = LeadIdentifier::Email("ada@X.io".into());
    let newest = store.find_lead(p1.id, &email).await.unwrap();
    assert_eq!(newest.id, typo, "found by its new email");
    let query = LeadQuery::from_pairs([("q", "+49 151 1234 5678")]).unwrap();
    let page = store.list_leads(p1.id, &query).await.unwrap();
    assert_eq!(
        ids(&page.leads),
        [typo],
        "its phone is searched as it is now"
    );
    let history = store.lead_activity(p1.id, typo).await.unwrap();
    let last = history.last().unwrap();
    assert_eq!(
        (&last.activity, last.by.as_ref()),
        (
            &Activity::ContactCorrected {
                fields: vec!["first name".into(), "email".into(), "phone".into()]
            },
            Some(&member)
        )
    );

    let same = correct(["Ada", "", "ADA@x.io", "0151 1234 5678", ""]);
    let unchanged = store
        .correct_contact(p1.id, typo, &same, &member, at(10))
        .await;
    assert!(!unchanged.unwrap(), "nothing to change");
    assert_eq!(
        store.lead_activity(p1.id, typo).await.unwrap().len(),
        history.len()
    );
    let bad = correct(["Ada", "", "ada.x.io", "", ""]);
    let refused = store
        .correct_contact(p1.id, typo, &bad, &member, at(10))
        .await;
    assert!(
        matches!(refused, Err(StoreError::Invalid(_))),
        "{refused:?}"
    );
    assert_eq!(
        lead_by_id(&store, &p1, typo).await.data.user("email"),
        Some("ADA@x.io")
    );
    let elsewhere = store
        .correct_contact(p2.id, typo, &same, &member, at(10))
        .await;
    assert_not_found(elsewhere, Entity::Lead);

    // Another person after all: no longer Ada's duplicate.
    let other = correct(["Adele", "", "adele@x.io", "", ""]);
    assert!(
        store
            .correct_contact(p1.id, typo, &other, &member, at(11))
            .await
            .unwrap()
    );
    assert_eq!(lead_by_id(&store, &p1, typo).await.duplicate_of, None);
}
