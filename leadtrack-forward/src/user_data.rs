//! The person's identifiers, as the platforms that name each one receive them (Meta,
//! TikTok, Reddit, Pinterest, Snapchat): the hashed ones and those that go as they are,
//! only those the lead has.

use leadtrack_core::job::ClaimedJob;
use serde_json::{Map, Value, json};

use leadtrack_platforms::normalize::{self, Rules};

/// The lead's email and phone, each normalised by its platform's rules (`email`, `phone`)
/// and SHA-256 hashed.
pub(crate) fn contact_hashes(
    job: &ClaimedJob,
    (email, phone): (Rules, Rules),
) -> [Option<String>; 2] {
    let lead = &job.lead.data;
    let region = job.project.region.as_deref();
    [
        lead.user("email")
            .and_then(|v| normalize::hashed_email(v, email)),
        lead.user("phone")
            .and_then(|v| normalize::hashed_phone(v, region, phone)),
    ]
}

/// The identifiers the lead has, as one object: each `hashed` one as its hash, or in a
/// list of one when `listed` (as Meta, Pinterest and Snapchat take them), and each `plain`
/// one as it is.
pub(crate) fn object<'a>(
    hashed: impl IntoIterator<Item = (&'a str, Option<String>)>,
    listed: bool,
    plain: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
) -> Map<String, Value> {
    let hashed = hashed.into_iter().map(|(key, hash)| {
        let hash = hash.map(|hash| if listed { json!([hash]) } else { json!(hash) });
        (key, hash)
    });
    let plain = plain
        .into_iter()
        .map(|(key, value)| (key, value.map(Value::from)));
    hashed
        .chain(plain)
        .filter_map(|(key, value)| Some((key.to_owned(), value?)))
        .collect()
}
