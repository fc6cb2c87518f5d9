//! The config's `health` section (breakers and the retry budget) and its `gateway` section
//! (client keys, the body cap, CORS).

use serde_json::Value;

use super::target::{header_value_problem, unusable_key};
use crate::policy::{HealthPolicy, RetryBudgetPolicy};
use crate::secret::Secret;
use crate::value::{child, index_path, kind, read_number, read_whole, show, wrong, wrong_value, FieldError, Obj};

/// The largest gateway request body that may be allowed.
const MAX_BODY_BYTES: u64 = 1_000_000_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayConfig {
    pub api_keys: Vec<Secret>,
    pub max_body_bytes: u64,
    pub cors: Cors,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig { api_keys: Vec::new(), max_body_bytes: 1 << 20, cors: Cors::Off }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cors {
    Off,
    AnyOrigin,
    Origins(Vec<String>),
}

/// Reads a config's `health` section (not `false`: see
/// [`Config::from_value`](super::Config::from_value)).
pub fn parse_health(v: &Value) -> Result<HealthPolicy, FieldError> {
    let path = "health";
    if !v.is_object() {
        return Err(wrong_value(
            path,
            r#"an object such as {"cooldownMs": 5000}, or false to turn breakers and the retry budget off"#,
            v,
        ));
    }
    let o = Obj::new(v, path, &["failures", "failureRatio", "windowMs", "minRequests", "cooldownMs", "retryBudget"])?;
    let d = HealthPolicy::default();
    let whole = |key: &str, what: &str, default: u32| match o.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(n) => read_whole(n, &child(path, key), what, 1, 1000).map(|n| n as u32),
    };
    let failures = whole("failures", "a whole number of consecutive failures", d.failures)?;
    let min_requests = whole("minRequests", "a whole number of outcomes", d.min_requests)?;
    let failure_ratio = match o.get("failureRatio") {
        None | Some(Value::Null) => d.failure_ratio,
        Some(n) => read_number(n, &child(path, "failureRatio"), "a share of failures", (0.01, 1.0), "")?,
    };
    let window_ms = o.opt_ms_or("windowMs", d.window_ms)?;
    let cooldown_ms = o.opt_ms_or("cooldownMs", d.cooldown_ms)?;
    let retry_budget = match o.get("retryBudget") {
        None | Some(Value::Null) => d.retry_budget,
        Some(Value::Bool(false)) => None,
        Some(b) => Some(parse_retry_budget(b, &child(path, "retryBudget"))?),
    };
    Ok(HealthPolicy { failures, failure_ratio, window_ms, min_requests, cooldown_ms, retry_budget })
}

fn parse_retry_budget(v: &Value, path: &str) -> Result<RetryBudgetPolicy, FieldError> {
    if !v.is_object() {
        return Err(wrong_value(
            path,
            r#"an object such as {"ratio": 0.2, "minPerSecond": 10}, or false for no budget"#,
            v,
        ));
    }
    let o = Obj::new(v, path, &["ratio", "minPerSecond"])?;
    let d = RetryBudgetPolicy::default();
    let ratio = match o.get("ratio") {
        None | Some(Value::Null) => d.ratio,
        Some(n) => read_number(n, &child(path, "ratio"), "a share of successful calls", (0.0, 10.0), "")?,
    };
    let min_per_second = match o.get("minPerSecond") {
        None | Some(Value::Null) => d.min_per_second,
        Some(n) => read_number(n, &child(path, "minPerSecond"), "a number of retries per second", (0.0, 1e6), "")?,
    };
    Ok(RetryBudgetPolicy { ratio, min_per_second })
}

pub(super) fn parse_gateway(v: &Value) -> Result<GatewayConfig, FieldError> {
    let o = Obj::new(v, "gateway", &["apiKeys", "maxBodyBytes", "cors"])?;
    let mut g = GatewayConfig::default();
    if let Some(keys) = o.get("apiKeys") {
        let list = keys.as_array().ok_or_else(|| wrong("gateway.apiKeys", "a list of key strings", keys))?;
        for (i, k) in list.iter().enumerate() {
            match k {
                Value::String(s) if !s.is_empty() => match header_value_problem(s, true) {
                    // A client sends the key in a header: one no header can carry never matches.
                    None => g.api_keys.push(Secret::new(s.clone())),
                    Some(problem) => return Err(unusable_key(&index_path("gateway.apiKeys", i), &problem)),
                },
                other => {
                    return Err(FieldError::new(
                        index_path("gateway.apiKeys", i),
                        format!("must be a non-empty string (got {})", kind(other)),
                    ))
                }
            }
        }
    }
    if let Some(n) = o.get("maxBodyBytes") {
        g.max_body_bytes = read_whole(n, "gateway.maxBodyBytes", "a whole number of bytes", 1, MAX_BODY_BYTES)?;
    }
    if let Some(c) = o.get("cors") {
        g.cors = match c {
            Value::Bool(false) => Cors::Off,
            Value::Bool(true) => Cors::AnyOrigin,
            Value::Array(list) => read_cors_origins(list)?,
            other => {
                return Err(wrong_value(
                    "gateway.cors",
                    "true (any origin), false, or a list of exact origins where \"*\" means any origin",
                    other,
                ))
            }
        };
    }
    Ok(g)
}

/// A `cors` list: exact origins as browsers send them (`scheme://host[:port]`, compared in
/// lower case), or `"*"` for any origin. Patterns such as `https://*.x.com` are refused, since a
/// list that can never match would silently turn CORS off.
fn read_cors_origins(list: &[Value]) -> Result<Cors, FieldError> {
    let mut origins = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let path = index_path("gateway.cors", i);
        match item {
            Value::String(s) if s == "*" => return Ok(Cors::AnyOrigin),
            Value::String(s) if s.contains('*') => {
                return Err(FieldError::new(
                    path,
                    format!(
                        "is a pattern ({}); only exact origins such as \"https://app.example\" or \"*\" for any origin are supported",
                        show(item)
                    ),
                ))
            }
            Value::String(s) if is_origin(s) => origins.push(s.to_ascii_lowercase()),
            other => {
                return Err(wrong_value(&path, "an origin (scheme, host and optional port, no path) such as \"https://app.example\", or \"*\" for any origin", other))
            }
        }
    }
    Ok(Cors::Origins(origins))
}

/// Whether `s` has the shape of a serialized origin: `scheme://host[:port]`, nothing after.
fn is_origin(s: &str) -> bool {
    let Some((scheme, authority)) = s.split_once("://") else { return false };
    !scheme.is_empty()
        && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
        && !authority.is_empty()
        && !authority.starts_with(':')
        && !authority.contains(['/', '?', '#', '@', ' '])
}
