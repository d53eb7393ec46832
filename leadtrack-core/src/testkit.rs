//! The conformance suite every [`LeadStore`] backend must pass (feature `testkit`).
//!
//! A backend implements [`Backend`] for its test harness and expands
//! [`conformance_tests!`](crate::conformance_tests) in a test module; each check becomes one
//! `#[tokio::test]` (the calling crate needs `tokio` with the `macros` and
//! `rt-multi-thread` features as a dev-dependency):
//!
//! ```ignore
//! struct Sqlite;
//!
//! #[async_trait::async_trait]
//! impl leadtrack_core::testkit::Backend for Sqlite {
//!     type Store = SqliteStore;
//!     async fn open(&self) -> SqliteStore { SqliteStore::open_temporary().await.unwrap() }
//!     async fn reopen(&self, store: SqliteStore) -> SqliteStore { /* close, open the same file */ }
//! }
//!
//! leadtrack_core::conformance_tests!(Sqlite);
//! ```
//!
//! Concurrency checks issue their operations concurrently (all futures polled at once), so
//! they exercise whatever the backend does to serialise conflicting writes.

use async_trait::async_trait;
use chrono::{DateTime, Duration, TimeZone, Utc};
use futures::future::join_all;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::api::{ConversionId, IntegrationKind, LeadIdentifier, LeadStatus};
use crate::input::{CreateRoute, NewLead};
use crate::lead::{LeadData, StoredLead};
use crate::model::{
    Attempt, AttemptOutcome, DeliveryState, Ga4Settings, GoogleAdsSettings, IntegrationSettings,
    JobState, KeyHash, LabelMapping, MetaSettings, NewLabel, NewProject, Project, ProjectSettings,
    Secret, WebhookSettings,
};
use crate::query::{LeadQuery, Sort, SortDirection, SortField};
use crate::status::StatusUpdate;
use crate::store::{Conflict, CreatedLead, Entity, KeyRef, LeadStore, StoreError};

/// How the suite gets stores of the backend under test.
#[async_trait]
pub trait Backend: Send + Sync + 'static {
    /// The store under test.
    type Store: LeadStore + Clone;

    /// A fresh, empty store.
    async fn open(&self) -> Self::Store;

    /// Closes `store` and opens the same data again, as a restarted process would.
    async fn reopen(&self, store: Self::Store) -> Self::Store;
}

/// Expands to one `#[tokio::test]` per conformance check, for the [`Backend`] expression.
#[macro_export]
macro_rules! conformance_tests {
    ($backend:expr) => {
        $crate::conformance_tests!(@each $backend;
            concurrent_creates_with_one_event_id_make_one_lead,
            deduplicated_creates_merge_and_keep_what_the_service_manages,
            event_ids_deduplicate_within_a_project_only,
            concurrent_label_updates_queue_exactly_one_job,
            open_cancels_a_queued_job_and_applies_price_and_note,
            open_leaves_a_started_job_running_and_the_lead_open,
            status_updates_report_missing_leads_and_labels,
            lookups_pick_the_newest_match_by_the_matching_rules,
            listing_filters,
            listing_sorts_with_nulls_last_and_id_ties,
            listing_pages,
            projects_are_isolated,
            acknowledged_writes_survive_a_reopen,
            project_administration,
            api_keys_authenticate_until_revoked,
            labels_and_integrations,
            queued_jobs_plan_deliveries_and_warnings,
            job_queue_lifecycle,
            lapsed_leases_are_claimed_again,
        );
    };
    (@each $backend:expr; $($name:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $name() {
                $crate::testkit::$name(&$backend).await;
            }
        )*
    };
}

/// 2026-03-01T00:00:00Z, plus `minutes`: the suite's clock.
pub fn at(minutes: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 0, 0, 0).unwrap() + Duration::minutes(minutes)
}

/// A project named and identified `public_id`.
pub async fn project<S: LeadStore>(store: &S, public_id: &str) -> Project {
    store
        .create_project(
            NewProject {
                public_id: Some(public_id.to_owned()),
                name: format!("Project {public_id}"),
                currency: Some("EUR".to_owned()),
            },
            at(0),
        )
        .await
        .expect("create project")
}

/// Lead data from a create body (without its `projectId`).
pub fn data(body: Value) -> LeadData {
    let mut body = object(body);
    body.insert("projectId".to_owned(), json!("testkit"));
    NewLead::from_object(body, CreateRoute::Browser)
        .expect("valid lead body")
        .data
}

async fn create<S: LeadStore>(
    store: &S,
    project: &Project,
    body: Value,
    minute: i64,
) -> CreatedLead {
    store
        .create_lead(project.id, data(body), at(minute))
        .await
        .expect("create lead")
}

async fn lead_by_id<S: LeadStore>(store: &S, project: &Project, id: i64) -> StoredLead {
    store
        .find_lead(project.id, &LeadIdentifier::LeadId(id))
        .await
        .expect("find lead")
        .expect("lead exists")
}

