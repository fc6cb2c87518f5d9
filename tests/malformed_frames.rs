//! Issue 11, point 8: one malformed frame between good ones (a proxy corrupted an event). Each
//! stream is read the way a call reads it, whole and cut at every split point: the body reader's
//! deltas go to the engine, which delivers the text, warns about each skipped frame and counts
//! it on the leg, or fails the attempt when skipping could corrupt a tool call, when the target
//! sets `strictFrames`, or past the cap of skipped frames.

use llm_baton::backoff::SplitMix64;
use llm_baton::body::StreamBody;
use llm_baton::chat::Delta;
use llm_baton::config::Config;
use llm_baton::engine::{Action, Baton, Call, CallOptions, MAX_SKIPPED_FRAMES};
use llm_baton::format::Format;
use llm_baton::outcome::Failure;
use llm_baton::record::Event;
use llm_baton_wire::write::ToJson;

/// What the caller of one streamed call sees.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    text: String,
    tool_arguments: String,
    /// The answer's text, or the failure's message (every failure here is a protocol error).
    outcome: Result<String, String>,
    warnings: Vec<String>,
    skipped_frames: u32,
}

/// A stream call on target "p".
fn start_stream(baton: &mut Baton) -> Call {
    baton.start("p", CallOptions { stream: true, ..CallOptions::default() }, 0, Box::new(SplitMix64(1))).unwrap()
}

fn call(format: Format, strict: bool, reads: &[&[u8]]) -> Seen {
    let config = format!(
        r#"{{"targets": {{"p": {{"format": "{}", "baseUrl": "http://127.0.0.1:1/v1", "model": "m", "strictFrames": {strict}}}}}}}"#,
        format.as_str()
    );
    let mut baton = Baton::new(Config::from_json(&config).expect("config"));
    let mut call = start_stream(&mut baton);
    let mut actions: Vec<Action> = std::iter::from_fn(|| call.poll()).collect();
    let Some(Action::Send { attempt, .. }) = actions.first().cloned() else { panic!("sent first") };
    call.on_headers(attempt, 1);
    let mut body = StreamBody::new(format);
    let mut failed = None;
    for read in reads {
        let mut deltas = Vec::new();
        let fed = body.feed(read, &mut deltas);
        call.on_deltas(attempt, 2, deltas);
        if let Err(f) = fed {
            failed = Some(f);
            break;
        }
    }
    if failed.is_none() {
        let mut deltas = Vec::new();
        failed = body.finish(&mut deltas).err();
        call.on_deltas(attempt, 3, deltas);
    }
    if let Some(f) = failed {
        call.on_failure(attempt, 4, f);
    }
    actions.extend(std::iter::from_fn(|| call.poll()));
    let mut seen = Seen {
        text: String::new(),
        tool_arguments: String::new(),
        outcome: Err("unfinished".into()),
        warnings: vec![],
        skipped_frames: 0,
    };
    for action in actions {
        match action {
            Action::Deliver(deltas) => {
                for d in deltas {
                    match d {
                        Delta::Text { text } => seen.text.push_str(&text),
                        Delta::ToolCall { arguments, .. } => seen.tool_arguments.push_str(&arguments),
                        Delta::Skipped { .. } => panic!("a skipped frame was delivered"),
                        _ => {}
                    }
                }
            }
            Action::Event(Event::Warning { target, attempt: n, message }) => {
                assert_eq!((target.as_str(), n), ("p", attempt.0));
                seen.warnings.push(message);
            }
            Action::Event(Event::Leg { leg, .. }) => seen.skipped_frames = leg.skipped_frames,
            Action::Finish(Ok(served)) => seen.outcome = Ok(served.answer.text),
            Action::Finish(Err(e)) => match e.failure {
                Failure::Protocol { message } => seen.outcome = Err(message),
                other => panic!("{format:?}: a protocol error expected, got {other:?}"),
            },
            _ => {}
        }
    }
    seen
}

/// The stream read whole, then cut at every split point: every cut must see the same.
fn everywhere(format: Format, strict: bool, sse: &str) -> Seen {
    let bytes = sse.as_bytes();
    let whole = call(format, strict, &[bytes]);
    for split in 0..=bytes.len() {
        let cut = call(format, strict, &[&bytes[..split], &bytes[split..]]);
        assert_eq!(cut, whole, "{format:?} split at byte {split}");
    }
    whole
}

/// `data:` lines, one event each.
fn data(frames: &[&str]) -> String {
    frames.iter().map(|f| format!("data: {f}\n\n")).collect()
}

