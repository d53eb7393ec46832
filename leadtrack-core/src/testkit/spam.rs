//! Spam and duplicates: spam leads kept apart (out of default listings, lookups, reports
//! and webhooks), freed by a person, marked by a person; a lead of the same person marked
//! a duplicate of the first.

use chrono::{Duration, NaiveDate};
use serde_json::{Value, json};

use super::{Backend, at, by, create, data, lead_by_id, project, update};
use crate::activity::Activity;
use crate::lead::CreatedLead;
use crate::project::Project;
use crate::report::{Grouping, ReportQuery, Touchpoint};
use crate::request::query::DuplicateFilter;
use crate::request::{CreateRoute, LeadQuery};
use crate::spam::SpamReason;
use crate::store::{Admin, JobQueue, LeadStore, LeadWebhooks};
use crate::types::{ConversionId, LeadId, LeadIdentifier, LeadStatus};
use crate::webhook::{NewWebhook, WebhookEvents};

/// A lead created from `body` at `minute`, held as spam for `reason`.
async fn spam<S: LeadStore>(
    store: &S,
    project: &Project,
    body: Value,
    minute: i64,
    reason: SpamReason,
) -> CreatedLead {
    store
        .create_screened_lead(
            project.id,
            CreateRoute::Browser,
            data(body),
            Some(reason),
            at(minute),
        )
        .await
        .expect("create a spam lead")
}

/// A webhook of `project` that hears of every new lead.
async fn hear_new_leads<S: Admin + LeadWebhooks>(store: &S, project: &Project) {
    let events = WebhookEvents::parse_list("lead.created").expect("event names");
    let hook = NewWebhook::new(
        "https://crm.example/hook",
        &crate::target::Targets::default(),
        None,
        events,
    )
    .expect("webhook");
    store
        .create_webhook(project.id, hook, at(0))
        .await
        .expect("create webhook");
}

async fn queued_webhook_events<S: JobQueue>(store: &S) -> u64 {
    let depth = store.queue_depth(at(1_000)).await.expect("queue depth");
    depth.webhook_events.queued
}

fn listing(status: Option<Vec<LeadStatus>>) -> LeadQuery {
    LeadQuery {
        status,
        ..LeadQuery::default()
    }
}

async fn ids<S: LeadStore>(store: &S, project: &Project, query: &LeadQuery) -> Vec<LeadId> {
    let page = store.list_leads(project.id, query).await.expect("list");
    let ids: Vec<LeadId> = page.leads.iter().map(|lead| lead.id).collect();
    assert_eq!(page.total, ids.len() as u64, "{query:?}");
    ids
}

/// A spam lead is stored with its reason, listed only when spam is asked for, found by a
/// value only when no other lead has it, counted in its own tab, left out of reports, and
/// announced to no webhook.
pub async fn spam_leads_are_kept_apart<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p = project(&store, "p").await;
    hear_new_leads(&store, &p).await;
    let person = create(&store, &p, json!({"userData": {"email": "ada@x.io"}}), 1).await;
    let body = json!({"userData": {"email": "ADA@x.io"}, "formData": {"formMessage": "x"}});
    let junk = spam(&store, &p, body, 2, SpamReason::Honeypot).await;
    let lone = json!({"userData": {"phone": "+1 555 0100"}});
    let lone = spam(&store, &p, lone, 3, SpamReason::Burst).await;

    let stored = lead_by_id(&store, &p, junk.lead_id).await;
    assert_eq!(stored.status, LeadStatus::Spam);
    assert_eq!(stored.spam_reason, Some(SpamReason::Honeypot));
    assert_eq!(stored.duplicate_of, None, "spam duplicates nobody");
    assert_eq!(ids(&store, &p, &listing(None)).await, [person.lead_id]);
    // A search counts no spam lead either, whichever index it is counted in.
    let searched = LeadQuery {
        search: Some("ada@x".to_owned()),
        ..listing(None)
    };
    assert_eq!(ids(&store, &p, &searched).await, [person.lead_id]);
    for words in [vec!["ada"], vec!["x"], vec!["ada", "io"]] {
        let q = LeadQuery {
            q: words.iter().map(|word| (*word).to_owned()).collect(),
            ..listing(None)
        };
        assert_eq!(ids(&store, &p, &q).await, [person.lead_id], "{words:?}");
    }
    let spam_only = listing(Some(vec![LeadStatus::Spam]));
    assert_eq!(
        ids(&store, &p, &spam_only).await,
        [lone.lead_id, junk.lead_id]
    );
    let open = listing(Some(vec![LeadStatus::Open]));
    assert_eq!(ids(&store, &p, &open).await, [person.lead_id]);
    let counts = store.status_counts(p.id, &listing(None)).await.unwrap();
    assert!(counts.contains(&(LeadStatus::Open, 1)), "{counts:?}");
    assert!(counts.contains(&(LeadStatus::Spam, 2)), "{counts:?}");

    let by_email = LeadIdentifier::Email("ada@x.io".to_owned());
    let found = store.find_lead(p.id, &by_email).await.unwrap();
    assert_eq!(found.id, person.lead_id, "the real lead, though older");
    let by_phone = LeadIdentifier::Phone("+15550100".to_owned());
    let found = store.find_lead(p.id, &by_phone).await.unwrap();
    assert_eq!(
        found.id, lone.lead_id,
        "a spam lead when it is the only one"
    );

    let march = NaiveDate::from_ymd_opt(2026, 3, 1).unwrap();
    let query = ReportQuery {
        from: march,
        to: march,
        touch: Touchpoint::Last,
        by: Grouping::Source,
    };
    let report = store.report(p.id, &query).await.unwrap();
    assert_eq!(report.totals().leads, 1, "spam is not counted");
    assert_eq!(queued_webhook_events(&store).await, 1, "only the real lead");
}

