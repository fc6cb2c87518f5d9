//! OpenAI Chat Completions, both directions: the provider side ([`provider`]) builds its
//! requests and reads its answers and streams; the client side ([`client`]) reads a gateway
//! client's request and writes its answer and stream.
//!
//! Here, between the two, is the dialect's vocabulary: each word both sides use is mapped once,
//! the reading and the writing side by side, and a test reads back what is written.

pub mod client;
pub mod provider;

pub(crate) use provider::uncarried;
pub use provider::{OpenaiChat, StreamDecoder};

use crate::chat::FinishReason;
use crate::format::{finish_word, FinishWords};
use crate::outcome::FailureClass;

/// Normalizes `finish_reason`. Some compatible servers say "stop" (or nothing) after tool calls.
pub(crate) fn finish_reason(raw: Option<&str>, called_tools: bool) -> FinishReason {
    match raw {
        None | Some("" | "stop") if called_tools => FinishReason::ToolCalls,
        None | Some("" | "stop") => FinishReason::Stop,
        Some("length") => FinishReason::Length,
        Some("tool_calls" | "function_call") => FinishReason::ToolCalls,
        Some("content_filter") => FinishReason::ContentFilter,
        Some(other) => FinishReason::Other(other.to_string()),
    }
}

/// OpenAI's `finish_reason` words.
const FINISH_WORDS: FinishWords = ["stop", "length", "tool_calls", "content_filter"];

/// The `finish_reason` an OpenAI client is told; another dialect's own reason passes as it is.
pub(crate) fn wire_finish_reason(finish: &FinishReason) -> &str {
    finish_word(finish, &FINISH_WORDS)
}

/// OpenAI's names for the failure classes, as its error `code`s and `type`s use them (the
/// "Error codes" guide; see `provider`'s errors). The first name of each class is the `code` the
/// gateway writes for it; the others are read too. A spent quota is also a `type` of its own,
/// `insufficient_quota` (billing, not a rate), which [`error_type`] writes.
const CLASS_NAMES: [(FailureClass, &[&str]); 6] = [
    (FailureClass::ContextLength, &["context_length_exceeded"]),
    (FailureClass::ContentFilter, &["content_filter", "content_policy_violation"]),
    (FailureClass::Quota, &["insufficient_quota"]),
    (FailureClass::RateLimit, &["rate_limit_exceeded", "rate_limit_error", "requests", "tokens"]),
    (FailureClass::Overloaded, &["overloaded"]),
    (FailureClass::Auth, &["invalid_api_key", "invalid_authentication", "authentication_error", "permission_error"]),
];

/// The class an OpenAI error `code` or `type` names, if any.
pub(crate) fn class_named(name: &str) -> Option<FailureClass> {
    CLASS_NAMES.iter().find(|(_, names)| names.contains(&name)).map(|(class, _)| *class)
}

/// The `code` an OpenAI client is told for a failure of `class`.
pub(crate) fn class_code(class: FailureClass) -> &'static str {
    CLASS_NAMES.iter().find(|(c, _)| *c == class).map_or("", |(_, names)| names[0])
}

/// The error `type` an OpenAI client is told: a spent quota's own, else `kind`, the type both
/// SDKs know for the status.
pub(crate) fn error_type(class: Option<FailureClass>, kind: &'static str) -> &'static str {
    match class {
        Some(FailureClass::Quota) => class_code(FailureClass::Quota),
        _ => kind,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::check_finish_words;

    #[test]
    fn finish_reasons_round_trip() {
        check_finish_words(FINISH_WORDS, wire_finish_reason, finish_reason);
    }

    #[test]
    fn every_class_code_and_type_reads_back_as_its_class() {
        for (class, _) in CLASS_NAMES {
            assert_eq!(class_named(class_code(class)), Some(class), "{class:?}");
        }
        // A spent quota's type reads back as a spent quota; another class keeps the status's type.
        let quota = error_type(Some(FailureClass::Quota), "rate_limit_error");
        assert_eq!((quota, class_named(quota)), ("insufficient_quota", Some(FailureClass::Quota)));
        assert_eq!(error_type(Some(FailureClass::RateLimit), "rate_limit_error"), "rate_limit_error");
        assert_eq!(error_type(None, "api_error"), "api_error");
    }
}
