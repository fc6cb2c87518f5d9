//! OpenAI Responses, both directions: the provider side ([`provider`]) builds its requests and
//! reads its answers and streams; the client side ([`client`]) reads a gateway client's request
//! and writes its answer and stream.
//!
//! Here, between the two, is the dialect's vocabulary: each word both sides use is mapped once,
//! the reading and the writing side by side, and a test reads back what is written. Its errors
//! are OpenAI's, shared with [`crate::format::openai_chat`].

pub mod client;
pub mod provider;

pub use provider::{OpenaiResponses, StreamDecoder};

use crate::chat::FinishReason;

/// The finish reasons that leave a response `incomplete`, with their
/// `incomplete_details.reason`; every other finish completes it.
const INCOMPLETE_REASONS: [(FinishReason, &str); 2] =
    [(FinishReason::Length, "max_output_tokens"), (FinishReason::ContentFilter, "content_filter")];

/// The finish reason from a response's `status` and `incomplete_details.reason`.
pub(crate) fn finish_reason(status: Option<&str>, incomplete: Option<&str>, called_tools: bool) -> FinishReason {
    match (status, incomplete) {
        (None | Some("completed"), _) if called_tools => FinishReason::ToolCalls,
        (None | Some("completed"), _) => FinishReason::Stop,
        (Some("incomplete"), Some(reason)) => INCOMPLETE_REASONS
            .into_iter()
            .find(|(_, r)| *r == reason)
            .map_or_else(|| FinishReason::Other(reason.to_string()), |(finish, _)| finish),
        (Some(status), _) => FinishReason::Other(status.to_string()),
    }
}

/// `status` and the `incomplete_details.reason` a client is told for how the answer finished.
pub(crate) fn ending(finish: &FinishReason) -> (&'static str, Option<&'static str>) {
    match INCOMPLETE_REASONS.iter().find(|(f, _)| f == finish) {
        Some((_, reason)) => ("incomplete", Some(reason)),
        None => ("completed", None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endings_round_trip() {
        let cases = [
            (FinishReason::Stop, ("completed", None)),
            (FinishReason::Length, ("incomplete", Some("max_output_tokens"))),
            (FinishReason::ToolCalls, ("completed", None)),
            (FinishReason::ContentFilter, ("incomplete", Some("content_filter"))),
        ];
        for (finish, wire) in cases {
            assert_eq!(ending(&finish), wire);
            let called_tools = finish == FinishReason::ToolCalls;
            assert_eq!(finish_reason(Some(wire.0), wire.1, called_tools), finish, "{wire:?}");
        }
        // Another dialect's reason has no word here: the response completed.
        assert_eq!(ending(&FinishReason::Other("pause_turn".into())), ("completed", None));
        assert_eq!(finish_reason(Some("incomplete"), Some("odd"), false), FinishReason::Other("odd".into()));
        assert_eq!(finish_reason(Some("cancelled"), None, false), FinishReason::Other("cancelled".into()));
    }
}
