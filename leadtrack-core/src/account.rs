//! Team accounts: users and their roles on projects, passwords, sign-in sessions, the
//! sign-in throttle, and who did something ([`Actor`]). What every backend stores and every
//! web shell enforces.
//!
//! - Passwords are 10 to 256 characters with no composition rules (NIST SP 800-63B
//!   section 5.1.1.2) and are kept only as Argon2id hashes with the `argon2` crate's
//!   recommended parameters (19 MiB, 2 passes, 1 lane: the OWASP baseline).
//! - A session token is 256 random bits, given to the browser once and kept only as its
//!   SHA-256; it lasts 12 hours idle and 30 days at most.

use std::fmt;
use std::sync::OnceLock;

use argon2::Argon2;
use argon2::password_hash::phc::PasswordHash as Phc;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::alert::AlertPreferences;
use crate::assignment::{Assignee, may_take};
use crate::key::KEY_PREFIX_LEN;
use crate::matching;
use crate::project::Project;
use crate::types::{Role, UserId, random_bytes};

/// A person who signs in. The password hash is not part of it: only sign-in reads that.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    /// Its id.
    pub id: UserId,
    /// The email as given (trimmed); unique without regard to case.
    pub email: String,
    /// The name shown for what the user does.
    pub name: String,
    /// A disabled user cannot sign in and has no sessions.
    pub disabled: bool,
    /// When the user was created.
    pub created_at: DateTime<Utc>,
    /// How the dashboard looks to them.
    pub preferences: Preferences,
}

/// What a user chose for how the dashboard looks to them; kept as a JSON object, and read
/// leniently: what a store holds that does not parse is the default, never a failure.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Preferences {
    /// The inbox's columns, by the names the dashboard gives them; `None`: its defaults.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inbox_columns: Option<Vec<String>>,
    /// Light or dark; `None`: as the system prefers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theme: Option<Theme>,
}

impl Preferences {
    /// The preferences a stored JSON object holds; the default when it does not parse.
    pub fn from_json(json: &str) -> Self {
        serde_json::from_str(json).unwrap_or_default()
    }

    /// As a store keeps them.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_owned())
    }
}

/// A colour scheme of the dashboard.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, strum::AsRefStr, strum::EnumString,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Theme {
    /// Dark text on light paper.
    Light,
    /// Light text on dark paper.
    Dark,
}

/// A user to create, checked and with the password already hashed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewUser {
    /// The email, trimmed.
    pub email: String,
    /// The name: as given, else the email's local part.
    pub name: String,
    /// The password's hash.
    pub password_hash: PasswordHash,
}

impl NewUser {
    /// Checks the email and name and hashes the password (tens of milliseconds of CPU:
    /// async callers run this on a blocking thread).
    pub fn new(email: &str, name: Option<&str>, password: &Password) -> Result<Self, String> {
        let email = validate_email(email)?;
        let name = match name.map(str::trim).filter(|name| !name.is_empty()) {
            Some(name) => validate_name(name)?,
            None => email.split('@').next().unwrap_or_default().to_owned(),
        };
        Ok(Self {
            email,
            name,
            password_hash: password.hash(),
        })
    }
}

/// A user's name as accounts accept it: trimmed, 1 to 100 characters.
pub fn validate_name(name: &str) -> Result<String, String> {
    let name = name.trim();
    match name.chars().count() {
        0 => Err("a name cannot be empty".to_owned()),
        1..=100 => Ok(name.to_owned()),
        _ => Err("a name must be at most 100 characters".to_owned()),
    }
}

/// The key a user's email is unique and found by: trimmed and lowercased.
pub fn email_key(email: &str) -> String {
    matching::email_key(email).unwrap_or_default()
}

/// An email address as accounts accept it: trimmed, at most 254 characters, one `@` with
/// something on either side, no spaces or control characters.
pub fn validate_email(email: &str) -> Result<String, String> {
    let email = email.trim();
    let well_formed = email.len() <= 254
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
        && email.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty() && !domain.is_empty() && !domain.contains('@')
        });
    if well_formed {
        Ok(email.to_owned())
    } else {
        Err(format!("{email:?} is not an email address"))
    }
}

/// A password in the clear: checked against the length rule, never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

/// The fewest characters a password may have.
pub const MIN_PASSWORD_CHARS: usize = 10;
/// The most characters a password may have.
pub const MAX_PASSWORD_CHARS: usize = 256;

