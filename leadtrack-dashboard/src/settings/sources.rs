//! Lead sources: the ad platforms' own lead forms whose leads come to the project (Google
//! Ads lead forms, Meta Lead Ads, LinkedIn Lead Gen Forms), one card each. A Facebook page
//! and LinkedIn ad accounts are picked from lists when the project signed in with the
//! platform; each can also be given by hand.

use askama::Template;
use leadtrack_core::Store;
use leadtrack_core::activity::ProjectActivity;
use leadtrack_core::integration::Secret;
use leadtrack_core::oauth::Provider;
use leadtrack_core::source::{
    LeadSource, META_LEADGEN_PATH, SourceKind, google_lead_forms_path, linkedin_account_ids,
};
use leadtrack_platforms::linkedin::{self, LinkedinAccount};
use leadtrack_platforms::meta::{self, MetaPage};
use warp::http::StatusCode;
use warp::reply::Response;

use super::platform_reads::{listed, signed_in};
use super::{Answer, Frame, Owner, Problems, notice, sentence};
use crate::render::{self, Layout};
use crate::routes::Settings;
use crate::session::{self, Form};
use crate::{Config, Request};

/// The Google Ads lead forms card.
struct GoogleCard {
    /// Whether the project has its key set.
    set: bool,
    /// The webhook's URL, for the form's settings in Google Ads.
    url: String,
    /// A fresh random key to start from.
    suggested_key: String,
}

/// The Meta Lead Ads card.
struct MetaCard {
    /// The page set up, if any.
    page_id: Option<String>,
    /// The pages the signed-in person manages, to pick from.
    pages: Vec<MetaPage>,
    /// The webhook's URL, for the Meta app's subscription.
    url: String,
}

/// The LinkedIn Lead Gen Forms card.
struct LinkedinCard {
    /// The ad accounts whose forms are read.
    accounts: Vec<String>,
    /// The ad accounts the signed-in member reaches, to pick from.
    listed: Vec<LinkedinAccount>,
    /// Whether LinkedIn is connected (its credentials read the forms).
    connected: bool,
}

impl LinkedinCard {
    /// Whether `account` is among those read.
    fn reads(&self, account: &str) -> bool {
        self.accounts.iter().any(|read| read == account)
    }

    /// The accounts read that the list does not show, for the typed field.
    fn typed(&self) -> String {
        let unlisted: Vec<&str> = self
            .accounts
            .iter()
            .filter(|read| !self.listed.iter().any(|account| account.id == **read))
            .map(String::as_str)
            .collect();
        unlisted.join(", ")
    }
}

#[derive(Template)]
#[template(path = "settings/sources.html")]
struct SourcesPage {
    layout: Layout,
    frame: Frame,
    google: GoogleCard,
    meta: MetaCard,
    linkedin: LinkedinCard,
    problems: Problems,
}

const NOTICES: &[(&str, &str)] = &[
    (
        "google-lead-forms-saved",
        "Google Ads lead forms: key saved. Paste the URL and the same key into the form in Google Ads.",
    ),
    (
        "meta-lead-ads-saved",
        "Meta Lead Ads: the page's new leads now come here.",
    ),
    (
        "linkedin-lead-gen-saved",
        "LinkedIn Lead Gen Forms: the accounts' responses are read every five minutes.",
    ),
    (
        "google-lead-forms-removed",
        "Google Ads lead forms removed.",
    ),
    ("meta-lead-ads-removed", "Meta Lead Ads removed."),
    (
        "linkedin-lead-gen-removed",
        "LinkedIn Lead Gen Forms removed.",
    ),
];

/// The page, with `problems` at their cards' fields.
async fn sources_page<S: Store>(
    store: &S,
    (config, request): (&Config, &Request),
    owner: &Owner,
    (status, notice): (StatusCode, Option<String>),
    problems: Problems,
) -> Answer {
    let project = owner.project();
    let source = |kind| async move {
        store
            .lead_source(project.id, kind)
            .await
            .map_err(|e| owner.failure(e))
    };
    let origin = session::public_origin(request, config).unwrap_or_default();
    let google = GoogleCard {
        set: source(SourceKind::GoogleLeadForms).await?.is_some(),
        url: format!("{origin}{}", google_lead_forms_path(&project.public_id)),
        suggested_key: uuid::Uuid::new_v4().simple().to_string(),
    };
    let page_id = match source(SourceKind::MetaLeadAds).await? {
        Some(LeadSource::MetaLeadAds { page_id, .. }) => Some(page_id),
        _ => None,
    };
    let pages = match signed_in(store, owner, Provider::Meta).await? {
        Some((app, grant)) => listed(
            "Meta's pages",
            meta::pages(owner.outbound(), app, &grant).await,
        ),
        None => Vec::new(),
    };
    let accounts = match source(SourceKind::LinkedinLeadGen).await? {
        Some(LeadSource::LinkedinLeadGen { accounts }) => accounts,
        _ => Vec::new(),
    };
    let listed_accounts = match signed_in(store, owner, Provider::Linkedin).await? {
        Some((app, grant)) => listed(
            "LinkedIn's ad accounts",
            linkedin::ad_accounts(owner.outbound(), app, &grant).await,
        ),
        None => Vec::new(),
    };
    let integrations = store
        .integrations(project.id)
        .await
        .map_err(|e| owner.failure(e))?;
    let (layout, frame) = owner.frame(Settings::Sources, notice);
    let page = SourcesPage {
        layout,
        frame,
        google,
        meta: MetaCard {
            page_id,
            pages,
            url: format!("{origin}{META_LEADGEN_PATH}"),
        },
        linkedin: LinkedinCard {
            accounts,
            listed: listed_accounts,
            connected: integrations.linkedin.is_some(),
        },
        problems,
    };
    Ok(render::page(status, &page))
}

