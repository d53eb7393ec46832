//! Conversion labels: the list, with what each platform receives; a new label; one label's
//! changes. The mapping form is shared with the project page's `lost` mapping.

use askama::Template;
use chrono::Utc;
use leadtrack_core::integration::{Integrations, Platform};
use leadtrack_core::label::{
    ConversionLabel, LabelMapping, NewLabel, ga4_event_name, linkedin_conversion_urn, moved,
    pinterest_event_name, rateable, reddit_event_name, starter_labels,
};
use leadtrack_core::oauth::Provider;
use leadtrack_core::store::{Conflict, Entity};
use leadtrack_core::types::{ConversionId, IntegrationKind};
use leadtrack_core::{Admin, StoreError};
use leadtrack_platforms::{google_ads, linkedin, microsoft_ads};
use strum::VariantArray;
use warp::http::StatusCode;
use warp::reply::Response;

use super::integrations::{self, TestResult, Tested};
use super::platform_reads::{listed, signed_in};
use super::{Answer, Frame, Owner, Problems, notice, sentence, ticked};
use crate::Request;
use crate::render::{self, Layout};
use crate::routes::{Route, Settings};
use crate::session::Form;

/// What a mapping's form fields hold, as typed.
pub(super) struct MappingForm {
    pub(super) ga4_event: String,
    pub(super) meta_event: String,
    pub(super) google_ads_action: String,
    pub(super) microsoft_ads_conversion: String,
    pub(super) linkedin_conversion: String,
    pub(super) tiktok_event: String,
    pub(super) reddit_event: String,
    pub(super) pinterest_event: String,
    pub(super) snapchat_event: String,
    pub(super) webhook: bool,
}

impl MappingForm {
    /// The fields showing `mapping`.
    pub(super) fn of(mapping: &LabelMapping) -> Self {
        let text = |value: &Option<String>| value.clone().unwrap_or_default();
        Self {
            ga4_event: text(&mapping.ga4_event),
            meta_event: text(&mapping.meta_event),
            google_ads_action: text(&mapping.google_ads_action),
            microsoft_ads_conversion: text(&mapping.microsoft_ads_conversion),
            linkedin_conversion: text(&mapping.linkedin_conversion),
            tiktok_event: text(&mapping.tiktok_event),
            reddit_event: text(&mapping.reddit_event),
            pinterest_event: text(&mapping.pinterest_event),
            snapchat_event: text(&mapping.snapchat_event),
            webhook: mapping.webhook,
        }
    }

    /// The fields as submitted.
    pub(super) fn read(form: &Form) -> Self {
        Self {
            ga4_event: form.get("ga4_event").to_owned(),
            meta_event: form.get("meta_event").to_owned(),
            google_ads_action: form.get("google_ads_action").to_owned(),
            microsoft_ads_conversion: form.get("microsoft_ads_conversion").to_owned(),
            linkedin_conversion: form.get("linkedin_conversion").to_owned(),
            tiktok_event: form.get("tiktok_event").to_owned(),
            reddit_event: form.get("reddit_event").to_owned(),
            pinterest_event: form.get("pinterest_event").to_owned(),
            snapchat_event: form.get("snapchat_event").to_owned(),
            webhook: ticked(form, "webhook"),
        }
    }

