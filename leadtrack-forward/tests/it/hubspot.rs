//! HubSpot syncs against a mock of HubSpot's CRM API that checks its documented requests
//! (`leadtrack_platforms::testkit::crm`): one contact per email however often a person's
//! leads arrive or merge, a contact by phone and name for a lead without an email, one deal
//! per lead however often it is re-rated, following the latest rating's stage and amount,
//! and nothing lost to HubSpot's `429`s.

use std::time::{Duration, Instant};

use chrono::Utc;
use leadtrack_core::Admin as _;
use leadtrack_core::LeadWebhooks as _;
use leadtrack_core::crm::CrmOptions;
use leadtrack_core::integration::Secret;
use leadtrack_core::label::{LabelMapping, NewLabel};
use leadtrack_core::testkit::mock_targets;
use leadtrack_core::types::ConversionId;
use leadtrack_core::webhook::{NewWebhook, Webhook, WebhookKind};
use leadtrack_outbound::Outbound;
use leadtrack_platforms::hubspot::Hubspot;
use leadtrack_platforms::testkit::crm::{HUBSPOT_TOKEN, MockHubspot};
use serde_json::{Value, json};

use crate::common::*;

/// Connects the fixture's project to `mock` as `server integration hubspot` does: the
/// contact properties made, then the sync kept.
async fn connect(f: &Fixture, mock: &MockHubspot) -> Webhook {
    let token = Secret::new(HUBSPOT_TOKEN);
    let http = Outbound::new(mock_targets(), Duration::from_secs(5));
    let hubspot = Hubspot {
        http: &http,
        api: mock.url(),
        token: &token,
    };
    hubspot.make_properties().await.unwrap();
    let options = CrmOptions::new(
        None,
        ["Qualified=appointmentscheduled", "customer=closedwon"],
    )
    .unwrap();
    let api = (mock.url(), &mock_targets());
    let sync = NewWebhook::crm(WebhookKind::Hubspot, api, token, options).unwrap();
    f.store
        .create_webhook(f.project.id, sync, Utc::now())
        .await
        .unwrap()
}

fn ada(event: &str) -> Value {
    json!({
        "userData": {"email": "Ada@Example.com", "firstName": "Ada", "lastName": "Lovelace",
                     "phone": "+44 20 7946 0958", "companyName": "Engines"},
        "attributionData": {"utm_source": "google", "utm_campaign": "spring", "gclid": "G1"},
        "formData": {"uniqueEventId": event}
    })
}

