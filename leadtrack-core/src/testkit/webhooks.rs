//! Lead webhooks: which events each webhook hears of, exactly once per event id, under
//! concurrent workers, with retries and leases; adding and removing webhooks.

use std::collections::BTreeSet;

use chrono::Duration;
use futures_util::future::join_all;
use serde_json::{Value, json};
use uuid::Uuid;

use super::{Backend, at, by, create, label, project, update};
use crate::crm::{CrmOptions, CrmRecord};
use crate::label::LabelMapping;
use crate::project::Project;
use crate::store::{Admin, Conflict, Entity, JobQueue, LeadStore, LeadWebhooks, StoreError};
use crate::types::{AttemptOutcome, ConversionId, LeadId};
use crate::webhook::{
    CRM_EVENTS, ClaimedWebhookEvent, LeadSync, MAX_WEBHOOKS, NewWebhook, Webhook, WebhookAttempt,
    WebhookEvent, WebhookEvents, WebhookKind,
};

pub(crate) async fn add<S: Admin + LeadWebhooks>(
    store: &S,
    project: &Project,
    name: &str,
    events: &str,
) -> Webhook {
    let events = WebhookEvents::parse_list(events).expect("event names");
    let new = NewWebhook::new(
        &format!("https://{name}.example/hook"),
        &crate::target::Targets::default(),
        None,
        events,
    )
    .expect("valid webhook");
    store
        .create_webhook(project.id, new, at(0))
        .await
        .expect("create webhook")
}

fn delivered() -> WebhookAttempt {
    WebhookAttempt {
        at: at(200),
        outcome: AttemptOutcome::Delivered,
        http_status: Some(200),
        error: None,
        retry_at: None,
    }
}

/// Claims and delivers everything due at minute 100, in claim order.
pub(crate) async fn drain<S: JobQueue>(store: &S) -> Vec<ClaimedWebhookEvent> {
    let mut claimed = Vec::new();
    while let Some(event) = store
        .claim_webhook_event(at(100), Duration::minutes(5))
        .await
        .unwrap()
    {
        store
            .record_webhook_attempt(event.id, event.lease.token, &delivered())
            .await
            .unwrap();
        claimed.push(event);
    }
    claimed
}

/// `(webhook, event, lead)` of each claimed event, sorted.
fn received(
    claimed: &[ClaimedWebhookEvent],
    names: &[(&Webhook, &str)],
) -> Vec<(String, WebhookEvent, LeadId)> {
    let name = |id: Uuid| {
        names
            .iter()
            .find(|(hook, _)| hook.id == id)
            .map_or_else(|| "unknown".to_owned(), |(_, name)| (*name).to_owned())
    };
    let mut seen: Vec<_> = claimed
        .iter()
        .map(|event| (name(event.webhook.id), event.event, event.lead_id))
        .collect();
    seen.sort();
    seen
}

