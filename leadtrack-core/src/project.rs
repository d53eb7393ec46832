//! Projects: the unit every lead, key, label and integration belongs to, and the rules for
//! their ids, names, currencies, phone regions and origins that every backend applies.

use chrono::{DateTime, Utc};

use crate::label::LabelMapping;
use crate::spam::SpamRules;
use crate::types::{Consent, ProjectId, random_bytes};

/// A project: the unit every lead, key, label and integration belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Project {
    /// Internal id.
    pub id: ProjectId,
    /// The public id browsers send as `projectId`.
    pub public_id: String,
    /// A name for people.
    pub name: String,
    /// A deactivated project accepts no requests (`403 project_inactive`).
    pub active: bool,
    /// ISO 4217 code of lead prices, e.g. `EUR`.
    pub currency: String,
    /// The country or region (ISO 3166-1 alpha-2, e.g. `DE`) whose national phone numbers
    /// leads write without an international prefix; see [`validate_region`].
    pub region: Option<String>,
    /// The consent of leads that give none (signal by signal).
    pub default_consent: Consent,
    /// What a `lost` conversion sends to each integration.
    pub lost_mapping: LabelMapping,
    /// The browser origins createLead accepts (`https://shop.example`, as
    /// [`validate_origin`] writes them); empty: any.
    pub allowed_origins: Vec<String>,
    /// How long a rating made in the dashboard waits, undoable, before anything leaves:
    /// whole seconds, [`MAX_UNDO_WINDOW_SECONDS`] at the most.
    pub undo_window_seconds: u32,
    /// What holds its leads as spam, and how many an hour it may hold.
    pub spam_rules: SpamRules,
    /// Whether ratings made in the inbox are drafts, sent only once reviewed
    /// ([`crate::draft`]).
    pub review_ratings: bool,
    /// How long it keeps leads and spam, and what the last run of that rule did.
    pub retention: Retention,
    /// When it was created.
    pub created_at: DateTime<Utc>,
}

/// Spam is deleted after this many days unless the project says otherwise.
pub const DEFAULT_SPAM_RETENTION_DAYS: u32 = 30;

/// The longest a retention may be, in days (a hundred years).
pub const MAX_RETENTION_DAYS: u32 = 36_500;

/// How long a project keeps its leads (GDPR article 5(1)(e)): the worker erases leads
/// older than `days` once a day, as a person's erasure does (an anonymous record stays),
/// and deletes spam older than `spam_days` outright (reports never count spam).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retention {
    /// Days a lead is kept; `None`: for ever (the default).
    pub days: Option<u32>,
    /// Days spam is kept ([`DEFAULT_SPAM_RETENTION_DAYS`] by default).
    pub spam_days: u32,
    /// The creation time up to which old leads are erased already: each run goes on from
    /// there, never reading the leads it erased before.
    pub done_to: Option<DateTime<Utc>>,
    /// When the rule last ran, and how many leads that day's run erased or deleted.
    pub last_run: Option<(DateTime<Utc>, u64)>,
}

impl Default for Retention {
    fn default() -> Self {
        Self {
            days: None,
            spam_days: DEFAULT_SPAM_RETENTION_DAYS,
            done_to: None,
            last_run: None,
        }
    }
}

impl Retention {
    /// At `now`: the creation time before which leads are erased (none without `days`),
    /// and the one before which spam is deleted.
    pub fn cutoffs(&self, now: DateTime<Utc>) -> (Option<DateTime<Utc>>, DateTime<Utc>) {
        let before = |days: u32| now - chrono::Duration::days(i64::from(days));
        (self.days.map(before), before(self.spam_days))
    }
}

impl Project {
    /// Whether createLead accepts a request sent with this `Origin` header: any origin when
    /// the project lists none. Requests without an `Origin` (servers, plugins) never ask.
    pub fn allows_origin(&self, origin: &str) -> bool {
        self.allowed_origins.is_empty()
            || self
                .allowed_origins
                .iter()
                .any(|allowed| allowed.eq_ignore_ascii_case(origin.trim()))
    }
}

/// The undo window of a new project, in seconds.
pub const DEFAULT_UNDO_WINDOW_SECONDS: u32 = 10;
/// The longest undo window, in seconds: ten minutes.
pub const MAX_UNDO_WINDOW_SECONDS: u32 = 600;