    /// The tests this mapping can send, one per connected platform it names: `(platform's
    /// slug, its name, the test form's field, its value)`.
    pub(super) fn tests(
        &self,
        on: &Connected,
    ) -> Vec<(&'static str, &'static str, &'static str, String)> {
        let named = |value: &str| !value.trim().is_empty();
        [
            (
                on.google_ads && named(&self.google_ads_action),
                "google-ads",
                "Google Ads",
                "value",
                &self.google_ads_action,
            ),
            (
                on.ga4 && named(&self.ga4_event),
                "ga4",
                "GA4",
                "event_name",
                &self.ga4_event,
            ),
            (
                on.meta && named(&self.meta_event),
                "meta",
                "Meta",
                "value",
                &self.meta_event,
            ),
            (
                on.microsoft_ads && named(&self.microsoft_ads_conversion),
                "microsoft-ads",
                "Microsoft Advertising",
                "",
                &self.microsoft_ads_conversion,
            ),
            (
                on.linkedin && named(&self.linkedin_conversion),
                "linkedin",
                "LinkedIn",
                "",
                &self.linkedin_conversion,
            ),
            (
                on.tiktok && named(&self.tiktok_event),
                "tiktok",
                "TikTok",
                "value",
                &self.tiktok_event,
            ),
            (
                on.reddit && named(&self.reddit_event),
                "reddit",
                "Reddit",
                "value",
                &self.reddit_event,
            ),
            (
                on.pinterest && named(&self.pinterest_event),
                "pinterest",
                "Pinterest",
                "value",
                &self.pinterest_event,
            ),
            (
                on.snapchat && named(&self.snapchat_event),
                "snapchat",
                "Snapchat",
                "value",
                &self.snapchat_event,
            ),
            (
                on.webhook && self.webhook,
                "webhook",
                "the webhook",
                "",
                &String::new(),
            ),
        ]
        .into_iter()
        .filter(|(sends, ..)| *sends)
        .map(|(_, slug, title, field, value)| (slug, title, field, value.trim().to_owned()))
        .collect()
    }

    /// The mapping the fields describe: blank fields send nothing.
    pub(super) fn mapping(&self) -> LabelMapping {
        let value = |text: &str| Some(text.trim().to_owned()).filter(|v| !v.is_empty());
        LabelMapping {
            ga4_event: value(&self.ga4_event),
            meta_event: value(&self.meta_event),
            google_ads_action: value(&self.google_ads_action),
            microsoft_ads_conversion: value(&self.microsoft_ads_conversion),
            linkedin_conversion: value(&self.linkedin_conversion),
            tiktok_event: value(&self.tiktok_event),
            reddit_event: value(&self.reddit_event),
            pinterest_event: value(&self.pinterest_event),
            snapchat_event: value(&self.snapchat_event),
            webhook: self.webhook,
        }
    }

    /// The problems of the fields, each at its field: core's checks of the mapping.
    pub(super) fn problems(&self) -> Problems {
        let mut problems = Problems::default();
        let mapping = self.mapping();
        if let Some(event) = mapping.ga4_event
            && let Err(message) = ga4_event_name(&event)
        {
            problems.add("ga4_event", sentence(&message));
        }
        if let Some(conversion) = mapping.linkedin_conversion
            && let Err(message) = linkedin_conversion_urn(&conversion)
        {
            problems.add("linkedin_conversion", sentence(&message));
        }
        if let Some(event) = mapping.reddit_event
            && let Err(message) = reddit_event_name(&event)
        {
            problems.add("reddit_event", sentence(&message));
        }
        if let Some(event) = mapping.pinterest_event
            && let Err(message) = pinterest_event_name(&event)
        {
            problems.add("pinterest_event", sentence(&message));
        }
        problems
    }
}

/// Which platforms are connected, for the hints next to a mapping.
pub(super) struct Connected {
    pub(super) google_ads: bool,
    pub(super) ga4: bool,
    pub(super) meta: bool,
    pub(super) microsoft_ads: bool,
    pub(super) linkedin: bool,
    pub(super) tiktok: bool,
    pub(super) reddit: bool,
    pub(super) pinterest: bool,
    pub(super) snapchat: bool,
    pub(super) webhook: bool,
    /// The connected Google Ads account's conversion actions, `(resource name, name)`,
    /// when it was connected by signing in: the mapping picks one instead of typing it.
    pub(super) google_actions: Vec<(String, String)>,
    /// Why they could not be listed.
    pub(super) google_problem: Option<String>,
    /// The LinkedIn conversion rules the signed-in member reaches, `(URN, name)`, when
    /// LinkedIn was connected by signing in.
    pub(super) linkedin_rules: Vec<(String, String)>,
    /// The connected Microsoft Advertising account's offline conversion goals, `(name,
    /// name)`, when it was connected by signing in.
    pub(super) microsoft_goals: Vec<(String, String)>,
}

/// Whether `value` is given but not among `options` (`(value, name)`): a choice made
/// before the platform's list changed, kept and shown as such.
pub(crate) fn unlisted(options: &[(String, String)], value: &str) -> bool {
    !value.is_empty() && !options.iter().any(|(option, _)| option == value)
}

