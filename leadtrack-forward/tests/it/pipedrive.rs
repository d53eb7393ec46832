//! Pipedrive syncs against a mock of Pipedrive's API that checks its documented requests
//! (`leadtrack_platforms::testkit::crm`): one person per email or phone however often a
//! person's leads arrive or merge, one Pipedrive lead per lead with a note of where it came
//! from, one deal per lead however often it is re-rated, its stage and value following the
//! latest rating and `lost` marking it lost, and nothing lost to `429`s.

use std::time::{Duration, Instant};

use chrono::Utc;
use leadtrack_core::crm::CrmOptions;
use leadtrack_core::integration::Secret;
use leadtrack_core::label::{LabelMapping, NewLabel};
use leadtrack_core::testkit::mock_targets;
use leadtrack_core::types::ConversionId;
use leadtrack_core::webhook::{NewWebhook, Webhook, WebhookKind};
use leadtrack_core::{Admin as _, LeadWebhooks as _};
use leadtrack_platforms::testkit::crm::{MockPipedrive, PIPEDRIVE_TOKEN};
use serde_json::{Value, json};

use crate::common::*;

async fn connect(f: &Fixture, mock: &MockPipedrive) -> Webhook {
    let options = CrmOptions::new(Some("1"), ["Qualified=1", "customer=3"]).unwrap();
    let token = Secret::new(PIPEDRIVE_TOKEN);
    let api = (mock.url(), &mock_targets());
    let sync = NewWebhook::crm(WebhookKind::Pipedrive, api, token, options).unwrap();
    f.store
        .create_webhook(f.project.id, sync, Utc::now())
        .await
        .unwrap()
}

fn ada(event: &str) -> Value {
    json!({
        "userData": {"email": "ada@example.com", "firstName": "Ada", "lastName": "Lovelace"},
        "attributionData": {"utm_source": "google", "utm_medium": "cpc",
                            "utm_campaign": "spring", "gclid": "G1"},
        "formData": {"formName": "Contact", "uniqueEventId": event}
    })
}

#[tokio::test]
async fn one_person_one_lead_and_one_deal_following_the_latest_rating() {
    let f = fixture().await;
    let mock = MockPipedrive::start().await;
    let sync = connect(&f, &mock).await;
    let customer = NewLabel::done("Customer", LabelMapping::webhook_only());
    let customer = f
        .store
        .create_label(f.project.id, customer, Utc::now())
        .await
        .unwrap();
    let worker = worker(&f.store, fast());

    let first = create_lead(&f, ada("form-1")).await;
    create_lead(&f, ada("form-1")).await;
    let second = create_lead(&f, ada("form-2")).await;
    let phone = json!({"userData": {"phone": "+49 151 1234 5678"}});
    create_lead(&f, phone.clone()).await;
    create_lead(&f, phone).await;
    settle_events(&f, &worker).await;

    let persons = mock.persons();
    assert_eq!(persons.len(), 2, "one per email or phone: {persons:?}");
    let ada_person = persons
        .iter()
        .find(|(_, p)| p.fields["name"] == "Ada Lovelace")
        .unwrap()
        .0;
    assert_eq!(
        persons[ada_person].fields["emails"],
        json!([{"value": "ada@example.com", "primary": true, "label": "work"}])
    );
    let leads = mock.leads();
    assert_eq!(leads.len(), 4, "one Pipedrive lead per lead: {leads:?}");
    let notes = mock.notes();
    let record = f.store.crm_record(sync.id, first).await.unwrap();
    let first_lead = record.crm_lead_id.clone().unwrap();
    let note = &notes
        .iter()
        .find(|(lead, _)| *lead == first_lead)
        .unwrap()
        .1;
    assert_eq!(
        note,
        &format!(
            "<p>From leadtrack, lead {first}.</p><p>Form: Contact</p><p>Source: google</p>\
                  <p>Medium: cpc</p><p>Campaign: spring</p><p>Click ids: gclid=G1</p>"
        )
    );
    assert_eq!(leads[&first_lead].fields["person_id"], json!(ada_person));
    let other = f.store.crm_record(sync.id, second).await.unwrap();
    assert_eq!(other.contact_id, record.contact_id, "the same person");

    f.rate(first, (ConversionId::Label(f.label), 50_000), Utc::now())
        .await;
    settle_events(&f, &worker).await;
    let deals = mock.deals();
    assert_eq!(deals.len(), 1);
    let (deal_id, deal) = deals.iter().next().unwrap();
    assert_eq!(
        Value::Object(deal.fields.clone()),
        json!({"title": "Ada Lovelace", "pipeline_id": 1, "stage_id": 1, "status": "open",
               "value": 500.0, "currency": "EUR", "person_id": ada_person})
    );
    assert_eq!(
        mock.leads()[&first_lead].fields["is_archived"],
        true,
        "out of the inbox"
    );

    f.rate(
        first,
        (ConversionId::Label(customer.id), 120_000),
        Utc::now(),
    )
    .await;
    settle_events(&f, &worker).await;
    let moved = &mock.deals()[deal_id];
    assert_eq!(
        (
            moved.fields["stage_id"].as_i64(),
            moved.fields["value"].as_f64()
        ),
        (Some(3), Some(1200.0))
    );
    f.rate(first, (ConversionId::Lost, 0), Utc::now()).await;
    settle_events(&f, &worker).await;

    let deals = mock.deals();
    assert_eq!(deals.keys().collect::<Vec<_>>(), [deal_id], "the same deal");
    assert_eq!(
        (
            deals[deal_id].fields["status"].as_str(),
            deals[deal_id].writes
        ),
        (Some("lost"), 3)
    );
    assert_eq!((mock.persons().len(), mock.leads().len()), (2, 4));
    let status = f.store.webhooks(f.project.id).await.unwrap().remove(0);
    assert_eq!((status.delivered, status.failed), (8, 0));
}

