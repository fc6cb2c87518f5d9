//! The route builder: each route of the `routes` section resolved into its strategy tree, with
//! route references inlined and cycles refused, and bounded (steps and depth), since routes that
//! name each other grow exponentially and reading them recurses on a small JS stack. It reads
//! the retry, fallback, round-robin and fastest settings too (backoff, `retryOn`, `afterStart`,
//! `hedge`).

use serde_json::{Map, Value};

use super::Target;
use crate::by_name::ByName;
use crate::outcome::FailureClass;
use crate::policy::{
    AfterStart, Backoff, Conditions, Hedge, Jitter, ResumeMode, RetryPolicy, Strategy, MAX_LATENCY_SAMPLES,
};
use crate::value::{child, index_path, read_number, read_whole, show, wrong, wrong_value, FieldError, Obj, MAX_MS};

/// The most attempts one retry node may make.
const MAX_ATTEMPTS: u64 = 100;
/// The largest round-robin weight.
const MAX_WEIGHT: u64 = 1_000_000;
/// The most breaks one call may resume.
const MAX_RESUMES: u64 = 10;
/// The default least time left for a resume to start: a fresh request rarely shows its first
/// token sooner.
const DEFAULT_MIN_REMAINING_MS: u64 = 1000;
/// The most hedges one call may start.
const MAX_HEDGES: u64 = 10;
/// The least a learned hedge threshold may be, by default: below it a hedge races answers that
/// were about to come anyway.
const DEFAULT_HEDGE_FLOOR_MS: u64 = 100;
/// Times to first token a target must have shown before a learned threshold applies, by default.
const DEFAULT_HEDGE_MIN_SAMPLES: u64 = 20;

/// The most targets and strategies the routes may hold once every route a route names is
/// written out in it. Routes are inlined, so routes naming each other twice over grow
/// exponentially; real configs hold a few dozen.
const MAX_ROUTE_STEPS: usize = 10_000;

/// The most strategies nested inside each other, each route name counting as one more level.
/// Reading them recurses, and a JavaScript host's stack is small.
const MAX_ROUTE_DEPTH: usize = 32;

/// Resolves the routes of a `routes` section (`raw`) one by one ([`RouteBuilder::route`]) into
/// `done`, route references inlined, counting the round-robin nodes they hold.
pub(super) struct RouteBuilder<'a> {
    targets: &'a [Target],
    raw: &'a Map<String, Value>,
    pub(super) round_robin_nodes: usize,
    pub(super) fastest_nodes: usize,
    /// Routes being resolved, outermost first: a name met again here is a cycle.
    resolving: Vec<String>,
    pub(super) done: ByName<Strategy>,
    /// Targets and strategies built or copied so far, against [`MAX_ROUTE_STEPS`].
    steps: usize,
    /// Levels open now (strategies and route names), against [`MAX_ROUTE_DEPTH`].
    depth: usize,
    /// The deepest level reached while building the current route.
    deepest: usize,
    /// The levels each built route spans, so naming it again counts the same as building it.
    /// A list: routes are few, and a second map type would be more code in the wasm.
    levels: Vec<(String, usize)>,
}

impl<'a> RouteBuilder<'a> {
    pub(super) fn new(targets: &'a [Target], raw: &'a Map<String, Value>) -> Self {
        RouteBuilder {
            targets,
            raw,
            round_robin_nodes: 0,
            fastest_nodes: 0,
            resolving: Vec::new(),
            done: ByName::default(),
            steps: 0,
            depth: 0,
            deepest: 0,
            levels: Vec::new(),
        }
    }

    pub(super) fn route(&mut self, name: &str, path: &str) -> Result<Strategy, FieldError> {
        if let Some(s) = self.done.get(name) {
            let (steps, s) = (steps_in(s), s.clone());
            self.take_steps(steps, path)?;
            let levels = self.levels.iter().find(|(built, _)| built == name).map_or(0, |&(_, levels)| levels);
            self.enter_levels(levels, path)?;
            return Ok(s);
        }
        if let Some(at) = self.resolving.iter().position(|r| r == name) {
            let mut cycle: Vec<&str> = self.resolving[at..].iter().map(String::as_str).collect();
            cycle.push(name);
            return Err(FieldError::new(
                path,
                format!("is part of a route cycle ({}); a route may not contain itself", cycle.join(" -> ")),
            ));
        }
        self.resolving.push(name.to_string());
        let value = &self.raw[name];
        let outer_deepest = std::mem::replace(&mut self.deepest, self.depth);
        let strategy = self.strategy(value, &child("routes", name))?;
        self.levels.push((name.to_string(), self.deepest - self.depth));
        self.deepest = self.deepest.max(outer_deepest);
        self.resolving.pop();
        self.done.insert(name, strategy.clone());
        Ok(strategy)
    }

