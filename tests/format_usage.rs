//! Token counts, as every format reports them.
//!
//! Odd counts never fail an answer: in every format, whole and streamed, a count that is
//! fractional, negative, beyond what JavaScript holds exactly, out of `f64`'s range or not a
//! number is reported as unknown, and the text is delivered as if the count were fine.
//!
//! Counts a stream reports before its end come out as `Delta::Usage`, the decoder's cumulative
//! snapshot, each time a frame changes it: a stream cut before its end has still said what it
//! was billed.

use llm_baton::chat::{Delta, FinishReason, Usage};
use llm_baton::format::{DecodeError, Format};
use llm_baton::sse::SseEvent;
use llm_baton_wire::write::ToJson;

/// Output-token values a provider might send, none of them a count.
const ODD: [&str; 9] =
    ["1.5", "-3", "-0.5", "1e400", "-1e400", "99999999999999999999", "9007199254740993", "\"12\"", "true"];

fn ev(event: &str, data: &str) -> SseEvent {
    SseEvent { event: event.into(), data: data.into(), id: None }
}

/// A whole answer "Hi" reporting 7 input tokens and `odd` output tokens.
fn whole(format: Format, odd: &str) -> String {
    match format {
        Format::OpenaiChat => format!(
            r#"{{"choices":[{{"index":0,"message":{{"role":"assistant","content":"Hi"}},"finish_reason":"stop"}}],"usage":{{"prompt_tokens":7,"completion_tokens":{odd},"total_tokens":{odd}}}}}"#
        ),
        Format::AnthropicMessages => format!(
            r#"{{"type":"message","role":"assistant","content":[{{"type":"text","text":"Hi"}}],"stop_reason":"end_turn","usage":{{"input_tokens":7,"output_tokens":{odd}}}}}"#
        ),
        Format::OpenaiResponses => format!(
            r#"{{"status":"completed","output":[{{"type":"message","content":[{{"type":"output_text","text":"Hi"}}]}}],"usage":{{"input_tokens":7,"output_tokens":{odd}}}}}"#
        ),
        Format::Gemini => format!(
            r#"{{"candidates":[{{"content":{{"parts":[{{"text":"Hi"}}],"role":"model"}},"finishReason":"STOP"}}],"usageMetadata":{{"promptTokenCount":7,"candidatesTokenCount":{odd}}}}}"#
        ),
        Format::BedrockConverse => format!(
            r#"{{"output":{{"message":{{"role":"assistant","content":[{{"text":"Hi"}}]}}}},"stopReason":"end_turn","usage":{{"inputTokens":7,"outputTokens":{odd}}}}}"#
        ),
    }
}