fn update(id: i64, conversion_id: ConversionId) -> StatusUpdate {
    StatusUpdate {
        identifier: LeadIdentifier::LeadId(id),
        conversion_id,
        price: None,
        note: None,
    }
}

async fn label<S: LeadStore>(
    store: &S,
    project: &Project,
    mark_as_done: bool,
    mapping: LabelMapping,
) -> Uuid {
    store
        .create_label(
            project.id,
            NewLabel {
                name: "Qualified".to_owned(),
                mark_as_done,
                mapping,
            },
            at(0),
        )
        .await
        .expect("create label")
        .id
}

fn object(value: Value) -> crate::api::JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn ids(leads: &[StoredLead]) -> Vec<i64> {
    leads.iter().map(|lead| lead.id).collect()
}

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
        .update_status(project.id, &rated, at(1))
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
    let by_phone = store
        .find_lead(project.id, &LeadIdentifier::Phone("+442079460958".into()))
        .await
        .unwrap();
    assert_eq!(by_phone.map(|l| l.id), Some(first.lead_id));
    let by_email = store
        .find_lead(project.id, &LeadIdentifier::Email("x@example.com".into()))
        .await
        .unwrap();
    assert_eq!(by_email.map(|l| l.id), Some(first.lead_id));
    let old_email = store
        .find_lead(project.id, &LeadIdentifier::Email("ada@example.com".into()))
        .await
        .unwrap();
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
    assert_eq!(search("ada@example").await, Vec::<i64>::new());
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
    assert!(all.iter().all(|id| *id > 0));
}

/// 32 concurrent label updates on one lead: exactly one queues a job, the other 31 get
/// `Conflict::JobPending`.
pub async fn concurrent_label_updates_queue_exactly_one_job<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let label_id = label(&store, &project, true, LabelMapping::default()).await;
    let lead = create(
        &store,
        &project,
        json!({"userData": {"email": "a@x.io"}}),
        0,
    )
    .await;
    let results = join_all((0..32).map(|i| {
        let store = store.clone();
        let conversion = if i % 2 == 0 {
            ConversionId::Label(label_id)
        } else {
            ConversionId::Lost
        };
        async move {
            store
                .update_status(project.id, &update(lead.lead_id, conversion), at(1))
                .await
        }
    }))
    .await;
    let mut queued = 0;
    for result in results {
        match result {
            Ok(change) => {
                assert!(change.job.is_some());
                queued += 1;
            }
            Err(StoreError::Conflict(Conflict::JobPending { lead_id })) => {
                assert_eq!(lead_id, lead.lead_id);
            }
            Err(other) => panic!("unexpected error: {other}"),
        }
    }
    assert_eq!(queued, 1);
    let jobs = store.lead_jobs(project.id, lead.lead_id).await.unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].job.state, JobState::Queued);
    assert_eq!(
        lead_by_id(&store, &project, lead.lead_id).await.status,
        LeadStatus::Pending
    );
}

/// `open` applies price and note, cancels a job no worker has started, and lets the next
/// rating queue a new job.
pub async fn open_cancels_a_queued_job_and_applies_price_and_note<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let label_id = label(&store, &project, true, LabelMapping::default()).await;
    let lead = create(
        &store,
        &project,
        json!({"userData": {"email": "a@x.io"}}),
        0,
    )
    .await;
    let queued = store
        .update_status(
            project.id,
            &update(lead.lead_id, ConversionId::Label(label_id)),
            at(1),
        )
        .await
        .unwrap();
    let open = StatusUpdate {
        price: Some(1200),
        note: Some(Some("reopened".to_owned())),
        ..update(lead.lead_id, ConversionId::Open)
    };
    let change = store.update_status(project.id, &open, at(2)).await.unwrap();
    assert_eq!(change.job, None);
    assert!(change.warnings.is_empty());
    let stored = lead_by_id(&store, &project, lead.lead_id).await;
    assert_eq!(stored.status, LeadStatus::Open);
    assert_eq!(stored.price, Some(1200));
    assert_eq!(stored.note.as_deref(), Some("reopened"));
    assert_eq!(
        stored.conversion_id,
        Some(ConversionId::Label(label_id)),
        "open is not a label"
    );

    let jobs = store.lead_jobs(project.id, lead.lead_id).await.unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(Some(jobs[0].job.id), queued.job);
    assert_eq!(jobs[0].job.state, JobState::Cancelled);
    assert!(
        store
            .claim_job(at(10), Duration::minutes(1))
            .await
            .unwrap()
            .is_none()
    );

    let again = store
        .update_status(project.id, &update(lead.lead_id, ConversionId::Lost), at(3))
        .await
        .unwrap();
    assert!(again.job.is_some(), "a cancelled job no longer blocks");
    let cleared = StatusUpdate {
        note: Some(None),
        ..update(lead.lead_id, ConversionId::Open)
    };
    store
        .update_status(project.id, &cleared, at(4))
        .await
        .unwrap();
    let stored = lead_by_id(&store, &project, lead.lead_id).await;
    assert_eq!(stored.note, None);
    assert_eq!(stored.price, Some(1200), "price is kept when not given");
}

