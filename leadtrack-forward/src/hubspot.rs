//! HubSpot syncs ([`leadtrack_core::crm`]): each event of a project connected to HubSpot
//! upserts the lead's contact, and a rating creates or moves the lead's one deal
//! (`leadtrack_platforms::hubspot` speaks HubSpot's API).
//!
//! The due events of a sync go together: their contacts in one batch call per endpoint,
//! then their deals, up to 100 inputs a call, paced to HubSpot's request quota. A lead's
//! (and a person's) later events wait for a later round, so each call names a record once
//! and a rating finds the deal its earlier rating made. A call HubSpot refuses whole for
//! one bad input (`400`) is halved until that input is alone, so the others go through.
//! What HubSpot calls each lead is recorded as soon as it answers, so a retry or a
//! re-rating moves the deal made before.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use leadtrack_core::LeadWebhooks;
use leadtrack_core::StoreResult;
use leadtrack_core::api::{Lead, WebhookBody};
use leadtrack_core::crm::CrmRecord;
use leadtrack_core::webhook::ClaimedWebhookEvent;
use leadtrack_platforms::hubspot::{
    self, BATCH, Endpoint, Hubspot, QUOTA, contact_input, contact_properties, deal_input,
    deal_properties,
};
use leadtrack_platforms::outcome::Outcome;
use serde_json::Value;

use crate::deliverer::Deliverer;
use crate::quota::{Pacer, Quota};

/// Who a lead's person is to HubSpot: their email (lowercased), else their phone's digits,
/// else only this lead.
#[derive(PartialEq, Eq, Hash)]
enum Person {
    Email(String),
    Phone(String),
    Lead(i64),
}

impl Person {
    fn of(lead: &Lead) -> Self {
        match (&lead.email, &lead.phone) {
            (Some(email), _) => Self::Email(email.to_lowercase()),
            (None, Some(phone)) => {
                Self::Phone(phone.chars().filter(char::is_ascii_digit).collect())
            }
            (None, None) => Self::Lead(lead.id.0),
        }
    }
}

/// A claimed event of a HubSpot sync, with its body read.
pub(crate) type Event = (ClaimedWebhookEvent, WebhookBody);

/// Syncs `events` (of one sync, in the order they happened) to its HubSpot account: the
/// outcome of each, in order, or the store's failure to read or record what HubSpot calls
/// a lead.
pub(crate) async fn sync<S: LeadWebhooks>(
    store: &S,
    deliverer: &Deliverer,
    events: &[Event],
) -> StoreResult<Vec<Outcome>> {
    let Some((first, _)) = events.first() else {
        return Ok(Vec::new());
    };
    let hook = &first.webhook;
    let calls = Calls {
        hubspot: Hubspot {
            http: &deliverer.http,
            api: &hook.url,
            token: &hook.secret,
        },
        pacer: &deliverer.pacer,
        scope: format!("hubspot:{}", hook.id),
    };
    let mut outcomes = vec![None; events.len()];
    for round in rounds(events) {
        sync_round(store, &calls, events, &round, &mut outcomes).await?;
    }
    let delivered = || Outcome::Delivered { status: 200 };
    Ok(outcomes
        .into_iter()
        .map(|o| o.unwrap_or_else(delivered))
        .collect())
}

/// The events in rounds: each event in the first round after every earlier event of its
/// lead or its person, so no round names a lead or a person twice.
fn rounds(events: &[Event]) -> Vec<Vec<usize>> {
    #[derive(PartialEq, Eq, Hash)]
    enum Key {
        Lead(i64),
        Person(Person),
    }
    let mut last: HashMap<Key, usize> = HashMap::new();
    let mut rounds: Vec<Vec<usize>> = Vec::new();
    for (index, (claimed, event)) in events.iter().enumerate() {
        let keys = [
            Key::Lead(claimed.lead_id.0),
            Key::Person(Person::of(&event.lead)),
        ];
        let round = keys
            .iter()
            .filter_map(|key| last.get(key))
            .max()
            .map_or(0, |round| round + 1);
        for key in keys {
            last.insert(key, round);
        }
        if rounds.len() <= round {
            rounds.resize_with(round + 1, Vec::new);
        }
        rounds[round].push(index);
    }
    rounds
}

