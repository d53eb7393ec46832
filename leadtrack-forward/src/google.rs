//! What Google Ads and Google Analytics 4 share: the consent a lead gives Google, and the
//! hashed user data that consent allows.

use leadtrack_core::job::ClaimedJob;
use leadtrack_core::types::{Consent, ConsentStatus};
use serde_json::{Map, Value, json};

use leadtrack_platforms::normalize::{self, Rules};

/// The consent of the job's lead: its own signals, else its project's defaults.
pub(crate) fn consent(job: &ClaimedJob) -> Consent {
    job.lead.data.consent.or(job.project.default_consent)
}

/// The consent signals given, as a Google API names them (`names`: ad user data, then ad
/// personalization) with its words for granted and denied (`words`).
pub(crate) fn signals(consent: Consent, names: [&str; 2], words: [&str; 2]) -> Map<String, Value> {
    let word = |status| match status {
        ConsentStatus::Granted => words[0],
        ConsentStatus::Denied => words[1],
    };
    [
        (names[0], consent.ad_user_data),
        (names[1], consent.ad_personalization),
    ]
    .into_iter()
    .filter_map(|(name, status)| Some((name.to_owned(), json!(word(status?)))))
    .collect()
}

/// The lead's email and phone, hashed by Google's rules; neither when `consent` denies ad
/// user data ("Consent for sending user data ... to Google for advertising purposes": GA4's
/// `consent.ad_user_data`, the Data Manager API's `Consent.adUserData`), so that only click
/// ids go to Google.
pub(crate) fn hashed_user(job: &ClaimedJob, consent: Consent) -> HashedUser {
    if consent.ad_user_data == Some(ConsentStatus::Denied) {
        return HashedUser::default();
    }
    let lead = &job.lead.data;
    let region = job.project.region.as_deref();
    HashedUser {
        email: lead
            .user("email")
            .and_then(|email| normalize::hashed_email(email, Rules::Google)),
        phone: lead
            .user("phone")
            .and_then(|phone| normalize::hashed_phone(phone, region, Rules::Google)),
    }
}

/// A lead's hashed email and phone, as Google receives them.
#[derive(Default)]
pub(crate) struct HashedUser {
    /// SHA-256 of the normalised email.
    pub(crate) email: Option<String>,
    /// SHA-256 of the E.164 phone number.
    pub(crate) phone: Option<String>,
}
