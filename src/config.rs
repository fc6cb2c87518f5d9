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

use crate::format::Format;

/// The largest delay a JavaScript timer honours (2^31 - 1 ms); longer ones fire at once.
pub const MAX_MS: u64 = 2_147_483_647;

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub targets: Vec<Target>,
    /// Route name -> its strategy, references to other routes already inlined.
    pub routes: BTreeMap<String, Strategy>,
    pub deadline_ms: Option<u64>,
    pub gateway: GatewayConfig,
    /// How many round-robin nodes the routes hold (each keeps its own rotation).
    pub round_robin_nodes: usize,
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
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), if crate::format::is_secret_header(k) { "<redacted>" } else { v.as_str() }))
            .collect();
        f.debug_struct("Target")
            .field("name", &self.name)
            .field("format", &self.format)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key)
            .field("headers", &headers)
            .field("timeouts", &self.timeouts)
            .finish()
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

/// A credential. Its `Debug` and `Display` never show the value.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }
    /// The value, for building the request headers and nothing else.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

/// How a route tries its members.
#[derive(Debug, Clone, PartialEq)]
pub enum Strategy {
    /// Index into [`Config::targets`].
    Target(usize),
    Retry(Box<RetryPolicy>),
    Fallback {
        members: Vec<Strategy>,
        fallback_on: Option<Conditions>,
    },
    RoundRobin {
        members: Vec<Strategy>,
        weights: Vec<u32>,
        node: usize,
    },
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
        Backoff { initial_ms: 250, multiplier: 2.0, max_ms: 8000, jitter: Jitter::Full }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Jitter {
    /// A uniformly random delay between 0 and the computed one (AWS "full jitter").
    Full,
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

/// A config mistake: `path` names the field, `message` is the whole sentence (path included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    pub fn new(path: impl Into<String>, what: impl fmt::Display) -> Self {
        let path = path.into();
        let message = if path.is_empty() { what.to_string() } else { format!("{path} {what}") };
        ConfigError { path, message }
    }
}

