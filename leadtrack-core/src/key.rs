//! API keys: generated once, shown once, kept only as a SHA-256 hash and a display prefix.

use std::fmt;

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use crate::types::random_bytes;

/// The SHA-256 of an API key: all a store keeps of it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyHash(pub [u8; 32]);

impl KeyHash {
    /// Hashes a presented key.
    pub fn of(key: &str) -> Self {
        Self(Sha256::digest(key.as_bytes()).into())
    }
}

impl fmt::Debug for KeyHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyHash({})", hex::encode(&self.0[..4]))
    }
}

/// Length of the display prefix of an API key (`lt_` and 8 characters).
pub const KEY_PREFIX_LEN: usize = 11;

/// A key as it is created: the plain text is shown once and never stored.
#[derive(Clone, PartialEq, Eq)]
pub struct GeneratedKey {
    /// The key to hand to the user, `lt_` and 48 hex digits.
    pub key: String,
    /// Its first [`KEY_PREFIX_LEN`] characters, kept for display and revocation.
    pub prefix: String,
    /// Its SHA-256.
    pub hash: KeyHash,
}

impl GeneratedKey {
    /// A fresh random key (192 bits of randomness).
    pub fn generate() -> Self {
        let key = format!("lt_{}", hex::encode(random_bytes::<24>()));
        Self {
            prefix: key[..KEY_PREFIX_LEN].to_owned(),
            hash: KeyHash::of(&key),
            key,
        }
    }
}

impl fmt::Debug for GeneratedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GeneratedKey")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

/// What is known of a stored key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiKeyInfo {
    /// The key's display prefix.
    pub prefix: String,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it was revoked, if it was.
    pub revoked_at: Option<DateTime<Utc>>,
}

/// A key just created: its plain text (shown once) and its record.
#[derive(Clone, PartialEq, Eq)]
pub struct NewApiKey {
    /// The plain key.
    pub key: String,
    /// The stored record.
    pub info: ApiKeyInfo,
}

impl fmt::Debug for NewApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NewApiKey")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

/// How a key to revoke is named: by the whole key, or by its display prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyRef {
    /// The whole key, by its hash.
    Hash(KeyHash),
    /// The first characters of the key (at least the display prefix).
    Prefix(String),
}

impl KeyRef {
    /// A whole key (longer than a display prefix) is named by its hash, anything shorter
    /// by prefix.
    pub fn parse(key_or_prefix: &str) -> Self {
        let text = key_or_prefix.trim();
        if text.len() > KEY_PREFIX_LEN {
            Self::Hash(KeyHash::of(text))
        } else {
            Self::Prefix(text.to_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_hash_to_what_a_presented_key_hashes_to() {
        let generated = GeneratedKey::generate();
        assert!(generated.key.starts_with("lt_"));
        assert_eq!(generated.key.len(), 51);
        assert!(generated.key.starts_with(&generated.prefix));
        assert_eq!(generated.prefix.len(), KEY_PREFIX_LEN);
        assert_eq!(KeyHash::of(&generated.key), generated.hash);
        assert_ne!(GeneratedKey::generate().key, generated.key);
        assert!(!format!("{generated:?}").contains(&generated.key));
    }

    #[test]
    fn key_hash_is_sha256() {
        assert_eq!(
            hex::encode(KeyHash::of("test@example.com").0),
            "973dfe463ec85785f5f95af5ba3906eedb2d931c24e69824a89ea65dba4e813b"
        );
    }

    #[test]
    fn whole_keys_are_named_by_hash_and_short_ones_by_prefix() {
        let key = GeneratedKey::generate();
        assert_eq!(KeyRef::parse(&key.key), KeyRef::Hash(key.hash));
        assert_eq!(
            KeyRef::parse(&key.prefix),
            KeyRef::Prefix(key.prefix.clone())
        );
        assert_eq!(KeyRef::parse(" lt_ab "), KeyRef::Prefix("lt_ab".into()));
    }
}