/// Syncs the events `round` names: their contacts, then the deals of those rated. Sets
/// the outcome of each event that did not go through.
async fn sync_round<S: LeadWebhooks>(
    store: &S,
    calls: &Calls<'_>,
    events: &[Event],
    round: &[usize],
    outcomes: &mut [Option<Outcome>],
) -> StoreResult<()> {
    let hook = &events[round[0]].0.webhook;
    let mut records: BTreeMap<usize, CrmRecord> = BTreeMap::new();
    let mut contacts = Vec::new();
    for &index in round {
        let (claimed, event) = &events[index];
        let properties = contact_properties(&event.lead);
        if !["email", "firstname", "lastname"]
            .iter()
            .any(|p| properties.contains_key(*p))
        {
            outcomes[index] = Some(Outcome::skipped("HubSpot needs the lead's email or name"));
            continue;
        }
        let record = store.crm_record(hook.id, claimed.lead_id).await?;
        contacts.push((
            index,
            contact_input(properties, record.contact_id.as_deref()),
        ));
        records.insert(index, record);
    }
    let options = hook.crm.clone().unwrap_or_default();
    let mut deals = Vec::new();
    for (index, written) in calls.write(events, contacts).await {
        let contact = match written {
            Ok(contact) => contact,
            Err(outcome) => {
                outcomes[index] = Some(outcome);
                continue;
            }
        };
        let Some(record) = records.get_mut(&index) else {
            continue;
        };
        if record.contact_id.as_ref() != Some(&contact) {
            record.contact_id = Some(contact.clone());
            store
                .save_crm_record(hook.id, events[index].0.lead_id, record)
                .await?;
        }
        let Some(rating) = &events[index].1.conversion else {
            continue;
        };
        let label = rating.label.as_ref().map(|label| label.name.as_str());
        let Some(stage) = hubspot::stage(&options, label) else {
            let label = label.unwrap_or("lost");
            outcomes[index] = Some(Outcome::skipped(format!(
                "no deal stage is mapped to {label:?}: the contact is kept, no deal is made"
            )));
            continue;
        };
        let price = (rating.price, rating.currency.as_str());
        let properties = deal_properties(&events[index].1.lead, &options, stage, price);
        let input = deal_input(properties, record.deal_id.as_deref(), &contact);
        deals.push((index, input));
    }
    for (index, written) in calls.write(events, deals).await {
        match (written, records.get_mut(&index)) {
            (Ok(deal), Some(record)) if record.deal_id.as_ref() != Some(&deal) => {
                record.deal_id = Some(deal);
                store
                    .save_crm_record(hook.id, events[index].0.lead_id, record)
                    .await?;
            }
            (Ok(_), _) => {}
            (Err(outcome), _) => outcomes[index] = Some(outcome),
        }
    }
    Ok(())
}

/// An input of a batch call with its trace id.
type Traced = (String, Value);

/// A sync's calls to HubSpot, paced to its quota.
struct Calls<'a> {
    hubspot: Hubspot<'a>,
    pacer: &'a Pacer,
    /// The sync's quota scope.
    scope: String,
}

impl Calls<'_> {
    /// Writes `inputs` (each an event's, by index) in batch calls, one endpoint after the
    /// other: what each input wrote, or why it did not.
    async fn write(
        &self,
        events: &[Event],
        inputs: Vec<(usize, (Endpoint, Value))>,
    ) -> Vec<(usize, Result<String, Outcome>)> {
        let mut by_endpoint: BTreeMap<Endpoint, Vec<(usize, Traced)>> = BTreeMap::new();
        for (index, (endpoint, input)) in inputs {
            // The delivery's id traces the input to its result.
            let trace = events[index].0.id.to_string();
            by_endpoint
                .entry(endpoint)
                .or_default()
                .push((index, (trace, input)));
        }
        let mut written = Vec::new();
        for (endpoint, inputs) in by_endpoint {
            for chunk in inputs.chunks(BATCH) {
                let (indices, chunk): (Vec<usize>, Vec<Traced>) = chunk.iter().cloned().unzip();
                let results = self.halving(endpoint, &chunk).await;
                written.extend(indices.into_iter().zip(results));
            }
        }
        written
    }

    /// Writes `inputs` in one call within the quota; a call refused whole (`400`) is sent
    /// again in halves, so one bad input fails alone.
    fn halving<'b>(
        &'b self,
        endpoint: Endpoint,
        inputs: &'b [Traced],
    ) -> BoxFuture<'b, Vec<Result<String, Outcome>>> {
        async move {
            if let Err(wait) = self.pacer.acquire(&self.scope, Some(quota())).await {
                let held = Outcome::Retry {
                    status: None,
                    error: format!(
                        "HubSpot asked to slow down, or its request quota is spent: not sent; \
                         the next request may go in {} s",
                        wait.as_secs()
                    ),
                    retry_after: Some(wait),
                };
                return vec![Err(held); inputs.len()];
            }
            let results = self.hubspot.write(endpoint, inputs).await;
            if let Some(Err(Outcome::Retry {
                status: Some(429),
                retry_after: Some(wait),
                ..
            })) = results.first()
            {
                self.pacer.hold(&self.scope, *wait);
            }
            let refused_whole = inputs.len() > 1
                && results.iter().all(|result| {
                    matches!(
                        result,
                        Err(Outcome::Failed {
                            status: Some(400),
                            ..
                        })
                    )
                });
            if !refused_whole {
                return results;
            }
            let (left, right) = inputs.split_at(inputs.len() / 2);
            let mut results = self.halving(endpoint, left).await;
            results.extend(self.halving(endpoint, right).await);
            results
        }
        .boxed()
    }
}

/// HubSpot's request quota ([`QUOTA`]).
fn quota() -> Quota {
    let (per_window, seconds, per_day) = QUOTA;
    Quota {
        per_window,
        window: Duration::from_secs(seconds),
        per_day,
    }
}

#[cfg(test)]
mod tests {
    use tokio::time::Instant;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_sync_makes_at_most_100_calls_in_any_ten_seconds() {
        let pacer = Pacer::default();
        let start = Instant::now();
        for _ in 0..100 {
            pacer.acquire("hubspot:a", Some(quota())).await.unwrap();
        }
        assert_eq!(start.elapsed(), Duration::ZERO, "the first 100 go at once");
        pacer.acquire("hubspot:a", Some(quota())).await.unwrap();
        assert_eq!(
            start.elapsed(),
            Duration::from_secs(10),
            "the 101st waits for the first's ten seconds"
        );
        pacer.acquire("hubspot:b", Some(quota())).await.unwrap();
        assert_eq!(
            start.elapsed(),
            Duration::from_secs(10),
            "another sync has its own"
        );
    }
}