impl Password {
    /// A password a person chose: 10 to 256 characters, nothing else required.
    pub fn new(text: impl Into<String>) -> Result<Self, String> {
        let text = text.into();
        let chars = text.chars().count();
        if (MIN_PASSWORD_CHARS..=MAX_PASSWORD_CHARS).contains(&chars) {
            Ok(Self(text))
        } else {
            Err(format!(
                "a password must be {MIN_PASSWORD_CHARS} to {MAX_PASSWORD_CHARS} characters"
            ))
        }
    }

    /// A fresh random password that is easy to copy: five groups of four lowercase letters
    /// and digits (100 bits), e.g. `k7f3-m9xq-2pwd-h4tn-a8ce`.
    pub fn generate() -> Self {
        const ALPHABET: &[u8; 32] = b"abcdefghijkmnpqrstuvwxyz23456789";
        let text = random_bytes::<20>()
            .chunks(4)
            .map(|group| {
                group
                    .iter()
                    .map(|byte| char::from(ALPHABET[usize::from(byte % 32)]))
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("-");
        Self(text)
    }

    /// The password itself, to show once or to hash.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Its Argon2id hash with a fresh salt.
    pub fn hash(&self) -> PasswordHash {
        let hash = Argon2::default()
            .hash_password(self.0.as_bytes())
            // Only an unusable random generator or absurd parameters fail here.
            .expect("Argon2id hashing with the default parameters");
        PasswordHash(hash.to_string())
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(***)")
    }
}

/// A password's Argon2id hash, as a PHC string (`$argon2id$v=19$m=19456,t=2,p=1$...`).
#[derive(Clone, PartialEq, Eq)]
pub struct PasswordHash(String);

impl PasswordHash {
    /// A stored hash.
    pub fn from_phc(phc: impl Into<String>) -> Self {
        Self(phc.into())
    }

    /// The PHC string, for the store to keep.
    pub fn as_phc(&self) -> &str {
        &self.0
    }

    /// Whether `password` is the one hashed (constant time in the password; the cost of
    /// one Argon2id hash). A malformed stored hash matches nothing.
    pub fn verify(&self, password: &str) -> bool {
        Phc::new(&self.0).is_ok_and(|parsed| {
            Argon2::default()
                .verify_password(password.as_bytes(), &parsed)
                .is_ok()
        })
    }

    /// The hash of a random password, to verify against when no user has the given email,
    /// so that a sign-in takes as long whether or not the email exists.
    pub fn decoy() -> &'static PasswordHash {
        static DECOY: OnceLock<PasswordHash> = OnceLock::new();
        DECOY.get_or_init(|| Password::generate().hash())
    }
}

impl fmt::Debug for PasswordHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PasswordHash(***)")
    }
}

/// A user's membership of a project, seen from the project.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// The user.
    pub user: User,
    /// Their role in the project.
    pub role: Role,
    /// Whether the project's owners let this member export its leads ([`may_export`]).
    pub can_export: bool,
    /// What they are alerted of in the project.
    pub alerts: AlertPreferences,
}

/// Those of `members` who may take leads ([`may_take`]), as assignees, in their order:
/// whom leads can be given to.
pub fn takers(members: Vec<Member>) -> Vec<Assignee> {
    members
        .into_iter()
        .filter(|member| may_take(member.role, member.user.disabled))
        .map(|member| Assignee {
            id: member.user.id,
            name: member.user.name,
        })
        .collect()
}

/// A user's membership of a project, seen from the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Membership {
    /// The project.
    pub project: Project,
    /// The user's role in it.
    pub role: Role,
    /// Whether the project's owners let this member export its leads ([`may_export`]).
    pub can_export: bool,
    /// What they are alerted of in it.
    pub alerts: AlertPreferences,
}

impl Membership {
    /// Whether the user may export the project's leads ([`may_export`]).
    pub fn may_export(&self) -> bool {
        may_export(self.role, self.can_export)
    }
}

/// Whether a member of `role`, allowed to export or not (`can_export`), may export the
/// project's leads as CSV: its personal data, all at once. Owners may; a member may once
/// an owner allows it; a viewer never.
pub fn may_export(role: Role, can_export: bool) -> bool {
    match role {
        Role::Owner => true,
        Role::Member => can_export,
        Role::Viewer => false,
    }
}

