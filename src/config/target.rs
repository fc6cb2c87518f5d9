//! A config target read and checked: the provider's format, base URL, model, key, headers and
//! limits. Everything here reaches the provider on every request, so it is checked before
//! anything is sent: a base URL with credentials in it, a header the HTTP client owns, or a
//! value no HTTP header can carry is refused with the reason, never a value that may be a
//! secret.

use std::fmt;

use serde_json::{Map, Value};

#[cfg(feature = "clouds")]
use super::cloud_target::{self, Reach};
use crate::format::{Cloud, Endpoint, Format};
use crate::secret::{is_secret_header, Secret, REDACTED};
use crate::value::{as_object, child, kind, show, wrong, wrong_value, FieldError, Obj};

/// A provider endpoint and model. Neither `api_key` nor a credential header ever prints.
#[derive(Clone, PartialEq)]
pub struct Target {
    pub name: String,
    pub format: Format,
    pub base_url: String,
    pub model: String,
    pub api_key: Option<Secret>,
    pub headers: Vec<(String, String)>,
    pub timeouts: Timeouts,
    /// A malformed stream frame fails the attempt instead of being skipped with a warning.
    pub strict_frames: bool,
    /// The model continues a final assistant message (a prefill), so a broken stream may be
    /// continued here (`afterStart`). A property of the model, not the format: default false.
    pub prefill: bool,
    /// Whether requests carry the call's remaining budget in `x-baton-deadline-ms`.
    pub propagate_deadline: PropagateDeadline,
    /// Provider fields set at the top level of every request body, over what llm-baton wrote.
    pub extra_body: Option<Map<String, Value>>,
    /// Where the format is reached when not on its own API (`cloud`); Bedrock for every
    /// `bedrock_converse` target. Always `None` in a build without the clouds.
    pub cloud: Option<Cloud>,
    /// What a cloud needs besides the URL: its region, keys, Azure's URL style, Vertex's tokens.
    #[cfg(feature = "clouds")]
    pub reach: Reach,
}

/// A target's `propagateDeadline`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PropagateDeadline {
    /// Once the target has answered as an llm-baton gateway (an `x-baton-attempts` header).
    #[default]
    Auto,
    Always,
    Never,
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), if is_secret_header(k) { REDACTED } else { v.as_str() }))
            .collect();
        let mut f = f.debug_struct("Target");
        f.field("name", &self.name)
            .field("format", &self.format)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key)
            .field("headers", &headers)
            .field("timeouts", &self.timeouts)
            .field("strict_frames", &self.strict_frames)
            .field("prefill", &self.prefill)
            .field("propagate_deadline", &self.propagate_deadline)
            .field("extra_body", &self.extra_body.as_ref().map(|fields| fields.keys().collect::<Vec<_>>()))
            .field("cloud", &self.cloud);
        #[cfg(feature = "clouds")]
        f.field("reach", &self.reach);
        f.finish()
    }
}

impl Target {
    /// What a format needs to build this target's requests.
    pub fn endpoint(&self) -> Endpoint<'_> {
        Endpoint {
            base_url: &self.base_url,
            model: &self.model,
            cloud: self.cloud,
            api_key: self.api_key.as_ref(),
            headers: &self.headers,
            extra_body: self.extra_body.as_ref(),
            #[cfg(feature = "clouds")]
            azure: self.reach.azure.as_ref(),
        }
    }
}

impl<'a> From<&'a Target> for Endpoint<'a> {
    fn from(target: &'a Target) -> Self {
        target.endpoint()
    }
}

/// Per-attempt limits, in milliseconds; `None` is no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Timeouts {
    /// From dispatch to the last byte of the answer.
    pub total_ms: Option<u64>,
    /// From dispatch to response headers (fetch cannot observe the TCP connect on its own).
    pub headers_ms: Option<u64>,
    /// From dispatch to the first visible content delta (streams only).
    pub first_token_ms: Option<u64>,
    /// Between visible content deltas, after the first (streams only).
    pub idle_ms: Option<u64>,
}

