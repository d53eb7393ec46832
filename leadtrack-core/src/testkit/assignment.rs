//! Assignment: leads given to members by a person (one or many at once, recorded in each
//! lead's history, listed by assignee) and by a project's round-robin rule, which takes
//! turns among the members who may take leads, skipping disabled users, spam and other
//! forms, one turn per lead however many arrive together.

use futures_util::future::join_all;
use serde_json::json;

use super::{Backend, assert_not_found, at, by, create, lead_by_id, project, update};
use crate::account::{NewUser, Password, User};
use crate::activity::Activity;
use crate::assignment::{Assignee, RoundRobin};
use crate::project::Project;
use crate::request::CreateRoute;
use crate::request::query::{AssigneeFilter, LeadQuery};
use crate::spam::SpamReason;
use crate::store::{Accounts, Admin, Entity, LeadStore, Store};
use crate::types::{ConversionId, LeadId, LeadStatus, Role, UserId};

/// A member of `project` named `name`, with `role`.
pub(crate) async fn member<S: Store>(store: &S, project: &Project, name: &str, role: Role) -> User {
    let user = store
        .create_user(
            NewUser {
                email: format!("{}@example.com", name.to_lowercase()),
                name: name.to_owned(),
                password_hash: Password::new("testkit password").unwrap().hash(),
            },
            at(0),
        )
        .await
        .expect("create user");
    store
        .add_member(project.id, user.id, role, at(0))
        .await
        .expect("add member");
    user
}

fn assignee(user: &User) -> Option<Assignee> {
    Some(Assignee {
        id: user.id,
        name: user.name.clone(),
    })
}

/// The assignees of `leads`, in order.
async fn assignees<S: LeadStore>(store: &S, p: &Project, leads: &[LeadId]) -> Vec<Option<UserId>> {
    let mut found = Vec::new();
    for lead in leads {
        found.push(lead_by_id(store, p, *lead).await.assignee.map(|a| a.id));
    }
    found
}

/// A lead of `form` created at `minute`.
async fn lead_of<S: LeadStore>(store: &S, p: &Project, form: &str, minute: i64) -> LeadId {
    let body = json!({"userData": {"firstName": "Lead"}, "formData": {"formName": form}});
    create(store, p, body, minute).await.lead_id
}

/// People assign leads, one or many; the history says who did, and listings filter by it.
pub async fn leads_are_assigned_listed_and_recorded<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p = project(&store, "p1").await;
    let other = project(&store, "p2").await;
    let ada = member(&store, &p, "Ada", Role::Member).await;
    let vic = member(&store, &p, "Vic", Role::Viewer).await;
    let leads = [
        lead_of(&store, &p, "Contact", 0).await,
        lead_of(&store, &p, "Contact", 1).await,
        lead_of(&store, &p, "Contact", 2).await,
    ];
    let foreign = lead_of(&store, &other, "Contact", 3).await;

    let both = [leads[1], leads[0], leads[1]];
    let actor = by();
    let changed = store.assign(p.id, &both, Some(ada.id), &actor, at(4)).await;
    assert_eq!(changed.unwrap(), [leads[0], leads[1]]);
    let again = store.assign(p.id, &both, Some(ada.id), &actor, at(5)).await;
    assert_eq!(again.unwrap(), [], "nothing changes twice");
    let found = lead_by_id(&store, &p, leads[0]).await;
    assert_eq!(found.assignee, assignee(&ada));

    // A viewer takes no leads, nor does a stranger; another project's lead is not found,
    // and nothing of the request is done.
    for stranger in [vic.id, UserId(i64::MAX)] {
        let refused = store
            .assign(p.id, &[leads[2]], Some(stranger), &by(), at(6))
            .await;
        assert_not_found(refused, Entity::User);
    }
    for to in [None, Some(ada.id)] {
        let mixed = store
            .assign(p.id, &[leads[2], foreign], to, &by(), at(6))
            .await;
        assert_not_found(mixed, Entity::Lead);
    }
    let now = assignees(&store, &p, &leads).await;
    assert_eq!(now, [Some(ada.id), Some(ada.id), None]);
    assert_eq!(lead_by_id(&store, &other, foreign).await.assignee, None);

    let mine = LeadQuery {
        assignee: Some(AssigneeFilter::User(ada.id)),
        ..LeadQuery::default()
    };
    let listed = store.list_leads(p.id, &mine).await.unwrap();
    let mut ids: Vec<LeadId> = listed.leads.iter().map(|lead| lead.id).collect();
    ids.sort_unstable();
    assert_eq!((ids, listed.total), (vec![leads[0], leads[1]], 2));
    let counts = store.status_counts(p.id, &mine).await.unwrap();
    assert!(counts.contains(&(LeadStatus::Open, 2)), "{counts:?}");
    let nobodys = LeadQuery {
        assignee: Some(AssigneeFilter::Nobody),
        ..LeadQuery::default()
    };
    let listed = store.list_leads(p.id, &nobodys).await.unwrap();
    assert_eq!(
        listed.leads.iter().map(|l| l.id).collect::<Vec<_>>(),
        [leads[2]]
    );

    let changed = store.assign(p.id, &[leads[0]], None, &actor, at(7)).await;
    assert_eq!(changed.unwrap(), [leads[0]]);
    assert_eq!(lead_by_id(&store, &p, leads[0]).await.assignee, None);
    let history = store.lead_activity(p.id, leads[0]).await.unwrap();
    let assigned: Vec<_> = history
        .iter()
        .filter(|event| matches!(event.activity, Activity::Assigned { .. }))
        .map(|event| (event.at, event.by.clone(), event.activity.clone()))
        .collect();
    assert_eq!(
        assigned,
        [
            (
                at(4),
                Some(by()),
                Activity::Assigned {
                    assignee: assignee(&ada)
                }
            ),
            (at(7), Some(by()), Activity::Assigned { assignee: None }),
        ]
    );
}