/// Each webhook gets the events it subscribes to, from its own project only, with bodies
/// holding the lead as it was; a rating's event comes when a worker first takes its job,
/// with the job's event id and the conversion's, and a rating reset before that has none.
pub async fn webhooks_hear_the_events_they_subscribe_to<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p1 = project(&store, "p1").await;
    let p2 = project(&store, "p2").await;
    let crm = add(&store, &p1, "crm", "lead.created,lead.converted").await;
    let chat = add(&store, &p1, "chat", "lead.created lead.updated lead.lost").await;
    let other = add(
        &store,
        &p2,
        "other",
        "lead.created,lead.updated,lead.converted,lead.lost",
    )
    .await;
    let label_id = label(&store, &p1, true, LabelMapping::default()).await;

    let body = json!({"formData": {"uniqueEventId": "evt-1"}, "userData": {"firstName": "Ada"}});
    let first = create(&store, &p1, body, 1).await;
    let merged =
        json!({"formData": {"uniqueEventId": "evt-1"}, "userData": {"lastName": "Lovelace"}});
    let again = create(&store, &p1, merged, 2).await;
    assert_eq!(again.lead_id, first.lead_id);
    store
        .update_status(
            p1.id,
            &update(first.lead_id, ConversionId::Label(label_id)),
            &by(),
            at(3),
        )
        .await
        .unwrap();
    let none_yet = store
        .queue_depth(at(3))
        .await
        .unwrap()
        .webhook_events
        .queued;
    assert_eq!(
        none_yet, 3,
        "created (twice) and updated: the rating has not left yet"
    );
    store
        .claim_job(at(4), Duration::minutes(5))
        .await
        .unwrap()
        .expect("the rating's job");
    let second = create(&store, &p1, json!({"userData": {"email": "b@x.io"}}), 4).await;
    store
        .update_status(
            p1.id,
            &update(second.lead_id, ConversionId::Lost),
            &by(),
            at(5),
        )
        .await
        .unwrap();
    // Reset before its job left: neither the reset nor the rating is an event.
    store
        .update_status(
            p1.id,
            &update(second.lead_id, ConversionId::Open),
            &by(),
            at(6),
        )
        .await
        .unwrap();

    let claimed = drain(&store).await;
    let (a, b) = (first.lead_id, second.lead_id);
    use WebhookEvent::{LeadConverted, LeadCreated, LeadUpdated};
    let mut expected = vec![
        ("chat".to_owned(), LeadCreated, a),
        ("chat".to_owned(), LeadUpdated, a),
        ("chat".to_owned(), LeadCreated, b),
        ("crm".to_owned(), LeadCreated, a),
        ("crm".to_owned(), LeadConverted, a),
        ("crm".to_owned(), LeadCreated, b),
    ];
    expected.sort();
    let names = [(&crm, "crm"), (&chat, "chat"), (&other, "other")];
    assert_eq!(received(&claimed, &names), expected);

    // One event id per event, shared by the webhooks that hear of it.
    let ids: BTreeSet<Uuid> = claimed.iter().map(|event| event.event_id).collect();
    assert_eq!(ids.len(), 4, "created a, updated a, converted a, created b");
    let jobs = store.lead_jobs(p1.id, a).await.unwrap();
    let converted = claimed
        .iter()
        .find(|event| event.event == LeadConverted)
        .unwrap();
    assert_eq!(converted.event_id, jobs[0].job.event_id);
    assert_eq!(converted.occurred_at, at(4), "when the job left");

    // The bodies: the lead as it was just after each event.
    let body_of = |event: WebhookEvent, hook: &Webhook| -> Value {
        let claimed = claimed
            .iter()
            .find(|c| c.event == event && c.webhook.id == hook.id && c.lead_id == a)
            .unwrap();
        let body: Value = serde_json::from_str(&claimed.body).unwrap();
        assert_eq!(body["type"], json!(event.as_ref()));
        assert_eq!(body["id"], json!(claimed.event_id));
        assert_eq!(body["projectId"], json!("p1"));
        assert_eq!(body["lead"]["id"], json!(a));
        body
    };
    let created = body_of(LeadCreated, &chat);
    assert_eq!(created["lead"]["firstName"], json!("Ada"));
    assert_eq!(created["lead"]["lastName"], Value::Null);
    assert_eq!(created["lead"]["status"], json!("open"));
    assert!(created.get("conversionId").is_none());
    let updated = body_of(LeadUpdated, &chat);
    assert_eq!(updated["lead"]["lastName"], json!("Lovelace"));
    let converted = body_of(LeadConverted, &crm);
    assert_eq!(converted["conversionId"], json!(label_id));
    assert_eq!(converted["label"]["name"], json!("Qualified"));
    assert_eq!(converted["jobId"], json!(jobs[0].job.id));
    assert_eq!(
        converted["conversionEventId"],
        json!(jobs[0].job.conversion_event_id)
    );
    assert_eq!(converted["currency"], json!("EUR"));
    assert_eq!(converted["lead"]["status"], json!("pending"));

    // How each webhook stands.
    let statuses = store.webhooks(p1.id).await.unwrap();
    let counts: Vec<(Uuid, u64, u64, u64)> = statuses
        .iter()
        .map(|s| (s.webhook.id, s.pending, s.delivered, s.failed))
        .collect();
    assert_eq!(counts, [(crm.id, 0, 3, 0), (chat.id, 0, 3, 0)]);
    assert_eq!(statuses[0].last_attempt, Some(delivered()));
    assert_eq!(statuses[0].webhook, crm);
    let elsewhere = store.webhooks(p2.id).await.unwrap();
    assert_eq!(elsewhere.len(), 1);
    assert_eq!((elsewhere[0].pending, elsewhere[0].delivered), (0, 0));
    assert_eq!(elsewhere[0].last_attempt, None);
}

