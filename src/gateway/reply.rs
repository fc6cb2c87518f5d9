//! A complete HTTP response as the gateway decides it, which JavaScript only turns into a
//! `Response`: `{ status, headers, body }`.

use llm_baton_wire::write::{JsonWriter, ToJson};

use super::{ClientFormat, GatewayError};
use crate::propagation::GATEWAY_MARK_HEADER;

/// The content type of a streamed answer.
pub const SSE: &str = "text/event-stream; charset=utf-8";

/// What the call left out that the client should know (a field it sent that the serving
/// member's format cannot carry...): the call's `warning` events before the reply's head.
pub const WARNING_HEADER: &str = "x-baton-warning";

/// The most bytes of warnings the header holds; a call that warns more says so at the end.
const WARNING_BYTES: usize = 2048;

/// A response: its status, its headers by name, and its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    pub headers: Headers,
    pub body: String,
}

/// A reply's headers, each name once. A list: a reply has a handful, and a map type of its own
/// would be more code in the wasm.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Headers(Vec<(&'static str, String)>);

impl Headers {
    /// Sets `name` to `value`, replacing what it held.
    pub fn insert(&mut self, name: &'static str, value: String) {
        match self.0.iter_mut().find(|(held, _)| *held == name) {
            Some((_, held)) => *held = value,
            None => self.0.push((name, value)),
        }
    }

    pub fn get(&self, name: &str) -> Option<&String> {
        self.0.iter().find(|(held, _)| *held == name).map(|(_, value)| value)
    }
}

#[cfg(test)]
impl std::ops::Index<&str> for Headers {
    type Output = String;

    fn index(&self, name: &str) -> &String {
        self.get(name).unwrap_or_else(|| panic!("no {name} header"))
    }
}

/// Headers as an object, in the order they were set.
impl ToJson for Headers {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        for (name, value) in &self.0 {
            w.field(name, value);
        }
        w.end_object();
    }
}

impl Reply {
    /// A response whose `target` (the target that served, or was tried last; empty when none
    /// was tried) took `attempts`.
    pub fn new(status: u16, content_type: &str, target: &str, attempts: usize, body: String) -> Reply {
        let mut headers = Headers::default();
        headers.insert("content-type", content_type.to_string());
        headers.insert("x-baton-target", target.to_string());
        headers.insert(GATEWAY_MARK_HEADER, attempts.to_string());
        if content_type.starts_with("text/event-stream") {
            headers.insert("cache-control", "no-cache".into());
        }
        Reply { status, headers, body }
    }

    /// This reply with `warnings` in [`WARNING_HEADER`], joined by `"; "`, each once, in
    /// printable ASCII (any other byte is `?`: a header holds no other text), cut after
    /// [`WARNING_BYTES`]; none, no header.
    pub fn warned(mut self, warnings: &[String]) -> Reply {
        let mut value = String::new();
        for (i, warning) in warnings.iter().enumerate() {
            if warnings[..i].contains(warning) {
                continue;
            }
            if !value.is_empty() {
                value.push_str("; ");
            }
            value.extend(warning.bytes().map(|b| if (b' '..=b'~').contains(&b) { b as char } else { '?' }));
            if value.len() > WARNING_BYTES {
                // ASCII by now, so any byte is a character's end.
                value.truncate(WARNING_BYTES);
                value.push_str("... (the rest in the call's warning events)");
                break;
            }
        }
        if !value.is_empty() {
            self.headers.insert(WARNING_HEADER, value);
        }
        self
    }

    /// A status with no headers and no body (a CORS preflight's 204).
    pub fn bare(status: u16) -> Reply {
        Reply { status, headers: Headers::default(), body: String::new() }
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
        w.field("headers", &self.headers);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_are_said_once_in_printable_ascii_and_bounded() {
        let reply = |warnings: &[String]| Reply::json(200, "t", 1, String::new()).warned(warnings);
        assert_eq!(reply(&[]).headers.get(WARNING_HEADER), None);
        let dropped = "dropped logprobs for target \"claude\": it speaks anthropic_messages".to_string();
        let odd = "target \"caf\u{e9}\nx\" said".to_string();
        let said = reply(&[dropped.clone(), odd, dropped.clone()]);
        assert_eq!(said.headers[WARNING_HEADER], format!("{dropped}; target \"caf???x\" said"));
        let cut = "... (the rest in the call's warning events)";
        let many: Vec<String> = (0..100).map(|i| format!("{i}: {}", "w".repeat(40))).collect();
        let one = vec![format!("dropped {}", "f, ".repeat(1000))];
        for warnings in [many, one] {
            let value = reply(&warnings).headers[WARNING_HEADER].clone();
            assert_eq!((value.len(), value.ends_with(cut)), (WARNING_BYTES + cut.len(), true), "{value}");
        }
    }
}
