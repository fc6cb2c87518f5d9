//! What can go wrong with one attempt, as typed data.
//!
//! Every failure is classified once, where it is observed (the driver, a decoder, a timer), and
//! carried as a [`Failure`] from then on: the gate reads a status number or a limit name, never
//! a formatted sentence. The same value becomes the caller's error, unchanged.
//!
//! An HTTP failure also keeps the provider's own error code and the [`FailureClass`] the
//! format read from it (src/format/*: `error_body`), because a status alone hides what matters
//! to the gate: a 400 may be a prompt too long for this model (another may take it), a 429 may
//! be a quota that no wait refills.

use std::fmt;

use llm_baton_wire::write::{JsonWriter, ToJson};
use serde_json::Value;

/// Which limit a timeout hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Limit {
    /// The call's one logical budget, across every attempt, wait and byte.
    Deadline,
    /// A member's whole-attempt limit (`totalMs`).
    Total,
    /// A member's wait for response headers (`headersMs`).
    Headers,
    /// A member's wait for the first visible content (`firstTokenMs`).
    FirstToken,
    /// A member's gap between visible deltas (`idleMs`).
    Idle,
}

impl Limit {
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::Deadline => "deadline",
            Limit::Total => "total",
            Limit::Headers => "headers",
            Limit::FirstToken => "first_token",
            Limit::Idle => "idle",
        }
    }
}

/// The error kinds a caller sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Config,
    Timeout,
    Http,
    Transport,
    Cancelled,
    Protocol,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Config => "config",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Http => "http",
            ErrorKind::Transport => "transport",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Protocol => "protocol",
        }
    }
}

/// What kind of provider error an HTTP failure is, read from the provider's error code, type or
/// status (and, where the provider documents only words, its message). Each class has its own
/// default at the gate (src/gate.rs) and its own codes at the gateway (src/gateway/mod.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailureClass {
    /// The prompt does not fit this model's context window.
    ContextLength,
    /// The provider's policy or safety filter rejected the request.
    ContentFilter,
    /// The account's quota or credit is used up.
    Quota,
    /// The provider refused the credentials (401, 403 and their codes).
    Auth,
    /// The provider is overloaded (Anthropic 529 and equivalents).
    Overloaded,
    /// Too many requests for now (429 otherwise).
    RateLimit,
}

impl FailureClass {
    pub const ALL: [FailureClass; 6] = [
        FailureClass::ContextLength,
        FailureClass::ContentFilter,
        FailureClass::Quota,
        FailureClass::Auth,
        FailureClass::Overloaded,
        FailureClass::RateLimit,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::ContextLength => "context_length",
            FailureClass::ContentFilter => "content_filter",
            FailureClass::Quota => "quota",
            FailureClass::Auth => "auth",
            FailureClass::Overloaded => "overloaded",
            FailureClass::RateLimit => "rate_limit",
        }
    }

    pub fn parse(name: &str) -> Option<FailureClass> {
        FailureClass::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// The class a status alone implies, for errors whose provider named nothing more specific.
    pub fn of_status(status: u16) -> Option<FailureClass> {
        match status {
            401 | 403 => Some(FailureClass::Auth),
            429 => Some(FailureClass::RateLimit),
            529 => Some(FailureClass::Overloaded),
            _ => None,
        }
    }
}

/// What a provider's error body or in-stream error object said about itself.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProviderSaid {
    /// The provider's own words (or an excerpt of a body that is not its error shape).
    pub message: String,
    /// The provider's own code: OpenAI's `code` (else `type`), Anthropic's `type`, Google's `status`.
    pub code: Option<String>,
    pub class: Option<FailureClass>,
    /// The content filter's results on a refused request (Azure OpenAI), when the body has them.
    pub content_filter: Option<Value>,
}

