//! The team without a shell: invitations and links about an account (single use, expiry,
//! replacement), a user's sessions, and a project's history kept a year.

use chrono::Duration;

use crate::account::{Actor, Device, NewUser, Password, SessionToken, User};
use crate::activity::{ProjectActivity, audit_retention};
use crate::link::{
    Acceptance, AccountLink, LinkHash, LinkKind, LinkToken, NewInvitation, RESET_KEPT_FOR,
};
use crate::store::{Accounts, Conflict, Entity, LeadStore, StoreError};
use crate::types::{IntegrationKind, Role, UserId};

use super::{Backend, assert_not_found, at, attributed, project};

/// A fresh link's hash.
fn fresh() -> LinkHash {
    LinkToken::generate().hash()
}

/// An invitation of `email` as `role`, by an owner called Grace.
fn invitation(email: &str, role: Role) -> NewInvitation {
    let grace = Actor::User {
        id: UserId(1),
        name: "Grace".into(),
    };
    NewInvitation::new(email, role, &grace).unwrap()
}

/// A new account for `email` with the suite's password.
fn account(email: &str, name: &str) -> NewUser {
    NewUser::new(
        email,
        Some(name),
        &Password::new("invited password").unwrap(),
    )
    .unwrap()
}

/// The user with `email` and `name`, created at `minute`.
async fn user<S: Accounts>(store: &S, email: &str, name: &str, minute: i64) -> User {
    store
        .create_user(account(email, name), at(minute))
        .await
        .expect("create user")
}

/// An invitation works once, within 72 hours, and only its latest link; it makes a new
/// account a member with its role.
pub async fn invitations_work_once_within_72_hours<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let acme = project(&store, "acme").await;
    let first = fresh();
    let sent = store
        .invite(
            acme.id,
            &invitation("Ada@Example.com", Role::Viewer),
            &first,
            at(0),
        )
        .await
        .unwrap();
    assert_eq!(
        (sent.email.as_str(), sent.role, sent.invited_by.as_str()),
        ("Ada@Example.com", Role::Viewer, "Grace")
    );
    // Inviting the same email again (in any case) renews the one invitation.
    let second = fresh();
    let again = store
        .invite(
            acme.id,
            &invitation("ada@example.com", Role::Member),
            &second,
            at(1),
        )
        .await
        .unwrap();
    assert_eq!((again.id, again.role), (sent.id, Role::Member));
    assert_eq!(
        store.invitations(acme.id).await.unwrap(),
        vec![again.clone()]
    );
    assert_not_found(store.invitation(&first, at(2)).await, Entity::Invitation);
    let (found, found_project) = store.invitation(&second, at(2)).await.unwrap();
    assert_eq!((found, found_project.id), (again.clone(), acme.id));
    let expiry = 1 + LinkKind::Invitation.lifetime().num_minutes();
    assert_not_found(
        store.invitation(&second, at(expiry)).await,
        Entity::Invitation,
    );
    assert_not_found(
        store
            .accept_invitation(
                &second,
                Acceptance::NewAccount(account("ada@example.com", "Ada")),
                at(expiry),
            )
            .await,
        Entity::Invitation,
    );

    let (ada, joined) = store
        .accept_invitation(
            &second,
            Acceptance::NewAccount(account("ada@example.com", "Ada")),
            at(expiry - 1),
        )
        .await
        .unwrap();
    assert_eq!((ada.name.as_str(), joined.id), ("Ada", acme.id));
    let membership = store.membership(ada.id, "acme").await.unwrap();
    assert_eq!(membership.role, Role::Member);
    assert!(store.invitations(acme.id).await.unwrap().is_empty());
    assert_not_found(
        store
            .accept_invitation(&second, Acceptance::Existing(ada.id), at(expiry - 1))
            .await,
        Entity::Invitation,
    );
}