/// Workers claiming at once never get the same delivery twice, and concurrent creates of
/// one event id announce one `lead.created`, the rest `lead.updated`.
pub async fn each_event_reaches_each_webhook_once_under_concurrency<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let hooks = [
        add(&store, &project, "one", "lead.created,lead.updated").await,
        add(&store, &project, "two", "lead.created,lead.updated").await,
        add(&store, &project, "three", "lead.created").await,
    ];
    let body = json!({"formData": {"uniqueEventId": "same"}, "userData": {"firstName": "Ada"}});
    let creates = (0..16).map(|_| create(&store, &project, body.clone(), 1));
    join_all(creates).await;
    for n in 0..10 {
        create(
            &store,
            &project,
            json!({"userData": {"email": format!("{n}@x.io")}}),
            2,
        )
        .await;
    }
    // Due: 11 creations to three webhooks, 15 merges to two.
    let workers = (0..8).map(|_| drain(&store));
    let claimed: Vec<ClaimedWebhookEvent> = join_all(workers).await.into_iter().flatten().collect();
    let pairs: BTreeSet<(Uuid, Uuid)> = claimed
        .iter()
        .map(|event| (event.webhook.id, event.event_id))
        .collect();
    assert_eq!(pairs.len(), claimed.len(), "a delivery was claimed twice");
    assert_eq!(claimed.len(), 11 * 3 + 15 * 2);
    for (hook, created, updated) in [(&hooks[0], 11, 15), (&hooks[1], 11, 15), (&hooks[2], 11, 0)] {
        let of = |kind| {
            claimed
                .iter()
                .filter(|e| e.webhook.id == hook.id && e.event == kind)
                .count()
        };
        assert_eq!(
            (of(WebhookEvent::LeadCreated), of(WebhookEvent::LeadUpdated)),
            (created, updated)
        );
    }
}

/// A retried delivery waits until its time and keeps its event id and body; a lapsed lease
/// passes the delivery to another worker, and the first worker's lease no longer counts.
pub async fn webhook_retries_and_leases<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let hook = add(&store, &project, "crm", "lead.created").await;
    create(
        &store,
        &project,
        json!({"userData": {"firstName": "Ada"}}),
        1,
    )
    .await;

    let lease = Duration::minutes(5);
    let first = store
        .claim_webhook_event(at(10), lease)
        .await
        .unwrap()
        .expect("the event is due");
    assert_eq!((first.webhook.id, first.attempts), (hook.id, 0));
    assert!(
        store
            .claim_webhook_event(at(10), lease)
            .await
            .unwrap()
            .is_none()
    );
    let retry = WebhookAttempt {
        at: at(10),
        outcome: AttemptOutcome::Retry,
        http_status: Some(503),
        error: Some("HTTP 503".to_owned()),
        retry_at: Some(at(20)),
    };
    store
        .record_webhook_attempt(first.id, first.lease.token, &retry)
        .await
        .unwrap();
    let stale = store
        .record_webhook_attempt(first.id, first.lease.token, &delivered())
        .await;
    assert!(
        matches!(stale, Err(StoreError::Conflict(Conflict::WebhookLeaseLost(id))) if id == first.id),
        "{stale:?}"
    );
    assert!(
        store
            .claim_webhook_event(at(19), lease)
            .await
            .unwrap()
            .is_none()
    );
    let statuses = store.webhooks(project.id).await.unwrap();
    assert_eq!((statuses[0].pending, statuses[0].failed), (1, 0));
    assert_eq!(statuses[0].last_attempt, Some(retry));

    let second = store
        .claim_webhook_event(at(20), lease)
        .await
        .unwrap()
        .expect("due again");
    assert_eq!(second.id, first.id);
    assert_eq!(second.attempts, 1);
    assert_eq!(
        (second.event_id, &second.body),
        (first.event_id, &first.body)
    );
    // This worker dies; after its lease lapses another claims the delivery.
    assert!(
        store
            .claim_webhook_event(at(24), lease)
            .await
            .unwrap()
            .is_none()
    );
    let third = store
        .claim_webhook_event(at(25), lease)
        .await
        .unwrap()
        .expect("the lease lapsed");
    assert_eq!(third.id, first.id);
    assert_ne!(third.lease.token, second.lease.token);
    let late = store
        .record_webhook_attempt(second.id, second.lease.token, &delivered())
        .await;
    assert!(matches!(
        late,
        Err(StoreError::Conflict(Conflict::WebhookLeaseLost(_)))
    ));
    let failed = WebhookAttempt {
        outcome: AttemptOutcome::Failed,
        http_status: Some(410),
        error: Some("HTTP 410: gone".to_owned()),
        ..delivered()
    };
    store
        .record_webhook_attempt(third.id, third.lease.token, &failed)
        .await
        .unwrap();
    assert!(
        store
            .claim_webhook_event(at(999), lease)
            .await
            .unwrap()
            .is_none()
    );
    let statuses = store.webhooks(project.id).await.unwrap();
    assert_eq!(
        (
            statuses[0].pending,
            statuses[0].delivered,
            statuses[0].failed
        ),
        (0, 0, 1)
    );
}

