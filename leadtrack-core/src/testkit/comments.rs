//! Comments: written, edited and deleted only by their author, recorded in the lead's
//! history without their text, confined to their lead, and gone with a deleted lead; never a
//! conversion.

use serde_json::json;

use super::{Backend, assert_not_found, at, attributed, create, project};
use crate::account::Actor;
use crate::activity::Activity;
use crate::store::{Entity, JobQueue, LeadStore, StoreError};
use crate::types::{LeadId, UserId};

fn person(id: i64, name: &str) -> Actor {
    Actor::User {
        id: UserId(id),
        name: name.into(),
    }
}

/// A thread of comments on a lead, changed only by their authors.
pub async fn comments_are_changed_only_by_their_author<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p = project(&store, "p1").await;
    let other = project(&store, "p2").await;
    let lead = create(&store, &p, json!({"userData": {"email": "a@x.io"}}), 0)
        .await
        .lead_id;
    let (ada, grace) = (person(1, "Ada"), person(2, "Grace"));
    let first = store
        .add_comment(p.id, lead, &ada, "  Called, no answer  ", at(1))
        .await
        .unwrap();
    assert_eq!(
        (first.text.as_str(), first.author.clone(), first.edited_at),
        ("Called, no answer", ada.clone(), None)
    );
    let second = store
        .add_comment(p.id, lead, &grace, "I'll try tomorrow", at(2))
        .await
        .unwrap();
    let blank = store.add_comment(p.id, lead, &ada, "  ", at(2)).await;
    assert!(matches!(blank, Err(StoreError::Invalid(_))), "{blank:?}");
    assert_not_found(
        store.add_comment(other.id, lead, &ada, "x", at(2)).await,
        Entity::Lead,
    );
    assert_not_found(
        store
            .add_comment(p.id, LeadId(i64::MAX), &ada, "x", at(2))
            .await,
        Entity::Lead,
    );

    // Grace may not change Ada's comment; Ada may.
    assert_not_found(
        store
            .edit_comment(p.id, (lead, first.id), &grace, "mine now", at(3))
            .await,
        Entity::Comment,
    );
    assert_not_found(
        store
            .delete_comment(p.id, (lead, first.id), &grace, at(3))
            .await,
        Entity::Comment,
    );
    assert_not_found(
        store
            .edit_comment(other.id, (lead, first.id), &ada, "elsewhere", at(3))
            .await,
        Entity::Comment,
    );
    let edited = store
        .edit_comment(
            p.id,
            (lead, first.id),
            &ada,
            "Called twice, no answer",
            at(4),
        )
        .await
        .unwrap();
    assert_eq!(
        (edited.text.as_str(), edited.edited_at),
        ("Called twice, no answer", Some(at(4)))
    );
    store
        .delete_comment(p.id, (lead, second.id), &grace, at(5))
        .await
        .unwrap();
    assert_eq!(store.comments(p.id, lead).await.unwrap(), vec![edited]);
    assert!(store.comments(other.id, lead).await.unwrap().is_empty());

    let history: Vec<_> = store
        .lead_activity(p.id, lead)
        .await
        .unwrap()
        .into_iter()
        .skip(1)
        .map(|event| (event.activity, event.by))
        .collect();
    assert_eq!(
        history,
        vec![
            (
                Activity::Commented {
                    comment_id: first.id
                },
                Some(ada.clone())
            ),
            (
                Activity::Commented {
                    comment_id: second.id
                },
                Some(grace.clone())
            ),
            (
                Activity::CommentEdited {
                    comment_id: first.id
                },
                Some(ada.clone())
            ),
            (
                Activity::CommentDeleted {
                    comment_id: second.id
                },
                Some(grace)
            ),
        ]
    );
    let depth = store.queue_depth(at(6)).await.unwrap();
    assert_eq!(depth.jobs.queued, 0, "a comment is never a conversion");

    store
        .delete_lead(p.id, lead, &attributed(), at(7))
        .await
        .unwrap();
    assert!(store.comments(p.id, lead).await.unwrap().is_empty());
}