/// An existing user takes an invitation of their own email only; a member keeps their
/// role; revoking and renewing change which link works.
pub async fn invitations_are_taken_by_their_invitee_only<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let acme = project(&store, "acme").await;
    let ada = user(&store, "ada@example.com", "Ada", 0).await;
    let bob = user(&store, "bob@example.com", "Bob", 0).await;
    let link = fresh();
    store
        .invite(
            acme.id,
            &invitation("ada@example.com", Role::Owner),
            &link,
            at(0),
        )
        .await
        .unwrap();
    match store
        .accept_invitation(&link, Acceptance::Existing(bob.id), at(1))
        .await
    {
        Err(StoreError::Invalid(_)) => {}
        other => panic!("Bob took Ada's invitation: {other:?}"),
    }
    match store
        .accept_invitation(
            &link,
            Acceptance::NewAccount(account("ada@example.com", "Ada again")),
            at(1),
        )
        .await
    {
        Err(StoreError::Conflict(Conflict::UserExists(_))) => {}
        other => panic!("a second account for one email: {other:?}"),
    }
    // Both refusals left the invitation as it was.
    let (user, _) = store
        .accept_invitation(&link, Acceptance::Existing(ada.id), at(2))
        .await
        .unwrap();
    assert_eq!(user.id, ada.id);
    assert_eq!(
        store.membership(ada.id, "acme").await.unwrap().role,
        Role::Owner
    );

    // A member invited again keeps the role they have.
    let again = fresh();
    store
        .invite(
            acme.id,
            &invitation("ada@example.com", Role::Viewer),
            &again,
            at(3),
        )
        .await
        .unwrap();
    store
        .accept_invitation(&again, Acceptance::Existing(ada.id), at(4))
        .await
        .unwrap();
    assert_eq!(
        store.membership(ada.id, "acme").await.unwrap().role,
        Role::Owner
    );

    let revoked = fresh();
    let pending = store
        .invite(
            acme.id,
            &invitation("cy@example.com", Role::Member),
            &revoked,
            at(5),
        )
        .await
        .unwrap();
    let renewed = fresh();
    let other = project(&store, "other").await;
    assert_not_found(
        store
            .renew_invitation(other.id, pending.id, &renewed, at(6))
            .await,
        Entity::Invitation,
    );
    let resent = store
        .renew_invitation(acme.id, pending.id, &renewed, at(6))
        .await
        .unwrap();
    assert_eq!(resent.sent_at, at(6));
    assert_not_found(store.invitation(&revoked, at(6)).await, Entity::Invitation);
    assert_eq!(
        store
            .revoke_invitation(acme.id, pending.id)
            .await
            .unwrap()
            .email,
        "cy@example.com"
    );
    assert_not_found(store.invitation(&renewed, at(7)).await, Entity::Invitation);
    assert_not_found(
        store.revoke_invitation(acme.id, pending.id).await,
        Entity::Invitation,
    );
}

/// Of many takes of one invitation at once, exactly one succeeds.
pub async fn an_invitation_is_taken_once_under_concurrency<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let acme = project(&store, "acme").await;
    let link = fresh();
    store
        .invite(
            acme.id,
            &invitation("ada@example.com", Role::Member),
            &link,
            at(0),
        )
        .await
        .unwrap();
    let takes = (0..8).map(|_| {
        store.accept_invitation(
            &link,
            Acceptance::NewAccount(account("ada@example.com", "Ada")),
            at(1),
        )
    });
    let outcomes = futures_util::future::join_all(takes).await;
    let taken = outcomes.iter().filter(|outcome| outcome.is_ok()).count();
    assert_eq!(taken, 1, "{outcomes:?}");
    for outcome in outcomes.iter().filter(|outcome| outcome.is_err()) {
        assert!(
            matches!(
                outcome,
                Err(StoreError::NotFound(Entity::Invitation)
                    | StoreError::Conflict(Conflict::UserExists(_)))
            ),
            "{outcome:?}"
        );
    }
}

