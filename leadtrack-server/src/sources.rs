//! `integration google-lead-forms|meta-lead-ads|linkedin-lead-gen`: setting up and
//! removing a project's lead sources (the ad platforms' own forms), each written to the
//! project's audit log.

use leadtrack_core::activity::ProjectActivity;
use leadtrack_core::integration::Secret;
use leadtrack_core::project::Project;
use leadtrack_core::source::{
    LeadSource, META_LEADGEN_PATH, SourceKind, google_lead_forms_path, linkedin_account_ids,
};
use leadtrack_core::{Admin, LeadStore};

use crate::Failure;
use crate::admin::audit;
use crate::mail::Links;

/// Sets up the project's `kind` source as `source` (removes it, with none), and writes
/// that to the project's audit log.
async fn set_source<S: Admin + LeadStore>(
    store: &S,
    project: &Project,
    kind: SourceKind,
    source: Option<&LeadSource>,
) -> Result<(), Failure> {
    store
        .set_lead_source(project.id, kind, source)
        .await
        .map_err(Failure::store)?;
    let activity = match source {
        Some(_) => ProjectActivity::LeadSourceSaved { source: kind },
        None => ProjectActivity::LeadSourceRemoved { source: kind },
    };
    audit(store, project.id, activity).await
}

/// `integration google-lead-forms`: sets the project's lead form key (or removes it, with
/// none) and prints the webhook's URL last.
pub(crate) async fn google_lead_forms<S: Admin + LeadStore>(
    store: &S,
    project: &Project,
    key: Option<String>,
    links: &Links,
) -> Result<(), Failure> {
    let kind = SourceKind::GoogleLeadForms;
    let Some(key) = key.map(|key| key.trim().to_owned()) else {
        set_source(store, project, kind, None).await?;
        say!(
            "Project {} no longer takes Google lead form leads.",
            project.public_id
        );
        return Ok(());
    };
    if key.is_empty() {
        return Err(Failure(
            "--key is empty: give the lead form's key".to_owned(),
        ));
    }
    let source = LeadSource::GoogleLeadForms {
        key: Secret::new(key),
    };
    set_source(store, project, kind, Some(&source)).await?;
    say!(
        "Project {} takes Google lead form leads sent with this key. In Google Ads, set the lead form's webhook URL to:",
        project.public_id
    );
    say!(
        "{}{}",
        links.public_url(),
        google_lead_forms_path(&project.public_id)
    );
    Ok(())
}

/// `integration meta-lead-ads`: sets up the project's Facebook page (its id and token),
/// or removes it, with none; prints the webhook's URL last.
pub(crate) async fn meta_lead_ads<S: Admin + LeadStore>(
    store: &S,
    project: &Project,
    (page, base_url): (Option<(String, String)>, Option<String>),
    links: &Links,
) -> Result<(), Failure> {
    let kind = SourceKind::MetaLeadAds;
    let Some((page_id, token)) = page else {
        set_source(store, project, kind, None).await?;
        say!(
            "Project {} no longer takes Meta Lead Ads leads.",
            project.public_id
        );
        return Ok(());
    };
    let (page_id, token) = (page_id.trim().to_owned(), token.trim().to_owned());
    if page_id.is_empty() || !page_id.bytes().all(|b| b.is_ascii_digit()) || token.is_empty() {
        return Err(Failure(
            "--page-id is the page's numeric id, and --page-access-token its token".to_owned(),
        ));
    }
    let source = LeadSource::MetaLeadAds {
        page_id: page_id.clone(),
        page_access_token: Secret::new(token),
        base_url: base_url.filter(|url| !url.trim().is_empty()),
    };
    set_source(store, project, kind, Some(&source)).await?;
    say!(
        "Project {} takes the leads of Facebook page {page_id}. In the Meta app, subscribe the page's leadgen field to the webhook:",
        project.public_id
    );
    say!("{}{META_LEADGEN_PATH}", links.public_url());
    Ok(())
}

/// `integration linkedin-lead-gen`: sets the ad accounts whose Lead Gen Forms the project
/// reads (none: stops).
pub(crate) async fn linkedin_lead_gen<S: Admin + LeadStore>(
    store: &S,
    project: &Project,
    accounts: Vec<String>,
) -> Result<(), Failure> {
    let kind = SourceKind::LinkedinLeadGen;
    let accounts = linkedin_account_ids(accounts.iter().map(String::as_str)).map_err(Failure)?;
    if accounts.is_empty() {
        set_source(store, project, kind, None).await?;
        say!(
            "Project {} no longer reads LinkedIn Lead Gen Forms.",
            project.public_id
        );
        return Ok(());
    }
    let connected = store
        .integrations(project.id)
        .await
        .map_err(Failure::store)?
        .linkedin
        .is_some();
    let source = LeadSource::LinkedinLeadGen {
        accounts: accounts.clone(),
    };
    set_source(store, project, kind, Some(&source)).await?;
    say!(
        "Project {} reads the Lead Gen Forms of LinkedIn ad accounts {} every five minutes.",
        project.public_id,
        accounts.join(", ")
    );
    if !connected {
        say!(
            "LinkedIn is not connected to the project yet: connect it (integration linkedin, or Connect with LinkedIn) with the r_marketing_leadgen_automation scope."
        );
    }
    Ok(())
}
