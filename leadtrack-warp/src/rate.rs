//! Rate limits: token buckets per client address and per project on createLead (which
//! takes no key, and whose project id any page's source shows), and per API key on the
//! keyed routes.

use std::fmt;
use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::str::FromStr;
use std::sync::atomic::{AtomicU32, Ordering};

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

/// The limits of the lead routes. The defaults are far above what real form traffic sends,
/// so only floods meet them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimits {
    /// createLead per client address (an IPv6 client by its /64 network). 60 a minute,
    /// bursts of 30.
    pub per_ip: RateLimit,
    /// createLead per project, from all clients together. 1,200 a minute, bursts of 300.
    pub per_project: RateLimit,
    /// Every keyed route together, per API key. 6,000 a minute, bursts of 1,000.
    pub per_key: RateLimit,
}

impl Default for RateLimits {
    fn default() -> Self {
        Self {
            per_ip: RateLimit::new(60, 30),
            per_project: RateLimit::new(1_200, 300),
            per_key: RateLimit::new(6_000, 1_000),
        }
    }
}

/// The buckets of [`RateLimits`], shared by every request of one [`crate::routes`].
pub(crate) struct Limiters {
    ip: Option<Bucket<IpAddr>>,
    project: Option<Bucket<ProjectId>>,
    key: Option<Bucket<KeyHash>>,
}

impl Limiters {
    pub(crate) fn new(limits: &RateLimits) -> Self {
        Self {
            ip: Bucket::new(limits.per_ip),
            project: Bucket::new(limits.per_project),
            key: Bucket::new(limits.per_key),
        }
    }

    /// Takes a token of the client address's bucket; no address, no limit.
    pub(crate) fn check_ip(&self, ip: Option<&str>) -> Result<(), ApiError> {
        let ip = ip.and_then(|ip| ip.parse::<IpAddr>().ok()).map(network);
        check(self.ip.as_ref(), ip.as_ref(), "ip")
    }

    /// Takes a token of the project's bucket.
    pub(crate) fn check_project(&self, project: ProjectId) -> Result<(), ApiError> {
        check(self.project.as_ref(), Some(&project), "project")
    }

    /// Takes a token of the API key's bucket.
    pub(crate) fn check_key(&self, key: &KeyHash) -> Result<(), ApiError> {
        check(self.key.as_ref(), Some(key), "key")
    }
}

/// The address a client is limited by: an IPv6 client by its /64, the network one
/// subscriber usually gets whole, so that cycling addresses within it gains nothing.
fn network(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(bits.into())
        }
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

    #[test]
    fn a_bucket_empties_and_says_when_to_retry() {
        let limiters = Limiters::new(&RateLimits {
            per_ip: RateLimit::new(1, 2),
            ..RateLimits::default()
        });
        let ip = Some("192.0.2.1");
        assert!(limiters.check_ip(ip).is_ok());
        assert!(limiters.check_ip(ip).is_ok());
        let err = limiters.check_ip(ip).unwrap_err();
        let response = err.into_response();
        assert_eq!(response.status(), 429);
        let retry: u32 = response.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!((1..=60).contains(&retry), "{retry}");
        assert!(limiters.check_ip(Some("192.0.2.2")).is_ok());
        assert!(limiters.check_ip(None).is_ok());
    }

    #[test]
    fn an_ipv6_client_is_limited_by_its_network() {
        let limiters = Limiters::new(&RateLimits {
            per_ip: RateLimit::new(1, 1),
            ..RateLimits::default()
        });
        assert!(limiters.check_ip(Some("2001:db8:1:2::1")).is_ok());
        assert!(limiters.check_ip(Some("2001:db8:1:2::ffff")).is_err());
        assert!(limiters.check_ip(Some("2001:db8:1:3::1")).is_ok());
    }
}
