//! One CRM sync of a person at a time: the events of a person's leads reach a CRM one
//! after the other, so the second finds what the first made (the person, the deal) instead
//! of making its own. A person is known by the lead's email, else its phone, else the lead
//! alone. The worker's loops share 64 locks, a person taking the one its sync and key hash
//! to: bounded memory, and loops syncing other people rarely wait.

use std::hash::{DefaultHasher, Hash, Hasher};

use leadtrack_core::api::Lead;
use tokio::sync::{Mutex, MutexGuard};
use uuid::Uuid;

/// The locks one worker's loops share.
pub(crate) struct LeadLocks([Mutex<()>; 64]);

impl LeadLocks {
    /// Locks, none held.
    pub(crate) fn new() -> Self {
        Self(std::array::from_fn(|_| Mutex::new(())))
    }

    /// Holds the lock of `lead`'s person for sync `sync` until the guard is dropped.
    pub(crate) async fn lock(&self, sync: Uuid, lead: &Lead) -> MutexGuard<'_, ()> {
        let mut hasher = DefaultHasher::new();
        sync.hash(&mut hasher);
        match (&lead.email, &lead.phone) {
            (Some(email), _) => email.to_lowercase().hash(&mut hasher),
            (None, Some(phone)) => phone
                .chars()
                .filter(char::is_ascii_digit)
                .for_each(|c| c.hash(&mut hasher)),
            (None, None) => lead.id.0.hash(&mut hasher),
        }
        let slot = usize::try_from(hasher.finish() % 64).unwrap_or_default();
        self.0[slot].lock().await
    }
}
