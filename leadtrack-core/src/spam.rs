//! Spam: why a lead is held out of the inbox, the project's own rules, and the checks a
//! lead from a browser or an inbound source meets on arrival. A lead from a backend with
//! a key is trusted and never checked.

use std::collections::HashSet;
use std::net::IpAddr;
use std::sync::LazyLock;

use ipnet::IpNet;
use serde::{Deserialize, Serialize};
use strum::{AsRefStr, Display, EnumString, IntoStaticStr};

use crate::types::JsonObject;

/// Why a lead is spam: shown on the lead, and the API's `spamReason`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, AsRefStr, Display, EnumString, IntoStaticStr)]
pub enum SpamReason {
    /// The capture script's honeypot field, hidden from people, was filled.
    #[strum(serialize = "honeypot field filled")]
    Honeypot,
    /// Sent less than [`MIN_FILL_MILLIS`] after the form showed.
    #[strum(serialize = "sent within 2 seconds of the form showing")]
    TooFast,
    /// The email's domain is a disposable-address service.
    #[strum(serialize = "disposable email domain")]
    DisposableEmail,
    /// The message holds more than [`MAX_LINKS`] links.
    #[strum(serialize = "more than 3 links in the message")]
    TooManyLinks,
    /// The message is a link and nothing else.
    #[strum(serialize = "message is only a link")]
    OnlyALink,
    /// The email's domain is one the project blocks.
    #[strum(serialize = "blocked email domain")]
    BlockedDomain,
    /// Sent from an address the project blocks.
    #[strum(serialize = "blocked address")]
    BlockedAddress,
    /// The lead holds a word the project blocks.
    #[strum(serialize = "blocked word")]
    BlockedWord,
    /// One more of a burst from one address, past its rate.
    #[strum(serialize = "burst from one address")]
    Burst,
    /// A person marked it.
    #[strum(serialize = "marked as spam")]
    Marked,
}

/// As its sentence, the way the API shows it.
impl Serialize for SpamReason {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_ref())
    }
}

impl<'de> Deserialize<'de> for SpamReason {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A submission faster than this, from the form showing to its sending, is a bot's.
pub const MIN_FILL_MILLIS: u64 = 2_000;
/// More links than this in a message make it spam.
pub const MAX_LINKS: usize = 3;
/// A project's held budget unless it sets one: leads an hour it may hold as spam before
/// createLead refuses the rest with `429`.
pub const DEFAULT_HELD_BUDGET: u32 = 20_000;

/// What the capture script reports of a form's submission (createLead's `botCheck`, an
/// addition): the honeypot field's value and the time from the form showing to its sending.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BotCheck {
    /// The hidden field's value; a person leaves it empty.
    pub honeypot: Option<String>,
    /// Milliseconds from the form showing to its submission.
    pub elapsed_ms: Option<u64>,
}

/// A project's spam settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SpamRules {
    /// Leads an hour the project may hold as spam; past it, createLead answers `429`.
    pub held_budget: u32,
    /// Addresses whose leads are never held for their rate (a site's own server, a CDN).
    pub trusted_addresses: Vec<IpNet>,
    /// Email domains (and their subdomains) whose leads the domain rules never hold,
    /// lowercase.
    pub trusted_domains: Vec<String>,
    /// Email domains (and their subdomains) whose leads are spam, lowercase.
    pub blocked_domains: Vec<String>,
    /// Addresses whose leads are spam.
    pub blocked_addresses: Vec<IpNet>,
    /// Words or phrases whose leads are spam, lowercase.
    pub blocked_words: Vec<String>,
}

impl Default for SpamRules {
    fn default() -> Self {
        Self {
            held_budget: DEFAULT_HELD_BUDGET,
            trusted_addresses: Vec::new(),
            trusted_domains: Vec::new(),
            blocked_domains: Vec::new(),
            blocked_addresses: Vec::new(),
            blocked_words: Vec::new(),
        }
    }
}

impl SpamRules {
    /// Whether leads from `address` are never held for their rate.
    pub fn trusts(&self, address: IpAddr) -> bool {
        self.trusted_addresses
            .iter()
            .any(|net| net.contains(&address))
    }

