//! Next steps: set, changed and done by people, recorded in the lead's history, listed when
//! due (soonest first, by assignee), counted among open leads, gone with a deleted lead, and
//! taken for a reminder once per time they are set, even by workers taking them together.

use futures_util::future::join_all;
use serde_json::json;

use super::assignment::member;
use super::{Backend, assert_not_found, at, attributed, by, create, project, update};
use crate::account::Actor;
use crate::activity::Activity;
use crate::next_step::{Coverage, DueStep, NextStep, Reminder};
use crate::store::{Entity, JobQueue, LeadStore};
use crate::types::{ConversionId, LeadId, ProjectId, Role};

fn step(minute: i64, note: &str) -> NextStep {
    NextStep::new(at(minute), note).unwrap()
}

async fn lead<S: LeadStore>(store: &S, project: &crate::project::Project, minute: i64) -> LeadId {
    let body = json!({"userData": {"email": format!("lead{minute}@example.com")}});
    create(store, project, body, minute).await.lead_id
}

/// The activities of the lead's history that are about its next step.
async fn step_history<S: LeadStore>(store: &S, project: ProjectId, lead: LeadId) -> Vec<Activity> {
    let events = store.lead_activity(project, lead).await.unwrap();
    events
        .into_iter()
        .map(|event| event.activity)
        .filter(|activity| matches!(activity, Activity::NextStep { .. } | Activity::NextStepDone))
        .collect()
}

/// A step is set, replaced and done; the Due list holds what is due, soonest first, and
/// Mine what is one's own; the open leads' coverage follows.
pub async fn next_steps_are_set_listed_and_done<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p = project(&store, "p1").await;
    let other = project(&store, "p2").await;
    let ada = member(&store, &p, "Ada", Role::Member).await;
    let actor = Actor::User {
        id: ada.id,
        name: ada.name.clone(),
    };
    let (a, b) = (lead(&store, &p, 0).await, lead(&store, &p, 1).await);
    let foreign = lead(&store, &other, 2).await;

    let call = step(100, "Call back about pricing");
    store
        .set_next_step(p.id, a, Some(&step(90, "Call")), &actor, at(3))
        .await
        .unwrap();
    store
        .set_next_step(p.id, a, Some(&call), &actor, at(4))
        .await
        .unwrap();
    store
        .set_next_step(p.id, b, Some(&step(50, "")), &by(), at(5))
        .await
        .unwrap();
    assert_not_found(
        store
            .set_next_step(p.id, foreign, Some(&call), &actor, at(5))
            .await,
        Entity::Lead,
    );
    assert_not_found(
        store
            .set_next_step(p.id, LeadId(i64::MAX), None, &actor, at(5))
            .await,
        Entity::Lead,
    );
    let mut steps = store.next_steps(p.id, &[a, b, foreign]).await.unwrap();
    steps.sort_by_key(|(lead, _)| *lead);
    assert_eq!(steps, [(a, call.clone()), (b, step(50, ""))]);
    assert!(store.next_steps(other.id, &[a]).await.unwrap().is_empty());

    // Due before minute 60: b alone; before 200: both, soonest first.
    let due = store.due_steps(p.id, at(60), None).await.unwrap();
    assert_eq!(due.iter().map(|d| d.lead).collect::<Vec<_>>(), [b]);
    let due = store.due_steps(p.id, at(200), None).await.unwrap();
    assert_eq!(due.iter().map(|d| d.lead).collect::<Vec<_>>(), [b, a]);
    // Mine: the leads assigned to Ada.
    store
        .assign(p.id, &[a], Some(ada.id), &by(), at(6))
        .await
        .unwrap();
    let mine = store.due_steps(p.id, at(200), Some(ada.id)).await.unwrap();
    let expected = DueStep {
        lead: a,
        step: call.clone(),
        assignee: Some(ada.id),
    };
    assert_eq!(mine, [expected]);
    assert!(
        store
            .due_steps(other.id, at(200), None)
            .await
            .unwrap()
            .is_empty()
    );

    // Two open leads, both planned; a lost one is no longer open.
    let coverage = Coverage {
        open: 2,
        planned: 2,
    };
    assert_eq!(store.next_step_coverage(p.id).await.unwrap(), coverage);
    let lost = update(b, ConversionId::Lost);
    store
        .update_status(p.id, &lost, &by(), at(7))
        .await
        .unwrap();
    let coverage = Coverage {
        open: 1,
        planned: 1,
    };
    assert_eq!(store.next_step_coverage(p.id).await.unwrap(), coverage);

    // Done: the step is gone; done again changes nothing.
    store
        .set_next_step(p.id, a, None, &actor, at(8))
        .await
        .unwrap();
    store
        .set_next_step(p.id, a, None, &actor, at(9))
        .await
        .unwrap();
    assert!(store.next_steps(p.id, &[a]).await.unwrap().is_empty());
    let coverage = Coverage {
        open: 1,
        planned: 0,
    };
    assert_eq!(store.next_step_coverage(p.id).await.unwrap(), coverage);
    let history = step_history(&store, p.id, a).await;
    let set = |step: &NextStep| Activity::NextStep {
        due_at: step.at,
        note: step.note.clone(),
    };
    assert_eq!(
        history,
        [set(&step(90, "Call")), set(&call), Activity::NextStepDone]
    );
    let events = store.lead_activity(p.id, a).await.unwrap();
    let done = events.last().unwrap();
    assert_eq!((done.at, done.by.clone()), (at(8), Some(actor)));

    // A deleted lead takes its step with it.
    store
        .set_next_step(p.id, a, Some(&call), &by(), at(10))
        .await
        .unwrap();
    store
        .delete_lead(p.id, a, &attributed(), at(11))
        .await
        .unwrap();
    assert!(store.next_steps(p.id, &[a]).await.unwrap().is_empty());
    let due = store.due_steps(p.id, at(200), None).await.unwrap();
    assert_eq!(due.iter().map(|d| d.lead).collect::<Vec<_>>(), [b]);
    let reminders = store.take_reminders(at(200), 10).await.unwrap();
    assert_eq!(reminders.iter().map(|r| r.lead).collect::<Vec<_>>(), [b]);
}

