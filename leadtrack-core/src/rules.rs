//! What a rating does: which integrations a conversion goes to, which it skips and why
//! (the warnings of CONTRACT.md section 5), and the status the lead ends in (section 6).

use chrono::{DateTime, Duration, Utc};
use strum::VariantArray;
use uuid::Uuid;

use crate::conversion::{self, Earlier};
use crate::job::{NewJob, PlannedDelivery, Retraction, Skip, Warning};
use crate::label::{ConversionLabel, LabelMapping, mapping_for};
use crate::lead::StoredLead;
use crate::project::Project;
use crate::types::{ConversionId, DeliveryAction, IntegrationKind, LeadStatus};

/// Google Ads accepts conversions for clicks at most this old.
pub fn google_ads_click_window() -> Duration {
    Duration::days(90)
}

/// Microsoft Advertising accepts offline conversions for clicks at most this old
/// ("The ConversionTime must be ... within 90 days of the click").
pub fn microsoft_ads_click_window() -> Duration {
    Duration::days(90)
}

/// Why `lead` cannot be sent to `kind` at `now`, or `None` when it can.
pub fn skip_reason(kind: IntegrationKind, lead: &StoredLead, now: DateTime<Utc>) -> Option<Skip> {
    let data = &lead.data;
    let has = |name: &str| data.attribution(name).is_some();
    match kind {
        IntegrationKind::GoogleAds => {
            if !(has("gclid") || has("wbraid") || has("gbraid")) {
                Some(Skip {
                    field: "gclid",
                    reason: "The lead has no Google Ads click id (gclid, wbraid or gbraid), so Google Ads cannot attribute the conversion".to_owned(),
                })
            } else if now - lead.created_at > google_ads_click_window() {
                Some(Skip {
                    field: "gclid",
                    reason: "The lead is older than 90 days, past Google Ads' click window, so Google Ads will not accept the conversion".to_owned(),
                })
            } else {
                None
            }
        }
        IntegrationKind::MicrosoftAds => {
            if !has("msclkid") {
                Some(Skip {
                    field: "msclkid",
                    reason: "The lead has no Microsoft click id (msclkid), so Microsoft Advertising cannot attribute the conversion".to_owned(),
                })
            } else if now - lead.created_at > microsoft_ads_click_window() {
                Some(Skip {
                    field: "msclkid",
                    reason: "The lead is older than 90 days, past Microsoft Advertising's click window, so it will not accept the conversion".to_owned(),
                })
            } else {
                None
            }
        }
        IntegrationKind::Linkedin => (data.user("email").is_none() && !has("li_fat_id")).then(|| Skip {
            field: "user_data",
            reason: "The lead has no email and no LinkedIn click id (li_fat_id), so LinkedIn cannot match the conversion to a member".to_owned(),
        }),
        IntegrationKind::Ga4 => (!has("cid")).then(|| Skip {
            field: "cid",
            reason: "The lead has no Google Analytics client id (cid), so the conversion cannot be sent to Google Analytics 4".to_owned(),
        }),
        IntegrationKind::Meta => {
            let identified = data.user("email").is_some()
                || data.user("phone").is_some()
                || has("fbp")
                || has("fbc")
                || has("fbclid");
            (!identified).then(|| Skip {
                field: "user_data",
                reason: "The lead has no email, phone, fbp, fbc or fbclid, so Meta cannot match the conversion to a person".to_owned(),
            })
        }
        IntegrationKind::Tiktok => {
            let identified = data.user("email").is_some()
                || data.user("phone").is_some()
                || has("ttclid")
                || has("_ttp");
            (!identified).then(|| Skip {
                field: "user_data",
                reason: "The lead has no email, phone, TikTok click id (ttclid) or TikTok cookie (_ttp), so TikTok cannot match the conversion to a person".to_owned(),
            })
        }
        IntegrationKind::Reddit => {
            let identified = data.user("email").is_some()
                || data.user("phone").is_some()
                || has("rdt_cid")
                || has("_rdt_uuid");
            (!identified).then(|| Skip {
                field: "user_data",
                reason: "The lead has no email, phone, Reddit click id (rdt_cid) or Reddit cookie (_rdt_uuid), so Reddit cannot match the conversion to a person".to_owned(),
            })
        }
        IntegrationKind::Pinterest => {
            let identified = data.user("email").is_some()
                || data.user("phone").is_some()
                || data.epik().is_some();
            (!identified).then(|| Skip {
                field: "user_data",
                reason: "The lead has no email, phone or Pinterest click id (epik, or its _epik cookie), so Pinterest cannot match the conversion to a person".to_owned(),
            })
        }
        IntegrationKind::Snapchat => {
            let device = &data.device_data;
            let identified = data.user("email").is_some()
                || data.user("phone").is_some()
                || (device.ip_address.is_some() && device.user_agent.is_some());
            (!identified).then(|| Skip {
                field: "user_data",
                reason: "The lead has no email, phone, nor both an IP address and a user agent, so Snapchat cannot match the conversion to a person".to_owned(),
            })
        }
        IntegrationKind::Webhook => None,
    }
}

