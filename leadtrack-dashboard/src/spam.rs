//! Spam in the dashboard: marking open leads as spam and taking spam leads out (one lead,
//! or the ticked ones of the inbox), trusting a freed lead's address or email domain
//! (owners), and what a lead's page says of spam and of the other leads of the same person.

use std::net::IpAddr;

use chrono::Utc;
use leadtrack_core::account::Membership;
use leadtrack_core::lead::StoredLead;
use leadtrack_core::project::ProjectSettings;
use leadtrack_core::request::query::DuplicateFilter;
use leadtrack_core::request::{LeadQuery, StatusUpdate};
use leadtrack_core::store::rating;
use leadtrack_core::types::{ConversionId, LeadId, LeadIdentifier, LeadStatus, Role};
use leadtrack_core::{Store, StoreError, spam};
use strum::VariantArray;
use warp::reply::Response;

use crate::access::MemberForm;
use crate::rating::BulkResult;
use crate::rating::{Rated, display_name};
use crate::render;
use crate::routes::{Leads, Links, parse_id};

/// `POST /projects/{projectId}/leads/spam`: holds the posted open leads as spam; then back
/// to the inbox view (`back`), or to the one lead's page.
pub(crate) async fn mark<S: Store>(store: &S, member: MemberForm) -> Response {
    let (viewer, membership, form) = member;
    let ids: Vec<LeadId> = form.all("lead").filter_map(parse_id).collect();
    let project = membership.project.id;
    match store
        .mark_spam(project, &ids, &viewer.actor(), Utc::now())
        .await
    {
        Ok(held) => back(&membership, &form, ("spammed", held.len()), Rated::Spammed),
        Err(err) => render::store_failure(err, Some(&viewer)),
    }
}

/// `POST /projects/{projectId}/leads/not-spam`: takes the posted spam leads out of spam, to
/// Open (the lead webhooks hear of them now); then back as [`mark`] goes.
pub(crate) async fn free<S: Store>(store: &S, member: MemberForm) -> Response {
    let (viewer, membership, form) = member;
    let project = membership.project.id;
    let mut freed = 0;
    for id in form.all("lead").filter_map(parse_id) {
        let found = store.find_lead(project, &LeadIdentifier::LeadId(id)).await;
        // Only spam is freed: any other lead is left as it is, rating and all.
        if !found.is_ok_and(|lead| lead.status == LeadStatus::Spam) {
            continue;
        }
        let open = StatusUpdate {
            identifier: LeadIdentifier::LeadId(id),
            conversion_id: ConversionId::Open,
            price: None,
            note: None,
        };
        match store
            .update_status(project, &open, &viewer.actor(), Utc::now())
            .await
        {
            Ok(_) => freed += 1,
            Err(err) => return render::store_failure(err, Some(&viewer)),
        }
    }
    back(&membership, &form, ("freed", freed), Rated::Freed)
}

/// Back to the inbox view the form came from, saying `count` of what was done, or to the
/// form's one lead, saying `done`.
fn back(
    membership: &Membership,
    form: &crate::session::Form,
    (what, count): (&str, usize),
    done: Rated,
) -> Response {
    let public_id = &membership.project.public_id;
    match form.all("back").next() {
        Some(back) => render::redirect(&format!(
            "{}?{back}&{what}={count}",
            Links::new(public_id).inbox()
        )),
        None => match form.all("lead").find_map(parse_id) {
            Some(id) => render::redirect(&format!(
                "{}?done={}",
                Links::new(public_id).lead(Leads::Lead, &id),
                done.as_ref()
            )),
            None => render::redirect(&Links::new(public_id).inbox()),
        },
    }
}

/// The inbox's banner after spam was marked or freed, from its `spammed=` or `freed=`.
pub(crate) fn notice(query: &str) -> Option<BulkResult> {
    let count = |name| crate::query_param(query, name).and_then(|n| n.parse::<usize>().ok());
    let leads = |n: usize| match n {
        1 => "1 lead".to_owned(),
        n => format!("{n} leads"),
    };
    let notice = if let Some(n) = count("spammed") {
        format!(
            "{} marked as spam: out of the inbox, and nothing about them is sent.",
            leads(n)
        )
    } else {
        let n = count("freed")?;
        format!("{} taken out of spam, to Open.", leads(n))
    };
    Some(BulkResult {
        notice: Some(notice),
        ..BulkResult::default()
    })
}

