//! How ratings read on a page: the rating form's choices and the platforms each goes to, a
//! rating waiting out its undo window, how a rating went, what a bulk action did, and the
//! names of leads and conversions. A leaf: the lead page, the inbox and its actions all
//! use it.

use chrono::{DateTime, Utc};
use leadtrack_core::integration::Integrations;
use leadtrack_core::job::JobRecord;
use leadtrack_core::label::{ConversionLabel, mapping_for, rateable};
use leadtrack_core::lead::StoredLead;
use leadtrack_core::rules::skip_reason;
use leadtrack_core::types::{ConversionId, DeliveryState, JobState};
use strum::VariantArray;

/// What a choice of the rating form sends, to one platform, for this lead.
pub(crate) struct PlatformChip {
    pub(crate) name: &'static str,
    /// Why this lead cannot be sent there, when it cannot.
    pub(crate) missing: Option<String>,
}

/// One choice of the rating form.
pub(crate) struct RatingChoice {
    pub(crate) value: String,
    pub(crate) name: String,
    /// The key that picks it: labels 1 to 9, `0` for Lost, `o` for Open.
    pub(crate) key: Option<String>,
    pub(crate) hint: &'static str,
    pub(crate) platforms: Vec<PlatformChip>,
}

impl RatingChoice {
    /// How many of its platforms this lead's conversion reaches.
    pub(crate) fn reached(&self) -> usize {
        self.platforms
            .iter()
            .filter(|p| p.missing.is_none())
            .count()
    }

    /// How many skip it, for what the lead lacks.
    pub(crate) fn skipped(&self) -> usize {
        self.platforms.len() - self.reached()
    }

    /// Each platform and whether it gets the conversion, in one line: what a row's compact
    /// count shows on hover and focus, and reads out.
    pub(crate) fn reach(&self) -> String {
        let each: Vec<String> = self
            .platforms
            .iter()
            .map(|platform| match &platform.missing {
                None => format!("{}: sent", platform.name),
                Some(missing) => format!("{}: not sent, {missing}", platform.name),
            })
            .collect();
        each.join("; ")
    }
}

/// A rating waiting out its undo window: what it is, and how long it still waits.
#[derive(Clone)]
pub(crate) struct Held {
    pub(crate) what: String,
    /// Milliseconds until a worker may take it, when the page was made.
    pub(crate) ms_left: i64,
    /// The same in whole seconds, rounded up, for pages without the script.
    pub(crate) seconds_left: i64,
}

impl Held {
    /// The rating of a lead's newest job `record`, named `what`, if it still waits out its
    /// window at `now`: queued, untouched by any worker, and not yet due.
    pub(crate) fn of(record: &JobRecord, what: String, now: DateTime<Utc>) -> Option<Self> {
        let job = &record.job;
        let waiting = job.state == JobState::Queued && job.started_at.is_none();
        waiting
            .then(|| Self::until(what, job.due_at, now))
            .flatten()
    }

    /// The wait until `due`, seen at `now`; `None` once it is due.
    pub(crate) fn until(what: String, due: DateTime<Utc>, now: DateTime<Utc>) -> Option<Self> {
        let ms_left = (due - now).num_milliseconds();
        (ms_left > 0).then(|| Self {
            what,
            ms_left,
            seconds_left: (ms_left + 999) / 1000,
        })
    }
}

/// The platform's name for people.
pub(crate) fn platform_name(kind: leadtrack_core::types::IntegrationKind) -> &'static str {
    use leadtrack_core::types::IntegrationKind::*;
    match kind {
        GoogleAds => "Google Ads",
        Ga4 => "Google Analytics 4",
        Meta => "Meta",
        MicrosoftAds => "Microsoft Advertising",
        Linkedin => "LinkedIn",
        Tiktok => "TikTok",
        Reddit => "Reddit",
        Pinterest => "Pinterest",
        Snapchat => "Snapchat",
        Webhook => "Webhook",
    }
}

/// The lead's name for headings: its name, else its email, else its number.
pub(crate) fn display_name(lead: &StoredLead) -> String {
    let data = &lead.data;
    let name: Vec<&str> = [data.user("firstName"), data.user("lastName")]
        .into_iter()
        .flatten()
        .collect();
    if !name.is_empty() {
        name.join(" ")
    } else {
        data.user("email")
            .map_or_else(|| format!("Lead #{}", lead.id), str::to_owned)
    }
}

