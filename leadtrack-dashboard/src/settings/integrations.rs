//! Integrations: one card per platform with its status, its last delivery, and the form
//! that connects, changes or disconnects it. The settings follow the same rules as the
//! command line's `integration` commands (core's [`SettingsInput`]): credentials are
//! never shown back, and a blank one keeps the stored one. GA4 can be sent a test event.

use askama::Template;
use chrono::Utc;
use leadtrack_core::activity::ProjectActivity;
use leadtrack_core::integration::{
    Field as Setting, Input, Integrations, Platform, SettingsError, SettingsInput,
    Shown as StoredValue,
};
use leadtrack_core::job::{Attempt, RetryTarget};
use leadtrack_core::label::ConversionLabel;
use leadtrack_core::store::connect::send_labels_to;
use leadtrack_core::types::{AttemptOutcome, IntegrationKind};
use leadtrack_core::{Admin, LeadStore, Store};
use leadtrack_platforms::check::{TestError, TestRequest};
use leadtrack_platforms::{Outcome, check, ga4};
use strum::VariantArray;
use warp::http::StatusCode;
use warp::reply::Response;

use super::platform_reads::{self, SignInCard};
use super::{Answer, Frame, Owner, Problems, saved, sentence};
use crate::Request;
use crate::format;
use crate::render::{self, Layout};
use crate::routes::Settings;
use crate::session::Form;
use leadtrack_core::oauth::Provider;

/// One field of a card's form: a setting, with its value and its problem.
struct Field {
    /// Unique on the page: the platform's slug and the setting's name.
    id: String,
    spec: &'static Setting,
    value: String,
    problem: Option<String>,
}

impl Field {
    fn is_text(&self) -> bool {
        matches!(self.spec.input, Input::Text | Input::Url)
    }

    fn is_secret(&self) -> bool {
        self.spec.input == Input::Secret
    }

    fn checked(&self) -> bool {
        !self.value.is_empty()
    }
}

/// The last delivery attempt to a platform, for people.
struct LastDelivery {
    when: String,
    iso: String,
    ago: String,
    outcome: &'static str,
    ok: bool,
    http_status: Option<u16>,
    error: Option<String>,
}

impl From<&Attempt> for LastDelivery {
    fn from(attempt: &Attempt) -> Self {
        Self {
            when: format::exact(&attempt.at),
            iso: format::iso(&attempt.at),
            ago: format::relative(&attempt.at, Utc::now()),
            outcome: match attempt.outcome {
                AttemptOutcome::Delivered => "Delivered",
                AttemptOutcome::Skipped => "Skipped",
                AttemptOutcome::Retry => "Failed, will retry",
                AttemptOutcome::Failed => "Failed",
            },
            ok: attempt.outcome == AttemptOutcome::Delivered,
            http_status: attempt.http_status,
            error: attempt.error.clone(),
        }
    }
}

/// What a test found.
pub(super) enum TestResult {
    /// GA4's validator found nothing wrong.
    Valid,
    /// What GA4's validator found wrong.
    Problems(Vec<String>),
    /// Another platform accepted the test (its answer, shortened).
    Accepted(String),
    /// The platform refused it, or could not be asked.
    Failed(String),
}

/// One platform's card.
struct Card {
    title: &'static str,
    slug: &'static str,
    connected: bool,
    last: Option<LastDelivery>,
    fields: Vec<Field>,
    /// How to see the platform work without counting a conversion.
    testing: &'static str,
    /// Whether the form shows open: it has problems to see.
    open: bool,
    /// The test's value: GA4's and Meta's event name, Google Ads' conversion action.
    test_event: String,
    /// Meta's test event code.
    test_code: String,
    /// What the last test found.
    test: Option<TestResult>,
    /// A webhook secret just generated, shown this once.
    new_secret: Option<String>,
    /// Signing in with the platform, when the server has an application for it.
    sign_in: Option<SignInCard>,
    /// The platform's name on its sign-in button ("Connect with Google") when it offers
    /// one but this server has no application for it: the page says it can be turned on.
    sign_in_off: Option<&'static str>,
    /// How many labels would start sending here on connecting ([`send_labels_to`]).
    labels_to_send: usize,
}