/// The currency of a project created without one.
pub const DEFAULT_CURRENCY: &str = "USD";

/// What a new project starts with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewProject {
    /// The public id; generated when `None`. See [`validate_public_id`].
    pub public_id: Option<String>,
    /// A name for people.
    pub name: String,
    /// ISO 4217 code; [`DEFAULT_CURRENCY`] when `None`. See [`validate_currency`].
    pub currency: Option<String>,
}

/// Project settings that can change after creation; `None` leaves a setting as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProjectSettings {
    /// A new name.
    pub name: Option<String>,
    /// A new ISO 4217 currency.
    pub currency: Option<String>,
    /// A new phone region; `Some(None)` removes it.
    pub region: Option<Option<String>>,
    /// A new default consent.
    pub default_consent: Option<Consent>,
    /// A new mapping for `lost`.
    pub lost_mapping: Option<LabelMapping>,
    /// New allowed browser origins, each checked by [`validate_origin`]; `Some(vec![])`
    /// allows any origin again.
    pub allowed_origins: Option<Vec<String>>,
    /// A new undo window, in seconds (0 to [`MAX_UNDO_WINDOW_SECONDS`]).
    pub undo_window_seconds: Option<u32>,
    /// New spam rules.
    pub spam_rules: Option<SpamRules>,
    /// Review the inbox's ratings before sending them, or not.
    pub review_ratings: Option<bool>,
    /// A new lead retention in days; `Some(None)` keeps leads for ever.
    pub retention_days: Option<Option<u32>>,
    /// A new spam retention in days.
    pub spam_retention_days: Option<u32>,
}

/// A fresh random public project id, `prj_` and 16 hex digits.
pub fn generate_public_id() -> String {
    format!("prj_{}", hex::encode(random_bytes::<8>()))
}

/// A new project after [`NewProject::validate`]: the values a store inserts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidProject {
    /// The public id, given or generated.
    pub public_id: String,
    /// The name, trimmed.
    pub name: String,
    /// The currency, given or [`DEFAULT_CURRENCY`].
    pub currency: String,
}

impl NewProject {
    /// Applies the defaults (a generated public id, [`DEFAULT_CURRENCY`]) and checks every
    /// value; the error says what is wrong, in words for the person who gave it.
    pub fn validate(self) -> Result<ValidProject, String> {
        let public_id = match self.public_id {
            Some(id) => {
                validate_public_id(&id)?;
                id
            }
            None => generate_public_id(),
        };
        let currency = self.currency.unwrap_or_else(|| DEFAULT_CURRENCY.to_owned());
        validate_currency(&currency)?;
        Ok(ValidProject {
            public_id,
            name: validate_name(&self.name)?,
            currency,
        })
    }
}

impl ProjectSettings {
    /// Checks the changed settings and applies them to `project`; on an error `project`
    /// is left as it was.
    pub fn apply(self, project: &mut Project) -> Result<(), String> {
        let mut changed = project.clone();
        if let Some(name) = self.name {
            changed.name = validate_name(&name)?;
        }
        if let Some(currency) = self.currency {
            validate_currency(&currency)?;
            changed.currency = currency;
        }
        if let Some(consent) = self.default_consent {
            changed.default_consent = consent;
        }
        if let Some(region) = self.region {
            changed.region = region.as_deref().map(validate_region).transpose()?;
        }
        if let Some(mapping) = self.lost_mapping {
            changed.lost_mapping = mapping.validate()?;
        }
        if let Some(origins) = self.allowed_origins {
            let mut valid = Vec::with_capacity(origins.len());
            for origin in &origins {
                let origin = validate_origin(origin)?;
                if !valid.contains(&origin) {
                    valid.push(origin);
                }
            }
            changed.allowed_origins = valid;
        }
        if let Some(seconds) = self.undo_window_seconds {
            if seconds > MAX_UNDO_WINDOW_SECONDS {
                return Err(format!(
                    "the undo window is whole seconds from 0 to {MAX_UNDO_WINDOW_SECONDS}"
                ));
            }
            changed.undo_window_seconds = seconds;
        }
        if let Some(rules) = self.spam_rules {
            changed.spam_rules = rules;
        }
        if let Some(review) = self.review_ratings {
            changed.review_ratings = review;
        }
        let days = |days: u32| match days {
            1..=MAX_RETENTION_DAYS => Ok(days),
            _ => Err(format!(
                "a retention is whole days from 1 to {MAX_RETENTION_DAYS}"
            )),
        };
        if let Some(retention) = self.retention_days {
            changed.retention.days = retention.map(days).transpose()?;
        }
        if let Some(spam) = self.spam_retention_days {
            changed.retention.spam_days = days(spam)?;
        }
        *project = changed;
        Ok(())
    }
}

