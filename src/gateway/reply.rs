//! A complete HTTP response as the gateway decides it, which JavaScript only turns into a
//! `Response`: `{ status, headers, body }`.

use std::collections::BTreeMap;

use llm_baton_wire::write::{JsonWriter, ToJson};

use super::{ClientFormat, GatewayError};
use crate::propagation::GATEWAY_MARK_HEADER;

/// The content type of a streamed answer.
pub const SSE: &str = "text/event-stream; charset=utf-8";

/// A response: its status, its headers by name, and its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    pub headers: BTreeMap<&'static str, String>,
    pub body: String,
}

impl Reply {
    /// A response whose `target` (the target that served, or was tried last; empty when none
    /// was tried) took `attempts`.
    pub fn new(status: u16, content_type: &str, target: &str, attempts: usize, body: String) -> Reply {
        let mut headers = BTreeMap::new();
        headers.insert("content-type", content_type.to_string());
        headers.insert("x-baton-target", target.to_string());
        headers.insert(GATEWAY_MARK_HEADER, attempts.to_string());
        if content_type.starts_with("text/event-stream") {
            headers.insert("cache-control", "no-cache".into());
        }
        Reply { status, headers, body }
    }

    /// A status with no headers and no body (a CORS preflight's 204).
    pub fn bare(status: u16) -> Reply {
        Reply { status, headers: BTreeMap::new(), body: String::new() }
    }

    pub fn json(status: u16, target: &str, attempts: usize, body: String) -> Reply {
        Reply::new(status, "application/json", target, attempts, body)
    }

    /// `e` in the client's error shape, with the provider's Retry-After and, for a failure no
    /// retry can help, `x-should-retry: false`.
    pub fn error(format: ClientFormat, e: &GatewayError, target: &str, attempts: usize) -> Reply {
        let mut reply = Reply::json(e.status, target, attempts, e.body(format));
        if let Some(ms) = e.retry_after_ms {
            reply.headers.insert("retry-after", ms.div_ceil(1000).to_string());
        }
        if let Some(said) = e.should_retry() {
            reply.headers.insert("x-should-retry", said.to_string());
        }
        reply
    }
}

impl ToJson for Reply {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        w.field("status", &self.status);
        w.key("headers");
        write_headers(w, &self.headers);
        // A null-body status (204) must have no body at all, not an empty one, for `Response`.
        w.key("body");
        if self.status == 204 {
            w.null();
        } else {
            w.string(&self.body);
        }
        w.end_object();
    }
}

/// Headers as an object, in name order.
pub fn write_headers(w: &mut JsonWriter, headers: &BTreeMap<&'static str, String>) {
    w.begin_object();
    for (name, value) in headers {
        w.field(name, value);
    }
    w.end_object();
}
