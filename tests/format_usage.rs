//! Odd token counts never fail an answer: in every format, whole and streamed, a count that is
//! fractional, negative, beyond what JavaScript holds exactly, out of `f64`'s range or not a
//! number is reported as unknown, and the text is delivered as if the count were fine.

use llm_baton::chat::{Delta, FinishReason, Usage};
use llm_baton::format::Format;
use llm_baton::sse::SseEvent;

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

#[test]
fn odd_counts_in_streams_are_unknown() {
    for format in Format::ALL {
        for odd in ODD {
            let mut decoder = format.stream_decoder();
            let mut out = Vec::new();
            for event in stream(format, odd) {
                decoder.on_event(&event, &mut out).unwrap_or_else(|e| panic!("{format:?} {odd}: {e:?}"));
            }
            decoder.finish(&mut out).unwrap_or_else(|e| panic!("{format:?} {odd}: {e:?}"));
            assert_eq!(
                out,
                [
                    Delta::Text { text: "Hi".into() },
                    Delta::Done { finish_reason: FinishReason::Stop, usage: UNKNOWN_OUTPUT, model: None }
                ],
                "{format:?} {odd}"
            );
        }
    }
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
    let json = |usage: Usage| serde_json::to_string(&usage).expect("serializes");
    assert_eq!(json(UNKNOWN_OUTPUT), r#"{"inputTokens":7}"#);
    assert_eq!(json(Usage::default()), "{}");
}
