//! How long to wait before a retry: exponential backoff with injected randomness, and the
//! server's own word (Retry-After) when it gives one.
//!
//! The delay is data, not a sleep: the engine turns it into a "wait until" that the driver
//! schedules, so tests check exact delays with a fake clock and a scripted random source.

use crate::outcome::Failure;
use crate::policy::{Backoff, Jitter, RetryPolicy};
use crate::value::MAX_MS;

/// A source of uniform numbers in `[0, 1)`, injected so jitter is reproducible in tests.
pub trait RandomSource {
    fn next_unit(&mut self) -> f64;
}

impl<F: FnMut() -> f64> RandomSource for F {
    fn next_unit(&mut self) -> f64 {
        self()
    }
}

/// A small deterministic generator (SplitMix64), for tests and hosts without their own.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl RandomSource for SplitMix64 {
    fn next_unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The wait before retry number `retry` (0 for the first retry): `initialMs * multiplier^retry`,
/// capped at `maxMs`, then jittered: with equal jitter (the default) a uniform draw in
/// `[that / 2, that]`, so a retry never follows closer than half the computed delay; with full
/// jitter a uniform draw in `[0, that]`.
pub fn delay_ms(backoff: &Backoff, retry: u32, random: &mut dyn RandomSource) -> u64 {
    let exact =
        (backoff.initial_ms as f64 * backoff.multiplier.powi(retry.min(1000) as i32)).min(backoff.max_ms as f64);
    let unit = |random: &mut dyn RandomSource| random.next_unit().clamp(0.0, 1.0);
    match backoff.jitter {
        Jitter::None => exact.round() as u64,
        Jitter::Equal => (exact / 2.0 + exact / 2.0 * unit(random)).round() as u64,
        Jitter::Full => (exact * unit(random)).round() as u64,
    }
}

/// The wait before retry number `retry` (0 for the first retry) of `policy` after `failure`;
/// `None`: do not retry on this member, so an enclosing fallback can move on at once.
///
/// The rule, whole: the server's requested wait (Retry-After, see
/// [`retry_after_ms`](crate::retry_after::retry_after_ms)) replaces the backoff; one longer than
/// `maxRetryAfterMs`, or clamped to [`MAX_MS`] (which stands for "longer than a timer can
/// wait"), is `None`. Without one, the backoff's [`delay_ms`], which alone draws from `random`.
/// Whether the failure may be retried at all is the gate's question, and whether the wait fits
/// the deadline the budget's: the engine asks all three.
pub fn wait_before_retry(
    policy: &RetryPolicy,
    failure: &Failure,
    retry: u32,
    random: &mut dyn RandomSource,
) -> Option<u64> {
    match failure.retry_after_ms() {
        Some(ms) if ms > policy.max_retry_after_ms || ms >= MAX_MS => None,
        Some(ms) => Some(ms),
        None => Some(delay_ms(&policy.backoff, retry, random)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(initial_ms: u64, multiplier: f64, max_ms: u64) -> Backoff {
        Backoff { initial_ms, multiplier, max_ms, jitter: Jitter::None }
    }

    #[test]
    fn exponential_and_capped() {
        let b = exact(250, 2.0, 8000);
        let mut r = SplitMix64(1);
        let delays: Vec<u64> = (0..7).map(|i| delay_ms(&b, i, &mut r)).collect();
        assert_eq!(delays, [250, 500, 1000, 2000, 4000, 8000, 8000]);
    }

    #[test]
    fn full_jitter_draws_below_the_exact_delay() {
        let b = Backoff { jitter: Jitter::Full, ..exact(1000, 2.0, 8000) };
        let mut half = || 0.5;
        assert_eq!(delay_ms(&b, 1, &mut half), 1000);
        let mut r = SplitMix64(7);
        for i in 0..50 {
            assert!(delay_ms(&b, i % 5, &mut r) <= 8000);
        }
    }

    #[test]
    fn equal_jitter_never_waits_less_than_half_the_exact_delay() {
        let b = Backoff { jitter: Jitter::Equal, ..exact(1000, 2.0, 8000) };
        let cases: [(f64, u32, u64); 6] =
            [(0.0, 0, 500), (0.5, 0, 750), (0.999_999, 0, 1000), (0.0, 1, 1000), (0.0, 5, 4000), (1.5, 5, 8000)];
        for (draw, retry, expected) in cases {
            let mut fixed = || draw;
            assert_eq!(delay_ms(&b, retry, &mut fixed), expected, "draw {draw}, retry {retry}");
        }
        let mut r = SplitMix64(7);
        for i in 0..200 {
            let exact_delay = delay_ms(&exact(1000, 2.0, 8000), i % 5, &mut r);
            let d = delay_ms(&b, i % 5, &mut r);
            assert!(d >= exact_delay / 2 && d <= exact_delay, "retry {}: {d} of {exact_delay}", i % 5);
        }
        assert_eq!(Backoff::default().jitter, Jitter::Equal);
    }

    #[test]
    fn wait_before_retry_prefers_the_servers_word_within_the_cap() {
        use crate::outcome::ProviderSaid;
        use crate::policy::Strategy;
        let policy = RetryPolicy {
            inner: Strategy::Target(0),
            attempts: 3,
            backoff: Backoff { jitter: Jitter::Full, ..exact(250, 2.0, 8000) },
            retry_on: None,
            max_retry_after_ms: 60_000,
        };
        let http = |retry_after: Option<&str>| {
            let headers: Vec<(String, String)> =
                retry_after.map(|v| ("retry-after-ms".to_string(), v.to_string())).into_iter().collect();
            Failure::from_http(429, &headers, ProviderSaid::default(), 0)
        };
        let max = MAX_MS.to_string();
        // (failure, retry index, expected wait, draws from the random source)
        let cases: [(Failure, u32, Option<u64>, u32); 9] = [
            (http(None), 0, Some(125), 1),
            (http(None), 2, Some(500), 1),
            (Failure::Transport { message: "reset".into() }, 1, Some(250), 1),
            (http(Some("0")), 0, Some(0), 0),
            (http(Some("1500")), 2, Some(1500), 0),
            (http(Some("60000")), 0, Some(60_000), 0),
            (http(Some("60001")), 0, None, 0),
            (http(Some(&max)), 0, None, 0),
            (http(Some("1e308")), 0, None, 0),
        ];
        for (failure, retry, expected, draws) in cases {
            let mut drawn = 0;
            let mut counting = || {
                drawn += 1;
                0.5
            };
            assert_eq!(wait_before_retry(&policy, &failure, retry, &mut counting), expected, "{failure:?} #{retry}");
            assert_eq!(drawn, draws, "{failure:?} #{retry}");
        }
        let uncapped = RetryPolicy { max_retry_after_ms: u64::MAX, ..policy };
        assert_eq!(wait_before_retry(&uncapped, &http(Some(&max)), 0, &mut SplitMix64(1)), None);
        assert_eq!(wait_before_retry(&uncapped, &http(Some("2147483646")), 0, &mut SplitMix64(1)), Some(MAX_MS - 1));
    }
}