/// A step that falls due is taken for its reminder once, across projects, soonest first;
/// set again, it is reminded of again. Workers taking at once share the reminders out.
pub async fn a_due_step_is_reminded_of_once<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p = project(&store, "p1").await;
    let other = project(&store, "p2").await;
    let ada = member(&store, &p, "Ada", Role::Member).await;
    let grace = member(&store, &p, "Grace", Role::Member).await;
    let as_ada = Actor::User {
        id: ada.id,
        name: ada.name.clone(),
    };
    let (a, b) = (lead(&store, &p, 0).await, lead(&store, &p, 1).await);
    let c = lead(&store, &other, 2).await;
    store
        .assign(p.id, &[a], Some(grace.id), &by(), at(3))
        .await
        .unwrap();
    let steps = [
        (p.id, a, step(10, "Demo")),
        (p.id, b, step(20, "")),
        (other.id, c, step(5, "")),
    ];
    for (project, lead, step) in &steps {
        let actor = if *lead == b { by() } else { as_ada.clone() };
        store
            .set_next_step(*project, *lead, Some(step), &actor, at(4))
            .await
            .unwrap();
    }

    assert!(store.take_reminders(at(4), 10).await.unwrap().is_empty());
    let taken = store.take_reminders(at(15), 10).await.unwrap();
    let expected = [
        Reminder {
            project: other.id,
            lead: c,
            step: step(5, ""),
            assignee: None,
            set_by: Some(ada.id),
        },
        Reminder {
            project: p.id,
            lead: a,
            step: step(10, "Demo"),
            assignee: Some(grace.id),
            set_by: Some(ada.id),
        },
    ];
    assert_eq!(taken, expected);
    assert!(store.take_reminders(at(15), 10).await.unwrap().is_empty());
    let taken = store.take_reminders(at(30), 10).await.unwrap();
    assert_eq!(
        taken.iter().map(|r| (r.lead, r.set_by)).collect::<Vec<_>>(),
        [(b, None)]
    );
    // Set again (later), it is reminded of again once due.
    let later = step(40, "Second call");
    store
        .set_next_step(p.id, a, Some(&later), &as_ada, at(31))
        .await
        .unwrap();
    assert!(store.take_reminders(at(35), 10).await.unwrap().is_empty());
    assert_eq!(
        store.take_reminders(at(45), 10).await.unwrap()[0].step,
        later
    );

    // Ten due steps, four workers taking three each at once: each taken once.
    let mut leads = Vec::new();
    for minute in 50..60 {
        let lead = lead(&store, &p, minute).await;
        store
            .set_next_step(p.id, lead, Some(&step(minute, "")), &by(), at(minute))
            .await
            .unwrap();
        leads.push(lead);
    }
    let takers = (0..4).map(|_| store.take_reminders(at(100), 3));
    let mut taken: Vec<LeadId> = join_all(takers)
        .await
        .into_iter()
        .flat_map(|taken| taken.unwrap())
        .map(|reminder| reminder.lead)
        .collect();
    taken.sort();
    assert_eq!(taken, leads);
}
