//! One CRM sync of a person at a time: the events of a person's leads reach a CRM one
//! after the other, so the second finds what the first made (the person, the deal) instead
//! of making its own. A person is known by the lead's email, else its phone, else the lead
//! alone ([`Person`]). The worker's loops share 64 locks, a person taking the one its sync
//! and key hash to: bounded memory, and loops syncing other people rarely wait. A sync that
//! sends its events in batches (HubSpot) takes the lock of the whole sync instead.

use std::hash::{DefaultHasher, Hash, Hasher};

use leadtrack_core::api::Lead;
use tokio::sync::{Mutex, MutexGuard};
use uuid::Uuid;

/// Who a lead's person is to a CRM: their email (lowercased), else their phone's digits,
/// else only this lead.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Person {
    /// By email.
    Email(String),
    /// By phone digits.
    Phone(String),
    /// A lead with neither.
    Lead(i64),
}

impl Person {
    /// The person of `lead`.
    pub(crate) fn of(lead: &Lead) -> Self {
        match (&lead.email, &lead.phone) {
            (Some(email), _) => Self::Email(email.to_lowercase()),
            (None, Some(phone)) => {
                Self::Phone(phone.chars().filter(char::is_ascii_digit).collect())
            }
            (None, None) => Self::Lead(lead.id.0),
        }
    }
}

/// The locks one worker's loops share.
pub(crate) struct LeadLocks([Mutex<()>; 64]);

impl LeadLocks {
    /// Locks, none held.
    pub(crate) fn new() -> Self {
        Self(std::array::from_fn(|_| Mutex::new(())))
    }

    /// Holds the lock of `lead`'s person for sync `sync` until the guard is dropped.
    pub(crate) async fn lock(&self, sync: Uuid, lead: &Lead) -> MutexGuard<'_, ()> {
        self.slot(&(sync, Person::of(lead))).lock().await
    }

    /// Holds the lock of the whole sync `sync` until the guard is dropped.
    pub(crate) async fn lock_sync(&self, sync: Uuid) -> MutexGuard<'_, ()> {
        self.slot(&sync).lock().await
    }

    fn slot(&self, key: &impl Hash) -> &Mutex<()> {
        let mut hasher = DefaultHasher::new();
        key.hash(&mut hasher);
        let slot = usize::try_from(hasher.finish() % 64).unwrap_or_default();
        &self.0[slot]
    }
}
