//! When a failed delivery is tried again: exponential backoff with jitter, honouring the
//! platform's `Retry-After`, within a number of attempts and a time window.

use std::time::Duration;

use chrono::{DateTime, Utc};

/// The retry schedule of deliveries.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Attempts per delivery, the first included. 8 by default.
    pub max_attempts: u32,
    /// No attempt is scheduled later than this after the conversion was queued. 24 hours by
    /// default.
    pub window: Duration,
    /// The wait after the first failed attempt. 1 minute by default.
    pub base_delay: Duration,
    /// Each wait is this many times the one before. 3 by default: with the defaults the
    /// eight attempts spread over about 18 hours (1, 3, 9, 27, 81 minutes, 4 and 12 hours).
    pub multiplier: u32,
    /// Each wait is drawn between half and all of its nominal length, so that deliveries
    /// failing together do not retry together. On by default.
    pub jitter: bool,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 8,
            window: Duration::from_secs(24 * 60 * 60),
            base_delay: Duration::from_secs(60),
            multiplier: 3,
            jitter: true,
        }
    }
}

impl RetryPolicy {
    /// When to try again after attempt number `attempts` (1 for the first) failed at `now`,
    /// or `None` when the delivery must give up. `random` is uniform in `[0, 1)`.
    pub fn next_attempt(
        &self,
        attempts: u32,
        now: DateTime<Utc>,
        queued_at: DateTime<Utc>,
        retry_after: Option<Duration>,
        random: f64,
    ) -> Option<DateTime<Utc>> {
        if attempts >= self.max_attempts {
            return None;
        }
        let exponent = attempts.saturating_sub(1).min(30);
        let nominal = self
            .base_delay
            .saturating_mul(self.multiplier.saturating_pow(exponent));
        let drawn = if self.jitter {
            let factor = 0.5 + 0.5 * random.clamp(0.0, 1.0);
            Duration::try_from_secs_f64(nominal.as_secs_f64() * factor).unwrap_or(nominal)
        } else {
            nominal
        };
        let delay = retry_after.map_or(drawn, |asked| asked.max(drawn));
        // Checked all the way: an absurd policy or Retry-After gives up, never overflows.
        let next = now.checked_add_signed(chrono::Duration::from_std(delay).ok()?)?;
        let deadline =
            queued_at.checked_add_signed(chrono::Duration::from_std(self.window).ok()?)?;
        (next <= deadline).then_some(next)
    }
}

/// A uniform random number in `[0, 1)` for jitter.
pub(crate) fn random_unit() -> f64 {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        return 0.5;
    }
    (u64::from_le_bytes(bytes) >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 6, 1, 0, 0, 0).unwrap()
    }

    fn exact() -> RetryPolicy {
        RetryPolicy {
            jitter: false,
            ..RetryPolicy::default()
        }
    }

    #[test]
    fn waits_grow_exponentially_within_eight_attempts_and_a_day() {
        let policy = exact();
        let mut now = t0();
        let mut waits = Vec::new();
        for attempt in 1.. {
            match policy.next_attempt(attempt, now, t0(), None, 0.0) {
                Some(next) => {
                    waits.push((next - now).num_minutes());
                    now = next;
                }
                None => {
                    assert_eq!(attempt, 8, "the eighth attempt is the last");
                    break;
                }
            }
        }
        assert_eq!(waits, [1, 3, 9, 27, 81, 243, 729]);
        assert!(now - t0() < chrono::Duration::hours(24));
    }

    #[test]
    fn retry_after_is_honoured_when_longer() {
        let policy = exact();
        let next = policy.next_attempt(1, t0(), t0(), Some(Duration::from_secs(600)), 0.0);
        assert_eq!(next, Some(t0() + chrono::Duration::minutes(10)));
        let next = policy.next_attempt(1, t0(), t0(), Some(Duration::from_secs(5)), 0.0);
        assert_eq!(next, Some(t0() + chrono::Duration::minutes(1)));
    }

    #[test]
    fn nothing_is_scheduled_past_the_window() {
        let policy = exact();
        let late = t0() + chrono::Duration::hours(23) + chrono::Duration::seconds(59 * 60 + 30);
        assert_eq!(policy.next_attempt(1, late, t0(), None, 0.0), None);
        let asked = Some(Duration::from_secs(2 * 24 * 3600));
        assert_eq!(policy.next_attempt(1, t0(), t0(), asked, 0.0), None);
    }

    #[test]
    fn extreme_settings_give_up_instead_of_overflowing() {
        let policy = RetryPolicy {
            max_attempts: u32::MAX,
            window: Duration::MAX,
            multiplier: u32::MAX,
            ..RetryPolicy::default()
        };
        assert_eq!(policy.next_attempt(40, t0(), t0(), None, 1.0), None);
        assert_eq!(
            policy.next_attempt(1, t0(), t0(), Some(Duration::MAX), 0.5),
            None
        );
    }

    #[test]
    fn jitter_draws_between_half_and_all_of_the_wait() {
        let policy = RetryPolicy::default();
        let low = policy.next_attempt(2, t0(), t0(), None, 0.0).unwrap();
        let high = policy.next_attempt(2, t0(), t0(), None, 0.999).unwrap();
        assert_eq!(low - t0(), chrono::Duration::seconds(90));
        assert!(
            high - t0() > chrono::Duration::seconds(179)
                && high - t0() <= chrono::Duration::seconds(180)
        );
        let sample = random_unit();
        assert!((0.0..1.0).contains(&sample));
    }
}
