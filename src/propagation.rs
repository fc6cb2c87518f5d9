//! Whether an attempt tells its target how much of the call's deadline is left, in
//! `x-baton-deadline-ms`, so a stacked llm-baton gateway never outlives its caller.
//!
//! A target's `propagateDeadline` decides: always, never, or "auto" (the default): once the
//! target has answered as an llm-baton gateway, which every gateway reply says with
//! `x-baton-attempts`. Other servers ignore the header, but a browser's CORS preflight must allow
//! it, so "auto" sends it only where it is known to be read. What was learned is kept per target
//! for the life of the Baton (or gateway) and shared by its calls: the driver holds one of these
//! beside the engine, reports each attempt's response headers, and asks before each send.

use std::cell::Cell;

use crate::config::{Config, PropagateDeadline};

/// The request header that carries a call's deadline (the gateway reads it from its clients).
pub const DEADLINE_HEADER: &str = "x-baton-deadline-ms";

/// The response header every llm-baton gateway reply carries, by which "auto" learns a target
/// is one.
pub const GATEWAY_MARK_HEADER: &str = "x-baton-attempts";

/// Which targets have answered as llm-baton gateways.
#[derive(Debug)]
pub struct DeadlinePropagation {
    answered_as_gateway: Vec<Cell<bool>>,
}

impl DeadlinePropagation {
    /// Nothing learned yet about `config`'s targets.
    pub fn new(config: &Config) -> DeadlinePropagation {
        DeadlinePropagation { answered_as_gateway: config.targets.iter().map(|_| Cell::new(false)).collect() }
    }

    /// What an attempt on `target` sends in [`DEADLINE_HEADER`], given what is left of the
    /// call's budget (the engine's `Action::Send::remaining_ms`; `None`, no deadline, sends none).
    pub fn sent_ms(&self, config: &Config, target: usize, remaining_ms: Option<u64>) -> Option<u64> {
        let sends = match config.targets[target].propagate_deadline {
            PropagateDeadline::Always => true,
            PropagateDeadline::Never => false,
            PropagateDeadline::Auto => self.answered_as_gateway[target].get(),
        };
        remaining_ms.filter(|_| sends)
    }

    /// An attempt on `target` got its response headers (any status); `marked`: they held
    /// [`GATEWAY_MARK_HEADER`]. Once marked, a target stays known as a gateway.
    pub fn learn(&self, target: usize, marked: bool) {
        if marked {
            self.answered_as_gateway[target].set(true);
        }
    }
}
