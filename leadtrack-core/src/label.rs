//! Conversion labels: what a CRM rating means for each ad platform, and the mapping that
//! `lost` uses in its place.
//!
//! A project's labels have an order, which its owners set: people rate with the labels that
//! are not archived, in that order, the first nine under the number keys 1 to 9. An archived
//! label is kept for the leads rated with it, their history, the reports and the API (which
//! still accepts its id); a label never used can be deleted.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::types::{IntegrationKind, ProjectId};

/// What a conversion sends to each integration. A label has one; so has `lost`, per project.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelMapping {
    /// GA4 event name, e.g. `qualify_lead`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ga4_event: Option<String>,
    /// Meta event name, e.g. `Lead` or a CRM stage name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta_event: Option<String>,
    /// Google Ads conversion action: its id, or its resource name
    /// `customers/{customer}/conversionActions/{id}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub google_ads_action: Option<String>,
    /// Microsoft Advertising offline conversion goal name, e.g. `Qualified lead`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microsoft_ads_conversion: Option<String>,
    /// LinkedIn conversion rule: its URN `urn:lla:llaPartnerConversion:{id}` (see
    /// [`linkedin_conversion_urn`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linkedin_conversion: Option<String>,
    /// TikTok event name: a stage of the advertiser's CRM funnel, e.g. `Qualified lead`,
    /// which they map to one of TikTok's standard events in Events Manager
    /// (<https://ads.tiktok.com/help/article/how-to-postback-signals-through-events-api>,
    /// step 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tiktok_event: Option<String>,
    /// Reddit event name: one of [`REDDIT_STANDARD_EVENTS`], else a custom event's name
    /// (at most 64 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reddit_event: Option<String>,
    /// Pinterest event name: one of [`PINTEREST_EVENTS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinterest_event: Option<String>,
    /// Snapchat event name, e.g. `PURCHASE` or `SIGN_UP`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapchat_event: Option<String>,
    /// Whether the webhook receives this conversion.
    #[serde(default)]
    pub webhook: bool,
}

impl LabelMapping {
    /// Whether this mapping sends anything to `kind`.
    pub fn maps(&self, kind: IntegrationKind) -> bool {
        match kind {
            IntegrationKind::Webhook => self.webhook,
            _ => self.named(kind).is_some(),
        }
    }

    /// What this mapping sends to `kind` by name (an event, a conversion action, goal or
    /// rule); `None` when it sends nothing there, and for the webhook, which receives the
    /// label itself.
    pub fn named(&self, kind: IntegrationKind) -> Option<&str> {
        match kind {
            IntegrationKind::GoogleAds => self.google_ads_action.as_deref(),
            IntegrationKind::Ga4 => self.ga4_event.as_deref(),
            IntegrationKind::Meta => self.meta_event.as_deref(),
            IntegrationKind::MicrosoftAds => self.microsoft_ads_conversion.as_deref(),
            IntegrationKind::Linkedin => self.linkedin_conversion.as_deref(),
            IntegrationKind::Tiktok => self.tiktok_event.as_deref(),
            IntegrationKind::Reddit => self.reddit_event.as_deref(),
            IntegrationKind::Pinterest => self.pinterest_event.as_deref(),
            IntegrationKind::Snapchat => self.snapchat_event.as_deref(),
            IntegrationKind::Webhook => None,
        }
    }

    /// The mapping with its values checked: a GA4 event name follows GA4's naming rules, and
    /// a LinkedIn conversion becomes its URN.
    pub fn validate(mut self) -> Result<Self, String> {
        if let Some(event) = &self.ga4_event {
            ga4_event_name(event)?;
        }
        if let Some(event) = &self.reddit_event {
            reddit_event_name(event)?;
        }
        if let Some(event) = &self.pinterest_event {
            pinterest_event_name(event)?;
        }
        if let Some(conversion) = &self.linkedin_conversion {
            self.linkedin_conversion = Some(linkedin_conversion_urn(conversion)?);
        }
        Ok(self)
    }

