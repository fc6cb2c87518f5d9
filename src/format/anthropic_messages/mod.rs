//! Anthropic Messages, both directions: the provider side ([`provider`]) builds its requests and
//! reads its answers and streams; the client side ([`client`]) reads a gateway client's request
//! and writes its answer and stream.
//!
//! Here, between the two, is the dialect's vocabulary: each word both sides use is mapped once,
//! the reading and the writing side by side, and a test reads back what is written.

pub mod client;
pub mod provider;

pub(crate) use provider::{reasoning_warning, uncarried, unsendable_reasoning};
#[cfg(feature = "clouds")]
pub(crate) use provider::{write_body, BodyHead};
pub use provider::{AnthropicMessages, StreamDecoder};

use crate::chat::FinishReason;
use crate::format::{finish_word, FinishWords};
use crate::outcome::FailureClass;

/// Normalizes `stop_reason`; a tool call without one stopped to call it.
pub(crate) fn finish_reason(raw: Option<&str>, called_tools: bool) -> FinishReason {
    match raw {
        Some("tool_use") => FinishReason::ToolCalls,
        None | Some("") if called_tools => FinishReason::ToolCalls,
        None | Some("" | "end_turn" | "stop_sequence") => FinishReason::Stop,
        Some("max_tokens" | "model_context_window_exceeded") => FinishReason::Length,
        Some("refusal") => FinishReason::ContentFilter,
        Some(other) => FinishReason::Other(other.to_string()),
    }
}

/// Anthropic's `stop_reason` words.
const STOP_WORDS: FinishWords = ["end_turn", "max_tokens", "tool_use", "refusal"];

/// The `stop_reason` an Anthropic client is told; another dialect's own reason passes as it is.
pub(crate) fn stop_reason(finish: &FinishReason) -> &str {
    finish_word(finish, &STOP_WORDS)
}

// Anthropic's error body is `{"type": "error", "error": {"type", "message"}}`, and its "Errors"
// reference lists the types with their statuses ([`ERROR_TYPES`]). A prompt over the context
// window is an invalid_request_error whose message says "prompt is too long: N tokens > M
// maximum", and an account out of credit one that says "Your credit balance is too low": only
// the words tell them apart. Anthropic documents no error for its policy refusals: a refusal is
// an answer with stop_reason "refusal".

/// Anthropic's error types and the status each has. The provider side reads a type's status
/// from here (an error inside a 2xx stream), and the gateway names a status by its type for
/// its clients of both SDKs ([`type_for_status`]).
const ERROR_TYPES: [(&str, u16); 10] = [
    ("invalid_request_error", 400),
    ("authentication_error", 401),
    ("billing_error", 402),
    ("permission_error", 403),
    ("not_found_error", 404),
    ("request_too_large", 413),
    ("rate_limit_error", 429),
    ("api_error", 500),
    ("timeout_error", 504),
    ("overloaded_error", 529),
];

/// The status Anthropic documents for an error type.
pub(crate) fn status_of_type(kind: &str) -> Option<u16> {
    ERROR_TYPES.iter().find(|(k, _)| *k == kind).map(|(_, status)| *status)
}

/// The types that name a cause the gateway states its own way: a spent quota is a 429 whose
/// class says `billing_error` ([`error_type`]), and a deadline the gateway's own 504
/// `upstream_timeout`; a bare 402 or 504 passed on from upstream names no cause.
const CAUSES: [&str; 2] = ["billing_error", "timeout_error"];

/// The error type the gateway names a status by: Anthropic's for it (but [`CAUSES`]), else
/// `api_error` for a 5xx and `invalid_request_error` for the rest.
pub(crate) fn type_for_status(status: u16) -> &'static str {
    match ERROR_TYPES.iter().find(|(kind, s)| *s == status && !CAUSES.contains(kind)) {
        Some((kind, _)) => kind,
        None if (500..=599).contains(&status) => "api_error",
        None => "invalid_request_error",
    }
}

/// The error type an Anthropic client is told: a spent quota is a `billing_error` (the status
/// stays the 429 both SDKs know), anything else `kind`, the type for its status.
pub(crate) fn error_type(class: Option<FailureClass>, kind: &'static str) -> &'static str {
    match class {
        Some(FailureClass::Quota) => "billing_error",
        _ => kind,
    }
}

/// The class of an Anthropic error, from its type and, where only words tell, its message.
pub(crate) fn error_class(status: u16, kind: Option<&str>, message: &str) -> Option<FailureClass> {
    let words = message.to_ascii_lowercase();
    match kind {
        Some("invalid_request_error") if words.contains("prompt is too long") => Some(FailureClass::ContextLength),
        Some("invalid_request_error") if words.contains("credit balance is too low") => Some(FailureClass::Quota),
        Some("billing_error") => Some(FailureClass::Quota),
        Some("authentication_error" | "permission_error") => Some(FailureClass::Auth),
        Some("rate_limit_error") => Some(FailureClass::RateLimit),
        Some("overloaded_error") => Some(FailureClass::Overloaded),
        // Vertex's own errors before Claude answered (Google's status names, as Gemini's).
        Some("RESOURCE_EXHAUSTED") => Some(FailureClass::RateLimit),
        Some("UNAUTHENTICATED" | "PERMISSION_DENIED") => Some(FailureClass::Auth),
        _ => FailureClass::of_status(status),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::check_finish_words;

    #[test]
    fn stop_reasons_round_trip() {
        check_finish_words(STOP_WORDS, stop_reason, finish_reason);
    }

    #[test]
    fn error_types_and_statuses_read_back() {
        for (kind, status) in ERROR_TYPES {
            assert_eq!(status_of_type(kind), Some(status));
            if !CAUSES.contains(&kind) {
                assert_eq!(type_for_status(status), kind);
            }
        }
        assert_eq!((type_for_status(402), type_for_status(504)), ("invalid_request_error", "api_error"));
        assert_eq!(
            (type_for_status(503), type_for_status(415), status_of_type("odd")),
            ("api_error", "invalid_request_error", None)
        );
        // What the gateway writes for each class reads back as that class, with its status.
        use FailureClass::*;
        for (class, status) in [(Quota, 429), (RateLimit, 429), (Overloaded, 529), (Auth, 401)] {
            let kind = error_type(Some(class), type_for_status(status));
            assert_eq!(error_class(status, Some(kind), ""), Some(class), "{class:?}");
        }
        // Anthropic has no type of its own for these: only the provider's words carry them.
        for (class, words) in [(ContextLength, "prompt is too long: 9 tokens > 8 maximum"), (ContentFilter, "")] {
            let kind = error_type(Some(class), type_for_status(400));
            assert_eq!(kind, "invalid_request_error");
            let read = error_class(400, Some(kind), words);
            assert_eq!(read, (class == ContextLength).then_some(ContextLength), "{class:?}");
        }
    }
}
