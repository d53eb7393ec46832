//! Inbound webhooks: saved sealed, listed per project, found by id for their posts,
//! changed only by their own project, and removed.

use super::{Backend, at, project};
use crate::inbound::{InboundHook, Preset};
use crate::integration::Secret;
use crate::mapping::FieldMap;
use crate::store::{Admin, Entity, StoreError};

/// A webhook reads back as saved, after a restart, by its project and by its id; a
/// change by its project is kept, one by another project is refused, and removal is
/// its project's alone.
pub async fn inbound_hooks_are_kept_per_project<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let (acme, other) = (
        project(&store, "acme").await,
        project(&store, "other").await,
    );
    let mut tally = InboundHook::new(acme.id, ("Tally", Preset::Tally), None);
    tally.created_at = at(1);
    let mut jotform = InboundHook::new(acme.id, ("", Preset::Jotform), Some(Secret::new("s")));
    jotform.created_at = at(2);
    let mut theirs = InboundHook::new(other.id, ("Theirs", Preset::Custom), None);
    theirs.created_at = at(3);
    for hook in [&jotform, &tally, &theirs] {
        store.save_inbound_hook(hook).await.unwrap();
    }
    let store = backend.reopen(store).await;
    assert_eq!(
        store.inbound_hooks(acme.id).await.unwrap(),
        [tally.clone(), jotform.clone()]
    );
    assert_eq!(
        store.inbound_hook(&theirs.id).await.unwrap(),
        (theirs.clone(), other)
    );

    tally.mapping = vec![FieldMap::parse("email=$.mail").unwrap()];
    tally.name = "Tally: demos".to_owned();
    store.save_inbound_hook(&tally).await.unwrap();
    assert_eq!(store.inbound_hook(&tally.id).await.unwrap().0, tally);

    let mut stolen = theirs.clone();
    stolen.project = acme.id;
    let err = store.save_inbound_hook(&stolen).await.unwrap_err();
    assert!(
        matches!(err, StoreError::NotFound(Entity::Webhook)),
        "{err:?}"
    );
    assert_eq!(store.inbound_hook(&theirs.id).await.unwrap().0, theirs);

    assert!(
        !store
            .remove_inbound_hook(acme.id, &theirs.id)
            .await
            .unwrap()
    );
    assert!(store.remove_inbound_hook(acme.id, &tally.id).await.unwrap());
    assert!(!store.remove_inbound_hook(acme.id, &tally.id).await.unwrap());
    let err = store.inbound_hook(&tally.id).await.unwrap_err();
    assert!(
        matches!(err, StoreError::NotFound(Entity::Webhook)),
        "{err:?}"
    );
    assert_eq!(store.inbound_hooks(acme.id).await.unwrap(), [jotform]);
}
