//! `WasmHealth`: the breakers and retry budget of the core (src/health.rs) for a store that keeps
//! the shared state itself: the Durable Object behind `llm-baton/durable`, a browser tab that
//! answers for the others. It reads the same `leg` events every Baton emits, and answers with the
//! same views a Baton takes (`WasmBaton.absorb`), in times relative to its own clock. It keeps
//! the retry budget of everyone sharing it from the same reports: a successful attempt is a
//! successful call, and any attempt after a call's first was a retry or a hop.

use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::{config_error, js_value, now, to_js};
use crate::config::{parse_health, FieldError};
use crate::health::{read_report, Health};
use crate::policy::HealthPolicy;
use crate::value::index_path;

#[wasm_bindgen]
pub struct WasmHealth {
    health: Health,
    /// How long a probe this state grants holds its target: the policy's cooldown.
    probe_lease_ms: u64,
}

#[wasm_bindgen]
impl WasmHealth {
    /// `policy` is a config's `health` section (`undefined` for the defaults, `false` for off).
    /// Throws `{kind: "config", path, message}`.
    #[wasm_bindgen(constructor)]
    pub fn new(policy: JsValue) -> Result<WasmHealth, JsValue> {
        let policy = if policy.is_undefined() {
            Value::Null
        } else {
            js_value::read_js(&policy, "health").map_err(config_error)?
        };
        let policy = match policy {
            Value::Null => Some(HealthPolicy::default()),
            Value::Bool(false) => None,
            v => Some(parse_health(&v).map_err(config_error)?),
        };
        // With breakers off nothing is probed; a store still leases by the default cooldown.
        let probe_lease_ms = policy.as_ref().unwrap_or(&HealthPolicy::default()).cooldown_ms;
        Ok(WasmHealth { health: Health::new(policy), probe_lease_ms })
    }

    /// The policy's `cooldownMs` (the default's when breakers are off): how long a probe's lease
    /// lasts for a store that shares this state (pkg/broadcast.js).
    #[wasm_bindgen(js_name = probeLeaseMs)]
    pub fn probe_lease_ms(&self) -> f64 {
        self.probe_lease_ms as f64
    }

    /// Each target's admission for one asker (half-open targets grant their one probe here).
    pub fn admit(&mut self, targets: Vec<String>) -> JsValue {
        to_js(&self.health.view(&targets, now()))
    }

    /// Learns from `leg` events (`{leg, cause?}`, the `type` may stay). Throws
    /// `{kind: "config", path: "reports[i]", message}` for one it cannot read, after learning
    /// from those before it.
    pub fn report(&mut self, reports: JsValue) -> Result<(), JsValue> {
        learn(&mut self.health, &reports)
    }

    /// Every target it has heard of, as `baton.health()` shows them.
    pub fn snapshot(&self) -> JsValue {
        to_js(&self.health.snapshot(&self.health.known_targets(), now()))
    }
}

/// Learns from `leg` events (`{leg, cause?}`, the `type` may stay): each attempt's outcome for
/// its breaker, its time to first token, and the retry budget. Throws `{kind: "config", path:
/// "reports[i]", message}` for one it cannot read, after learning from those before it.
pub(super) fn learn(health: &mut Health, reports: &JsValue) -> Result<(), JsValue> {
    let value = js_value::read_js(reports, "reports").map_err(config_error)?;
    let Value::Array(list) = value else {
        return Err(config_error(FieldError::new("reports", "must be a list of leg events")));
    };
    let at = now();
    for (i, report) in list.iter().enumerate() {
        let report = read_report(report).map_err(|m| config_error(FieldError::new(index_path("reports", i), m)))?;
        health.report(&report.target, &report.outcome, at);
        if let Some(ms) = report.latency_ms {
            health.record_latency(&report.target, ms);
        }
        health.count_in_budget(report.attempt, &report.outcome, at);
    }
    Ok(())
}