/// A job a worker has started is not cancelled by `open`; when it finishes, the lead stays
/// `open`. While it runs, another rating conflicts.
pub async fn open_leaves_a_started_job_running_and_the_lead_open<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let label_id = label(&store, &project, true, LabelMapping::default()).await;
    let lead = create(
        &store,
        &project,
        json!({"userData": {"email": "a@x.io"}}),
        0,
    )
    .await;
    store
        .update_status(
            project.id,
            &update(lead.lead_id, ConversionId::Label(label_id)),
            at(1),
        )
        .await
        .unwrap();
    let claimed = store
        .claim_job(at(1), Duration::minutes(5))
        .await
        .unwrap()
        .expect("a due job");
    store
        .update_status(project.id, &update(lead.lead_id, ConversionId::Open), at(2))
        .await
        .unwrap();
    let conflict = store
        .update_status(project.id, &update(lead.lead_id, ConversionId::Lost), at(2))
        .await
        .unwrap_err();
    assert!(
        matches!(conflict, StoreError::Conflict(Conflict::JobPending { .. })),
        "{conflict}"
    );
    let status = store
        .finish_job(claimed.job.id, claimed.lease.token, at(3))
        .await
        .unwrap();
    assert_eq!(status, LeadStatus::Open);
    assert_eq!(
        lead_by_id(&store, &project, lead.lead_id).await.status,
        LeadStatus::Open
    );
    let jobs = store.lead_jobs(project.id, lead.lead_id).await.unwrap();
    assert_eq!(jobs[0].job.state, JobState::Done);
}

/// Unknown leads and labels are reported as not found, and nothing changes.
pub async fn status_updates_report_missing_leads_and_labels<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let lead = create(
        &store,
        &project,
        json!({"userData": {"email": "a@x.io"}}),
        0,
    )
    .await;
    let missing = store
        .update_status(
            project.id,
            &update(lead.lead_id + 1000, ConversionId::Open),
            at(1),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(missing, StoreError::NotFound(Entity::Lead)),
        "{missing}"
    );
    let by_email = StatusUpdate {
        identifier: LeadIdentifier::Email("nobody@x.io".into()),
        ..update(0, ConversionId::Lost)
    };
    let missing = store
        .update_status(project.id, &by_email, at(1))
        .await
        .unwrap_err();
    assert!(
        matches!(missing, StoreError::NotFound(Entity::Lead)),
        "{missing}"
    );
    let unknown_label = StatusUpdate {
        price: Some(99),
        ..update(lead.lead_id, ConversionId::Label(Uuid::new_v4()))
    };
    let missing = store
        .update_status(project.id, &unknown_label, at(1))
        .await
        .unwrap_err();
    assert!(
        matches!(missing, StoreError::NotFound(Entity::Label)),
        "{missing}"
    );
    let stored = lead_by_id(&store, &project, lead.lead_id).await;
    assert_eq!(
        (stored.status, stored.price),
        (LeadStatus::Open, None),
        "nothing changed"
    );
    assert!(
        store
            .lead_jobs(project.id, lead.lead_id)
            .await
            .unwrap()
            .is_empty()
    );
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
        async move {
            store
                .find_lead(project.id, &identifier)
                .await
                .unwrap()
                .map(|l| l.id)
        }
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
    assert_eq!(find(LeadIdentifier::LeadId(i64::MAX)).await, None);
}