/// A password-reset link works once, within the hour, only as the latest one, and ends the
/// user's sessions.
pub async fn a_reset_link_works_once_within_the_hour<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let ada = user(&store, "ada@example.com", "Ada", 0).await;
    let laptop = SessionToken::generate().hash();
    store
        .create_session(ada.id, &laptop, &Device::new("192.0.2.1", "Firefox"), at(0))
        .await
        .unwrap();
    let (old, link) = (fresh(), fresh());
    store
        .issue_link(ada.id, &AccountLink::PasswordReset, &old, at(0))
        .await
        .unwrap();
    store
        .issue_link(ada.id, &AccountLink::PasswordReset, &link, at(1))
        .await
        .unwrap();
    let new = Password::new("a fresh password").unwrap().hash();
    assert_not_found(store.reset_password(&old, &new, at(2)).await, Entity::Link);
    assert_not_found(
        store.reset_password(&link, &new, at(61)).await,
        Entity::Link,
    );

    let late = fresh();
    store
        .issue_link(ada.id, &AccountLink::PasswordReset, &late, at(100))
        .await
        .unwrap();
    let reset = store.reset_password(&late, &new, at(159)).await.unwrap();
    assert_eq!(reset.id, ada.id);
    assert!(
        store
            .password_hash(ada.id)
            .await
            .unwrap()
            .verify("a fresh password")
    );
    assert_not_found(store.session(&laptop, at(159)).await, Entity::Session);
    assert_not_found(
        store.reset_password(&late, &new, at(159)).await,
        Entity::Link,
    );
    assert_not_found(
        store
            .issue_link(
                UserId(i64::MAX),
                &AccountLink::PasswordReset,
                &fresh(),
                at(0),
            )
            .await,
        Entity::User,
    );
}

/// A reset asked for again within [`RESET_KEPT_FOR`] of the last makes no new link: the one
/// sent still works. Later, or once it is used, a new one is made.
pub async fn a_recent_reset_link_is_kept_when_another_is_asked_for<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let ada = user(&store, "ada@example.com", "Ada", 0).await;
    let issue = async |hash: &LinkHash, minute: i64| {
        let now = at(minute);
        let reset = AccountLink::PasswordReset;
        store
            .issue_link_unless_recent(ada.id, &reset, hash, now, now - RESET_KEPT_FOR)
            .await
            .unwrap()
    };
    let (first, second, third, fourth) = (fresh(), fresh(), fresh(), fresh());
    assert!(issue(&first, 0).await);
    assert!(!issue(&second, 14).await, "the first is kept");
    let new = Password::new("a fresh password").unwrap().hash();
    assert_not_found(
        store.reset_password(&second, &new, at(14)).await,
        Entity::Link,
    );
    assert!(
        issue(&third, 15).await,
        "15 minutes on, a new one replaces it"
    );
    assert_not_found(
        store.reset_password(&first, &new, at(16)).await,
        Entity::Link,
    );
    store.reset_password(&third, &new, at(16)).await.unwrap();
    assert!(issue(&fourth, 17).await, "a used link holds nothing back");
    assert_not_found(
        store
            .issue_link_unless_recent(
                UserId(i64::MAX),
                &AccountLink::PasswordReset,
                &fresh(),
                at(0),
                at(0),
            )
            .await,
        Entity::User,
    );
}

/// An email change takes effect when its link is followed, once, unless the email was taken
/// in the meantime; a reset link does not confirm an email, nor the reverse.
pub async fn an_email_changes_when_its_link_is_followed<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let ada = user(&store, "ada@example.com", "Ada", 0).await;
    let change = AccountLink::email_change("Ada@New.example").unwrap();
    let link = fresh();
    store
        .issue_link(ada.id, &change, &link, at(0))
        .await
        .unwrap();
    assert_not_found(
        store
            .reset_password(&link, &Password::generate().hash(), at(1))
            .await,
        Entity::Link,
    );
    let changed = store.confirm_email(&link, at(1)).await.unwrap();
    assert_eq!(changed.email, "Ada@New.example");
    assert_eq!(
        store.user_by_email("ada@new.example").await.unwrap().id,
        ada.id
    );
    assert_not_found(store.user_by_email("ada@example.com").await, Entity::User);
    assert_not_found(store.confirm_email(&link, at(1)).await, Entity::Link);

    let taken = fresh();
    store
        .issue_link(
            ada.id,
            &AccountLink::email_change("bob@example.com").unwrap(),
            &taken,
            at(2),
        )
        .await
        .unwrap();
    user(&store, "bob@example.com", "Bob", 3).await;
    match store.confirm_email(&taken, at(4)).await {
        Err(StoreError::Conflict(Conflict::UserExists(_))) => {}
        other => panic!("two users with one email: {other:?}"),
    }
    let expired = fresh();
    store
        .issue_link(
            ada.id,
            &AccountLink::email_change("cy@example.com").unwrap(),
            &expired,
            at(0),
        )
        .await
        .unwrap();
    assert_not_found(
        store.confirm_email(&expired, at(24 * 60)).await,
        Entity::Link,
    );
}

