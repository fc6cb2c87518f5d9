//! The four formats through the public `Format` dispatch: what every format must do the same way,
//! whatever its wire shape. Keys stay out of URLs and Debug output; housekeeping frames are never
//! visible content; a bad JSON frame is skipped and a bad body or truncation is a protocol error,
//! each naming the format; nothing after the success marker counts; no input panics.

use llm_baton::chat::{ChatRequest, Delta, Message, Role};
use llm_baton::config::{Secret, Target, Timeouts};
use llm_baton::format::{DecodeError, FailureClass, Format};
use llm_baton::sse::SseEvent;
use proptest::prelude::*;

const KEY: &str = "sk-test-0123456789-do-not-leak";

fn target(format: Format) -> Target {
    Target {
        name: "t".into(),
        format,
        base_url: "https://llm.example.com/v1/".into(),
        model: "m".into(),
        api_key: Some(Secret::new(KEY)),
        headers: vec![("x-trace".into(), "1".into())],
        timeouts: Timeouts::default(),
        strict_frames: false,
        prefill: false,
        propagate_deadline: Default::default(),
        extra_body: None,
        cloud: None,
        reach: Default::default(),
    }
}

fn ev(event: &str, data: &str) -> SseEvent {
    SseEvent { event: event.into(), data: data.into(), id: None }
}

fn feed(format: Format, events: &[SseEvent]) -> (Vec<Delta>, Result<(), DecodeError>) {
    let mut decoder = format.stream_decoder();
    let mut out = Vec::new();
    for e in events {
        if let Err(err) = decoder.on_event(e, &mut out) {
            return (out, Err(err));
        }
    }
    let end = decoder.finish(&mut out);
    (out, end)
}

