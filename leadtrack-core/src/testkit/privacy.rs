//! Erasing a person ([`crate::store::erasure`]): by each key, the anonymous record left,
//! reports that count as before, reads that find nothing of them, what was delivered before,
//! `lead.erased`, and a second request that erases nothing.

use serde_json::json;

use super::webhooks::{add, drain};
use super::{Backend, at, attributed, create, deliver_all, lead_by_id, project, update};
use super::{label, webhook, webhook_label};
use crate::activity::Activity;
use crate::integration::IntegrationSettings;
use crate::label::LabelMapping;
use crate::report::{Grouping, ReportQuery, Touchpoint};
use crate::request::LeadQuery;
use crate::store::{Admin, LeadStore};
use crate::types::{ConversionId, LeadId, LeadIdentifier, LeadStatus};
use crate::webhook::WebhookEvent;

/// Ada's email; her two leads write it differently.
const ADA: &str = "ada.lovelace@example.com";

/// Erasing by email (as duplicates match it), phone and `uniqueIdentifier` takes each of
/// the person's leads and nothing else; the anonymous record, the history and every read
/// after it; a second request by any key erases nothing.
pub async fn a_person_is_erased_by_each_key_and_only_they_are<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let acme = project(&store, "acme").await;
    let other = project(&store, "other").await;
    let ada = |minute| {
        json!({"userData": {"email": if minute == 1 { ADA.to_owned() } else { ADA.to_uppercase() },
            "firstName": "Ada", "lastName": "Lovelace", "phone": "+44 20 7946 0001"},
            "formData": {"formName": "Contact", "message": "Call Ada after six"},
            "attributionData": {"utm_source": "google", "utm_medium": "cpc",
                "utm_campaign": "Brand", "gclid": "Cj0-ada-click"}})
    };
    let first = create(&store, &acme, ada(1), 1).await.lead_id;
    let second = create(&store, &acme, ada(2), 2).await.lead_id;
    let bob = create(
        &store,
        &acme,
        json!({"userData": {"phone": "0151 2345 678", "firstName": "Bob"}}),
        3,
    )
    .await
    .lead_id;
    let cy = create(
        &store,
        &acme,
        json!({"userData": {"firstName": "Cy"}, "uniqueIdentifier": "crm-cy"}),
        4,
    )
    .await
    .lead_id;
    let elsewhere = create(&store, &other, ada(1), 5).await.lead_id;

    let erase = |who: LeadIdentifier| {
        let store = store.clone();
        async move {
            store
                .erase_person(acme.id, &who, &attributed(), at(60))
                .await
                .unwrap()
        }
    };
    let ada_by_email = LeadIdentifier::Email(format!(" {} ", ADA.to_uppercase()));
    let would = store.person_leads(acme.id, &ada_by_email).await.unwrap();
    assert_eq!(would, [first, second], "what the erasure would take");
    let by_email = erase(ada_by_email.clone()).await;
    assert_eq!(
        store.person_leads(acme.id, &ada_by_email).await.unwrap(),
        []
    );
    assert_eq!(
        (by_email.erased, by_email.lead_ids.clone()),
        (2, vec![first, second])
    );
    assert_eq!(
        erase(LeadIdentifier::Phone("0151 9999 999".into()))
            .await
            .lead_ids,
        []
    );
    // Bob's rating waits to be sent: its conversion is cancelled, and his lead takes the
    // status the rating gives.
    let done = label(&store, &acme, true, LabelMapping::default()).await;
    let rating = update(bob, ConversionId::Label(done));
    let change = store
        .update_status(acme.id, &rating, &super::by(), at(50))
        .await;
    assert!(change.unwrap().job.is_some());
    assert_eq!(
        lead_by_id(&store, &acme, bob).await.status,
        LeadStatus::Pending
    );
    let by_phone = erase(LeadIdentifier::Phone("0151 2345 678".into())).await;
    assert_eq!(by_phone.lead_ids, [bob]);
    let settled = lead_by_id(&store, &acme, bob).await;
    assert_eq!(
        (settled.status, settled.conversion_id),
        (LeadStatus::Rated, Some(ConversionId::Label(done)))
    );
    assert!(store.lead_jobs(acme.id, bob).await.unwrap().is_empty());
    let by_identifier = erase(LeadIdentifier::UniqueIdentifier("crm-cy".into())).await;
    assert_eq!(by_identifier.lead_ids, [cy]);
    // Twice is harmless: nothing is left to erase, by any key.
    for again in [
        LeadIdentifier::Email(ADA.into()),
        LeadIdentifier::LeadId(first),
        LeadIdentifier::UniqueIdentifier("crm-cy".into()),
        LeadIdentifier::LeadId(LeadId(999_999)),
    ] {
        let nothing = erase(again).await;
        assert_eq!((nothing.erased, nothing.lead_ids.len()), (0, 0));
    }
    let untouched = lead_by_id(&store, &other, elsewhere).await;
    assert_eq!(untouched.data.user("email"), Some(ADA), "another project's");

    // The anonymous record: where the lead came from, and nothing of the person.
    let record = lead_by_id(&store, &acme, first).await;
    assert_eq!(
        serde_json::to_value(&record.data).unwrap(),
        json!({"formData": {"formName": "Contact"}, "userData": {},
            "attributionData": {"utm_source": "google", "utm_medium": "cpc", "utm_campaign": "Brand"},
            "deviceData": {}, "channelFlow": null, "uniqueIdentifier": null})
    );
    let history = store.lead_activity(acme.id, first).await.unwrap();
    let history: Vec<_> = history.iter().map(|e| (&e.activity, &e.by)).collect();
    assert_eq!(history, [(&Activity::Erased, &Some(attributed().actor))]);
    for who in [
        LeadIdentifier::Email(ADA.into()),
        LeadIdentifier::Phone("+44 20 7946 0001".into()),
        LeadIdentifier::UniqueIdentifier("crm-cy".into()),
    ] {
        assert!(store.find_lead(acme.id, &who).await.is_err(), "{who:?}");
    }
    for term in ["ada", "lovelace", "7946", "bob"] {
        for query in [
            LeadQuery {
                search: Some(term.into()),
                ..LeadQuery::default()
            },
            LeadQuery {
                q: vec![term.into()],
                ..LeadQuery::default()
            },
        ] {
            let found = store.list_leads(acme.id, &query).await.unwrap();
            assert_eq!(found.total, 0, "{query:?}");
        }
    }
    let exported = store
        .export_leads(acme.id, &LeadQuery::default(), None, 100)
        .await
        .unwrap();
    assert_eq!(exported.len(), 4, "the records stay");
    for lead in &exported {
        let json = serde_json::to_string(&lead.data).unwrap();
        assert!(!json.contains("ada") && !json.contains("Bob"), "{json}");
    }
    // Erasure is no block list: the person's next form is a new lead, nobody's duplicate.
    let back = create(&store, &acme, ada(3), 70).await;
    assert!(back.created);
    assert_eq!(
        lead_by_id(&store, &acme, back.lead_id).await.duplicate_of,
        None
    );
}