/// A user's sessions list where each started, and signing out the others keeps one.
pub async fn a_user_sees_and_ends_their_other_sessions<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let ada = user(&store, "ada@example.com", "Ada", 0).await;
    let bob = user(&store, "bob@example.com", "Bob", 0).await;
    let start = |user: UserId, address: &'static str, minute: i64| {
        let store = store.clone();
        async move {
            let hash = SessionToken::generate().hash();
            let device = Device::new(address, &format!("Browser {}", "x".repeat(300)));
            store
                .create_session(user, &hash, &device, at(minute))
                .await
                .unwrap();
            hash
        }
    };
    let laptop = start(ada.id, "192.0.2.1", 0).await;
    let phone = start(ada.id, "198.51.100.2", 5).await;
    let bobs = start(bob.id, "203.0.113.3", 0).await;
    let listed = store.sessions(ada.id, at(6)).await.unwrap();
    let seen: Vec<_> = listed
        .iter()
        .map(|s| (s.hash, s.device.address.as_str(), s.session.created_at))
        .collect();
    assert_eq!(
        seen,
        vec![(phone, "198.51.100.2", at(5)), (laptop, "192.0.2.1", at(0))]
    );
    assert_eq!(
        listed[0].device.user_agent.chars().count(),
        Device::MAX_USER_AGENT
    );
    assert_eq!(store.end_other_sessions(ada.id, &phone).await.unwrap(), 1);
    assert_not_found(store.session(&laptop, at(7)).await, Entity::Session);
    assert!(store.session(&phone, at(7)).await.is_ok());
    assert!(store.session(&bobs, at(7)).await.is_ok());
    let renamed = store.set_name(ada.id, " Ada Lovelace ").await.unwrap();
    assert_eq!(renamed.name, "Ada Lovelace");
    match store.set_name(ada.id, "   ").await {
        Err(StoreError::Invalid(_)) => {}
        other => panic!("an empty name: {other:?}"),
    }
}

/// A project's history keeps who did what from where, newest first, in pages, for a year.
pub async fn a_projects_history_is_kept_a_year<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let acme = project(&store, "acme").await;
    let other = project(&store, "other").await;
    let by = attributed();
    let events = [
        ProjectActivity::Exported {
            view: "status=open".into(),
        },
        ProjectActivity::Invited {
            email: "ada@example.com".into(),
            role: Role::Viewer,
        },
        ProjectActivity::IntegrationSaved {
            integration: IntegrationKind::Ga4,
        },
    ];
    for (minute, event) in (0..).zip(&events) {
        store
            .record_project_event(acme.id, &by, event, at(minute))
            .await
            .unwrap();
    }
    let newest = store
        .project_history(acme.id, None, 2, at(3))
        .await
        .unwrap();
    let activities: Vec<_> = newest.iter().map(|e| e.activity.clone()).collect();
    assert_eq!(activities, vec![events[2].clone(), events[1].clone()]);
    assert_eq!(newest[0].address.as_deref(), Some("192.0.2.7"));
    assert_eq!(newest[0].by.as_ref(), Some(&by.actor));
    let older = store
        .project_history(acme.id, Some(newest[1].id), 10, at(3))
        .await
        .unwrap();
    assert_eq!(older.len(), 1);
    assert_eq!(
        (older[0].activity.clone(), older[0].at),
        (events[0].clone(), at(0))
    );
    assert!(
        store
            .project_history(other.id, None, 10, at(3))
            .await
            .unwrap()
            .is_empty()
    );

    // A year on, the first event is no longer shown, and the next write deletes it.
    let year = at(0) + audit_retention();
    let shown = store
        .project_history(acme.id, None, 10, year + Duration::minutes(1))
        .await
        .unwrap();
    assert_eq!(shown.len(), 2);
    store
        .record_project_event(acme.id, &by, &events[0], year + Duration::minutes(1))
        .await
        .unwrap();
    let kept = store
        .project_history(acme.id, None, 10, at(0))
        .await
        .unwrap();
    assert_eq!(kept.len(), 3, "the event of minute 0 is gone");
    assert!(kept.iter().all(|event| event.at > at(0)));
}
