//! A lead's arrival as core's `store::arrival` plans it, written by each backend: what a
//! merge, a lead held as spam and a duplicate may set off, whatever order a backend's own
//! lookups run in.

use chrono::Duration;
use serde_json::{Value, json};

use super::webhooks::{add, drain};
use super::{Backend, at, create, data, lead_by_id, project};
use crate::account::{NewUser, Password};
use crate::alert::AlertKind;
use crate::assignment::RoundRobin;
use crate::lead::CreatedLead;
use crate::project::Project;
use crate::request::CreateRoute;
use crate::spam::SpamReason;
use crate::store::{Accounts, Admin, JobQueue, LeadStore, LeadWebhooks};
use crate::types::{LeadId, LeadIdentifier, LeadStatus, Role, UserId};
use crate::webhook::WebhookEvent;

/// A project whose new leads go to two members in turn, with a webhook hearing of every
/// lead created or updated; the members' ids, in turn order.
async fn team_project<S: Admin + LeadWebhooks + Accounts>(store: &S) -> (Project, [UserId; 2]) {
    let p = project(store, "team").await;
    let mut members = Vec::new();
    for name in ["ada", "bob"] {
        let password = Password::new("testkit password").unwrap();
        let new = NewUser::new(&format!("{name}@team.io"), Some(name), &password).unwrap();
        let user = store.create_user(new, at(0)).await.unwrap();
        store
            .add_member(p.id, user.id, Role::Member, at(0))
            .await
            .unwrap();
        members.push(user.id);
    }
    let rule = RoundRobin::new([], &members);
    store.set_round_robin(p.id, Some(&rule)).await.unwrap();
    add(store, &p, "crm", "lead.created,lead.updated").await;
    (p, [members[0], members[1]])
}

/// Every alert queued so far, as `(lead, kind)`.
async fn alerts<S: JobQueue>(store: &S) -> Vec<(LeadId, AlertKind)> {
    let taken = store.take_alerts(100).await.unwrap();
    taken.into_iter().map(|a| (a.lead, a.kind)).collect()
}

/// Every webhook event queued so far, as `(event, lead)`, in the order queued.
async fn announced<S: JobQueue>(store: &S) -> Vec<(WebhookEvent, LeadId)> {
    let claimed = drain(store).await;
    claimed.iter().map(|e| (e.event, e.lead_id)).collect()
}

/// A browser create of `body` at `minute`, held as spam for `spam`'s reason, if any.
async fn screened<S: LeadStore>(
    store: &S,
    p: &Project,
    (body, spam): (Value, Option<SpamReason>),
    minute: i64,
) -> CreatedLead {
    store
        .create_screened_lead(p.id, CreateRoute::Browser, data(body), spam, at(minute))
        .await
        .unwrap()
}

/// A lead sent again (its event id) is merged: the team hears of it once, its turn in the
/// round-robin is taken once, and webhooks hear `lead.updated` after `lead.created`.
pub async fn a_merged_lead_never_alerts_or_is_assigned_twice<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let (p, [ada, bob]) = team_project(&store).await;
    let sent = json!({"userData": {"email": "m@x.io"}, "formData": {"uniqueEventId": "e1"}});
    let first = create(&store, &p, sent, 1).await;
    let again = json!({"userData": {"phone": "+1 555 0100"}, "formData": {"uniqueEventId": "e1"}});
    let again = create(&store, &p, again, 2).await;
    assert!(first.created && !again.created);
    assert_eq!(again.lead_id, first.lead_id);
    let lead = first.lead_id;
    let assigned = AlertKind::Assigned { user: ada };
    assert_eq!(
        alerts(&store).await,
        [(lead, AlertKind::NewLead), (lead, assigned)]
    );
    // The next lead takes the second turn: the merge took none.
    let next = create(&store, &p, json!({"userData": {"email": "n@x.io"}}), 3).await;
    let assignee = |id| {
        let (store, p) = (&store, &p);
        async move { lead_by_id(store, p, id).await.assignee.map(|a| a.id) }
    };
    assert_eq!(assignee(lead).await, Some(ada));
    assert_eq!(assignee(next.lead_id).await, Some(bob));
    assert_eq!(
        announced(&store).await,
        [
            (WebhookEvent::LeadCreated, lead),
            (WebhookEvent::LeadUpdated, lead),
            (WebhookEvent::LeadCreated, next.lead_id),
        ]
    );
}

