//! Lead sources: announcements find their projects by routing, and announced leads are
//! queued once, claimed with a lease, retried, and done.

use chrono::Duration;
use serde_json::json;

use super::{Backend, at, project};
use crate::integration::Secret;
use crate::job::QueueDepth;
use crate::source::{FetchOutcome, LeadSource, NewLeadFetch, SourceKind};
use crate::store::{Admin, Conflict, JobQueue, StoreError};

fn page(page_id: &str, token: &str) -> LeadSource {
    LeadSource::MetaLeadAds {
        page_id: page_id.to_owned(),
        page_access_token: Secret::new(token),
        base_url: None,
    }
}

fn announced(leadgen_id: &str) -> NewLeadFetch {
    NewLeadFetch {
        kind: SourceKind::MetaLeadAds,
        external_id: leadgen_id.to_owned(),
        announced: json!({"leadgen_id": leadgen_id, "page_id": "p1", "form_id": "f1"}),
    }
}

/// A page's announcements find every project that set the page up, with its token, and
/// no other; a page set up again elsewhere moves.
pub async fn a_page_finds_the_projects_that_set_it_up<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let (acme, other) = (
        project(&store, "acme").await,
        project(&store, "other").await,
    );
    let kind = SourceKind::MetaLeadAds;
    store
        .set_lead_source(acme.id, kind, Some(&page("p1", "token-a")))
        .await
        .unwrap();
    store
        .set_lead_source(other.id, kind, Some(&page("p2", "token-b")))
        .await
        .unwrap();
    let store = backend.reopen(store).await;
    assert_eq!(
        store.lead_sources_routed(kind, "p1").await.unwrap(),
        [(acme.id, page("p1", "token-a"))]
    );
    assert!(
        store
            .lead_sources_routed(kind, "p3")
            .await
            .unwrap()
            .is_empty()
    );
    store
        .set_lead_source(other.id, kind, Some(&page("p1", "token-c")))
        .await
        .unwrap();
    assert_eq!(
        store.lead_sources_routed(kind, "p1").await.unwrap(),
        [
            (acme.id, page("p1", "token-a")),
            (other.id, page("p1", "token-c"))
        ]
    );
    assert!(
        store
            .lead_sources_routed(kind, "p2")
            .await
            .unwrap()
            .is_empty()
    );
    let other_kind = store
        .lead_sources_routed(SourceKind::GoogleLeadForms, "p1")
        .await
        .unwrap();
    assert!(other_kind.is_empty());
}

/// An announced lead is queued once per project however often it is announced, claimed
/// by one fetcher at a time, due again when its fetch failed or its fetcher's lease
/// lapsed, and never claimed once done; the queue's depth says so at each step.
pub async fn an_announced_lead_is_fetched_once_and_retried_until_it_is<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let (acme, other) = (
        project(&store, "acme").await,
        project(&store, "other").await,
    );
    let lead = announced("L1");
    assert!(store.queue_lead_fetch(acme.id, &lead, at(0)).await.unwrap());
    assert!(!store.queue_lead_fetch(acme.id, &lead, at(1)).await.unwrap());
    assert!(
        store
            .queue_lead_fetch(other.id, &lead, at(2))
            .await
            .unwrap()
    );
    let lease = Duration::minutes(30);
    let depth = |queued, running, minutes| QueueDepth {
        queued,
        running,
        oldest_due_for: Duration::minutes(minutes),
    };
    let fetches =
        async |store: &B::Store, minute| store.queue_depth(at(minute)).await.unwrap().lead_fetches;
    assert_eq!(fetches(&store, 3).await, depth(2, 0, 3));

    let first = store.claim_lead_fetch(at(3), lease).await.unwrap().unwrap();
    assert_eq!(
        (first.project, &first.fetch, first.attempts),
        (acme.id, &lead, 0)
    );
    let second = store.claim_lead_fetch(at(3), lease).await.unwrap().unwrap();
    assert_eq!(second.project, other.id);
    assert_eq!(store.claim_lead_fetch(at(3), lease).await.unwrap(), None);
    assert_eq!(fetches(&store, 3).await, depth(0, 2, 0), "both leased");

    // Failed: due again when it says, with its attempts counted.
    let retry = FetchOutcome::Retry {
        at: at(10),
        error: "Meta answered HTTP 503".to_owned(),
    };
    store
        .finish_lead_fetch(first.id, first.lease, &retry, at(4))
        .await
        .unwrap();
    assert_eq!(store.claim_lead_fetch(at(9), lease).await.unwrap(), None);
    assert_eq!(fetches(&store, 9).await, depth(1, 1, 0), "due again at 10");
    let again = store
        .claim_lead_fetch(at(10), lease)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((again.id, again.attempts), (first.id, 1));
    let stale = store
        .finish_lead_fetch(first.id, first.lease, &FetchOutcome::Fetched, at(11))
        .await;
    assert!(
        matches!(stale, Err(StoreError::Conflict(Conflict::FetchLeaseLost(id))) if id == first.id),
        "{stale:?}"
    );
    store
        .finish_lead_fetch(again.id, again.lease, &FetchOutcome::Fetched, at(11))
        .await
        .unwrap();

    // A fetcher that died: its lease lapses, and another fetcher takes the lead.
    let store = backend.reopen(store).await;
    assert_eq!(store.claim_lead_fetch(at(32), lease).await.unwrap(), None);
    let taken = store
        .claim_lead_fetch(at(33), lease)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((taken.id, taken.attempts), (second.id, 1));
    store
        .finish_lead_fetch(taken.id, taken.lease, &FetchOutcome::Fetched, at(34))
        .await
        .unwrap();
    assert_eq!(store.claim_lead_fetch(at(100), lease).await.unwrap(), None);
    assert_eq!(
        fetches(&store, 100).await,
        depth(0, 0, 0),
        "every fetch done"
    );
    assert!(
        !store
            .queue_lead_fetch(acme.id, &lead, at(101))
            .await
            .unwrap()
    );
}