/// How long a session lasts without a request.
pub fn session_idle_timeout() -> Duration {
    Duration::hours(12)
}

/// How long a session lasts at most, however active.
pub fn session_lifetime() -> Duration {
    Duration::days(30)
}

/// 256 random bits as 64 lowercase hex digits: the secret of a session or of a one-use
/// link ([`crate::link::LinkToken`]), kept by a store only as its SHA-256.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct HexSecret(String);

impl HexSecret {
    /// A fresh secret.
    pub(crate) fn generate() -> Self {
        Self(hex::encode(random_bytes::<32>()))
    }

    /// A secret as a client presents it, when it has the right shape.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        (text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| Self(text.to_ascii_lowercase()))
    }

    /// The secret itself.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// Its SHA-256, which is all a store keeps.
    pub(crate) fn sha256(&self) -> [u8; 32] {
        Sha256::digest(self.0.as_bytes()).into()
    }
}

/// A session token as the browser holds it: 64 hex digits. Never printed or stored.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionToken(HexSecret);

impl SessionToken {
    /// A fresh token of 256 random bits.
    pub fn generate() -> Self {
        Self(HexSecret::generate())
    }

    /// A token presented in a cookie, when it has the right shape.
    pub fn parse(text: &str) -> Option<Self> {
        HexSecret::parse(text).map(Self)
    }

    /// The token, for the cookie.
    pub fn expose(&self) -> &str {
        self.0.expose()
    }

    /// What the store keeps and finds the session by.
    pub fn hash(&self) -> SessionHash {
        SessionHash(self.0.sha256())
    }

    /// The session's anti-forgery token for forms: derived from the session token under its
    /// own label, so it reveals nothing of the token or of the stored hash.
    pub fn csrf_token(&self) -> String {
        let mut digest = Sha256::new();
        digest.update(b"leadtrack csrf\0");
        digest.update(self.0.expose().as_bytes());
        hex::encode(&digest.finalize()[..16])
    }
}

impl fmt::Debug for SessionToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionToken(***)")
    }
}

/// The SHA-256 of a session token: all a store keeps of it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SessionHash(pub [u8; 32]);

impl fmt::Debug for SessionHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionHash(***)")
    }
}

/// A signed-in session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Session {
    /// Whose it is.
    pub user_id: UserId,
    /// When the user signed in.
    pub created_at: DateTime<Utc>,
    /// When the session was last used (to a minute's precision, see [`Session::needs_touch`]).
    pub last_seen_at: DateTime<Utc>,
}

impl Session {
    /// Whether the session is still good at `now`: used within the idle timeout and
    /// younger than the lifetime.
    pub fn is_live(&self, now: DateTime<Utc>) -> bool {
        now - self.last_seen_at < session_idle_timeout()
            && now - self.created_at < session_lifetime()
    }

    /// Whether `last_seen_at` is worth a write at `now`: at most once a minute, so that
    /// page views do not each cost a write.
    pub fn needs_touch(&self, now: DateTime<Utc>) -> bool {
        now - self.last_seen_at >= Duration::minutes(1)
    }
}

/// The browser a session was started from, as its user sees it in their list of sessions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Device {
    /// The client address that signed in.
    pub address: String,
    /// The browser's `User-Agent`, cut to [`Device::MAX_USER_AGENT`] characters.
    pub user_agent: String,
}

impl Device {
    /// The most characters of a `User-Agent` kept.
    pub const MAX_USER_AGENT: usize = 200;

    /// The device of a sign-in from `address` with this `User-Agent`.
    pub fn new(address: &str, user_agent: &str) -> Self {
        Self {
            address: address.to_owned(),
            user_agent: user_agent.chars().take(Self::MAX_USER_AGENT).collect(),
        }
    }
}

/// One of a user's live sessions, as their profile lists them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionInfo {
    /// The session's hash, to tell the viewer's own session from the others.
    pub hash: SessionHash,
    /// The session's times.
    pub session: Session,
    /// Where it was started.
    pub device: Device,
}

/// What a [`Throttle`] counts. A store keeps each in its own table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Throttled {
    /// Failed sign-ins, and wrong current passwords ([`Throttle::default`]).
    FailedSignIn,
    /// Password-reset requests ([`Throttle::reset_requests`]).
    ResetRequest,
}