#[tokio::test]
async fn one_contact_per_email_and_one_deal_per_lead_following_its_latest_rating() {
    let f = fixture().await;
    let mock = MockHubspot::start().await;
    let sync = connect(&f, &mock).await;
    let customer = NewLabel::done("Customer", LabelMapping::webhook_only());
    let customer = f
        .store
        .create_label(f.project.id, customer, Utc::now())
        .await
        .unwrap();
    let worker = worker(&f.store, fast());

    // A person's lead, sent twice (merged), and a second lead of the same email.
    let first = create_lead(&f, ada("form-1")).await;
    assert_eq!(create_lead(&f, ada("form-1")).await, first, "merged");
    let second = create_lead(&f, ada("form-2")).await;
    // A lead with a phone and a name, no email; merged once.
    let phone_only = json!({"userData": {"phone": "+49 151 1234 5678", "firstName": "Grace"},
                            "formData": {"uniqueEventId": "call-1"}});
    let grace = create_lead(&f, phone_only.clone()).await;
    create_lead(&f, phone_only).await;
    settle_events(&f, &worker).await;

    let contacts = mock.contacts();
    assert_eq!(contacts.len(), 2, "{contacts:?}");
    let (ada_id, ada_contact) = contacts
        .iter()
        .find(|(_, c)| c.get("email").is_some())
        .unwrap();
    assert_eq!(
        Value::Object(ada_contact.clone()),
        json!({"email": "Ada@Example.com", "firstname": "Ada", "lastname": "Lovelace",
               "phone": "+44 20 7946 0958", "company": "Engines",
               "leadtrack_lead_id": second.to_string(), "leadtrack_source": "google",
               "leadtrack_campaign": "spring", "leadtrack_click_ids": "gclid=G1"})
    );
    let grace_contact = contacts
        .values()
        .find(|c| c.get("email").is_none())
        .unwrap();
    assert_eq!(grace_contact["phone"], "+49 151 1234 5678");
    let record = f.store.crm_record(sync.id, grace).await.unwrap();
    assert!(record.contact_id.is_some() && record.deal_id.is_none());

    // Rated, rated again with another label, then lost: one deal, moved each time.
    f.rate(first, (ConversionId::Label(f.label), 50_000), Utc::now())
        .await;
    settle_events(&f, &worker).await;
    let deals = mock.deals();
    assert_eq!(deals.len(), 1);
    let (deal_id, deal) = deals.iter().next().unwrap();
    assert_eq!(
        &deal.contact, ada_id,
        "associated with the person's contact"
    );
    assert_eq!(
        Value::Object(deal.properties.clone()),
        json!({"dealname": format!("Ada Lovelace (lead {first})"), "pipeline": "default",
               "dealstage": "appointmentscheduled", "amount": "500.00",
               "deal_currency_code": "EUR"})
    );
    f.rate(
        first,
        (ConversionId::Label(customer.id), 120_000),
        Utc::now(),
    )
    .await;
    settle_events(&f, &worker).await;
    f.rate(first, (ConversionId::Lost, 0), Utc::now()).await;
    settle_events(&f, &worker).await;

    let deals = mock.deals();
    assert_eq!(
        deals.keys().collect::<Vec<_>>(),
        [deal_id],
        "the same deal, moved"
    );
    let deal = &deals[deal_id];
    assert_eq!(
        (deal.properties["dealstage"].as_str(), deal.writes),
        (Some("closedlost"), 3)
    );
    let record = f.store.crm_record(sync.id, first).await.unwrap();
    assert_eq!(record.deal_id.as_deref(), Some(deal_id.as_str()));
    assert_eq!(mock.contacts().len(), 2, "still one contact per person");
    let statuses = f.store.webhooks(f.project.id).await.unwrap();
    let status = statuses.iter().find(|s| s.webhook.id == sync.id).unwrap();
    assert_eq!(
        (status.delivered, status.failed),
        (8, 0),
        "every event synced"
    );
}

#[tokio::test]
async fn throttled_calls_wait_and_lose_nothing() {
    let f = fixture().await;
    let mock = MockHubspot::start().await;
    connect(&f, &mock).await;
    mock.throttle(3);
    let started = Instant::now();
    let first = create_lead(&f, ada("form-1")).await;
    create_lead(&f, another_person(2)).await;
    f.rate(first, (ConversionId::Label(f.label), 9_900), Utc::now())
        .await;
    settle_events(&f, &worker(&f.store, fast())).await;

    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "Retry-After: 1 was honoured"
    );
    assert_eq!(mock.contacts().len(), 2);
    let deals = mock.deals();
    assert_eq!(deals.len(), 1);
    assert_eq!(deals.values().next().unwrap().properties["amount"], "99.00");
    let throttled = mock.calls().len() - mock.contacts().len() - 2;
    assert!(throttled >= 3, "{:?}", mock.calls());
}

