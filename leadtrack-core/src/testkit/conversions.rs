//! One identity per conversion: every job of one lead and label carries the id and time of
//! the conversion's first rating, and a rating again plans, per platform, nothing at the
//! same price and a restatement (or a skip with the reason) at a new one.

use serde_json::json;

use super::{Backend, all_mapped, at, by, connected_project, create, deliver_all, label, update};
use crate::job::JobRecord;
use crate::project::Project;
use crate::store::LeadStore;
use crate::types::{ConversionId, DeliveryAction, DeliveryState, IntegrationKind, LeadId};

/// Rates `lead` with `conversion` at `price` at minute `minute`; the lead's newest job.
async fn rate<S: LeadStore>(
    store: &S,
    project: &Project,
    lead: LeadId,
    (conversion, price): (ConversionId, Option<i64>),
    minute: i64,
) -> JobRecord {
    let mut update = update(lead, conversion);
    update.price = price;
    store
        .update_status(project.id, &update, &by(), at(minute))
        .await
        .unwrap();
    let mut jobs = store.lead_jobs(project.id, lead).await.unwrap();
    jobs.remove(0)
}

/// Each delivery of `record` as `(integration, action, state, detail)`.
fn plan(record: &JobRecord) -> Vec<(IntegrationKind, DeliveryAction, DeliveryState, String)> {
    record
        .deliveries
        .iter()
        .map(|(d, _)| {
            let detail = d.detail.clone().unwrap_or_default();
            (d.integration, d.action, d.state, detail)
        })
        .collect()
}

/// The same label again keeps the conversion's id and first time: at the same price each
/// platform that has it is skipped; at a new price Google Ads, Microsoft and the webhook
/// restate it while GA4, Meta and LinkedIn are skipped with the reason; another label is a
/// conversion of its own.
pub async fn a_conversion_keeps_its_identity_and_is_sent_once_per_value<B: Backend>(backend: &B) {
    use DeliveryAction::{Restate, Send};
    use DeliveryState::{Pending, Skipped};
    let store = backend.open().await;
    let project = connected_project(&store).await;
    let customer = ConversionId::Label(label(&store, &project, true, all_mapped()).await);
    let qualified = ConversionId::Label(label(&store, &project, false, all_mapped()).await);
    let body = json!({"userData": {"email": "a@x.io"},
                      "attributionData": {"gclid": "G", "cid": "1.2", "msclkid": "M"}});
    let lead = create(&store, &project, body, 0).await.lead_id;

    let first = rate(&store, &project, lead, (customer, Some(1000)), 1).await;
    assert_eq!(first.job.conversion_event_id, first.job.event_id);
    assert_eq!(first.job.converted_at, at(1));
    assert!(plan(&first).iter().all(|d| (d.1, d.2) == (Send, Pending)));
    deliver_all(&store, 2).await;

    let again = rate(&store, &project, lead, (customer, None), 3).await;
    assert_ne!(
        again.job.event_id, first.job.event_id,
        "a job keeps its own id"
    );
    assert_eq!(
        (again.job.conversion_event_id, again.job.converted_at),
        (first.job.conversion_event_id, at(1))
    );
    for (kind, action, state, detail) in plan(&again) {
        assert_eq!((action, state), (Send, Skipped), "{kind}");
        assert_eq!(
            detail,
            "Already sent on 2026-03-01 00:02 UTC, at this price"
        );
    }
    deliver_all(&store, 4).await;

    let repriced = rate(&store, &project, lead, (customer, Some(2500)), 5).await;
    assert_eq!(
        repriced.job.conversion_event_id,
        first.job.conversion_event_id
    );
    for (kind, action, state, detail) in plan(&repriced) {
        let restates = matches!(
            kind,
            IntegrationKind::GoogleAds | IntegrationKind::MicrosoftAds | IntegrationKind::Webhook
        );
        assert_eq!((action, state == Pending), (Restate, restates), "{kind}");
        if !restates {
            assert!(
                detail.ends_with("cannot restate a conversion's value: it keeps the value sent on 2026-03-01 00:02 UTC"),
                "{kind}: {detail}"
            );
        }
    }
    deliver_all(&store, 6).await;
    let same_again = rate(&store, &project, lead, (customer, Some(2500)), 7).await;
    let webhook = plan(&same_again).pop().unwrap();
    assert_eq!(
        (webhook.0, webhook.1, webhook.2, webhook.3.as_str()),
        (
            IntegrationKind::Webhook,
            Send,
            Skipped,
            "Already sent on 2026-03-01 00:06 UTC, at this price"
        ),
        "the restated value is the one the platform has"
    );
    deliver_all(&store, 8).await;

    let stage = rate(&store, &project, lead, (qualified, Some(2500)), 9).await;
    assert_eq!(stage.job.conversion_event_id, stage.job.event_id);
    assert_eq!(stage.job.converted_at, at(9));
    assert!(plan(&stage).iter().all(|d| (d.1, d.2) == (Send, Pending)));
}