impl Throttled {
    /// The table a store keeps them in, by the same name in every backend.
    pub fn table(self) -> &'static str {
        match self {
            Self::FailedSignIn => "login_failures",
            Self::ResetRequest => "reset_requests",
        }
    }
}

/// The attempts of one kind for an email and from a client address within the window,
/// oldest first, as [`Throttle::retry_after`] reads them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attempts {
    /// Attempts for the email (by [`email_key`]).
    pub by_email: Vec<DateTime<Utc>>,
    /// Attempts from the client address.
    pub by_address: Vec<DateTime<Utc>>,
}

/// A limit on attempts: after `per_email` for one email, or `per_address` from one
/// address, within `window`, more are refused until enough have left the window. The
/// default is the brute-force rule of sign-in, which counts failures (a right password is
/// refused too while it is closed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Throttle {
    /// Attempts for one email that close it. 5 by default.
    pub per_email: usize,
    /// Attempts from one address that close it. 20 by default.
    pub per_address: usize,
    /// How far back attempts count. 15 minutes by default.
    pub window: Duration,
}

impl Default for Throttle {
    fn default() -> Self {
        Self {
            per_email: 5,
            per_address: 20,
            window: Duration::minutes(15),
        }
    }
}

impl Throttle {
    /// The limit of password-reset requests: 3 an hour for one email, 20 an hour from one
    /// address, so that nobody can flood an inbox with reset messages.
    pub fn reset_requests() -> Self {
        Self {
            per_email: 3,
            per_address: 20,
            window: Duration::hours(1),
        }
    }

    /// How long an attempt at `now` must wait, or `None` when it may go ahead.
    pub fn retry_after(&self, failures: &Attempts, now: DateTime<Utc>) -> Option<Duration> {
        let since = now - self.window;
        let wait = |times: &[DateTime<Utc>], limit: usize| {
            let recent: Vec<_> = times.iter().filter(|at| **at > since).collect();
            // Open again when all but `limit - 1` of the recent failures have left the window.
            (limit > 0 && recent.len() >= limit)
                .then(|| *recent[recent.len() - limit] + self.window - now)
        };
        [
            wait(&failures.by_email, self.per_email),
            wait(&failures.by_address, self.per_address),
        ]
        .into_iter()
        .flatten()
        .max()
        .map(|wait| wait.max(Duration::seconds(1)))
    }
}

/// Who did something to a lead: a signed-in user, or a caller of the API with a key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Actor {
    /// A user of the dashboard.
    User {
        /// The user.
        id: UserId,
        /// Their name at the time.
        name: String,
    },
    /// A request with an API key.
    ApiKey {
        /// The key's display prefix.
        prefix: String,
    },
    /// The server's admin commands (`job retry`), run by whoever runs the server.
    Admin,
}

impl Actor {
    /// The actor of a request that presented `key` (only its display prefix is kept).
    pub fn api_key(key: &str) -> Self {
        Self::ApiKey {
            prefix: key.chars().take(KEY_PREFIX_LEN).collect(),
        }
    }
}

impl fmt::Display for Actor {
    /// `Ada Lovelace`, or `API key lt_0123abcd`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::User { name, .. } => f.write_str(name),
            Self::ApiKey { prefix } => write!(f, "API key {prefix}"),
            Self::Admin => f.write_str("the admin commands"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(minutes: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 1, 0, 0, 0).unwrap() + Duration::minutes(minutes)
    }

    #[test]
    fn passwords_are_10_to_256_characters_of_anything() {
        assert!(Password::new("short").is_err());
        assert!(Password::new("ten chars!").is_ok());
        assert!(Password::new("ünïcødé_ok").is_ok(), "counted in characters");
        assert!(Password::new("x".repeat(256)).is_ok());
        assert!(Password::new("x".repeat(257)).is_err());
        let generated = Password::generate();
        assert_eq!(generated.expose().len(), 24);
        assert!(Password::new(generated.expose()).is_ok());
        assert_ne!(Password::generate(), generated);
        assert!(!format!("{generated:?}").contains(generated.expose()));
    }

