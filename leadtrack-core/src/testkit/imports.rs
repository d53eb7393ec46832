//! Past leads imported from files: dated as the file says, through the keyed route,
//! announced to nobody, and never twice.

use chrono::Duration;
use serde_json::json;

use super::{Backend, at, create, data, project};
use crate::activity::Activity;
use crate::import::{ImportCounts, ImportedLead};
use crate::request::LeadQuery;
use crate::store::{Entity, JobQueue, LeadStore, StoreError};
use crate::types::{LeadIdentifier, LeadStatus, ProjectId};

fn imported(line: u64, body: serde_json::Value, day: i64) -> ImportedLead {
    ImportedLead {
        line,
        data: data(body),
        created_at: at(0) - Duration::days(day),
    }
}

/// Imported leads keep the file's dates and their history says `created` then; nothing
/// is announced to lead webhooks or alerts; the same event id, or the same email at the
/// same instant (in the store or earlier in the batch), is skipped and counted.
pub async fn imported_leads_keep_their_dates_and_come_once<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p = project(&store, "acme").await;
    let live = create(&store, &p, json!({"userData": {"email": "live@example.com"}, "formData": {"uniqueEventId": "ev-live"}}), 5).await;
    let leads = [
        imported(2, json!({"userData": {"email": "ada@example.com"}}), 30),
        imported(
            3,
            json!({"userData": {"email": "bob@example.com"}, "formData": {"uniqueEventId": "ev-2"}}),
            20,
        ),
        imported(4, json!({"userData": {"email": "ADA@example.com "}}), 30),
        imported(
            5,
            json!({"userData": {"email": "other@example.com"}, "formData": {"uniqueEventId": "ev-live"}}),
            10,
        ),
        imported(6, json!({"userData": {"email": "ada@example.com"}}), 29),
        // The same email and time as line 5, which was not written: this one is.
        imported(7, json!({"userData": {"email": "other@example.com"}}), 10),
    ];
    let counts = store.import_leads(p.id, &leads).await.unwrap();
    assert_eq!(
        counts,
        ImportCounts {
            imported: 4,
            duplicates: 2
        }
    );
    let store = backend.reopen(store).await;
    let bob = store
        .find_lead(p.id, &LeadIdentifier::Email("bob@example.com".to_owned()))
        .await
        .unwrap();
    assert_eq!(bob.created_at, at(0) - Duration::days(20));
    assert_eq!(bob.status, LeadStatus::Open);
    let history = store.lead_activity(p.id, bob.id).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].activity, Activity::Created);
    assert_eq!(history[0].at, at(0) - Duration::days(20));

    // Only the live lead was announced.
    let alerts = store.take_alerts(100).await.unwrap();
    let alerted: Vec<_> = alerts.iter().map(|a| a.lead).collect();
    assert_eq!(alerted, [live.lead_id]);

    let again = store.import_leads(p.id, &leads).await.unwrap();
    assert_eq!(
        again,
        ImportCounts {
            imported: 0,
            duplicates: 6
        }
    );
    let page = store.list_leads(p.id, &Default::default()).await.unwrap();
    assert_eq!(page.total, 5);
    // Counted, and found by search, as leads created one by one are.
    let counts = store
        .status_counts(p.id, &Default::default())
        .await
        .unwrap();
    assert!(counts.contains(&(LeadStatus::Open, 5)), "{counts:?}");
    let search = LeadQuery {
        search: Some("bob@".to_owned()),
        ..LeadQuery::default()
    };
    let found = store.list_leads(p.id, &search).await.unwrap();
    assert_eq!(
        found.leads.iter().map(|l| l.id).collect::<Vec<_>>(),
        [bob.id]
    );
}

/// An import into a project that does not exist writes nothing.
pub async fn an_import_names_a_project<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let lead = imported(2, json!({"userData": {"email": "a@example.com"}}), 1);
    let err = store
        .import_leads(ProjectId(999_999), &[lead])
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::NotFound(Entity::Project)),
        "{err:?}"
    );
}