/// Reset to open or rated, a spam lead leaves spam for good: its reason goes, its history
/// says who freed it, and the webhooks hear of it as a new lead.
pub async fn a_person_frees_a_spam_lead<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p = project(&store, "p").await;
    hear_new_leads(&store, &p).await;
    let first = spam(
        &store,
        &p,
        json!({"userData": {"email": "a@x.io"}}),
        1,
        SpamReason::TooFast,
    )
    .await;
    let second = spam(
        &store,
        &p,
        json!({"userData": {"email": "b@x.io"}}),
        2,
        SpamReason::Burst,
    )
    .await;
    assert_eq!(queued_webhook_events(&store).await, 0);

    let open = update(first.lead_id, ConversionId::Open);
    store
        .update_status(p.id, &open, &by(), at(3))
        .await
        .unwrap();
    let freed = lead_by_id(&store, &p, first.lead_id).await;
    assert_eq!((freed.status, freed.spam_reason), (LeadStatus::Open, None));
    let history = store.lead_activity(p.id, first.lead_id).await.unwrap();
    let freeing = history
        .iter()
        .find(|event| event.activity == Activity::NotSpam)
        .expect("a not_spam event");
    assert_eq!(freeing.by, Some(by()));

    let lost = update(second.lead_id, ConversionId::Lost);
    store
        .update_status(p.id, &lost, &by(), at(4))
        .await
        .unwrap();
    let rated = lead_by_id(&store, &p, second.lead_id).await;
    assert_eq!(
        (rated.status, rated.spam_reason),
        (LeadStatus::Pending, None)
    );
    assert_eq!(
        queued_webhook_events(&store).await,
        2,
        "both announced once freed"
    );
    assert_eq!(
        ids(&store, &p, &listing(Some(vec![LeadStatus::Spam]))).await,
        []
    );
}

/// Marking holds open leads as spam, by a person, and leaves every other lead as it is.
pub async fn a_person_marks_open_leads_as_spam<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p = project(&store, "p").await;
    let open = create(&store, &p, json!({"userData": {"email": "a@x.io"}}), 1).await;
    let rated = create(&store, &p, json!({"userData": {"email": "b@x.io"}}), 2).await;
    let lost = update(rated.lead_id, ConversionId::Lost);
    store
        .update_status(p.id, &lost, &by(), at(3))
        .await
        .unwrap();
    let asked = [open.lead_id, rated.lead_id, LeadId(999_999)];
    let held = store.mark_spam(p.id, &asked, &by(), at(4)).await.unwrap();
    assert_eq!(held, [open.lead_id]);
    let marked = lead_by_id(&store, &p, open.lead_id).await;
    assert_eq!(marked.status, LeadStatus::Spam);
    assert_eq!(marked.spam_reason, Some(SpamReason::Marked));
    let history = store.lead_activity(p.id, open.lead_id).await.unwrap();
    let last = history.last().expect("events");
    assert_eq!(
        last.activity,
        Activity::Spam {
            reason: SpamReason::Marked
        }
    );
    assert_eq!(last.by, Some(by()));
    let untouched = lead_by_id(&store, &p, rated.lead_id).await;
    assert_eq!(untouched.status, LeadStatus::Pending);
    let other = project(&store, "other").await;
    let theirs = store
        .mark_spam(other.id, &[rated.lead_id], &by(), at(5))
        .await;
    assert_eq!(
        theirs.unwrap(),
        [],
        "another project's lead is out of reach"
    );
}