    #[test]
    fn hashes_are_argon2id_and_verify_only_the_password() {
        let password = Password::new("correct horse battery").unwrap();
        let hash = password.hash();
        assert!(hash.as_phc().starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
        assert!(hash.verify("correct horse battery"));
        assert!(!hash.verify("correct horse batterY"));
        assert_ne!(password.hash(), hash, "salted");
        assert!(!PasswordHash::from_phc("not a hash").verify("anything"));
        assert!(!format!("{hash:?}").contains("argon2"));
        assert!(!PasswordHash::decoy().verify("correct horse battery"));
    }

    #[test]
    fn emails_and_names() {
        let user = NewUser::new(" Ada@Example.com ", None, &Password::generate()).unwrap();
        assert_eq!(
            (user.email.as_str(), user.name.as_str()),
            ("Ada@Example.com", "Ada")
        );
        assert_eq!(email_key(&user.email), "ada@example.com");
        for bad in ["", "ada", "@x.io", "ada@", "a b@x.io", "a@b@c"] {
            assert!(validate_email(bad).is_err(), "{bad:?}");
        }
        let named = NewUser::new("a@x.io", Some(" Ada L. "), &Password::generate()).unwrap();
        assert_eq!(named.name, "Ada L.");
    }

    #[test]
    fn session_tokens_hash_and_derive_a_separate_csrf_token() {
        let token = SessionToken::generate();
        assert_eq!(token.expose().len(), 64);
        assert_eq!(SessionToken::parse(token.expose()), Some(token.clone()));
        assert_eq!(SessionToken::parse("abc"), None);
        assert_eq!(SessionToken::parse(&"g".repeat(64)), None);
        assert_eq!(token.hash(), token.clone().hash());
        let csrf = token.csrf_token();
        assert_eq!(csrf.len(), 32);
        assert!(!token.expose().contains(&csrf) && !hex::encode(token.hash().0).contains(&csrf));
        assert_ne!(SessionToken::generate().csrf_token(), csrf);
    }

    #[test]
    fn sessions_expire_when_idle_or_old() {
        let session = Session {
            user_id: UserId(1),
            created_at: at(0),
            last_seen_at: at(0),
        };
        assert!(session.is_live(at(12 * 60 - 1)));
        assert!(!session.is_live(at(12 * 60)));
        let busy = Session {
            last_seen_at: at(30 * 24 * 60 - 1),
            ..session
        };
        assert!(busy.is_live(at(30 * 24 * 60 - 1)));
        assert!(!busy.is_live(at(30 * 24 * 60)));
        assert!(!session.needs_touch(at(0)) && session.needs_touch(at(1)));
    }

    #[test]
    fn the_throttle_opens_when_enough_failures_leave_the_window() {
        let throttle = Throttle::default();
        let failures = |minutes: &[i64]| Attempts {
            by_email: minutes.iter().map(|m| at(*m)).collect(),
            by_address: Vec::new(),
        };
        assert_eq!(throttle.retry_after(&failures(&[0, 1, 2, 3]), at(4)), None);
        let five = failures(&[0, 1, 2, 3, 4]);
        assert_eq!(
            throttle.retry_after(&five, at(5)),
            Some(Duration::minutes(10))
        );
        assert_eq!(
            throttle.retry_after(&five, at(15)),
            None,
            "the first left the window"
        );
        // 20 failures from one address within 5 minutes close it until the first of them
        // leaves the window; 20 spread over 20 minutes never are 20 within 15.
        let many = Attempts {
            by_email: Vec::new(),
            by_address: (0..20).map(|i| at(0) + Duration::seconds(15 * i)).collect(),
        };
        assert_eq!(
            throttle.retry_after(&many, at(5)),
            Some(Duration::minutes(10))
        );
        let spread = Attempts {
            by_email: Vec::new(),
            by_address: (0..20).map(at).collect(),
        };
        assert_eq!(throttle.retry_after(&spread, at(20)), None);
    }

    #[test]
    fn actors_read_as_people_or_key_prefixes() {
        let user = Actor::User {
            id: UserId(3),
            name: "Ada Lovelace".into(),
        };
        assert_eq!(user.to_string(), "Ada Lovelace");
        let key = Actor::api_key("lt_0123abcd4567ef89");
        assert_eq!(key.to_string(), "API key lt_0123abcd");
        assert_eq!(
            serde_json::to_value(&key).unwrap(),
            serde_json::json!({"kind": "api_key", "prefix": "lt_0123abcd"})
        );
    }
}