    fn take_steps(&mut self, steps: usize, path: &str) -> Result<(), FieldError> {
        self.steps += steps;
        if self.steps > MAX_ROUTE_STEPS {
            return Err(FieldError::new(
                path,
                format!(
                    "makes the routes hold more than {MAX_ROUTE_STEPS} targets and strategies once the routes they name are written out; name routes inside each other less often"
                ),
            ));
        }
        Ok(())
    }

    /// Checks that `levels` more below the current one stay within [`MAX_ROUTE_DEPTH`].
    fn enter_levels(&mut self, levels: usize, path: &str) -> Result<(), FieldError> {
        let level = self.depth + levels;
        if level > MAX_ROUTE_DEPTH {
            return Err(FieldError::new(
                path,
                format!("nests strategies more than {MAX_ROUTE_DEPTH} deep, each route it names counting as a level; a route needs only a few levels"),
            ));
        }
        self.deepest = self.deepest.max(level);
        Ok(())
    }

    fn strategy(&mut self, v: &Value, path: &str) -> Result<Strategy, FieldError> {
        self.enter_levels(1, path)?;
        self.take_steps(1, path)?;
        self.depth += 1;
        let strategy = self.strategy_node(v, path);
        self.depth -= 1;
        strategy
    }

    fn strategy_node(&mut self, v: &Value, path: &str) -> Result<Strategy, FieldError> {
        match v {
            Value::String(name) => {
                if let Some(i) = self.targets.iter().position(|t| &t.name == name) {
                    Ok(Strategy::Target(i))
                } else if self.raw.contains_key(name) {
                    self.route(name, path)
                } else {
                    let mut known: Vec<&str> = self.targets.iter().map(|t| t.name.as_str()).collect();
                    known.extend(self.raw.keys().map(String::as_str));
                    Err(FieldError::new(
                        path,
                        format!("names an unknown target or route {} (known: {})", show(v), known.join(", ")),
                    ))
                }
            }
            Value::Object(map) => {
                if map.contains_key("retry") {
                    self.retry(v, path)
                } else if map.contains_key("fallback") {
                    let o = Obj::new(v, path, &["fallback", "fallbackOn", "afterStart", "hedge"])?;
                    let members = self.members(o.get("fallback").unwrap(), &child(path, "fallback"), "fallback")?;
                    let fallback_on = o
                        .get("fallbackOn")
                        .map(|c| parse_conditions(c, &child(path, "fallbackOn")).map(Box::new))
                        .transpose()?;
                    let after_start = o
                        .get("afterStart")
                        .map(|a| parse_after_start(a, &child(path, "afterStart")).map(Box::new))
                        .transpose()?;
                    let hedge =
                        o.get("hedge").map(|h| parse_hedge(h, &child(path, "hedge")).map(Box::new)).transpose()?;
                    Ok(Strategy::Fallback { members, fallback_on, after_start, hedge })
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
                } else if map.contains_key("fastest") {
                    let o = Obj::new(v, path, &["fastest"])?;
                    let members = self.members(o.get("fastest").unwrap(), &child(path, "fastest"), "fastest")?;
                    let node = self.fastest_nodes;
                    self.fastest_nodes += 1;
                    Ok(Strategy::Fastest { members, node })
                } else {
                    Err(FieldError::new(
                        path,
                        "must be a target name or an object with one of \"retry\", \"fallback\", \"roundRobin\", \"fastest\"",
                    ))
                }
            }
            other => Err(wrong(path, "a target name or a strategy object", other)),
        }
    }

