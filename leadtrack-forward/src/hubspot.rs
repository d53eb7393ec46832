//! HubSpot syncs ([`leadtrack_core::crm`]): each event of a project connected to HubSpot
//! upserts the lead's contact, and a rating creates or moves the lead's one deal
//! (`leadtrack_platforms::hubspot` speaks HubSpot's API). What HubSpot calls the lead is
//! recorded as soon as it answers, so a re-rating moves the deal made before.

use leadtrack_core::LeadWebhooks;
use leadtrack_core::StoreResult;
use leadtrack_core::api::WebhookBody;
use leadtrack_core::webhook::ClaimedWebhookEvent;
use leadtrack_outbound::Outbound;
use leadtrack_platforms::hubspot::{self, Hubspot, contact_properties, deal_properties};
use leadtrack_platforms::outcome::Outcome;

/// Syncs `claimed`'s lead (its `event`, read) to the HubSpot account of its sync: the outcome of the attempt,
/// or the store's failure to read or record what HubSpot calls the lead.
pub(crate) async fn sync<S: LeadWebhooks>(
    store: &S,
    http: &Outbound,
    claimed: &ClaimedWebhookEvent,
    event: &WebhookBody,
) -> StoreResult<Outcome> {
    let hook = &claimed.webhook;
    let hubspot = Hubspot {
        http,
        api: &hook.url,
        token: &hook.secret,
    };
    let lead = &event.lead;
    let mut record = store.crm_record(hook.id, claimed.lead_id).await?;
    let properties = contact_properties(lead);
    if !["email", "firstname", "lastname"]
        .iter()
        .any(|p| properties.contains_key(*p))
    {
        return Ok(Outcome::skipped("HubSpot needs the lead's email or name"));
    }
    let contact = match hubspot
        .contact(properties, record.contact_id.as_deref())
        .await
    {
        Ok(id) => id,
        Err(outcome) => return Ok(outcome),
    };
    if record.contact_id.as_ref() != Some(&contact) {
        record.contact_id = Some(contact.clone());
        store
            .save_crm_record(hook.id, claimed.lead_id, &record)
            .await?;
    }
    let Some(rating) = &event.conversion else {
        return Ok(Outcome::Delivered { status: 200 });
    };
    let options = hook.crm.clone().unwrap_or_default();
    let label = rating.label.as_ref().map(|label| label.name.as_str());
    let Some(stage) = hubspot::stage(&options, label) else {
        let label = label.unwrap_or("lost");
        return Ok(Outcome::skipped(format!(
            "no deal stage is mapped to {label:?}: the contact is kept, no deal is made"
        )));
    };
    let price = (rating.price, rating.currency.as_str());
    let deal = deal_properties(lead, &options, stage, price);
    match hubspot
        .deal(deal, record.deal_id.as_deref(), &contact)
        .await
    {
        Ok(deal) if record.deal_id.as_ref() != Some(&deal) => {
            record.deal_id = Some(deal);
            store
                .save_crm_record(hook.id, claimed.lead_id, &record)
                .await?;
            Ok(Outcome::Delivered { status: 200 })
        }
        Ok(_) => Ok(Outcome::Delivered { status: 200 }),
        Err(outcome) => Ok(outcome),
    }
}