impl Config {
    /// Parses and validates a config document given as JSON text.
    pub fn from_json(text: &str) -> Result<Config, ConfigError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| ConfigError::new("", format!("config is not valid JSON: {e}")))?;
        Config::from_value(&value)
    }

    /// Parses and validates a config document.
    pub fn from_value(value: &Value) -> Result<Config, ConfigError> {
        let root = Obj::new(value, "", &["targets", "routes", "deadlineMs", "gateway"])?;
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

        let mut raw_routes: BTreeMap<String, &Value> = BTreeMap::new();
        if let Some(v) = root.get("routes") {
            for (name, strategy) in as_object(v, "routes", "an object of named strategies")? {
                raw_routes.insert(name.clone(), strategy);
            }
        }
        let mut builder = RouteBuilder {
            targets: &targets,
            raw: &raw_routes,
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
        Ok(Config { targets, routes, deadline_ms, gateway, round_robin_nodes })
    }

    pub fn target_index(&self, name: &str) -> Option<usize> {
        self.targets.iter().position(|t| t.name == name)
    }

    /// The strategy a call by this name runs: a route, or a bare target used as its own route.
    pub fn strategy(&self, name: &str) -> Option<Strategy> {
        self.routes.get(name).cloned().or_else(|| self.target_index(name).map(Strategy::Target))
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

fn parse_target(name: &str, v: &Value, path: &str) -> Result<Target, ConfigError> {
    let o = Obj::new(v, path, &["format", "baseUrl", "model", "apiKey", "headers", "timeouts"])?;
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
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(ConfigError::new(
            child(path, "baseUrl"),
            format!("must be an http:// or https:// URL (got {})", show(&Value::String(redact_url(base_url)))),
        ));
    }
    if url_has_credentials(base_url) {
        return Err(ConfigError::new(
            child(path, "baseUrl"),
            "must not carry credentials (user:password@ or a key= query); put the key in apiKey",
        ));
    }
    let model = o.required_str("model", "the provider's model name, e.g. \"gpt-4o-mini\"")?;
    let api_key = match o.get("apiKey") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.is_empty() => Some(Secret::new(s.clone())),
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
            match hv {
                Value::String(s) => headers.push((k.to_ascii_lowercase(), s.clone())),
                other => {
                    return Err(ConfigError::new(child(&hp, k), format!("must be a string (got {})", show_kind(other))))
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
    Ok(Target {
        name: name.to_string(),
        format,
        base_url: base_url.to_string(),
        model: model.to_string(),
        api_key,
        headers,
        timeouts,
    })
}

fn url_has_credentials(url: &str) -> bool {
    let after_scheme = url.split_once("://").map(|(_, rest)| rest).unwrap_or(url);
    let authority = after_scheme.split(['/', '?', '#']).next().unwrap_or("");
    let query = url.split_once('?').map(|(_, q)| q.to_ascii_lowercase()).unwrap_or_default();
    authority.contains('@')
        || query.split('&').any(|p| p.starts_with("key=") || p.starts_with("api_key=") || p.starts_with("apikey="))
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
    raw: &'a BTreeMap<String, &'a Value>,
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
        let value = self.raw[name];
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
                    let o = Obj::new(v, path, &["fallback", "fallbackOn"])?;
                    let members = self.members(o.get("fallback").unwrap(), &child(path, "fallback"), "fallback")?;
                    let fallback_on =
                        o.get("fallbackOn").map(|c| parse_conditions(c, &child(path, "fallbackOn"))).transpose()?;
                    Ok(Strategy::Fallback { members, fallback_on })
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
            Some(a) => match a.as_f64() {
                Some(n) if n.fract() == 0.0 && (1.0..=100.0).contains(&n) => n as u32,
                _ => {
                    return Err(ConfigError::new(
                        child(path, "attempts"),
                        format!("must be a whole number from 1 to 100 (got {})", show(a)),
                    ))
                }
            },
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
        .map(|(i, w)| match w.as_f64() {
            Some(n) if n.fract() == 0.0 && (1.0..=1_000_000.0).contains(&n) => Ok(n as u32),
            _ => Err(ConfigError::new(
                format!("{path}[{i}]"),
                format!("must be a whole number from 1 to 1000000 (got {})", show(w)),
            )),
        })
        .collect()
}

fn parse_backoff(v: &Value, path: &str) -> Result<Backoff, ConfigError> {
    let o = Obj::new(v, path, &["initialMs", "multiplier", "maxMs", "jitter"])?;
    let d = Backoff::default();
    let initial_ms = match o.get("initialMs") {
        None => d.initial_ms,
        Some(x) => match x.as_f64() {
            Some(n) if (0.0..=MAX_MS as f64).contains(&n) => n.ceil() as u64,
            _ => {
                return Err(ConfigError::new(
                    child(path, "initialMs"),
                    format!("must be a number of milliseconds from 0 to {MAX_MS} (got {})", show(x)),
                ))
            }
        },
    };
    let multiplier = match o.get("multiplier") {
        None => d.multiplier,
        Some(x) => match x.as_f64() {
            Some(n) if (1.0..=100.0).contains(&n) => n,
            _ => {
                return Err(ConfigError::new(
                    child(path, "multiplier"),
                    format!("must be a number from 1 to 100 (got {}); 1 keeps every delay the same", show(x)),
                ))
            }
        },
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
        Some(Value::String(s)) if s == "full" => Jitter::Full,
        Some(Value::String(s)) if s == "none" => Jitter::None,
        Some(x) => {
            return Err(ConfigError::new(
                child(path, "jitter"),
                format!("must be \"full\" or \"none\" (got {})", show(x)),
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
        match item {
            Value::String(s) if s == "transport" => c.transport = true,
            Value::String(s) if s == "timeout" => c.timeout = true,
            Value::String(s) if s == "protocol" => c.protocol = true,
            Value::String(s) if s == "4xx" => c.any_4xx = true,
            Value::String(s) if s == "5xx" => c.any_5xx = true,
            Value::Number(n) if n.as_u64().is_some_and(|s| (100..=599).contains(&s)) => c.statuses.push(n.as_u64().unwrap() as u16),
            other => {
                return Err(ConfigError::new(
                    format!("{path}[{i}]"),
                    format!("must be \"transport\", \"timeout\", \"protocol\", \"4xx\", \"5xx\" or an HTTP status from 100 to 599 (got {})", show(other)),
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
                Value::String(s) if !s.is_empty() => g.api_keys.push(Secret::new(s.clone())),
                other => {
                    return Err(ConfigError::new(
                        format!("gateway.apiKeys[{i}]"),
                        format!("must be a non-empty string (got {})", show_kind(other)),
                    ))
                }
            }
        }
    }
    if let Some(n) = o.get("maxBodyBytes") {
        g.max_body_bytes = match n.as_f64() {
            Some(x) if x.fract() == 0.0 && (1.0..=1e9).contains(&x) => x as u64,
            _ => {
                return Err(ConfigError::new(
                    "gateway.maxBodyBytes",
                    format!("must be a whole number of bytes from 1 to 1000000000 (got {})", show(n)),
                ))
            }
        };
    }
    if let Some(c) = o.get("cors") {
        g.cors = match c {
            Value::Bool(false) => Cors::Off,
            Value::Bool(true) => Cors::AnyOrigin,
            Value::Array(list) => Cors::Origins(
                list.iter()
                    .enumerate()
                    .map(|(i, x)| {
                        x.as_str().map(str::to_string).ok_or_else(|| {
                            ConfigError::new(
                                format!("gateway.cors[{i}]"),
                                format!("must be an origin string such as \"https://app.example\" (got {})", show(x)),
                            )
                        })
                    })
                    .collect::<Result<_, _>>()?,
            ),
            other => {
                return Err(ConfigError::new(
                    "gateway.cors",
                    format!("must be true, false or a list of origins (got {})", show(other)),
                ))
            }
        };
    }
    Ok(g)
}

/// A JSON object being read, which refuses keys it does not know.
pub(crate) struct Obj<'a> {
    path: String,
    map: &'a Map<String, Value>,
}

impl<'a> Obj<'a> {
    pub(crate) fn new(v: &'a Value, path: &str, known: &[&str]) -> Result<Obj<'a>, ConfigError> {
        let what = if path.is_empty() { "the config" } else { "an object" };
        let map = match v {
            Value::Object(map) => map,
            other => {
                let name = if path.is_empty() { "config" } else { path };
                return Err(ConfigError::new(name, format!("must be {what} (got {})", show_kind(other))));
            }
        };
        for key in map.keys() {
            if !known.contains(&key.as_str()) {
                let hint = match closest(key, known) {
                    Some(k) => format!("did you mean \"{k}\"?"),
                    None => format!("known fields: {}", known.join(", ")),
                };
                return Err(ConfigError::new(child(path, key), format!("is not a known field; {hint}")));
            }
        }
        Ok(Obj { path: path.to_string(), map })
    }

    pub(crate) fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }

    pub(crate) fn required_str(&self, key: &str, expected: &str) -> Result<&'a str, ConfigError> {
        match self.get(key) {
            Some(Value::String(s)) if !s.is_empty() => Ok(s),
            None => Err(ConfigError::new(child(&self.path, key), format!("is missing; give {expected}"))),
            Some(other) => {
                Err(ConfigError::new(child(&self.path, key), format!("must be {expected} (got {})", show(other))))
            }
        }
    }

    /// An optional positive millisecond count.
    fn opt_ms(&self, key: &str, omit_hint: &str) -> Result<Option<u64>, ConfigError> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => parse_ms(v).map(Some).ok_or_else(|| {
                ConfigError::new(
                    child(&self.path, key),
                    format!("must be a positive number of milliseconds (got {}); {omit_hint}", show(v)),
                )
            }),
        }
    }
}

/// A positive number of milliseconds no longer than a timer can wait, rounded up to whole ms.
pub fn parse_ms(v: &Value) -> Option<u64> {
    match v.as_f64() {
        Some(n) if n > 0.0 && n <= MAX_MS as f64 => Some(n.ceil() as u64),
        _ => None,
    }
}

pub(crate) fn child(path: &str, key: &str) -> String {
    let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match (path.is_empty(), plain) {
        (true, true) => key.to_string(),
        (true, false) => format!("[{}]", Value::String(key.into())),
        (false, true) => format!("{path}.{key}"),
        (false, false) => format!("{path}[{}]", Value::String(key.into())),
    }
}

/// A value as the user wrote it, shortened.
pub(crate) fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}...", s.chars().take(37).collect::<String>())
    } else {
        s
    }
}

pub(crate) fn show_kind(v: &Value) -> String {
    match v {
        Value::Object(_) => "an object".into(),
        Value::Array(_) => "a list".into(),
        other => show(other),
    }
}

fn as_object<'a>(v: &'a Value, path: &str, expected: &str) -> Result<&'a Map<String, Value>, ConfigError> {
    v.as_object().ok_or_else(|| ConfigError::new(path, format!("must be {expected} (got {})", show_kind(v))))
}

/// The known name within two edits of `key`, for "did you mean".
fn closest<'k>(key: &str, known: &[&'k str]) -> Option<&'k str> {
    known
        .iter()
        .copied()
        .map(|k| (edit_distance(&key.to_ascii_lowercase(), &k.to_ascii_lowercase()), k))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Reads a call's `deadlineMs` option (`options.deadlineMs` in messages): omitted means the
/// config's default; zero, negative or non-numeric values are refused before anything is sent.
pub fn parse_deadline_option(v: Option<&Value>) -> Result<Option<u64>, ConfigError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => parse_ms(v).map(Some).ok_or_else(|| {
            ConfigError::new(
                "options.deadlineMs",
                format!(
                    "must be a positive number of milliseconds (got {}); omit it to use the config's deadlineMs",
                    show(v)
                ),
            )
        }),
    }
}