    fn retry(&mut self, v: &Value, path: &str) -> Result<Strategy, FieldError> {
        let o = Obj::new(v, path, &["retry", "attempts", "backoff", "retryOn", "maxRetryAfterMs"])?;
        let inner = self.strategy(o.get("retry").unwrap(), &child(path, "retry"))?;
        let attempts = match o.get("attempts") {
            None => {
                return Err(FieldError::new(
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
        let max_retry_after_ms = o.opt_ms_or("maxRetryAfterMs", 60_000)?;
        Ok(Strategy::Retry(Box::new(RetryPolicy { inner, attempts, backoff, retry_on, max_retry_after_ms })))
    }

    fn members(&mut self, v: &Value, path: &str, key: &str) -> Result<Vec<Strategy>, FieldError> {
        let list = match v {
            Value::Array(list) => list,
            other => return Err(wrong(path, "a list of strategies", other)),
        };
        if list.is_empty() {
            return Err(FieldError::new(
                path,
                format!("must list at least one member (got []); a {key} of nothing can never answer"),
            ));
        }
        list.iter().enumerate().map(|(i, m)| self.strategy(m, &index_path(path, i))).collect()
    }
}

/// How many targets and strategies `s` holds.
fn steps_in(s: &Strategy) -> usize {
    match s {
        Strategy::Target(_) => 1,
        Strategy::Retry(p) => 1 + steps_in(&p.inner),
        Strategy::Fallback { members, .. }
        | Strategy::RoundRobin { members, .. }
        | Strategy::Fastest { members, .. } => 1 + members.iter().map(steps_in).sum::<usize>(),
    }
}

fn parse_after_start(v: &Value, path: &str) -> Result<AfterStart, FieldError> {
    let o = Obj::new(v, path, &["mode", "attempts", "minRemainingMs"])?;
    const MODES: &str = r#""continue" (the next member with prefill: true continues the text) or "restart" (the reader discards it and the next member answers afresh)"#;
    let mode = match o.required_str("mode", MODES)? {
        "continue" => ResumeMode::Continue,
        "restart" => ResumeMode::Restart,
        other => return Err(wrong_value(&child(path, "mode"), MODES, &Value::from(other))),
    };
    let attempts = match o.get("attempts") {
        None | Some(Value::Null) => 1,
        Some(a) => read_whole(a, &child(path, "attempts"), "a whole number of resumes", 1, MAX_RESUMES)? as u32,
    };
    let min_remaining_ms = o.opt_ms_or("minRemainingMs", DEFAULT_MIN_REMAINING_MS)?;
    Ok(AfterStart { mode, attempts, min_remaining_ms })
}

fn parse_hedge(v: &Value, path: &str) -> Result<Hedge, FieldError> {
    let o = Obj::new(v, path, &["afterMs", "afterPercentile", "floorMs", "minSamples", "max"])?;
    let after_ms = o.opt_ms("afterMs", "or give afterPercentile")?;
    let after_percentile = match o.get("afterPercentile") {
        None | Some(Value::Null) => None,
        Some(p) => Some(read_number(
            p,
            &child(path, "afterPercentile"),
            "a percentile",
            (1.0, 99.9),
            "95 hedges the slowest 5%",
        )?),
    };
    if after_ms.is_none() && after_percentile.is_none() {
        return Err(FieldError::new(
            path,
            "needs afterMs (a fixed threshold, e.g. 2000), afterPercentile (learned from the target's recent times to first token, e.g. 95), or both (afterMs until enough is learned)",
        ));
    }
    let floor_ms = o.opt_ms_or("floorMs", DEFAULT_HEDGE_FLOOR_MS)?;
    let min_samples = match o.get("minSamples") {
        None | Some(Value::Null) => DEFAULT_HEDGE_MIN_SAMPLES,
        Some(n) => {
            read_whole(n, &child(path, "minSamples"), "a whole number of samples", 1, MAX_LATENCY_SAMPLES as u64)?
        }
    } as u32;
    let max = match o.get("max") {
        None | Some(Value::Null) => 1,
        Some(n) => read_whole(n, &child(path, "max"), "a whole number of hedges per call", 1, MAX_HEDGES)?,
    } as u32;
    Ok(Hedge { after_ms, after_percentile, floor_ms, min_samples, max })
}

fn parse_weights(v: &Value, path: &str, members: usize) -> Result<Vec<u32>, FieldError> {
    let list = v.as_array().ok_or_else(|| wrong(path, "a list of positive whole numbers, one per member", v))?;
    if list.len() != members {
        return Err(FieldError::new(
            path,
            format!("must have one weight per member: {members} members, {} weights", list.len()),
        ));
    }
    list.iter()
        .enumerate()
        .map(|(i, w)| read_whole(w, &index_path(path, i), "a whole number", 1, MAX_WEIGHT).map(|n| n as u32))
        .collect()
}

fn parse_backoff(v: &Value, path: &str) -> Result<Backoff, FieldError> {
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
        return Err(FieldError::new(
            child(path, "maxMs"),
            format!("must be at least initialMs ({initial_ms}) (got {max_ms})"),
        ));
    }
    let jitter = match o.get("jitter") {
        None => d.jitter,
        Some(Value::String(s)) if s == "equal" => Jitter::Equal,
        Some(Value::String(s)) if s == "full" => Jitter::Full,
        Some(Value::String(s)) if s == "none" => Jitter::None,
        Some(x) => return Err(wrong_value(&child(path, "jitter"), "\"equal\", \"full\" or \"none\"", x)),
    };
    Ok(Backoff { initial_ms, multiplier, max_ms, jitter })
}

fn parse_conditions(v: &Value, path: &str) -> Result<Conditions, FieldError> {
    let list =
        v.as_array().ok_or_else(|| wrong(path, "a list such as [\"transport\", \"timeout\", 429, \"5xx\"]", v))?;
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
                return Err(FieldError::new(
                    index_path(path, i),
                    format!("must be \"transport\", \"timeout\", \"protocol\", \"4xx\", \"5xx\", a failure class ({}) or an HTTP status from 100 to 599 (got {})", FailureClass::ALL.map(|c| format!("\"{}\"", c.as_str())).join(", "), show(other)),
                ))
            }
        }
    }
    Ok(c)
}
