//! Secrets encrypted at rest: the server's key ([`SecretKey`]), the cipher that seals and
//! opens stored secrets with it ([`Vault`]), and the columns that hold them ([`SEALED`]),
//! stated once for both backends.
//!
//! A sealed value is `lt1:` and the URL-safe base64 of a random 24-byte nonce followed by
//! the XChaCha20-Poly1305 ciphertext and its tag. The column's name is the associated
//! data, so a value copied into another column does not open. A random nonce per value is
//! safe with XChaCha's 192-bit nonces, however many values one key seals.
//!
//! Each database keeps a check value (a known text sealed with its key): a store opened
//! with another key refuses to start rather than fail on every secret, or send garbage.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};

use crate::types::random_bytes;

/// What begins every sealed value: the format's version.
const PREFIX: &str = "lt1:";

/// The nonce's length, in bytes.
const NONCE: usize = 24;

/// The text the check value seals, and the associated data it is sealed with.
const CHECK: &str = "leadtrack secret key check";

/// Why a store refuses a key that is not its database's.
pub const WRONG_KEY: &str = "the secret key is not the one this database's secrets are sealed with; start with the key it was created with (LEADTRACK_SECRET_KEY or --secret-key-file)";

/// A column that holds a secret, sealed in every database: its table, the columns of the
/// table's key, and the column itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SealedColumn {
    /// The table.
    pub table: &'static str,
    /// The columns that name a row (its primary key).
    pub key: &'static [&'static str],
    /// The sealed column.
    pub column: &'static str,
}

impl SealedColumn {
    /// The associated data its values are sealed with: `table.column`.
    fn context(&self) -> String {
        format!("{}.{}", self.table, self.column)
    }
}

/// Every sealed column: a platform's settings (tokens, client secrets), a lead webhook's
/// signing secret, a chat channel's incoming-webhook URL (which is its credential), a
/// platform's grant by sign-in, a lead source's settings (its key or token), an inbound
/// webhook's settings (its secret), and the access token a platform's spend is read with.
pub const SEALED: [SealedColumn; 7] = [
    SealedColumn {
        table: "integrations",
        key: &["project_id", "kind"],
        column: "settings",
    },
    SealedColumn {
        table: "webhooks",
        key: &["id"],
        column: "secret",
    },
    SealedColumn {
        table: "chat_channels",
        key: &["project_id", "kind"],
        column: "url",
    },
    SealedColumn {
        table: "oauth_grants",
        key: &["project_id", "provider"],
        column: "credentials",
    },
    SealedColumn {
        table: "lead_sources",
        key: &["project_id", "kind"],
        column: "settings",
    },
    SealedColumn {
        table: "inbound_hooks",
        key: &["id"],
        column: "settings",
    },
    SealedColumn {
        table: "spend_tokens",
        key: &["project_id", "platform"],
        column: "token",
    },
];

/// The column of integration settings.
pub const INTEGRATION_SETTINGS: SealedColumn = SEALED[0];
/// The column of lead webhooks' signing secrets.
pub const WEBHOOK_SECRET: SealedColumn = SEALED[1];
/// The column of chat channels' URLs.
pub const CHAT_CHANNEL_URL: SealedColumn = SEALED[2];
/// The column of the grants platforms gave by sign-in (their refresh tokens).
pub const OAUTH_GRANT: SealedColumn = SEALED[3];
/// The column of lead sources' settings.
pub const LEAD_SOURCE: SealedColumn = SEALED[4];
/// The column of inbound webhooks' settings (their secrets).
pub const INBOUND_HOOK: SealedColumn = SEALED[5];
/// The column of the access tokens spend is read with, where not with a sign-in.
pub const SPEND_TOKEN: SealedColumn = SEALED[6];

/// The server's 32-byte key. Never printed: its `Debug` hides it.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretKey([u8; 32]);

impl SecretKey {
    /// A new random key.
    pub fn generate() -> Self {
        Self(random_bytes())
    }

    /// The key made of these bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// A key written as base64 (standard or URL-safe, padded or not; surrounding
    /// whitespace, such as a key file's newline, ignored).
    ///
    /// Errors: not base64, or not 32 bytes once decoded.
    pub fn from_base64(text: &str) -> Result<Self, KeyError> {
        let text = text.trim();
        let bytes = STANDARD
            .decode(text)
            .or_else(|_| URL_SAFE_NO_PAD.decode(text.trim_end_matches('=')))
            .map_err(|_| KeyError::NotBase64)?;
        let bytes: [u8; 32] = bytes
            .try_into()
            .map_err(|bytes: Vec<u8>| KeyError::Length(bytes.len()))?;
        Ok(Self(bytes))
    }

    /// The key as base64 (standard, padded), as a key file holds it.
    pub fn to_base64(&self) -> String {
        STANDARD.encode(self.0)
    }
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretKey(***)")
    }
}

/// A key that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// The text is not base64.
    #[error("the secret key is not base64; make one with `openssl rand -base64 32`")]
    NotBase64,
    /// It decodes to the wrong number of bytes.
    #[error(
        "the secret key is {0} bytes long once decoded, not 32; make one with `openssl rand -base64 32`"
    )]
    Length(usize),
}