/// Round-robin over three members: in turn, skipping a disabled one and a viewer, only the
/// rule's forms, never spam until a person frees it, and a rule's change keeps the turn.
pub async fn round_robin_takes_turns_skipping_disabled_users<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p = project(&store, "p1").await;
    let ada = member(&store, &p, "Ada", Role::Member).await;
    let bea = member(&store, &p, "Bea", Role::Owner).await;
    let cy = member(&store, &p, "Cy", Role::Member).await;
    let vic = member(&store, &p, "Vic", Role::Viewer).await;
    assert_eq!(store.round_robin(p.id).await.unwrap(), None);
    let rule = RoundRobin::new(["contact", "Demo"], &[ada.id, vic.id, bea.id, cy.id]);
    store.set_round_robin(p.id, Some(&rule)).await.unwrap();
    assert_eq!(store.round_robin(p.id).await.unwrap(), Some(rule.clone()));

    let mut leads = Vec::new();
    for minute in 0..3 {
        leads.push(lead_of(&store, &p, "Contact", minute).await);
    }
    let turns = assignees(&store, &p, &leads).await;
    assert_eq!(turns, [Some(ada.id), Some(bea.id), Some(cy.id)]);
    let history = store.lead_activity(p.id, leads[0]).await.unwrap();
    let event = history
        .iter()
        .find(|event| matches!(event.activity, Activity::Assigned { .. }))
        .expect("an assigned event");
    assert_eq!(event.by, None, "the rule assigned it");

    store.set_user_disabled(bea.id, true).await.unwrap();
    let newsletter = lead_of(&store, &p, "Newsletter", 3).await;
    let spam = store
        .create_screened_lead(
            p.id,
            CreateRoute::Browser,
            super::data(json!({"userData": {"email": "s@x.io"}, "formData": {"formName": "Demo"}})),
            Some(SpamReason::TooFast),
            at(3),
        )
        .await
        .unwrap()
        .lead_id;
    let later = [
        lead_of(&store, &p, "DEMO", 4).await,
        lead_of(&store, &p, "contact", 5).await,
    ];
    assert_eq!(
        assignees(&store, &p, &[newsletter, spam]).await,
        [None, None]
    );
    assert_eq!(
        assignees(&store, &p, &later).await,
        [Some(ada.id), Some(cy.id)]
    );
    // Freed from spam, the lead takes the next turn.
    let open = update(spam, ConversionId::Open);
    store
        .update_status(p.id, &open, &by(), at(6))
        .await
        .unwrap();
    assert_eq!(assignees(&store, &p, &[spam]).await, [Some(ada.id)]);

    // A changed rule keeps its place; without one, leads stay unassigned.
    let rule = RoundRobin::new([], &[ada.id, cy.id]);
    store.set_round_robin(p.id, Some(&rule)).await.unwrap();
    let next = lead_of(&store, &p, "Newsletter", 7).await;
    assert_eq!(assignees(&store, &p, &[next]).await, [Some(cy.id)]);
    store.set_round_robin(p.id, None).await.unwrap();
    assert_eq!(store.round_robin(p.id).await.unwrap(), None);
    let last = lead_of(&store, &p, "Contact", 8).await;
    assert_eq!(assignees(&store, &p, &[last]).await, [None]);
}

/// Leads arriving together each take one turn: twelve concurrent leads over three members
/// give each of them four.
pub async fn concurrent_leads_take_one_turn_each<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p = project(&store, "p1").await;
    let mut team = Vec::new();
    for name in ["Ada", "Bea", "Cy"] {
        team.push(member(&store, &p, name, Role::Member).await.id);
    }
    let rule = RoundRobin::new([], &team);
    store.set_round_robin(p.id, Some(&rule)).await.unwrap();
    let creates = (0..12).map(|i| {
        let body = json!({"userData": {"email": format!("lead{i}@x.io")}});
        store.create_lead(p.id, super::data(body), at(i))
    });
    let created: Vec<LeadId> = join_all(creates)
        .await
        .into_iter()
        .map(|created| created.expect("create").lead_id)
        .collect();
    let turns = assignees(&store, &p, &created).await;
    for member in &team {
        let taken = turns.iter().filter(|turn| **turn == Some(*member)).count();
        assert_eq!(taken, 4, "{turns:?}");
    }
}
