//! The server's own word on when to try again: `retry-after-ms` and `Retry-After` (seconds or an
//! HTTP date), read once where an HTTP error answer becomes a [`Failure`](crate::outcome::Failure).
//!
//! On the ground floor beside the failures it fills in: the backoff (src/backoff.rs) and the
//! health breakers only read the wait it produced.

use crate::float::parse_f64;
use crate::value::MAX_MS;

/// The server-requested wait, in ms: `retry-after-ms` (OpenAI's) wins, else `retry-after` as
/// delta-seconds or an HTTP date (resolved against the wall clock `now_epoch_ms`). Clamped to
/// [`MAX_MS`], the longest wait a JS timer honours and a number JS holds exactly: an absurd
/// value then exceeds the default `maxRetryAfterMs` and is not waited on. A past date is 0.
pub fn retry_after_ms(retry_after_ms: Option<&str>, retry_after: Option<&str>, now_epoch_ms: u64) -> Option<u64> {
    let clamp = |ms: f64| ms.ceil().min(MAX_MS as f64) as u64;
    if let Some(ms) = retry_after_ms.and_then(parse_f64).filter(|v| v.is_finite() && *v >= 0.0) {
        return Some(clamp(ms));
    }
    let v = retry_after?;
    if let Some(secs) = parse_f64(v) {
        return (secs.is_finite() && secs >= 0.0).then(|| clamp(secs * 1000.0));
    }
    let at = parse_http_date(v)?;
    Some(at.saturating_sub(now_epoch_ms).min(MAX_MS))
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form RFC 9110 requires senders
/// to use, into milliseconds since the Unix epoch. A date too far to count in a `u64` of
/// milliseconds (year 99999999999999) is `u64::MAX`: far enough, never a wrapped-around past.
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
    // A year past 9999 is not IMF-fixdate, but a server that sends one means "not soon": the
    // checked arithmetic below reads it as the farthest date, which the caller clamps.
    if parts.next()? != "GMT" || !(1..=31).contains(&day) || h > 23 || m > 59 || sec > 60 || year < 1970 {
        return None;
    }
    let ms = days_from_civil(year, month, day)
        .and_then(|days| u64::try_from(days).ok())
        .and_then(|days| days.checked_mul(86_400))
        .and_then(|secs| secs.checked_add(h * 3600 + m * 60 + sec))
        .and_then(|secs| secs.checked_mul(1000));
    Some(ms.unwrap_or(u64::MAX))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm); `None`
/// when it does not fit an `i64`.
fn days_from_civil(y: i64, m: u32, d: u32) -> Option<i64> {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era.checked_mul(146_097)?.checked_add(doe - 719_468)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn absurd_retry_after_values_are_clamped_to_what_a_timer_can_wait() {
        const HUGE: &str = "99999999999999999999";
        let now = 1_700_000_000_000;
        let cases = [
            (None, Some(HUGE), Some(MAX_MS)),
            (Some(HUGE), None, Some(MAX_MS)),
            (Some("1e308"), None, Some(MAX_MS)),
            (None, Some("1e308"), Some(MAX_MS)),
            (None, Some("2147483.647"), Some(MAX_MS)),
            (None, Some("2147483.648"), Some(MAX_MS)),
            (None, Some("Fri, 31 Dec 99999999999999 23:59:59 GMT"), Some(MAX_MS)),
            (None, Some("Fri, 31 Dec 9223372036854775807 23:59:59 GMT"), Some(MAX_MS)),
            (None, Some("Sat, 01 Jan 2000 00:00:00 GMT"), Some(0)),
            (None, Some("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0)),
            (Some("inf"), Some("NaN"), None),
        ];
        for (ms, secs, expected) in cases {
            assert_eq!(retry_after_ms(ms, secs, now), expected, "{ms:?} {secs:?}");
        }
        assert_eq!(parse_http_date("Fri, 31 Dec 99999999999999 23:59:59 GMT"), Some(u64::MAX));
        let far = parse_http_date("Tue, 01 Jan 275760 00:00:00 GMT").unwrap();
        assert!(far > now && far < u64::MAX, "{far}");
    }
}
