//! One identity per conversion. A lead's conversion is (lead, label), or (lead, `lost`):
//! every job of it carries the id of its first job and the time of its first rating, so
//! each platform sees one conversion however often the lead is rated. Rated again, it
//! sends nothing where the platform already has it at that price, and restates the value
//! where the platform can take a new one ([`again`]).

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::integration::Platform;
use strum::VariantArray;

use crate::job::{JobRecord, PlannedDelivery, Retraction, Skip};
use crate::label::ConversionLabel;
use crate::types::{
    AttemptOutcome, ConversionId, DeliveryAction, DeliveryState, IntegrationKind, JobState,
};

/// What a lead's earlier jobs say of one of its conversions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Earlier {
    /// The conversion's id, as its first job set it.
    pub event_id: Uuid,
    /// When it was first rated.
    pub converted_at: DateTime<Utc>,
    /// Each platform that has it, with the value it has: the last one delivered.
    pub sent: Vec<Sent>,
}

/// One platform's copy of a conversion: the price it was last sent or restated with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sent {
    /// The integration.
    pub integration: IntegrationKind,
    /// The price it has, in cents.
    pub price: Option<i64>,
    /// When it was delivered.
    pub at: DateTime<Utc>,
}

impl Earlier {
    /// What the lead's job `records` say of `conversion`; `None` when none of its jobs
    /// stands. A cancelled job never counts: an undo leaves nothing behind.
    pub fn of(records: &[JobRecord], conversion: ConversionId) -> Option<Self> {
        let mut jobs: Vec<&JobRecord> = records
            .iter()
            .filter(|r| r.job.conversion_id == conversion && r.job.state != JobState::Cancelled)
            .collect();
        jobs.sort_by_key(|r| (r.job.created_at, r.job.id.0));
        let first = &jobs.first()?.job;
        let mut sent: Vec<Sent> = Vec::new();
        for record in &jobs {
            for (delivery, attempts) in &record.deliveries {
                if delivery.state != DeliveryState::Delivered
                    || delivery.action == DeliveryAction::Retract
                {
                    continue;
                }
                let at = attempts
                    .iter()
                    .rev()
                    .find(|a| a.outcome == AttemptOutcome::Delivered)
                    .map_or(record.job.created_at, |a| a.at);
                sent.retain(|s| s.integration != delivery.integration);
                sent.push(Sent {
                    integration: delivery.integration,
                    price: record.job.price,
                    at,
                });
            }
        }
        let retracted = retracted(records, first.conversion_event_id);
        sent.retain(|s| {
            !retracted
                .iter()
                .any(|(kind, at)| *kind == s.integration && *at >= s.at)
        });
        Some(Self {
            event_id: first.conversion_event_id,
            converted_at: first.converted_at,
            sent,
        })
    }

    /// What `kind`'s platform has of the conversion, if it has it.
    pub fn sent_to(&self, kind: IntegrationKind) -> Option<&Sent> {
        self.sent.iter().find(|sent| sent.integration == kind)
    }
}

/// Where and when the conversion `event_id` was withdrawn: each delivered retraction of a
/// later `lost` job that names it.
fn retracted(records: &[JobRecord], event_id: Uuid) -> Vec<(IntegrationKind, DateTime<Utc>)> {
    records
        .iter()
        .filter(|r| {
            r.job
                .retracts
                .iter()
                .any(|x| x.conversion_event_id == event_id)
        })
        .flat_map(|r| &r.deliveries)
        .filter(|(d, _)| d.action == DeliveryAction::Retract && d.state == DeliveryState::Delivered)
        .filter_map(|(d, attempts)| Some((d.integration, attempts.last()?.at)))
        .collect()
}