/// A new lead whose email or phone (by the matching rules) a lead of the project had in
/// the last 30 days duplicates that lead's original; spam neither duplicates nor is
/// duplicated, and leads further apart are strangers.
pub async fn a_lead_of_the_same_person_duplicates_the_first<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let p = project(&store, "p").await;
    let lead = |body: Value, minute: i64| {
        let store = &store;
        let p = &p;
        async move { create(store, p, body, minute).await.lead_id }
    };
    let duplicate_of = |id: LeadId| {
        let (store, p) = (&store, &p);
        async move { lead_by_id(store, p, id).await.duplicate_of }
    };
    let first = lead(json!({"userData": {"email": "ada@x.io"}}), 0).await;
    let again = lead(json!({"userData": {"email": " ADA@x.io "}}), 10).await;
    let third = lead(json!({"userData": {"email": "ada@x.io", "phone": "1"}}), 20).await;
    assert_eq!(duplicate_of(first).await, None);
    assert_eq!(duplicate_of(again).await, Some(first));
    assert_eq!(
        duplicate_of(third).await,
        Some(first),
        "the original, not the newest"
    );

    let phoned = lead(json!({"userData": {"phone": "+1 (555) 0100"}}), 30).await;
    let rung = lead(
        json!({"userData": {"phone": "+1.555.0100", "email": "new@x.io"}}),
        40,
    )
    .await;
    assert_eq!(
        duplicate_of(rung).await,
        Some(phoned),
        "by phone when the email is new"
    );

    let junk = spam(
        &store,
        &p,
        json!({"userData": {"email": "bo@x.io"}}),
        50,
        SpamReason::Burst,
    );
    let junk = junk.await.lead_id;
    let after_junk = lead(json!({"userData": {"email": "bo@x.io"}}), 60).await;
    assert_eq!(duplicate_of(junk).await, None);
    assert_eq!(
        duplicate_of(after_junk).await,
        None,
        "spam is nobody's original"
    );

    let month = Duration::days(30).num_minutes();
    let old = lead(json!({"userData": {"email": "cy@x.io"}}), 100).await;
    let within = lead(json!({"userData": {"email": "cy@x.io"}}), 100 + month).await;
    assert_eq!(
        duplicate_of(within).await,
        Some(old),
        "30 days to the minute"
    );
    lead(json!({"userData": {"email": "dee@x.io"}}), 100).await;
    let later = lead(json!({"userData": {"email": "dee@x.io"}}), 101 + month).await;
    assert_eq!(duplicate_of(later).await, None, "more than 30 days apart");
    let other = project(&store, "other").await;
    let theirs = create(
        &store,
        &other,
        json!({"userData": {"email": "ada@x.io"}}),
        200,
    )
    .await;
    assert_eq!(
        lead_by_id(&store, &other, theirs.lead_id)
            .await
            .duplicate_of,
        None
    );

    let of_first = LeadQuery {
        duplicates: Some(DuplicateFilter::Of(first)),
        ..LeadQuery::default()
    };
    assert_eq!(ids(&store, &p, &of_first).await, [third, again]);
    let all = LeadQuery {
        duplicates: Some(DuplicateFilter::All),
        ..LeadQuery::default()
    };
    assert_eq!(ids(&store, &p, &all).await, [within, rung, third, again]);
}

/// Rates `lead` with `conversion` at `minute`, and delivers its job to the webhook as a
/// worker does; the job as its lead's records hold it.
async fn rate_and_send<S: LeadStore + JobQueue>(
    store: &S,
    project: &Project,
    (lead, conversion): (LeadId, ConversionId),
    minute: i64,
) -> crate::job::Job {
    let rated = update(lead, conversion);
    let change = store
        .update_status(project.id, &rated, &by(), at(minute))
        .await;
    let job = change.expect("rated").job.expect("a job");
    super::deliver(store, job, minute).await;
    let records = store.lead_jobs(project.id, lead).await.unwrap();
    records
        .into_iter()
        .find(|record| record.job.id == job)
        .unwrap()
        .job
}

/// Rating a duplicate re-rates its person's one conversion, whichever lead of the person
/// was rated first: the same conversion id and time, and `lost` withdraws it.
pub async fn a_duplicate_shares_its_originals_conversion<B: Backend>(backend: &B) {
    use crate::integration::IntegrationSettings;
    let store = backend.open().await;
    let p = project(&store, "p").await;
    let hook = IntegrationSettings::Webhook(super::webhook());
    store.set_integration(p.id, hook, at(0)).await.unwrap();
    let customer = ConversionId::Label(super::webhook_label(&store, &p).await);
    let first = create(&store, &p, json!({"userData": {"email": "ada@x.io"}}), 1).await;
    let again = create(&store, &p, json!({"userData": {"email": "ada@x.io"}}), 2).await;
    let third = create(&store, &p, json!({"userData": {"email": "ada@x.io"}}), 3).await;
    let original = rate_and_send(&store, &p, (first.lead_id, customer), 10).await;
    let restated = rate_and_send(&store, &p, (again.lead_id, customer), 20).await;
    assert_eq!(restated.conversion_event_id, original.conversion_event_id);
    assert_eq!(restated.converted_at, original.converted_at);
    let lost = rate_and_send(&store, &p, (third.lead_id, ConversionId::Lost), 30).await;
    assert!(
        !lost.retracts.is_empty(),
        "lost withdraws the person's conversion"
    );

    // The duplicate rated first: its original shares that conversion.
    let bo = create(
        &store,
        &p,
        json!({"userData": {"phone": "+1 555 0100"}}),
        40,
    )
    .await;
    let bo_again = create(&store, &p, json!({"userData": {"phone": "+15550100"}}), 41).await;
    let early = rate_and_send(&store, &p, (bo_again.lead_id, customer), 50).await;
    let late = rate_and_send(&store, &p, (bo.lead_id, customer), 60).await;
    assert_eq!(late.conversion_event_id, early.conversion_event_id);
    assert_ne!(
        early.conversion_event_id, original.conversion_event_id,
        "another person"
    );
}