/// Named events, `(event, data)`.
fn named(frames: &[(&str, &str)]) -> String {
    frames.iter().map(|(e, d)| format!("event: {e}\ndata: {d}\n\n")).collect()
}

const CHAT_STOP: &str = r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#;

fn chat_text(t: &str) -> String {
    format!(r#"{{"choices":[{{"index":0,"delta":{{"content":"{t}"}}}}]}}"#)
}

fn anthropic(frames: &[(&str, &str)]) -> String {
    let mut all =
        vec![("message_start", r#"{"type":"message_start","message":{"model":"m","usage":{"input_tokens":1}}}"#)];
    all.extend_from_slice(frames);
    all.push(("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"}}"#));
    all.push(("message_stop", r#"{"type":"message_stop"}"#));
    named(&all)
}

fn anthropic_text(t: &str) -> String {
    format!(r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"{t}"}}}}"#)
}

const ANTHROPIC_TEXT_START: &str =
    r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#;
const ANTHROPIC_TOOL_START: &str = r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}"#;

fn responses(frames: &[(&str, &str)]) -> String {
    let mut all = frames.to_vec();
    all.push((
        "response.completed",
        r#"{"type":"response.completed","response":{"status":"completed","model":"m","output":[]}}"#,
    ));
    named(&all)
}

fn responses_text(t: &str) -> String {
    format!(r#"{{"type":"response.output_text.delta","output_index":0,"delta":"{t}"}}"#)
}

fn gemini_text(t: &str, finish: bool) -> String {
    let finish = if finish { r#","finishReason":"STOP""# } else { "" };
    format!(r#"{{"candidates":[{{"content":{{"parts":[{{"text":"{t}"}}]}}{finish}}}]}}"#)
}

/// A corrupted copy of a good frame: cut short, as a proxy that drops bytes leaves it.
fn cut(frame: &str) -> String {
    frame[..frame.len() / 2].to_string()
}

#[test]
fn one_malformed_frame_between_good_ones_is_skipped_with_a_warning() {
    let hel = chat_text("Hel");
    let lo = chat_text("lo");
    let a_hel = anthropic_text("Hel");
    let a_lo = anthropic_text("lo");
    let r_hel = responses_text("Hel");
    let r_lo = responses_text("lo");
    // (format, stream, what the skipped frame's warning starts with)
    let cases: Vec<(Format, String, &str)> = vec![
        // Invalid JSON between good frames, before any content, and valid JSON of the wrong shape.
        (
            Format::OpenaiChat,
            data(&[&hel, &cut(&chat_text("lost")), &lo, CHAT_STOP, "[DONE]"]),
            "openai_chat stream data frame",
        ),
        (Format::OpenaiChat, data(&["{not json", &hel, &lo, CHAT_STOP, "[DONE]"]), "openai_chat stream data frame"),
        (Format::OpenaiChat, data(&[&hel, r#"{"choices":"many"}"#, &lo, CHAT_STOP]), "openai_chat stream data frame"),
        (
            Format::AnthropicMessages,
            anthropic(&[
                ("content_block_start", ANTHROPIC_TEXT_START),
                ("content_block_delta", &a_hel),
                ("content_block_delta", &cut(&a_lo)),
                ("content_block_delta", &a_lo),
                ("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
            ]),
            "anthropic_messages stream content_block_delta event",
        ),
        (
            Format::AnthropicMessages,
            anthropic(&[
                ("content_block_start", &cut(ANTHROPIC_TEXT_START)),
                ("content_block_delta", &a_hel),
                ("content_block_delta", &a_lo),
                ("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
            ]),
            "anthropic_messages stream content_block_start event",
        ),
        (
            Format::OpenaiResponses,
            responses(&[
                ("response.output_text.delta", &r_hel),
                ("response.output_text.delta", r#"{"type":"response.output_text.delta","delta":7}"#),
                ("response.output_text.delta", &r_lo),
            ]),
            "openai_responses stream response.output_text.delta event",
        ),
        (
            Format::Gemini,
            data(&[&gemini_text("Hel", false), &cut(&gemini_text("lost", false)), &gemini_text("lo", true)]),
            "gemini stream data frame",
        ),
    ];
    for (format, sse, warning) in cases {
        let seen = everywhere(format, false, &sse);
        assert_eq!(seen.outcome, Ok("Hello".into()), "{format:?}: {sse}");
        assert_eq!(seen.text, "Hello", "{format:?}");
        assert_eq!(seen.skipped_frames, 1, "{format:?}");
        assert_eq!(seen.warnings.len(), 1, "{format:?}");
        let prefix = format!("skipped a malformed stream frame: {warning}");
        assert!(seen.warnings[0].starts_with(&prefix), "{format:?}: {:?}", seen.warnings);

        // strictFrames: the same stream fails at that frame, after the text before it.
        let strict = everywhere(format, true, &sse);
        let message = strict.outcome.expect_err("strict fails");
        assert!(message.starts_with(warning), "{format:?}: {message}");
        assert!(
            message.ends_with("(targets.p.strictFrames is true: a malformed frame fails the attempt)"),
            "{message}"
        );
        assert!(strict.warnings.is_empty(), "{format:?}");
        assert_eq!(strict.skipped_frames, 0, "{format:?}: nothing was skipped");
    }
}

#[test]
fn a_malformed_frame_that_may_hold_part_of_a_tool_call_fails_the_attempt() {
    let call_start = r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}}]}"#;
    let call_args =
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"q\":1}"}}]}}]}"#;
    let nameless = r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}"#;
    let tool_stop = r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#;
    let input = |json: &str| {
        format!(
            r#"{{"type":"content_block_delta","index":1,"delta":{{"type":"input_json_delta","partial_json":"{json}"}}}}"#
        )
    };
    let fc_added = r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"c1","name":"f","arguments":""}}"#;
    let fc_delta = r#"{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\"q\":1}"}"#;
    let g_call = r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"q":1}}}]}}]}"#;
    // (format, stream, what the protocol error says)
    let cases: Vec<(Format, String, &str)> = vec![
        (
            Format::OpenaiChat,
            data(&[call_start, &cut(call_args), call_args, tool_stop, "[DONE]"]),
            "it cannot be skipped, since a tool call was open: skipping it could corrupt a tool call",
        ),
        (Format::OpenaiChat, data(&[&chat_text("Hi"), &cut(call_start), call_args, tool_stop]), "since the frame names tool_calls"),
        (
            Format::OpenaiChat,
            data(&[&chat_text("Hi"), "{garbage", nameless, tool_stop]),
            "a tool call began without its name after a skipped malformed frame",
        ),
        (
            Format::OpenaiChat,
            data(&[&chat_text("Hi"), "{garbage", tool_stop, "[DONE]"]),
            "finished with tool_calls, but no tool call was read",
        ),
        (
            Format::AnthropicMessages,
            anthropic(&[("content_block_start", ANTHROPIC_TOOL_START), ("content_block_delta", &cut(&input("{\\\"q\\\":1}")))]),
            "since a tool_use block was open",
        ),
        (
            Format::AnthropicMessages,
            anthropic(&[("content_block_start", &ANTHROPIC_TOOL_START[..ANTHROPIC_TOOL_START.find(r#""id""#).unwrap()])]),
            "since the frame names a tool_use block",
        ),
        (
            Format::AnthropicMessages,
            anthropic(&[
                ("content_block_start", r#"{"type":"content_block_start","index":1,"content_blo"#),
                ("content_block_delta", &input("{}")),
            ]),
            "input_json_delta for content block 1, whose content_block_start was in a skipped malformed frame",
        ),
        (
            Format::AnthropicMessages,
            anthropic(&[
                ("content_block_start", r#"{"type":"content_block_start","index":1,"content_blo"#),
                ("content_block_stop", r#"{"type":"content_block_stop","index":1}"#),
            ]),
            "content block 1 stopped, but its content_block_start was in a skipped malformed frame",
        ),
        (
            Format::OpenaiResponses,
            responses(&[("response.output_item.added", fc_added), ("response.function_call_arguments.delta", &cut(fc_delta))]),
            "since a function_call item was open",
        ),
        (
            Format::OpenaiResponses,
            responses(&[("response.output_item.added", r#"{"type":"response.output_item.added","output_"#), ("response.function_call_arguments.delta", fc_delta)]),
            "function_call arguments for output item 0, whose response.output_item.added was in a skipped malformed frame",
        ),
        (Format::Gemini, data(&[&g_call[..g_call.find("args").unwrap()], &gemini_text("", true)]), "since the frame names a functionCall"),
        (Format::Gemini, data(&[g_call, "{garbage", &gemini_text("", true)]), "since the answer holds a function call"),
    ];
    for (format, sse, expected) in cases {
        let seen = everywhere(format, false, &sse);
        let message = seen.outcome.clone().expect_err(&format!("{format:?} fails: {sse}"));
        assert!(message.contains(expected), "{format:?}: {message}\n{sse}");
        assert!(message.starts_with(format.as_str()), "{format:?}: {message}");
    }
}

#[test]
fn at_most_eight_malformed_frames_are_skipped_in_one_stream() {
    for (bad, answers) in [(MAX_SKIPPED_FRAMES as usize, true), (MAX_SKIPPED_FRAMES as usize + 1, false)] {
        let mut frames = vec![chat_text("Hel")];
        frames.extend((0..bad).map(|i| format!("{{broken {i}")));
        frames.extend([chat_text("lo"), CHAT_STOP.to_string()]);
        let frames: Vec<&str> = frames.iter().map(String::as_str).collect();
        let seen = call(Format::OpenaiChat, false, &[data(&frames).as_bytes()]);
        assert_eq!(seen.outcome.is_ok(), answers, "{bad}: {seen:?}");
        assert_eq!(seen.warnings.len(), bad.min(MAX_SKIPPED_FRAMES as usize), "{bad}");
        assert_eq!(seen.skipped_frames, MAX_SKIPPED_FRAMES.min(bad as u32), "the leg counts what was skipped");
        if let Err(message) = &seen.outcome {
            assert!(
                message.starts_with("more than 8 malformed stream frames; the last: openai_chat stream data frame"),
                "{message}"
            );
        }
    }
}

#[test]
fn the_warning_event_and_the_leg_count_serialize_for_javascript() {
    let sse = data(&[&chat_text("Hi"), "{broken", CHAT_STOP]);
    let config = r#"{"targets": {"p": {"format": "openai_chat", "baseUrl": "http://127.0.0.1:1/v1", "model": "m"}}}"#;
    let mut baton = Baton::new(Config::from_json(config).unwrap());
    let mut call = start_stream(&mut baton);
    let mut body = StreamBody::new(Format::OpenaiChat);
    let mut deltas = Vec::new();
    body.feed(sse.as_bytes(), &mut deltas).unwrap();
    body.finish(&mut deltas).unwrap();
    call.on_deltas(llm_baton::engine::AttemptId(1), 5, deltas);
    let events: Vec<String> = std::iter::from_fn(|| call.poll())
        .filter_map(|a| if let Action::Event(e) = a { Some(e.to_json()) } else { None })
        .collect();
    let warning = events.iter().find(|e| e.contains("warning")).expect("a warning event");
    assert!(
        warning.starts_with(r#"{"type":"warning","target":"p","attempt":1,"message":"skipped a malformed stream frame: openai_chat stream data frame is not a chat.completion.chunk: "#),
        "{warning}"
    );
    let leg = events.iter().find(|e| e.starts_with(r#"{"type":"leg""#)).expect("a leg event");
    assert!(leg.ends_with(r#","ttftMs":5,"skippedFrames":1}}"#), "{leg}");
}

#[test]
fn a_warning_never_shows_a_configured_key_the_frame_echoed() {
    let key = "sk-proj-SECRET-0123456789";
    let config = format!(
        r#"{{"targets": {{"p": {{"format": "openai_chat", "baseUrl": "http://127.0.0.1:1/v1", "model": "m", "apiKey": "{key}"}}}}}}"#
    );
    let mut baton = Baton::new(Config::from_json(&config).unwrap());
    let mut call = start_stream(&mut baton);
    // serde quotes a string of the wrong type in its message: the frame's echo of the key.
    let sse = data(&[&chat_text("Hi"), &format!(r#"{{"choices":"{key}"}}"#), CHAT_STOP]);
    let mut body = StreamBody::new(Format::OpenaiChat);
    let mut deltas = Vec::new();
    body.feed(sse.as_bytes(), &mut deltas).unwrap();
    body.finish(&mut deltas).unwrap();
    let raw = format!("{deltas:?}");
    assert!(raw.contains(key), "the decoder's reason quotes the frame: {raw}");
    call.on_deltas(llm_baton::engine::AttemptId(1), 5, deltas);
    let warnings: Vec<String> = std::iter::from_fn(|| call.poll())
        .filter_map(|a| if let Action::Event(Event::Warning { message, .. }) = a { Some(message) } else { None })
        .collect();
    assert_eq!(warnings.len(), 1);
    assert!(!warnings[0].contains("SECRET") && warnings[0].contains("<redacted>"), "{}", warnings[0]);
}
