//! Rates: a token bucket per client address on createLead (which takes no key, and whose
//! project id any page's source shows), past which leads are held as spam rather than
//! refused; each project's held budget, past which what would be held is refused; and a
//! token bucket per API key on the keyed routes, past which requests are refused.

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::str::FromStr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use chrono::{DateTime, Utc};

use governor::clock::{Clock, MonotonicClock};
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use leadtrack_core::ProjectId;
use leadtrack_core::key::KeyHash;

use crate::reply::ApiError;

/// A token bucket: `per_minute` requests a minute on average, of which up to `burst` may
/// come at once. `per_minute` 0 turns the limit off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit {
    /// Tokens refilled per minute, evenly spread; 0: no limit.
    pub per_minute: u32,
    /// How many tokens the bucket holds (at least 1).
    pub burst: u32,
}

impl RateLimit {
    /// No limit.
    pub const OFF: Self = Self {
        per_minute: 0,
        burst: 0,
    };

    /// `per_minute` a minute with bursts of up to `burst`.
    pub const fn new(per_minute: u32, burst: u32) -> Self {
        Self { per_minute, burst }
    }

    /// The governor quota, `None` when the limit is off.
    fn quota(self) -> Option<Quota> {
        let per_minute = NonZeroU32::new(self.per_minute)?;
        let burst = NonZeroU32::new(self.burst).unwrap_or(NonZeroU32::MIN);
        Some(Quota::per_minute(per_minute).allow_burst(burst))
    }
}

/// `PER_MINUTE:BURST` (`60:30`), `PER_MINUTE` alone (the burst is as large), or `off`.
impl FromStr for RateLimit {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("off") {
            return Ok(Self::OFF);
        }
        let invalid =
            || format!("rate limit {text:?} must be PER_MINUTE:BURST (such as 60:30) or off");
        let (rate, burst) = text.split_once(':').unwrap_or((text, text));
        let rate: u32 = rate.trim().parse().map_err(|_| invalid())?;
        let burst: u32 = burst.trim().parse().map_err(|_| invalid())?;
        if rate > 0 && burst == 0 {
            return Err(invalid());
        }
        Ok(Self::new(rate, burst))
    }
}

impl fmt::Display for RateLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.per_minute == 0 {
            f.write_str("off")
        } else {
            write!(f, "{}:{}", self.per_minute, self.burst)
        }
    }
}

/// The rates of the lead routes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimits {
    /// createLead per client address (an IPv6 client by its /64 network), past which its
    /// leads are held as spam ("burst from one address"). 600 a minute, bursts of 120: a
    /// site's own server relaying a busy form (the WordPress plugin, 12 a second for 20
    /// seconds) stays within it, while a flood of 3,000 in 15 seconds puts at most 270 in
    /// the inbox.
    pub per_ip: RateLimit,
    /// Every keyed route together, per API key, past which requests are refused. 6,000 a
    /// minute, bursts of 1,000.
    pub per_key: RateLimit,
}

impl Default for RateLimits {
    fn default() -> Self {
        Self {
            per_ip: RateLimit::new(600, 120),
            per_key: RateLimit::new(6_000, 1_000),
        }
    }
}

/// The buckets of [`RateLimits`] and the held counts, shared by every request of one
/// [`crate::routes`].
pub(crate) struct Limiters {
    ip: Option<Bucket<IpAddr>>,
    key: Option<Bucket<KeyHash>>,
    held: HeldCounts,
}

impl Limiters {
    pub(crate) fn new(limits: &RateLimits) -> Self {
        Self {
            ip: Bucket::new(limits.per_ip),
            key: Bucket::new(limits.per_key),
            held: HeldCounts::default(),
        }
    }

    /// Takes a token of the client address's bucket: whether the address is past its rate
    /// (no address, no rate).
    pub(crate) fn past_ip_rate(&self, ip: Option<IpAddr>) -> bool {
        let ip = ip.map(leadtrack_http::client_network);
        check(self.ip.as_ref(), ip.as_ref(), "ip").is_err()
    }

    /// Counts one more lead held for `project` this hour, or refuses it (`429` until the
    /// next hour) once `budget` are.
    pub(crate) fn hold(&self, project: ProjectId, budget: u32) -> Result<(), ApiError> {
        self.held
            .take(project, budget, Utc::now())
            .inspect_err(|_| {
                leadtrack_http::metrics::rate_limited("held_budget");
            })
    }

    /// Takes a token of the API key's bucket.
    pub(crate) fn check_key(&self, key: &KeyHash) -> Result<(), ApiError> {
        check(self.key.as_ref(), Some(key), "key")
    }
}

/// Takes a token of `key`'s bucket, if there is a bucket and a key; a refusal is counted
/// as the `limit` bucket's.
fn check<K: Clone + Hash + Eq>(
    bucket: Option<&Bucket<K>>,
    key: Option<&K>,
    limit: &'static str,
) -> Result<(), ApiError> {
    match (bucket, key) {
        (Some(bucket), Some(key)) => bucket.check(key).inspect_err(|_| {
            leadtrack_http::metrics::rate_limited(limit);
        }),
        _ => Ok(()),
    }
}