/// A CRM sync of `kind` for `project`.
async fn sync<S: LeadWebhooks>(store: &S, project: &Project, kind: WebhookKind) -> Webhook {
    let targets = crate::target::Targets::default();
    let options = CrmOptions::new(None, ["Customer=closedwon"]).unwrap();
    let token = crate::integration::Secret::new("crm-token");
    let new = NewWebhook::crm(kind, ("https://crm.example", &targets), token, options).unwrap();
    store.create_webhook(project.id, new, at(0)).await.unwrap()
}

/// Records each of `claimed` as delivered.
async fn deliver_all<S: JobQueue>(store: &S, claimed: &[ClaimedWebhookEvent]) {
    for event in claimed {
        store
            .record_webhook_attempt(event.id, event.lease.token, &delivered())
            .await
            .unwrap();
    }
}

/// Of concurrent claims, one takes a sync's due deliveries and the others none.
pub async fn concurrent_claims_take_a_sync_once<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p1 = project(&store, "p1").await;
    let hubspot = sync(&store, &p1, WebhookKind::Hubspot).await;
    for minute in 1..=30 {
        let body = json!({"userData": {"email": format!("{minute}@x.io")}});
        create(&store, &p1, body, minute).await;
    }
    let claims = (0..8).map(|_| store.claim_sync_events(at(40), Duration::minutes(5)));
    let claimed: Vec<Vec<ClaimedWebhookEvent>> = join_all(claims)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let sizes: Vec<usize> = claimed.iter().map(Vec::len).filter(|n| *n > 0).collect();
    assert_eq!(sizes, [30], "one claim took the sync");
    assert!(claimed.iter().flatten().all(|e| e.webhook.id == hubspot.id));
}