impl Connected {
    /// Which platforms are connected, with the lists their mappings pick from where they
    /// were connected by signing in: the Google Ads account's conversion actions, the
    /// LinkedIn member's conversion rules, the Microsoft Advertising account's offline
    /// goals. A list that cannot be had leaves its field typed.
    pub(super) async fn of<S: Admin>(
        store: &S,
        owner: &Owner,
        integrations: &Integrations,
    ) -> Result<Self, Response> {
        let mut connected = Self::from(integrations);
        if let Some(settings) = &integrations.google_ads
            && let Some((app, grant)) = signed_in(store, owner, Provider::Google).await?
        {
            let account = (
                settings.customer_id.as_str(),
                settings.login_customer_id.as_deref(),
            );
            match google_ads::conversion_actions(owner.outbound(), app, &grant, account).await {
                Ok(actions) => {
                    connected.google_actions = actions
                        .into_iter()
                        .map(|action| (action.resource_name, action.name))
                        .collect();
                }
                Err(reason) => connected.google_problem = Some(reason),
            }
        }
        if integrations.linkedin.is_some()
            && let Some((app, grant)) = signed_in(store, owner, Provider::Linkedin).await?
        {
            let rules = linkedin::conversion_rules(owner.outbound(), app, &grant).await;
            connected.linkedin_rules = listed("LinkedIn's conversion rules", rules)
                .into_iter()
                .map(|rule| (rule.urn, rule.name))
                .collect();
        }
        if let Some(settings) = &integrations.microsoft_ads
            && let Some((app, grant)) = signed_in(store, owner, Provider::Microsoft).await?
        {
            let base = settings
                .base_url
                .as_deref()
                .unwrap_or(microsoft_ads::DEFAULT_BASE_URL);
            let account = (base, &*settings.customer_id, &*settings.account_id);
            let goals = microsoft_ads::offline_goals(owner.outbound(), app, &grant, account).await;
            connected.microsoft_goals = listed("Microsoft's offline goals", goals)
                .into_iter()
                .map(|goal| (goal.clone(), goal))
                .collect();
        }
        Ok(connected)
    }

    /// The name of the Google Ads conversion action `action` names, when it is listed.
    pub(super) fn google_action_name(&self, action: &str) -> Option<&str> {
        named(&self.google_actions, action)
    }

    /// The name of the LinkedIn conversion rule `urn` names, when it is listed.
    pub(super) fn linkedin_rule_name(&self, urn: &str) -> Option<&str> {
        named(&self.linkedin_rules, urn)
    }

    /// The platforms not connected, for people: `Google Ads, GA4 and Meta`.
    pub(super) fn missing(&self) -> String {
        let names: Vec<&str> = [
            (self.google_ads, "Google Ads"),
            (self.ga4, "GA4"),
            (self.meta, "Meta"),
            (self.microsoft_ads, "Microsoft Advertising"),
            (self.linkedin, "LinkedIn"),
            (self.tiktok, "TikTok"),
            (self.reddit, "Reddit"),
            (self.pinterest, "Pinterest"),
            (self.snapchat, "Snapchat"),
            (self.webhook, "the webhook"),
        ]
        .into_iter()
        .filter(|(connected, _)| !connected)
        .map(|(_, name)| name)
        .collect();
        match names.split_last() {
            None => String::new(),
            Some((last, [])) => (*last).to_owned(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        }
    }
}

impl From<&Integrations> for Connected {
    fn from(integrations: &Integrations) -> Self {
        Self {
            google_ads: integrations.is_connected(IntegrationKind::GoogleAds),
            ga4: integrations.is_connected(IntegrationKind::Ga4),
            meta: integrations.is_connected(IntegrationKind::Meta),
            microsoft_ads: integrations.is_connected(IntegrationKind::MicrosoftAds),
            linkedin: integrations.is_connected(IntegrationKind::Linkedin),
            tiktok: integrations.is_connected(IntegrationKind::Tiktok),
            reddit: integrations.is_connected(IntegrationKind::Reddit),
            pinterest: integrations.is_connected(IntegrationKind::Pinterest),
            snapchat: integrations.is_connected(IntegrationKind::Snapchat),
            webhook: integrations.is_connected(IntegrationKind::Webhook),
            google_actions: Vec::new(),
            google_problem: None,
            linkedin_rules: Vec::new(),
            microsoft_goals: Vec::new(),
        }
    }
}

/// The name `options` (`(value, name)`) give `value`.
fn named<'a>(options: &'a [(String, String)], value: &str) -> Option<&'a str> {
    options
        .iter()
        .find(|(option, _)| option == value)
        .map(|(_, name)| name.as_str())
}