/// Every getLeads filter, alone and combined.
pub async fn listing_filters<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let label_id = label(&store, &project, true, LabelMapping::default()).await;
    let a = create(&store, &project, json!({
        "userData": {"firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.com", "phone": "+44 20 1111"},
        "attributionData": {"gclid": "G", "cid": "1.2"},
        "formData": {"formName": "Contact"}, "uniqueIdentifier": "crm-a"
    }), 0).await.lead_id;
    let b = create(&store, &project, json!({
        "userData": {"firstName": "Grace", "lastName": "Hopper", "email": "grace@navy.mil", "companyName": "Navy Labs"},
        "attributionData": {"fbp": "fb.1.1.1", "fbc": "fb.1.1.abc"},
        "formData": {"formName": "contact"}, "uniqueIdentifier": "crm-b"
    }), 60).await.lead_id;
    let c = create(&store, &project, json!({
        "userData": {"firstName": "Édith", "email": "edith@example.org", "phone": "(555) 222-3333"},
        "attributionData": {"gclid": " ", "utm_source": "news"},
        "formData": {"formName": "Quote"}
    }), 24 * 60).await.lead_id;
    store
        .update_status(project.id, &update(b, ConversionId::Label(label_id)), at(2))
        .await
        .unwrap();
    store
        .update_status(project.id, &update(c, ConversionId::Lost), at(2))
        .await
        .unwrap();

    let list = |query: LeadQuery| {
        let store = store.clone();
        async move {
            let mut found = ids(&store.list_leads(project.id, &query).await.unwrap().leads);
            found.sort_unstable();
            found
        }
    };
    let q = LeadQuery::default;
    assert_eq!(list(q()).await, [a, b, c]);
    assert_eq!(
        list(LeadQuery {
            status: Some(vec![LeadStatus::Pending]),
            ..q()
        })
        .await,
        [b, c]
    );
    assert_eq!(
        list(LeadQuery {
            status: Some(vec![LeadStatus::Open, LeadStatus::Rated]),
            ..q()
        })
        .await,
        [a]
    );
    assert_eq!(
        list(LeadQuery {
            status: Some(vec![]),
            ..q()
        })
        .await,
        Vec::<i64>::new()
    );
    assert_eq!(
        list(LeadQuery {
            form_name: Some("Contact".into()),
            ..q()
        })
        .await,
        [a],
        "case-sensitive"
    );
    assert_eq!(
        list(LeadQuery {
            unique_identifier: Some("crm-b".into()),
            ..q()
        })
        .await,
        [b]
    );
    assert_eq!(
        list(LeadQuery {
            email: Some(" ADA@example.com".into()),
            ..q()
        })
        .await,
        [a]
    );
    assert_eq!(
        list(LeadQuery {
            phone: Some("5552223333".into()),
            ..q()
        })
        .await,
        [c]
    );
    assert_eq!(
        list(LeadQuery {
            phone: Some("-".into()),
            ..q()
        })
        .await,
        Vec::<i64>::new()
    );
    assert_eq!(
        list(LeadQuery {
            created_from: Some(at(60)),
            ..q()
        })
        .await,
        [b, c],
        "inclusive"
    );
    assert_eq!(
        list(LeadQuery {
            created_to: Some(at(60)),
            ..q()
        })
        .await,
        [a, b],
        "inclusive"
    );
    assert_eq!(
        list(LeadQuery {
            created_from: Some(at(1)),
            created_to: Some(at(24 * 60 - 1)),
            ..q()
        })
        .await,
        [b]
    );
    assert_eq!(
        list(LeadQuery {
            search: Some("LOVE".into()),
            ..q()
        })
        .await,
        [a],
        "last name"
    );
    assert_eq!(
        list(LeadQuery {
            search: Some("navy".into()),
            ..q()
        })
        .await,
        [b],
        "email and company"
    );
    assert_eq!(
        list(LeadQuery {
            search: Some("labs".into()),
            ..q()
        })
        .await,
        [b],
        "company"
    );
    assert_eq!(
        list(LeadQuery {
            search: Some("éd".into()),
            ..q()
        })
        .await,
        [c],
        "unicode"
    );
    assert_eq!(
        list(LeadQuery {
            search: Some("222-33".into()),
            ..q()
        })
        .await,
        [c],
        "phone"
    );
    assert_eq!(
        list(LeadQuery {
            search: Some("example".into()),
            ..q()
        })
        .await,
        [a, c]
    );
    assert_eq!(
        list(LeadQuery {
            search: Some("ada lovelace".into()),
            ..q()
        })
        .await,
        Vec::<i64>::new()
    );
    assert_eq!(
        list(LeadQuery {
            search: Some("%".into()),
            ..q()
        })
        .await,
        Vec::<i64>::new()
    );
    assert_eq!(
        list(LeadQuery {
            gclid_exists: Some(true),
            ..q()
        })
        .await,
        [a],
        "blank is not a value"
    );
    assert_eq!(
        list(LeadQuery {
            gclid_exists: Some(false),
            ..q()
        })
        .await,
        [b, c]
    );
    assert_eq!(
        list(LeadQuery {
            cid_exists: Some(true),
            ..q()
        })
        .await,
        [a]
    );
    assert_eq!(
        list(LeadQuery {
            fbp_exists: Some(true),
            ..q()
        })
        .await,
        [b]
    );
    assert_eq!(
        list(LeadQuery {
            fbc_exists: Some(false),
            ..q()
        })
        .await,
        [a, c]
    );
    assert_eq!(
        list(LeadQuery {
            search: Some("example".into()),
            gclid_exists: Some(false),
            ..q()
        })
        .await,
        [c],
        "filters combine with AND"
    );
}