/// A minimal successful stream per format: one text delta, then how it finished (the success
/// marker, and before it the finish reason where the format sends one apart).
fn minimal_stream(format: Format) -> Vec<SseEvent> {
    match format {
        Format::OpenaiChat => vec![
            ev("", r#"{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}"#),
            ev("", r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#),
            ev("", "[DONE]"),
        ],
        Format::AnthropicMessages => vec![
            ev(
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}"#,
            ),
            ev(
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}"#,
            ),
            ev("message_stop", r#"{"type":"message_stop"}"#),
        ],
        Format::OpenaiResponses => vec![
            ev("response.output_text.delta", r#"{"type":"response.output_text.delta","output_index":0,"delta":"x"}"#),
            ev(
                "response.completed",
                r#"{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":1,"output_tokens":1}}}"#,
            ),
        ],
        Format::Gemini => vec![
            ev("", r#"{"candidates":[{"content":{"parts":[{"text":"x"}],"role":"model"}}]}"#),
            ev("", r#"{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP"}]}"#),
        ],
        Format::BedrockConverse => vec![
            ev("contentBlockDelta", r#"{"contentBlockIndex":0,"delta":{"text":"x"}}"#),
            ev("messageStop", r#"{"stopReason":"end_turn"}"#),
        ],
    }
}

#[test]
fn keys_go_in_headers_only() {
    let request = ChatRequest { messages: vec![Message::new(Role::User, "hi")], ..Default::default() };
    for format in Format::ALL {
        for stream in [false, true] {
            let http = format.build_request(&target(format), &request, stream);
            assert_eq!(http.method, "POST");
            assert!(http.url.starts_with("https://llm.example.com/v1/"), "{}", http.url);
            assert_eq!(http.url.matches("//").count(), 1, "{}", http.url);
            assert!(!http.url.contains(KEY) && !http.body.contains(KEY), "{format:?}");
            assert!(!format!("{http:?}").contains(KEY), "{format:?}");
            let carrying: Vec<&str> =
                http.headers.iter().filter(|(_, v)| v.contains(KEY)).map(|(k, _)| k.as_str()).collect();
            assert_eq!(carrying.len(), 1, "{format:?}: {carrying:?}");
            assert!(llm_baton::format::is_secret_header(carrying[0]), "{format:?}: {carrying:?}");
            assert!(http.headers.iter().all(|(k, _)| *k == k.to_ascii_lowercase()));
            assert!(http.headers.contains(&("x-trace".into(), "1".into())));
            assert!(http.headers.contains(&("content-type".into(), "application/json".into())));
            let body: serde_json::Value = serde_json::from_str(&http.body).expect("body is JSON");
            assert!(body.is_object());
        }
        let mut keyless = target(format);
        keyless.api_key = None;
        let http = format.build_request(&keyless, &request, false);
        assert!(http.headers.iter().all(|(k, _)| !llm_baton::format::is_secret_header(k)), "{format:?}");
    }
}

#[test]
fn housekeeping_frames_are_not_visible() {
    let cases: [(Format, Vec<SseEvent>); 4] = [
        (
            Format::OpenaiChat,
            vec![
                ev(
                    "",
                    r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"finish_reason":null}],"usage":null}"#,
                ),
                ev(
                    "",
                    r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
                ),
                ev(
                    "",
                    r#"{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8}}"#,
                ),
            ],
        ),
        (
            Format::AnthropicMessages,
            vec![
                ev(
                    "message_start",
                    r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}"#,
                ),
                ev(
                    "content_block_start",
                    r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
                ),
                ev("ping", r#"{"type": "ping"}"#),
                ev(
                    "content_block_delta",
                    r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}}"#,
                ),
                ev("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
                ev(
                    "message_delta",
                    r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}"#,
                ),
            ],
        ),
        (
            Format::OpenaiResponses,
            vec![
                ev(
                    "response.created",
                    r#"{"type":"response.created","sequence_number":0,"response":{"id":"r","status":"in_progress","output":[],"usage":null}}"#,
                ),
                ev(
                    "response.in_progress",
                    r#"{"type":"response.in_progress","sequence_number":1,"response":{"id":"r","status":"in_progress","output":[]}}"#,
                ),
                ev(
                    "response.output_item.added",
                    r#"{"type":"response.output_item.added","output_index":0,"item":{"id":"msg","type":"message","status":"in_progress","content":[],"role":"assistant"}}"#,
                ),
                ev(
                    "response.content_part.added",
                    r#"{"type":"response.content_part.added","output_index":0,"content_index":0,"part":{"type":"output_text","text":""}}"#,
                ),
                ev(
                    "response.output_text.done",
                    r#"{"type":"response.output_text.done","output_index":0,"content_index":0,"text":"already streamed"}"#,
                ),
            ],
        ),
        (
            Format::Gemini,
            vec![
                ev(
                    "",
                    r#"{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":3}}"#,
                ),
                ev("", r#"{"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":5}}"#),
            ],
        ),
    ];
    for (format, events) in cases {
        let mut decoder = format.stream_decoder();
        let mut out = Vec::new();
        for e in &events {
            decoder.on_event(e, &mut out).unwrap_or_else(|err| panic!("{format:?}: {err:?}"));
        }
        assert!(out.iter().all(|d| !d.is_visible()), "{format:?}: {out:?}");
        assert!(!out.iter().any(|d| matches!(d, Delta::Done { .. })), "{format:?}: {out:?}");
    }
}

#[test]
fn minimal_streams_succeed_and_truncated_ones_fail_naming_the_format() {
    for format in Format::ALL {
        let events = minimal_stream(format);
        let (deltas, end) = feed(format, &events);
        assert_eq!(end, Ok(()), "{format:?}");
        assert_eq!(deltas.first(), Some(&Delta::Text { text: "x".into() }), "{format:?}");
        assert!(matches!(deltas.last(), Some(Delta::Done { .. })), "{format:?}");

        // Cut after the text: nothing said how the answer finished.
        let (_, end) = feed(format, &events[..1]);
        assert!(
            matches!(&end, Err(DecodeError::Protocol(m)) if m.starts_with(format.as_str()) && m.contains("ended without")),
            "{format:?}: {end:?}"
        );
        let (deltas, end) = feed(format, &[]);
        assert!(deltas.is_empty() && matches!(end, Err(DecodeError::Protocol(_))), "{format:?}");
    }
}

#[test]
fn events_after_done_are_ignored() {
    for format in Format::ALL {
        let mut decoder = format.stream_decoder();
        let mut out = Vec::new();
        for e in minimal_stream(format) {
            decoder.on_event(&e, &mut out).expect("decodes");
        }
        decoder.finish(&mut out).expect("success");
        let before = out.clone();
        // A late error frame or garbage changes nothing once the stream is done.
        for data in [r#"{"error":{"message":"late","type":"server_error"}}"#, "{not json"] {
            assert_eq!(decoder.on_event(&ev("error", data), &mut out), Ok(()), "{format:?}");
        }
        decoder.finish(&mut out).expect("finish twice is fine");
        assert_eq!(out, before, "{format:?}");
    }
}

#[test]
fn a_bad_json_frame_is_skipped_naming_the_format_and_a_bad_body_is_a_protocol_error() {
    for format in Format::ALL {
        let mut decoder = format.stream_decoder();
        let mut out = Vec::new();
        let result = decoder.on_event(&ev("content_block_delta", r#"{"choices":[{"delta":{"content":"x"#), &mut out);
        assert_eq!(result, Ok(()), "{format:?}");
        assert!(
            matches!(&out[..], [Delta::Skipped { reason }] if reason.starts_with(format.as_str())),
            "{format:?}: {out:?}"
        );
        let whole = format.decode_answer(b"{\"truncated\": ");
        assert!(matches!(&whole, Err(DecodeError::Protocol(m)) if m.starts_with(format.as_str())), "{whole:?}");
    }
}

#[test]
fn error_messages_come_from_the_providers_own_shape() {
    let openai = br#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#;
    assert_eq!(Format::OpenaiChat.error_body(429, openai).message, "You exceeded your current quota");
    assert_eq!(Format::OpenaiResponses.error_body(429, openai).message, "You exceeded your current quota");
    let anthropic = br#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#;
    assert_eq!(
        Format::AnthropicMessages.error_body(429, anthropic).message,
        "Number of request tokens has exceeded your per-minute rate limit"
    );
    let gemini = br#"{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}"#;
    assert_eq!(Format::Gemini.error_body(429, gemini).message, "Resource has been exhausted (e.g. check quota).");
    for format in [Format::OpenaiChat, Format::OpenaiResponses] {
        let said = format.error_body(429, openai);
        assert_eq!((said.code.as_deref(), said.class), (Some("insufficient_quota"), Some(FailureClass::Quota)));
    }
    for format in Format::ALL {
        let said = format.error_body(502, b"<html>Bad Gateway</html>");
        assert_eq!(said.message, "<html>Bad Gateway</html>", "the status is written once, by the failure");
        let failure = llm_baton::outcome::Failure::from_http(502, &[], said, 0);
        assert_eq!(failure.to_string(), "HTTP 502: <html>Bad Gateway</html>");
        // A body that is not the provider's shape still has its status's class.
        let said = format.error_body(429, b"Too Many Requests");
        assert_eq!((said.code, said.class), (None, Some(FailureClass::RateLimit)), "{format:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// No data frame, event name or answer body makes a decoder panic.
    #[test]
    fn no_input_panics(event in "(|error|ping|message_stop|response\\.completed|content_block_delta)", data in ".{0,64}", body in proptest::collection::vec(any::<u8>(), 0..64)) {
        for format in Format::ALL {
            let mut decoder = format.stream_decoder();
            let mut out = Vec::new();
            let _ = decoder.on_event(&ev(&event, &data), &mut out);
            let _ = decoder.finish(&mut out);
            let _ = format.decode_answer(&body);
            let _ = format.decode_answer(data.as_bytes());
            let _ = format.error_body(500, &body).message;
        }
    }
}