/// The warnings of a conversion queued now: one per integration that is connected, mapped
/// by `mapping`, and will be skipped for this lead.
pub fn warnings(
    lead: &StoredLead,
    connected: &[IntegrationKind],
    mapping: &LabelMapping,
    now: DateTime<Utc>,
) -> Vec<Warning> {
    plan_deliveries(lead, connected, mapping, now)
        .into_iter()
        .filter_map(|planned| {
            planned.skip.map(|skip| Warning {
                integration: planned.integration,
                reason: skip.reason,
                field: skip.field.to_owned(),
                timestamp: now,
            })
        })
        .collect()
}

/// The deliveries of a conversion: the integrations connected and mapped, in
/// [`IntegrationKind`] order, each with its skip reason if any.
pub fn plan_deliveries(
    lead: &StoredLead,
    connected: &[IntegrationKind],
    mapping: &LabelMapping,
    now: DateTime<Utc>,
) -> Vec<PlannedDelivery> {
    IntegrationKind::VARIANTS
        .iter()
        .copied()
        .filter(|kind| connected.contains(kind) && mapping.maps(*kind))
        .map(|integration| PlannedDelivery {
            integration,
            action: DeliveryAction::Send,
            skip: skip_reason(integration, lead, now),
        })
        .collect()
}

/// The status a lead takes when its conversion job is done.
pub fn final_status(conversion: ConversionId, label: Option<&ConversionLabel>) -> LeadStatus {
    match (conversion, label) {
        (ConversionId::Lost, _) => LeadStatus::Lost,
        (_, Some(label)) if label.mark_as_done => LeadStatus::Rated,
        _ => LeadStatus::Open,
    }
}

/// What a rating rates: the conversion, its label (`None` only for `lost`), the price
/// given (else the lead's), and what the lead's earlier jobs say of the conversion.
#[derive(Clone, Copy, Debug)]
pub struct Rated<'a> {
    /// The label or `lost`.
    pub conversion_id: ConversionId,
    /// The label, once the store has checked it exists.
    pub label: Option<&'a ConversionLabel>,
    /// The price the update gives, in cents.
    pub price: Option<i64>,
    /// The conversion's earlier jobs, if it has any.
    pub earlier: Option<&'a Earlier>,
    /// For `lost`: the label conversions it withdraws.
    pub retracts: &'a [Retraction],
}

