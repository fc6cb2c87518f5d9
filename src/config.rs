//! The config document: targets, routes (nested strategies) and the default deadline.
//!
//! One JSON document serves `new Baton(config)`, the gateway and the tests. It is read by hand
//! from a `serde_json::Value` rather than derived, because a user's mistake deserves a message
//! that names the field by path, says what was wrong and what would be right, e.g.
//! `targets.p.timeouts.totalMs must be a positive number of milliseconds (got 0); omit it for no
//! limit`. Route references are resolved and inlined here, so the engine walks a finished tree.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value};

use crate::chat::ChatRequest;
use crate::format::{Endpoint, Format};
use crate::health::{HealthPolicy, RetryBudgetPolicy};
use crate::outcome::FailureClass;
use crate::secret::{is_secret_header, REDACTED};
use crate::value::{as_object, child, kind, parse_json, read_ms, read_number, read_whole, show, show_kind, Obj};
pub use crate::value::{parse_ms, ConfigError, Step, MAX_MS};

/// The most attempts one retry node may make.
const MAX_ATTEMPTS: u64 = 100;
/// The largest round-robin weight.
const MAX_WEIGHT: u64 = 1_000_000;
/// The most breaks one call may resume.
const MAX_RESUMES: u64 = 10;
/// The default least time left for a resume to start: a fresh request rarely shows its first
/// token sooner.
const DEFAULT_MIN_REMAINING_MS: u64 = 1000;
/// The largest gateway request body that may be allowed.
const MAX_BODY_BYTES: u64 = 1_000_000_000;

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub targets: Vec<Target>,
    /// Route name -> its strategy, references to other routes already inlined.
    pub routes: BTreeMap<String, Strategy>,
    pub deadline_ms: Option<u64>,
    pub gateway: GatewayConfig,
    /// How many round-robin nodes the routes hold (each keeps its own rotation).
    pub round_robin_nodes: usize,
    /// Breakers and the retry budget; `None` when the config says `"health": false`.
    pub health: Option<HealthPolicy>,
}

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
        f.debug_struct("Target")
            .field("name", &self.name)
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
            .finish()
    }
}

impl Target {
    /// What a format needs to build this target's requests.
    pub fn endpoint(&self) -> Endpoint<'_> {
        Endpoint {
            base_url: &self.base_url,
            model: &self.model,
            api_key: self.api_key.as_ref(),
            headers: &self.headers,
            extra_body: self.extra_body.as_ref(),
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

pub use crate::secret::Secret;

/// How a route tries its members.
#[derive(Debug, Clone, PartialEq)]
pub enum Strategy {
    /// Index into [`Config::targets`].
    Target(usize),
    Retry(Box<RetryPolicy>),
    Fallback {
        members: Vec<Strategy>,
        /// Boxed, like `after_start`: only some fallbacks have one.
        fallback_on: Option<Box<Conditions>>,
        /// What a stream that broke after its first visible content does; `None` ends it.
        /// Boxed: every strategy node is as large as the largest variant, and routes may hold
        /// thousands of nodes.
        after_start: Option<Box<AfterStart>>,
    },
    RoundRobin {
        members: Vec<Strategy>,
        weights: Vec<u32>,
        node: usize,
    },
}

/// A fallback's `afterStart`: how a stream that broke after the reader saw its start is resumed
/// on a later member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AfterStart {
    pub mode: ResumeMode,
    /// Breaks resumed per call.
    pub attempts: u32,
    /// A resume is not started with less than this left of the call's budget.
    pub min_remaining_ms: u64,
}

/// How a broken stream resumes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ResumeMode {
    /// The next member that takes a prefill continues the text shown so far, in the same answer.
    Continue,
    /// The reader discards what it saw and the next member answers afresh.
    Restart,
}

impl ResumeMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ResumeMode::Continue => "continue",
            ResumeMode::Restart => "restart",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    pub inner: Strategy,
    pub attempts: u32,
    pub backoff: Backoff,
    pub retry_on: Option<Conditions>,
    /// A server-requested wait (Retry-After) longer than this stops retrying at once.
    pub max_retry_after_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    pub initial_ms: u64,
    pub multiplier: f64,
    pub max_ms: u64,
    pub jitter: Jitter,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { initial_ms: 250, multiplier: 2.0, max_ms: 8000, jitter: Jitter::Equal }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Jitter {
    /// Half the computed delay, plus a uniformly random delay up to the other half (AWS "equal
    /// jitter"): retries spread out, yet never come closer than half the computed delay. The
    /// default.
    Equal,
    /// A uniformly random delay between 0 and the computed one (AWS "full jitter"): the widest
    /// spread, but two retries may land almost at once.
    Full,
    /// The computed delay exactly.
    None,
}