/// The name of what a conversion id applies: the label's name, `Lost` or `Open`.
pub(crate) fn conversion_name(id: ConversionId, labels: &[ConversionLabel]) -> String {
    match id {
        ConversionId::Open => "Open".to_owned(),
        ConversionId::Lost => "Lost".to_owned(),
        ConversionId::Label(id) => labels
            .iter()
            .find(|label| label.id == id)
            .map_or_else(|| "a deleted label".to_owned(), |label| label.name.clone()),
    }
}

/// The ratings `lead` can be given, each with the platforms it goes to and what the lead
/// lacks for each: the labels not archived, in the project's order (keys 1 to 9), Lost (0),
/// then Open (o). A lead rated with a label since archived keeps it listed (without a key),
/// so that its form never quietly rates it with another.
pub(crate) fn choices(
    lead: &StoredLead,
    labels: &[ConversionLabel],
    integrations: &Integrations,
    lost: &leadtrack_core::label::LabelMapping,
) -> Vec<RatingChoice> {
    let now = Utc::now();
    let platforms = |label: Option<&ConversionLabel>| {
        let mapping = mapping_for(label, lost);
        leadtrack_core::types::IntegrationKind::VARIANTS
            .iter()
            .filter(|kind| integrations.is_connected(**kind) && mapping.maps(**kind))
            .map(|kind| PlatformChip {
                name: platform_name(*kind),
                missing: skip_reason(*kind, lead, now).map(|skip| skip.reason),
            })
            .collect()
    };
    let choice = |label: &ConversionLabel, key: Option<String>| RatingChoice {
        value: label.id.to_string(),
        name: label.name.clone(),
        key,
        hint: if label.mark_as_done {
            "marks the lead rated"
        } else {
            "keeps the lead open"
        },
        platforms: platforms(Some(label)),
    };
    let mut choices: Vec<RatingChoice> = rateable(labels)
        .enumerate()
        .map(|(i, label)| choice(label, (i < 9).then(|| (i + 1).to_string())))
        .collect();
    let archived = labels
        .iter()
        .find(|label| label.archived && lead.conversion_id == Some(ConversionId::Label(label.id)));
    if let Some(label) = archived {
        let mut kept = choice(label, None);
        kept.name = format!("{} (archived)", label.name);
        choices.push(kept);
    }
    choices.push(RatingChoice {
        value: "lost".to_owned(),
        name: "Lost".to_owned(),
        key: Some("0".to_owned()),
        hint: "the lead did not buy",
        platforms: platforms(None),
    });
    choices.push(RatingChoice {
        value: "open".to_owned(),
        name: "Open".to_owned(),
        key: Some("o".to_owned()),
        hint: "reset: sends nothing, cancels a conversion not yet started",
        platforms: Vec::new(),
    });
    choices
}

/// How a rating went, named in the lead page's `?done=` so that the page says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, strum::AsRefStr, strum::EnumString)]
#[strum(serialize_all = "lowercase")]
pub(crate) enum Rated {
    /// Queued for every platform it maps to.
    Queued,
    /// Queued, but some platforms are skipped for this lead.
    Partly,
    /// Reset to open.
    Reset,
    /// The form had been saved already (a double click, a repeated Enter, a replay).
    Already,
    /// Undone inside its window.
    Undone,
    /// Undo asked for after the rating had left.
    Late,
    /// Failed deliveries queued again.
    Retried,
    /// Nothing to send again (nothing failed, or a rating is still being sent).
    Unretried,
    /// Marked as spam.
    Spammed,
    /// Taken out of spam.
    Freed,
    /// Its address or domain trusted.
    Trusted,
    /// Not deleted: its conversion may still be on its way.
    Undeletable,
    /// Its person erased at their request.
    Erased,
    /// Not erased: a conversion of the person was being delivered that moment.
    Unerasable,
    /// Assigned to someone, or to nobody.
    Assigned,
    /// Its contact details corrected.
    Corrected,
    /// A correction that changed nothing.
    Uncorrected,
    /// Its next step saved.
    Planned,
    /// Its next step marked done.
    Followed,
}

