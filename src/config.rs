//! The config document: targets, routes (nested strategies) and the default deadline.
//!
//! One JSON document serves `new Baton(config)`, the gateway and the tests. It is read by hand
//! from a `serde_json::Value` rather than derived, because a user's mistake deserves a message
//! that names the field by path, says what was wrong and what would be right, e.g.
//! `targets.p.timeouts.totalMs must be a positive number of milliseconds (got 0); omit it for no
//! limit`. Route references are resolved and inlined here, so the engine walks a finished tree.
//!
//! Its parts: target parsing with URL and header safety (src/config/target.rs), the route
//! builder (src/config/routes.rs), and the health and gateway sections (src/config/sections.rs);
//! the policy types they fill in are in src/policy.rs.

use serde_json::{Map, Value};

use crate::by_name::ByName;
use crate::chat::ChatRequest;
use crate::format::Format;
use crate::policy::{HealthPolicy, Strategy};
use crate::secret::is_secret_header;
use crate::value::{as_object, child, parse_json, read_ms, show, Obj};
pub use crate::value::{parse_ms, FieldError, Step, MAX_MS};

#[cfg(feature = "clouds")]
mod azure_target;
#[cfg(feature = "clouds")]
mod cloud_target;
mod routes;
mod sections;
mod target;

pub use crate::secret::Secret;
use routes::RouteBuilder;
use sections::parse_gateway;
pub use sections::{parse_health, Cors, GatewayConfig};
use target::parse_target;
pub use target::{redact_url, PropagateDeadline, Target, Timeouts};

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub targets: Vec<Target>,
    /// Route name -> its strategy, references to other routes already inlined.
    pub routes: ByName<Strategy>,
    pub deadline_ms: Option<u64>,
    pub gateway: GatewayConfig,
    /// How many round-robin nodes the routes hold (each keeps its own rotation).
    pub round_robin_nodes: usize,
    /// How many fastest nodes the routes hold (each call ranks each one's members).
    pub fastest_nodes: usize,
    /// Breakers and the retry budget; `None` when the config says `"health": false`.
    pub health: Option<HealthPolicy>,
}

impl Config {
    /// Parses and validates a config document given as JSON text.
    pub fn from_json(text: &str) -> Result<Config, FieldError> {
        Config::from_value(&parse_json(text, "config")?)
    }

