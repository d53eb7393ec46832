//! Exports: a listing read in batches, each continuing strictly after the last lead of the
//! one before.

use serde_json::json;
use strum::VariantArray;

use super::{Backend, at, by, create, ids, project, update};
use crate::request::query::{Sort, SortDirection, SortField};
use crate::request::{Cursor, LeadQuery, StatusUpdate};
use crate::store::LeadStore;
use crate::types::{ConversionId, LeadId, LeadStatus};

/// Every sort, with ties and missing values, read in batches of three: the batches
/// together are the listing, in its order, without a lead twice or missing; filters apply.
pub async fn export_batches_follow_the_listing<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let other = super::project(&store, "p2").await;
    create(
        &store,
        &other,
        json!({"userData": {"firstName": "Other"}}),
        5,
    )
    .await;
    let people = [
        json!({"firstName": "bob", "lastName": "Zed", "email": "b@x.io"}),
        json!({"firstName": "Alice", "email": "a@x.io"}),
        json!({"email": "n@x.io"}),
        json!({"firstName": "Bob", "lastName": "Adams"}),
        json!({"firstName": "alice", "phone": "+1 555"}),
        json!({"lastName": "Young", "email": "Y@x.io"}),
        json!({"firstName": "Carol", "email": "c@x.io"}),
        json!({"phone": "+44 1"}),
    ];
    let mut leads = Vec::new();
    for (n, person) in people.into_iter().enumerate() {
        // Pairs share a creation time, so ties are broken on the id.
        let minute = (n / 2) as i64;
        leads.push(
            create(&store, &project, json!({"userData": person}), minute)
                .await
                .lead_id,
        );
    }
    for (lead, price) in [
        (leads[0], 500),
        (leads[1], 100),
        (leads[3], 500),
        (leads[6], 100),
    ] {
        let priced = StatusUpdate {
            price: Some(price),
            ..update(lead, ConversionId::Open)
        };
        store
            .update_status(project.id, &priced, &by(), at(10))
            .await
            .unwrap();
    }
    for lead in [leads[2], leads[5]] {
        store
            .update_status(project.id, &update(lead, ConversionId::Lost), &by(), at(10))
            .await
            .unwrap();
    }

    let batches = |query: LeadQuery| {
        let store = store.clone();
        async move {
            let mut all: Vec<LeadId> = Vec::new();
            let mut after: Option<Cursor> = None;
            loop {
                let batch = store
                    .export_leads(project.id, &query, after.as_ref(), 3)
                    .await
                    .unwrap();
                assert!(batch.len() <= 3);
                all.extend(batch.iter().map(|lead| lead.id));
                match batch.last() {
                    Some(last) if batch.len() == 3 => {
                        after = Some(Cursor::after(last, query.sort.field))
                    }
                    _ => return all,
                }
            }
        }
    };
    let listed = |query: LeadQuery| {
        let store = store.clone();
        async move {
            let query = LeadQuery {
                limit: 100,
                ..query
            };
            ids(&store.list_leads(project.id, &query).await.unwrap().leads)
        }
    };
    for &field in SortField::VARIANTS {
        for direction in [SortDirection::Asc, SortDirection::Desc] {
            let query = LeadQuery {
                sort: Sort { field, direction },
                ..LeadQuery::default()
            };
            let expected = listed(query.clone()).await;
            assert_eq!(expected.len(), leads.len());
            assert_eq!(batches(query).await, expected, "{field:?} {direction:?}");
        }
    }
    let open_by_email = LeadQuery {
        status: Some(vec![LeadStatus::Open]),
        sort: Sort {
            field: SortField::Email,
            direction: SortDirection::Asc,
        },
        ..LeadQuery::default()
    };
    let expected = listed(open_by_email.clone()).await;
    assert_eq!(expected.len(), 6);
    assert_eq!(batches(open_by_email).await, expected);
    // `q`'s words of two characters: an export checks them on each lead, where a listing
    // of few matches looks them up.
    let short = LeadQuery {
        q: crate::matching::q_words("AL"),
        ..LeadQuery::default()
    };
    let expected = listed(short.clone()).await;
    assert_eq!(expected, [leads[4], leads[1]]);
    assert_eq!(batches(short).await, expected);
    // `limit` and `page` of the query do not bound an export.
    let paged = LeadQuery {
        limit: 2,
        page: 3,
        ..LeadQuery::default()
    };
    assert_eq!(batches(paged).await.len(), leads.len());
}