impl Rated {
    /// The sentence the lead page shows, given the lead's jobs (newest first): a reset
    /// says what the last rating had already sent, and where.
    pub(crate) fn notice(self, jobs: &[JobRecord]) -> String {
        match self {
            Self::Queued => "Rated. Once the undo window has passed, the conversion goes to \
                every platform it maps to."
                .to_owned(),
            Self::Partly => "Rated. Some platforms are skipped: the lead lacks what they need \
                (see Conversions)."
                .to_owned(),
            Self::Reset => {
                let sent: Vec<&str> = jobs
                    .iter()
                    .find(|record| record.job.state != JobState::Cancelled)
                    .into_iter()
                    .flat_map(|record| &record.deliveries)
                    .filter(|(delivery, _)| delivery.state == DeliveryState::Delivered)
                    .map(|(delivery, _)| platform_name(delivery.integration))
                    .collect();
                if sent.is_empty() {
                    "Reset to open. Nothing was sent.".to_owned()
                } else {
                    format!("Reset to open. Already sent: {}.", sent.join(", "))
                }
            }
            Self::Already => "This rating was already saved.".to_owned(),
            Self::Retried => "The failed deliveries are being sent again, as the same \
                conversion."
                .to_owned(),
            Self::Unretried => "Nothing to send again: no delivery of the last conversion \
                failed, or a rating is still being sent."
                .to_owned(),
            Self::Undone => "Undone. Nothing was sent, and the lead is as it was.".to_owned(),
            Self::Late => "Too late to undo: the rating has been sent. Rate the lead again, or \
                reset it to Open."
                .to_owned(),
            Self::Spammed => "Marked as spam: it is out of the inbox, and nothing about it is \
                sent. Not spam takes it back."
                .to_owned(),
            Self::Freed => "Taken out of spam: the lead is open, and the lead webhooks hear \
                of it now."
                .to_owned(),
            Self::Trusted => "Trusted: leads from there are no longer held for it.".to_owned(),
            Self::Undeletable => "Not deleted: its conversion is still waiting or being sent. \
                Undo it, or delete the lead once it has gone."
                .to_owned(),
            Self::Erased => "Erased at the person's request: their leads are anonymous \
                records now. Conversions delivered before stay with the platforms."
                .to_owned(),
            Self::Unerasable => "Not erased: a conversion of this person was being sent that \
                moment. Try again in a few seconds."
                .to_owned(),
            Self::Assigned => "Assignment saved.".to_owned(),
            Self::Corrected => "Contact details saved, and the lead matched again with the \
                person's earlier leads."
                .to_owned(),
            Self::Uncorrected => {
                "Nothing to save: the contact details are as they were.".to_owned()
            }
            Self::Planned => "Next step saved. It is in the Due list on its day, and its \
                assignee is reminded when it is due."
                .to_owned(),
            Self::Followed => "Next step marked done.".to_owned(),
        }
    }
}

/// What a bulk rating did, for the banner above the inbox.
#[derive(Default)]
pub(crate) struct BulkResult {
    /// How many leads were rated.
    pub(crate) rated: usize,
    /// The leads refused, each with why.
    pub(crate) refused: Vec<(String, String)>,
    /// A problem with the form itself (no lead picked, no rating picked, a bad price).
    pub(crate) problem: Option<String>,
    /// A sentence of its own: the form was saved already, or an undo's outcome.
    pub(crate) notice: Option<String>,
    /// The batch's token and its wait, while it can be undone.
    pub(crate) undo: Option<(String, Held)>,
}

/// Why a lead of a bulk rating was not rated, as the redirect names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, strum::AsRefStr, strum::EnumString)]
#[strum(serialize_all = "lowercase")]
pub(crate) enum Refusal {
    /// Its last rating is still waiting or being sent.
    Pending,
    /// Not a lead of this project.
    Missing,
    /// The store failed; nothing changed for it.
    Failed,
    /// Its draft no longer applies (its label was deleted).
    Invalid,
}

impl Refusal {
    pub(crate) fn sentence(self) -> &'static str {
        match self {
            Self::Pending => "its last rating is still being sent",
            Self::Missing => "not found in this project",
            Self::Failed => "something went wrong on our side; nothing was changed",
            Self::Invalid => "its rating's label no longer exists; rate it again",
        }
    }
}