/// A project's name, trimmed; it must not be blank.
fn validate_name(name: &str) -> Result<String, String> {
    let name = name.trim();
    if name.is_empty() {
        Err("a project needs a name".to_owned())
    } else {
        Ok(name.to_owned())
    }
}

/// Public ids are 1 to 64 characters of ASCII letters, digits, `_` and `-`.
pub fn validate_public_id(id: &str) -> Result<(), String> {
    let valid_chars = id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if (1..=64).contains(&id.len()) && valid_chars {
        Ok(())
    } else {
        Err(format!(
            "project id {id:?} must be 1 to 64 characters of letters, digits, '_' or '-'"
        ))
    }
}

/// Currencies are ISO 4217 codes: three uppercase ASCII letters.
pub fn validate_currency(code: &str) -> Result<(), String> {
    if code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase()) {
        Ok(())
    } else {
        Err(format!(
            "currency {code:?} must be an ISO 4217 code such as EUR or USD"
        ))
    }
}

/// A browser origin as browsers send it in `Origin`: `http` or `https`, `://`, a host and
/// an optional port, nothing after (no path, no trailing `/`). Returns it trimmed and in
/// lowercase, the form [`Project::allows_origin`] compares.
pub fn validate_origin(origin: &str) -> Result<String, String> {
    let origin = origin.trim().to_ascii_lowercase();
    let invalid = || {
        format!(
            "origin {origin:?} must be a scheme and host such as https://shop.example or http://localhost:8080, without a path"
        )
    };
    let rest = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"))
        .ok_or_else(invalid)?;
    // An IPv6 host is bracketed (`[::1]`): its colons are not the port's.
    let (host_ok, port) = match rest.strip_prefix('[') {
        Some(v6) => {
            let (inner, after) = v6.split_once(']').ok_or_else(invalid)?;
            let inner_ok = !inner.is_empty()
                && inner
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.');
            (inner_ok, after)
        }
        None => {
            let (host, after) = rest.find(':').map_or((rest, ""), |at| rest.split_at(at));
            let host_ok = !host.is_empty()
                && host
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
            (host_ok, after)
        }
    };
    let port_ok = port.is_empty()
        || port.strip_prefix(':').is_some_and(|digits| {
            (1..=5).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit())
        });
    if host_ok && port_ok {
        Ok(origin)
    } else {
        Err(invalid())
    }
}

