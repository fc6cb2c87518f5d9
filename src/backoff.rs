//! How long to wait before a retry: exponential backoff with injected randomness, and the
//! server's own word (Retry-After) when it gives one.
//!
//! The delay is data, not a sleep: the engine turns it into a "wait until" that the driver
//! schedules, so tests check exact delays with a fake clock and a scripted random source.

use crate::config::{Backoff, Jitter};

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
/// capped at `maxMs`, then with full jitter a uniform draw in `[0, that]`.
pub fn delay_ms(backoff: &Backoff, retry: u32, random: &mut dyn RandomSource) -> u64 {
    let exact =
        (backoff.initial_ms as f64 * backoff.multiplier.powi(retry.min(1000) as i32)).min(backoff.max_ms as f64);
    match backoff.jitter {
        Jitter::None => exact.round() as u64,
        Jitter::Full => (exact * random.next_unit().clamp(0.0, 1.0)).round() as u64,
    }
}

/// The server-requested wait, in ms: `retry-after-ms` (OpenAI's) wins, else `retry-after` as
/// delta-seconds or an HTTP date (resolved against the wall clock `now_epoch_ms`).
pub fn retry_after_ms(retry_after_ms: Option<&str>, retry_after: Option<&str>, now_epoch_ms: u64) -> Option<u64> {
    if let Some(ms) = retry_after_ms.and_then(|v| v.parse::<f64>().ok()).filter(|v| v.is_finite() && *v >= 0.0) {
        return Some(ms.ceil() as u64);
    }
    let v = retry_after?;
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| (secs * 1000.0).ceil() as u64);
    }
    let at = parse_http_date(v)?;
    Some(at.saturating_sub(now_epoch_ms))
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form RFC 9110 requires senders
/// to use, into milliseconds since the Unix epoch.
pub fn parse_http_date(s: &str) -> Option<u64> {
    let rest = s.trim().split_once(", ")?.1;
    let mut parts = rest.split(' ');
    let day: u32 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut hms = parts.next()?.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, sec) = (hms.next()??, hms.next()??, hms.next()??);
    // IMF-fixdate's year has four digits; a longer one would overflow the arithmetic below.
    if parts.next()? != "GMT"
        || !(1..=31).contains(&day)
        || h > 23
        || m > 59
        || sec > 60
        || !(1970..=9999).contains(&year)
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    u64::try_from(days).ok().map(|d| ((d * 86_400) + h * 3600 + m * 60 + sec) * 1000)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
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
    fn retry_after_forms() {
        assert_eq!(retry_after_ms(None, Some("1"), 0), Some(1000));
        assert_eq!(retry_after_ms(None, Some("0.5"), 0), Some(500));
        assert_eq!(retry_after_ms(Some("200"), Some("30"), 0), Some(200));
        assert_eq!(retry_after_ms(None, Some("soon"), 0), None);
        assert_eq!(retry_after_ms(None, Some("-3"), 0), None);
        let at = parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        assert_eq!(at, 784_111_777_000);
        assert_eq!(retry_after_ms(None, Some("Sun, 06 Nov 1994 08:49:37 GMT"), at - 30_000), Some(30_000));
        assert_eq!(retry_after_ms(None, Some("Sun, 06 Nov 1994 08:49:37 GMT"), at + 5_000), Some(0));
        assert_eq!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), None);
    }

    #[test]
    fn a_date_past_year_9999_is_not_a_date() {
        assert_eq!(parse_http_date("Fri, 31 Dec 9999 23:59:59 GMT"), Some(253_402_300_799_000));
        for year in ["10000", "99999999999999", "9223372036854775807"] {
            assert_eq!(parse_http_date(&format!("Sun, 06 Nov {year} 08:49:37 GMT")), None, "year {year}");
        }
    }
}