/// Why an attempt (and, when nothing is left to try, the call) did not succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// No HTTP status was read: connection refused, reset, DNS, TLS, a dropped body.
    Transport { message: String },
    /// The provider answered with an error status, or reported an error inside a 2xx stream
    /// (`in_stream`, with the status the provider documents for that error type). `code` is the
    /// provider's own error code, `class` what llm-baton reads from it.
    Http {
        status: u16,
        message: String,
        code: Option<String>,
        class: Option<FailureClass>,
        retry_after_ms: Option<u64>,
        should_retry: Option<bool>,
        in_stream: bool,
        /// What the provider's content filter said about a request it refused (Azure OpenAI's
        /// `innererror.content_filter_result`), as it wrote it.
        content_filter: Option<Box<Value>>,
    },
    /// A limit expired; `limit_ms` is the configured value.
    Timeout { limit: Limit, limit_ms: u64 },
    /// The caller aborted the call.
    Cancelled,
    /// The provider's answer could not be understood.
    Protocol { message: String },
}

impl Failure {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Failure::Transport { .. } => ErrorKind::Transport,
            Failure::Http { .. } => ErrorKind::Http,
            Failure::Timeout { .. } => ErrorKind::Timeout,
            Failure::Cancelled => ErrorKind::Cancelled,
            Failure::Protocol { .. } => ErrorKind::Protocol,
        }
    }

    pub fn status(&self) -> Option<u16> {
        match self {
            Failure::Http { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The provider's own error code, for HTTP failures whose provider named one.
    pub fn code(&self) -> Option<&str> {
        match self {
            Failure::Http { code, .. } => code.as_deref(),
            _ => None,
        }
    }

    pub fn class(&self) -> Option<FailureClass> {
        match self {
            Failure::Http { class, .. } => *class,
            _ => None,
        }
    }

    pub fn retry_after_ms(&self) -> Option<u64> {
        match self {
            Failure::Http { retry_after_ms, .. } => *retry_after_ms,
            _ => None,
        }
    }

    pub fn timeout(&self) -> Option<(Limit, u64)> {
        match self {
            Failure::Timeout { limit, limit_ms } => Some((*limit, *limit_ms)),
            _ => None,
        }
    }

    /// The response headers an HTTP error answer is read for ([`Failure::from_http`]): the
    /// server's requested wait, its own word on whether a retry can help, and AWS's error type
    /// (read as the code when the body names none). A driver passes these and no others.
    pub const HEADERS_READ: [&'static str; 4] = ["retry-after-ms", "retry-after", "x-should-retry", "x-amzn-errortype"];

    /// An HTTP error answer, reading [`Failure::HEADERS_READ`] from its headers. `now_epoch_ms` (wall clock) resolves a Retry-After given as an HTTP date.
    /// `said` is the format's reading of the body (`Format::error_body`).
    pub fn from_http(status: u16, headers: &[(String, String)], said: ProviderSaid, now_epoch_ms: u64) -> Failure {
        let header = |name: &str| headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.trim());
        let [wait_ms, wait, should, aws_type] = Self::HEADERS_READ;
        let retry_after_ms = crate::retry_after::retry_after_ms(header(wait_ms), header(wait), now_epoch_ms);
        let should_retry = match header(should) {
            Some("true") => Some(true),
            Some("false") => Some(false),
            _ => None,
        };
        let ProviderSaid { message, code, class, content_filter } = said;
        // AWS names an error's type in a header (`ThrottlingException:http://...`), not its body.
        let code = code.or_else(|| header(aws_type).and_then(|t| t.split(':').next()).map(str::to_string));
        let message = without_status_prefix(status, message);
        let content_filter = content_filter.map(Box::new);
        Failure::Http { status, message, code, class, retry_after_ms, should_retry, in_stream: false, content_filter }
    }
}

const TRANSPORT: &str = "transport error: ";
const PROTOCOL: &str = "protocol error: ";

/// `message` without leading copies of the prefix `Display` writes before it.
fn without_prefix<'a>(mut message: &'a str, prefix: &str) -> &'a str {
    while let Some(rest) = message.strip_prefix(prefix) {
        message = rest;
    }
    message
}

/// The message without leading `HTTP {status}` / `HTTP {status}:` prefixes: `Display` writes the
/// status once, so a body or provider message that starts with it would show it twice.
pub fn without_status_prefix(status: u16, message: String) -> String {
    let rest = status_stripped(status, &message);
    if rest.len() == message.len() {
        message
    } else {
        rest.to_string()
    }
}