/// Decides the job `rated` queues for `lead`, once the store has checked that the lead has
/// no unfinished job. A conversion rated before keeps its id and time, and each platform
/// that has it gets what [`conversion::again`] says.
///
/// Every backend calls this inside the transaction that queues the job, so the rules of
/// CONTRACT.md sections 5 and 6 live in one place.
pub fn plan_conversion(
    lead: &StoredLead,
    rated: Rated<'_>,
    project: &Project,
    connected: &[IntegrationKind],
    now: DateTime<Utc>,
) -> NewJob {
    let mapping = mapping_for(rated.label, &project.lost_mapping);
    let event_id = Uuid::new_v4();
    let price = rated.price.or(lead.price);
    let deliveries = plan_deliveries(lead, connected, mapping, now)
        .into_iter()
        .map(|planned| match rated.earlier {
            Some(earlier) => conversion::again(planned, earlier, price),
            None => planned,
        })
        .collect();
    let deliveries = conversion::with_retractions(deliveries, rated.retracts);
    NewJob {
        event_id,
        retracts: rated.retracts.to_vec(),
        conversion_event_id: rated.earlier.map_or(event_id, |e| e.event_id),
        converted_at: rated.earlier.map_or(now, |e| e.converted_at),
        conversion_id: rated.conversion_id,
        final_status: final_status(rated.conversion_id, rated.label),
        price,
        warnings: warnings(lead, connected, mapping, now),
        deliveries,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lead::LeadData;
    use crate::types::{LeadId, ProjectId};
    use chrono::TimeZone;
    use serde_json::json;

    fn lead(user: serde_json::Value, attribution: serde_json::Value, age_days: i64) -> StoredLead {
        StoredLead {
            id: LeadId(1),
            project_id: ProjectId(1),
            status: LeadStatus::Open,
            price: None,
            note: None,
            conversion_id: None,
            created_at: now() - Duration::days(age_days),
            data: LeadData {
                user_data: serde_json::from_value(user).unwrap(),
                attribution_data: serde_json::from_value(attribution).unwrap(),
                ..LeadData::default()
            },
            spam_reason: None,
            duplicate_of: None,
            duplicated: false,
            assignee: None,
        }
    }

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 6, 1, 12, 0, 0).unwrap()
    }

    fn all_mapped() -> LabelMapping {
        LabelMapping {
            ga4_event: Some("qualify_lead".into()),
            meta_event: Some("Lead".into()),
            google_ads_action: Some("123".into()),
            microsoft_ads_conversion: Some("Qualified".into()),
            linkedin_conversion: Some("urn:lla:llaPartnerConversion:1".into()),
            tiktok_event: Some("Qualified lead".into()),
            reddit_event: Some("Lead".into()),
            pinterest_event: Some("lead".into()),
            snapchat_event: Some("SIGN_UP".into()),
            webhook: true,
        }
    }

    fn fields(warnings: &[Warning]) -> Vec<(IntegrationKind, &str)> {
        warnings
            .iter()
            .map(|w| (w.integration, w.field.as_str()))
            .collect()
    }

    #[test]
    fn a_lead_with_everything_gets_no_warnings() {
        let lead = lead(
            json!({"email": "a@x.io"}),
            json!({"gclid": "G", "cid": "1.2", "msclkid": "M"}),
            3,
        );
        assert!(warnings(&lead, IntegrationKind::VARIANTS, &all_mapped(), now()).is_empty());
    }

    #[test]
    fn each_missing_field_warns_for_its_integration_in_table_order() {
        let lead = lead(json!({"firstName": "Ada"}), json!({}), 1);
        let found = warnings(&lead, IntegrationKind::VARIANTS, &all_mapped(), now());
        assert_eq!(
            fields(&found),
            [
                (IntegrationKind::GoogleAds, "gclid"),
                (IntegrationKind::Ga4, "cid"),
                (IntegrationKind::Meta, "user_data"),
                (IntegrationKind::MicrosoftAds, "msclkid"),
                (IntegrationKind::Linkedin, "user_data"),
                (IntegrationKind::Tiktok, "user_data"),
                (IntegrationKind::Reddit, "user_data"),
                (IntegrationKind::Pinterest, "user_data"),
                (IntegrationKind::Snapchat, "user_data"),
            ]
        );
        assert!(
            found
                .iter()
                .all(|w| w.timestamp == now() && !w.reason.is_empty())
        );
    }

    #[test]
    fn braid_ids_count_as_google_click_ids() {
        for key in ["wbraid", "gbraid"] {
            let lead = lead(json!({}), json!({ key: "B" }), 1);
            assert!(skip_reason(IntegrationKind::GoogleAds, &lead, now()).is_none());
        }
    }

    #[test]
    fn google_ads_warns_for_leads_past_the_click_window() {
        let fresh = lead(json!({}), json!({"gclid": "G"}), 90);
        assert!(skip_reason(IntegrationKind::GoogleAds, &fresh, now()).is_none());
        let old = lead(json!({}), json!({"gclid": "G"}), 91);
        let skip = skip_reason(IntegrationKind::GoogleAds, &old, now()).unwrap();
        assert_eq!(skip.field, "gclid");
        assert!(skip.reason.contains("90 days"));
    }

    #[test]
    fn microsoft_needs_its_click_id_within_90_days_and_linkedin_an_email_or_its_click_id() {
        let fresh = lead(json!({}), json!({"msclkid": "M"}), 90);
        assert!(skip_reason(IntegrationKind::MicrosoftAds, &fresh, now()).is_none());
        let old = lead(json!({}), json!({"msclkid": "M"}), 91);
        let skip = skip_reason(IntegrationKind::MicrosoftAds, &old, now()).unwrap();
        assert!(skip.reason.contains("90 days"), "{}", skip.reason);
        for (user, attribution) in [
            (json!({"email": "a@x.io"}), json!({})),
            (json!({}), json!({"li_fat_id": "L"})),
        ] {
            let lead = lead(user, attribution, 1);
            assert!(skip_reason(IntegrationKind::Linkedin, &lead, now()).is_none());
        }
        let phone_only = lead(json!({"phone": "+1 555"}), json!({}), 1);
        assert!(skip_reason(IntegrationKind::Linkedin, &phone_only, now()).is_some());
    }

    #[test]
    fn meta_accepts_any_of_email_phone_fbp_fbc() {
        for (user, attribution) in [
            (json!({"email": "a@x.io"}), json!({})),
            (json!({"phone": "+1 555"}), json!({})),
            (json!({}), json!({"fbp": "fb.1.2.3"})),
            (json!({}), json!({"fbc": "fb.1.2.abc"})),
            (json!({}), json!({"fbclid": "abc"})),
        ] {
            let lead = lead(user, attribution, 1);
            assert!(skip_reason(IntegrationKind::Meta, &lead, now()).is_none());
        }
    }

    #[test]
    fn tiktok_accepts_any_of_email_phone_its_click_id_or_cookie() {
        for (user, attribution) in [
            (json!({"email": "a@x.io"}), json!({})),
            (json!({"phone": "+1 555"}), json!({})),
            (json!({}), json!({"ttclid": "E.C.P.abc"})),
            (json!({}), json!({"_ttp": "2abc"})),
        ] {
            let lead = lead(user, attribution, 1);
            assert!(skip_reason(IntegrationKind::Tiktok, &lead, now()).is_none());
        }
        let anonymous = lead(json!({"firstName": "Ada"}), json!({"fbp": "F"}), 1);
        let skip = skip_reason(IntegrationKind::Tiktok, &anonymous, now()).unwrap();
        assert_eq!(skip.field, "user_data");
        assert!(skip.reason.contains("ttclid"), "{}", skip.reason);
    }

    #[test]
    fn reddit_accepts_any_of_email_phone_its_click_id_or_cookie() {
        for (user, attribution) in [
            (json!({"email": "a@x.io"}), json!({})),
            (json!({"phone": "+1 555"}), json!({})),
            (json!({}), json!({"rdt_cid": "3184742045291813272"})),
            (json!({}), json!({"_rdt_uuid": "1677712978045.b8f7eb7d"})),
        ] {
            let lead = lead(user, attribution, 1);
            assert!(skip_reason(IntegrationKind::Reddit, &lead, now()).is_none());
        }
        let anonymous = lead(json!({"firstName": "Ada"}), json!({"ttclid": "T"}), 1);
        let skip = skip_reason(IntegrationKind::Reddit, &anonymous, now()).unwrap();
        assert!(skip.reason.contains("rdt_cid"), "{}", skip.reason);
    }

    #[test]
    fn pinterest_accepts_an_email_a_phone_or_its_click_id_from_the_url_or_the_cookie() {
        for (user, attribution) in [
            (json!({"email": "a@x.io"}), json!({})),
            (json!({"phone": "+1 555"}), json!({})),
            (json!({}), json!({"epik": "dj0yJnU9"})),
            (json!({}), json!({"_epik": "dj0yJnU9"})),
        ] {
            let lead = lead(user, attribution, 1);
            assert!(skip_reason(IntegrationKind::Pinterest, &lead, now()).is_none());
        }
        let anonymous = lead(json!({"firstName": "Ada"}), json!({"rdt_cid": "R"}), 1);
        let skip = skip_reason(IntegrationKind::Pinterest, &anonymous, now()).unwrap();
        assert!(skip.reason.contains("epik"), "{}", skip.reason);
    }

    #[test]
    fn snapchat_needs_an_email_a_phone_or_both_ip_and_user_agent() {
        let mut browser = lead(json!({}), json!({"ScCid": "S"}), 1);
        assert!(skip_reason(IntegrationKind::Snapchat, &browser, now()).is_some());
        browser.data.device_data.ip_address = Some("203.0.113.9".into());
        assert!(skip_reason(IntegrationKind::Snapchat, &browser, now()).is_some());
        browser.data.device_data.user_agent = Some("Mozilla/5.0".into());
        assert!(skip_reason(IntegrationKind::Snapchat, &browser, now()).is_none());
        let phone = lead(json!({"phone": "+1 555"}), json!({}), 1);
        assert!(skip_reason(IntegrationKind::Snapchat, &phone, now()).is_none());
    }

    #[test]
    fn only_connected_and_mapped_integrations_are_considered() {
        let lead = lead(json!({}), json!({"fbp": "F"}), 1);
        let connected = [IntegrationKind::Ga4, IntegrationKind::GoogleAds];
        let mapping = LabelMapping {
            ga4_event: Some("x".into()),
            meta_event: Some("Lead".into()),
            ..LabelMapping::default()
        };
        let found = warnings(&lead, &connected, &mapping, now());
        assert_eq!(fields(&found), [(IntegrationKind::Ga4, "cid")]);
    }

    #[test]
    fn final_status_follows_the_label() {
        let label = |mark_as_done| ConversionLabel {
            id: uuid::Uuid::nil(),
            project_id: ProjectId(1),
            name: "L".into(),
            mark_as_done,
            mapping: LabelMapping::default(),
            created_at: now(),
            archived: false,
        };
        let id = ConversionId::Label(uuid::Uuid::nil());
        assert_eq!(final_status(id, Some(&label(true))), LeadStatus::Rated);
        assert_eq!(final_status(id, Some(&label(false))), LeadStatus::Open);
        assert_eq!(final_status(ConversionId::Lost, None), LeadStatus::Lost);
    }
}