    /// This mapping sending to `platform` what that platform recommends for a label that
    /// marks its leads done (`done`) or for a step on the way, where it sends nothing there
    /// yet: GA4's lead-generation events `close_convert_lead` and `qualify_lead`
    /// (<https://developers.google.com/analytics/devguides/collection/ga4/reference/events#qualify_lead>),
    /// Meta's standard events `Purchase` and `Lead`
    /// (<https://developers.facebook.com/docs/meta-pixel/reference#standard-events>), and
    /// Reddit's of the same names ([`REDDIT_STANDARD_EVENTS`]), Pinterest's `checkout` and
    /// `lead` ([`PINTEREST_EVENTS`]), and the webhook. `None` when it sends there already, or when only the owner can choose
    /// (a Google Ads conversion action, a Microsoft Advertising goal, a LinkedIn rule: each
    /// is one of their own account's; a TikTok event: a stage of their own CRM funnel; a
    /// Snapchat event: theirs to name).
    pub fn adding(&self, platform: IntegrationKind, done: bool) -> Option<Self> {
        let event =
            |customer: &str, step: &str| Some(if done { customer } else { step }.to_owned());
        let mut mapping = self.clone();
        match platform {
            _ if self.maps(platform) => return None,
            IntegrationKind::Ga4 => mapping.ga4_event = event("close_convert_lead", "qualify_lead"),
            IntegrationKind::Meta => mapping.meta_event = event("Purchase", "Lead"),
            IntegrationKind::Reddit => mapping.reddit_event = event("Purchase", "Lead"),
            IntegrationKind::Pinterest => mapping.pinterest_event = event("checkout", "lead"),
            IntegrationKind::Webhook => mapping.webhook = true,
            IntegrationKind::GoogleAds
            | IntegrationKind::MicrosoftAds
            | IntegrationKind::Linkedin
            | IntegrationKind::Tiktok
            | IntegrationKind::Snapchat => {
                return None;
            }
        }
        Some(mapping)
    }

    /// What a new label sends to the `connected` platforms unless its owner says otherwise
    /// ([`LabelMapping::adding`] each of them).
    pub fn recommended(connected: &[IntegrationKind], done: bool) -> Self {
        connected.iter().fold(Self::default(), |mapping, platform| {
            mapping.adding(*platform, done).unwrap_or(mapping)
        })
    }

    /// The mapping of `lost` in a new project: only the webhook hears of lost leads.
    pub fn default_lost() -> Self {
        Self::webhook_only()
    }

    /// A mapping that sends to the conversion webhook alone.
    pub fn webhook_only() -> Self {
        Self {
            webhook: true,
            ..Self::default()
        }
    }
}

/// The most characters of a GA4 event name.
pub const GA4_EVENT_MAX: usize = 40;

/// The event names GA4 reserves for itself: an event sent with one is dropped. Listed under
/// "Reserved event names" in
/// <https://developers.google.com/analytics/devguides/collection/protocol/ga4/reference#reserved_names>.
pub const GA4_RESERVED_EVENTS: [&str; 32] = [
    "ad_activeview",
    "ad_click",
    "ad_exposure",
    "ad_impression",
    "ad_query",
    "ad_reward",
    "adunit_exposure",
    "app_background",
    "app_clear_data",
    "app_exception",
    "app_remove",
    "app_store_refund",
    "app_store_subscription_cancel",
    "app_store_subscription_convert",
    "app_store_subscription_renew",
    "app_update",
    "app_upgrade",
    "dynamic_link_app_open",
    "dynamic_link_app_update",
    "dynamic_link_first_open",
    "error",
    "first_open",
    "first_visit",
    "in_app_purchase",
    "notification_dismiss",
    "notification_foreground",
    "notification_open",
    "notification_receive",
    "os_update",
    "session_start",
    "session_start_with_rollout",
    "user_engagement",
];

/// The prefixes GA4 reserves (same page, "Reserved prefixes"), compared without case.
pub const GA4_RESERVED_PREFIXES: [&str; 4] = ["firebase_", "ga_", "google_", "gtag."];

