//! Pipedrive syncs ([`leadtrack_core::crm`]): each event of a project connected to
//! Pipedrive finds or makes the lead's person, and a new lead becomes a Pipedrive lead with
//! a note of where it came from; a rating makes the lead's one deal (archiving the
//! Pipedrive lead) or moves it, and `lost` marks it lost (`leadtrack_platforms::pipedrive`
//! speaks Pipedrive's API). Each id Pipedrive answers is recorded before the next call, so
//! a retry never makes a second person, lead or deal.

use leadtrack_core::api::{Lead, WebhookBody};
use leadtrack_core::crm::CrmRecord;
use leadtrack_core::webhook::ClaimedWebhookEvent;
use leadtrack_core::{LeadWebhooks, StoreResult};
use leadtrack_outbound::Outbound;
use leadtrack_platforms::outcome::Outcome;
use leadtrack_platforms::pipedrive::{DealChange, Pipedrive, note, title};

/// A step of a sync: its value, or the outcome that ends the attempt; or the store's
/// failure.
type Step<T> = StoreResult<Result<T, Outcome>>;

/// Syncs `claimed`'s lead (its `event`, read) to the Pipedrive account of its sync: the
/// outcome of the attempt, or the store's failure to read or record what Pipedrive calls
/// the lead.
pub(crate) async fn sync<S: LeadWebhooks>(
    store: &S,
    http: &Outbound,
    claimed: &ClaimedWebhookEvent,
    event: &WebhookBody,
) -> StoreResult<Outcome> {
    let hook = &claimed.webhook;
    let mut sync = Sync {
        store,
        pipedrive: Pipedrive {
            http,
            api: &hook.url,
            token: &hook.secret,
        },
        claimed,
        record: store.crm_record(hook.id, claimed.lead_id).await?,
    };
    let person = match sync.person(&event.lead).await? {
        Ok(person) => person,
        Err(outcome) => return Ok(outcome),
    };
    if let Err(outcome) = sync.lead(&event.lead, &person).await? {
        return Ok(outcome);
    }
    let Some(rating) = &event.conversion else {
        return Ok(Outcome::Delivered { status: 200 });
    };
    let options = hook.crm.clone().unwrap_or_default();
    let label = rating.label.as_ref().map(|label| label.name.as_str());
    // Connecting names the pipeline: the one chosen, or the account's first.
    let Some(pipeline) = options.pipeline.as_deref().and_then(|p| p.parse().ok()) else {
        return Ok(Outcome::Failed {
            status: None,
            error: "the sync names no pipeline: connect Pipedrive again".to_owned(),
        });
    };
    let change = DealChange {
        title: &title(&event.lead),
        pipeline,
        stage: options.stage(label).and_then(|stage| stage.parse().ok()),
        value: (rating.price, rating.currency.as_str()),
        lost: label.is_none(),
    };
    sync.deal(&change, &person, label).await
}

/// One attempt's sync of a lead, with what Pipedrive calls it so far.
struct Sync<'a, S> {
    store: &'a S,
    pipedrive: Pipedrive<'a>,
    claimed: &'a ClaimedWebhookEvent,
    record: CrmRecord,
}

impl<S: LeadWebhooks> Sync<'_, S> {
    /// Records what Pipedrive calls the lead now.
    async fn keep(&self) -> StoreResult<()> {
        let (hook, lead) = (self.claimed.webhook.id, self.claimed.lead_id);
        self.store.save_crm_record(hook, lead, &self.record).await
    }

    /// The lead's person: recorded, or found or made (and recorded).
    async fn person(&mut self, lead: &Lead) -> Step<String> {
        if let Some(person) = &self.record.contact_id {
            return Ok(Ok(person.clone()));
        }
        let person = match self.pipedrive.person(lead).await {
            Ok(person) => person,
            Err(outcome) => return Ok(Err(outcome)),
        };
        self.record.contact_id = Some(person.clone());
        self.keep().await?;
        Ok(Ok(person))
    }

    /// The lead's Pipedrive lead, with its note, made (and recorded) unless it was, or the
    /// lead has a deal already.
    async fn lead(&mut self, lead: &Lead, person: &str) -> Step<()> {
        if self.record.crm_lead_id.is_some() || self.record.deal_id.is_some() {
            return Ok(Ok(()));
        }
        let id = match self.pipedrive.create_lead(&title(lead), person).await {
            Ok(id) => id,
            Err(outcome) => return Ok(Err(outcome)),
        };
        self.record.crm_lead_id = Some(id.clone());
        self.keep().await?;
        Ok(self.pipedrive.add_note(&id, &note(lead)).await)
    }

    /// The lead's deal after `change`: moved, or made (and recorded) with the Pipedrive
    /// lead archived; a rating with no stage makes none.
    async fn deal(
        &mut self,
        change: &DealChange<'_>,
        person: &str,
        label: Option<&str>,
    ) -> StoreResult<Outcome> {
        let delivered = |done: Result<(), Outcome>| match done {
            Ok(()) => Outcome::Delivered { status: 200 },
            Err(outcome) => outcome,
        };
        if let Some(deal) = &self.record.deal_id {
            return Ok(delivered(self.pipedrive.update_deal(deal, change).await));
        }
        if change.stage.is_none() {
            return Ok(Outcome::skipped(match label {
                None => {
                    "lost before any deal was made: the Pipedrive lead stays as it is".to_owned()
                }
                Some(label) => format!(
                    "no deal stage is mapped to {label:?}: the person and lead are kept, no deal is made"
                ),
            }));
        }
        let deal = match self.pipedrive.create_deal(change, person).await {
            Ok(deal) => deal,
            Err(outcome) => return Ok(outcome),
        };
        self.record.deal_id = Some(deal);
        self.keep().await?;
        Ok(match self.record.crm_lead_id.as_deref() {
            Some(from) => delivered(self.pipedrive.archive_lead(from).await),
            None => Outcome::Delivered { status: 200 },
        })
    }
}