/// Every sort field in both directions: nulls last either way, ties broken on the id in the
/// same direction.
pub async fn listing_sorts_with_nulls_last_and_id_ties<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let label_id = label(&store, &project, true, LabelMapping::default()).await;
    // Names differ in case only where that must not matter.
    let l1 = create(
        &store,
        &project,
        json!({"userData": {"firstName": "bob", "lastName": "Zed", "email": "b@x.io"}}),
        10,
    )
    .await
    .lead_id;
    let l2 = create(
        &store,
        &project,
        json!({"userData": {"firstName": "Alice", "email": "a@x.io"}}),
        30,
    )
    .await
    .lead_id;
    let l3 = create(
        &store,
        &project,
        json!({"attributionData": {"gclid": "G"}}),
        20,
    )
    .await
    .lead_id;
    let l4 = create(
        &store,
        &project,
        json!({"userData": {"firstName": "Carol", "lastName": "Adams"}}),
        20,
    )
    .await
    .lead_id;
    for (lead, price) in [(l1, 500), (l2, 100), (l4, 500)] {
        let priced = StatusUpdate {
            price: Some(price),
            ..update(lead, ConversionId::Open)
        };
        store
            .update_status(project.id, &priced, at(40))
            .await
            .unwrap();
    }
    store
        .update_status(
            project.id,
            &update(l2, ConversionId::Label(label_id)),
            at(41),
        )
        .await
        .unwrap();
    store
        .update_status(project.id, &update(l3, ConversionId::Lost), at(41))
        .await
        .unwrap();

    let sorted = |field: SortField, direction: SortDirection| {
        let store = store.clone();
        async move {
            let query = LeadQuery {
                sort: Sort { field, direction },
                ..LeadQuery::default()
            };
            ids(&store.list_leads(project.id, &query).await.unwrap().leads)
        }
    };
    use SortDirection::{Asc, Desc};
    assert_eq!(
        sorted(SortField::CreatedAt, Asc).await,
        [l1, l3, l4, l2],
        "ties: id ascending"
    );
    assert_eq!(
        sorted(SortField::CreatedAt, Desc).await,
        [l2, l4, l3, l1],
        "ties: id descending"
    );
    assert_eq!(sorted(SortField::FirstName, Asc).await, [l2, l1, l4, l3]);
    assert_eq!(sorted(SortField::FirstName, Desc).await, [l4, l1, l2, l3]);
    assert_eq!(sorted(SortField::LastName, Asc).await, [l4, l1, l2, l3]);
    assert_eq!(sorted(SortField::LastName, Desc).await, [l1, l4, l3, l2]);
    assert_eq!(sorted(SortField::Email, Asc).await, [l2, l1, l3, l4]);
    assert_eq!(sorted(SortField::Email, Desc).await, [l1, l2, l4, l3]);
    assert_eq!(sorted(SortField::Price, Asc).await, [l2, l1, l4, l3]);
    assert_eq!(sorted(SortField::Price, Desc).await, [l4, l1, l2, l3]);
    // Statuses: l1 open, l2 pending, l3 pending, l4 open.
    assert_eq!(sorted(SortField::Status, Asc).await, [l1, l4, l2, l3]);
    assert_eq!(sorted(SortField::Status, Desc).await, [l3, l2, l4, l1]);
    let default = ids(&store
        .list_leads(project.id, &LeadQuery::default())
        .await
        .unwrap()
        .leads);
    assert_eq!(default, [l2, l4, l3, l1], "newest first by default");
}

/// Pages: an empty project, exact and partial last pages, a page past the end.
pub async fn listing_pages<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let empty = store
        .list_leads(project.id, &LeadQuery::default())
        .await
        .unwrap();
    assert_eq!((empty.total, empty.leads.len()), (0, 0));
    let response = empty.to_response(&LeadQuery::default());
    assert_eq!((response.total_pages, response.has_more), (0, false));

    let mut created = Vec::new();
    for minute in 0..7 {
        created.push(
            create(
                &store,
                &project,
                json!({"userData": {"email": "a@x.io"}}),
                minute,
            )
            .await
            .lead_id,
        );
    }
    let page = |page: u32, limit: u32| {
        let store = store.clone();
        async move {
            let query = LeadQuery {
                page,
                limit,
                sort: Sort {
                    field: SortField::CreatedAt,
                    direction: SortDirection::Asc,
                },
                ..LeadQuery::default()
            };
            let result = store.list_leads(project.id, &query).await.unwrap();
            let response = result.to_response(&query);
            (
                ids(&result.leads),
                result.total,
                response.total_pages,
                response.has_more,
            )
        }
    };
    assert_eq!(page(1, 3).await, (created[0..3].to_vec(), 7, 3, true));
    assert_eq!(page(3, 3).await, (created[6..7].to_vec(), 7, 3, false));
    assert_eq!(page(4, 3).await, (vec![], 7, 3, false));
    assert_eq!(page(u32::MAX, 100).await, (vec![], 7, 1, false));
    assert_eq!(page(1, 7).await, (created.clone(), 7, 1, false));
    assert_eq!(page(7, 1).await, (created[6..7].to_vec(), 7, 7, false));
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
        let found = store
            .find_lead(p2.id, &identifier)
            .await
            .unwrap()
            .map(|l| l.id);
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
        .update_status(p2.id, &update(lead1, ConversionId::Lost), at(1))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound(Entity::Lead)), "{err}");
    let err = store
        .update_status(p2.id, &update(lead2, ConversionId::Label(label1)), at(1))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound(Entity::Label)), "{err}");
    assert_eq!(store.label(p2.id, label1).await.unwrap(), None);
    assert!(store.labels(p2.id).await.unwrap().is_empty());

    store
        .update_status(p1.id, &update(lead1, ConversionId::Lost), at(1))
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
            store
                .authenticate(&KeyHash::of(&key))
                .await
                .unwrap()
                .map(|p| p.public_id)
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