/// The countries and regions phone numbers can belong to: ISO 3166-1 alpha-2 codes as
/// libphonenumber's metadata names them (with `AC`, `TA` and `XK`, which have their own
/// numbering). leadtrack-forward's tests check this list against that metadata.
pub const PHONE_REGIONS: [&str; 245] = [
    "AC", "AD", "AE", "AF", "AG", "AI", "AL", "AM", "AO", "AR", "AS", "AT", "AU", "AW", "AX", "AZ",
    "BA", "BB", "BD", "BE", "BF", "BG", "BH", "BI", "BJ", "BL", "BM", "BN", "BO", "BQ", "BR", "BS",
    "BT", "BW", "BY", "BZ", "CA", "CC", "CD", "CF", "CG", "CH", "CI", "CK", "CL", "CM", "CN", "CO",
    "CR", "CU", "CV", "CW", "CX", "CY", "CZ", "DE", "DJ", "DK", "DM", "DO", "DZ", "EC", "EE", "EG",
    "EH", "ER", "ES", "ET", "FI", "FJ", "FK", "FM", "FO", "FR", "GA", "GB", "GD", "GE", "GF", "GG",
    "GH", "GI", "GL", "GM", "GN", "GP", "GQ", "GR", "GT", "GU", "GW", "GY", "HK", "HN", "HR", "HT",
    "HU", "ID", "IE", "IL", "IM", "IN", "IO", "IQ", "IR", "IS", "IT", "JE", "JM", "JO", "JP", "KE",
    "KG", "KH", "KI", "KM", "KN", "KP", "KR", "KW", "KY", "KZ", "LA", "LB", "LC", "LI", "LK", "LR",
    "LS", "LT", "LU", "LV", "LY", "MA", "MC", "MD", "ME", "MF", "MG", "MH", "MK", "ML", "MM", "MN",
    "MO", "MP", "MQ", "MR", "MS", "MT", "MU", "MV", "MW", "MX", "MY", "MZ", "NA", "NC", "NE", "NF",
    "NG", "NI", "NL", "NO", "NP", "NR", "NU", "NZ", "OM", "PA", "PE", "PF", "PG", "PH", "PK", "PL",
    "PM", "PR", "PS", "PT", "PW", "PY", "QA", "RE", "RO", "RS", "RU", "RW", "SA", "SB", "SC", "SD",
    "SE", "SG", "SH", "SI", "SJ", "SK", "SL", "SM", "SN", "SO", "SR", "SS", "ST", "SV", "SX", "SY",
    "SZ", "TA", "TC", "TD", "TG", "TH", "TJ", "TK", "TL", "TM", "TN", "TO", "TR", "TT", "TV", "TW",
    "TZ", "UA", "UG", "US", "UY", "UZ", "VA", "VC", "VE", "VG", "VI", "VN", "VU", "WF", "WS", "XK",
    "YE", "YT", "ZA", "ZM", "ZW",
];