/// A CRM sync's due deliveries go to one worker at a time: claimed together (up to its
/// kind's number), in the order they happened, under one lease; while they are held no
/// claim takes the sync's others, other syncs are claimed meanwhile, and a lapsed lease
/// passes the sync on. Posts are claimed one by one, never a sync's.
pub async fn a_sync_s_deliveries_go_to_one_worker_at_a_time<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let (p1, p2) = (project(&store, "p1").await, project(&store, "p2").await);
    let hubspot = sync(&store, &p1, WebhookKind::Hubspot).await;
    let pipedrive = sync(&store, &p2, WebhookKind::Pipedrive).await;
    let hook = add(&store, &p1, "hook", "lead.created").await;
    let lead = |n: i64| json!({"userData": {"email": format!("{n}@x.io")}});
    for minute in 1..=12 {
        create(&store, &p1, lead(minute), minute).await;
    }
    for minute in 13..=24 {
        create(&store, &p2, lead(minute), minute).await;
    }
    let lease = Duration::minutes(5);
    let claim = |minute| store.claim_sync_events(at(minute), lease);

    let first = claim(30).await.unwrap();
    let leads: Vec<i64> = first.iter().map(|event| event.lead_id.0).collect();
    let mut in_order = leads.clone();
    in_order.sort_unstable();
    assert_eq!(
        (leads.len(), &leads),
        (12, &in_order),
        "HubSpot's, in order"
    );
    assert!(
        first
            .iter()
            .all(|e| e.webhook.id == hubspot.id && e.lease == first[0].lease)
    );
    let second = claim(30).await.unwrap();
    assert_eq!(second.len(), 10, "Pipedrive's first ten");
    assert!(second.iter().all(|e| e.webhook.id == pipedrive.id));
    create(&store, &p1, lead(25), 25).await;
    assert!(claim(30).await.unwrap().is_empty(), "both syncs are held");

    deliver_all(&store, &first).await;
    let third = claim(31).await.unwrap();
    assert_eq!(
        third.len(),
        1,
        "HubSpot's, free again: the lead made meanwhile"
    );
    assert!(third[0].lead_id.0 > leads[11]);
    deliver_all(&store, &third).await;
    let lapsed = claim(36).await.unwrap();
    let ids = |events: &[ClaimedWebhookEvent]| events.iter().map(|e| e.id).collect::<Vec<_>>();
    assert_eq!(
        ids(&lapsed),
        ids(&second),
        "the lapsed lease passes the sync on"
    );
    let stale = store
        .record_webhook_attempt(second[0].id, second[0].lease.token, &delivered())
        .await;
    assert!(matches!(
        stale,
        Err(StoreError::Conflict(Conflict::WebhookLeaseLost(_)))
    ));
    deliver_all(&store, &lapsed).await;
    let last = claim(36).await.unwrap();
    assert_eq!(last.len(), 2, "Pipedrive's last two");
    deliver_all(&store, &last).await;
    assert!(claim(36).await.unwrap().is_empty());

    let posts = drain(&store).await;
    assert_eq!(posts.len(), 13, "the post webhook's, one by one");
    assert!(posts.iter().all(|event| event.webhook.id == hook.id));
}

/// Webhooks are added within limits, belong to their project, hear only of what happens
/// after they are added, survive a restart with their queue, and take their undelivered
/// events with them when removed.
pub async fn webhooks_are_added_and_removed<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p1 = project(&store, "p1").await;
    let p2 = project(&store, "p2").await;
    create(&store, &p1, json!({"userData": {"firstName": "Before"}}), 1).await;
    let hook = add(&store, &p1, "crm", "lead.created").await;
    assert!(
        store
            .claim_webhook_event(at(100), Duration::minutes(5))
            .await
            .unwrap()
            .is_none()
    );

    let bad = NewWebhook {
        url: "ftp://crm.example".to_owned(),
        ..NewWebhook::new(
            "https://crm.example",
            &crate::target::Targets::default(),
            None,
            WebhookEvents::all(),
        )
        .unwrap()
    };
    let refused = store.create_webhook(p1.id, bad, at(0)).await;
    assert!(
        matches!(refused, Err(StoreError::Invalid(_))),
        "{refused:?}"
    );
    let unknown = crate::types::ProjectId(i64::MAX);
    let good = NewWebhook::new(
        "https://crm.example",
        &crate::target::Targets::default(),
        None,
        WebhookEvents::all(),
    )
    .unwrap();
    super::assert_not_found(
        store.create_webhook(unknown, good.clone(), at(0)).await,
        Entity::Project,
    );
    for _ in 1..MAX_WEBHOOKS {
        store
            .create_webhook(p2.id, good.clone(), at(0))
            .await
            .unwrap();
    }
    store
        .create_webhook(p2.id, good.clone(), at(0))
        .await
        .unwrap();
    let too_many = store.create_webhook(p2.id, good, at(0)).await;
    assert!(
        matches!(too_many, Err(StoreError::Invalid(_))),
        "{too_many:?}"
    );
    assert_eq!(store.webhooks(p2.id).await.unwrap().len(), MAX_WEBHOOKS);

    create(&store, &p1, json!({"userData": {"firstName": "After"}}), 2).await;
    let store = backend.reopen(store).await;
    let statuses = store.webhooks(p1.id).await.unwrap();
    assert_eq!(statuses.len(), 1);
    assert_eq!((statuses[0].webhook.id, statuses[0].pending), (hook.id, 1));
    assert_eq!(statuses[0].webhook.secret, hook.secret);

    assert!(!store.remove_webhook(p2.id, hook.id).await.unwrap());
    assert!(store.remove_webhook(p1.id, hook.id).await.unwrap());
    assert!(!store.remove_webhook(p1.id, hook.id).await.unwrap());
    assert!(store.webhooks(p1.id).await.unwrap().is_empty());
    assert!(
        store
            .claim_webhook_event(at(100), Duration::minutes(5))
            .await
            .unwrap()
            .is_none()
    );
}

