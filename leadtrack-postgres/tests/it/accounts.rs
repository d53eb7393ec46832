//! Accounts under real concurrency: the last-owner rule holds when two owners of a project
//! are demoted or removed at once, each on its own pooled connection (as on two servers).
#![cfg(leadtrack_postgres)]

use leadtrack_core::account::{NewUser, Password, User};
use leadtrack_core::store::{Accounts, Conflict, StoreError, StoreResult};
use leadtrack_core::testkit::{at, project};
use leadtrack_core::types::{ProjectId, Role, UserId};
use leadtrack_postgres::PgStore;

/// How often the race is run: enough for the two transactions to overlap many times.
const ROUNDS: usize = 21;

/// A user with this email.
async fn user(store: &PgStore, email: &str, password: &Password) -> User {
    let new = NewUser::new(email, None, password).expect("a valid user");
    store.create_user(new, at(0)).await.expect("create user")
}

/// What one side of the race does to an owner.
#[derive(Clone, Copy, Debug)]
enum Change {
    /// Makes them a member.
    Demote,
    /// Ends their membership.
    Remove,
}

impl Change {
    /// Applies the change on `store` (a clone, so on a connection of its own).
    async fn apply(self, store: PgStore, project: ProjectId, user: UserId) -> StoreResult<()> {
        match self {
            Self::Demote => store.add_member(project, user, Role::Member, at(2)).await,
            Self::Remove => {
                let removed = store.remove_member(project, user).await?;
                assert!(removed, "an owner was a member");
                Ok(())
            }
        }
    }
}

/// Two owners demoted or removed at once: exactly one change goes through, the other is
/// refused as the last owner's, and the project keeps exactly one owner: the one the
/// refused change was for.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_owners_changed_at_once_leave_one_owner() {
    let (store, _url) = crate::support::fresh_store().await;
    let password = Password::generate();
    let ada = user(&store, "ada@example.com", &password).await;
    let bob = user(&store, "bob@example.com", &password).await;
    // Both sides of the first round find a connection ready in the pool.
    let (warm_a, warm_b) = tokio::join!(store.users(), store.users());
    warm_a.expect("users");
    warm_b.expect("users");

    let pairs = [
        (Change::Demote, Change::Demote),
        (Change::Remove, Change::Remove),
        (Change::Demote, Change::Remove),
        (Change::Remove, Change::Demote),
    ];
    for round in 0..ROUNDS {
        let (ada_change, bob_change) = pairs[round % pairs.len()];
        let p = project(&store, &format!("race-{round}")).await;
        for owner in [ada.id, bob.id] {
            store
                .add_member(p.id, owner, Role::Owner, at(1))
                .await
                .expect("add an owner");
        }

        let (for_ada, for_bob) = tokio::join!(
            ada_change.apply(store.clone(), p.id, ada.id),
            bob_change.apply(store.clone(), p.id, bob.id),
        );

        let context = format!("round {round}: ada {ada_change:?}, bob {bob_change:?}");
        let last_owner = |result: &StoreResult<()>| {
            matches!(result, Err(StoreError::Conflict(Conflict::LastOwner)))
        };
        let (kept, changed, change) = match (&for_ada, &for_bob) {
            (Ok(()), refused) if last_owner(refused) => (bob.id, ada.id, ada_change),
            (refused, Ok(())) if last_owner(refused) => (ada.id, bob.id, bob_change),
            _ => panic!(
                "{context}: exactly one change must go through and the other be refused as the \
                 last owner's; got {for_ada:?} and {for_bob:?}"
            ),
        };

        let members = store.members(p.id).await.expect("members");
        let roles: Vec<_> = members.iter().map(|m| (m.user.id, m.role)).collect();
        let owners: Vec<_> = roles
            .iter()
            .filter(|(_, role)| *role == Role::Owner)
            .map(|(id, _)| *id)
            .collect();
        assert_eq!(owners, [kept], "{context}: one owner stays; {roles:?}");
        let changed_role = roles.iter().find(|(id, _)| *id == changed).map(|m| m.1);
        match change {
            Change::Demote => assert_eq!(changed_role, Some(Role::Member), "{context}"),
            Change::Remove => assert_eq!(changed_role, None, "{context}"),
        }
    }
}