    /// Trusts `address` from now on (and blocks it no more).
    pub fn trust_address(&mut self, address: IpAddr) {
        self.blocked_addresses.retain(|net| !net.contains(&address));
        if !self.trusts(address) {
            self.trusted_addresses.push(IpNet::from(address));
        }
    }

    /// Trusts the email domain `domain` from now on (and blocks it no more).
    pub fn trust_domain(&mut self, domain: &str) {
        let domain = domain.to_ascii_lowercase();
        self.blocked_domains.retain(|blocked| *blocked != domain);
        if !within(&domain, &self.trusted_domains) {
            self.trusted_domains.push(domain);
        }
    }

    /// Why a lead (its `userData` and `formData`) sent from `address` with `check` is
    /// spam, by the first rule it meets; `None` for a lead that meets none.
    pub fn screen(
        &self,
        lead: Submitted<'_>,
        check: &BotCheck,
        address: Option<IpAddr>,
    ) -> Option<SpamReason> {
        let blocked = |net: &IpNet| address.is_some_and(|address| net.contains(&address));
        let domain = email_domain(lead).filter(|d| !within(d, &self.trusted_domains));
        let message = message(lead);
        if self.blocked_addresses.iter().any(blocked) {
            Some(SpamReason::BlockedAddress)
        } else if check
            .honeypot
            .as_deref()
            .is_some_and(|v| !v.trim().is_empty())
        {
            Some(SpamReason::Honeypot)
        } else if check.elapsed_ms.is_some_and(|ms| ms < MIN_FILL_MILLIS) {
            Some(SpamReason::TooFast)
        } else if domain
            .as_deref()
            .is_some_and(|d| within(d, &self.blocked_domains))
        {
            Some(SpamReason::BlockedDomain)
        } else if domain.as_deref().is_some_and(is_disposable) {
            Some(SpamReason::DisposableEmail)
        } else if message.is_some_and(|m| links(m) > MAX_LINKS) {
            Some(SpamReason::TooManyLinks)
        } else if message.is_some_and(is_only_a_link) {
            Some(SpamReason::OnlyALink)
        } else if self.has_blocked_word(lead) {
            Some(SpamReason::BlockedWord)
        } else {
            None
        }
    }

    /// Whether a blocked word stands as a whole word (or phrase) in the lead's message,
    /// names or company.
    fn has_blocked_word(&self, lead: Submitted<'_>) -> bool {
        if self.blocked_words.is_empty() {
            return false;
        }
        let mut text = String::new();
        let fields = ["firstName", "lastName", "companyName", "email"];
        let values = fields.iter().filter_map(|key| lead.user.get(*key));
        for value in values
            .filter_map(|value| value.as_str())
            .chain(message(lead))
        {
            text.push(' ');
            text.push_str(value);
        }
        let words = normalized_words(&text);
        self.blocked_words
            .iter()
            .any(|blocked| words.contains(&format!(" {} ", normalized_words(blocked).trim())))
    }
}

/// `text` lowercase, its words separated by single spaces, with a space at each end, so
/// that ` word ` finds a whole word or phrase.
fn normalized_words(text: &str) -> String {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect();
    format!(" {} ", words.join(" "))
}

/// What a lead's screening reads: its `userData` and `formData`.
#[derive(Clone, Copy, Debug)]
pub struct Submitted<'a> {
    /// `userData`.
    pub user: &'a JsonObject,
    /// `formData`.
    pub form: &'a JsonObject,
}

/// The lowercase domain of the lead's email, if it has one.
pub fn email_domain(lead: Submitted<'_>) -> Option<String> {
    let email = lead.user.get("email")?.as_str()?;
    let (_, domain) = email.trim().rsplit_once('@')?;
    Some(domain.trim_end_matches('.').to_ascii_lowercase())
}

/// The message of a form: the capture script's `formMessage`, else a `message` field.
fn message(lead: Submitted<'_>) -> Option<&str> {
    ["formMessage", "message"]
        .iter()
        .find_map(|key| lead.form.get(*key)?.as_str())
}

/// Whether `domain` is one of `domains` or a subdomain of one.
fn within(domain: &str, domains: &[String]) -> bool {
    domains
        .iter()
        .any(|blocked| domain == blocked || domain.ends_with(&format!(".{blocked}")))
}

