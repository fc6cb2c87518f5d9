//! Amazon Bedrock's Converse API: one request shape for every model Bedrock serves. Provider side
//! only: no gateway client speaks it.
//!
//! Its words: stop reasons (`end_turn`, `tool_use`, `max_tokens`, `stop_sequence`,
//! `guardrail_intervened`, `content_filtered`: the Converse API reference, `ConverseOutput`),
//! and the exceptions that steer the gate, as an HTTP error or inside a stream (the Bedrock
//! Runtime API reference, "Errors" of Converse and ConverseStream).

mod provider;

pub use provider::{event_of, BedrockConverse, StreamDecoder};
pub(crate) use provider::{exception_error, uncarried, SIGNING_SERVICE};

use crate::chat::FinishReason;
use crate::outcome::FailureClass;

/// A `stopReason` as a finish reason; after tool calls, ToolCalls whatever it says.
fn finish_reason(raw: Option<&str>, called_tools: bool) -> FinishReason {
    match raw {
        _ if called_tools => FinishReason::ToolCalls,
        None | Some("end_turn" | "stop_sequence") => FinishReason::Stop,
        Some("max_tokens" | "model_context_window_exceeded") => FinishReason::Length,
        Some("tool_use") => FinishReason::ToolCalls,
        Some("guardrail_intervened" | "content_filtered") => FinishReason::ContentFilter,
        Some(other) => FinishReason::Other(other.to_string()),
    }
}

/// An exception's HTTP status (as Bedrock documents each) and class. Names are matched without
/// regard to the first letter's case: a stream writes `throttlingException`, a header
/// `ThrottlingException`. Throttling and a model that is not ready yet are both 429s worth waiting
/// for; an unavailable service is an overload (fail over, as for Anthropic's 529).
pub(crate) fn exception(name: &str) -> (u16, Option<FailureClass>) {
    let lower = name.to_ascii_lowercase();
    match lower.as_str() {
        "throttlingexception" => (429, Some(FailureClass::RateLimit)),
        "modelnotreadyexception" => (429, Some(FailureClass::RateLimit)),
        "serviceunavailableexception" => (503, Some(FailureClass::Overloaded)),
        "modeltimeoutexception" => (408, None),
        "servicequotaexceededexception" => (400, Some(FailureClass::Quota)),
        "accessdeniedexception" | "unrecognizedclientexception" | "invalidsignatureexception" => {
            (403, Some(FailureClass::Auth))
        }
        "validationexception" => (400, None),
        "resourcenotfoundexception" => (404, None),
        "modelerrorexception" | "modelstreamerrorexception" => (424, None),
        _ => (500, None),
    }
}

/// A validation message that says the prompt does not fit the model (Bedrock names it only in words).
fn is_context_length(message: &str) -> bool {
    let words = message.to_ascii_lowercase();
    ["too long", "too many input tokens", "context length", "context window"].iter().any(|w| words.contains(w))
}

/// A 403 whose words say the signature's time is more than 5 minutes from AWS's: the local clock
/// is wrong, not the key.
fn is_clock_skew(message: &str) -> bool {
    message.contains("Signature expired") || message.contains("Signature not yet current")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_reasons_read() {
        let cases = [
            ("end_turn", FinishReason::Stop),
            ("stop_sequence", FinishReason::Stop),
            ("max_tokens", FinishReason::Length),
            ("tool_use", FinishReason::ToolCalls),
            ("guardrail_intervened", FinishReason::ContentFilter),
            ("content_filtered", FinishReason::ContentFilter),
            ("something_new", FinishReason::Other("something_new".into())),
        ];
        for (word, finish) in cases {
            assert_eq!(finish_reason(Some(word), false), finish, "{word}");
        }
        assert_eq!(finish_reason(Some("end_turn"), true), FinishReason::ToolCalls);
    }

    #[test]
    fn exceptions_steer_the_gate() {
        assert_eq!(exception("ThrottlingException"), (429, Some(FailureClass::RateLimit)));
        assert_eq!(exception("throttlingException"), (429, Some(FailureClass::RateLimit)));
        assert_eq!(exception("ModelNotReadyException"), (429, Some(FailureClass::RateLimit)));
        assert_eq!(exception("serviceUnavailableException"), (503, Some(FailureClass::Overloaded)));
        assert_eq!(exception("ModelTimeoutException"), (408, None));
        assert_eq!(exception("internalServerException"), (500, None));
        assert!(is_context_length("Input is too long for requested model."));
        assert!(is_clock_skew("Signature expired: 20250101T000000Z is now earlier than 20250101T000600Z"));
    }
}