/// A `retryOn` / `fallbackOn` list: which failures qualify.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Conditions {
    pub transport: bool,
    pub timeout: bool,
    pub protocol: bool,
    pub any_4xx: bool,
    pub any_5xx: bool,
    pub statuses: Vec<u16>,
    /// Failure classes named in the list (`"context_length"`, `"quota"`...).
    pub classes: Vec<FailureClass>,
}

impl Conditions {
    pub fn matches_status(&self, status: u16) -> bool {
        (self.any_4xx && (400..500).contains(&status))
            || (self.any_5xx && (500..600).contains(&status))
            || self.statuses.contains(&status)
    }
}

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

impl Config {
    /// Parses and validates a config document given as JSON text.
    pub fn from_json(text: &str) -> Result<Config, ConfigError> {
        Config::from_value(&parse_json(text, "config")?)
    }

    /// Parses and validates a config document.
    pub fn from_value(value: &Value) -> Result<Config, ConfigError> {
        let root = Obj::new(value, "", &["targets", "routes", "deadlineMs", "gateway", "health"])?;
        let targets_value = root.get("targets").ok_or_else(|| {
            ConfigError::new("targets", "is missing; give at least one target, e.g. {\"p\": {\"format\": \"openai_chat\", \"baseUrl\": \"https://api.openai.com/v1\", \"model\": \"gpt-4o-mini\"}}")
        })?;
        let targets_map = as_object(targets_value, "targets", "an object of named targets")?;
        if targets_map.is_empty() {
            return Err(ConfigError::new("targets", "must name at least one target (got {})"));
        }
        let mut targets = Vec::with_capacity(targets_map.len());
        for (name, v) in targets_map {
            targets.push(parse_target(name, v, &child("targets", name))?);
        }

        let no_routes = Map::new();
        let raw_routes = match root.get("routes") {
            Some(v) => as_object(v, "routes", "an object of named strategies")?,
            None => &no_routes,
        };
        let mut builder = RouteBuilder {
            targets: &targets,
            raw: raw_routes,
            round_robin_nodes: 0,
            resolving: Vec::new(),
            done: BTreeMap::new(),
            steps: 0,
            depth: 0,
            deepest: 0,
            levels: BTreeMap::new(),
        };
        for name in raw_routes.keys() {
            builder.route(name, &child("routes", name))?;
        }
        let round_robin_nodes = builder.round_robin_nodes;
        let routes = builder.done;

        let deadline_ms = root.opt_ms("deadlineMs", "omit it for no deadline")?;
        let gateway = match root.get("gateway") {
            Some(v) => parse_gateway(v)?,
            None => GatewayConfig::default(),
        };
        let health = match root.get("health") {
            None | Some(Value::Null) => Some(HealthPolicy::default()),
            Some(Value::Bool(false)) => None,
            Some(v) => Some(parse_health(v)?),
        };
        Ok(Config { targets, routes, deadline_ms, gateway, round_robin_nodes, health })
    }

    /// Every secret the config holds, for the [`Redactor`](crate::secret::Redactor): each
    /// target's apiKey and credential header values (by [`is_secret_header`]), and the gateway's
    /// own client keys, which a client may see echoed.
    pub fn secrets(&self) -> Vec<&str> {
        let mut secrets: Vec<&str> = Vec::new();
        for target in &self.targets {
            secrets.extend(target.api_key.as_ref().map(Secret::expose));
            secrets.extend(target.headers.iter().filter(|(k, _)| is_secret_header(k)).map(|(_, v)| v.as_str()));
        }
        secrets.extend(self.gateway.api_keys.iter().map(Secret::expose));
        secrets
    }

    pub fn target_index(&self, name: &str) -> Option<usize> {
        self.targets.iter().position(|t| t.name == name)
    }

    /// The strategy a call by this name runs: a route, or a bare target used as its own route.
    pub fn strategy(&self, name: &str) -> Option<Strategy> {
        self.routes.get(name).cloned().or_else(|| self.target_index(name).map(Strategy::Target))
    }

    /// The indices of every target a call on `route` may reach, in config order, once each (none
    /// for an unknown route), read from the route in place, without copying it. Marked per
    /// target rather than sorted: no sort code in the wasm for it.
    pub fn route_targets(&self, route: &str) -> Vec<usize> {
        fn mark(s: &Strategy, reached: &mut [bool]) {
            match s {
                Strategy::Target(i) => reached[*i] = true,
                Strategy::Retry(p) => mark(&p.inner, reached),
                Strategy::Fallback { members, .. } | Strategy::RoundRobin { members, .. } => {
                    members.iter().for_each(|m| mark(m, reached))
                }
            }
        }
        let mut reached = vec![false; self.targets.len()];
        match self.routes.get(route) {
            Some(strategy) => mark(strategy, &mut reached),
            None => return self.target_index(route).into_iter().collect(),
        }
        (0..reached.len()).filter(|&i| reached[i]).collect()
    }

