//! Accounts: unique emails, memberships and roles, session expiry, what ends sessions, and
//! the failed sign-ins the throttle reads.

use std::sync::OnceLock;

use chrono::Duration;

use crate::account::{
    Device, NewUser, Password, PasswordHash, Preferences, SessionHash, SessionToken, Theme,
    Throttled, User, session_lifetime,
};
use crate::saved_view::NewSavedView;
use crate::store::{Accounts, Conflict, Entity, StoreError};
use crate::types::{Role, UserId};

use super::{Backend, assert_not_found, at, project};

/// One hash for the suite's users: hashing is slow on purpose.
fn password_hash() -> PasswordHash {
    static HASH: OnceLock<PasswordHash> = OnceLock::new();
    HASH.get_or_init(|| Password::new("testkit password").unwrap().hash())
        .clone()
}

/// A user with the email and the suite's password.
async fn user<S: Accounts>(store: &S, email: &str) -> User {
    let new = NewUser {
        email: email.to_owned(),
        name: email.split('@').next().unwrap().to_owned(),
        password_hash: password_hash(),
    };
    store.create_user(new, at(0)).await.expect("create user")
}

/// A session of `user` started at `minute`, and its hash.
async fn session<S: Accounts>(store: &S, user: UserId, minute: i64) -> SessionHash {
    let hash = SessionToken::generate().hash();
    store
        .create_session(user, &hash, &Device::default(), at(minute))
        .await
        .expect("create session");
    hash
}

/// Whether the session is live at `minute`, as sign-in checks it.
async fn live<S: Accounts>(store: &S, hash: &SessionHash, minute: i64) -> bool {
    match store.session(hash, at(minute)).await {
        Ok(_) => true,
        Err(StoreError::NotFound(Entity::Session)) => false,
        Err(err) => panic!("session lookup failed: {err}"),
    }
}

/// Emails are unique without regard to case, and users are found in any case.
pub async fn emails_are_unique_in_any_case<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let ada = user(&store, "Ada@Example.com").await;
    assert_eq!(
        (ada.email.as_str(), ada.disabled),
        ("Ada@Example.com", false)
    );
    let taken = NewUser {
        email: "ada@example.COM".into(),
        name: "Other".into(),
        password_hash: password_hash(),
    };
    let err = store.create_user(taken, at(1)).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Conflict(Conflict::UserExists(_))),
        "{err}"
    );
    assert_eq!(store.user_by_email("ADA@example.com").await.unwrap(), ada);
    let bob = user(&store, "bob@example.com").await;
    assert_eq!(store.users().await.unwrap(), [ada.clone(), bob]);
    assert_not_found(
        store.user_by_email("nobody@example.com").await,
        Entity::User,
    );
    assert!(
        store
            .password_hash(ada.id)
            .await
            .unwrap()
            .verify("testkit password")
    );
    assert_not_found(store.password_hash(UserId(i64::MAX)).await, Entity::User);
}

/// A user has one role per project; memberships are seen from both sides, and a project
/// the user is not a member of is not found.
pub async fn members_have_one_role_per_project<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p1 = project(&store, "p1").await;
    let p2 = project(&store, "p2").await;
    let ada = user(&store, "ada@example.com").await;
    let bob = user(&store, "bob@example.com").await;
    store
        .add_member(p1.id, ada.id, Role::Owner, at(1))
        .await
        .unwrap();
    store
        .add_member(p1.id, bob.id, Role::Member, at(2))
        .await
        .unwrap();
    store
        .add_member(p2.id, ada.id, Role::Viewer, at(3))
        .await
        .unwrap();

    let members = store.members(p1.id).await.unwrap();
    let roles: Vec<_> = members.iter().map(|m| (m.user.id, m.role)).collect();
    assert_eq!(roles, [(ada.id, Role::Owner), (bob.id, Role::Member)]);
    let memberships = store.memberships(ada.id).await.unwrap();
    let seen: Vec<_> = memberships
        .iter()
        .map(|m| (m.project.public_id.as_str(), m.role))
        .collect();
    assert_eq!(seen, [("p1", Role::Owner), ("p2", Role::Viewer)]);
    let found = store.membership(bob.id, "p1").await.unwrap();
    assert_eq!((found.project.id, found.role), (p1.id, Role::Member));
    // Exports: a member's, once allowed; never anyone's outside the project.
    assert!(!found.may_export() && store.membership(ada.id, "p1").await.unwrap().may_export());
    store.set_export(p1.id, bob.id, true).await.unwrap();
    let found = store.membership(bob.id, "p1").await.unwrap();
    assert!(found.can_export && found.may_export());
    let listed = store.members(p1.id).await.unwrap();
    assert_eq!(
        listed.iter().map(|m| m.can_export).collect::<Vec<_>>(),
        [false, true]
    );
    assert_not_found(store.set_export(p2.id, bob.id, true).await, Entity::User);
    assert_not_found(store.membership(bob.id, "p2").await, Entity::Project);
    assert_not_found(store.membership(bob.id, "nope").await, Entity::Project);

    store
        .add_member(p1.id, bob.id, Role::Owner, at(4))
        .await
        .unwrap();
    assert_eq!(
        store.membership(bob.id, "p1").await.unwrap().role,
        Role::Owner
    );
    assert_eq!(
        store.members(p1.id).await.unwrap().len(),
        2,
        "one role each"
    );
    assert!(store.remove_member(p1.id, bob.id).await.unwrap());
    assert!(!store.remove_member(p1.id, bob.id).await.unwrap());
    assert_not_found(store.membership(bob.id, "p1").await, Entity::Project);
    assert!(store.memberships(bob.id).await.unwrap().is_empty());

    let missing_project = store
        .add_member(
            crate::types::ProjectId(i64::MAX),
            ada.id,
            Role::Member,
            at(5),
        )
        .await;
    assert_not_found(missing_project, Entity::Project);
    let missing_user = store
        .add_member(p1.id, UserId(i64::MAX), Role::Member, at(5))
        .await;
    assert_not_found(missing_user, Entity::User);
}