/// Checks a GA4 event name against GA4's rules ("Event names must be 40 characters or
/// fewer, may only contain alpha-numeric characters and underscores, and must start with
/// an alphabetic character", and the reserved names and prefixes above). The error says
/// which rule it breaks, in words.
pub fn ga4_event_name(name: &str) -> Result<(), String> {
    let length = name.chars().count();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(format!("GA4 event {name:?} must start with a letter"));
    }
    if length > GA4_EVENT_MAX {
        return Err(format!(
            "GA4 event {name:?} is {length} characters long; GA4 takes at most {GA4_EVENT_MAX}"
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
    {
        return Err(format!(
            "GA4 event {name:?} holds {bad:?}; use only letters, digits and _"
        ));
    }
    let lower = name.to_ascii_lowercase();
    if GA4_RESERVED_EVENTS.contains(&lower.as_str()) {
        return Err(format!(
            "{name:?} is one of GA4's own events, which it drops when sent; choose another name"
        ));
    }
    if let Some(prefix) = GA4_RESERVED_PREFIXES.iter().find(|p| lower.starts_with(*p)) {
        return Err(format!(
            "GA4 reserves names starting with {prefix:?}; choose another name"
        ));
    }
    Ok(())
}

/// Meta's standard events, offered by name for a label's Meta event (any other name is a
/// custom event). Listed in
/// <https://developers.facebook.com/docs/meta-pixel/reference#standard-events>.
pub const META_STANDARD_EVENTS: [&str; 17] = [
    "Lead",
    "CompleteRegistration",
    "Contact",
    "Schedule",
    "SubmitApplication",
    "StartTrial",
    "Subscribe",
    "Purchase",
    "AddPaymentInfo",
    "AddToCart",
    "AddToWishlist",
    "CustomizeProduct",
    "Donate",
    "FindLocation",
    "InitiateCheckout",
    "Search",
    "ViewContent",
];

/// Reddit's standard conversion events a label may name, each with the `tracking_type` the
/// Conversions API v3 sends it as; any other name is a custom event (`CUSTOM`, its name in
/// `custom_event_name`), per <https://ads-api.reddit.com/docs/v3/capi-migration>.
pub const REDDIT_STANDARD_EVENTS: [(&str, &str); 5] = [
    ("Lead", "LEAD"),
    ("SignUp", "SIGN_UP"),
    ("Purchase", "PURCHASE"),
    ("AddToCart", "ADD_TO_CART"),
    ("ViewContent", "VIEW_CONTENT"),
];

/// The most characters of a Reddit custom event's name.
pub const REDDIT_CUSTOM_EVENT_MAX: usize = 64;

/// Checks a Reddit event name: a standard event's, or a custom one of at most
/// [`REDDIT_CUSTOM_EVENT_MAX`] characters.
pub fn reddit_event_name(name: &str) -> Result<(), String> {
    let length = name.chars().count();
    if length > REDDIT_CUSTOM_EVENT_MAX {
        return Err(format!(
            "Reddit event {name:?} has {length} characters; a custom event's name has at most {REDDIT_CUSTOM_EVENT_MAX}"
        ));
    }
    Ok(())
}

/// The event names Pinterest's API for Conversions takes (`event_name`, an enum: a custom
/// event is `custom`, with no name of its own), per
/// <https://developers.pinterest.com/docs/api/v5/events-create>.
pub const PINTEREST_EVENTS: [&str; 22] = [
    "lead",
    "checkout",
    "signup",
    "contact",
    "schedule",
    "submit_application",
    "start_trial",
    "subscribe",
    "custom",
    "add_payment_info",
    "add_to_cart",
    "add_to_wishlist",
    "app_install",
    "app_open",
    "customize_product",
    "find_location",
    "initiate_checkout",
    "page_visit",
    "search",
    "view_category",
    "view_content",
    "watch_video",
];

/// Checks a Pinterest event name: one of [`PINTEREST_EVENTS`].
pub fn pinterest_event_name(name: &str) -> Result<(), String> {
    if PINTEREST_EVENTS.contains(&name) {
        return Ok(());
    }
    Err(format!(
        "Pinterest event {name:?} is not one of Pinterest's: {}",
        PINTEREST_EVENTS.join(", ")
    ))
}

/// A LinkedIn conversion rule as its URN: `urn:lla:llaPartnerConversion:{id}` given as it
/// is, or a bare id (the number Campaign Manager shows) made into one.
pub fn linkedin_conversion_urn(value: &str) -> Result<String, String> {
    const PREFIX: &str = "urn:lla:llaPartnerConversion:";
    let value = value.trim();
    let id = value.strip_prefix(PREFIX).unwrap_or(value);
    if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) {
        Ok(format!("{PREFIX}{id}"))
    } else {
        Err(format!(
            "LinkedIn conversion {value:?} must be a conversion rule's id or its URN, {PREFIX}<id>"
        ))
    }
}

/// A conversion label: what a CRM rating means for the ad platforms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversionLabel {
    /// Its UUID, sent as `conversionId`.
    pub id: Uuid,
    /// The project it belongs to.
    pub project_id: ProjectId,
    /// A name for people, e.g. `Qualified`.
    pub name: String,
    /// Whether processed leads become `rated` (else `open`).
    pub mark_as_done: bool,
    /// What it sends to each integration.
    pub mapping: LabelMapping,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// Whether it is archived: no longer offered for rating.
    pub archived: bool,
}