/// `GET sources`.
pub(super) async fn page<S: Store>(
    store: &S,
    config: &Config,
    request: &Request,
    owner: Owner,
) -> Answer {
    let notice = notice(request, NOTICES);
    let shown = (StatusCode::OK, notice);
    sources_page(store, (config, request), &owner, shown, Problems::default()).await
}

/// `POST sources/{kind}`: sets the source up as the form says; each problem is shown at
/// its field, and nothing changes.
pub(super) async fn save<S: Store>(
    store: &S,
    (config, request): (&Config, &Request),
    (owner, form): (Owner, Form),
    slug: &str,
) -> Answer {
    let Ok(kind) = slug.parse::<SourceKind>() else {
        return Ok(owner.not_found());
    };
    let source = match kind {
        SourceKind::GoogleLeadForms => google_key(&form),
        SourceKind::MetaLeadAds => meta_page(store, &owner, &form).await?,
        SourceKind::LinkedinLeadGen => linkedin_accounts(&form),
    };
    let source = match source {
        Ok(source) => source,
        Err((field, problem)) => {
            let problems = Problems::one(field, sentence(&problem));
            let shown = (StatusCode::BAD_REQUEST, None);
            return sources_page(store, (config, request), &owner, shown, problems).await;
        }
    };
    store
        .set_lead_source(owner.project().id, kind, Some(&source))
        .await
        .map_err(|e| owner.failure(e))?;
    let saved = ProjectActivity::LeadSourceSaved { source: kind };
    owner.record(store, saved).await?;
    tracing::info!(user = %owner.viewer.user.id, %kind, "lead source set up");
    Ok(owner.redirect(Settings::Sources, Some(&format!("{slug}-saved"))))
}

/// `POST sources/{kind}/remove`.
pub(super) async fn remove<S: Store>(store: &S, (owner, _): (Owner, Form), slug: &str) -> Answer {
    let Ok(kind) = slug.parse::<SourceKind>() else {
        return Ok(owner.not_found());
    };
    store
        .set_lead_source(owner.project().id, kind, None)
        .await
        .map_err(|e| owner.failure(e))?;
    let removed = ProjectActivity::LeadSourceRemoved { source: kind };
    owner.record(store, removed).await?;
    tracing::info!(user = %owner.viewer.user.id, %kind, "lead source removed");
    Ok(owner.redirect(Settings::Sources, Some(&format!("{slug}-removed"))))
}

/// A field's problem: the field and what is wrong.
type Problem = (&'static str, String);

/// Google's key, as typed: at least 16 characters, for a guess to be hopeless.
fn google_key(form: &Form) -> Result<LeadSource, Problem> {
    let key = form.get("key").trim();
    if key.chars().count() < 16 || key.len() > 200 {
        return Err(("key", "the key has 16 to 200 characters".to_owned()));
    }
    Ok(LeadSource::GoogleLeadForms {
        key: Secret::new(key),
    })
}

/// The page picked (its token read from Meta, and the app subscribed to its leads), or
/// given by hand with its token.
async fn meta_page<S: Store>(
    store: &S,
    owner: &Owner,
    form: &Form,
) -> Result<Result<LeadSource, Problem>, Response> {
    let picked = form.get("page").trim();
    if !picked.is_empty() {
        let Some((app, grant)) = signed_in(store, owner, Provider::Meta).await? else {
            return Ok(Err(("page", "sign in with Meta first".to_owned())));
        };
        let subscribed = meta::subscribe_page(owner.outbound(), app, &grant, picked).await;
        return Ok(match subscribed {
            Ok(token) => Ok(LeadSource::MetaLeadAds {
                page_id: picked.to_owned(),
                page_access_token: token,
                base_url: (app.endpoints.api != app.provider.endpoints().api)
                    .then(|| app.endpoints.api.clone()),
            }),
            Err(reason) => Err(("page", format!("Meta did not connect the page: {reason}"))),
        });
    }
    let (page_id, token) = (
        form.get("page_id").trim(),
        form.get("page_access_token").trim(),
    );
    if page_id.is_empty() || !page_id.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(Err(("page_id", "the page's id is its digits".to_owned())));
    }
    if token.is_empty() {
        return Ok(Err((
            "page_access_token",
            "give the page's access token (with leads_retrieval)".to_owned(),
        )));
    }
    Ok(Ok(LeadSource::MetaLeadAds {
        page_id: page_id.to_owned(),
        page_access_token: Secret::new(token),
        base_url: None,
    }))
}

/// The accounts ticked, and those typed (ids, comma- or space-separated).
fn linkedin_accounts(form: &Form) -> Result<LeadSource, Problem> {
    let typed = form.get("accounts").split([',', ' ', '\n']);
    let accounts = linkedin_account_ids(form.all("account").chain(typed))
        .map_err(|problem| ("accounts", problem))?;
    if accounts.is_empty() {
        return Err((
            "accounts",
            "pick or type at least one ad account".to_owned(),
        ));
    }
    Ok(LeadSource::LinkedinLeadGen { accounts })
}
