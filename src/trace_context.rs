//! The W3C Trace Context headers an attempt carries upstream (`traceparent`, `tracestate`), so a
//! trace runs from the caller through a gateway to the provider.
//!
//! The ids come from the caller's OpenTelemetry tracer (pkg/telemetry.js, asked as the attempt is
//! sent), which is user code: whatever it returns is checked against the W3C grammar here, and
//! anything else adds no header. A request never carries a malformed or injected header value
//! because a tracer misbehaved.

/// The most list members a `tracestate` may hold (W3C Trace Context, "tracestate Limits").
const MAX_TRACESTATE_MEMBERS: usize = 32;
/// The longest `tracestate` a sender propagates.
const MAX_TRACESTATE_LEN: usize = 512;

/// The headers to add for these values: `traceparent` when it is a valid version-00 value with
/// non-zero ids, then `tracestate` when it is valid too (a tracestate alone means nothing).
pub fn trace_headers(traceparent: &str, tracestate: Option<&str>) -> Vec<(String, String)> {
    if !valid_traceparent(traceparent) {
        return Vec::new();
    }
    let mut headers = vec![("traceparent".to_string(), traceparent.to_string())];
    if let Some(state) = tracestate.filter(|s| !s.is_empty() && valid_tracestate(s)) {
        headers.push(("tracestate".to_string(), state.to_string()));
    }
    headers
}

/// `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`, lowercase, ids not all zeros.
fn valid_traceparent(value: &str) -> bool {
    let b = value.as_bytes();
    let hex =
        |range: std::ops::Range<usize>| b[range].iter().all(|&c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c));
    let zeros = |range: std::ops::Range<usize>| b[range].iter().all(|&c| c == b'0');
    b.len() == 55
        && b.starts_with(b"00-")
        && b[35] == b'-'
        && b[52] == b'-'
        && hex(3..35)
        && hex(36..52)
        && hex(53..55)
        && !zeros(3..35)
        && !zeros(36..52)
}

/// A comma-separated list of at most 32 `key=value` members, 512 characters at most.
fn valid_tracestate(value: &str) -> bool {
    let mut members = 0;
    value.len() <= MAX_TRACESTATE_LEN
        && value.split(',').map(|m| m.trim_matches([' ', '\t'])).filter(|m| !m.is_empty()).all(|member| {
            members += 1;
            members <= MAX_TRACESTATE_MEMBERS
                && member.split_once('=').is_some_and(|(key, value)| valid_key(key) && valid_value(value))
        })
}

/// `[a-z0-9][a-z0-9_-*/]*` of 256 characters at most, or `tenant@system` (241 and 14).
fn valid_key(key: &str) -> bool {
    match key.split_once('@') {
        Some((tenant, system)) => simple_key(tenant, 241) && simple_key(system, 14),
        None => simple_key(key, 256),
    }
}

fn simple_key(key: &str, max: usize) -> bool {
    matches!(key.as_bytes().first(), Some(c) if c.is_ascii_lowercase() || c.is_ascii_digit())
        && key.len() <= max
        && key.bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"_-*/".contains(&c))
}

/// Printable ASCII without `,` and `=`, not ending in a space, 256 characters at most.
fn valid_value(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= 256
        && value.bytes().all(|c| (0x20..=0x7e).contains(&c) && c != b',' && c != b'=')
        && !value.ends_with(' ')
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    /// traceparent, tracestate, and the headers they give.
    type Case<'a> = (&'a str, Option<&'a str>, &'a [(&'a str, &'a str)]);

    #[test]
    fn only_valid_values_become_headers() {
        let most = vec!["k=v"; 32].join(",");
        let too_many = vec!["k=v"; 33].join(",");
        let cases: &[Case] = &[
            (PARENT, None, &[("traceparent", PARENT)]),
            (PARENT, Some("vendor=abc,t@sys=1"), &[("traceparent", PARENT), ("tracestate", "vendor=abc,t@sys=1")]),
            (PARENT, Some(""), &[("traceparent", PARENT)]),
            (PARENT, Some("Vendor=abc"), &[("traceparent", PARENT)]),
            (PARENT, Some("vendor=a,b"), &[("traceparent", PARENT)]),
            (PARENT, Some("vendor=abc\r\nx-injected: 1"), &[("traceparent", PARENT)]),
            (PARENT, Some(&too_many), &[("traceparent", PARENT)]),
            (PARENT, Some(&most), &[("traceparent", PARENT), ("tracestate", &most)]),
            (PARENT, Some(" a=1 ,\tb=2"), &[("traceparent", PARENT), ("tracestate", " a=1 ,\tb=2")]),
            (PARENT, Some("a@b@c=1"), &[("traceparent", PARENT)]),
            (PARENT, Some("a@toolongsystemname=1"), &[("traceparent", PARENT)]),
            (PARENT, Some("a=\u{7f}"), &[("traceparent", PARENT)]),
            (PARENT, Some("a=é"), &[("traceparent", PARENT)]),
            (PARENT, Some("=1"), &[("traceparent", PARENT)]),
            ("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", None, &[]),
            ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", None, &[]),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", None, &[]),
            ("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", None, &[]),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", None, &[]),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\nx: y", None, &[]),
            ("", Some("vendor=abc"), &[]),
        ];
        for (traceparent, tracestate, expected) in cases {
            let expected: Vec<(String, String)> =
                expected.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
            assert_eq!(trace_headers(traceparent, *tracestate), expected, "{traceparent:?} {tracestate:?}");
        }
    }
}
