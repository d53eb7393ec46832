//! Requests paced to a platform's published quota, per quota scope (for the Data Manager
//! API, the Google Cloud project behind the server's Google app, which every project of
//! the server shares), and every scope held back after the platform said "too many".
//!
//! Pacing is per worker process: several processes on one database each keep their own
//! count, and the platform's `429` (held here for its `Retry-After`) covers what they
//! share.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// A published limit on requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Quota {
    /// Requests in any `window`.
    pub(crate) per_window: u32,
    /// The window `per_window` counts in: a minute, or HubSpot's ten seconds.
    pub(crate) window: Duration,
    /// Requests in a day (counted from the scope's first request of the day).
    pub(crate) per_day: u32,
}

#[cfg(test)]
const MINUTE: Duration = Duration::from_secs(60);
const DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// How far ahead a request waits for its slot; a later slot sends the request back to the
/// queue, to be tried when the slot is due, rather than holding a worker.
const PATIENCE: Duration = Duration::from_secs(90);

#[derive(Default)]
struct Scope {
    /// When the last `per_window` requests were (or are booked to be) made, oldest first.
    window: VecDeque<Instant>,
    /// When the current day began, and how many requests it has made.
    day: Option<(Instant, u32)>,
    /// The platform's "too many": no request before then.
    held_until: Option<Instant>,
}

/// The pacing of every quota scope this worker sends to.
#[derive(Default)]
pub(crate) struct Pacer {
    scopes: Mutex<HashMap<String, Scope>>,
}

impl Pacer {
    /// Books the next request to `scope` within its `quota`, if it has one, and waits for
    /// its slot; `Err` with how long until a slot is free when that is further away than
    /// the worker waits, or while the scope is held back.
    pub(crate) async fn acquire(&self, scope: &str, quota: Option<Quota>) -> Result<(), Duration> {
        let slot = self.book(scope, quota, Instant::now())?;
        tokio::time::sleep_until(slot).await;
        Ok(())
    }

    /// Holds `scope` back for `wait`: the platform answered "too many".
    pub(crate) fn hold(&self, scope: &str, wait: Duration) {
        let until = Instant::now() + wait;
        let mut scopes = self.scopes.lock().unwrap_or_else(|e| e.into_inner());
        let held = &mut scopes.entry(scope.to_owned()).or_default().held_until;
        *held = Some(held.map_or(until, |at| at.max(until)));
    }

    fn book(&self, scope: &str, quota: Option<Quota>, now: Instant) -> Result<Instant, Duration> {
        let mut scopes = self.scopes.lock().unwrap_or_else(|e| e.into_inner());
        let scope = scopes.entry(scope.to_owned()).or_default();
        if let Some(until) = scope.held_until.filter(|until| *until > now) {
            return Err(until - now);
        }
        let Some(quota) = quota else {
            return Ok(now);
        };
        let (day_began, made) = match scope.day {
            Some((began, made)) if now < began + DAY => (began, made),
            _ => (now, 0),
        };
        if made >= quota.per_day {
            return Err(day_began + DAY - now);
        }
        // The n-th request goes at least a window after the (n - per_window)-th: the log
        // keeps the last per_window slots, and the oldest of a full log sets the next.
        let per_window = quota.per_window.max(1) as usize;
        let slot = match scope.window.len() >= per_window {
            true => now.max(scope.window[0] + quota.window),
            false => now,
        };
        if slot - now > PATIENCE {
            return Err(slot - now);
        }
        scope.window.push_back(slot);
        while scope.window.len() > per_window {
            scope.window.pop_front();
        }
        scope.day = Some((day_began, made + 1));
        Ok(slot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUOTA: Quota = Quota {
        per_window: 3,
        window: MINUTE,
        per_day: 7,
    };

    #[tokio::test(start_paused = true)]
    async fn a_minute_holds_its_quota_and_later_requests_wait_their_slot() {
        let pacer = Pacer::default();
        let start = Instant::now();
        for _ in 0..3 {
            pacer.acquire("g", Some(QUOTA)).await.unwrap();
        }
        assert_eq!(
            start.elapsed(),
            Duration::ZERO,
            "the first three go at once"
        );
        pacer.acquire("g", Some(QUOTA)).await.unwrap();
        assert_eq!(
            start.elapsed(),
            MINUTE,
            "the fourth waits for the first's minute"
        );
        pacer.acquire("other", Some(QUOTA)).await.unwrap();
        assert_eq!(start.elapsed(), MINUTE, "another scope has its own quota");
    }

    #[tokio::test(start_paused = true)]
    async fn a_spent_day_and_a_hold_send_requests_back_with_the_wait() {
        let pacer = Pacer::default();
        let start = Instant::now();
        for _ in 0..7 {
            pacer.acquire("g", Some(QUOTA)).await.unwrap();
        }
        let wait = pacer.acquire("g", Some(QUOTA)).await.unwrap_err();
        assert_eq!(wait, DAY - start.elapsed(), "the day's quota is spent");
        tokio::time::sleep(wait).await;
        pacer.acquire("g", Some(QUOTA)).await.unwrap();

        assert_eq!(
            pacer.acquire("meta:1", None).await,
            Ok(()),
            "no quota, no wait"
        );
        pacer.hold("meta:1", Duration::from_secs(5));
        assert_eq!(
            pacer.acquire("meta:1", None).await,
            Err(Duration::from_secs(5))
        );
        pacer.hold("g", Duration::from_secs(30));
        pacer.hold("g", Duration::from_secs(10));
        assert_eq!(
            pacer.acquire("g", Some(QUOTA)).await,
            Err(Duration::from_secs(30)),
            "the longer hold stands"
        );
        tokio::time::sleep(Duration::from_secs(30)).await;
        assert_eq!(pacer.acquire("g", Some(QUOTA)).await, Ok(()));
    }
}