/// A rating reset to open before any delivery leaves no conversion: rated again, the
/// conversion starts anew, with the new job's id and time.
pub async fn a_cancelled_rating_leaves_no_conversion_behind<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = connected_project(&store).await;
    let customer = ConversionId::Label(label(&store, &project, true, all_mapped()).await);
    let body = json!({"userData": {"email": "a@x.io"}, "attributionData": {"cid": "1.2"}});
    let lead = create(&store, &project, body, 0).await.lead_id;
    rate(&store, &project, lead, (customer, Some(1000)), 1).await;
    rate(&store, &project, lead, (ConversionId::Open, None), 2).await;
    let anew = rate(&store, &project, lead, (customer, Some(1000)), 3).await;
    assert_eq!(anew.job.conversion_event_id, anew.job.event_id);
    assert_eq!(anew.job.converted_at, at(3));
    let ga4 = anew
        .deliveries
        .iter()
        .find(|(d, _)| d.integration == IntegrationKind::Ga4)
        .map(|(d, _)| (d.action, d.state));
    assert_eq!(ga4, Some((DeliveryAction::Send, DeliveryState::Pending)));
}

/// `lost` after a delivered label withdraws it: the job names the conversion and where it
/// was sent, Microsoft Advertising and the webhook retract it (the webhook also hearing of
/// `lost`), the others cannot and say so; rated again, the label is sent again where it
/// was withdrawn, as the same conversion.
pub async fn lost_after_a_label_plans_its_retraction<B: Backend>(backend: &B) {
    use DeliveryAction::{Retract, Send};
    use DeliveryState::{Pending, Skipped};
    let store = backend.open().await;
    let project = connected_project(&store).await;
    let customer = ConversionId::Label(label(&store, &project, true, all_mapped()).await);
    let body = json!({"userData": {"email": "a@x.io"},
                      "attributionData": {"gclid": "G", "cid": "1.2", "msclkid": "M"}});
    let lead = create(&store, &project, body, 0).await.lead_id;
    let first = rate(&store, &project, lead, (customer, Some(1000)), 1).await;
    deliver_all(&store, 2).await;

    let lost = rate(&store, &project, lead, (ConversionId::Lost, None), 3).await;
    assert_eq!(lost.job.retracts.len(), 1);
    let retracted = &lost.job.retracts[0];
    assert_eq!(
        (
            retracted.conversion_event_id,
            retracted.converted_at,
            retracted.price
        ),
        (first.job.conversion_event_id, at(1), Some(1000))
    );
    assert_eq!(retracted.sent_to.len(), 10);
    assert_eq!(
        retracted.microsoft_ads_conversion.as_deref(),
        Some("Qualified lead")
    );
    for (kind, action, state, detail) in plan(&lost) {
        let expected = match kind {
            IntegrationKind::MicrosoftAds | IntegrationKind::Webhook => (Retract, Pending),
            _ => (Retract, Skipped),
        };
        assert_eq!((action, state), expected, "{kind}: {detail}");
    }
    deliver_all(&store, 4).await;

    let again = rate(&store, &project, lead, (customer, Some(1000)), 5).await;
    assert_eq!(again.job.conversion_event_id, first.job.conversion_event_id);
    for (kind, action, state, _) in plan(&again) {
        let resent = matches!(
            kind,
            IntegrationKind::MicrosoftAds | IntegrationKind::Webhook
        );
        let expected = if resent { Pending } else { Skipped };
        assert_eq!((action, state), (Send, expected), "{kind}");
    }
}