/// `POST /projects/{projectId}/leads/{leadId}/trust` (owners): trusts the lead's address
/// (`what=address`: never held for its rate again) or its email domain (`what=domain`:
/// never held by the domain rules again); then back to the lead.
pub(crate) async fn trust<S: Store>(store: &S, member: MemberForm, id: LeadId) -> Response {
    let (viewer, membership, form) = member;
    let project = &membership.project;
    let lead = match crate::access::found(store, &viewer, project.id, id).await {
        Ok(lead) => lead,
        Err(answer) => return answer,
    };
    let mut rules = project.spam_rules.clone();
    match (form.get("what"), address(&lead), domain(&lead)) {
        ("address", Some(address), _) => rules.trust_address(address),
        ("domain", _, Some(domain)) => rules.trust_domain(&domain),
        _ => return render::not_found(Some(&viewer)),
    }
    let settings = ProjectSettings {
        spam_rules: Some(rules),
        ..ProjectSettings::default()
    };
    match store.update_project(project.id, settings).await {
        Ok(_) => render::redirect(&format!(
            "{}?done={}",
            Links::new(&project.public_id).lead(Leads::Lead, &id),
            Rated::Trusted.as_ref()
        )),
        Err(err) => render::store_failure(err, Some(&viewer)),
    }
}

/// The address a lead was sent from, as its device data holds it.
fn address(lead: &StoredLead) -> Option<IpAddr> {
    lead.data.device_data.ip_address.as_deref()?.parse().ok()
}

/// The lowercase domain of the lead's email.
fn domain(lead: &StoredLead) -> Option<String> {
    spam::email_domain(lead.data.submitted())
}

/// What a lead's page says of spam and of the same person's other leads.
#[derive(Default)]
pub(crate) struct SpamCard {
    /// Why the lead is held, while it is spam.
    pub(crate) reason: Option<String>,
    /// Whether it can be marked as spam (it is open).
    pub(crate) can_mark: bool,
    /// The lead it duplicates.
    pub(crate) duplicate_of: Option<LeadId>,
    /// The same person's other leads: id, name, and where each stands.
    pub(crate) same_person: Vec<(LeadId, String, String)>,
    /// Just freed, for an owner: the address it may trust from now on.
    pub(crate) trust_address: Option<String>,
    /// The same, for the lead's email domain.
    pub(crate) trust_domain: Option<String>,
}

impl SpamCard {
    /// The card of `lead` for `membership`, `freed` when it was just taken out of spam;
    /// `rating` names a lead's rating.
    pub(crate) async fn of<S: Store>(
        store: &S,
        membership: &Membership,
        (lead, freed): (&StoredLead, bool),
        rating: impl Fn(&StoredLead) -> String,
    ) -> Result<Self, StoreError> {
        let rules = &membership.project.spam_rules;
        let owner = membership.role == Role::Owner;
        let offer = freed && owner && lead.status != LeadStatus::Spam;
        let trust_address = address(lead).filter(|a| offer && !rules.trusts(*a));
        let trust_domain =
            domain(lead).filter(|d| offer && !rules.trusted_domains.iter().any(|t| t == d));
        Ok(Self {
            reason: lead.spam_reason.map(|reason| reason.to_string()),
            can_mark: lead.status == LeadStatus::Open,
            duplicate_of: lead.duplicate_of,
            same_person: same_person(store, membership, lead)
                .await?
                .iter()
                .map(|other| (other.id, display_name(other), rating(other)))
                .collect(),
            trust_address: trust_address.map(|a| a.to_string()),
            trust_domain,
        })
    }
}

/// The other leads of the person `lead` is: its original and the original's duplicates,
/// newest first, at most 20.
async fn same_person<S: Store>(
    store: &S,
    membership: &Membership,
    lead: &StoredLead,
) -> Result<Vec<StoredLead>, StoreError> {
    // A lead alone of its person (most leads) needs no listing: the lead says so itself.
    if lead.duplicate_of.is_none() && !lead.duplicated {
        return Ok(Vec::new());
    }
    let project = membership.project.id;
    let original = rating::person(lead);
    let query = LeadQuery {
        status: Some(LeadStatus::VARIANTS.to_vec()),
        duplicates: Some(DuplicateFilter::Of(original)),
        limit: 20,
        ..LeadQuery::default()
    };
    let mut others = store.list_leads(project, &query).await?.leads;
    if original != lead.id {
        others.push(
            store
                .find_lead(project, &LeadIdentifier::LeadId(original))
                .await?,
        );
    }
    others.retain(|other| other.id != lead.id);
    Ok(others)
}