#[tokio::test]
async fn a_rating_with_no_stage_keeps_the_contact_and_makes_no_deal() {
    let f = fixture().await;
    let mock = MockHubspot::start().await;
    let sync = connect(&f, &mock).await;
    let unmapped = NewLabel::done("Demo booked", LabelMapping::webhook_only());
    let unmapped = f
        .store
        .create_label(f.project.id, unmapped, Utc::now())
        .await
        .unwrap();
    let lead = create_lead(&f, ada("form-1")).await;
    f.rate(lead, (ConversionId::Label(unmapped.id), 100), Utc::now())
        .await;
    settle_events(&f, &worker(&f.store, fast())).await;

    assert_eq!((mock.contacts().len(), mock.deals().len()), (1, 0));
    let statuses = f.store.webhooks(f.project.id).await.unwrap();
    let status = statuses.iter().find(|s| s.webhook.id == sync.id).unwrap();
    let last = status.last_attempt.as_ref().unwrap();
    assert_eq!(
        last.error.as_deref(),
        Some(r#"no deal stage is mapped to "Demo booked": the contact is kept, no deal is made"#)
    );
}

fn person(n: usize) -> Value {
    json!({"userData": {"email": format!("person{n}@example.com"), "firstName": format!("P{n}")}})
}

const UPSERT: &str = "/crm/v3/objects/contacts/batch/upsert";
const CREATE_DEALS: &str = "/crm/v3/objects/deals/batch/create";

fn batches(calls: &[(&str, usize)]) -> Vec<(String, usize)> {
    calls.iter().map(|(p, n)| ((*p).to_owned(), *n)).collect()
}

/// The mock's batch calls that wrote contacts or deals (not the properties made when the
/// sync was connected).
fn record_batches(mock: &MockHubspot) -> Vec<(String, usize)> {
    let mut batches = mock.batches();
    batches.retain(|(path, _)| path.starts_with("/crm/v3/objects/"));
    batches
}

#[tokio::test]
async fn a_backlog_goes_in_batch_calls_of_up_to_100_a_person_once_in_each() {
    let f = fixture().await;
    let mock = MockHubspot::start().await;
    let sync = connect(&f, &mock).await;
    let worker = worker(&f.store, fast());
    // 150 leads; the second is the first's person again, so it waits for a second round.
    let mut leads = Vec::new();
    for n in 0..150 {
        leads.push(create_lead(&f, person(if n == 1 { 0 } else { n })).await);
    }
    settle_events(&f, &worker).await;
    assert_eq!(
        record_batches(&mock),
        batches(&[(UPSERT, 99), (UPSERT, 1), (UPSERT, 50)])
    );
    assert_eq!(mock.contacts().len(), 149);

    // 101 ratings, their events all due before the sync runs.
    for (n, lead) in leads.iter().take(101).enumerate() {
        let price = 10_000 + i64::try_from(n).unwrap();
        f.rate(*lead, (ConversionId::Label(f.label), price), Utc::now())
            .await;
    }
    while worker.run_job().await.unwrap() {}
    settle_events(&f, &worker).await;
    assert_eq!(
        record_batches(&mock)[3..],
        batches(&[
            (UPSERT, 99),
            (CREATE_DEALS, 99),
            (UPSERT, 1),
            (CREATE_DEALS, 1),
            (UPSERT, 1),
            (CREATE_DEALS, 1),
        ])
    );
    let deals = mock.deals();
    assert_eq!(deals.len(), 101, "one deal per rated lead");
    for (n, lead) in leads.iter().take(101).enumerate() {
        let record = f.store.crm_record(sync.id, *lead).await.unwrap();
        let deal = &deals[record.deal_id.as_deref().expect("the deal is recorded")];
        let cents = 10_000 + n;
        let amount = format!("{}.{:02}", cents / 100, cents % 100);
        assert_eq!(deal.properties["amount"], amount.as_str(), "lead {n}");
        assert_eq!(Some(&deal.contact), record.contact_id.as_ref());
    }
    let statuses = f.store.webhooks(f.project.id).await.unwrap();
    let status = statuses.iter().find(|s| s.webhook.id == sync.id).unwrap();
    assert_eq!((status.delivered, status.failed), (251, 0));
}

#[tokio::test]
async fn an_input_hubspot_refuses_fails_alone_and_the_rest_of_its_batch_goes_through() {
    let f = fixture().await;
    let mock = MockHubspot::start().await;
    let sync = connect(&f, &mock).await;
    let mut leads = Vec::new();
    for n in 0..8 {
        let mut lead = person(n);
        if n == 5 {
            lead["userData"]["email"] = json!("person5.example.com");
        }
        leads.push(create_lead(&f, lead).await);
    }
    settle_events(&f, &worker(&f.store, fast())).await;

    // Refused whole (8), then halved until the bad input is alone: 4 go through, 4 are
    // refused, 2 of them refused again, then 1, 1 and 2.
    assert_eq!(
        record_batches(&mock),
        batches(&[(UPSERT, 4), (UPSERT, 1), (UPSERT, 2)])
    );
    assert_eq!(
        mock.calls()
            .iter()
            .filter(|call| call.ends_with(UPSERT))
            .count(),
        7
    );
    assert_eq!(mock.contacts().len(), 7);
    let syncs = f.store.lead_syncs(f.project.id, leads[5]).await.unwrap();
    assert_eq!(
        (syncs[0].record.contact_id.as_ref(), syncs[0].failed),
        (None, 1)
    );
    let error = syncs[0].last_attempt.as_ref().unwrap().error.as_deref();
    assert!(
        error.is_some_and(|e| e.contains("HTTP 400") && e.contains("INVALID_EMAIL")),
        "{error:?}"
    );
    let statuses = f.store.webhooks(f.project.id).await.unwrap();
    let status = statuses.iter().find(|s| s.webhook.id == sync.id).unwrap();
    assert_eq!((status.delivered, status.failed), (7, 1));
}