/// The labels people rate with, in the project's order: all but the archived ones. The
/// first nine are picked with the number keys 1 to 9.
pub fn rateable(labels: &[ConversionLabel]) -> impl Iterator<Item = &ConversionLabel> {
    labels.iter().filter(|label| !label.archived)
}

/// Checks that `order` names each of the project's labels (`labels`) exactly once.
pub fn check_order(labels: &[Uuid], order: &[Uuid]) -> Result<(), String> {
    let mut given = order.to_vec();
    given.sort_unstable();
    let mut known = labels.to_vec();
    known.sort_unstable();
    if given.windows(2).any(|pair| pair[0] == pair[1]) {
        return Err("a new order names a label twice".to_owned());
    }
    if given != known {
        return Err("a new order names each of the project's labels once".to_owned());
    }
    Ok(())
}

/// `order` with `id` moved one place earlier (`up`) or later; unchanged at either end, or
/// when `id` is not in it.
pub fn moved(order: &[Uuid], id: Uuid, up: bool) -> Vec<Uuid> {
    let mut order = order.to_vec();
    if let Some(at) = order.iter().position(|known| *known == id) {
        let other = if up { at.checked_sub(1) } else { Some(at + 1) };
        if let Some(other) = other.filter(|other| *other < order.len()) {
            order.swap(at, other);
        }
    }
    order
}

/// What a new label is made of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewLabel {
    /// A name for people.
    pub name: String,
    /// Whether processed leads become `rated`.
    pub mark_as_done: bool,
    /// What it sends to each integration.
    pub mapping: LabelMapping,
}

/// The labels a new team starts with: "Qualified", a step on the way that keeps its leads
/// open, and "Customer", which marks them done. Each sends the platforms' own events for
/// it where a platform has them, GA4's recommended lead-generation events `qualify_lead`
/// and `close_convert_lead`
/// (<https://developers.google.com/analytics/devguides/collection/ga4/reference/events#qualify_lead>)
/// and Meta's standard events `Lead` and `Purchase`
/// (<https://developers.facebook.com/docs/meta-pixel/reference#standard-events>), and goes
/// to the webhook. Google Ads, Microsoft Advertising and LinkedIn need a conversion of the
/// owner's own account, chosen on the label's page.
pub fn starter_labels() -> [NewLabel; 2] {
    use IntegrationKind::{Ga4, Meta, Webhook};
    let mapping = |done| LabelMapping::recommended(&[Ga4, Meta, Webhook], done);
    [
        NewLabel {
            mark_as_done: false,
            ..NewLabel::done("Qualified", mapping(false))
        },
        NewLabel::done("Customer", mapping(true)),
    ]
}

impl NewLabel {
    /// A label that marks its leads done (`rated`) and sends as `mapping` says.
    pub fn done(name: &str, mapping: LabelMapping) -> Self {
        Self {
            name: name.to_owned(),
            mark_as_done: true,
            mapping,
        }
    }

    /// Checks the label and trims its name; the error says what is wrong.
    pub fn validate(mut self) -> Result<Self, String> {
        let name = self.name.trim();
        if name.is_empty() {
            return Err("a conversion label needs a name".to_owned());
        }
        self.name = name.to_owned();
        self.mapping = self.mapping.validate()?;
        Ok(self)
    }
}