/// A phone region, uppercased: one of [`PHONE_REGIONS`].
pub fn validate_region(region: &str) -> Result<String, String> {
    let region = region.trim().to_ascii_uppercase();
    if PHONE_REGIONS.contains(&region.as_str()) {
        Ok(region)
    } else {
        Err(format!(
            "{region:?} is not a country code; give the country's two letters (ISO 3166), such as DE, GB or US"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_and_codes_are_validated() {
        assert!(validate_public_id("acme-prod_1").is_ok());
        assert!(validate_public_id("").is_err());
        assert!(validate_public_id("has space").is_err());
        assert!(validate_public_id(&"x".repeat(65)).is_err());
        assert!(validate_public_id(&generate_public_id()).is_ok());
        assert!(validate_currency("EUR").is_ok());
        assert!(validate_currency("eur").is_err());
        assert!(validate_currency("EURO").is_err());
        assert_eq!(validate_region(" de ").as_deref(), Ok("DE"));
        assert_eq!(validate_region("GB").as_deref(), Ok("GB"));
        assert!(
            validate_region("UK")
                .unwrap_err()
                .contains("such as DE, GB or US")
        );
        assert!(validate_region("49").is_err());
        assert!(validate_region("").is_err());
    }

    #[test]
    fn new_projects_get_defaults_and_checked_values() {
        let valid = NewProject {
            public_id: None,
            name: "  Acme ".into(),
            currency: None,
        }
        .validate()
        .unwrap();
        assert!(valid.public_id.starts_with("prj_"));
        assert_eq!(
            (valid.name.as_str(), valid.currency.as_str()),
            ("Acme", "USD")
        );
        let blank = NewProject {
            public_id: Some("acme".into()),
            name: " ".into(),
            currency: Some("EUR".into()),
        };
        assert_eq!(blank.validate().unwrap_err(), "a project needs a name");
    }

    fn acme() -> Project {
        Project {
            id: ProjectId(1),
            public_id: "acme".into(),
            name: "Acme".into(),
            active: true,
            currency: "USD".into(),
            region: None,
            default_consent: Consent::default(),
            lost_mapping: LabelMapping::default_lost(),
            allowed_origins: Vec::new(),
            undo_window_seconds: DEFAULT_UNDO_WINDOW_SECONDS,
            spam_rules: SpamRules::default(),
            review_ratings: false,
            retention: Retention::default(),
            created_at: DateTime::<Utc>::MIN_UTC,
        }
    }

    #[test]
    fn the_undo_window_is_whole_seconds_up_to_ten_minutes() {
        let mut project = acme();
        let window = |seconds| ProjectSettings {
            undo_window_seconds: Some(seconds),
            ..ProjectSettings::default()
        };
        window(0).apply(&mut project).unwrap();
        assert_eq!(project.undo_window_seconds, 0);
        window(600).apply(&mut project).unwrap();
        assert_eq!(project.undo_window_seconds, 600);
        assert_eq!(
            window(601).apply(&mut project).unwrap_err(),
            "the undo window is whole seconds from 0 to 600"
        );
        assert_eq!(project.undo_window_seconds, 600);
    }

    #[test]
    fn retention_is_whole_days_and_spam_goes_after_thirty_by_default() {
        let mut project = acme();
        assert_eq!(project.retention.days, None);
        let now = DateTime::parse_from_rfc3339("2026-03-31T00:00:00Z")
            .unwrap()
            .to_utc();
        let (leads, spam) = project.retention.cutoffs(now);
        assert_eq!(
            (leads, spam.to_rfc3339()),
            (None, "2026-03-01T00:00:00+00:00".into())
        );
        let set = |days, spam| ProjectSettings {
            retention_days: Some(days),
            spam_retention_days: spam,
            ..ProjectSettings::default()
        };
        set(Some(365), Some(7)).apply(&mut project).unwrap();
        assert_eq!(
            (project.retention.days, project.retention.spam_days),
            (Some(365), 7)
        );
        let (leads, _) = project.retention.cutoffs(now);
        assert_eq!(leads.unwrap().to_rfc3339(), "2025-03-31T00:00:00+00:00");
        for bad in [set(Some(0), None), set(None, Some(36_501))] {
            let said = bad.apply(&mut project).unwrap_err();
            assert_eq!(said, "a retention is whole days from 1 to 36500");
        }
        set(None, None).apply(&mut project).unwrap();
        assert_eq!(
            (project.retention.days, project.retention.spam_days),
            (None, 7)
        );
    }

    #[test]
    fn settings_apply_all_or_nothing() {
        let mut project = acme();
        let before = project.clone();
        let bad = ProjectSettings {
            name: Some("Renamed".into()),
            currency: Some("euro".into()),
            ..ProjectSettings::default()
        };
        assert!(bad.apply(&mut project).is_err());
        assert_eq!(project, before);
        let good = ProjectSettings {
            currency: Some("EUR".into()),
            region: Some(Some("de".into())),
            ..ProjectSettings::default()
        };
        good.apply(&mut project).unwrap();
        assert_eq!(project.currency, "EUR");
        assert_eq!(project.region.as_deref(), Some("DE"));
    }

    #[test]
    fn origins_are_checked_and_compared_in_lowercase() {
        assert_eq!(
            validate_origin(" HTTPS://Shop.Example ").unwrap(),
            "https://shop.example"
        );
        assert!(validate_origin("http://localhost:8080").is_ok());
        assert!(validate_origin("http://[::1]:8080").is_ok());
        for bad in [
            "shop.example",
            "ftp://shop.example",
            "https://",
            "https://shop.example/",
            "https://shop.example/path",
            "https://shop.example:port",
            "https://shop example",
            "*",
        ] {
            assert!(validate_origin(bad).is_err(), "{bad}");
        }
        let mut project = acme();
        assert!(project.allows_origin("https://anywhere.example"));
        let settings = ProjectSettings {
            allowed_origins: Some(vec![
                "https://Shop.example".into(),
                "https://shop.example".into(),
            ]),
            ..ProjectSettings::default()
        };
        settings.apply(&mut project).unwrap();
        assert_eq!(project.allowed_origins, ["https://shop.example"]);
        assert!(project.allows_origin("https://SHOP.example"));
        assert!(!project.allows_origin("https://evil.example"));
        let bad = ProjectSettings {
            allowed_origins: Some(vec!["shop.example".into()]),
            ..ProjectSettings::default()
        };
        assert!(bad.apply(&mut project).is_err());
        assert_eq!(project.allowed_origins, ["https://shop.example"]);
    }
}