fn status_stripped(status: u16, message: &str) -> &str {
    let prefix = format!("HTTP {status}");
    let mut rest = message;
    while let Some(after) = rest.strip_prefix(prefix.as_str()) {
        if !(after.is_empty() || after.starts_with(':') || after.starts_with(' ')) {
            break; // `HTTP 5990…` is another number.
        }
        rest = after.trim_start_matches(':').trim_start();
    }
    rest
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Transport { message } => write!(f, "{TRANSPORT}{}", without_prefix(message, TRANSPORT)),
            Failure::Http { status, message, in_stream, .. } => {
                let place = if *in_stream { " in stream" } else { "" };
                let message = status_stripped(*status, message);
                if message.is_empty() {
                    write!(f, "HTTP {status}{place}")
                } else {
                    write!(f, "HTTP {status}{place}: {message}")
                }
            }
            Failure::Timeout { limit, limit_ms } => match limit {
                Limit::Deadline => write!(f, "response did not finish within {limit_ms} ms, retries included"),
                Limit::Total => write!(f, "attempt did not finish within {limit_ms} ms (totalMs)"),
                Limit::Headers => write!(f, "no response headers within {limit_ms} ms (headersMs)"),
                Limit::FirstToken => write!(f, "no content within {limit_ms} ms of sending (firstTokenMs)"),
                Limit::Idle => {
                    write!(f, "nothing arrived for {limit_ms} ms after the last delta or body bytes (idleMs)")
                }
            },
            Failure::Cancelled => f.write_str("the caller cancelled the call"),
            Failure::Protocol { message } => write!(f, "{PROTOCOL}{}", without_prefix(message, PROTOCOL)),
        }
    }
}

/// A failure as the caller sees it:
/// `{kind, message, status?, code?, class?, timeout?, limitMs?, retryAfterMs?, contentFilter?}`
/// (`code` the provider's own error code, `class` the failure class the gate and the gateway read
/// from it, `contentFilter` the results of the content filter that refused the request).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureInfo(pub Failure);

impl FailureInfo {
    /// Its fields, into an object the caller opened (an error view adds its own after them).
    pub fn write_fields(&self, w: &mut JsonWriter) {
        let f = &self.0;
        w.field("kind", f.kind().as_str());
        w.field("message", &f.to_string());
        w.opt_field("status", f.status().as_ref());
        w.opt_field("code", f.code());
        w.opt_field("class", f.class().map(FailureClass::as_str));
        w.opt_field("retryAfterMs", f.retry_after_ms().as_ref());
        if let Failure::Http { content_filter: Some(results), .. } = f {
            w.key("contentFilter");
            w.begin_object();
            w.field("contentFilterResults", &**results);
            w.end_object();
        }
        if let Some((limit, ms)) = f.timeout() {
            w.field("timeout", limit.as_str());
            w.field("limitMs", &ms);
        }
    }
}

impl ToJson for FailureInfo {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        self.write_fields(w);
        w.end_object();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_shows_once() {
        let cases = [
            ("HTTP 599: HTTP 599: upstream broke", "upstream broke", "HTTP 599: upstream broke"),
            ("HTTP 599", "", "HTTP 599"),
            ("HTTP 599 gateway down", "gateway down", "HTTP 599: gateway down"),
            ("HTTP 5991: odd", "HTTP 5991: odd", "HTTP 599: HTTP 5991: odd"),
            ("HTTP 502: not ours", "HTTP 502: not ours", "HTTP 599: HTTP 502: not ours"),
            ("overloaded", "overloaded", "HTTP 599: overloaded"),
        ];
        for (message, kept, shown) in cases {
            let said = ProviderSaid { message: message.to_string(), ..Default::default() };
            let failure = Failure::from_http(599, &[], said, 0);
            assert_eq!(
                failure,
                Failure::Http {
                    status: 599,
                    message: kept.into(),
                    code: None,
                    class: None,
                    retry_after_ms: None,
                    should_retry: None,
                    in_stream: false,
                    content_filter: None
                }
            );
            assert_eq!(failure.to_string(), shown, "{message}");
        }
        let built = Failure::Http {
            status: 599,
            message: "HTTP 599: HTTP 599: built elsewhere".into(),
            code: None,
            class: None,
            retry_after_ms: None,
            should_retry: None,
            in_stream: false,
            content_filter: None,
        };
        assert_eq!(built.to_string(), "HTTP 599: built elsewhere");
    }
}