/// The mapping a conversion uses: its label's, or the project's `lost` mapping.
pub fn mapping_for<'a>(
    label: Option<&'a ConversionLabel>,
    lost_mapping: &'a LabelMapping,
) -> &'a LabelMapping {
    label.map_or(lost_mapping, |label| &label.mapping)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_platform_added_gets_its_recommended_event_unless_the_label_has_one() {
        use IntegrationKind::*;
        let step = LabelMapping::recommended(&[Ga4, Meta, Webhook, GoogleAds], false);
        assert_eq!(
            (
                step.ga4_event.as_deref(),
                step.meta_event.as_deref(),
                step.webhook
            ),
            (Some("qualify_lead"), Some("Lead"), true)
        );
        assert_eq!(step.google_ads_action, None, "the owner picks an action");
        let customer = LabelMapping::recommended(&[Ga4, Meta], true);
        assert_eq!(
            (
                customer.ga4_event.as_deref(),
                customer.meta_event.as_deref(),
                customer.webhook
            ),
            (Some("close_convert_lead"), Some("Purchase"), false)
        );
        let own = LabelMapping {
            ga4_event: Some("booked_call".to_owned()),
            ..LabelMapping::default()
        };
        assert_eq!(own.adding(Ga4, true), None, "a label's own event stays");
        assert_eq!(own.adding(Linkedin, true), None);
        let added = own.adding(Webhook, true).unwrap();
        assert!(added.webhook && added.ga4_event.as_deref() == Some("booked_call"));
    }

    #[test]
    fn ga4_event_names_follow_ga4s_rules() {
        for good in ["qualify_lead", "Purchase", "a", &"x".repeat(40), "lead_2"] {
            assert_eq!(ga4_event_name(good), Ok(()), "{good}");
        }
        for (bad, says) in [
            ("", "must start with a letter"),
            ("_lead", "must start with a letter"),
            ("2nd_call", "must start with a letter"),
            (&"x".repeat(41), "41 characters long; GA4 takes at most 40"),
            ("qualify-lead", "holds '-'; use only letters, digits and _"),
            ("qualifié", "holds 'é'"),
            ("session_start", "one of GA4's own events"),
            ("First_Visit", "one of GA4's own events"),
            ("google_lead", "reserves names starting with \"google_\""),
            ("GA_lead", "reserves names starting with \"ga_\""),
        ] {
            let err = ga4_event_name(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
        let mapping = LabelMapping {
            ga4_event: Some("error".into()),
            ..LabelMapping::default()
        };
        assert!(mapping.validate().is_err());
    }

    #[test]
    fn linkedin_conversions_are_urns() {
        assert_eq!(
            linkedin_conversion_urn(" 12345 ").unwrap(),
            "urn:lla:llaPartnerConversion:12345"
        );
        assert_eq!(
            linkedin_conversion_urn("urn:lla:llaPartnerConversion:9").unwrap(),
            "urn:lla:llaPartnerConversion:9"
        );
        for bad in [
            "",
            "urn:li:conversion:1",
            "12a",
            "urn:lla:llaPartnerConversion:",
        ] {
            assert!(linkedin_conversion_urn(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn orders_name_every_label_once_and_moves_stop_at_the_ends() {
        let [a, b, c] = [Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4()];
        assert_eq!(check_order(&[a, b, c], &[c, a, b]), Ok(()));
        assert!(check_order(&[a, b, c], &[a, b]).is_err());
        assert!(check_order(&[a, b], &[a, a]).is_err());
        assert!(check_order(&[a, b], &[a, Uuid::new_v4()]).is_err());
        assert_eq!(moved(&[a, b, c], c, true), vec![a, c, b]);
        assert_eq!(moved(&[a, b, c], a, false), vec![b, a, c]);
        assert_eq!(moved(&[a, b, c], a, true), vec![a, b, c]);
        assert_eq!(moved(&[a, b, c], c, false), vec![a, b, c]);
        assert_eq!(moved(&[a, b], Uuid::new_v4(), true), vec![a, b]);
    }

    #[test]
    fn labels_need_a_name() {
        let label = NewLabel::done(" Customer ", LabelMapping::default());
        assert_eq!(label.clone().validate().unwrap().name, "Customer");
        let blank = NewLabel {
            name: "  ".into(),
            ..label
        };
        assert_eq!(
            blank.validate().unwrap_err(),
            "a conversion label needs a name"
        );
    }
}
