//! The deadline a client asks for: `x-baton-deadline-ms` (the header one llm-baton sends
//! another), shortened to the timeout an official SDK says it will wait (`x-stainless-timeout`).

use crate::float::parse_f64;
use llm_baton_wire::write::ToJson;
use serde_json::Value;

use super::GatewayError;
use crate::config::{parse_ms, MAX_MS};

pub use crate::propagation::DEADLINE_HEADER;

/// The header in which the official SDKs (openai, @anthropic-ai/sdk) send their own timeout, in
/// whole or fractional seconds.
pub const SDK_TIMEOUT_HEADER: &str = "x-stainless-timeout";

/// The call's deadline from a request's headers: `x-baton-deadline-ms` (`own`; `None` means the
/// config's `configured`), shortened to the client's own timeout when an official SDK sends it
/// (`sdk_timeout`): the SDK gives up then anyway, so the route plans its attempts in the time the
/// caller really has, and a timeout is llm-baton's, with its legs. An invalid `own` is refused by
/// name unless the SDK's shorter timeout replaces it; an unusable `sdk_timeout` is ignored.
pub fn requested_deadline(
    own: Option<&str>,
    sdk_timeout: Option<&str>,
    configured: Option<u64>,
) -> Result<Option<u64>, GatewayError> {
    let sdk_ms = sdk_timeout.and_then(number).map(|s| s * 1000.0).filter(|ms| *ms > 0.0 && *ms <= MAX_MS as f64);
    let Some(sdk_ms) = sdk_ms else { return parse_deadline_header(own) };
    let own_ms = match own {
        None => configured.map(|ms| ms as f64),
        Some(raw) => match number(raw).filter(|ms| *ms > 0.0) {
            Some(ms) => Some(ms),
            None => return parse_deadline_header(own),
        },
    };
    match own_ms {
        Some(ms) if ms <= sdk_ms => parse_deadline_header(own),
        _ => Ok(parse_ms(&Value::from(sdk_ms))),
    }
}

/// A header's number, as JavaScript's `Number()` reads it (an empty value is 0).
fn number(raw: &str) -> Option<f64> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Some(0.0);
    }
    parse_f64(raw).filter(|n| !n.is_nan())
}

/// Reads `x-baton-deadline-ms`: absent means the config's `deadlineMs`.
pub fn parse_deadline_header(value: Option<&str>) -> Result<Option<u64>, GatewayError> {
    let Some(raw) = value else { return Ok(None) };
    let parsed = parse_f64(raw.trim()).filter(|n| n.is_finite()).and_then(|n| parse_ms(&Value::from(n)));
    parsed.map(Some).ok_or_else(|| {
        GatewayError::invalid(format!(
            "{DEADLINE_HEADER} must be a positive number of milliseconds up to {} (got {}); omit it to use the gateway's deadlineMs",
            MAX_MS,
            raw.chars().take(40).collect::<String>().to_json()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadline_header() {
        assert_eq!(parse_deadline_header(None), Ok(None));
        assert_eq!(parse_deadline_header(Some("1500")), Ok(Some(1500)));
        assert_eq!(parse_deadline_header(Some(" 2.5 ")), Ok(Some(3)));
        for bad in ["0", "-1", "soon", "", "NaN", "1e12"] {
            let e = parse_deadline_header(Some(bad)).unwrap_err();
            assert_eq!(e.status, 400, "{bad}");
            assert!(e.message.starts_with("x-baton-deadline-ms must be"), "{}", e.message);
        }
    }

    #[test]
    fn an_sdk_timeout_shortens_the_deadline() {
        // (x-baton-deadline-ms, x-stainless-timeout, the config's deadlineMs) -> the call's deadline
        let cases = [
            (None, None, Some(30_000), None),
            (None, Some("600"), None, Some(600_000)),
            (None, Some("2"), Some(30_000), Some(2000)),
            (None, Some("60"), Some(30_000), None),
            (Some("1500"), Some("2"), None, Some(1500)),
            (Some("5000"), Some("2"), None, Some(2000)),
            (Some("5000"), Some("0.0004"), None, Some(1)),
            (Some("1e12"), Some("2"), None, Some(2000)),
            (Some("1500"), Some("0"), None, Some(1500)),
            (Some("1500"), Some("soon"), None, Some(1500)),
            (Some("1500"), Some("1e12"), None, Some(1500)),
            (None, Some(""), Some(30_000), None),
        ];
        for (own, sdk, configured, expected) in cases {
            assert_eq!(requested_deadline(own, sdk, configured), Ok(expected), "{own:?} {sdk:?} {configured:?}");
        }
        for own in ["0", "soon", ""] {
            let e = requested_deadline(Some(own), Some("2"), None).unwrap_err();
            assert!(e.message.starts_with("x-baton-deadline-ms must be"), "{own}: {}", e.message);
        }
    }
}