    /// Parses and validates a config document.
    pub fn from_value(value: &Value) -> Result<Config, FieldError> {
        let root = Obj::new(value, "", &["targets", "routes", "deadlineMs", "gateway", "health"])?;
        let targets_value = root.get("targets").ok_or_else(|| {
            FieldError::new("targets", "is missing; give at least one target, e.g. {\"p\": {\"format\": \"openai_chat\", \"baseUrl\": \"https://api.openai.com/v1\", \"model\": \"gpt-4o-mini\"}}")
        })?;
        let targets_map = as_object(targets_value, "targets", "an object of named targets")?;
        if targets_map.is_empty() {
            return Err(FieldError::new("targets", "must name at least one target (got {})"));
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
        let mut builder = RouteBuilder::new(&targets, raw_routes);
        for name in raw_routes.keys() {
            builder.route(name, &child("routes", name))?;
        }
        let (round_robin_nodes, fastest_nodes) = (builder.round_robin_nodes, builder.fastest_nodes);
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
        Ok(Config { targets, routes, deadline_ms, gateway, round_robin_nodes, fastest_nodes, health })
    }

    /// Every secret the config holds, for the [`Redactor`](crate::secret::Redactor): each
    /// target's apiKey and credential header values (by [`is_secret_header`]), and the gateway's
    /// own client keys, which a client may see echoed.
    pub fn secrets(&self) -> Vec<&str> {
        let mut secrets: Vec<&str> = Vec::new();
        for target in &self.targets {
            secrets.extend(target.api_key.as_ref().map(Secret::expose));
            #[cfg(feature = "clouds")]
            secrets.extend(target.reach.secrets());
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
                Strategy::Fallback { members, .. }
                | Strategy::RoundRobin { members, .. }
                | Strategy::Fastest { members, .. } => members.iter().for_each(|m| mark(m, reached)),
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
    pub fn check_request(&self, route: &str, request: &ChatRequest) -> Result<(), FieldError> {
        let targets = self.route_targets(route);
        for target in targets.iter().map(|&t| &self.targets[t]) {
            if let Some((path, what)) = target.format.unsendable_reasoning(request) {
                let name = show(&Value::from(target.name.as_str()));
                return Err(FieldError::new(path, format!("{what} (for target {name}, {})", target.format.as_str())));
            }
        }
        if request.messages.iter().all(|m| m.is_text_only()) {
            return Ok(());
        }
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
                    return Err(FieldError::new(
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
        let mut names: Vec<String> = self.routes.names().cloned().collect();
        for t in &self.targets {
            if !self.routes.contains(&t.name) {
                names.push(t.name.clone());
            }
        }
        names
    }
}

/// The error for a config that was not given (`undefined` or `null`): `entry` is the call that
/// needed it, `new Baton` or `createGateway`.
pub fn missing(entry: &str) -> FieldError {
    FieldError::new(
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
/// configs use it. The secrets: each target's apiKey, header values, AWS keys and Vertex
/// credentials, the gateway's apiKeys and each entry. There `undefined` is nearly always an
/// environment variable that is not set
/// (`apiKey: process.env.KEY`); read as absent, it would send no key and end as the provider's
/// 401, or leave the gateway open. JSON has no `undefined`: only the JS reader asks.
pub fn undefined_secret(at: &[Step], path: &str) -> Option<FieldError> {
    use Step::{Field, Item};
    let remedy = match at {
        [Field("targets"), Field(_), Field("apiKey")] => "leave the field out",
        [Field("targets"), Field(_), Field("headers"), Field(_)] => "leave the header out",
        [Field("targets"), Field(_), Field("aws"), Field("sessionToken")] => "leave the field out",
        [Field("targets"), Field(_), Field("accessToken" | "serviceAccount")] => {
            "give the access token or the service account's key"
        }
        [Field("targets"), Field(_), Field("aws"), Field("accessKeyId" | "secretAccessKey")] => {
            "give a Bedrock API key as apiKey instead of aws"
        }
        [Field("gateway"), Field("apiKeys")] => "leave the field out for a gateway that any client may call",
        [Field("gateway"), Field("apiKeys"), Item] => "remove the entry",
        _ => return None,
    };
    Some(FieldError::new(path, format!("is undefined: an environment variable that is not set? Set it, or {remedy}")))
}

/// "a" or "an" before a format's name.
fn article(format: &str) -> &'static str {
    if format.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// Reads a call's `deadlineMs` option (`options.deadlineMs` in messages): omitted means the
/// config's default; zero, negative or non-numeric values are refused before anything is sent.
pub fn parse_deadline_option(v: Option<&Value>) -> Result<Option<u64>, FieldError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => read_ms(v, "options.deadlineMs", "omit it to use the config's deadlineMs").map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secret::{Redactor, REDACTED};

    #[cfg(not(feature = "clouds"))]
    #[test]
    fn a_build_without_the_clouds_refuses_a_cloud_target_naming_the_entry_that_has_them() {
        let cases = [
            (r#"{"format": "bedrock_converse", "region": "us-east-1", "model": "m"}"#, "targets.t.format"),
            (
                r#"{"format": "openai_chat", "cloud": "azure", "baseUrl": "https://r.openai.azure.com", "model": "m"}"#,
                "targets.t.cloud",
            ),
            (
                r#"{"format": "anthropic_messages", "baseUrl": "https://x.test", "model": "m", "region": "us-east-1"}"#,
                "targets.t.region",
            ),
            (
                r#"{"format": "gemini", "baseUrl": "https://x.test", "model": "g", "accessToken": "ya29.secret-token"}"#,
                "targets.t.accessToken",
            ),
        ];
        for (target, path) in cases {
            let e = Config::from_json(&format!(r#"{{"targets": {{"t": {target}}}}}"#)).unwrap_err();
            assert_eq!(e.path, path, "{e}");
            assert!(e.message.contains(r#"import from "llm-baton/clouds""#), "{e}");
            assert!(!e.to_string().contains("ya29.secret-token"), "{e}");
        }
    }

    #[test]
    fn a_config_s_secrets_are_all_redacted_and_debug_shows_none() {
        let config = Config::from_json(
            r#"{"targets": {
                  "a": {"format": "openai_chat", "baseUrl": "https://a.example", "model": "m",
                        "apiKey": "key-of-target-a", "headers": {"x-goog-api-key": "header-secret-1", "x-trace": "visible-trace"}},
                  "b": {"format": "anthropic_messages", "baseUrl": "https://b.example", "model": "m"}},
                "gateway": {"apiKeys": ["gateway-client-key"]}}"#,
        )
        .unwrap();
        let r = Redactor::new(config.secrets());
        let text = "key-of-target-a header-secret-1 gateway-client-key visible-trace";
        assert_eq!(r.redact(text), format!("{REDACTED} {REDACTED} {REDACTED} visible-trace"));
        let debug = format!("{r:?}");
        assert_eq!(debug, "Redactor { secrets: 3 }");
    }
}