/// The disposable-address domains of the `mailchecker` list, hashed once.
static DISPOSABLE: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| mailchecker::blacklist().into_iter().collect());

/// Whether `domain`, or a domain it is under, is a disposable-address service.
fn is_disposable(domain: &str) -> bool {
    let mut rest = domain;
    loop {
        if DISPOSABLE.contains(rest) {
            return true;
        }
        match rest.split_once('.') {
            Some((_, parent)) if parent.contains('.') => rest = parent,
            _ => return false,
        }
    }
}

/// How many links `text` holds: `http://`, `https://` and `www.` starts.
fn links(text: &str) -> usize {
    let lower = text.to_ascii_lowercase();
    lower.matches("http://").count()
        + lower.matches("https://").count()
        + lower
            .match_indices("www.")
            .filter(|(at, _)| !lower[..*at].ends_with("//"))
            .count()
}

/// Whether `text` is one link and nothing else.
fn is_only_a_link(text: &str) -> bool {
    let text = text.trim().to_ascii_lowercase();
    !text.contains(char::is_whitespace)
        && ["http://", "https://", "www."]
            .iter()
            .any(|start| text.starts_with(start) && text.len() > start.len())
}

/// The largest held budget a project may set.
pub const MAX_HELD_BUDGET: u32 = 1_000_000;

/// Spam settings as a person gives them (the command line's flags, the settings form):
/// each `None` keeps the project's, each list is text in the forms of [`parse_networks`],
/// [`parse_domains`] and [`parse_words`] (blank: none).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpamRulesInput {
    /// Held leads an hour, 0 to [`MAX_HELD_BUDGET`].
    pub held_budget: Option<u32>,
    /// Trusted addresses and networks.
    pub trusted_addresses: Option<String>,
    /// Trusted email domains.
    pub trusted_domains: Option<String>,
    /// Blocked email domains.
    pub blocked_domains: Option<String>,
    /// Blocked addresses and networks.
    pub blocked_addresses: Option<String>,
    /// Blocked words and phrases.
    pub blocked_words: Option<String>,
}

impl SpamRulesInput {
    /// `rules` with the given settings, each checked; `None` when nothing is given.
    pub fn apply(self, rules: &SpamRules) -> Result<Option<SpamRules>, String> {
        if self == Self::default() {
            return Ok(None);
        }
        let mut changed = rules.clone();
        if let Some(budget) = self.held_budget {
            if budget > MAX_HELD_BUDGET {
                return Err(format!(
                    "the held budget is a number of leads an hour from 0 to {MAX_HELD_BUDGET}"
                ));
            }
            changed.held_budget = budget;
        }
        if let Some(text) = self.trusted_addresses {
            changed.trusted_addresses = parse_networks(&text)?;
        }
        if let Some(text) = self.trusted_domains {
            changed.trusted_domains = parse_domains(&text)?;
        }
        if let Some(text) = self.blocked_domains {
            changed.blocked_domains = parse_domains(&text)?;
        }
        if let Some(text) = self.blocked_addresses {
            changed.blocked_addresses = parse_networks(&text)?;
        }
        if let Some(text) = self.blocked_words {
            changed.blocked_words = parse_words(&text);
        }
        Ok(Some(changed))
    }
}

/// Parses a list of addresses and networks (`192.0.2.10`, `198.51.100.0/24`, `2001:db8::/32`)
/// separated by commas, spaces or lines; a lone address is its own network.
pub fn parse_networks(text: &str) -> Result<Vec<IpNet>, String> {
    let mut networks = Vec::new();
    for item in split_list(text) {
        let network = match item.parse::<IpNet>() {
            Ok(network) => network.trunc(),
            Err(_) => item
                .parse::<IpAddr>()
                .map(IpNet::from)
                .map_err(|_| format!("{item:?} is not an address or network (CIDR)"))?,
        };
        if !networks.contains(&network) {
            networks.push(network);
        }
    }
    Ok(networks)
}

