//! Who may use the gateway: its keys (`Authorization: Bearer` or `x-api-key`) and the browser
//! origins CORS lets in.

use super::Reply;
use crate::config::{Cors, GatewayConfig};

/// The response headers a browser page may read: which target served, after how many
/// attempts, what the call left out (`x-baton-warning`), and a provider's Retry-After.
pub const EXPOSED_HEADERS: &str = "x-baton-target, x-baton-attempts, x-baton-warning, retry-after";

/// What a browser may send, answered to every preflight whatever it asks for: the gateway's own
/// headers and those the official SDKs (openai, @anthropic-ai/sdk) send from a browser. Anything
/// else is refused by the browser before the request leaves.
pub const ALLOWED_HEADERS: &str = "accept, authorization, content-type, x-api-key, x-baton-deadline-ms, traceparent, \
    tracestate, anthropic-version, anthropic-beta, anthropic-dangerous-direct-browser-access, openai-organization, \
    openai-project, x-stainless-arch, x-stainless-helper, x-stainless-helper-method, x-stainless-lang, \
    x-stainless-os, x-stainless-package-version, x-stainless-retry-count, x-stainless-runtime, \
    x-stainless-runtime-version, x-stainless-timeout";

/// Whether a request carries one of the gateway's keys, as `Authorization: Bearer <key>` (the
/// OpenAI SDK) or `x-api-key: <key>` (the Anthropic SDK). With no keys configured, all pass.
pub fn authorized(config: &GatewayConfig, authorization: Option<&str>, x_api_key: Option<&str>) -> bool {
    if config.api_keys.is_empty() {
        return true;
    }
    let bearer = authorization.and_then(|a| {
        let (scheme, rest) = a.trim().split_once(' ')?;
        scheme.eq_ignore_ascii_case("bearer").then_some(rest.trim())
    });
    let offered: Vec<&str> = bearer.into_iter().chain(x_api_key.map(str::trim)).collect();
    // Compare every key in full, so the time taken does not tell how much of a guess matched.
    let mut found = false;
    for key in &config.api_keys {
        for candidate in &offered {
            found |= constant_time_eq(key.expose().as_bytes(), candidate.as_bytes());
        }
    }
    found
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for (i, x) in a.iter().enumerate() {
        diff |= usize::from(x ^ b.get(i).copied().unwrap_or(!x));
    }
    diff == 0
}

/// The `access-control-allow-origin` value for a request's `Origin`, if CORS allows it.
pub fn cors_origin(config: &GatewayConfig, origin: Option<&str>) -> Option<String> {
    match (&config.cors, origin) {
        (Cors::Off, _) => None,
        (Cors::AnyOrigin, _) => Some("*".into()),
        (Cors::Origins(list), Some(origin)) => list.iter().find(|o| o.as_str() == origin).cloned(),
        (Cors::Origins(_), None) => None,
    }
}

/// The answer to a CORS preflight from an allowed `origin`: every method the gateway serves, and
/// [`ALLOWED_HEADERS`], for a day.
pub fn preflight(origin: &str) -> Reply {
    let mut reply = Reply::bare(204);
    allow_origin(&mut reply, origin);
    reply.headers.insert("access-control-allow-methods", "GET, POST, OPTIONS".into());
    reply.headers.insert("access-control-allow-headers", ALLOWED_HEADERS.into());
    reply.headers.insert("access-control-max-age", "86400".into());
    reply
}

/// The headers that let a page from `origin` read `reply`.
pub fn allow_origin(reply: &mut Reply, origin: &str) {
    reply.headers.insert("access-control-allow-origin", origin.to_string());
    reply.headers.insert("access-control-expose-headers", EXPOSED_HEADERS.into());
    reply.headers.insert("vary", "origin".into());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Secret;

    #[test]
    fn gateway_keys() {
        let mut config = GatewayConfig::default();
        assert!(authorized(&config, None, None));
        config.api_keys = vec![Secret::new("k-one"), Secret::new("k-two")];
        assert!(authorized(&config, Some("Bearer k-two"), None));
        assert!(authorized(&config, Some("bearer k-one"), None));
        assert!(authorized(&config, None, Some("k-one")));
        assert!(!authorized(&config, None, None));
        assert!(!authorized(&config, Some("Bearer k-on"), None));
        assert!(!authorized(&config, Some("Bearer k-one2"), None));
        assert!(!authorized(&config, Some("k-one"), None));
        assert!(!authorized(&config, None, Some("")));
    }

    #[test]
    fn cors() {
        let mut config = GatewayConfig::default();
        assert_eq!(cors_origin(&config, Some("https://a.example")), None);
        config.cors = Cors::AnyOrigin;
        assert_eq!(cors_origin(&config, None).as_deref(), Some("*"));
        config.cors = Cors::Origins(vec!["https://a.example".into()]);
        assert_eq!(cors_origin(&config, Some("https://a.example")).as_deref(), Some("https://a.example"));
        assert_eq!(cors_origin(&config, Some("https://b.example")), None);
    }
}