impl Card {
    /// The card saying that signing in can be turned on, where the platform has it and
    /// the server does not.
    fn with_sign_in_off(self, kind: IntegrationKind) -> Self {
        let offered = Provider::of(kind).filter(|_| self.sign_in.is_none());
        Self {
            sign_in_off: offered.map(Provider::name),
            ..self
        }
    }

    /// Where the server's operator reads how to turn signing in on.
    fn platform_apps_doc(&self) -> String {
        format!(
            "{}/blob/main/docs/platform-apps.md",
            env!("CARGO_PKG_REPOSITORY")
        )
    }

    fn has_advanced(&self) -> bool {
        self.fields.iter().any(|field| field.spec.advanced)
    }

    /// Whether the advanced settings show open: one of them has a problem.
    fn advanced_open(&self) -> bool {
        self.fields
            .iter()
            .any(|field| field.spec.advanced && field.problem.is_some())
    }
}

#[derive(Template)]
#[template(path = "settings/integrations.html")]
struct IntegrationsPage {
    layout: Layout,
    frame: Frame,
    cards: Vec<Card>,
}

/// A platform's form as it was typed (its fields by name), with its problems.
type Typed = (IntegrationKind, Vec<(&'static str, String)>, Problems);

/// What the page shows besides the stored state: a form as typed with its problems, a
/// test's result, a secret to show once.
#[derive(Default)]
struct Shown {
    typed: Option<Typed>,
    test: Option<(IntegrationKind, String, TestResult)>,
    new_secret: Option<String>,
}

/// The integrations page.
async fn integrations_page<S: Admin>(
    store: &S,
    owner: &Owner,
    status: StatusCode,
    notice: Option<String>,
    mut shown: Shown,
) -> Answer {
    let project = owner.project().id;
    let failure = |e| owner.failure(e);
    let integrations = store.integrations(project).await.map_err(failure)?;
    let attempts = store.last_attempts(project).await.map_err(failure)?;
    let labels = store.labels(project).await.map_err(failure)?;
    let mut sign_ins = Vec::new();
    for &kind in IntegrationKind::VARIANTS {
        let connected = integrations.is_connected(kind);
        sign_ins.push(platform_reads::card(store, owner, kind, connected).await?);
    }
    let mut sign_ins = sign_ins.into_iter();
    let cards = IntegrationKind::VARIANTS
        .iter()
        .map(|&kind| {
            let platform = Platform::of(kind);
            let (values, problems) = match shown.typed.take_if(|(of, ..)| *of == kind) {
                Some((_, values, problems)) => (values, Some(problems)),
                None => (stored(kind, &integrations), None),
            };
            let fields = fields(platform, &values, problems.as_ref());
            let connected = integrations.is_connected(kind);
            let (test_event, test) = match shown.test.take_if(|(of, ..)| *of == kind) {
                Some((_, value, result)) => (value, Some(result)),
                None => (default_test_event(kind, &labels), None),
            };
            Card {
                title: platform.title,
                slug: platform.slug,
                connected,
                last: attempts
                    .iter()
                    .find(|attempt| attempt.integration == kind)
                    .map(LastDelivery::from),
                fields,
                testing: platform.testing,
                open: problems.is_some(),
                test_event,
                test_code: stored_test_code(kind, &integrations),
                test,
                new_secret: match kind {
                    IntegrationKind::Webhook => shown.new_secret.take(),
                    _ => None,
                },
                sign_in_off: None,
                sign_in: sign_ins.next().flatten(),
                labels_to_send: labels
                    .iter()
                    .filter(|label| label.mapping.adding(kind, label.mark_as_done).is_some())
                    .count(),
            }
            .with_sign_in_off(kind)
        })
        .collect();
    let (layout, frame) = owner.frame(Settings::Integrations, notice);
    let mut response = render::page(
        status,
        &IntegrationsPage {
            layout,
            frame,
            cards,
        },
    );
    // "Connect with Google" posts here and is sent on to the platform's consent page.
    let consent_pages = owner
        .oauth
        .iter()
        .map(|app| app.endpoints.authorize.as_str());
    render::allow_form_redirects(&mut response, consent_pages);
    Ok(response)
}

/// The fields of `platform`'s form, holding `values`, with their `problems`.
fn fields(
    platform: &'static Platform,
    values: &[(&'static str, String)],
    problems: Option<&Problems>,
) -> Vec<Field> {
    platform
        .fields
        .iter()
        .map(|spec| Field {
            id: format!("{}-{}", platform.slug, spec.name),
            spec,
            value: values
                .iter()
                .find(|(name, _)| *name == spec.name)
                .map(|(_, value)| value.clone())
                .unwrap_or_default(),
            problem: problems.and_then(|p| p.of(spec.name)).map(str::to_owned),
        })
        .collect()
}

/// The event (or conversion action) a test of `kind` offers: the first label's that sends
/// one there, else the platform's usual one; none for the platforms whose test sends no
/// event.
fn default_test_event(kind: IntegrationKind, labels: &[ConversionLabel]) -> String {
    let usual = match kind {
        IntegrationKind::Ga4 => "leadtrack_test",
        IntegrationKind::Meta | IntegrationKind::Tiktok | IntegrationKind::Reddit => "Lead",
        IntegrationKind::Pinterest => "lead",
        IntegrationKind::Snapchat => "SIGN_UP",
        IntegrationKind::GoogleAds => "",
        IntegrationKind::MicrosoftAds | IntegrationKind::Linkedin | IntegrationKind::Webhook => {
            return String::new();
        }
    };
    let named = labels.iter().find_map(|label| label.mapping.named(kind));
    named.unwrap_or(usual).to_owned()
}

/// The test code stored with `kind`'s settings (Meta's and TikTok's test event code,
/// Reddit's test id), or blank.
fn stored_test_code(kind: IntegrationKind, integrations: &Integrations) -> String {
    match kind {
        IntegrationKind::Meta => integrations.meta.as_ref().map(|s| &s.test_event_code),
        IntegrationKind::Tiktok => integrations.tiktok.as_ref().map(|s| &s.test_event_code),
        IntegrationKind::Reddit => integrations.reddit.as_ref().map(|s| &s.test_id),
        _ => None,
    }
    .cloned()
    .flatten()
    .unwrap_or_default()
}

/// The stored settings as the form shows them (a check as `on` or blank); credentials are
/// left out.
fn stored(kind: IntegrationKind, integrations: &Integrations) -> Vec<(&'static str, String)> {
    let shown = integrations.shown(kind).unwrap_or_default();
    shown
        .into_iter()
        .map(|(field, value)| {
            let value = match value {
                StoredValue::Text(text) => text.unwrap_or_default(),
                StoredValue::Check(on) => if on { "on" } else { "" }.to_owned(),
            };
            (field.name, value)
        })
        .collect()
}

/// The confirmation of `?saved={slug}-{connected|updated|disconnected}`.
fn notice(request: &Request) -> Option<String> {
    let saved = saved(request)?;
    let (slug, verb) = saved.rsplit_once('-')?;
    let title = Platform::by_slug(slug)?.title;
    let verb = match verb {
        "connected" => "connected: conversions rated from now on are sent to it",
        "signed" => "signed in: pick the account its conversions go to",
        "updated" => "settings saved: the next delivery uses them",
        "disconnected" => "disconnected: nothing more is sent to it",
        "retried" => "deliveries that failed in the last 30 days are being sent again",
        "unretried" => "deliveries: none failed in the last 30 days, so nothing is sent again",
        _ => return None,
    };
    Some(format!("{title} {verb}."))
}

/// `GET integrations`.
pub(super) async fn page<S: Admin>(store: &S, request: &Request, owner: Owner) -> Answer {
    let notice = notice(request);
    integrations_page(store, &owner, StatusCode::OK, notice, Shown::default()).await
}

/// The integrations page with `notice`, answered with `status`.
pub(super) async fn page_with<S: Admin>(
    store: &S,
    owner: &Owner,
    status: StatusCode,
    notice: String,
) -> Answer {
    integrations_page(store, owner, status, Some(notice), Shown::default()).await
}

/// `POST integrations/{kind}`: connects the platform or changes its settings.
pub(super) async fn save<S: Admin + LeadStore>(
    store: &S,
    (owner, form): (Owner, Form),
    slug: &str,
) -> Answer {
    let Some(kind) = Platform::by_slug(slug).map(|platform| platform.kind) else {
        return Ok(owner.not_found());
    };
    let project = owner.project().id;
    let current = store
        .integrations(project)
        .await
        .map_err(|e| owner.failure(e))?;
    let input = SettingsInput::from_given(kind, |name| Some(form.get(name).to_owned()));
    let applied = match input.apply(&current, owner.outbound().targets()) {
        Ok(applied) => applied,
        Err(err) => {
            // What was typed, but never a credential.
            let specs = Platform::of(kind).fields;
            let typed = specs
                .iter()
                .filter(|spec| spec.input != Input::Secret)
                .map(|spec| (spec.name, form.get(spec.name).to_owned()))
                .collect();
            let message = match &err {
                SettingsError::Missing { integration, .. } => {
                    let label = specs.iter().find(|spec| spec.name == err.setting());
                    let label = label.map_or(err.setting(), |spec| spec.label);
                    format!("{label} is needed to connect {integration}.")
                }
                other => sentence(&other.to_string()),
            };
            let problems = Problems::one(err.setting(), message);
            let shown = Shown {
                typed: Some((kind, typed, problems)),
                ..Shown::default()
            };
            return integrations_page(store, &owner, StatusCode::BAD_REQUEST, None, shown).await;
        }
    };
    store
        .set_integration(project, applied.settings, Utc::now())
        .await
        .map_err(|e| owner.failure(e))?;
    if !current.is_connected(kind) && form.get("send_labels") == "on" {
        send_labels_to(store, project, kind)
            .await
            .map_err(|e| owner.failure(e))?;
    }
    let verb = if current.is_connected(kind) {
        "updated"
    } else {
        "connected"
    };
    tracing::info!(user = %owner.viewer.user.id, integration = %kind, "integration {verb}");
    let saved = ProjectActivity::IntegrationSaved { integration: kind };
    owner.record(store, saved).await?;
    match applied.generated_secret {
        Some(secret) => {
            let shown = Shown {
                new_secret: Some(secret.expose().to_owned()),
                ..Shown::default()
            };
            let notice = Some(format!("{} {verb}.", Platform::of(kind).title));
            integrations_page(store, &owner, StatusCode::CREATED, notice, shown).await
        }
        None => Ok(owner.redirect(Settings::Integrations, Some(&format!("{slug}-{verb}")))),
    }
}

/// `POST integrations/{kind}/disconnect`.
pub(super) async fn disconnect<S: Admin + LeadStore>(
    store: &S,
    (owner, _): (Owner, Form),
    slug: &str,
) -> Answer {
    let Some(kind) = Platform::by_slug(slug).map(|platform| platform.kind) else {
        return Ok(owner.not_found());
    };
    store
        .remove_integration(owner.project().id, kind)
        .await
        .map_err(|e| owner.failure(e))?;
    if let Some(provider) = Provider::of(kind) {
        store
            .set_oauth_grant(owner.project().id, provider, None)
            .await
            .map_err(|e| owner.failure(e))?;
    }
    tracing::info!(user = %owner.viewer.user.id, integration = %kind, "integration disconnected");
    let removed = ProjectActivity::IntegrationRemoved { integration: kind };
    owner.record(store, removed).await?;
    Ok(owner.redirect(
        Settings::Integrations,
        Some(&format!("{slug}-disconnected")),
    ))
}

/// How far back `POST integrations/{kind}/retry` looks for failed deliveries.
const RETRY_DAYS: i64 = 30;

/// `POST integrations/{kind}/retry`: sends the platform's deliveries of the last 30 days
/// that failed for good again, as the same conversions.
pub(super) async fn retry<S: Store>(store: &S, (owner, _): (Owner, Form), slug: &str) -> Answer {
    let Some(kind) = Platform::by_slug(slug).map(|platform| platform.kind) else {
        return Ok(owner.not_found());
    };
    let now = Utc::now();
    let target = RetryTarget::Integration {
        kind,
        since: now - chrono::Duration::days(RETRY_DAYS),
    };
    let queued = store
        .retry_failed(owner.project().id, target, &owner.viewer.actor(), now)
        .await
        .map_err(|e| owner.failure(e))?;
    let outcome = if queued.is_empty() {
        "unretried"
    } else {
        "retried"
    };
    Ok(owner.redirect(Settings::Integrations, Some(&format!("{slug}-{outcome}"))))
}

/// A test sent and what came of it: the platform, what was named (the event or the
/// conversion), the answer, and the page's status.
pub(super) struct Tested {
    /// The platform.
    pub(super) kind: IntegrationKind,
    /// The event or conversion named, if any.
    pub(super) named: String,
    /// Its answer.
    pub(super) result: TestResult,
    /// The status of the page showing it.
    pub(super) status: StatusCode,
}

/// Sends one test to GA4's validation endpoint, which records nothing. Nothing is queued.
async fn test_ga4(integrations: &Integrations, owner: &Owner, form: &Form) -> Tested {
    let event = form.get("event_name").trim().to_owned();
    let mut status = StatusCode::OK;
    let result = match &integrations.ga4 {
        None => {
            status = StatusCode::CONFLICT;
            TestResult::Failed("GA4 is not connected: connect it first.".to_owned())
        }
        Some(_) if event.is_empty() => {
            status = StatusCode::BAD_REQUEST;
            TestResult::Failed("Name the event to send, e.g. qualify_lead.".to_owned())
        }
        Some(settings) => {
            let body = ga4::test_payload(&event, &owner.project().currency);
            match ga4::validate(owner.outbound(), settings, &body).await {
                Ok(messages) if messages.is_empty() => TestResult::Valid,
                Ok(messages) => {
                    TestResult::Problems(messages.iter().map(ToString::to_string).collect())
                }
                Err(Outcome::Retry { error, .. } | Outcome::Failed { error, .. }) => {
                    TestResult::Failed(format!("GA4 could not be asked: {error}."))
                }
                Err(other) => TestResult::Failed(format!("GA4 could not be asked: {other:?}.")),
            }
        }
    };
    tracing::info!(user = %owner.viewer.user.id, "GA4 test event sent to the validator");
    Tested {
        kind: IntegrationKind::Ga4,
        named: event,
        result,
        status,
    }
}

/// Sends one test to `kind`'s platform as `form` names it: GA4's validator, or one event in
/// the platform's test mode (Meta's test events, Google Ads' validateOnly, a signed ping to
/// the webhook), or, for Microsoft Advertising and LinkedIn, which have none, a token from
/// the credentials. Nothing counts as a conversion and nothing is queued.
pub(super) async fn send_test<S: Admin>(
    store: &S,
    owner: &Owner,
    form: &Form,
    kind: IntegrationKind,
) -> Result<Tested, Response> {
    let integrations = store
        .integrations(owner.project().id)
        .await
        .map_err(|e| owner.failure(e))?;
    if kind == IntegrationKind::Ga4 {
        return Ok(test_ga4(&integrations, owner, form).await);
    }
    let value = form.get("value").trim().to_owned();
    let given = |text: &str| Some(text.trim().to_owned()).filter(|t| !t.is_empty());
    let request = TestRequest {
        event: given(&value).filter(|_| {
            matches!(
                kind,
                IntegrationKind::Meta
                    | IntegrationKind::Tiktok
                    | IntegrationKind::Reddit
                    | IntegrationKind::Pinterest
                    | IntegrationKind::Snapchat
            )
        }),
        test_event_code: given(form.get("test_event_code")),
        conversion_action: given(&value).filter(|_| kind == IntegrationKind::GoogleAds),
    };
    let (status, result) = match check::send_test(
        owner.outbound(),
        owner.project(),
        &integrations,
        kind,
        &request,
    )
    .await
    {
        Ok(answer) if answer.accepted => (StatusCode::OK, TestResult::Accepted(answer.detail)),
        Ok(answer) => {
            let title = Platform::of(kind).title;
            let said = format!("{title} did not accept the test: {}", answer.detail);
            (StatusCode::OK, TestResult::Failed(sentence(&said)))
        }
        Err(err @ TestError::NotConnected(_)) => (
            StatusCode::CONFLICT,
            TestResult::Failed(sentence(&err.to_string())),
        ),
        Err(err @ TestError::Missing(_)) => (
            StatusCode::BAD_REQUEST,
            TestResult::Failed(sentence(&err.to_string())),
        ),
    };
    tracing::info!(user = %owner.viewer.user.id, %kind, "integration test sent");
    Ok(Tested {
        kind,
        named: value,
        result,
        status,
    })
}

/// `POST integrations/{kind}/test`: one test ([`send_test`]), its answer shown on the
/// platform's card.
pub(super) async fn test<S: Admin>(store: &S, (owner, form): (Owner, Form), slug: &str) -> Answer {
    let Some(kind) = Platform::by_slug(slug).map(|platform| platform.kind) else {
        return Ok(owner.not_found());
    };
    let tested = send_test(store, &owner, &form, kind).await?;
    let status = tested.status;
    let shown = Shown {
        test: Some((tested.kind, tested.named, tested.result)),
        ..Shown::default()
    };
    integrations_page(store, &owner, status, None, shown).await
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use leadtrack_core::label::{ConversionLabel, LabelMapping};
    use leadtrack_core::types::{IntegrationKind, ProjectId};
    use uuid::Uuid;

    use super::default_test_event;

    fn label(mapping: LabelMapping) -> ConversionLabel {
        ConversionLabel {
            id: Uuid::new_v4(),
            project_id: ProjectId(1),
            name: "Qualified".to_owned(),
            mark_as_done: true,
            mapping,
            created_at: Utc::now(),
            archived: false,
        }
    }

    #[test]
    fn a_test_offers_the_first_label_s_event_else_the_platform_s_usual_one() {
        let labels = [
            label(LabelMapping::webhook_only()),
            label(LabelMapping {
                meta_event: Some("Purchase".to_owned()),
                linkedin_conversion: Some("urn:lla:llaPartnerConversion:1".to_owned()),
                ..LabelMapping::default()
            }),
            label(LabelMapping {
                meta_event: Some("Contact".to_owned()),
                ..LabelMapping::default()
            }),
        ];
        let offered = |kind| default_test_event(kind, &labels);
        assert_eq!(offered(IntegrationKind::Meta), "Purchase");
        assert_eq!(offered(IntegrationKind::Ga4), "leadtrack_test");
        assert_eq!(offered(IntegrationKind::Tiktok), "Lead");
        assert_eq!(offered(IntegrationKind::Pinterest), "lead");
        assert_eq!(offered(IntegrationKind::Snapchat), "SIGN_UP");
        assert_eq!(offered(IntegrationKind::GoogleAds), "");
        // LinkedIn's test sends no event, whatever the labels send there.
        assert_eq!(offered(IntegrationKind::Linkedin), "");
    }
}