/// Parses a list of email domains separated by commas, spaces or lines (a leading `@` is
/// allowed), lowercase.
pub fn parse_domains(text: &str) -> Result<Vec<String>, String> {
    let mut domains = Vec::new();
    for item in split_list(text) {
        let domain = item.trim_start_matches('@').to_ascii_lowercase();
        let valid = domain.contains('.')
            && domain.split('.').all(|label| {
                !label.is_empty()
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            });
        if !valid {
            return Err(format!("{item:?} is not an email domain"));
        }
        if !domains.contains(&domain) {
            domains.push(domain);
        }
    }
    Ok(domains)
}

/// Parses blocked words or phrases, one per line or separated by commas, lowercase.
pub fn parse_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    for item in text.split([',', '\n']) {
        let word = normalized_words(item).trim().to_owned();
        if !word.is_empty() && !words.contains(&word) {
            words.push(word);
        }
    }
    words
}

/// The items of a list separated by commas, spaces or lines.
fn split_list(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|item| !item.is_empty())
}

/// Networks for a person to read and edit: one per line, a single address without its
/// prefix length.
pub fn networks_text(networks: &[IpNet]) -> String {
    let text = |net: &IpNet| {
        if net.prefix_len() == net.max_prefix_len() {
            net.addr().to_string()
        } else {
            net.to_string()
        }
    };
    networks.iter().map(text).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    struct Lead(JsonObject, JsonObject);

    impl Lead {
        fn submitted(&self) -> Submitted<'_> {
            Submitted {
                user: &self.0,
                form: &self.1,
            }
        }
    }

    fn lead(user: serde_json::Value, form: serde_json::Value) -> Lead {
        Lead(
            serde_json::from_value(user).unwrap(),
            serde_json::from_value(form).unwrap(),
        )
    }

    fn screen(rules: &SpamRules, lead: &Lead) -> Option<SpamReason> {
        rules.screen(lead.submitted(), &BotCheck::default(), None)
    }

    #[test]
    fn a_person_s_lead_meets_no_rule() {
        let person = lead(
            json!({"email": "ada@example.com", "firstName": "Ada"}),
            json!({"formMessage": "Please call me about https://example.com/pricing"}),
        );
        let typed = BotCheck {
            honeypot: Some(String::new()),
            elapsed_ms: Some(9_000),
        };
        let rules = SpamRules::default();
        assert_eq!(rules.screen(person.submitted(), &typed, None), None);
    }

    #[test]
    fn the_capture_script_s_signals_mark_bots() {
        let person = lead(json!({"email": "ada@example.com"}), json!({}));
        let rules = SpamRules::default();
        let filled = BotCheck {
            honeypot: Some("http://spam.example".into()),
            elapsed_ms: Some(9_000),
        };
        assert_eq!(
            rules.screen(person.submitted(), &filled, None),
            Some(SpamReason::Honeypot)
        );
        let hasty = BotCheck {
            honeypot: None,
            elapsed_ms: Some(1_999),
        };
        assert_eq!(
            rules.screen(person.submitted(), &hasty, None),
            Some(SpamReason::TooFast)
        );
        let two_seconds = BotCheck {
            elapsed_ms: Some(2_000),
            ..BotCheck::default()
        };
        assert_eq!(rules.screen(person.submitted(), &two_seconds, None), None);
    }

    #[test]
    fn disposable_domains_and_their_subdomains_are_spam() {
        let rules = SpamRules::default();
        for email in [
            "x@mailinator.com",
            "x@a.MAILINATOR.com",
            "x@10minutemail.com",
        ] {
            let lead = lead(json!({ "email": email }), json!({}));
            assert_eq!(
                screen(&rules, &lead),
                Some(SpamReason::DisposableEmail),
                "{email}"
            );
        }
        let lead = lead(json!({"email": "x@gmail.com"}), json!({}));
        assert_eq!(screen(&rules, &lead), None);
    }

    #[test]
    fn links_in_the_message() {
        let rules = SpamRules::default();
        let message = |text: &str| lead(json!({}), json!({ "formMessage": text }));
        let four = "a http://a.example b https://b.example c www.c.example d http://www.d.example e https://e.example";
        assert_eq!(
            screen(&rules, &message(four)),
            Some(SpamReason::TooManyLinks)
        );
        let three = "http://a.example https://b.example www.c.example";
        assert_eq!(screen(&rules, &message(three)), None);
        let only = message(" https://cheap.example/pills ");
        assert_eq!(screen(&rules, &only), Some(SpamReason::OnlyALink));
        assert_eq!(screen(&rules, &message("www.")), None);
    }

    #[test]
    fn the_project_s_own_rules() {
        let rules = SpamRules {
            blocked_domains: parse_domains("@competitor.example, spam.test").unwrap(),
            blocked_addresses: parse_networks("203.0.113.0/24").unwrap(),
            blocked_words: parse_words("crypto\nseo services"),
            ..SpamRules::default()
        };
        let person = lead(json!({"email": "ada@example.com"}), json!({}));
        let from =
            |ip: &str| rules.screen(person.submitted(), &BotCheck::default(), ip.parse().ok());
        assert_eq!(from("203.0.113.77"), Some(SpamReason::BlockedAddress));
        assert_eq!(from("198.51.100.1"), None);
        let rival = lead(json!({"email": "x@sales.competitor.example"}), json!({}));
        assert_eq!(screen(&rules, &rival), Some(SpamReason::BlockedDomain));
        let seo = lead(json!({}), json!({"formMessage": "Cheap SEO  services!"}));
        assert_eq!(screen(&rules, &seo), Some(SpamReason::BlockedWord));
        let word = lead(json!({"companyName": "Crypto Ltd"}), json!({}));
        assert_eq!(screen(&rules, &word), Some(SpamReason::BlockedWord));
        let within = lead(json!({"companyName": "Cryptography Ltd"}), json!({}));
        assert_eq!(screen(&rules, &within), None, "whole words only");
    }

    #[test]
    fn trusted_networks_and_lists_parse() {
        let rules = SpamRules {
            trusted_addresses: parse_networks("192.0.2.10 2001:db8::/32,192.0.2.10").unwrap(),
            ..SpamRules::default()
        };
        assert_eq!(rules.trusted_addresses.len(), 2);
        assert!(rules.trusts("192.0.2.10".parse().unwrap()));
        assert!(rules.trusts("2001:db8::1".parse().unwrap()));
        assert!(!rules.trusts("192.0.2.11".parse().unwrap()));
        assert_eq!(
            parse_networks("10.0.0.7/8").unwrap(),
            vec!["10.0.0.0/8".parse::<IpNet>().unwrap()]
        );
        assert!(parse_networks("10.0.0.300").is_err());
        assert!(parse_domains("not a domain!").is_err());
        assert!(parse_domains("localhost").is_err());
        assert_eq!(
            networks_text(&rules.trusted_addresses),
            "192.0.2.10\n2001:db8::/32"
        );
    }

    #[test]
    fn trusting_an_address_or_a_domain_unblocks_it() {
        let mut rules = SpamRules {
            blocked_domains: parse_domains("mailinator.com other.example").unwrap(),
            blocked_addresses: parse_networks("203.0.113.0/24").unwrap(),
            ..SpamRules::default()
        };
        let disposable = lead(json!({"email": "x@mailinator.com"}), json!({}));
        assert_eq!(screen(&rules, &disposable), Some(SpamReason::BlockedDomain));
        rules.trust_domain("Mailinator.com");
        rules.trust_domain("mailinator.com");
        assert_eq!(rules.trusted_domains, ["mailinator.com"]);
        assert_eq!(rules.blocked_domains, ["other.example"]);
        assert_eq!(
            screen(&rules, &disposable),
            None,
            "nor is it disposable now"
        );
        let address: IpAddr = "203.0.113.9".parse().unwrap();
        rules.trust_address(address);
        rules.trust_address(address);
        assert!(rules.blocked_addresses.is_empty());
        assert_eq!(networks_text(&rules.trusted_addresses), "203.0.113.9");
    }

    #[test]
    fn reasons_read_and_print_as_shown() {
        for reason in [SpamReason::Burst, SpamReason::Marked, SpamReason::TooFast] {
            assert_eq!(reason.as_ref().parse::<SpamReason>(), Ok(reason));
        }
        assert_eq!(SpamReason::Burst.to_string(), "burst from one address");
    }

    #[test]
    fn rules_default_when_stored_without_them() {
        let stored: SpamRules = serde_json::from_str("{}").unwrap();
        assert_eq!(stored, SpamRules::default());
        assert_eq!(stored.held_budget, DEFAULT_HELD_BUDGET);
    }
}