/// REST hooks are webhooks an automation tool subscribed: they keep their kind and their
/// one event through a reopen, hear what they subscribe to like any webhook, and have a
/// limit of their own beside the project's webhooks.
pub async fn rest_hooks_are_webhooks_with_a_limit_of_their_own<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p = project(&store, "p1").await;
    let targets = crate::target::Targets::default();
    let rest = |url: &str| NewWebhook::rest_hook(url, &targets, WebhookEvent::LeadCreated);
    let hook = store
        .create_webhook(p.id, rest("https://hooks.zapier.example/1").unwrap(), at(0))
        .await
        .unwrap();
    assert_eq!(hook.kind, WebhookKind::RestHook);
    let plain = add(&store, &p, "crm", "lead.created").await;
    assert_eq!(plain.kind, WebhookKind::Webhook);
    let lead = create(&store, &p, json!({"userData": {"firstName": "Ada"}}), 1)
        .await
        .lead_id;
    let heard: Vec<_> = drain(&store)
        .await
        .into_iter()
        .map(|event| (event.webhook.id, event.event, event.lead_id))
        .collect();
    assert_eq!(heard.len(), 2);
    for id in [hook.id, plain.id] {
        assert!(
            heard.contains(&(id, WebhookEvent::LeadCreated, lead)),
            "{heard:?}"
        );
    }

    for n in 1..MAX_WEBHOOKS {
        let url = format!("https://hooks.zapier.example/{n}");
        store
            .create_webhook(p.id, rest(&url).unwrap(), at(0))
            .await
            .unwrap();
    }
    let too_many = store
        .create_webhook(p.id, rest("https://hooks.zapier.example/x").unwrap(), at(0))
        .await;
    assert!(
        matches!(&too_many, Err(StoreError::Invalid(m)) if m.contains("REST hooks")),
        "{too_many:?}"
    );
    // The dashboard's webhooks are counted apart: the REST hooks leave room for them.
    add(&store, &p, "crm2", "lead.lost").await;

    let store = backend.reopen(store).await;
    let statuses = store.webhooks(p.id).await.unwrap();
    let rest_hooks: Vec<_> = statuses
        .iter()
        .filter(|s| s.webhook.kind == WebhookKind::RestHook)
        .collect();
    assert_eq!(
        (statuses.len(), rest_hooks.len()),
        (MAX_WEBHOOKS + 2, MAX_WEBHOOKS)
    );
    assert_eq!(rest_hooks[0].webhook.id, hook.id);
    assert_eq!(
        rest_hooks[0].webhook.events.iter().collect::<Vec<_>>(),
        [WebhookEvent::LeadCreated]
    );
    assert_eq!(
        rest_hooks[0].delivered + rest_hooks[0].pending + rest_hooks[0].failed,
        1
    );
}