/// A write acknowledged before the store is closed is there after it is reopened.
pub async fn acknowledged_writes_survive_a_reopen<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let key = store.issue_api_key(project.id, at(0)).await.unwrap();
    let label_id = label(
        &store,
        &project,
        true,
        LabelMapping {
            webhook: true,
            ..LabelMapping::default()
        },
    )
    .await;
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
        .update_status(project.id, &rated, at(30))
        .await
        .unwrap();

    let store = backend.reopen(store).await;
    let page = store
        .list_leads(project.id, &LeadQuery::default())
        .await
        .unwrap();
    assert_eq!(page.total, 20);
    let lead = lead_by_id(&store, &project, created[0].lead_id).await;
    assert_eq!((lead.status, lead.price), (LeadStatus::Pending, Some(700)));
    assert_eq!(lead.data.user("email"), Some("u0@x.io"));
    let authenticated = store.authenticate(&KeyHash::of(&key.key)).await.unwrap();
    assert_eq!(authenticated.map(|p| p.id), Some(project.id));
    assert!(store.label(project.id, label_id).await.unwrap().is_some());
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
                phone_country_code: Some(Some("44".into())),
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
        (
            updated.currency.as_str(),
            updated.phone_country_code.as_deref()
        ),
        ("GBP", Some("44"))
    );
    let err = store
        .update_project(
            p1.id,
            ProjectSettings {
                phone_country_code: Some(Some("+44".into())),
                ..ProjectSettings::default()
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Invalid(_)), "{err}");

    let inactive = store.set_project_active(p1.id, false).await.unwrap();
    assert!(!inactive.active);
    let found = store.project_by_public_id("acme").await.unwrap().unwrap();
    assert_eq!(found, inactive);
    assert_eq!(found.lost_mapping.meta_event.as_deref(), Some("Lost"));
    assert_eq!(store.project_by_public_id("nope").await.unwrap(), None);
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
            store
                .authenticate(&KeyHash::of(&key))
                .await
                .unwrap()
                .is_some()
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
    let found = store
        .authenticate(&KeyHash::of(&third.key))
        .await
        .unwrap()
        .unwrap();
    assert!(!found.active);
}

fn webhook() -> WebhookSettings {
    WebhookSettings {
        url: "https://hooks.example.com/leads".into(),
        secret: Secret::new("whsec_test"),
    }
}

fn all_integrations() -> Vec<IntegrationSettings> {
    vec![
        IntegrationSettings::GoogleAds(GoogleAdsSettings {
            customer_id: "1234567890".into(),
            login_customer_id: None,
            client_id: "client".into(),
            client_secret: Secret::new("client-secret"),
            refresh_token: Secret::new("refresh"),
            token_url: None,
            base_url: None,
        }),
        IntegrationSettings::Ga4(Ga4Settings {
            measurement_id: "G-TEST".into(),
            api_secret: Secret::new("api-secret"),
            validate: false,
            base_url: None,
        }),
        IntegrationSettings::Meta(MetaSettings {
            pixel_id: "123".into(),
            access_token: Secret::new("token"),
            api_version: "v23.0".into(),
            test_event_code: None,
            base_url: None,
        }),
        IntegrationSettings::Webhook(webhook()),
    ]
}

fn all_mapped() -> LabelMapping {
    LabelMapping {
        ga4_event: Some("qualify_lead".into()),
        meta_event: Some("QualifiedLead".into()),
        google_ads_action: Some("987654".into()),
        webhook: true,
    }
}

/// Labels are created, listed and found per project; integrations are connected, replaced
/// and disconnected.
pub async fn labels_and_integrations<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let created = store
        .create_label(
            project.id,
            NewLabel {
                name: " Customer ".into(),
                mark_as_done: true,
                mapping: all_mapped(),
            },
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
        Some(created.clone())
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
    assert_eq!(integrations.connected(), IntegrationKind::ALL);
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
            IntegrationKind::Webhook
        ]
    );
}