/// A rated, delivered and announced lead, erased: the report counts it as before, the
/// answer says what its receivers kept, its jobs are gone, and `lead.erased` carries its
/// id and nothing of the person.
pub async fn reports_count_erased_leads_and_platforms_kept_what_they_received<B: Backend>(
    backend: &B,
) {
    let store = backend.open().await;
    let acme = project(&store, "acme").await;
    store
        .set_integration(acme.id, IntegrationSettings::Webhook(webhook()), at(0))
        .await
        .unwrap();
    let hook = add(&store, &acme, "crm", "lead.created,lead.erased").await;
    let won = webhook_label(&store, &acme).await;
    let body = json!({"userData": {"email": "grace@example.com", "firstName": "Grace"},
        "attributionData": {"utm_source": "newsletter", "utm_medium": "email", "utm_campaign": "May"}});
    let lead = create(&store, &acme, body, 1).await.lead_id;
    let mut rating = update(lead, ConversionId::Label(won));
    rating.price = Some(12_000);
    store
        .update_status(acme.id, &rating, &super::by(), at(2))
        .await
        .unwrap();
    deliver_all(&store, 10).await;
    let announced = drain(&store).await;
    assert_eq!(announced.len(), 1, "lead.created");
    let query = ReportQuery {
        from: at(0).date_naive(),
        to: at(0).date_naive(),
        touch: Touchpoint::First,
        by: Grouping::SourceMedium,
    };
    let before = store.report(acme.id, &query).await.unwrap();

    let erased = store
        .erase_person(
            acme.id,
            &LeadIdentifier::Email("grace@example.com".into()),
            &attributed(),
            at(60),
        )
        .await
        .unwrap();
    let sent: Vec<_> = erased
        .sent_to
        .iter()
        .map(|s| (s.destination.as_str(), s.delivered))
        .collect();
    assert_eq!(sent, [("lead_webhooks", 1), ("webhook", 1)]);
    let after = store.report(acme.id, &query).await.unwrap();
    assert_eq!(after.totals(), before.totals(), "the same counts and value");
    assert_eq!(after.groups.len(), 1);
    assert_eq!(after.groups[0].name, "newsletter / email");
    let record = lead_by_id(&store, &acme, lead).await;
    assert_eq!(
        (record.status, record.conversion_id, record.price),
        (
            LeadStatus::Rated,
            Some(ConversionId::Label(won)),
            Some(12_000)
        )
    );
    assert!(store.lead_jobs(acme.id, lead).await.unwrap().is_empty());

    // `lead.erased` carries the anonymous record: its id, nothing of Grace.
    let erased_event = drain(&store).await;
    assert_eq!(erased_event.len(), 1);
    let event = &erased_event[0];
    assert_eq!(
        (event.webhook.id, event.event, event.lead_id),
        (hook.id, WebhookEvent::LeadErased, lead)
    );
    assert!(!event.body.contains("grace"), "{}", event.body);
    let body: serde_json::Value = serde_json::from_str(&event.body).unwrap();
    assert_eq!(body["type"], "lead.erased");
    assert_eq!(body["lead"]["id"], lead.0);
}