/// A CRM sync is kept as a webhook of its kind, with its options and sealed token, one a
/// project; what the CRM calls each lead is kept per sync and lead, and goes with the sync.
pub async fn a_crm_sync_keeps_its_options_and_what_the_crm_calls_each_lead<B: Backend>(
    backend: &B,
) {
    let store = backend.open().await;
    let p = project(&store, "p1").await;
    let options = CrmOptions::new(Some("sales"), ["Customer=closedwon"]).unwrap();
    let token = crate::integration::Secret::new("pat-eu1-token");
    let targets = crate::target::Targets::default();
    let sync = |token| {
        NewWebhook::crm(
            WebhookKind::Hubspot,
            ("https://api.hubapi.com", &targets),
            token,
            options.clone(),
        )
    };
    let hook = store
        .create_webhook(p.id, sync(token.clone()).unwrap(), at(0))
        .await
        .unwrap();
    let again = store
        .create_webhook(p.id, sync(token.clone()).unwrap(), at(0))
        .await;
    assert!(
        matches!(&again, Err(StoreError::Invalid(m)) if m.contains("HubSpot")),
        "{again:?}"
    );
    let lead = create(
        &store,
        &p,
        json!({"userData": {"email": "ada@example.com"}}),
        1,
    )
    .await
    .lead_id;
    assert_eq!(
        store.crm_record(hook.id, lead).await.unwrap(),
        CrmRecord::default()
    );
    let contact = CrmRecord {
        contact_id: Some("101".to_owned()),
        crm_lead_id: Some("adf21080-0e10-11eb-879b-05d71fb426ec".to_owned()),
        deal_id: None,
    };
    store
        .save_crm_record(hook.id, lead, &contact)
        .await
        .unwrap();
    let dealt = CrmRecord {
        deal_id: Some("9001".to_owned()),
        ..contact
    };
    store.save_crm_record(hook.id, lead, &dealt).await.unwrap();

    // A new token and stages keep the sync's id and records; another kind is not found.
    let new_token = crate::integration::Secret::new("pat-eu1-new");
    let options = CrmOptions::new(Some("sales"), ["Customer=closedwon", "lost=lost1"]).unwrap();
    let changed = NewWebhook::crm(
        WebhookKind::Hubspot,
        ("https://api.hubapi.com", &targets),
        new_token.clone(),
        options.clone(),
    )
    .unwrap();
    let wrong_kind = NewWebhook {
        kind: WebhookKind::Pipedrive,
        ..changed.clone()
    };
    super::assert_not_found(
        store.update_webhook(p.id, hook.id, wrong_kind).await,
        Entity::Webhook,
    );
    let updated = store.update_webhook(p.id, hook.id, changed).await.unwrap();
    assert_eq!((updated.id, &updated.secret), (hook.id, &new_token));
    let token = new_token;

    let store = backend.reopen(store).await;
    let kept = store.webhooks(p.id).await.unwrap().remove(0).webhook;
    assert_eq!(
        (kept.kind, kept.crm.as_ref(), &kept.secret),
        (WebhookKind::Hubspot, Some(&options), &token)
    );
    assert_eq!(kept.events.iter().collect::<Vec<_>>(), CRM_EVENTS);
    assert_eq!(store.crm_record(hook.id, lead).await.unwrap(), dealt);
    add(&store, &p, "crm", "lead.created").await;
    let syncs = store.lead_syncs(p.id, lead).await.unwrap();
    let expected = LeadSync {
        kind: WebhookKind::Hubspot,
        record: dealt.clone(),
        pending: 1,
        failed: 0,
        last_attempt: None,
    };
    assert_eq!(
        syncs,
        [expected],
        "the lead's created event waits; webhooks are no CRM"
    );
    let deleted = create(&store, &p, json!({"userData": {"firstName": "Bo"}}), 30).await;
    let deleted = deleted.lead_id;
    store
        .save_crm_record(hook.id, deleted, &dealt)
        .await
        .unwrap();
    store
        .delete_lead(p.id, deleted, &super::attributed(), at(31))
        .await
        .unwrap();
    assert_eq!(
        store.crm_record(hook.id, deleted).await.unwrap(),
        CrmRecord::default(),
        "a deleted lead's record goes with it"
    );
    assert!(store.remove_webhook(p.id, hook.id).await.unwrap());
    assert!(store.lead_syncs(p.id, lead).await.unwrap().is_empty());
    assert_eq!(
        store.crm_record(hook.id, lead).await.unwrap(),
        CrmRecord::default()
    );
}