/// Queuing plans one delivery per connected and mapped integration; those the lead lacks
/// data for are skipped, with the response's warnings.
pub async fn queued_jobs_plan_deliveries_and_warnings<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    for settings in all_integrations() {
        store
            .set_integration(project.id, settings, at(0))
            .await
            .unwrap();
    }
    let label_id = label(&store, &project, true, all_mapped()).await;
    let complete = create(
        &store,
        &project,
        json!({"userData": {"email": "a@x.io"}, "attributionData": {"gclid": "G", "cid": "1.2"}}),
        0,
    )
    .await;
    let bare = create(
        &store,
        &project,
        json!({"userData": {"firstName": "Ada"}}),
        0,
    )
    .await;

    let change = store
        .update_status(
            project.id,
            &update(complete.lead_id, ConversionId::Label(label_id)),
            at(1),
        )
        .await
        .unwrap();
    assert!(change.warnings.is_empty());
    let jobs = store.lead_jobs(project.id, complete.lead_id).await.unwrap();
    let states: Vec<(IntegrationKind, DeliveryState)> = jobs[0]
        .deliveries
        .iter()
        .map(|(d, _)| (d.integration, d.state))
        .collect();
    assert_eq!(
        states,
        IntegrationKind::ALL.map(|kind| (kind, DeliveryState::Pending))
    );
    assert_eq!(jobs[0].job.final_status, LeadStatus::Rated);

    let change = store
        .update_status(
            project.id,
            &update(bare.lead_id, ConversionId::Label(label_id)),
            at(1),
        )
        .await
        .unwrap();
    let warned: Vec<(IntegrationKind, &str)> = change
        .warnings
        .iter()
        .map(|w| (w.integration, w.field.as_str()))
        .collect();
    assert_eq!(
        warned,
        [
            (IntegrationKind::GoogleAds, "gclid"),
            (IntegrationKind::Ga4, "cid"),
            (IntegrationKind::Meta, "user_data")
        ]
    );
    assert!(change.warnings.iter().all(|w| w.timestamp == at(1)));
    let jobs = store.lead_jobs(project.id, bare.lead_id).await.unwrap();
    let states: Vec<DeliveryState> = jobs[0].deliveries.iter().map(|(d, _)| d.state).collect();
    assert_eq!(
        states,
        [
            DeliveryState::Skipped,
            DeliveryState::Skipped,
            DeliveryState::Skipped,
            DeliveryState::Pending
        ]
    );
    assert!(
        jobs[0].deliveries[0]
            .0
            .detail
            .as_deref()
            .is_some_and(|d| d.contains("click id"))
    );

    // `lost` follows the project's lost mapping: by default only the webhook.
    let lost_lead = create(
        &store,
        &project,
        json!({"userData": {"email": "l@x.io"}}),
        0,
    )
    .await;
    let change = store
        .update_status(
            project.id,
            &update(lost_lead.lead_id, ConversionId::Lost),
            at(1),
        )
        .await
        .unwrap();
    assert!(change.warnings.is_empty());
    let jobs = store
        .lead_jobs(project.id, lost_lead.lead_id)
        .await
        .unwrap();
    let kinds: Vec<IntegrationKind> = jobs[0]
        .deliveries
        .iter()
        .map(|(d, _)| d.integration)
        .collect();
    assert_eq!(kinds, [IntegrationKind::Webhook]);
    assert_eq!(jobs[0].job.final_status, LeadStatus::Lost);
    assert_eq!(jobs[0].job.conversion_id, ConversionId::Lost);
}

