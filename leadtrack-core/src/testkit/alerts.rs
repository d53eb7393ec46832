//! Alerts: queued with the change that makes each due (a new lead that is not spam, a lead
//! freed from spam, a lead assigned to someone else, a conversion that failed for good),
//! taken once each; members' preferences; chat channels.

use futures_util::future::join_all;
use serde_json::json;

use super::{
    Backend, at, by, connected_project, create, data, project, settle_all, update, webhook_label,
};
use crate::account::{Actor, NewUser, Password};
use crate::alert::{AlertKind, AlertPreferences, ChatKind, NewLeads};
use crate::assignment::RoundRobin;
use crate::request::CreateRoute;
use crate::spam::SpamReason;
use crate::store::{Accounts, Admin, Entity, JobQueue, LeadStore, StoreError};
use crate::types::{AttemptOutcome, ConversionId, LeadId, Role};

/// Every alert queued now, as `(lead, kind)`, taken from the queue.
async fn taken<S: JobQueue>(store: &S) -> Vec<(LeadId, AlertKind)> {
    let taken = store.take_alerts(100).await.unwrap();
    taken.into_iter().map(|a| (a.lead, a.kind)).collect()
}

/// What is queued, and when: new leads but spam, freed spam, assignments to others, and
/// failed conversions; each alert is taken once.
pub async fn alerts_are_queued_with_what_makes_them_due<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p = connected_project(&store).await;
    let new = NewUser::new(
        "ada@x.io",
        Some("Ada"),
        &Password::new("testkit password").unwrap(),
    );
    let ada = store.create_user(new.unwrap(), at(0)).await.unwrap();
    store
        .add_member(p.id, ada.id, Role::Member, at(0))
        .await
        .unwrap();
    let lead = create(&store, &p, json!({"userData": {"email": "a@x.io"}}), 1)
        .await
        .lead_id;
    let spam = store
        .create_screened_lead(
            p.id,
            CreateRoute::Browser,
            data(json!({"userData": {"email": "s@x.io"}})),
            Some(SpamReason::TooFast),
            at(1),
        )
        .await
        .unwrap()
        .lead_id;
    assert_eq!(taken(&store).await, [(lead, AlertKind::NewLead)]);
    assert_eq!(taken(&store).await, [], "taken once");

    let open = update(spam, ConversionId::Open);
    store
        .update_status(p.id, &open, &by(), at(2))
        .await
        .unwrap();
    let assigned = AlertKind::Assigned { user: ada.id };
    store
        .assign(p.id, &[lead], Some(ada.id), &by(), at(3))
        .await
        .unwrap();
    // Taking one's own lead alerts nobody.
    let herself = Actor::User {
        id: ada.id,
        name: "Ada".into(),
    };
    store
        .assign(p.id, &[spam], Some(ada.id), &herself, at(3))
        .await
        .unwrap();
    assert_eq!(
        taken(&store).await,
        [(spam, AlertKind::NewLead), (lead, assigned)]
    );

    let label = webhook_label(&store, &p).await;
    let rated = update(lead, ConversionId::Label(label));
    store
        .update_status(p.id, &rated, &by(), at(4))
        .await
        .unwrap();
    settle_all(&store, 10, AttemptOutcome::Failed).await;
    assert_eq!(taken(&store).await, [(lead, AlertKind::Failed)]);

    // The rule's turn alerts its member; leads arriving together are each taken once.
    let rule = RoundRobin::new([], &[ada.id]);
    store.set_round_robin(p.id, Some(&rule)).await.unwrap();
    let turned = create(&store, &p, json!({"userData": {"email": "t@x.io"}}), 11)
        .await
        .lead_id;
    assert_eq!(
        taken(&store).await,
        [(turned, AlertKind::NewLead), (turned, assigned)]
    );
    for minute in 12..20 {
        create(&store, &p, json!({"userData": {"firstName": "x"}}), minute).await;
    }
    let takes = (0..4).map(|_| store.take_alerts(3));
    let mut ids: Vec<i64> = join_all(takes)
        .await
        .into_iter()
        .flat_map(|taken| taken.unwrap())
        .map(|alert| alert.id)
        .collect();
    ids.sort_unstable();
    ids.dedup();
    // 8 new leads and 8 turns: 16 alerts, of which 4 takes of 3 took 12, none twice.
    assert_eq!(ids.len(), 12, "{ids:?}");
    assert_eq!(store.take_alerts(100).await.unwrap().len(), 4);
}

/// A member's alerts are theirs in each project; chat channels are the project's.
pub async fn alert_preferences_and_chat_channels_are_kept<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p = project(&store, "p1").await;
    let other = project(&store, "p2").await;
    let new = NewUser::new(
        "ada@x.io",
        Some("Ada"),
        &Password::new("testkit password").unwrap(),
    );
    let ada = store.create_user(new.unwrap(), at(0)).await.unwrap();
    for project in [&p, &other] {
        store
            .add_member(project.id, ada.id, Role::Owner, at(0))
            .await
            .unwrap();
    }
    let members = store.members(p.id).await.unwrap();
    assert_eq!(members[0].alerts, AlertPreferences::default());
    let hourly = AlertPreferences {
        new_leads: NewLeads::Hourly,
        assigned: false,
        failures: true,
        next_steps: false,
        digest_until: Some(at(60)),
    };
    store.set_alerts(p.id, ada.id, &hourly).await.unwrap();
    assert_eq!(store.members(p.id).await.unwrap()[0].alerts, hourly);
    let memberships = store.memberships(ada.id).await.unwrap();
    let alerts: Vec<_> = memberships.iter().map(|m| m.alerts.clone()).collect();
    assert_eq!(alerts, [hourly, AlertPreferences::default()]);
    let defaults = AlertPreferences::default();
    let stranger = store
        .set_alerts(p.id, crate::types::UserId(i64::MAX), &defaults)
        .await;
    assert!(matches!(stranger, Err(StoreError::NotFound(Entity::User))));

    let slack = "https://hooks.slack.com/services/T0/B0/secret";
    store
        .set_chat_channel(p.id, ChatKind::Slack, Some(slack))
        .await
        .unwrap();
    let local = "http://127.0.0.1:9/chat";
    store
        .set_chat_channel(p.id, ChatKind::GoogleChat, Some(local))
        .await
        .unwrap();
    let bad = store
        .set_chat_channel(p.id, ChatKind::Teams, Some("ftp://teams.example/hook"))
        .await;
    assert!(matches!(bad, Err(StoreError::Invalid(_))), "{bad:?}");
    let channels = store.chat_channels(p.id).await.unwrap();
    let kinds: Vec<_> = channels.iter().map(|c| (c.kind, c.url.as_str())).collect();
    assert_eq!(
        kinds,
        [(ChatKind::Slack, slack), (ChatKind::GoogleChat, local)]
    );
    assert_eq!(store.chat_channels(other.id).await.unwrap(), []);
    store
        .set_chat_channel(p.id, ChatKind::Slack, None)
        .await
        .unwrap();
    assert_eq!(store.chat_channels(p.id).await.unwrap().len(), 1);
}