/// A project keeps an owner: its last owner can be neither removed nor demoted, and nothing
/// changes; with a second owner, either may go.
pub async fn the_last_owner_stays<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p1 = project(&store, "p1").await;
    let ada = user(&store, "ada@example.com").await;
    let bob = user(&store, "bob@example.com").await;
    let roles = |store: B::Store| async move {
        let members = store.members(p1.id).await.unwrap();
        members
            .into_iter()
            .map(|m| (m.user.id, m.role))
            .collect::<Vec<_>>()
    };
    store
        .add_member(p1.id, ada.id, Role::Owner, at(1))
        .await
        .unwrap();
    store
        .add_member(p1.id, bob.id, Role::Member, at(2))
        .await
        .unwrap();
    let last_owner = |result: Result<_, StoreError>| {
        assert!(
            matches!(result, Err(StoreError::Conflict(Conflict::LastOwner))),
            "{result:?}"
        );
    };
    last_owner(store.add_member(p1.id, ada.id, Role::Member, at(3)).await);
    last_owner(store.remove_member(p1.id, ada.id).await.map(|_| ()));
    assert_eq!(
        roles(store.clone()).await,
        [(ada.id, Role::Owner), (bob.id, Role::Member)],
        "nothing changed"
    );
    // Members come and go; an owner stays an owner.
    assert!(store.remove_member(p1.id, bob.id).await.unwrap());
    store
        .add_member(p1.id, ada.id, Role::Owner, at(4))
        .await
        .unwrap();

    store
        .add_member(p1.id, bob.id, Role::Owner, at(5))
        .await
        .unwrap();
    store
        .add_member(p1.id, ada.id, Role::Member, at(6))
        .await
        .unwrap();
    last_owner(store.remove_member(p1.id, bob.id).await.map(|_| ()));
    assert!(store.remove_member(p1.id, ada.id).await.unwrap());
    assert_eq!(roles(store.clone()).await, [(bob.id, Role::Owner)]);
}

/// Sessions end after 12 hours without use and 30 days after sign-in, however used; ending
/// a user's sessions ends all of them and no one else's.
pub async fn sessions_expire_when_idle_or_old<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let ada = user(&store, "ada@example.com").await;
    let idle = session(&store, ada.id, 0).await;
    let (found, session_) = store.session(&idle, at(11 * 60)).await.unwrap();
    assert_eq!((found.id, session_.user_id), (ada.id, ada.id));
    store.touch_session(&idle, at(11 * 60)).await.unwrap();
    assert!(
        live(&store, &idle, 22 * 60).await,
        "touched, so idle from 11h"
    );
    assert!(!live(&store, &idle, 23 * 60).await, "12 hours without use");

    let busy = session(&store, ada.id, 0).await;
    let lifetime = session_lifetime().num_minutes();
    let mut minute = 0;
    while minute + 11 * 60 < lifetime {
        minute += 11 * 60;
        store.touch_session(&busy, at(minute)).await.unwrap();
    }
    assert!(live(&store, &busy, lifetime - 1).await);
    assert!(!live(&store, &busy, lifetime).await, "30 days at most");

    let bob = user(&store, "bob@example.com").await;
    let (laptop, phone) = (
        session(&store, ada.id, 0).await,
        session(&store, ada.id, 0).await,
    );
    let bobs = session(&store, bob.id, 0).await;
    store.end_sessions(ada.id).await.unwrap();
    assert!(!live(&store, &laptop, 1).await && !live(&store, &phone, 1).await);
    assert!(live(&store, &bobs, 1).await, "only her sessions end");
    store.end_sessions(ada.id).await.unwrap();
    assert!(!live(&store, &SessionToken::generate().hash(), 1).await);
}