pub(super) fn parse_target(name: &str, v: &Value, path: &str) -> Result<Target, FieldError> {
    const FIELDS: [&str; 19] = [
        "format",
        "baseUrl",
        "model",
        "apiKey",
        "headers",
        "timeouts",
        "strictFrames",
        "prefill",
        "propagateDeadline",
        "extraBody",
        "cloud",
        "region",
        "aws",
        "deployment",
        "apiVersion",
        "entraToken",
        "project",
        "accessToken",
        "serviceAccount",
    ];
    let o = Obj::new(v, path, &FIELDS)?;
    let format_name = o.required_str("format", FORMATS)?;
    #[cfg(not(feature = "clouds"))]
    refuse_clouds(&o, format_name, path)?;
    let format = Format::parse(format_name)
        .ok_or_else(|| wrong_value(&child(path, "format"), FORMATS, &Value::String(format_name.into())))?;
    let model = o.required_str("model", "the provider's model name, e.g. \"gpt-4o-mini\"")?;
    let api_key = read_key(&o, "apiKey", path, "omit it when the provider needs no key")?;
    #[cfg(feature = "clouds")]
    let (cloud, base_url, api_key, reach) = cloud_target::read(&o, format, model, api_key, path)?;
    #[cfg(not(feature = "clouds"))]
    let (cloud, base_url) = (None, read_base_url_field(&o, path)?);
    let mut headers = Vec::new();
    if let Some(h) = o.get("headers") {
        let hp = child(path, "headers");
        for (k, hv) in as_object(h, &hp, "an object of header names to string values")? {
            let valid_name =
                !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
            if !valid_name {
                return Err(FieldError::new(child(&hp, k), "is not a valid HTTP header name"));
            }
            let name = k.to_ascii_lowercase();
            if let Some(reason) = unconfigurable_header(&name) {
                return Err(FieldError::new(child(&hp, k), format!("cannot be configured: {reason}; remove it")));
            }
            // Header values are never echoed: any of them may be a credential.
            match hv {
                Value::String(s) => match header_value_problem(s, is_secret_header(&name)) {
                    None => headers.push((name, s.clone())),
                    Some(problem) => {
                        return Err(FieldError::new(
                            child(&hp, k),
                            format!("must be a valid HTTP header value, but it {problem}"),
                        ))
                    }
                },
                other => return Err(FieldError::new(child(&hp, k), format!("must be a string (got {})", kind(other)))),
            }
        }
    }
    let timeouts = match o.get("timeouts") {
        None => Timeouts::default(),
        Some(t) => {
            let tp = child(path, "timeouts");
            let to = Obj::new(t, &tp, &["totalMs", "headersMs", "firstTokenMs", "idleMs"])?;
            Timeouts {
                total_ms: to.opt_ms("totalMs", "omit it for no limit")?,
                headers_ms: to.opt_ms("headersMs", "omit it for no limit")?,
                first_token_ms: to.opt_ms("firstTokenMs", "omit it for no limit")?,
                idle_ms: to.opt_ms("idleMs", "omit it for no limit")?,
            }
        }
    };
    let strict_frames = match o.get("strictFrames") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(strict)) => *strict,
        Some(other) => {
            return Err(wrong_value(
                &child(path, "strictFrames"),
                "true (a malformed stream frame fails the attempt) or false (it is skipped with a warning)",
                other,
            ))
        }
    };
    let prefill = match o.get("prefill") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(prefill)) => *prefill,
        Some(other) => {
            return Err(wrong_value(
                &child(path, "prefill"),
                "true (the model continues a final assistant message) or false (default)",
                other,
            ))
        }
    };
    let propagate_deadline = match o.get("propagateDeadline") {
        None | Some(Value::Null) => PropagateDeadline::Auto,
        Some(Value::Bool(true)) => PropagateDeadline::Always,
        Some(Value::Bool(false)) => PropagateDeadline::Never,
        Some(Value::String(s)) if s == "auto" => PropagateDeadline::Auto,
        Some(other) => {
            return Err(wrong_value(
                &child(path, "propagateDeadline"),
                r#"true (send the call's remaining budget in x-baton-deadline-ms), false, or "auto" (the default: once the target answered as an llm-baton gateway)"#,
                other,
            ))
        }
    };
    let extra_body = match o.get("extraBody") {
        None | Some(Value::Null) => None,
        Some(Value::Object(fields)) => {
            if fields.contains_key("stream") {
                return Err(FieldError::new(
                    child(&child(path, "extraBody"), "stream"),
                    "cannot be set: each call decides whether it streams; remove it",
                ));
            }
            Some(fields.clone())
        }
        Some(other) => {
            return Err(wrong(
                &child(path, "extraBody"),
                r#"an object of fields to set in the provider's request body, e.g. {"top_k": 40}"#,
                other,
            ))
        }
    };
    Ok(Target {
        name: name.to_string(),
        format,
        base_url,
        model: model.to_string(),
        api_key,
        headers,
        timeouts,
        strict_frames,
        prefill,
        propagate_deadline,
        extra_body,
        cloud,
        #[cfg(feature = "clouds")]
        reach,
    })
}