/// A lead held as spam, and a lead sent again into it, set off nothing: no alert, no turn,
/// no webhook event; it stays spam and is nobody's original.
pub async fn a_lead_held_as_spam_is_never_assigned_alerted_or_announced<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let (p, [ada, _]) = team_project(&store).await;
    let body = json!({"userData": {"email": "s@x.io"}, "formData": {"uniqueEventId": "s1"}});
    let held = screened(&store, &p, (body, Some(SpamReason::TooFast)), 1).await;
    let body = json!({"userData": {"firstName": "S"}, "formData": {"uniqueEventId": "s1"}});
    let again = screened(&store, &p, (body, None), 2).await;
    assert_eq!((again.lead_id, again.created), (held.lead_id, false));
    let lead = lead_by_id(&store, &p, held.lead_id).await;
    assert_eq!(lead.status, LeadStatus::Spam, "a merge keeps the status");
    assert_eq!(
        lead.data.user("firstName"),
        Some("S"),
        "the merge was written"
    );
    assert_eq!(lead.assignee, None);
    assert_eq!(alerts(&store).await, []);
    assert_eq!(announced(&store).await, []);
    // A person with the same email is no duplicate of it, and takes the first turn.
    let person = create(&store, &p, json!({"userData": {"email": "s@x.io"}}), 3).await;
    let person = lead_by_id(&store, &p, person.lead_id).await;
    assert_eq!(person.duplicate_of, None);
    assert_eq!(person.assignee.map(|a| a.id), Some(ada));
    assert!(!lead_by_id(&store, &p, held.lead_id).await.duplicated);
}

/// A duplicate points at its person's original, which keeps its id, data and identifier,
/// and learns it has a duplicate; a lead that merges into another is nobody's duplicate,
/// nor makes one, whatever email the merge brings.
pub async fn a_duplicate_keeps_its_originals_identity<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p = project(&store, "p").await;
    let stored = |id| {
        let (store, p) = (&store, &p);
        async move { lead_by_id(store, p, id).await }
    };
    let body =
        json!({"userData": {"email": "ada@x.io", "firstName": "Ada"}, "uniqueIdentifier": "crm-1"});
    let original = create(&store, &p, body, 1).await.lead_id;
    let body = json!({"userData": {"email": "ADA@x.io", "firstName": "Ada L."}});
    let duplicate = create(&store, &p, body, 2).await.lead_id;
    assert_eq!(stored(duplicate).await.duplicate_of, Some(original));
    let kept = stored(original).await;
    assert!(kept.duplicated);
    assert_eq!(kept.duplicate_of, None);
    assert_eq!(kept.data.user("firstName"), Some("Ada"));
    assert_eq!(kept.data.unique_identifier.as_deref(), Some("crm-1"));
    assert_eq!(kept.created_at, at(1));
    let by_identifier = LeadIdentifier::UniqueIdentifier("crm-1".into());
    let found = store.find_lead(p.id, &by_identifier).await.unwrap();
    assert_eq!(found.id, original);

    let person = create(&store, &p, json!({"userData": {"email": "bo@x.io"}}), 3).await;
    let other = json!({"userData": {"email": "cy@x.io"}, "formData": {"uniqueEventId": "e1"}});
    let other = create(&store, &p, other, 4).await.lead_id;
    let merged = json!({"userData": {"email": "bo@x.io"}, "formData": {"uniqueEventId": "e1"}});
    assert!(!create(&store, &p, merged, 5).await.created);
    assert_eq!(
        stored(other).await.duplicate_of,
        None,
        "a merge is no duplicate"
    );
    assert!(!stored(person.lead_id).await.duplicated, "nor makes one");
    // Within the duplicate window only (see `a_lead_of_the_same_person_duplicates_the_first`).
    let later = Duration::days(31).num_minutes();
    let body = json!({"userData": {"email": "ada@x.io"}});
    let apart = create(&store, &p, body, later).await.lead_id;
    assert_eq!(stored(apart).await.duplicate_of, None);
}