/// A new password ends every session of its user and no one else's.
pub async fn a_password_change_ends_every_session<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let ada = user(&store, "ada@example.com").await;
    let bob = user(&store, "bob@example.com").await;
    let (first, second) = (
        session(&store, ada.id, 0).await,
        session(&store, ada.id, 1).await,
    );
    let bobs = session(&store, bob.id, 1).await;
    let new = Password::new("a brand new password").unwrap().hash();
    store.set_password(ada.id, &new).await.unwrap();
    assert!(!live(&store, &first, 2).await && !live(&store, &second, 2).await);
    assert!(live(&store, &bobs, 2).await);
    let stored = store.password_hash(ada.id).await.unwrap();
    assert!(stored.verify("a brand new password") && !stored.verify("testkit password"));
    assert_not_found(
        store.set_password(UserId(i64::MAX), &new).await,
        Entity::User,
    );
}

/// A disabled user has no live session, and enabling them does not revive one.
pub async fn disabled_users_have_no_sessions<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let ada = user(&store, "ada@example.com").await;
    let before = session(&store, ada.id, 0).await;
    let disabled = store.set_user_disabled(ada.id, true).await.unwrap();
    assert!(disabled.disabled);
    assert!(
        store
            .user_by_email("ada@example.com")
            .await
            .unwrap()
            .disabled
    );
    assert!(!live(&store, &before, 1).await);
    let during = session(&store, ada.id, 1).await;
    assert!(
        !live(&store, &during, 2).await,
        "no session of a disabled user is live"
    );
    let enabled = store.set_user_disabled(ada.id, false).await.unwrap();
    assert!(!enabled.disabled);
    assert!(!live(&store, &before, 3).await, "ended sessions stay ended");
    let after = session(&store, ada.id, 3).await;
    assert!(live(&store, &after, 4).await);
}

/// Each user's dashboard preferences are kept as given, apart from anyone else's, and a
/// user has none until they choose.
pub async fn preferences_are_kept_per_user<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let ada = user(&store, "ada@example.com").await;
    let grace = user(&store, "grace@example.com").await;
    assert_eq!(ada.preferences, Preferences::default());
    let chosen = Preferences {
        inbox_columns: Some(vec!["name".to_owned(), "price".to_owned()]),
        theme: Some(Theme::Dark),
    };
    store.set_preferences(ada.id, &chosen).await.unwrap();
    let read = |email: &'static str| store.user_by_email(email);
    assert_eq!(read("ada@example.com").await.unwrap().preferences, chosen);
    assert_eq!(
        read("grace@example.com").await.unwrap().preferences,
        Preferences::default()
    );
    let light = Preferences {
        theme: Some(Theme::Light),
        ..Preferences::default()
    };
    store.set_preferences(ada.id, &light).await.unwrap();
    assert_eq!(read("ada@example.com").await.unwrap().preferences, light);
    let nobody = store
        .set_preferences(UserId(grace.id.0 + 100), &light)
        .await;
    assert_not_found(nobody, Entity::User);
}