/// The leads each project has held in the current hour (of the clock, in this process).
#[derive(Default)]
struct HeldCounts {
    counts: Mutex<HashMap<ProjectId, (i64, u32)>>,
}

impl HeldCounts {
    /// Counts one more for `project` in `now`'s hour, unless `budget` are counted already.
    fn take(&self, project: ProjectId, budget: u32, now: DateTime<Utc>) -> Result<(), ApiError> {
        let hour = now.timestamp().div_euclid(3_600);
        let mut counts = self
            .counts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // Last hour's counts are of no use: dropped when the hour turns.
        if counts.values().any(|(at, _)| *at != hour) {
            counts.retain(|_, (at, _)| *at == hour);
        }
        let (_, count) = counts.entry(project).or_insert((hour, 0));
        if *count >= budget {
            let wait = (hour + 1) * 3_600 - now.timestamp();
            return Err(ApiError::rate_limited(
                u32::try_from(wait).unwrap_or(1).max(1),
            ));
        }
        *count += 1;
        Ok(())
    }
}

/// How many checks pass between two sweeps of a bucket's idle keys.
const SWEEP_EVERY: u32 = 4_096;

/// One keyed token bucket.
struct Bucket<K: Clone + Hash + Eq> {
    limiter: RateLimiter<K, DefaultKeyedStateStore<K>, MonotonicClock>,
    checks: AtomicU32,
}

impl<K: Clone + Hash + Eq> Bucket<K> {
    fn new(limit: RateLimit) -> Option<Self> {
        let quota = limit.quota()?;
        Some(Self {
            limiter: RateLimiter::new(quota, DefaultKeyedStateStore::default(), MonotonicClock),
            checks: AtomicU32::new(0),
        })
    }

    /// `429 rate_limited` with `Retry-After` (whole seconds, at least 1) once the key's
    /// bucket is empty.
    fn check(&self, key: &K) -> Result<(), ApiError> {
        // Every client address ever seen would stay in memory: now and then, drop the keys
        // whose buckets have refilled (they are as good as new).
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.limiter.retain_recent();
            self.limiter.shrink_to_fit();
        }
        self.limiter.check_key(key).map_err(|not_until| {
            let wait = not_until.wait_time_from(MonotonicClock.now());
            let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
            ApiError::rate_limited(u32::try_from(seconds).unwrap_or(u32::MAX).max(1))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse_and_print() {
        assert_eq!("60:30".parse(), Ok(RateLimit::new(60, 30)));
        assert_eq!(" 100 ".parse(), Ok(RateLimit::new(100, 100)));
        assert_eq!("off".parse(), Ok(RateLimit::OFF));
        assert_eq!("0".parse(), Ok(RateLimit::new(0, 0)));
        for bad in ["", "60:", "x:1", "60:0", "-1:1", "1:2:3"] {
            assert!(bad.parse::<RateLimit>().is_err(), "{bad}");
        }
        assert_eq!(RateLimit::new(60, 30).to_string(), "60:30");
        assert_eq!(RateLimit::OFF.to_string(), "off");
    }

    fn ip(text: &str) -> Option<IpAddr> {
        Some(text.parse().unwrap())
    }

    #[test]
    fn an_address_past_its_rate_is_told_so_and_others_are_not() {
        let limiters = Limiters::new(&RateLimits {
            per_ip: RateLimit::new(1, 2),
            ..RateLimits::default()
        });
        assert!(!limiters.past_ip_rate(ip("192.0.2.1")));
        assert!(!limiters.past_ip_rate(ip("192.0.2.1")));
        assert!(limiters.past_ip_rate(ip("192.0.2.1")));
        assert!(!limiters.past_ip_rate(ip("192.0.2.2")));
        assert!(!limiters.past_ip_rate(None));
    }

    #[test]
    fn an_ipv6_client_is_limited_by_its_network() {
        let limiters = Limiters::new(&RateLimits {
            per_ip: RateLimit::new(1, 1),
            ..RateLimits::default()
        });
        assert!(!limiters.past_ip_rate(ip("2001:db8:1:2::1")));
        assert!(limiters.past_ip_rate(ip("2001:db8:1:2::ffff")));
        assert!(!limiters.past_ip_rate(ip("2001:db8:1:3::1")));
    }

    #[test]
    fn the_held_budget_refuses_until_the_hour_turns() {
        let held = HeldCounts::default();
        let at = |text: &str| text.parse::<DateTime<Utc>>().unwrap();
        let (a, b) = (ProjectId(1), ProjectId(2));
        assert!(held.take(a, 2, at("2026-11-26T10:00:00Z")).is_ok());
        assert!(held.take(a, 2, at("2026-11-26T10:30:00Z")).is_ok());
        let refused = held.take(a, 2, at("2026-11-26T10:59:30Z")).unwrap_err();
        let response = refused.into_response();
        assert_eq!(response.status(), 429);
        assert_eq!(response.headers()["retry-after"], "30");
        assert!(
            held.take(b, 2, at("2026-11-26T10:59:31Z")).is_ok(),
            "per project"
        );
        assert!(
            held.take(a, 2, at("2026-11-26T11:00:00Z")).is_ok(),
            "a new hour"
        );
        assert!(held.take(a, 0, at("2026-11-26T11:00:00Z")).is_err());
    }
}