/// A label's form, as typed.
struct LabelForm {
    name: String,
    mark_as_done: bool,
    mapping: MappingForm,
}

impl LabelForm {
    /// An empty form for a new label: done when rated, sending to each connected platform
    /// what it recommends for a customer ([`LabelMapping::recommended`]), to untick.
    fn blank(integrations: &Integrations) -> Self {
        let connected: Vec<IntegrationKind> = IntegrationKind::VARIANTS
            .iter()
            .copied()
            .filter(|kind| integrations.is_connected(*kind))
            .collect();
        Self {
            name: String::new(),
            mark_as_done: true,
            mapping: MappingForm::of(&LabelMapping::recommended(&connected, true)),
        }
    }

    fn of(label: &ConversionLabel) -> Self {
        Self {
            name: label.name.clone(),
            mark_as_done: label.mark_as_done,
            mapping: MappingForm::of(&label.mapping),
        }
    }

    fn read(form: &Form) -> Self {
        Self {
            name: form.get("name").to_owned(),
            mark_as_done: ticked(form, "mark_as_done"),
            mapping: MappingForm::read(form),
        }
    }

    fn label(&self) -> NewLabel {
        NewLabel {
            name: self.name.clone(),
            mark_as_done: self.mark_as_done,
            mapping: self.mapping.mapping(),
        }
    }
}

/// A label as the list shows it.
struct LabelRow {
    id: String,
    name: String,
    /// The number key that picks it when rating (1 to 9), if it has one.
    key: Option<usize>,
    archived: bool,
    /// Whether it is first or last in the order (no move up, or down).
    first: bool,
    last: bool,
    mark_as_done: bool,
    google_ads: Option<String>,
    ga4: Option<String>,
    meta: Option<String>,
    microsoft_ads: Option<String>,
    linkedin: Option<String>,
    tiktok: Option<String>,
    reddit: Option<String>,
    pinterest: Option<String>,
    snapchat: Option<String>,
    webhook: bool,
}

impl LabelRow {
    /// The rows of `labels`, in the project's order, each with its number key.
    fn all(labels: Vec<ConversionLabel>) -> Vec<Self> {
        let count = labels.len();
        let keys: Vec<_> = rateable(&labels).map(|label| label.id).collect();
        labels
            .into_iter()
            .enumerate()
            .map(|(at, label)| {
                let key = keys.iter().position(|id| *id == label.id);
                Self {
                    key: key.filter(|key| *key < 9).map(|key| key + 1),
                    first: at == 0,
                    last: at + 1 == count,
                    ..Self::from(label)
                }
            })
            .collect()
    }
}

/// A platform a label sends to, as its list says: the platform, what it receives there
/// (an event or a conversion's name; none for the webhook, which receives the label), and
/// whether it is connected.
struct Goes {
    platform: &'static str,
    what: Option<String>,
    connected: bool,
    /// What the owner has yet to choose for a connected platform it does not send to.
    to_choose: Option<&'static str>,
}