/// The lead's label conversions that some platform still has, for a `lost` rating to
/// withdraw: each with the label as it is now (`labels`, the project's).
pub fn retractions(records: &[JobRecord], labels: &[ConversionLabel]) -> Vec<Retraction> {
    let mut seen: Vec<ConversionId> = Vec::new();
    let mut retractions = Vec::new();
    for record in records {
        let id = record.job.conversion_id;
        let ConversionId::Label(label_id) = id else {
            continue;
        };
        if seen.contains(&id) {
            continue;
        }
        seen.push(id);
        let Some(earlier) = Earlier::of(records, id).filter(|e| !e.sent.is_empty()) else {
            continue;
        };
        let label = labels.iter().find(|label| label.id == label_id);
        let last = earlier.sent.iter().max_by_key(|sent| sent.at);
        retractions.push(Retraction {
            label_id,
            label_name: label.map_or_else(String::new, |label| label.name.clone()),
            mark_as_done: label.is_some_and(|label| label.mark_as_done),
            conversion_event_id: earlier.event_id,
            converted_at: earlier.converted_at,
            price: last.and_then(|sent| sent.price),
            microsoft_ads_conversion: label
                .and_then(|label| label.mapping.microsoft_ads_conversion.clone()),
            sent_to: earlier.sent.iter().map(|sent| sent.integration).collect(),
        });
    }
    retractions
}

/// Whether `kind`'s platform can withdraw a conversion it has: Microsoft Advertising
/// (`ApplyOfflineConversionAdjustments` with `Retract`) and the conversion webhook
/// (`retracted: true`). Google Ads' Data Manager API has no retraction.
pub fn can_retract(kind: IntegrationKind) -> bool {
    matches!(
        kind,
        IntegrationKind::MicrosoftAds | IntegrationKind::Webhook
    )
}

/// `planned` (a `lost` rating's deliveries) with the retractions of `retracts`: a platform
/// that has a label conversion and can withdraw it gets a delivery that does (and sends
/// `lost` too where `lost` maps to it); one that cannot is told nothing, and its delivery
/// says why.
pub fn with_retractions(
    mut planned: Vec<PlannedDelivery>,
    retracts: &[Retraction],
) -> Vec<PlannedDelivery> {
    for kind in IntegrationKind::VARIANTS {
        let holding: Vec<&Retraction> = retracts
            .iter()
            .filter(|r| r.sent_to.contains(kind))
            .collect();
        if holding.is_empty() {
            continue;
        }
        let existing = planned.iter_mut().find(|p| p.integration == *kind);
        match (existing, can_retract(*kind)) {
            (Some(delivery), true) => {
                delivery.action = DeliveryAction::Retract;
                delivery.skip = None;
            }
            (Some(_), false) => {}
            (None, retracts) => planned.push(PlannedDelivery {
                integration: *kind,
                action: DeliveryAction::Retract,
                skip: (!retracts).then(|| Skip {
                    field: "",
                    reason: format!(
                        "{} cannot retract a conversion: it keeps {}",
                        Platform::of(*kind).title,
                        holding
                            .iter()
                            .map(|r| r.label_name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                }),
            }),
        }
    }
    planned.sort_by_key(|p| p.integration);
    planned
}

/// Whether `kind`'s platform takes a new value for a conversion it has: Google Ads
/// (conversion adjustments), Microsoft Advertising (`ApplyOfflineConversionAdjustments`
/// with `Restate`) and the conversion webhook (`restated: true`). GA4, Meta, LinkedIn,
/// TikTok, Reddit, Pinterest and Snapchat deduplicate a conversion sent again and keep the
/// first value.
pub fn can_restate(kind: IntegrationKind) -> bool {
    matches!(
        kind,
        IntegrationKind::GoogleAds | IntegrationKind::MicrosoftAds | IntegrationKind::Webhook
    )
}

/// `planned`, for a conversion `earlier` says the platform may already have, rated again at
/// `price`: skipped when it has it at that price, a restatement when the price is new and
/// the platform takes one, skipped with the reason when it does not.
pub fn again(planned: PlannedDelivery, earlier: &Earlier, price: Option<i64>) -> PlannedDelivery {
    let Some(sent) = earlier.sent_to(planned.integration) else {
        return planned;
    };
    let on = sent.at.format("%Y-%m-%d %H:%M UTC");
    let (action, skip) = if sent.price == price {
        (
            DeliveryAction::Send,
            Some(format!("Already sent on {on}, at this price")),
        )
    } else if can_restate(planned.integration) {
        (DeliveryAction::Restate, None)
    } else {
        let reason = format!(
            "{} cannot restate a conversion's value: it keeps the value sent on {on}",
            Platform::of(planned.integration).title
        );
        (DeliveryAction::Restate, Some(reason))
    };
    PlannedDelivery {
        integration: planned.integration,
        action,
        skip: skip.map(|reason| Skip { field: "", reason }),
    }
}