/// A stored secret that cannot be opened.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VaultError {
    /// The value is not in the sealed format.
    #[error("a stored secret is not sealed")]
    NotSealed,
    /// It was sealed with another key, for another column, or altered.
    #[error("a stored secret does not open with this key")]
    WrongKey,
}

/// Seals and opens stored secrets with one key.
#[derive(Clone)]
pub struct Vault {
    cipher: XChaCha20Poly1305,
}

impl fmt::Debug for Vault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Vault(***)")
    }
}

impl Vault {
    /// The vault of `key`.
    pub fn new(key: &SecretKey) -> Self {
        Self {
            cipher: XChaCha20Poly1305::new(&key.0.into()),
        }
    }

    /// `plain` sealed for `column`.
    pub fn seal(&self, column: SealedColumn, plain: &str) -> String {
        self.seal_with(&column.context(), plain)
    }

    /// A value of `column` opened.
    ///
    /// Errors: not sealed, or sealed with another key or for another column.
    pub fn open(&self, column: SealedColumn, sealed: &str) -> Result<String, VaultError> {
        self.open_with(&column.context(), sealed)
    }

    /// A new check value of this vault's key, for a database to keep.
    pub fn check_value(&self) -> String {
        self.seal_with(CHECK, CHECK)
    }

    /// Whether a database's check value was made with this vault's key.
    pub fn verifies(&self, check: &str) -> bool {
        self.open_with(CHECK, check).is_ok_and(|text| text == CHECK)
    }

    fn seal_with(&self, context: &str, plain: &str) -> String {
        let nonce: [u8; NONCE] = random_bytes();
        let payload = Payload {
            msg: plain.as_bytes(),
            aad: context.as_bytes(),
        };
        // Encryption fails only past ChaCha20's 256 GiB per message.
        let sealed = self
            .cipher
            .encrypt(&XNonce::from(nonce), payload)
            .expect("a stored secret is far below XChaCha20's length limit");
        let mut bytes = nonce.to_vec();
        bytes.extend_from_slice(&sealed);
        format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(bytes))
    }

    fn open_with(&self, context: &str, sealed: &str) -> Result<String, VaultError> {
        let bytes = sealed
            .strip_prefix(PREFIX)
            .and_then(|text| URL_SAFE_NO_PAD.decode(text).ok())
            .filter(|bytes| bytes.len() > NONCE)
            .ok_or(VaultError::NotSealed)?;
        let (nonce, sealed) = bytes.split_at(NONCE);
        let nonce: [u8; NONCE] = nonce.try_into().map_err(|_| VaultError::NotSealed)?;
        let payload = Payload {
            msg: sealed,
            aad: context.as_bytes(),
        };
        let plain = self
            .cipher
            .decrypt(&XNonce::from(nonce), payload)
            .map_err(|_| VaultError::WrongKey)?;
        String::from_utf8(plain).map_err(|_| VaultError::WrongKey)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_value_opens_with_its_key_and_column_only() {
        let vault = Vault::new(&SecretKey::generate());
        let sealed = vault.seal(WEBHOOK_SECRET, "whsec_known-secret");
        assert!(sealed.starts_with("lt1:"));
        assert!(!sealed.contains("known-secret"));
        assert_eq!(
            vault.open(WEBHOOK_SECRET, &sealed).as_deref(),
            Ok("whsec_known-secret")
        );
        assert_eq!(
            vault.open(CHAT_CHANNEL_URL, &sealed),
            Err(VaultError::WrongKey)
        );
        let other = Vault::new(&SecretKey::generate());
        assert_eq!(
            other.open(WEBHOOK_SECRET, &sealed),
            Err(VaultError::WrongKey)
        );
        assert_eq!(
            vault.open(WEBHOOK_SECRET, "whsec_plain"),
            Err(VaultError::NotSealed)
        );
        assert_eq!(
            vault.open(WEBHOOK_SECRET, "lt1:AAAA"),
            Err(VaultError::NotSealed)
        );
    }

    #[test]
    fn the_same_secret_seals_differently_each_time() {
        let vault = Vault::new(&SecretKey::generate());
        assert_ne!(
            vault.seal(INTEGRATION_SETTINGS, "x"),
            vault.seal(INTEGRATION_SETTINGS, "x")
        );
    }

    #[test]
    fn the_check_value_tells_the_key() {
        let key = SecretKey::generate();
        let check = Vault::new(&key).check_value();
        assert!(Vault::new(&key).verifies(&check));
        assert!(!Vault::new(&SecretKey::generate()).verifies(&check));
        assert!(!Vault::new(&key).verifies("not a check"));
    }

    #[test]
    fn keys_read_as_base64_of_32_bytes() {
        let key = SecretKey::generate();
        let text = key.to_base64();
        assert_eq!(
            SecretKey::from_base64(&format!(" {text}\n")),
            Ok(key.clone())
        );
        let url_safe = URL_SAFE_NO_PAD.encode(key.0);
        assert_eq!(SecretKey::from_base64(&url_safe), Ok(key.clone()));
        assert_eq!(SecretKey::from_base64("c2hvcnQ="), Err(KeyError::Length(5)));
        assert_eq!(
            SecretKey::from_base64("not base64!"),
            Err(KeyError::NotBase64)
        );
        assert_eq!(format!("{key:?}"), "SecretKey(***)");
    }
}