impl LabelRow {
    /// Where a rating with it goes, in the platforms' order.
    fn goes(&self, connected: &Connected) -> Vec<Goes> {
        // What only the owner can choose, per platform that needs it: one of their
        // account's own conversions.
        let sends = [
            (
                "Google Ads",
                &self.google_ads,
                connected.google_ads,
                Some("a conversion action"),
            ),
            ("GA4", &self.ga4, connected.ga4, None),
            ("Meta", &self.meta, connected.meta, None),
            (
                "Microsoft Advertising",
                &self.microsoft_ads,
                connected.microsoft_ads,
                Some("an offline conversion goal"),
            ),
            (
                "LinkedIn",
                &self.linkedin,
                connected.linkedin,
                Some("a conversion rule"),
            ),
            (
                "TikTok",
                &self.tiktok,
                connected.tiktok,
                Some("an event name"),
            ),
            ("Reddit", &self.reddit, connected.reddit, None),
            ("Pinterest", &self.pinterest, connected.pinterest, None),
            (
                "Snapchat",
                &self.snapchat,
                connected.snapchat,
                Some("an event name"),
            ),
        ];
        let webhook = self.webhook.then_some(Goes {
            platform: "Webhook",
            what: None,
            connected: connected.webhook,
            to_choose: None,
        });
        sends
            .into_iter()
            .filter_map(|(platform, what, connected, choice)| {
                let to_choose = choice.filter(|_| connected && what.is_none());
                (what.is_some() || to_choose.is_some()).then(|| Goes {
                    platform,
                    what: what.clone(),
                    connected,
                    to_choose,
                })
            })
            .chain(webhook)
            .collect()
    }

    /// Shows the Google Ads action and the LinkedIn rule by their names where the
    /// platforms list them; else the rule by its id, which is what Campaign Manager shows
    /// (the URN around it is noise here).
    fn name_picks(&mut self, connected: &Connected) {
        let action = self.google_ads.as_deref();
        if let Some(name) = action.and_then(|action| connected.google_action_name(action)) {
            self.google_ads = Some(name.to_owned());
        }
        if let Some(urn) = self.linkedin.take() {
            let shown = match connected.linkedin_rule_name(&urn) {
                Some(name) => name.to_owned(),
                None => urn
                    .trim_start_matches("urn:lla:llaPartnerConversion:")
                    .to_owned(),
            };
            self.linkedin = Some(shown);
        }
    }
}

impl From<ConversionLabel> for LabelRow {
    fn from(label: ConversionLabel) -> Self {
        Self {
            id: label.id.to_string(),
            key: None,
            archived: label.archived,
            first: false,
            last: false,
            name: label.name,
            mark_as_done: label.mark_as_done,
            google_ads: label.mapping.google_ads_action,
            ga4: label.mapping.ga4_event,
            meta: label.mapping.meta_event,
            microsoft_ads: label.mapping.microsoft_ads_conversion,
            linkedin: label.mapping.linkedin_conversion,
            tiktok: label.mapping.tiktok_event,
            reddit: label.mapping.reddit_event,
            pinterest: label.mapping.pinterest_event,
            snapchat: label.mapping.snapchat_event,
            webhook: label.mapping.webhook,
        }
    }
}

#[derive(Template)]
#[template(path = "settings/labels.html")]
struct LabelsPage {
    layout: Layout,
    frame: Frame,
    labels: Vec<LabelRow>,
    connected: Connected,
    form: LabelForm,
    problems: Problems,
}