/// A target's `baseUrl`: required, an http(s) URL.
pub(super) fn read_base_url_field(o: &Obj, path: &str) -> Result<String, FieldError> {
    read_base_url(
        o.required_str("baseUrl", "an http(s) URL such as \"https://api.openai.com/v1\"")?,
        &child(path, "baseUrl"),
    )
}

/// What a target names that only a cloud takes (`cloud`, Bedrock's Converse format, a region,
/// keys, tokens), refused in a build without the clouds with the entry that has them.
#[cfg(not(feature = "clouds"))]
fn refuse_clouds(o: &Obj, format: &str, path: &str) -> Result<(), FieldError> {
    const ELSEWHERE: &str = "is for a target on a cloud (Azure OpenAI, Amazon Bedrock, Google Vertex AI), whose code this build leaves out: import from \"llm-baton/clouds\" (createGateway from \"llm-baton/gateway/clouds\"; the llm-baton-gateway command picks it itself)";
    if format == "bedrock_converse" {
        return Err(FieldError::new(child(path, "format"), format!("\"bedrock_converse\" {ELSEWHERE}")));
    }
    match CLOUD_FIELDS.into_iter().find(|f| o.get(f).is_some()) {
        Some(field) => Err(FieldError::new(child(path, field), ELSEWHERE)),
        None => Ok(()),
    }
}

/// The fields only a cloud's target takes.
#[cfg(not(feature = "clouds"))]
const CLOUD_FIELDS: [&str; 9] =
    ["cloud", "region", "aws", "deployment", "apiVersion", "entraToken", "project", "accessToken", "serviceAccount"];

/// A credential field (`apiKey`, `entraToken`): a non-empty string any HTTP header can carry,
/// never echoed.
pub(super) fn read_key(o: &Obj, key: &str, path: &str, omit_hint: &str) -> Result<Option<Secret>, FieldError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => match header_value_problem(s, true) {
            None => Ok(Some(Secret::new(s.clone()))),
            Some(problem) => Err(unusable_key(&child(path, key), &problem)),
        },
        Some(_) => Err(FieldError::new(child(path, key), format!("must be a non-empty string; {omit_hint}"))),
    }
}

const FORMATS: &str = if cfg!(feature = "clouds") {
    "one of \"openai_chat\", \"anthropic_messages\", \"openai_responses\", \"gemini\", \"bedrock_converse\""
} else {
    "one of \"openai_chat\", \"anthropic_messages\", \"openai_responses\", \"gemini\""
};

/// Headers the HTTP client owns: set per request, or meaningful for one connection only. A
/// configured one fails or hangs every call at send time, so it is refused here with the reason.
fn unconfigurable_header(name: &str) -> Option<&'static str> {
    match name {
        "content-length" | "transfer-encoding" => Some("the HTTP client frames each request body itself"),
        "host" => Some("the HTTP client sets it from baseUrl"),
        "expect" => Some("fetch does not support 100-continue"),
        "connection" | "keep-alive" | "te" | "trailer" | "upgrade" | "proxy-connection" => {
            Some("it is a hop-by-hop header, which only the HTTP client may set")
        }
        _ => None,
    }
}