#[tokio::test]
async fn throttled_calls_wait_and_lose_nothing() {
    let f = fixture().await;
    let mock = MockPipedrive::start().await;
    connect(&f, &mock).await;
    mock.throttle(4);
    let first = create_lead(&f, ada("form-1")).await;
    f.rate(first, (ConversionId::Label(f.label), 9_900), Utc::now())
        .await;
    settle_events(&f, &worker(&f.store, fast())).await;

    assert_eq!(
        (mock.persons().len(), mock.leads().len(), mock.notes().len()),
        (1, 1, 1)
    );
    let deals = mock.deals();
    assert_eq!(deals.len(), 1);
    assert_eq!(deals.values().next().unwrap().fields["value"], 99.0);
}

/// Two workers of eight delivery loops each at once, on people each with a lead created,
/// merged and rated and a second lead: each person's events reach Pipedrive one after the
/// other, so each has one person, and each rated lead one deal.
#[tokio::test]
async fn two_workers_sync_each_person_once() {
    let f = fixture().await;
    let mock = MockPipedrive::start().await;
    let sync = connect(&f, &mock).await;
    let mut leads = Vec::new();
    for n in 0..6 {
        let mut body = another_person(n);
        body["formData"]["uniqueEventId"] = json!(format!("a{n}"));
        let lead = create_lead(&f, body.clone()).await;
        assert_eq!(create_lead(&f, body.clone()).await, lead, "merged");
        // A second lead of the person, synced by another loop at the same moment.
        body["formData"]["uniqueEventId"] = json!(format!("b{n}"));
        create_lead(&f, body).await;
        let rating = (ConversionId::Label(f.label), 1_000);
        f.rate(lead, rating, Utc::now()).await;
        leads.push(lead);
    }
    let config = leadtrack_forward::WorkerConfig {
        concurrency: 8,
        ..fast()
    };
    // Two workers, as two processes on one database would be: nothing shared but the store.
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let running: Vec<_> = (0..2)
        .map(|_| {
            let mut stopped = stopped.clone();
            tokio::spawn(worker(&f.store, config.clone()).run(async move {
                let _ = stopped.wait_for(|stop| *stop).await;
            }))
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    while mock.deals().len() < 6 || f.store.webhooks(f.project.id).await.unwrap()[0].pending > 0 {
        assert!(Instant::now() < deadline, "{:?}", mock.calls());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let _ = stop.send(true);
    for worker in running {
        worker.await.unwrap();
    }
    let counts = (mock.persons().len(), mock.leads().len(), mock.deals().len());
    assert_eq!(counts, (6, 12, 6), "{:?}", mock.calls());
    for lead in leads {
        let record = f.store.crm_record(sync.id, lead).await.unwrap();
        assert!(record.deal_id.is_some(), "{lead}");
    }
}
