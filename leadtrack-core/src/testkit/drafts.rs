//! Drafts ([`crate::draft`]): kept one per lead and project, invisible to the lead's status
//! and jobs, and discarded by any rating of the lead or its deletion.

use serde_json::json;

use super::{Backend, assert_not_found, at, attributed, by, create, lead_by_id, project, update};
use crate::account::Actor;
use crate::draft::Draft;
use crate::label::LabelMapping;
use crate::store::{Admin, Entity, LeadStore};
use crate::types::{ConversionId, LeadId, LeadStatus};

/// `lead`'s draft as `label`, at `minute`, by Ada.
fn draft(lead: LeadId, conversion_id: ConversionId, price: Option<i64>, minute: i64) -> Draft {
    Draft {
        lead_id: lead,
        conversion_id,
        price,
        by: Actor::User {
            id: crate::types::UserId(1),
            name: "Ada".to_owned(),
        },
        at: at(minute),
    }
}

/// A draft is kept, one per lead (the last one), oldest first, and changes nothing else:
/// the lead stays as it was, with no job.
pub async fn a_draft_is_kept_and_changes_nothing_else<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let acme = project(&store, "acme").await;
    let other = project(&store, "other").await;
    let customer = store
        .create_label(
            acme.id,
            crate::label::NewLabel::done("Customer", LabelMapping::default()),
            at(0),
        )
        .await
        .unwrap();
    let label = ConversionId::Label(customer.id);
    let ada = create(
        &store,
        &acme,
        json!({"userData": {"email": "ada@example.com"}}),
        1,
    )
    .await;
    let bob = create(
        &store,
        &acme,
        json!({"userData": {"email": "bob@example.com"}}),
        2,
    )
    .await;
    let first = draft(bob.lead_id, ConversionId::Lost, None, 3);
    store.save_draft(acme.id, &first).await.unwrap();
    store
        .save_draft(acme.id, &draft(ada.lead_id, ConversionId::Lost, None, 4))
        .await
        .unwrap();
    let changed = draft(ada.lead_id, label, Some(150_000), 5);
    store.save_draft(acme.id, &changed).await.unwrap();
    assert_eq!(store.drafts(acme.id).await.unwrap(), [first, changed]);
    assert!(store.drafts(other.id).await.unwrap().is_empty());
    let lead = lead_by_id(&store, &acme, ada.lead_id).await;
    assert_eq!((lead.status, lead.price), (LeadStatus::Open, None));
    assert!(
        store
            .lead_jobs(acme.id, ada.lead_id)
            .await
            .unwrap()
            .is_empty()
    );

    // Only the project's own leads.
    let foreign = draft(ada.lead_id, ConversionId::Lost, None, 6);
    assert_not_found(store.save_draft(other.id, &foreign).await, Entity::Lead);
    assert_not_found(
        store
            .save_draft(acme.id, &draft(LeadId(9_999), ConversionId::Lost, None, 6))
            .await,
        Entity::Lead,
    );
    assert!(store.discard_draft(acme.id, bob.lead_id).await.unwrap());
    assert!(!store.discard_draft(acme.id, bob.lead_id).await.unwrap());
    assert_eq!(store.drafts(acme.id).await.unwrap().len(), 1);
}

/// Any rating of a lead discards its draft: a label, `lost` or `open`, whoever rates it;
/// deleting the lead does too. The other leads' drafts stay.
pub async fn a_rating_or_a_deletion_discards_the_draft<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let acme = project(&store, "acme").await;
    let mut leads = Vec::new();
    for (i, email) in ["ada", "bob", "cy", "dee"].iter().enumerate() {
        let body = json!({"userData": {"email": format!("{email}@example.com")}});
        let lead = create(&store, &acme, body, i64::try_from(i).unwrap()).await;
        let kept = draft(lead.lead_id, ConversionId::Lost, Some(100), 10);
        store.save_draft(acme.id, &kept).await.unwrap();
        leads.push(lead.lead_id);
    }
    let rate = |id: LeadId, conversion: ConversionId| {
        let store = store.clone();
        async move {
            store
                .update_status(acme.id, &update(id, conversion), &by(), at(20))
                .await
                .unwrap()
        }
    };
    rate(leads[0], ConversionId::Lost).await;
    rate(leads[1], ConversionId::Open).await;
    store
        .delete_lead(acme.id, leads[2], &attributed(), at(21))
        .await
        .unwrap();
    let left: Vec<LeadId> = store
        .drafts(acme.id)
        .await
        .unwrap()
        .iter()
        .map(|draft| draft.lead_id)
        .collect();
    assert_eq!(left, [leads[3]]);
}