#[derive(Template)]
#[template(path = "settings/label.html")]
struct LabelPage {
    layout: Layout,
    frame: Frame,
    id: String,
    name: String,
    archived: bool,
    connected: Connected,
    form: LabelForm,
    problems: Problems,
    /// A test just sent, with the platform's title.
    tested: Option<(&'static str, Tested)>,
}

impl LabelPage {
    /// Where the test of this label to the platform `slug` posts.
    fn test_action(&self, slug: &str) -> String {
        let project = self.frame.public_id.as_str();
        Route::Settings(Settings::TestLabel).href(&[&project, &self.id, &slug])
    }
}

const NOTICES: &[(&str, &str)] = &[
    ("created", "Label created."),
    (
        "starters",
        "Qualified and Customer added: rename them, or choose on each what it sends.",
    ),
    ("saved", "Label saved."),
    ("moved", "Order saved: the number keys follow it."),
    (
        "archived",
        "Label archived: no longer offered for rating, kept in histories and reports.",
    ),
    ("restored", "Label restored: offered for rating again."),
    ("deleted", "Label deleted."),
];

/// The labels page, with the new-label form as given.
async fn labels_page<S: Admin>(
    store: &S,
    owner: &Owner,
    status: StatusCode,
    notice: Option<String>,
    form: LabelForm,
    problems: Problems,
) -> Answer {
    let project = owner.project().id;
    let labels = store.labels(project).await.map_err(|e| owner.failure(e))?;
    let integrations = store
        .integrations(project)
        .await
        .map_err(|e| owner.failure(e))?;
    let connected = Connected::of(store, owner, &integrations).await?;
    let mut labels = LabelRow::all(labels);
    for row in &mut labels {
        row.name_picks(&connected);
    }
    let (layout, frame) = owner.frame(Settings::Labels, notice);
    Ok(render::page(
        status,
        &LabelsPage {
            layout,
            frame,
            labels,
            connected,
            form,
            problems,
        },
    ))
}

/// `GET labels`.
pub(super) async fn list<S: Admin>(store: &S, request: &Request, owner: Owner) -> Answer {
    let notice = notice(request, NOTICES);
    let integrations = store.integrations(owner.project().id).await;
    let form = LabelForm::blank(&integrations.map_err(|e| owner.failure(e))?);
    labels_page(
        store,
        &owner,
        StatusCode::OK,
        notice,
        form,
        Problems::default(),
    )
    .await
}

/// `POST labels`: creates a label.
pub(super) async fn create<S: Admin>(store: &S, (owner, form): (Owner, Form)) -> Answer {
    let form = LabelForm::read(&form);
    let problems = form.mapping.problems();
    if !problems.is_empty() {
        return labels_page(store, &owner, StatusCode::BAD_REQUEST, None, form, problems).await;
    }
    match store
        .create_label(owner.project().id, form.label(), Utc::now())
        .await
    {
        Ok(_) => Ok(owner.redirect(Settings::Labels, Some("created"))),
        Err(StoreError::Invalid(message)) => {
            let problems = Problems::one("", sentence(&message));
            labels_page(store, &owner, StatusCode::BAD_REQUEST, None, form, problems).await
        }
        Err(err) => Err(owner.failure(err)),
    }
}

/// `POST labels/starters`: adds the starter labels ([`starter_labels`]) to a project that
/// has no label; one that has some keeps them as they are.
pub(super) async fn add_starters<S: Admin>(store: &S, (owner, _): (Owner, Form)) -> Answer {
    let project = owner.project().id;
    let labels = store.labels(project).await.map_err(|e| owner.failure(e))?;
    if !labels.is_empty() {
        return Ok(owner.redirect(Settings::Labels, None));
    }
    for label in starter_labels() {
        store
            .create_label(project, label, Utc::now())
            .await
            .map_err(|e| owner.failure(e))?;
    }
    Ok(owner.redirect(Settings::Labels, Some("starters")))
}

/// The label `id` names in the owner's project; `404` when there is none.
async fn find<S: Admin>(store: &S, owner: &Owner, id: &str) -> Result<ConversionLabel, Response> {
    let Ok(ConversionId::Label(id)) = id.parse() else {
        return Err(owner.not_found());
    };
    store
        .label(owner.project().id, id)
        .await
        .map_err(|err| match err {
            StoreError::NotFound(Entity::Label) => owner.not_found(),
            err => owner.failure(err),
        })
}

/// One label's page, with its form as given.
async fn label_page<S: Admin>(
    store: &S,
    owner: &Owner,
    status: StatusCode,
    notice: Option<String>,
    label: &ConversionLabel,
    (form, problems): (LabelForm, Problems),
    tested: Option<Tested>,
) -> Answer {
    let integrations = store
        .integrations(owner.project().id)
        .await
        .map_err(|e| owner.failure(e))?;
    let connected = Connected::of(store, owner, &integrations).await?;
    let (layout, frame) = owner.frame(Settings::Labels, notice);
    Ok(render::page(
        status,
        &LabelPage {
            layout,
            frame,
            id: label.id.to_string(),
            name: label.name.clone(),
            archived: label.archived,
            connected,
            form,
            problems,
            tested: tested.map(|tested| (Platform::of(tested.kind).title, tested)),
        },
    ))
}

/// `POST labels/{id}/test/{kind}`: one made-up conversion of the label to the platform
/// (what [`integrations::send_test`] sends), the platform's answer shown on the label's
/// page.
pub(super) async fn test<S: Admin>(
    store: &S,
    (owner, form): (Owner, Form),
    (id, slug): (&str, &str),
) -> Answer {
    let label = find(store, &owner, id).await?;
    let Some(kind) = Platform::by_slug(slug).map(|platform| platform.kind) else {
        return Ok(owner.not_found());
    };
    let tested = integrations::send_test(store, &owner, &form, kind).await?;
    let status = tested.status;
    let form = LabelForm::of(&label);
    let shown = (form, Problems::default());
    label_page(store, &owner, status, None, &label, shown, Some(tested)).await
}

/// `GET labels/{id}`.
pub(super) async fn edit<S: Admin>(store: &S, request: &Request, owner: Owner, id: &str) -> Answer {
    let label = find(store, &owner, id).await?;
    let notice = notice(request, NOTICES);
    let form = LabelForm::of(&label);
    let shown = (form, Problems::default());
    label_page(store, &owner, StatusCode::OK, notice, &label, shown, None).await
}

/// `POST labels/{id}`: changes the label.
pub(super) async fn update<S: Admin>(store: &S, (owner, form): (Owner, Form), id: &str) -> Answer {
    let label = find(store, &owner, id).await?;
    let form = LabelForm::read(&form);
    let problems = form.mapping.problems();
    if !problems.is_empty() {
        let status = StatusCode::BAD_REQUEST;
        return label_page(store, &owner, status, None, &label, (form, problems), None).await;
    }
    match store
        .update_label(owner.project().id, label.id, form.label())
        .await
    {
        Ok(label) => Ok(owner.redirect_to(Settings::Label, &label.id, Some("saved"))),
        Err(StoreError::Invalid(message)) => {
            let problems = Problems::one("", sentence(&message));
            let status = StatusCode::BAD_REQUEST;
            label_page(store, &owner, status, None, &label, (form, problems), None).await
        }
        Err(StoreError::NotFound(Entity::Label)) => Ok(owner.not_found()),
        Err(err) => Err(owner.failure(err)),
    }
}

/// `POST labels/{id}/move`: one place up (`direction=up`) or down in the project's order.
pub(super) async fn move_label<S: Admin>(
    store: &S,
    (owner, form): (Owner, Form),
    id: &str,
) -> Answer {
    let label = find(store, &owner, id).await?;
    let project = owner.project().id;
    let order: Vec<_> = store
        .labels(project)
        .await
        .map_err(|e| owner.failure(e))?
        .iter()
        .map(|label| label.id)
        .collect();
    let up = form.get("direction") == "up";
    store
        .reorder_labels(project, &moved(&order, label.id, up))
        .await
        .map_err(|e| owner.failure(e))?;
    Ok(owner.redirect(Settings::Labels, Some("moved")))
}

/// `POST labels/{id}/archive`: archives the label (`archived=yes`), or restores it.
pub(super) async fn archive<S: Admin>(store: &S, (owner, form): (Owner, Form), id: &str) -> Answer {
    let label = find(store, &owner, id).await?;
    let archived = form.get("archived") == "yes";
    store
        .set_label_archived(owner.project().id, label.id, archived)
        .await
        .map_err(|e| owner.failure(e))?;
    let done = if archived { "archived" } else { "restored" };
    Ok(owner.redirect(Settings::Labels, Some(done)))
}

/// `POST labels/{id}/delete`: deletes a label never used; one that was is kept, and its
/// page says to archive it.
pub(super) async fn delete<S: Admin>(store: &S, (owner, _): (Owner, Form), id: &str) -> Answer {
    let label = find(store, &owner, id).await?;
    match store.delete_label(owner.project().id, label.id).await {
        Ok(()) => Ok(owner.redirect(Settings::Labels, Some("deleted"))),
        Err(StoreError::Conflict(Conflict::LabelInUse)) => {
            let problems = Problems::one(
                "",
                "Leads were rated with this label, so it stays: archive it instead. It then \
                 leaves the rating menus and keeps its place in histories and reports.",
            );
            let form = LabelForm::of(&label);
            let status = StatusCode::CONFLICT;
            label_page(store, &owner, status, None, &label, (form, problems), None).await
        }
        Err(err) => Err(owner.failure(err)),
    }
}