/// A retention of 30 days and spam's of 10, run in batches of one: the leads older than
/// the cutoff are erased and old spam is deleted, exactly those, oldest first; the run is
/// recorded; a later run takes only what has aged since.
pub async fn retention_erases_exactly_the_old_leads_and_deletes_old_spam<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let acme = project(&store, "acme").await;
    let other = project(&store, "other").await;
    let day = |d: i64| at(d * 24 * 60);
    let lead = |name: &str| json!({"userData": {"email": format!("{name}@x.io")}});
    let mut ids = Vec::new();
    for (name, created) in [("old", 0), ("older", 1), ("recent", 40)] {
        let created = store.create_lead(acme.id, super::data(lead(name)), day(created));
        ids.push(created.await.unwrap().lead_id);
    }
    let (old_spam, new_spam) = (
        create(&store, &acme, lead("spam1"), 0).await.lead_id,
        create(&store, &acme, lead("spam2"), 41 * 24 * 60)
            .await
            .lead_id,
    );
    store
        .mark_spam(acme.id, &[old_spam, new_spam], &super::by(), day(42))
        .await
        .unwrap();
    let elsewhere = store
        .create_lead(other.id, super::data(lead("old")), day(0))
        .await
        .unwrap()
        .lead_id;
    let retention = crate::project::ProjectSettings {
        retention_days: Some(Some(30)),
        spam_retention_days: Some(10),
        ..crate::project::ProjectSettings::default()
    };
    store.update_project(acme.id, retention).await.unwrap();

    let now = day(45);
    let mut batches = Vec::new();
    loop {
        let taken = store.erase_expired(acme.id, now, 1).await.unwrap();
        batches.push(taken);
        if taken < 1 {
            break;
        }
    }
    assert_eq!(
        batches,
        [1, 1, 1, 0],
        "the spam, then the two old leads, one a batch"
    );
    for (id, name) in [(ids[0], "old"), (ids[1], "older")] {
        let record = lead_by_id(&store, &acme, id).await;
        assert_eq!(record.data.user("email"), None, "{name} is erased");
        let history = store.lead_activity(acme.id, id).await.unwrap();
        assert_eq!(
            (history.len(), &history[0].activity, &history[0].by),
            (1, &Activity::Erased, &None)
        );
    }
    let recent = lead_by_id(&store, &acme, ids[2]).await;
    assert_eq!(recent.data.user("email"), Some("recent@x.io"));
    assert!(
        store
            .find_lead(acme.id, &LeadIdentifier::LeadId(old_spam))
            .await
            .is_err()
    );
    let spam = lead_by_id(&store, &acme, new_spam).await;
    assert_eq!(spam.status, LeadStatus::Spam, "young spam stays");
    let kept = lead_by_id(&store, &other, elsewhere).await;
    assert_eq!(
        kept.data.user("email"),
        Some("old@x.io"),
        "another project keeps its own"
    );
    let ran = store.project(&acme.public_id).await.unwrap().retention;
    assert_eq!(ran.last_run, Some((now, 3)));
    assert_eq!(ran.done_to, Some(day(15)));

    // Ten days on, the lead of day 40 is still young; the new spam is old now.
    assert_eq!(store.erase_expired(acme.id, day(55), 100).await.unwrap(), 1);
    assert!(
        store
            .find_lead(acme.id, &LeadIdentifier::LeadId(new_spam))
            .await
            .is_err()
    );
    assert_eq!(
        lead_by_id(&store, &acme, ids[2]).await.data.user("email"),
        Some("recent@x.io")
    );
    assert_eq!(
        store
            .project(&acme.public_id)
            .await
            .unwrap()
            .retention
            .last_run,
        Some((day(55), 1))
    );
}