/// Saved views: each user sees their own and the team's, by name; a name saved again in
/// the same place replaces that view; another project's are not seen; deleting one leaves
/// the rest.
pub async fn saved_views_are_a_users_own_and_the_teams<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let acme = project(&store, "acme").await;
    let other = project(&store, "other").await;
    let ada = user(&store, "ada@example.com").await;
    let grace = user(&store, "grace@example.com").await;
    let new = |name: &str, query: &str, shared: bool| {
        let columns = shared.then(|| vec!["name".to_owned(), "source".to_owned()]);
        NewSavedView::new(name, query, columns, shared).unwrap()
    };
    let save = |project, owner, view: NewSavedView, minute| {
        let store = store.clone();
        async move {
            store
                .save_view(project, owner, &view, at(minute))
                .await
                .unwrap()
        }
    };
    let mine = save(
        acme.id,
        ada.id,
        new("Zeta", "tab=open&source=bing", false),
        0,
    )
    .await;
    save(acme.id, ada.id, new("Alpha", "tab=lost", false), 1).await;
    let team = save(acme.id, ada.id, new("Google", "source=google", true), 2).await;
    save(acme.id, grace.id, new("Zeta", "tab=rated", false), 3).await;
    save(other.id, ada.id, new("Elsewhere", "", true), 4).await;
    assert_eq!(
        (mine.owner, mine.shared, mine.columns.clone()),
        (ada.id, false, None)
    );
    assert_eq!(team.columns, Some(vec!["name".into(), "source".into()]));
    let names = |project, user| {
        let store = store.clone();
        async move {
            let views = store.saved_views(project, user).await.unwrap();
            views
                .into_iter()
                .map(|view| (view.name, view.query, view.shared))
                .collect::<Vec<_>>()
        }
    };
    let shared = ("Google".to_owned(), "source=google".to_owned(), true);
    assert_eq!(
        names(acme.id, ada.id).await,
        [
            ("Alpha".to_owned(), "tab=lost".to_owned(), false),
            ("Zeta".to_owned(), "tab=open&source=bing".to_owned(), false),
            shared.clone(),
        ]
    );
    assert_eq!(
        names(acme.id, grace.id).await,
        [("Zeta".to_owned(), "tab=rated".to_owned(), false), shared]
    );
    // The team's view saved again, by someone else: replaced, theirs now.
    let again = save(
        acme.id,
        grace.id,
        new("Google", "source=google&tab=rated", true),
        5,
    )
    .await;
    assert_eq!((again.id, again.owner), (team.id, grace.id));
    let views = store.saved_views(acme.id, ada.id).await.unwrap();
    assert_eq!(views.len(), 3);
    assert_eq!(views[2].query, "source=google&tab=rated");
    assert_eq!(views[2].saved_at, at(5));
    assert!(
        !store.delete_view(other.id, mine.id).await.unwrap(),
        "another project's id"
    );
    assert!(store.delete_view(acme.id, mine.id).await.unwrap());
    assert!(!store.delete_view(acme.id, mine.id).await.unwrap());
    assert_eq!(names(acme.id, ada.id).await.len(), 2);
}

/// Failed sign-ins are counted per email (in any case) and per address, within the time
/// asked for, oldest first.
pub async fn failed_sign_ins_are_counted_per_email_and_address<B: Backend>(backend: &B) {
    let store = backend.open().await;
    for (email, address, minute) in [
        ("ada@example.com", "192.0.2.1", 0),
        ("ADA@example.com ", "192.0.2.2", 5),
        ("bob@example.com", "192.0.2.1", 6),
        ("ada@example.com", "192.0.2.3", 20),
    ] {
        store
            .record_throttled(Throttled::FailedSignIn, email, address, at(minute))
            .await
            .unwrap();
    }
    let failures = store
        .throttled_attempts(
            Throttled::FailedSignIn,
            "Ada@Example.com",
            "192.0.2.1",
            at(1),
        )
        .await
        .unwrap();
    assert_eq!(failures.by_email, [at(5), at(20)]);
    assert_eq!(failures.by_address, [at(6)]);
    let all = store
        .throttled_attempts(
            Throttled::FailedSignIn,
            "ada@example.com",
            "192.0.2.1",
            at(0) - Duration::minutes(1),
        )
        .await
        .unwrap();
    assert_eq!(all.by_email, [at(0), at(5), at(20)]);
    assert_eq!(all.by_address, [at(0), at(6)]);
    let none = store
        .throttled_attempts(
            Throttled::FailedSignIn,
            "carol@example.com",
            "198.51.100.1",
            at(0),
        )
        .await
        .unwrap();
    assert!(none.by_email.is_empty() && none.by_address.is_empty());
    // Reset requests are counted apart from failed sign-ins.
    store
        .record_throttled(
            Throttled::ResetRequest,
            "ada@example.com",
            "192.0.2.1",
            at(30),
        )
        .await
        .unwrap();
    let resets = store
        .throttled_attempts(
            Throttled::ResetRequest,
            "ada@example.com",
            "192.0.2.1",
            at(0),
        )
        .await
        .unwrap();
    assert_eq!(
        (resets.by_email, resets.by_address),
        (vec![at(30)], vec![at(30)])
    );
    let failures = store
        .throttled_attempts(
            Throttled::FailedSignIn,
            "ada@example.com",
            "192.0.2.1",
            at(21),
        )
        .await
        .unwrap();
    assert!(failures.by_email.is_empty() && failures.by_address.is_empty());
}