/// The same answer streamed; Anthropic's start frame reports a good output count first, which
/// the odd one must overwrite with "unknown".
fn stream(format: Format, odd: &str) -> Vec<SseEvent> {
    match format {
        Format::OpenaiChat => vec![
            ev("", r#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}],"usage":null}"#),
            ev("", &format!(r#"{{"choices":[],"usage":{{"prompt_tokens":7,"completion_tokens":{odd}}}}}"#)),
            ev("", "[DONE]"),
        ],
        Format::AnthropicMessages => vec![
            ev("message_start", r#"{"type":"message_start","message":{"usage":{"input_tokens":7,"output_tokens":1}}}"#),
            ev(
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            ),
            ev(
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
            ),
            ev(
                "message_delta",
                &format!(
                    r#"{{"type":"message_delta","delta":{{"stop_reason":"end_turn"}},"usage":{{"output_tokens":{odd}}}}}"#
                ),
            ),
            ev("message_stop", r#"{"type":"message_stop"}"#),
        ],
        Format::OpenaiResponses => vec![
            ev("response.output_text.delta", r#"{"type":"response.output_text.delta","delta":"Hi"}"#),
            ev(
                "response.completed",
                &format!(
                    r#"{{"type":"response.completed","response":{{"status":"completed","output":[],"usage":{{"input_tokens":7,"output_tokens":{odd}}}}}}}"#
                ),
            ),
        ],
        Format::Gemini => vec![ev("", &whole(Format::Gemini, odd))],
        Format::BedrockConverse => vec![
            ev("contentBlockDelta", r#"{"contentBlockIndex":0,"delta":{"text":"Hi"}}"#),
            ev("messageStop", r#"{"stopReason":"end_turn"}"#),
            ev("metadata", &format!(r#"{{"usage":{{"inputTokens":7,"outputTokens":{odd}}}}}"#)),
        ],
    }
}

const UNKNOWN_OUTPUT: Usage = Usage { input_tokens: Some(7), output_tokens: None };

#[test]
fn odd_counts_in_whole_answers_are_unknown() {
    for format in Format::ALL {
        for odd in ODD {
            let answer = format.decode_answer(whole(format, odd).as_bytes());
            let answer = answer.unwrap_or_else(|e| panic!("{format:?} {odd}: {e:?}"));
            assert_eq!((answer.text.as_str(), answer.usage), ("Hi", UNKNOWN_OUTPUT), "{format:?} {odd}");
        }
        let good = format.decode_answer(whole(format, "5").as_bytes()).expect("a good count");
        assert_eq!(good.usage, Usage { input_tokens: Some(7), output_tokens: Some(5) }, "{format:?}");
    }
}

/// Feeds `events` as the body reader does: stop at the first error, else `finish` at the end.
fn decode(format: Format, events: &[SseEvent]) -> (Vec<Delta>, Result<(), DecodeError>) {
    let mut decoder = format.stream_decoder();
    let mut out = Vec::new();
    for event in events {
        if let Err(e) = decoder.on_event(event, &mut out) {
            return (out, Err(e));
        }
    }
    let end = decoder.finish(&mut out);
    (out, end)
}

fn usage(input_tokens: Option<u64>, output_tokens: Option<u64>) -> Delta {
    Delta::Usage { usage: Usage { input_tokens, output_tokens } }
}

fn text(t: &str) -> Delta {
    Delta::Text { text: t.into() }
}

#[test]
fn odd_counts_in_streams_are_unknown() {
    let hi = || text("Hi");
    let done = Delta::Done { finish_reason: FinishReason::Stop, usage: UNKNOWN_OUTPUT, model: None };
    let unknown_output = usage(Some(7), None);
    for format in Format::ALL {
        let expected = match format {
            Format::OpenaiChat | Format::Gemini | Format::BedrockConverse => {
                vec![hi(), unknown_output.clone(), done.clone()]
            }
            Format::AnthropicMessages => vec![usage(Some(7), Some(1)), hi(), unknown_output.clone(), done.clone()],
            // Responses reports usage only at completion, in the `Done`.
            Format::OpenaiResponses => vec![hi(), done.clone()],
        };
        for odd in ODD {
            let (out, end) = decode(format, &stream(format, odd));
            assert_eq!(end, Ok(()), "{format:?} {odd}");
            assert_eq!(out, expected, "{format:?} {odd}");
        }
    }
}

/// Per format, a stream that reports its counts as it goes and is cut before it says how it
/// finished: the deltas before the cut, and how the decoder ends it.
fn cut_after_usage(format: Format) -> (Vec<SseEvent>, Vec<Delta>, Result<(), DecodeError>) {
    let cut_short = |message: &str| Err(DecodeError::Protocol(message.into()));
    match format {
        // vLLM's continuous_usage_stats: a usage object on every chunk.
        Format::OpenaiChat => (
            vec![
                ev(
                    "",
                    r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}],"usage":{"prompt_tokens":7,"completion_tokens":0,"total_tokens":7}}"#,
                ),
                ev(
                    "",
                    r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}],"usage":{"prompt_tokens":7,"completion_tokens":1,"total_tokens":8}}"#,
                ),
                ev(
                    "",
                    r#"{"choices":[{"index":0,"delta":{"content":"lo"}}],"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}}"#,
                ),
            ],
            vec![usage(Some(7), Some(0)), text("Hel"), usage(Some(7), Some(1)), text("lo"), usage(Some(7), Some(2))],
            cut_short("openai_chat stream ended without a finish_reason or data: [DONE]"),
        ),
        Format::AnthropicMessages => (
            vec![
                ev(
                    "message_start",
                    r#"{"type":"message_start","message":{"model":"claude","usage":{"input_tokens":7,"cache_read_input_tokens":3,"output_tokens":1}}}"#,
                ),
                ev(
                    "content_block_start",
                    r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
                ),
                ev(
                    "content_block_delta",
                    r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}"#,
                ),
            ],
            vec![usage(Some(10), Some(1)), text("Hello")],
            cut_short("anthropic_messages stream ended without a stop_reason or message_stop"),
        ),
        // Only a failed response reports usage before a `Done`.
        Format::OpenaiResponses => (
            vec![
                ev(
                    "response.created",
                    r#"{"type":"response.created","response":{"status":"in_progress","output":[],"usage":null}}"#,
                ),
                ev(
                    "response.output_text.delta",
                    r#"{"type":"response.output_text.delta","output_index":0,"delta":"Hello"}"#,
                ),
                ev(
                    "response.failed",
                    r#"{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"The model failed to generate a response."},"usage":{"input_tokens":7,"output_tokens":2}}}"#,
                ),
            ],
            vec![text("Hello"), usage(Some(7), Some(2))],
            Err(DecodeError::Provider {
                status: 500,
                message: "The model failed to generate a response.".into(),
                code: Some("server_error".into()),
                class: None,
            }),
        ),
        Format::Gemini => (
            vec![
                ev(
                    "",
                    r#"{"candidates":[{"content":{"parts":[{"text":"Hel"}],"role":"model"}}],"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":1}}"#,
                ),
                ev(
                    "",
                    r#"{"candidates":[{"content":{"parts":[{"text":"lo"}],"role":"model"}}],"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":2,"thoughtsTokenCount":4}}"#,
                ),
            ],
            vec![text("Hel"), usage(Some(7), Some(1)), text("lo"), usage(Some(7), Some(6))],
            cut_short("gemini stream ended without a finishReason"),
        ),
        // Bedrock reports usage last, after messageStop; a proxy's reordering still counts.
        Format::BedrockConverse => (
            vec![
                ev("contentBlockDelta", r#"{"contentBlockIndex":0,"delta":{"text":"Hello"}}"#),
                ev("metadata", r#"{"usage":{"inputTokens":7,"outputTokens":2}}"#),
            ],
            vec![text("Hello"), usage(Some(7), Some(2))],
            cut_short("bedrock_converse stream ended without a messageStop"),
        ),
    }
}

#[test]
fn a_stream_cut_after_a_usage_report_has_reported_it() {
    for format in Format::ALL {
        let (events, expected, expected_end) = cut_after_usage(format);
        let (out, end) = decode(format, &events);
        assert_eq!((out, end), (expected, expected_end), "{format:?}");
    }
}

#[test]
fn usage_reports_are_cumulative_snapshots() {
    let start = |u: &str| ev("message_start", &format!(r#"{{"type":"message_start","message":{{"usage":{u}}}}}"#));
    let delta = |u: &str| {
        ev("message_delta", &format!(r#"{{"type":"message_delta","delta":{{"stop_reason":null}},"usage":{u}}}"#))
    };
    let chat = |u: &str| ev("", &format!(r#"{{"choices":[{{"index":0,"delta":{{}}}}],"usage":{u}}}"#));
    let gemini = |u: &str| ev("", &format!(r#"{{"candidates":[],"usageMetadata":{u}}}"#));
    let cases = [
        // Anthropic: the start's input stays when a message_delta reports only output, and
        // a later report of a count replaces it.
        (
            Format::AnthropicMessages,
            vec![
                start(r#"{"input_tokens":7,"output_tokens":1}"#),
                delta(r#"{"output_tokens":5}"#),
                delta(r#"{"input_tokens":7,"cache_creation_input_tokens":2,"output_tokens":9}"#),
            ],
            vec![usage(Some(7), Some(1)), usage(Some(7), Some(5)), usage(Some(9), Some(9))],
        ),
        // An output count alone, before any input was reported.
        (Format::AnthropicMessages, vec![delta(r#"{"output_tokens":3}"#)], vec![usage(None, Some(3))]),
        // OpenAI and Gemini report both counts in every usage object.
        (
            Format::OpenaiChat,
            vec![chat(r#"{"prompt_tokens":7}"#), chat(r#"{"prompt_tokens":7,"completion_tokens":4}"#)],
            vec![usage(Some(7), None), usage(Some(7), Some(4))],
        ),
        (
            Format::Gemini,
            vec![gemini(r#"{"promptTokenCount":7}"#), gemini(r#"{"promptTokenCount":7,"candidatesTokenCount":4}"#)],
            vec![usage(Some(7), Some(0)), usage(Some(7), Some(4))],
        ),
    ];
    for (format, events, expected) in cases {
        let (out, _) = decode(format, &events);
        assert_eq!(out, expected, "{format:?}");
    }
}

#[test]
fn an_unchanged_usage_is_not_reported_again() {
    let chat = |content: &str, completion: u64| {
        ev(
            "",
            &format!(
                r#"{{"choices":[{{"index":0,"delta":{{"content":"{content}"}}}}],"usage":{{"prompt_tokens":7,"completion_tokens":{completion}}}}}"#
            ),
        )
    };
    let gemini = |text: &str| {
        ev(
            "",
            &format!(
                r#"{{"candidates":[{{"content":{{"parts":[{{"text":"{text}"}}]}}}}],"usageMetadata":{{"promptTokenCount":7}}}}"#
            ),
        )
    };
    let cases = [
        (
            Format::OpenaiChat,
            vec![chat("a", 1), chat("", 1), chat("b", 1), ev("", r#"{"choices":[],"usage":null}"#)],
            vec![text("a"), usage(Some(7), Some(1)), text("b")],
        ),
        (Format::Gemini, vec![gemini("a"), gemini("b")], vec![text("a"), usage(Some(7), Some(0)), text("b")]),
        (
            Format::AnthropicMessages,
            vec![
                ev(
                    "message_start",
                    r#"{"type":"message_start","message":{"usage":{"input_tokens":7,"output_tokens":1}}}"#,
                ),
                ev("message_delta", r#"{"type":"message_delta","delta":{},"usage":{"output_tokens":1}}"#),
                ev("ping", r#"{"type":"ping"}"#),
            ],
            vec![usage(Some(7), Some(1))],
        ),
    ];
    for (format, events, expected) in cases {
        let (out, _) = decode(format, &events);
        assert_eq!(out, expected, "{format:?}");
    }
}

#[test]
fn odd_counts_alone_report_nothing_and_overwrite_a_count_with_unknown() {
    for odd in ODD {
        let cases = [
            (
                Format::OpenaiChat,
                vec![
                    ev("", &format!(r#"{{"choices":[],"usage":{{"prompt_tokens":{odd},"completion_tokens":{odd}}}}}"#)),
                    ev("", r#"{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2}}"#),
                    ev("", &format!(r#"{{"choices":[],"usage":{{"prompt_tokens":7,"completion_tokens":{odd}}}}}"#)),
                ],
            ),
            (
                Format::Gemini,
                vec![
                    ev(
                        "",
                        &format!(r#"{{"usageMetadata":{{"promptTokenCount":{odd},"candidatesTokenCount":{odd}}}}}"#),
                    ),
                    ev("", r#"{"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":2}}"#),
                    ev("", &format!(r#"{{"usageMetadata":{{"promptTokenCount":7,"candidatesTokenCount":{odd}}}}}"#)),
                ],
            ),
            (
                Format::AnthropicMessages,
                vec![
                    ev(
                        "message_start",
                        &format!(
                            r#"{{"type":"message_start","message":{{"usage":{{"input_tokens":{odd},"output_tokens":{odd}}}}}}}"#
                        ),
                    ),
                    ev(
                        "message_delta",
                        r#"{"type":"message_delta","delta":{},"usage":{"input_tokens":7,"output_tokens":2}}"#,
                    ),
                    ev(
                        "message_delta",
                        &format!(r#"{{"type":"message_delta","delta":{{}},"usage":{{"output_tokens":{odd}}}}}"#),
                    ),
                ],
            ),
        ];
        for (format, events) in cases {
            let (out, _) = decode(format, &events);
            assert_eq!(out, [usage(Some(7), Some(2)), usage(Some(7), None)], "{format:?} {odd}");
        }
    }
}

#[test]
fn a_usage_report_is_not_content_and_has_the_js_shape() {
    let report = usage(Some(7), None);
    assert!(!report.is_visible());
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&report.to_json()).expect("JSON"),
        serde_json::json!({"type": "usage", "usage": {"inputTokens": 7}})
    );
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&usage(None, Some(3)).to_json()).expect("JSON"),
        serde_json::json!({"type": "usage", "usage": {"outputTokens": 3}})
    );
}

#[test]
fn a_usage_that_is_not_an_object_is_unknown() {
    let bodies = [
        (
            Format::OpenaiChat,
            r#"{"choices":[{"index":0,"message":{"content":"Hi"},"finish_reason":"stop"}],"usage":"lots"}"#,
        ),
        (
            Format::AnthropicMessages,
            r#"{"content":[{"type":"text","text":"Hi"}],"stop_reason":"end_turn","usage":[1]}"#,
        ),
        (
            Format::OpenaiResponses,
            r#"{"status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"Hi"}]}],"usage":5}"#,
        ),
        (
            Format::Gemini,
            r#"{"candidates":[{"content":{"parts":[{"text":"Hi"}]},"finishReason":"STOP"}],"usageMetadata":1e400}"#,
        ),
    ];
    for (format, body) in bodies {
        let answer = format.decode_answer(body.as_bytes()).unwrap_or_else(|e| panic!("{format:?}: {e:?}"));
        assert_eq!((answer.text.as_str(), answer.usage), ("Hi", Usage::default()), "{format:?}");
    }
}

#[test]
fn unknown_counts_are_omitted_from_the_js_shape() {
    let json = |usage: Usage| usage.to_json();
    assert_eq!(json(UNKNOWN_OUTPUT), r#"{"inputTokens":7}"#);
    assert_eq!(json(Usage::default()), "{}");
}