/// Claim, attempts, retry scheduling and finishing, as the worker drives them.
pub async fn job_queue_lifecycle<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    for settings in all_integrations() {
        store
            .set_integration(project.id, settings, at(0))
            .await
            .unwrap();
    }
    let mapping = LabelMapping {
        ga4_event: Some("qualify".into()),
        webhook: true,
        ..LabelMapping::default()
    };
    let label_id = label(&store, &project, true, mapping).await;
    let lead = create(
        &store,
        &project,
        json!({"userData": {"email": "a@x.io"}, "attributionData": {"cid": "1.2"}}),
        0,
    )
    .await;
    let priced = StatusUpdate {
        price: Some(4200),
        ..update(lead.lead_id, ConversionId::Label(label_id))
    };
    let change = store
        .update_status(project.id, &priced, at(1))
        .await
        .unwrap();
    assert!(
        store
            .claim_job(at(0), Duration::minutes(5))
            .await
            .unwrap()
            .is_none(),
        "not due yet"
    );

    let claimed = store
        .claim_job(at(1), Duration::minutes(5))
        .await
        .unwrap()
        .expect("due job");
    assert_eq!(Some(claimed.job.id), change.job);
    assert_eq!(
        (claimed.job.state, claimed.job.price),
        (JobState::Running, Some(4200))
    );
    assert_eq!(claimed.job.created_at, at(1));
    assert_eq!(claimed.lead.id, lead.lead_id);
    assert_eq!(claimed.lead.data.attribution("cid"), Some("1.2"));
    assert_eq!(claimed.lease.expires_at, at(6));
    assert_eq!(claimed.project.public_id, "p1");
    assert_eq!(claimed.label.as_ref().map(|l| l.id), Some(label_id));
    assert_eq!(claimed.mapping().ga4_event.as_deref(), Some("qualify"));
    assert_eq!(claimed.integrations.connected(), IntegrationKind::ALL);
    let kinds: Vec<IntegrationKind> = claimed.deliveries.iter().map(|d| d.integration).collect();
    assert_eq!(kinds, [IntegrationKind::Ga4, IntegrationKind::Webhook]);
    assert!(
        store
            .claim_job(at(2), Duration::minutes(5))
            .await
            .unwrap()
            .is_none(),
        "leased"
    );

    let delivered = Attempt {
        integration: IntegrationKind::Ga4,
        at: at(2),
        outcome: AttemptOutcome::Delivered,
        http_status: Some(204),
        error: None,
        retry_at: None,
    };
    store
        .record_attempt(claimed.job.id, claimed.lease.token, &delivered)
        .await
        .unwrap();
    let retry = Attempt {
        integration: IntegrationKind::Webhook,
        at: at(2),
        outcome: AttemptOutcome::Retry,
        http_status: Some(503),
        error: Some("HTTP 503".into()),
        retry_at: Some(at(12)),
    };
    store
        .record_attempt(claimed.job.id, claimed.lease.token, &retry)
        .await
        .unwrap();
    let unfinished = store
        .finish_job(claimed.job.id, claimed.lease.token, at(2))
        .await
        .unwrap_err();
    assert!(matches!(unfinished, StoreError::Invalid(_)), "{unfinished}");
    store
        .reschedule_job(claimed.job.id, claimed.lease.token, at(12))
        .await
        .unwrap();
    let stale = store
        .record_attempt(claimed.job.id, claimed.lease.token, &delivered)
        .await
        .unwrap_err();
    assert!(
        matches!(stale, StoreError::Conflict(Conflict::LeaseLost(_))),
        "{stale}"
    );
    assert!(
        store
            .claim_job(at(11), Duration::minutes(5))
            .await
            .unwrap()
            .is_none()
    );

    let again = store
        .claim_job(at(12), Duration::minutes(5))
        .await
        .unwrap()
        .expect("due again");
    assert_eq!(again.job.id, claimed.job.id);
    assert_ne!(again.lease.token, claimed.lease.token);
    assert_eq!(
        again.job.event_id, claimed.job.event_id,
        "the event id is stable"
    );
    let states: Vec<(DeliveryState, u32)> = again
        .deliveries
        .iter()
        .map(|d| (d.state, d.attempts))
        .collect();
    assert_eq!(
        states,
        [(DeliveryState::Delivered, 1), (DeliveryState::Pending, 1)]
    );
    assert_eq!(again.deliveries[1].next_attempt_at, Some(at(12)));
    let webhook_done = Attempt {
        at: at(12),
        outcome: AttemptOutcome::Delivered,
        http_status: Some(200),
        error: None,
        retry_at: None,
        ..retry
    };
    store
        .record_attempt(again.job.id, again.lease.token, &webhook_done)
        .await
        .unwrap();
    let status = store
        .finish_job(again.job.id, again.lease.token, at(13))
        .await
        .unwrap();
    assert_eq!(status, LeadStatus::Rated);
    assert_eq!(
        lead_by_id(&store, &project, lead.lead_id).await.status,
        LeadStatus::Rated
    );

    let jobs = store.lead_jobs(project.id, lead.lead_id).await.unwrap();
    assert_eq!(jobs[0].job.state, JobState::Done);
    assert_eq!(jobs[0].job.finished_at, Some(at(13)));
    let (webhook_delivery, webhook_attempts) = &jobs[0].deliveries[1];
    assert_eq!(webhook_delivery.state, DeliveryState::Delivered);
    let outcomes: Vec<(AttemptOutcome, Option<u16>)> = webhook_attempts
        .iter()
        .map(|a| (a.outcome, a.http_status))
        .collect();
    assert_eq!(
        outcomes,
        [
            (AttemptOutcome::Retry, Some(503)),
            (AttemptOutcome::Delivered, Some(200))
        ]
    );
    assert_eq!(webhook_attempts[0].retry_at, Some(at(12)));
    assert_eq!(jobs[0].deliveries[0].1.len(), 1, "ga4 was sent once");
    assert!(
        store
            .claim_job(at(100), Duration::minutes(5))
            .await
            .unwrap()
            .is_none()
    );

    // The next rating may be queued now the job is done.
    let next = store
        .update_status(
            project.id,
            &update(lead.lead_id, ConversionId::Lost),
            at(14),
        )
        .await
        .unwrap();
    assert!(next.job.is_some());
}

/// A worker that dies holding a job loses it when the lease lapses: another claims it, and
/// the first can no longer act on it.
pub async fn lapsed_leases_are_claimed_again<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let lead = create(
        &store,
        &project,
        json!({"userData": {"email": "a@x.io"}}),
        0,
    )
    .await;
    store
        .update_status(project.id, &update(lead.lead_id, ConversionId::Lost), at(1))
        .await
        .unwrap();
    let first = store
        .claim_job(at(1), Duration::minutes(1))
        .await
        .unwrap()
        .expect("due");
    assert!(
        store
            .claim_job(at(1) + Duration::seconds(59), Duration::minutes(1))
            .await
            .unwrap()
            .is_none()
    );
    let second = store
        .claim_job(at(2), Duration::minutes(1))
        .await
        .unwrap()
        .expect("lease lapsed");
    assert_eq!(second.job.id, first.job.id);
    assert_eq!(
        second.job.started_at,
        Some(at(1)),
        "first pick-up time is kept"
    );
    let err = store
        .finish_job(first.job.id, first.lease.token, at(2))
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Conflict(Conflict::LeaseLost(_))),
        "{err}"
    );
    let status = store
        .finish_job(second.job.id, second.lease.token, at(3))
        .await
        .unwrap();
    assert_eq!(status, LeadStatus::Lost);
}