/// `{path} must be usable as an HTTP header value, but it {problem}`: an API key no header can
/// carry, not shown.
pub(super) fn unusable_key(path: &str, problem: &str) -> FieldError {
    FieldError::new(path, format!("must be usable as an HTTP header value, but it {problem} (the key is not shown)"))
}

/// Why `value` cannot be an HTTP field value (RFC 9110 field-value, as fetch's Latin-1
/// `Headers` take it), or `None` when it can. The answer never holds the value; for a `secret`
/// one not even the offending character, only its position (counted in characters from 0).
pub(super) fn header_value_problem(value: &str, secret: bool) -> Option<String> {
    if value.starts_with([' ', '\t']) || value.ends_with([' ', '\t']) {
        return Some("starts or ends with a space or tab".into());
    }
    value.chars().enumerate().find_map(|(i, c)| {
        let which = if secret { format!("at position {i}") } else { format!("U+{:04X} at position {i}", c as u32) };
        match c {
            '\r' | '\n' => Some(format!("contains a line break (CR or LF) at position {i}")),
            '\0' => Some(format!("contains a NUL character at position {i}")),
            '\t' => None,
            c if c.is_ascii_control() => Some(format!("contains a control character ({which})")),
            c if u32::from(c) > 0xFF => Some(format!("contains a character outside Latin-1 ({which})")),
            _ => None,
        }
    })
}

/// Query parameters that carry a credential; compared in any letter case.
const CREDENTIAL_PARAMS: [&str; 11] =
    ["token", "access_token", "api-key", "api_key", "apikey", "key", "auth", "password", "secret", "sig", "signature"];

/// Checks a target's `baseUrl`: http or https in any letter case, a host, a port if any, and no
/// credentials. Returns it with the scheme in lower case. Messages show it without its query.
fn read_base_url(url: &str, path: &str) -> Result<String, FieldError> {
    let bad = |what: &str| FieldError::new(path, format!("{what} (got {})", show(&Value::String(redact_url(url)))));
    let (scheme, rest) = url
        .split_once("://")
        .map(|(scheme, rest)| (scheme.to_ascii_lowercase(), rest))
        .filter(|(scheme, _)| scheme == "http" || scheme == "https")
        .ok_or_else(|| bad("must be an http:// or https:// URL"))?;
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad("must be a URL without spaces or control characters"));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let query = rest.split_once('?').map(|(_, q)| q.split('#').next().unwrap_or("")).unwrap_or("");
    let credential = if authority.contains('@') {
        Some("user:password@ before the host".to_string())
    } else {
        query.split('&').find_map(|param| {
            let name = param.split('=').next().unwrap_or("").to_ascii_lowercase();
            CREDENTIAL_PARAMS.contains(&name.as_str()).then(|| format!("the query parameter {name}="))
        })
    };
    if let Some(found) = credential {
        return Err(FieldError::new(
            path,
            format!("must not carry credentials (found {found}); put the key in apiKey or a header"),
        ));
    }
    let (host, port) = match authority.strip_prefix('[') {
        Some(ipv6) => match ipv6.split_once(']') {
            Some((address, after)) => (address, after.strip_prefix(':').or((!after.is_empty()).then_some(after))),
            None => ("", None),
        },
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    if host.is_empty() {
        return Err(bad("must name a host, as in \"https://api.openai.com/v1\""));
    }
    if let Some(port) = port.filter(|p| !p.is_empty()) {
        if !port.bytes().all(|b| b.is_ascii_digit()) || port.parse::<u32>().map_or(true, |p| p > 65_535) {
            return Err(bad("must have a port from 0 to 65535 after the host"));
        }
    }
    Ok(format!("{scheme}://{rest}"))
}

/// A URL safe to show: no user info, no query.
pub fn redact_url(url: &str) -> String {
    let base = url.split(['?', '#']).next().unwrap_or("");
    match base.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('@') {
            Some((userinfo, host)) if !userinfo.contains('/') => {
                format!("{scheme}://<redacted>@{host}")
            }
            _ => base.to_string(),
        },
        None => base.to_string(),
    }
}