    /// Checks, before anything is sent, that every target a call on `route` may reach can carry
    /// every image and file of `request`: failing over to a target that cannot would fail the
    /// call late, or drop the part. The error names the first part that some target cannot
    /// carry, the target, and what would carry it. An unknown route passes (starting the call
    /// reports it).
    pub fn check_request(&self, route: &str, request: &ChatRequest) -> Result<(), ConfigError> {
        if request.messages.iter().all(|m| m.is_text_only()) {
            return Ok(());
        }
        let targets = self.route_targets(route);
        for (i, message) in request.messages.iter().enumerate() {
            for (j, part) in message.content.iter().enumerate() {
                for target in targets.iter().map(|&t| &self.targets[t]) {
                    let Some(uncarried) = target.format.uncarried(part) else { continue };
                    let carriers: Vec<&str> =
                        Format::ALL.into_iter().filter(|f| f.uncarried(part).is_none()).map(Format::as_str).collect();
                    let route_to = match carriers.split_last() {
                        None => String::new(),
                        Some((last, [])) => format!("route to {} {last} target", article(last)),
                        Some((last, rest)) => {
                            format!("route to {} {} or {last} target", article(rest[0]), rest.join(", "))
                        }
                    };
                    let fix = match (uncarried.remedy, route_to.is_empty()) {
                        (Some(remedy), false) => format!("{remedy}, or {route_to}"),
                        (Some(remedy), true) => remedy.to_string(),
                        (None, _) => route_to,
                    };
                    return Err(ConfigError::new(
                        format!("request.messages[{i}].content[{j}]"),
                        format!(
                            "is {}, which target {} ({}) cannot carry; {fix}",
                            uncarried.what,
                            show(&Value::from(target.name.as_str())),
                            target.format.as_str()
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Every name a call (or a gateway client's `model`) may use.
    pub fn route_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.routes.keys().cloned().collect();
        for t in &self.targets {
            if !self.routes.contains_key(&t.name) {
                names.push(t.name.clone());
            }
        }
        names
    }
}

/// "a" or "an" before a format's name.
/// The error for a config that was not given (`undefined` or `null`): `entry` is the call that
/// needed it, `new Baton` or `createGateway`.
pub fn missing(entry: &str) -> ConfigError {
    ConfigError::new(
        "config",
        format!(
            "is required: {entry}({{ targets, routes }}), e.g. {entry}({{ targets: {{ p: {{ format: \"openai_chat\", \
             baseUrl: \"https://api.openai.com/v1\", model: \"gpt-4o-mini\" }} }}, routes: {{ chat: \"p\" }} }}) \
             (routes may be left out: each target is a route of its own)"
        ),
    )
}

/// The error for `undefined` where a config holds a secret (`at`, from the document's root;
/// `path` as printed), or `None` where `undefined` may stand for an absent field, as JS
/// configs use it. The secrets: each target's apiKey and header values, the gateway's apiKeys
/// and each entry. There `undefined` is nearly always an environment variable that is not set
/// (`apiKey: process.env.KEY`); read as absent, it would send no key and end as the provider's
/// 401, or leave the gateway open. JSON has no `undefined`: only the JS reader asks.
pub fn undefined_secret(at: &[Step], path: &str) -> Option<ConfigError> {
    use Step::{Field, Item};
    let remedy = match at {
        [Field("targets"), Field(_), Field("apiKey")] => "leave the field out",
        [Field("targets"), Field(_), Field("headers"), Field(_)] => "leave the header out",
        [Field("gateway"), Field("apiKeys")] => "leave the field out for a gateway that any client may call",
        [Field("gateway"), Field("apiKeys"), Item] => "remove the entry",
        _ => return None,
    };
    Some(ConfigError::new(path, format!("is undefined: an environment variable that is not set? Set it, or {remedy}")))
}

fn article(format: &str) -> &'static str {
    if format.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

fn parse_target(name: &str, v: &Value, path: &str) -> Result<Target, ConfigError> {
    const FIELDS: [&str; 10] = [
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
    ];
    let o = Obj::new(v, path, &FIELDS)?;
    let format_name =
        o.required_str("format", "one of \"openai_chat\", \"anthropic_messages\", \"openai_responses\", \"gemini\"")?;
    let format = Format::parse(format_name).ok_or_else(|| {
        ConfigError::new(
            child(path, "format"),
            format!(
                "must be one of \"openai_chat\", \"anthropic_messages\", \"openai_responses\", \"gemini\" (got {})",
                show(&Value::String(format_name.into()))
            ),
        )
    })?;
    let base_url = o.required_str("baseUrl", "an http(s) URL such as \"https://api.openai.com/v1\"")?;
    let base_url = read_base_url(base_url, &child(path, "baseUrl"))?;
    let model = o.required_str("model", "the provider's model name, e.g. \"gpt-4o-mini\"")?;
    let api_key = match o.get("apiKey") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.is_empty() => match header_value_problem(s, true) {
            None => Some(Secret::new(s.clone())),
            Some(problem) => {
                return Err(ConfigError::new(
                    child(path, "apiKey"),
                    format!("must be usable as an HTTP header value, but it {problem} (the key is not shown)"),
                ))
            }
        },
        Some(_) => {
            return Err(ConfigError::new(
                child(path, "apiKey"),
                "must be a non-empty string; omit it when the provider needs no key",
            ))
        }
    };
    let mut headers = Vec::new();
    if let Some(h) = o.get("headers") {
        let hp = child(path, "headers");
        for (k, hv) in as_object(h, &hp, "an object of header names to string values")? {
            let valid_name =
                !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
            if !valid_name {
                return Err(ConfigError::new(child(&hp, k), "is not a valid HTTP header name"));
            }
            let name = k.to_ascii_lowercase();
            if let Some(reason) = unconfigurable_header(&name) {
                return Err(ConfigError::new(child(&hp, k), format!("cannot be configured: {reason}; remove it")));
            }
            // Header values are never echoed: any of them may be a credential.
            match hv {
                Value::String(s) => match header_value_problem(s, is_secret_header(&name)) {
                    None => headers.push((name, s.clone())),
                    Some(problem) => {
                        return Err(ConfigError::new(
                            child(&hp, k),
                            format!("must be a valid HTTP header value, but it {problem}"),
                        ))
                    }
                },
                other => {
                    return Err(ConfigError::new(child(&hp, k), format!("must be a string (got {})", kind(other))))
                }
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
            return Err(ConfigError::new(
                child(path, "strictFrames"),
                format!(
                    "must be true (a malformed stream frame fails the attempt) or false (it is skipped with a warning) (got {})",
                    show(other)
                ),
            ))
        }
    };
    let prefill = match o.get("prefill") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(prefill)) => *prefill,
        Some(other) => {
            return Err(ConfigError::new(
                child(path, "prefill"),
                format!(
                    "must be true (the model continues a final assistant message) or false (default) (got {})",
                    show(other)
                ),
            ))
        }
    };
    let propagate_deadline = match o.get("propagateDeadline") {
        None | Some(Value::Null) => PropagateDeadline::Auto,
        Some(Value::Bool(true)) => PropagateDeadline::Always,
        Some(Value::Bool(false)) => PropagateDeadline::Never,
        Some(Value::String(s)) if s == "auto" => PropagateDeadline::Auto,
        Some(other) => {
            return Err(ConfigError::new(
                child(path, "propagateDeadline"),
                format!(
                    r#"must be true (send the call's remaining budget in x-baton-deadline-ms), false, or "auto" (the default: once the target answered as an llm-baton gateway) (got {})"#,
                    show(other)
                ),
            ))
        }
    };
    let extra_body = match o.get("extraBody") {
        None | Some(Value::Null) => None,
        Some(Value::Object(fields)) => {
            if fields.contains_key("stream") {
                return Err(ConfigError::new(
                    child(&child(path, "extraBody"), "stream"),
                    "cannot be set: each call decides whether it streams; remove it",
                ));
            }
            Some(fields.clone())
        }
        Some(other) => {
            return Err(ConfigError::new(
                child(path, "extraBody"),
                format!(
                    r#"must be an object of fields to set in the provider's request body, e.g. {{"top_k": 40}} (got {})"#,
                    show_kind(other)
                ),
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
    })
}

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

/// Why `value` cannot be an HTTP field value (RFC 9110 field-value, as fetch's Latin-1
/// `Headers` take it), or `None` when it can. The answer never holds the value; for a `secret`
/// one not even the offending character, only its position (counted in characters from 0).
fn header_value_problem(value: &str, secret: bool) -> Option<String> {
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
fn read_base_url(url: &str, path: &str) -> Result<String, ConfigError> {
    let shown = || show(&Value::String(redact_url(url)));
    let (scheme, rest) = url
        .split_once("://")
        .map(|(scheme, rest)| (scheme.to_ascii_lowercase(), rest))
        .filter(|(scheme, _)| scheme == "http" || scheme == "https")
        .ok_or_else(|| ConfigError::new(path, format!("must be an http:// or https:// URL (got {})", shown())))?;
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(ConfigError::new(
            path,
            format!("must be a URL without spaces or control characters (got {})", shown()),
        ));
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
        return Err(ConfigError::new(
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
        return Err(ConfigError::new(
            path,
            format!("must name a host, as in \"https://api.openai.com/v1\" (got {})", shown()),
        ));
    }
    if let Some(port) = port.filter(|p| !p.is_empty()) {
        if !port.bytes().all(|b| b.is_ascii_digit()) || port.parse::<u32>().map_or(true, |p| p > 65_535) {
            return Err(ConfigError::new(
                path,
                format!("must have a port from 0 to 65535 after the host (got {})", shown()),
            ));
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

/// The most targets and strategies the routes may hold once every route a route names is
/// written out in it. Routes are inlined, so routes naming each other twice over grow
/// exponentially; real configs hold a few dozen.
const MAX_ROUTE_STEPS: usize = 10_000;

/// The most strategies nested inside each other, each route name counting as one more level.
/// Reading them recurses, and a JavaScript host's stack is small.
const MAX_ROUTE_DEPTH: usize = 32;

struct RouteBuilder<'a> {
    targets: &'a [Target],
    raw: &'a Map<String, Value>,
    round_robin_nodes: usize,
    /// Routes being resolved, outermost first: a name met again here is a cycle.
    resolving: Vec<String>,
    done: BTreeMap<String, Strategy>,
    /// Targets and strategies built or copied so far, against [`MAX_ROUTE_STEPS`].
    steps: usize,
    /// Levels open now (strategies and route names), against [`MAX_ROUTE_DEPTH`].
    depth: usize,
    /// The deepest level reached while building the current route.
    deepest: usize,
    /// The levels each built route spans, so naming it again counts the same as building it.
    levels: BTreeMap<String, usize>,
}

impl RouteBuilder<'_> {
    fn route(&mut self, name: &str, path: &str) -> Result<Strategy, ConfigError> {
        if let Some(s) = self.done.get(name) {
            let steps = steps_in(s);
            self.take_steps(steps, path)?;
            self.enter_levels(self.levels[name], path)?;
            return Ok(self.done[name].clone());
        }
        if let Some(at) = self.resolving.iter().position(|r| r == name) {
            let mut cycle: Vec<&str> = self.resolving[at..].iter().map(String::as_str).collect();
            cycle.push(name);
            return Err(ConfigError::new(
                path,
                format!("is part of a route cycle ({}); a route may not contain itself", cycle.join(" -> ")),
            ));
        }
        self.resolving.push(name.to_string());
        let value = &self.raw[name];
        let outer_deepest = std::mem::replace(&mut self.deepest, self.depth);
        let strategy = self.strategy(value, &child("routes", name))?;
        self.levels.insert(name.to_string(), self.deepest - self.depth);
        self.deepest = self.deepest.max(outer_deepest);
        self.resolving.pop();
        self.done.insert(name.to_string(), strategy.clone());
        Ok(strategy)
    }

    fn take_steps(&mut self, steps: usize, path: &str) -> Result<(), ConfigError> {
        self.steps += steps;
        if self.steps > MAX_ROUTE_STEPS {
            return Err(ConfigError::new(
                path,
                format!(
                    "makes the routes hold more than {MAX_ROUTE_STEPS} targets and strategies once the routes they name are written out; name routes inside each other less often"
                ),
            ));
        }
        Ok(())
    }

    /// Checks that `levels` more below the current one stay within [`MAX_ROUTE_DEPTH`].
    fn enter_levels(&mut self, levels: usize, path: &str) -> Result<(), ConfigError> {
        let level = self.depth + levels;
        if level > MAX_ROUTE_DEPTH {
            return Err(ConfigError::new(
                path,
                format!("nests strategies more than {MAX_ROUTE_DEPTH} deep, each route it names counting as a level; a route needs only a few levels"),
            ));
        }
        self.deepest = self.deepest.max(level);
        Ok(())
    }

    fn strategy(&mut self, v: &Value, path: &str) -> Result<Strategy, ConfigError> {
        self.enter_levels(1, path)?;
        self.take_steps(1, path)?;
        self.depth += 1;
        let strategy = self.strategy_node(v, path);
        self.depth -= 1;
        strategy
    }

    fn strategy_node(&mut self, v: &Value, path: &str) -> Result<Strategy, ConfigError> {
        match v {
            Value::String(name) => {
                if let Some(i) = self.targets.iter().position(|t| &t.name == name) {
                    Ok(Strategy::Target(i))
                } else if self.raw.contains_key(name) {
                    self.route(name, path)
                } else {
                    let mut known: Vec<&str> = self.targets.iter().map(|t| t.name.as_str()).collect();
                    known.extend(self.raw.keys().map(String::as_str));
                    Err(ConfigError::new(
                        path,
                        format!("names an unknown target or route {} (known: {})", show(v), known.join(", ")),
                    ))
                }
            }
            Value::Object(map) => {
                if map.contains_key("retry") {
                    self.retry(v, path)
                } else if map.contains_key("fallback") {
                    let o = Obj::new(v, path, &["fallback", "fallbackOn", "afterStart"])?;
                    let members = self.members(o.get("fallback").unwrap(), &child(path, "fallback"), "fallback")?;
                    let fallback_on = o
                        .get("fallbackOn")
                        .map(|c| parse_conditions(c, &child(path, "fallbackOn")).map(Box::new))
                        .transpose()?;
                    let after_start = o
                        .get("afterStart")
                        .map(|a| parse_after_start(a, &child(path, "afterStart")).map(Box::new))
                        .transpose()?;
                    Ok(Strategy::Fallback { members, fallback_on, after_start })
                } else if map.contains_key("roundRobin") {
                    let o = Obj::new(v, path, &["roundRobin", "weights"])?;
                    let members =
                        self.members(o.get("roundRobin").unwrap(), &child(path, "roundRobin"), "roundRobin")?;
                    let weights = match o.get("weights") {
                        None => vec![1; members.len()],
                        Some(w) => parse_weights(w, &child(path, "weights"), members.len())?,
                    };
                    let node = self.round_robin_nodes;
                    self.round_robin_nodes += 1;
                    Ok(Strategy::RoundRobin { members, weights, node })
                } else {
                    Err(ConfigError::new(
                        path,
                        "must be a target name or an object with one of \"retry\", \"fallback\", \"roundRobin\"",
                    ))
                }
            }
            other => Err(ConfigError::new(
                path,
                format!("must be a target name or a strategy object (got {})", show_kind(other)),
            )),
        }
    }

    fn retry(&mut self, v: &Value, path: &str) -> Result<Strategy, ConfigError> {
        let o = Obj::new(v, path, &["retry", "attempts", "backoff", "retryOn", "maxRetryAfterMs"])?;
        let inner = self.strategy(o.get("retry").unwrap(), &child(path, "retry"))?;
        let attempts = match o.get("attempts") {
            None => {
                return Err(ConfigError::new(
                    child(path, "attempts"),
                    "is missing; give the total number of attempts, at least 1 (e.g. 3)",
                ))
            }
            Some(a) => read_whole(a, &child(path, "attempts"), "a whole number", 1, MAX_ATTEMPTS)? as u32,
        };
        let backoff = match o.get("backoff") {
            None => Backoff::default(),
            Some(b) => parse_backoff(b, &child(path, "backoff"))?,
        };
        let retry_on = o.get("retryOn").map(|c| parse_conditions(c, &child(path, "retryOn"))).transpose()?;
        let max_retry_after_ms = o.opt_ms("maxRetryAfterMs", "omit it for the default of 60000")?.unwrap_or(60_000);
        Ok(Strategy::Retry(Box::new(RetryPolicy { inner, attempts, backoff, retry_on, max_retry_after_ms })))
    }

    fn members(&mut self, v: &Value, path: &str, key: &str) -> Result<Vec<Strategy>, ConfigError> {
        let list = match v {
            Value::Array(list) => list,
            other => {
                return Err(ConfigError::new(path, format!("must be a list of strategies (got {})", show_kind(other))))
            }
        };
        if list.is_empty() {
            return Err(ConfigError::new(
                path,
                format!("must list at least one member (got []); a {key} of nothing can never answer"),
            ));
        }
        list.iter().enumerate().map(|(i, m)| self.strategy(m, &format!("{path}[{i}]"))).collect()
    }
}

/// How many targets and strategies `s` holds.
fn steps_in(s: &Strategy) -> usize {
    match s {
        Strategy::Target(_) => 1,
        Strategy::Retry(p) => 1 + steps_in(&p.inner),
        Strategy::Fallback { members, .. } | Strategy::RoundRobin { members, .. } => {
            1 + members.iter().map(steps_in).sum::<usize>()
        }
    }
}

/// Reads a config's `health` section (not `false`: see [`Config::from_value`]).
pub fn parse_health(v: &Value) -> Result<HealthPolicy, ConfigError> {
    let path = "health";
    if !v.is_object() {
        return Err(ConfigError::new(
            path,
            format!(
                r#"must be an object such as {{"cooldownMs": 5000}}, or false to turn breakers and the retry budget off (got {})"#,
                show(v)
            ),
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
    let window_ms = o.opt_ms("windowMs", "omit it for the default of 30000")?.unwrap_or(d.window_ms);
    let cooldown_ms = o.opt_ms("cooldownMs", "omit it for the default of 5000")?.unwrap_or(d.cooldown_ms);
    let retry_budget = match o.get("retryBudget") {
        None | Some(Value::Null) => d.retry_budget,
        Some(Value::Bool(false)) => None,
        Some(b) => Some(parse_retry_budget(b, &child(path, "retryBudget"))?),
    };
    Ok(HealthPolicy { failures, failure_ratio, window_ms, min_requests, cooldown_ms, retry_budget })
}

fn parse_retry_budget(v: &Value, path: &str) -> Result<RetryBudgetPolicy, ConfigError> {
    if !v.is_object() {
        return Err(ConfigError::new(
            path,
            format!(
                r#"must be an object such as {{"ratio": 0.2, "minPerSecond": 10}}, or false for no budget (got {})"#,
                show(v)
            ),
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

fn parse_after_start(v: &Value, path: &str) -> Result<AfterStart, ConfigError> {
    let o = Obj::new(v, path, &["mode", "attempts", "minRemainingMs"])?;
    const MODES: &str = r#""continue" (the next member with prefill: true continues the text) or "restart" (the reader discards it and the next member answers afresh)"#;
    let mode = match o.required_str("mode", MODES)? {
        "continue" => ResumeMode::Continue,
        "restart" => ResumeMode::Restart,
        other => {
            return Err(ConfigError::new(
                child(path, "mode"),
                format!("must be {MODES} (got {})", show(&Value::from(other))),
            ))
        }
    };
    let attempts = match o.get("attempts") {
        None | Some(Value::Null) => 1,
        Some(a) => read_whole(a, &child(path, "attempts"), "a whole number of resumes", 1, MAX_RESUMES)? as u32,
    };
    let min_remaining_ms = o
        .opt_ms("minRemainingMs", &format!("omit it for the default of {DEFAULT_MIN_REMAINING_MS}"))?
        .unwrap_or(DEFAULT_MIN_REMAINING_MS);
    Ok(AfterStart { mode, attempts, min_remaining_ms })
}

fn parse_weights(v: &Value, path: &str, members: usize) -> Result<Vec<u32>, ConfigError> {
    let list = v.as_array().ok_or_else(|| {
        ConfigError::new(
            path,
            format!("must be a list of positive whole numbers, one per member (got {})", show_kind(v)),
        )
    })?;
    if list.len() != members {
        return Err(ConfigError::new(
            path,
            format!("must have one weight per member: {members} members, {} weights", list.len()),
        ));
    }
    list.iter()
        .enumerate()
        .map(|(i, w)| read_whole(w, &format!("{path}[{i}]"), "a whole number", 1, MAX_WEIGHT).map(|n| n as u32))
        .collect()
}

fn parse_backoff(v: &Value, path: &str) -> Result<Backoff, ConfigError> {
    let o = Obj::new(v, path, &["initialMs", "multiplier", "maxMs", "jitter"])?;
    let d = Backoff::default();
    let initial_ms = match o.get("initialMs") {
        None => d.initial_ms,
        Some(x) => read_number(x, &child(path, "initialMs"), "a number of milliseconds", (0.0, MAX_MS as f64), "")?
            .ceil() as u64,
    };
    let multiplier = match o.get("multiplier") {
        None => d.multiplier,
        Some(x) => {
            read_number(x, &child(path, "multiplier"), "a number", (1.0, 100.0), "1 keeps every delay the same")?
        }
    };
    let max_ms = o.opt_ms("maxMs", "omit it for the default of 8000")?.unwrap_or(d.max_ms.max(initial_ms));
    if max_ms < initial_ms {
        return Err(ConfigError::new(
            child(path, "maxMs"),
            format!("must be at least initialMs ({initial_ms}) (got {max_ms})"),
        ));
    }
    let jitter = match o.get("jitter") {
        None => d.jitter,
        Some(Value::String(s)) if s == "equal" => Jitter::Equal,
        Some(Value::String(s)) if s == "full" => Jitter::Full,
        Some(Value::String(s)) if s == "none" => Jitter::None,
        Some(x) => {
            return Err(ConfigError::new(
                child(path, "jitter"),
                format!("must be \"equal\", \"full\" or \"none\" (got {})", show(x)),
            ))
        }
    };
    Ok(Backoff { initial_ms, multiplier, max_ms, jitter })
}

fn parse_conditions(v: &Value, path: &str) -> Result<Conditions, ConfigError> {
    let list = v.as_array().ok_or_else(|| {
        ConfigError::new(
            path,
            format!("must be a list such as [\"transport\", \"timeout\", 429, \"5xx\"] (got {})", show_kind(v)),
        )
    })?;
    let mut c = Conditions::default();
    for (i, item) in list.iter().enumerate() {
        let class = item.as_str().and_then(FailureClass::parse);
        match item {
            Value::String(s) if s == "transport" => c.transport = true,
            Value::String(s) if s == "timeout" => c.timeout = true,
            Value::String(s) if s == "protocol" => c.protocol = true,
            Value::String(s) if s == "4xx" => c.any_4xx = true,
            Value::String(s) if s == "5xx" => c.any_5xx = true,
            Value::String(_) if class.is_some() => c.classes.extend(class),
            Value::Number(n) if n.as_u64().is_some_and(|s| (100..=599).contains(&s)) => c.statuses.push(n.as_u64().unwrap() as u16),
            other => {
                return Err(ConfigError::new(
                    format!("{path}[{i}]"),
                    format!("must be \"transport\", \"timeout\", \"protocol\", \"4xx\", \"5xx\", a failure class ({}) or an HTTP status from 100 to 599 (got {})", FailureClass::ALL.map(|c| format!("\"{}\"", c.as_str())).join(", "), show(other)),
                ))
            }
        }
    }
    Ok(c)
}

fn parse_gateway(v: &Value) -> Result<GatewayConfig, ConfigError> {
    let o = Obj::new(v, "gateway", &["apiKeys", "maxBodyBytes", "cors"])?;
    let mut g = GatewayConfig::default();
    if let Some(keys) = o.get("apiKeys") {
        let list = keys.as_array().ok_or_else(|| {
            ConfigError::new("gateway.apiKeys", format!("must be a list of key strings (got {})", show_kind(keys)))
        })?;
        for (i, k) in list.iter().enumerate() {
            match k {
                Value::String(s) if !s.is_empty() => match header_value_problem(s, true) {
                    // A client sends the key in a header: one no header can carry never matches.
                    None => g.api_keys.push(Secret::new(s.clone())),
                    Some(problem) => {
                        return Err(ConfigError::new(
                            format!("gateway.apiKeys[{i}]"),
                            format!("must be usable as an HTTP header value, but it {problem} (the key is not shown)"),
                        ))
                    }
                },
                other => {
                    return Err(ConfigError::new(
                        format!("gateway.apiKeys[{i}]"),
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
                return Err(ConfigError::new(
                    "gateway.cors",
                    format!(
                        "must be true (any origin), false, or a list of exact origins where \"*\" means any origin (got {})",
                        show(other)
                    ),
                ))
            }
        };
    }
    Ok(g)
}

/// A `cors` list: exact origins as browsers send them (`scheme://host[:port]`, compared in
/// lower case), or `"*"` for any origin. Patterns such as `https://*.x.com` are refused, since a
/// list that can never match would silently turn CORS off.
fn read_cors_origins(list: &[Value]) -> Result<Cors, ConfigError> {
    let mut origins = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let path = format!("gateway.cors[{i}]");
        match item {
            Value::String(s) if s == "*" => return Ok(Cors::AnyOrigin),
            Value::String(s) if s.contains('*') => {
                return Err(ConfigError::new(
                    path,
                    format!(
                        "is a pattern ({}); only exact origins such as \"https://app.example\" or \"*\" for any origin are supported",
                        show(item)
                    ),
                ))
            }
            Value::String(s) if is_origin(s) => origins.push(s.to_ascii_lowercase()),
            other => {
                return Err(ConfigError::new(
                    path,
                    format!(
                        "must be an origin (scheme, host and optional port, no path) such as \"https://app.example\", or \"*\" for any origin (got {})",
                        show(other)
                    ),
                ))
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

/// Reads a call's `deadlineMs` option (`options.deadlineMs` in messages): omitted means the
/// config's default; zero, negative or non-numeric values are refused before anything is sent.
pub fn parse_deadline_option(v: Option<&Value>) -> Result<Option<u64>, ConfigError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => read_ms(v, "options.deadlineMs", "omit it to use the config's deadlineMs").map(Some),
    }
}
