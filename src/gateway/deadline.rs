//! The deadline a client asks for: `x-baton-deadline-ms`, the header one llm-baton sends another.

use llm_baton_wire::write::ToJson;
use serde_json::Value;

use super::GatewayError;
use crate::config::parse_ms;

/// The request header that sets one call's deadline.
pub const DEADLINE_HEADER: &str = "x-baton-deadline-ms";

/// Reads `x-baton-deadline-ms`: absent means the config's `deadlineMs`.
pub fn parse_deadline_header(value: Option<&str>) -> Result<Option<u64>, GatewayError> {
    let Some(raw) = value else { return Ok(None) };
    let parsed = raw.trim().parse::<f64>().ok().filter(|n| n.is_finite()).and_then(|n| parse_ms(&Value::from(n)));
    parsed.map(Some).ok_or_else(|| {
        GatewayError::invalid(format!(
            "{DEADLINE_HEADER} must be a positive number of milliseconds up to {} (got {}); omit it to use the gateway's deadlineMs",
            crate::config::MAX_MS,
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
}
